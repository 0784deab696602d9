//! pytest, jest and vitest output.

use std::sync::LazyLock;

use regex::Regex;

use super::runs::{Mark, last_run};
use super::{Counts, Outcome, Runner, RunnerLog, count_of, counts};

static PYTEST_HEADER: LazyLock<Regex> = static_regex!(r"^=+ test session starts =+$");
static PYTEST_SUMMARY: LazyLock<Regex> = static_regex!(
    r"^(?:=+ )?((?:\d+ (?:passed|failed|skipped|errors?|xfailed|xpassed|deselected|warnings?|rerun|interrupted)(?:, )?)+|no tests ran) in \d+(?:\.\d+)?s(?: \([^)]*\))?(?: =+)?$"
);
static PYTEST_VERBOSE: LazyLock<Regex> =
    static_regex!(r"^(\S+::\S+) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b");
static PYTEST_SHORT: LazyLock<Regex> = static_regex!(
    r"^(?:\[gw\d+\] \[\s*\d+%\] )?(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S+::\S+)"
);
/// A progress line of the default or `-q` output (`tests/a.py ..F  [ 50%]`).
static PYTEST_PROGRESS: LazyLock<Regex> =
    static_regex!(r"^(?:\S+\.py [.FEsxX]+(?:\s+\[\s*\d+%\])?|[.FEsxX]+\s+\[\s*\d+%\])$");
/// A `!!!` banner: the session stopped before its end.
static PYTEST_BANNER: LazyLock<Regex> = static_regex!(r"^!{3,} (.+?) !{3,}$");
/// `-x` / `--maxfail` (pytest-xdist prefixes it with its exception's name).
static PYTEST_MAXFAIL: LazyLock<Regex> = static_regex!(r"(?:^|: )stopping after \d+ failures?$");
static PYTEST_COVERAGE: LazyLock<Regex> =
    static_regex!(r"^FAIL Required test coverage of .+ not reached");

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

/// pytest's session header, verbose and short-summary lines, final summary.
///
/// An ERROR (a fixture's setup or teardown, a module that does not import)
/// is not a test failure: it is counted apart and blocks a `passed` claim.
/// A `!!!` banner other than `-x`'s `stopping after N failures` (Ctrl-C,
/// `Interrupted: N error during collection`, `pytest.exit`) marks the
/// session interrupted.
pub(super) fn pytest(lines: &[String]) -> Option<RunnerLog> {
    let runs = last_run(lines, pytest_mark);
    let mut log = RunnerLog::new(Runner::Pytest, runs);
    let (mut header, mut summary) = (false, None);
    for line in &lines[runs.start..] {
        if PYTEST_HEADER.is_match(line) {
            header = true;
        } else if let Some(c) = PYTEST_SUMMARY.captures(line) {
            summary = Some(counts(&c[1]));
        } else if let Some(c) = PYTEST_VERBOSE.captures(line) {
            log.push(&c[1], pytest_outcome(&c[2]));
        } else if let Some(c) = PYTEST_SHORT.captures(line) {
            log.push(&c[2], pytest_outcome(&c[1]));
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
        // A session that never printed its summary was interrupted.
        None => log.failure_reported = true,
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
    static_regex!(r"^\s+(✓|√|✕|×|○|✎)\s+(?:skipped |todo )?(.+?)(?:\s+\(\d+(?:\.\d+)?\s*m?s\))?$");
static JEST_BULLET: LazyLock<Regex> = static_regex!(r"^\s*● (.+)$");
static JEST_FILE: LazyLock<Regex> = static_regex!(r"^\s*(PASS|FAIL)\s+(\S+)");

fn jest_mark(line: &str) -> Mark {
    if JEST_SUITES.is_match(line) {
        Mark::End
    } else if JEST_FILE.is_match(line) || JEST_TICK.is_match(line) || JEST_BULLET.is_match(line) {
        Mark::Content
    } else {
        Mark::Other
    }
}

/// The counts of a jest or vitest `tests` summary line, and whether its
/// `files` summary line counts a failed file; `None` when neither summary
/// nor the `none` line (no test found) is in `lines`.
fn js_summary(
    lines: &[String],
    tests: &Regex,
    files: &Regex,
    none: &Regex,
) -> Option<(Option<Counts>, bool)> {
    let (mut counted, mut file_failed, mut seen) = (None, false, false);
    for line in lines {
        if let Some(c) = tests.captures(line) {
            counted = Some(counts(&c[1]));
        } else if let Some(c) = files.captures(line) {
            file_failed |= count_of(&counts(&c[1]), &["failed"]) > 0;
        } else if !none.is_match(line) {
            continue;
        }
        seen = true;
    }
    seen.then_some((counted, file_failed))
}

/// jest's `Tests:` / `Test Suites:` summary, verbose ticks and `●` failure
/// headers, each test under the `PASS`/`FAIL` file header it follows.
pub(super) fn jest(lines: &[String]) -> Option<RunnerLog> {
    let runs = last_run(lines, jest_mark);
    let lines = &lines[runs.start..];
    let mut log = RunnerLog::new(Runner::Jest, runs);
    let (tests, file_failed) = js_summary(lines, &JEST_TESTS, &JEST_SUITES, &JEST_NONE)?;
    log.failure_reported |= file_failed;
    let mut file: Option<String> = None;
    for line in lines {
        if let Some(c) = JEST_TICK.captures(line) {
            let outcome = match &c[1] {
                "✓" | "√" => Outcome::Passed,
                "✕" | "×" => Outcome::Failed,
                _ => Outcome::Skipped,
            };
            log.push_in(file.as_deref(), &c[2], outcome);
        } else if let Some(c) = JEST_BULLET.captures(line) {
            match &c[1] {
                "Console" => {}
                "Test suite failed to run" => log.failure_reported = true,
                title => log.push_in(file.as_deref(), title.replace(" › ", "::"), Outcome::Failed),
            }
        } else if let Some(c) = JEST_FILE.captures(line) {
            log.failure_reported |= &c[1] == "FAIL";
            file = Some(c[2].to_string());
        }
    }
    log.count_tests();
    if let Some(c) = tests {
        log.take_summary(
            count_of(&c, &["passed"]),
            count_of(&c, &["failed"]),
            count_of(&c, &["skipped", "todo", "pending"]),
        );
    }
    Some(log)
}

static VITEST_TESTS: LazyLock<Regex> = static_regex!(r"^\s*Tests\s{2,}(.+?)\s*\(\d+\)$");
static VITEST_FILES: LazyLock<Regex> = static_regex!(r"^\s*Test Files\s{2,}(.+?)\s*\(\d+\)$");
static VITEST_NONE: LazyLock<Regex> = static_regex!(r"^No test files found");
static VITEST_TICK: LazyLock<Regex> =
    static_regex!(r"^\s*(✓|√|×|✗|↓)\s+(.+?)(?:\s+\d+(?:\.\d+)?m?s)?$");
static VITEST_FILE_LINE: LazyLock<Regex> = static_regex!(r"\(\d+ tests?(?: \| [^)]*)?\)$");
static VITEST_FAIL: LazyLock<Regex> = static_regex!(r"^\s*FAIL\s+(.+)$");
static VITEST_RUN: LazyLock<Regex> = static_regex!(r"^\s*RUN\s+v\d");

fn vitest_mark(line: &str) -> Mark {
    if VITEST_RUN.is_match(line) {
        Mark::Start
    } else if VITEST_FILES.is_match(line) {
        Mark::End
    } else if VITEST_TICK.is_match(line) || VITEST_FAIL.is_match(line) {
        Mark::Content
    } else {
        Mark::Other
    }
}

/// vitest's `Test Files` / `Tests` summary, verbose ticks and `FAIL` headers.
pub(super) fn vitest(lines: &[String]) -> Option<RunnerLog> {
    let runs = last_run(lines, vitest_mark);
    let lines = &lines[runs.start..];
    let mut log = RunnerLog::new(Runner::Vitest, runs);
    let (tests, file_failed) = js_summary(lines, &VITEST_TESTS, &VITEST_FILES, &VITEST_NONE)?;
    log.failure_reported |= file_failed;
    for line in lines {
        if let Some(c) = VITEST_TICK.captures(line) {
            if VITEST_FILE_LINE.is_match(&c[2]) {
                continue; // a file's line, not a test's
            }
            let outcome = match &c[1] {
                "✓" | "√" => Outcome::Passed,
                "↓" => Outcome::Skipped,
                _ => Outcome::Failed,
            };
            log.push(c[2].replace(" > ", "::"), outcome);
        } else if let Some(c) = VITEST_FAIL.captures(line) {
            match c[1].contains(" > ") {
                true => log.push(c[1].replace(" > ", "::"), Outcome::Failed),
                false => log.failure_reported = true,
            }
        }
    }
    log.count_tests();
    if let Some(c) = tests {
        log.take_summary(
            count_of(&c, &["passed"]),
            count_of(&c, &["failed"]),
            count_of(&c, &["skipped", "todo"]),
        );
    }
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
            pytest(&lines(&text)).unwrap().interrupted
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
    fn two_pytest_sessions_read_the_last() {
        let text = "=== test session starts ===\ntests/a.py::test_a FAILED\n=== 1 failed in 0.1s ===\n=== test session starts ===\ntests/a.py::test_a PASSED\n=== 1 passed in 0.1s ===\n";
        let log = pytest(&lines(text)).unwrap();
        assert_eq!((log.runs, log.passed, log.failed), (2, 1, 0));
        assert_eq!(log.tests.len(), 1);
    }
}
