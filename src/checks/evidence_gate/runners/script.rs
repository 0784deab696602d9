//! pytest, jest and vitest output.

use std::sync::LazyLock;

use regex::Regex;

use super::runs::{Mark, read_each, split};
use super::{Counts, Outcome, Place, Runner, RunnerLog, count_of, counts, split_outside_brackets};

static PYTEST_HEADER: LazyLock<Regex> = static_regex!(r"^=+ test session starts =+$");
static PYTEST_SUMMARY: LazyLock<Regex> = static_regex!(
    r"^(?:=+ )?((?:\d+ (?:passed|failed|skipped|errors?|xfailed|xpassed|deselected|warnings?|rerun|interrupted)(?:, )?)+|no tests ran) in \d+(?:\.\d+)?s(?: \([^)]*\))?(?: =+)?$"
);
/// `-v`: `<nodeid> PASSED   [ 50%]`; the nodeid may hold spaces (a
/// parametrized id), and something printed without a newline may follow.
static PYTEST_VERBOSE: LazyLock<Regex> = static_regex!(
    r"^(\S[^:]*?::.+?) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)(?: \([^)]*\))?(?:\s+\[\s*\d+%\].*)?$"
);
/// The short summary (`-rA`, and the failures' recap): `FAILED <nodeid> - why`.
static PYTEST_SHORT: LazyLock<Regex> = static_regex!(
    r"^(?:\[gw\d+\] \[\s*\d+%\] )?(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S[^:]*?::.+)$"
);
/// A progress line of the default or `-q` output (`tests/a.py ..F  [ 50%]`).
static PYTEST_PROGRESS: LazyLock<Regex> =
    static_regex!(r"^(?:\S+\.py [.FEsxX]+(?:\s+\[\s*\d+%\])?|[.FEsxX]+\s+\[\s*\d+%\])$");
/// A `!!!` banner: the session stopped before its end.
static PYTEST_BANNER: LazyLock<Regex> = static_regex!(r"^!{3,} (.+?) !{3,}$");
/// `-x` / `--maxfail` (pytest-xdist prefixes it with its exception's name).
static PYTEST_MAXFAIL: LazyLock<Regex> = static_regex!(r"(?:^|: )stopping after \d+ failures?$");
/// pytest-cov's threshold unmet (before 7: `FAIL Required test coverage …`).
static PYTEST_COVERAGE: LazyLock<Regex> = static_regex!(
    r"^(?:FAIL Required test coverage of .+ not reached|ERROR: Coverage failure: total of .+ is less than fail-under=)"
);

fn pytest_mark(line: &str) -> Mark {
    if PYTEST_HEADER.is_match(line) {
        Mark::Start
    } else if PYTEST_SUMMARY.is_match(line) {
        Mark::End
    } else if PYTEST_VERBOSE.is_match(line)
        || PYTEST_SHORT.is_match(line)
        || PYTEST_PROGRESS.is_match(line)
    {
        Mark::Content
    } else {
        Mark::Other
    }
}

/// A pytest node id as its file and name path (`tests/a.py::C::t[x::y]`).
fn pytest_node(nodeid: &str) -> (Option<Place>, Vec<String>) {
    let mut parts = split_outside_brackets(nodeid, "::");
    let file = parts.remove(0);
    (Some(Place::File(file)), parts)
}

/// The node id of a short-summary line's rest (`<nodeid> - <why>`).
fn short_nodeid(rest: &str) -> &str {
    let mut depth = 0usize;
    for (i, c) in rest.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ' ' if depth == 0 && rest[i..].starts_with(" - ") => return &rest[..i],
            _ => {}
        }
    }
    rest
}

/// pytest's session header, verbose and short-summary lines, final summary.
///
/// An ERROR (a fixture's setup or teardown, a module that does not import)
/// is not a test failure: it is counted apart and blocks a `passed` claim.
/// A `!!!` banner other than `-x`'s `stopping after N failures` (Ctrl-C,
/// `Interrupted: N error during collection`, `pytest.exit`) marks the
/// session interrupted.
pub(super) fn pytest(lines: &[String]) -> Vec<RunnerLog> {
    read_each(lines, split(lines, pytest_mark), pytest_run)
}

fn pytest_run(lines: &[String], start: usize) -> Option<RunnerLog> {
    let mut log = RunnerLog::new(Runner::Pytest, start);
    let (mut header, mut summary) = (false, None);
    for line in lines {
        if PYTEST_HEADER.is_match(line) {
            header = true;
        } else if let Some(c) = PYTEST_SUMMARY.captures(line) {
            summary = Some(counts(&c[1]));
        } else if let Some(c) = PYTEST_VERBOSE.captures(line) {
            let (place, path) = pytest_node(&c[1]);
            log.push(place, path, pytest_outcome(&c[2]));
        } else if let Some(c) = PYTEST_SHORT.captures(line) {
            let (place, path) = pytest_node(short_nodeid(&c[2]));
            log.push(place, path, pytest_outcome(&c[1]));
        } else if let Some(c) = PYTEST_BANNER.captures(line) {
            log.interrupted |= !PYTEST_MAXFAIL.is_match(&c[1]);
        } else if line == "KeyboardInterrupt" {
            log.interrupted = true;
        } else if PYTEST_COVERAGE.is_match(line) {
            log.coverage_unmet = true;
        }
    }
    if !header && summary.is_none() {
        return None;
    }
    log.count_tests();
    match summary {
        Some(c) => {
            log.take_summary(
                count_of(&c, &["passed", "xpassed"]),
                count_of(&c, &["failed"]),
                count_of(&c, &["skipped", "xfailed"]),
            );
            log.errors = count_of(&c, &["error", "errors"]);
            log.interrupted |= count_of(&c, &["interrupted"]) > 0;
        }
        // A session that never printed its summary was cut.
        None => log.cut = true,
    }
    log.failure_reported |= log.errors > 0 || log.interrupted;
    Some(log)
}

fn pytest_outcome(word: &str) -> Outcome {
    match word {
        "PASSED" | "XPASS" => Outcome::Passed,
        "SKIPPED" => Outcome::Skipped,
        "XFAIL" => Outcome::XFailed,
        "ERROR" => Outcome::Errored,
        _ => Outcome::Failed,
    }
}

static JEST_TESTS: LazyLock<Regex> = static_regex!(r"^Tests:\s+(.*\d+ total)$");
static JEST_SUITES: LazyLock<Regex> = static_regex!(r"^Test Suites:\s+(.*\d+ total)$");
static JEST_NONE: LazyLock<Regex> = static_regex!(r"^No tests found, exiting with code \d+");
static JEST_TICK: LazyLock<Regex> =
    static_regex!(r"^( +)(✓|√|✕|×|○|✎)\s+(?:skipped |todo )?(.+?)(?:\s+\(\d+(?:\.\d+)?\s*m?s\))?$");
static JEST_BULLET: LazyLock<Regex> = static_regex!(r"^\s*● (.+)$");
/// A file's header: `PASS src/a.test.js`, `FAIL src/b.test.ts (5.2 s)`.
static JEST_FILE: LazyLock<Regex> =
    static_regex!(r"^(PASS|FAIL) (\S.*?\.\w+)(?: \(\d+(?:\.\d+)? m?s\))?$");

fn jest_mark(line: &str) -> Mark {
    if JEST_SUITES.is_match(line) || JEST_NONE.is_match(line) {
        Mark::End
    } else if JEST_FILE.is_match(line) || JEST_TICK.is_match(line) || JEST_BULLET.is_match(line) {
        Mark::Content
    } else {
        Mark::Other
    }
}

/// The counts of a jest or vitest `tests` summary line, whether its
/// `files` summary line counts a failed file, and whether the run ended
/// (a summary, or the `none` line: no test file found).
fn js_summary(
    lines: &[String],
    tests: &Regex,
    files: &Regex,
    none: &Regex,
) -> (Option<Counts>, bool, bool) {
    let (mut counted, mut file_failed, mut ended) = (None, false, false);
    for line in lines {
        if let Some(c) = tests.captures(line) {
            counted = Some(counts(&c[1]));
        } else if let Some(c) = files.captures(line) {
            file_failed |= count_of(&counts(&c[1]), &["failed"]) > 0;
        } else if !none.is_match(line) {
            continue;
        }
        ended = true;
    }
    (counted, file_failed, ended)
}

/// jest's `Tests:` / `Test Suites:` summary, its verbose tree (describe
/// lines and ticks, nested by two spaces under the `PASS`/`FAIL` file
/// header) and the `●` titles of failures (`a › b › test`). `● Test suite
/// failed to run` is a reported failure; a run without its summary was cut.
pub(super) fn jest(lines: &[String]) -> Vec<RunnerLog> {
    read_each(lines, split(lines, jest_mark), jest_run)
}

fn jest_run(lines: &[String], start: usize) -> Option<RunnerLog> {
    let mut log = RunnerLog::new(Runner::Jest, start);
    let (tests, file_failed, ended) = js_summary(lines, &JEST_TESTS, &JEST_SUITES, &JEST_NONE);
    log.failure_reported |= file_failed;
    let mut file: Option<Place> = None;
    // Inside a file's tree (from its header to the first blank line), the
    // describe blocks open at each depth.
    let mut tree = false;
    let mut groups: Vec<String> = Vec::new();
    let mut seen = ended;
    for line in lines {
        if let Some(c) = JEST_FILE.captures(line) {
            log.failure_reported |= &c[1] == "FAIL";
            log.files.push(c[2].to_string());
            file = Some(Place::File(c[2].to_string()));
            (tree, seen) = (true, true);
            groups.clear();
        } else if let Some(c) = JEST_TICK.captures(line).filter(|_| tree) {
            let outcome = match &c[2] {
                "✓" | "√" => Outcome::Passed,
                "✕" | "×" => Outcome::Failed,
                _ => Outcome::Skipped,
            };
            let depth = (c[1].len() / 2).saturating_sub(1);
            groups.truncate(depth);
            let mut path = groups.clone();
            path.resize(depth, String::new());
            path.push(c[3].to_string());
            log.push(file.clone(), path, outcome);
        } else if let Some(c) = JEST_BULLET.captures(line) {
            tree = false;
            match &c[1] {
                "Console" => {}
                "Test suite failed to run" => log.failure_reported = true,
                title => {
                    let path = title.split(" › ").map(str::to_string).collect();
                    log.push(file.clone(), path, Outcome::Failed);
                }
            }
        } else if line.trim().is_empty() {
            tree = false;
        } else if tree {
            let indent = line.len() - line.trim_start().len();
            let depth = (indent / 2).saturating_sub(1);
            groups.truncate(depth);
            groups.resize(depth, String::new());
            groups.push(line.trim().to_string());
        }
    }
    if !seen {
        return None;
    }
    log.count_tests();
    if let Some(c) = tests {
        log.take_summary(
            count_of(&c, &["passed"]),
            count_of(&c, &["failed"]),
            count_of(&c, &["skipped", "todo", "pending"]),
        );
    }
    log.cut = !ended;
    Some(log)
}

static VITEST_TESTS: LazyLock<Regex> = static_regex!(r"^\s*Tests\s{2,}(.+?)(?:\s*\(\d+\))?$");
static VITEST_FILES: LazyLock<Regex> = static_regex!(r"^\s*Test Files\s{2,}(.+?)\s*\(\d+\)$");
static VITEST_NONE: LazyLock<Regex> = static_regex!(r"^No test files found");
static VITEST_TICK: LazyLock<Regex> =
    static_regex!(r"^( +)(✓|√|×|✗|↓|□|❯)\s+(.+?)(?:\s+\d+(?:\.\d+)?m?s)?$");
/// A file's line of the default reporter: `✓ src/a.test.ts (3 tests | 1 skipped) 4ms`.
static VITEST_FILE_LINE: LazyLock<Regex> = static_regex!(r"^(\S+) \(\d+ tests?(?: \| [^)]*)?\)$");
static VITEST_FAIL: LazyLock<Regex> = static_regex!(r"^\s*FAIL\s+(.+)$");
static VITEST_RUN: LazyLock<Regex> = static_regex!(r"^\s*RUN\s+v\d");
/// Errors outside any test: `Errors  1 error`, the `Unhandled Errors` banner.
static VITEST_ERRORS: LazyLock<Regex> =
    static_regex!(r"^(?:\s*Errors\s{2,}\d+ errors?|⎯+ Unhandled Errors ⎯+)$");

fn vitest_mark(line: &str) -> Mark {
    if VITEST_RUN.is_match(line) {
        Mark::Start
    } else if VITEST_FILES.is_match(line) || VITEST_NONE.is_match(line) {
        Mark::End
    } else if VITEST_TICK.is_match(line) || VITEST_FAIL.is_match(line) {
        Mark::Content
    } else {
        Mark::Other
    }
}

/// A vitest name `file > group > test` as its file and path, when its
/// first part is a file.
fn vitest_name(name: &str) -> (Option<Place>, Vec<String>) {
    let mut parts: Vec<String> = name.split(" > ").map(str::to_string).collect();
    if parts.len() > 1 && super::super::text::is_file(&parts[0]) {
        let file = parts.remove(0);
        return (Some(Place::File(file)), parts);
    }
    (None, parts)
}

/// vitest's `Test Files` / `Tests` summary, the verbose reporter's lines
/// (`✓ file > group > test`), the default reporter's tree (a test under
/// its file's line, its groups not named), `FAIL file > … > test` titles
/// and failed suites. Errors outside tests (`Errors  N error`, `Unhandled
/// Errors`) are a reported failure; a run without its summary was cut.
pub(super) fn vitest(lines: &[String]) -> Vec<RunnerLog> {
    read_each(lines, split(lines, vitest_mark), vitest_run)
}

fn vitest_run(lines: &[String], start: usize) -> Option<RunnerLog> {
    let mut log = RunnerLog::new(Runner::Vitest, start);
    let (tests, file_failed, ended) = js_summary(lines, &VITEST_TESTS, &VITEST_FILES, &VITEST_NONE);
    log.failure_reported |= file_failed;
    let mut seen = ended;
    let mut file: Option<Place> = None;
    for line in lines {
        if VITEST_RUN.is_match(line) {
            seen = true;
        } else if VITEST_ERRORS.is_match(line) {
            log.failure_reported = true;
        } else if let Some(c) = VITEST_TICK.captures(line) {
            let outcome = match &c[2] {
                "✓" | "√" => Outcome::Passed,
                "↓" | "□" => Outcome::Skipped,
                _ => Outcome::Failed,
            };
            let indent = c[1].len();
            if indent <= 1 {
                if let Some(f) = VITEST_FILE_LINE.captures(&c[3]) {
                    log.files.push(f[1].to_string());
                    file = Some(Place::File(f[1].to_string()));
                    continue;
                }
                if &c[2] == "❯" {
                    continue;
                }
                let (place, path) = vitest_name(&c[3]);
                log.push(place, path, outcome);
            } else if &c[2] != "❯" {
                // The default reporter's tree: the groups above are not named.
                let depth = indent.saturating_sub(3) / 2;
                let mut path = vec![String::new(); depth];
                path.push(c[3].to_string());
                log.push(file.clone(), path, outcome);
            }
        } else if let Some(c) = VITEST_FAIL.captures(line) {
            match c[1].split_once(" [ ") {
                Some(_) => log.failure_reported = true,
                None if c[1].contains(" > ") => {
                    let (place, path) = vitest_name(&c[1]);
                    log.push(place, path, Outcome::Failed);
                }
                None => log.failure_reported = true,
            }
        }
    }
    if !seen {
        return None;
    }
    log.count_tests();
    if let Some(c) = tests {
        log.take_summary(
            count_of(&c, &["passed"]),
            count_of(&c, &["failed"]),
            count_of(&c, &["skipped", "todo"]),
        );
    }
    log.cut = !ended;
    Some(log)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::evidence_gate::runners::lines;

    #[test]
    fn maxfail_stops_are_not_interruptions_but_other_banners_are() {
        let run = |banner: &str| {
            let text = format!(
                "FAILED tests/a.py::test_a - assert 0\n!!!!!!!! {banner} !!!!!!!!\n=== 1 failed, 1 passed in 0.1s ===\n"
            );
            pytest(&lines(&text))[0].interrupted
        };
        assert!(!run("stopping after 1 failures"));
        assert!(!run(
            "xdist.dsession.Interrupted: stopping after 2 failures"
        ));
        assert!(run("KeyboardInterrupt"));
        assert!(run("Interrupted: 1 error during collection"));
        assert!(run("_pytest.outcomes.Exit: enough"));
    }

    #[test]
    fn pytest_node_ids_keep_their_spaces_brackets_and_colons() {
        let text = "=== test session starts ===\ntests/a.py::test_p[x [y]-2] FAILED      [ 50%]\ntests/a.py::C::test_p[c::d] PASSED      [100%]\nFAILED tests/a.py::test_p[x - y] - assert 0\n=== 1 failed, 1 passed in 0.1s ===\n";
        let log = &pytest(&lines(text))[0];
        let names: Vec<String> = log.tests.iter().map(|t| t.shown()).collect();
        assert_eq!(
            names,
            [
                "tests/a.py::test_p[x [y]-2]",
                "tests/a.py::C::test_p[c::d]",
                "tests/a.py::test_p[x - y]"
            ]
        );
    }

    #[test]
    fn jest_trees_name_tests_by_their_describes() {
        let text = "PASS src/a.test.js\n  ✓ top (1 ms)\n  cart\n    ✓ a (1 ms)\n    total\n      ✕ b (2 ms)\n  cart total\n    ✓ c\n\nTests:       1 failed, 3 passed, 4 total\n";
        let log = &jest(&lines(text))[0];
        let names: Vec<String> = log.tests.iter().map(|t| t.shown()).collect();
        assert_eq!(
            names,
            [
                "src/a.test.js::top",
                "src/a.test.js::cart::a",
                "src/a.test.js::cart::total::b",
                "src/a.test.js::cart total::c"
            ]
        );
        assert!(!log.cut);
    }
}
