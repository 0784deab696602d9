//! go test, gradle and xcodebuild output.
//!
//! go's `-json` stream (test2json) is read as the text it carries: the
//! `Output` of its events, which is what `go test -v` prints (see
//! [`super::super::text`]).

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::runs::{Mark, ranges, read_each, split};
use super::{Outcome, Place, Runner, RunnerLog, TestLine};

static GO_RESULT: LazyLock<Regex> =
    static_regex!(r"^\s*--- (PASS|FAIL|SKIP): (\S+) \(\d+(?:\.\d+)?s\)$");
static GO_OK: LazyLock<Regex> = static_regex!(r"^ok\s+(\S+)\s+(?:\d+(?:\.\d+)?s|\(cached\))(.*)$");
static GO_FAIL_PKG: LazyLock<Regex> =
    static_regex!(r"^FAIL\s+(\S+)\s+(?:\d+(?:\.\d+)?s|\[build failed\]|\[setup failed\])");
static GO_NO_FILES: LazyLock<Regex> = static_regex!(r"^\?\s+(\S+)\s+\[no test files\]$");
static GO_RUN: LazyLock<Regex> = static_regex!(r"^=== RUN\s+\S+");
static GO_FAILURE: LazyLock<Regex> = static_regex!(r"^(?:FAIL$|panic: )");
/// The header go prints above a package's compile errors.
static GO_BUILD_HEADER: LazyLock<Regex> = static_regex!(r"^# \S+(?: \[\S+\])?$");

static GO_PACKAGE: LazyLock<Regex> =
    static_regex!(r"^(?:ok|FAIL|\?)\s+(\S+)\s+(?:\d|\(cached\)|\[)");

/// go test prints no run header or summary: a second run shows as a package
/// reported again. It begins after the package line before that package's
/// block (or after the lone `FAIL` that closed the run before).
fn go_runs(lines: &[String]) -> Vec<Range<usize>> {
    let mut seen: Vec<&str> = Vec::new();
    let mut starts = Vec::new();
    let (mut block_start, mut any) = (0, false);
    for (i, line) in lines.iter().enumerate() {
        if line == "FAIL" && block_start == i && any {
            block_start = i + 1; // the closing line of the run before
            continue;
        }
        match GO_PACKAGE.captures(line).and_then(|c| c.get(1)) {
            Some(package) => {
                let package = package.as_str();
                if seen.contains(&package) {
                    starts.push(block_start);
                    seen.clear();
                }
                seen.push(package);
                block_start = i + 1;
                any = true;
            }
            None => any |= GO_RESULT.is_match(line) || GO_RUN.is_match(line),
        }
    }
    if !any {
        return Vec::new();
    }
    starts.insert(0, 0);
    starts.dedup();
    ranges(&starts, lines.len())
}

/// go test's `--- PASS:` lines (with -v) and its `ok` / `FAIL` package
/// lines; each test is placed in the package whose line follows it. Test
/// lines (or `=== RUN`) after the last package line are a run cut before
/// its package's result. A package that does not build (`[build failed]`,
/// `[setup failed]`) is a reported failure.
pub(super) fn go_test(lines: &[String]) -> Vec<RunnerLog> {
    read_each(lines, go_runs(lines), go_run)
}

fn go_run(lines: &[String], start: usize) -> Option<RunnerLog> {
    let mut log = RunnerLog::new(Runner::GoTest, start);
    let (mut seen, mut packages_ok) = (false, 0);
    // The results since the last package line, and whether a test started
    // since then (a block still open).
    let mut pending: Vec<TestLine> = Vec::new();
    let mut open = false;
    let close = |log: &mut RunnerLog, pending: &mut Vec<TestLine>, package: &str| {
        for mut t in pending.drain(..) {
            t.place = Some(Place::Package(package.to_string()));
            log.tests.push(t);
        }
    };
    for line in lines {
        if let Some(c) = GO_RESULT.captures(line) {
            let outcome = match &c[1] {
                "PASS" => Outcome::Passed,
                "SKIP" => Outcome::Skipped,
                _ => Outcome::Failed,
            };
            pending.push(TestLine {
                place: None,
                path: c[2].split('/').map(str::to_string).collect(),
                outcome,
            });
            (seen, open) = (true, true);
        } else if let Some(c) = GO_OK.captures(line) {
            packages_ok += u64::from(!c[2].contains("[no tests to run]"));
            close(&mut log, &mut pending, &c[1]);
            (seen, open) = (true, false);
        } else if let Some(c) = GO_FAIL_PKG.captures(line) {
            log.failure_reported = true;
            close(&mut log, &mut pending, &c[1]);
            (seen, open) = (true, false);
        } else if let Some(c) = GO_NO_FILES.captures(line) {
            close(&mut log, &mut pending, &c[1]);
            (seen, open) = (true, false);
        } else if GO_RUN.is_match(line) {
            (seen, open) = (true, true);
        } else if GO_FAILURE.is_match(line) || GO_BUILD_HEADER.is_match(line) {
            log.failure_reported = true;
        }
    }
    if !seen {
        return None;
    }
    log.tests.append(&mut pending);
    log.cut = open;
    log.count_tests();
    if log.tests.is_empty() && packages_ok > 0 {
        // Without -v go test names no test: a package `ok` is the only proof.
        (log.passed, log.unit) = (packages_ok, "packages");
    }
    Some(log)
}

static GRADLE_TEST: LazyLock<Regex> = static_regex!(r"^(.+) > (.+?) (PASSED|FAILED|SKIPPED)$");
static GRADLE_COMPLETED: LazyLock<Regex> =
    static_regex!(r"^(\d+) tests? completed, (\d+) failed(?:, (\d+) skipped)?$");
static GRADLE_BUILD: LazyLock<Regex> = static_regex!(r"^BUILD (SUCCESSFUL|FAILED) in ");
static GRADLE_TASK: LazyLock<Regex> = static_regex!(r"^> Task :\S*");
static GRADLE_FAILURE: LazyLock<Regex> =
    static_regex!(r"^(?:> )?(?:There were failing tests|No tests found for given includes)");

fn gradle_mark(line: &str) -> Mark {
    if GRADLE_BUILD.is_match(line) {
        Mark::End
    } else if GRADLE_TASK.is_match(line)
        || GRADLE_TEST.is_match(line)
        || GRADLE_COMPLETED.is_match(line)
    {
        Mark::Content
    } else {
        Mark::Other
    }
}

/// gradle's per-test lines (testLogging events: `Class > method() PASSED`,
/// each test placed in its outermost class), `N tests completed` and
/// `BUILD` lines; a run without its `BUILD` line was cut.
pub(super) fn gradle(lines: &[String]) -> Vec<RunnerLog> {
    read_each(lines, split(lines, gradle_mark), gradle_run)
}

fn gradle_run(lines: &[String], start: usize) -> Option<RunnerLog> {
    let mut log = RunnerLog::new(Runner::Gradle, start);
    let (mut seen, mut completed, mut built) = (false, None, false);
    for line in lines {
        if let Some(c) = GRADLE_BUILD.captures(line) {
            log.failure_reported |= &c[1] == "FAILED";
            (seen, built) = (true, true);
        } else if let Some(c) = GRADLE_COMPLETED.captures(line) {
            let num = |i: usize| {
                c.get(i)
                    .and_then(|m| m.as_str().parse::<u64>().ok())
                    .unwrap_or(0)
            };
            completed = Some((num(1), num(2), num(3)));
            seen = true;
        } else if GRADLE_FAILURE.is_match(line) {
            log.failure_reported = true;
        } else if GRADLE_TASK.is_match(line) {
            seen = true;
        } else if let Some(c) = GRADLE_TEST.captures(line) {
            let method = c[2].strip_suffix("()").unwrap_or(&c[2]);
            let outcome = match &c[3] {
                "PASSED" => Outcome::Passed,
                "SKIPPED" => Outcome::Skipped,
                _ => Outcome::Failed,
            };
            let mut path: Vec<String> = c[1].split(" > ").map(str::to_string).collect();
            let class = path.first().cloned().map(Place::Class);
            path.push(method.to_string());
            log.push(class, path, outcome);
        }
    }
    if !seen {
        return None;
    }
    log.count_tests();
    if let Some((total, failed, skipped)) = completed {
        log.take_summary(total.saturating_sub(failed + skipped), failed, skipped);
    }
    log.cut = !built;
    Some(log)
}

static XC_CASE: LazyLock<Regex> =
    static_regex!(r"^Test [Cc]ase '(.+?)' (passed|failed|skipped) (?:on '[^']*' )?\(");
static XC_EXECUTED: LazyLock<Regex> =
    static_regex!(r"^\s*Executed (\d+) tests?, with (\d+) failures? \(\d+ unexpected\)");
static XC_RESULT: LazyLock<Regex> =
    static_regex!(r"^\*\* (TEST|BUILD|TEST BUILD) (SUCCEEDED|FAILED) \*\*$");
static XC_SWIFT_TEST: LazyLock<Regex> =
    static_regex!(r"^\S+ Test (.+?) (passed|failed|skipped)(?: after [\d.]+ seconds|\.|$)");
static XC_SWIFT_RUN: LazyLock<Regex> =
    static_regex!(r"^\S+ Test run with \d+ tests? (passed|failed)");
static XC_FAILURE: LazyLock<Regex> = static_regex!(r"^Testing failed:");

fn xcodebuild_mark(line: &str) -> Mark {
    if XC_RESULT.is_match(line) {
        Mark::End
    } else if XC_CASE.is_match(line)
        || XC_SWIFT_TEST.is_match(line)
        || XC_SWIFT_RUN.is_match(line)
        || XC_EXECUTED.is_match(line)
    {
        Mark::Content
    } else {
        Mark::Other
    }
}

/// xcodebuild's XCTest `Test Case` lines (placed in their class), Swift
/// Testing lines, `Executed` totals and the `** TEST SUCCEEDED **` banner;
/// a run without its banner was cut.
pub(super) fn xcodebuild(lines: &[String]) -> Vec<RunnerLog> {
    read_each(lines, split(lines, xcodebuild_mark), xcodebuild_run)
}

fn xcodebuild_run(lines: &[String], start: usize) -> Option<RunnerLog> {
    let mut log = RunnerLog::new(Runner::Xcodebuild, start);
    let (mut seen, mut executed, mut ended) = (false, None, false);
    for line in lines {
        if let Some(c) = XC_CASE.captures(line) {
            let (class, method) = xctest_name(&c[1]);
            let place = class.clone().map(Place::Class);
            let path = class.into_iter().chain([method]).collect();
            log.push(place, path, xc_outcome(&c[2]));
            seen = true;
        } else if let Some(c) = XC_SWIFT_RUN.captures(line) {
            log.failure_reported |= &c[1] == "failed";
            (seen, ended) = (true, true);
        } else if let Some(c) = XC_SWIFT_TEST.captures(line) {
            let name = c[1].trim_matches('"');
            let name = name.strip_suffix("()").unwrap_or(name);
            log.push(None, vec![name.to_string()], xc_outcome(&c[2]));
            seen = true;
        } else if let Some(c) = XC_EXECUTED.captures(line) {
            let num = |i: usize| c[i].parse::<u64>().unwrap_or(0);
            executed = Some((num(1), num(2)));
            seen = true;
        } else if let Some(c) = XC_RESULT.captures(line) {
            log.failure_reported |= &c[2] == "FAILED";
            (seen, ended) = (true, true);
        } else if XC_FAILURE.is_match(line) {
            log.failure_reported = true;
        }
    }
    if !seen {
        return None;
    }
    log.count_tests();
    if let (true, Some((total, failures))) = (log.tests.is_empty(), executed) {
        (log.passed, log.failed) = (total.saturating_sub(failures), failures);
    }
    log.cut = !ended;
    Some(log)
}

/// `-[Module.Class method]` or `Class.method()` as its class and method.
fn xctest_name(raw: &str) -> (Option<String>, String) {
    if let Some(inner) = raw.strip_prefix("-[").and_then(|s| s.strip_suffix(']'))
        && let Some((class, method)) = inner.split_once(' ')
    {
        return (Some(class.to_string()), method.to_string());
    }
    let raw = raw.strip_suffix("()").unwrap_or(raw);
    match raw.rsplit_once('.') {
        Some((class, method)) => (Some(class.to_string()), method.to_string()),
        None => (None, raw.to_string()),
    }
}

fn xc_outcome(word: &str) -> Outcome {
    match word {
        "passed" => Outcome::Passed,
        "skipped" => Outcome::Skipped,
        _ => Outcome::Failed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::evidence_gate::runners::lines;

    #[test]
    fn go_tests_are_placed_in_their_package_and_a_block_without_one_is_cut() {
        let text = "=== RUN   TestA\n--- PASS: TestA (0.00s)\nPASS\nok  \texample.com/shop/cart\t0.003s\n=== RUN   TestB\n--- PASS: TestB/sub_name (0.00s)\n";
        let log = &go_test(&lines(text))[0];
        assert_eq!(
            log.tests[0].place,
            Some(Place::Package("example.com/shop/cart".into()))
        );
        assert_eq!(log.tests[1].path, ["TestB", "sub_name"]);
        assert!(log.cut);
    }

    #[test]
    fn go_runs_are_cut_where_a_package_comes_again() {
        let text = "--- FAIL: TestA (0.00s)\nFAIL\nFAIL\tx/a\t0.1s\nok  \tx/b\t0.1s\nFAIL\n--- PASS: TestA (0.00s)\nok  \tx/a\t0.1s\n";
        let runs = go_test(&lines(text));
        assert_eq!(runs.len(), 2);
        assert_eq!((runs[1].start, runs[1].passed, runs[1].failed), (5, 1, 0));
    }
}
