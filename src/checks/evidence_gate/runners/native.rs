//! go test, gradle and xcodebuild output.

use std::sync::LazyLock;

use regex::Regex;

use super::runs::{Mark, Runs, last_run};
use super::{Outcome, Runner, RunnerLog};

static GO_RESULT: LazyLock<Regex> =
    static_regex!(r"^\s*--- (PASS|FAIL|SKIP): (\S+) \(\d+(?:\.\d+)?s\)$");
static GO_OK: LazyLock<Regex> = static_regex!(r"^ok\s+\S+\s+(?:\d+(?:\.\d+)?s|\(cached\))(.*)$");
static GO_FAIL_PKG: LazyLock<Regex> =
    static_regex!(r"^FAIL\s+\S+\s+(?:\d+(?:\.\d+)?s|\[build failed\]|\[setup failed\])");
static GO_NO_FILES: LazyLock<Regex> = static_regex!(r"^\?\s+\S+\s+\[no test files\]$");
static GO_RUN: LazyLock<Regex> = static_regex!(r"^=== RUN\s+\S+");
static GO_FAILURE: LazyLock<Regex> = static_regex!(r"^(?:FAIL$|panic: )");

static GO_PACKAGE: LazyLock<Regex> =
    static_regex!(r"^(?:ok|FAIL|\?)\s+(\S+)\s+(?:\d|\(cached\)|\[)");

/// go test prints no run header or summary: a second run shows as a package
/// reported again. It begins after the package line before that package's block.
fn go_runs(lines: &[String]) -> Runs {
    let mut seen: Vec<&str> = Vec::new();
    let (mut start, mut repeats, mut block_start, mut any) = (0, 0, 0, false);
    for (i, line) in lines.iter().enumerate() {
        if line == "FAIL" && block_start == i && any {
            block_start = i + 1; // the closing line of the run before
            continue;
        }
        let Some(c) = GO_PACKAGE.captures(line) else {
            continue;
        };
        let Some(package) = c.get(1).map(|m| m.as_str()) else {
            continue;
        };
        if seen.contains(&package) {
            repeats += 1;
            start = block_start;
            seen.clear();
        }
        seen.push(package);
        block_start = i + 1;
        any = true;
    }
    Runs {
        start,
        count: repeats + usize::from(any),
    }
}

/// go test's `--- PASS:` lines (with -v) and its `ok` / `FAIL` package lines.
pub(super) fn go_test(lines: &[String]) -> Option<RunnerLog> {
    let runs = go_runs(lines);
    let mut log = RunnerLog::new(Runner::GoTest, runs);
    let (mut seen, mut packages_ok) = (false, 0);
    for line in &lines[runs.start..] {
        if let Some(c) = GO_RESULT.captures(line) {
            let outcome = match &c[1] {
                "PASS" => Outcome::Passed,
                "SKIP" => Outcome::Skipped,
                _ => Outcome::Failed,
            };
            log.push(&c[2], outcome);
            seen = true;
        } else if let Some(c) = GO_OK.captures(line) {
            packages_ok += u64::from(!c[1].contains("[no tests to run]"));
            seen = true;
        } else if GO_FAIL_PKG.is_match(line) {
            log.failure_reported = true;
            seen = true;
        } else if GO_NO_FILES.is_match(line) || GO_RUN.is_match(line) {
            seen = true;
        } else if GO_FAILURE.is_match(line) {
            log.failure_reported = true;
        }
    }
    if !seen {
        return None;
    }
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

/// gradle's per-test lines (testLogging events), `N tests completed` and `BUILD` lines.
pub(super) fn gradle(lines: &[String]) -> Option<RunnerLog> {
    let runs = last_run(lines, gradle_mark);
    let lines = &lines[runs.start..];
    let mut log = RunnerLog::new(Runner::Gradle, runs);
    let (mut seen, mut completed) = (false, None);
    for line in lines {
        if let Some(c) = GRADLE_BUILD.captures(line) {
            log.failure_reported |= &c[1] == "FAILED";
            seen = true;
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
        }
    }
    if !seen {
        return None;
    }
    for line in lines {
        if let Some(c) = GRADLE_TEST.captures(line) {
            let method = c[2].strip_suffix("()").unwrap_or(&c[2]);
            let outcome = match &c[3] {
                "PASSED" => Outcome::Passed,
                "SKIPPED" => Outcome::Skipped,
                _ => Outcome::Failed,
            };
            log.push(format!("{}::{method}", c[1].replace(" > ", "::")), outcome);
        }
    }
    log.count_tests();
    if let Some((total, failed, skipped)) = completed {
        log.take_summary(total.saturating_sub(failed + skipped), failed, skipped);
    }
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

/// xcodebuild's XCTest `Test Case` lines, Swift Testing lines, `Executed`
/// totals and the `** TEST SUCCEEDED **` banner.
pub(super) fn xcodebuild(lines: &[String]) -> Option<RunnerLog> {
    let runs = last_run(lines, xcodebuild_mark);
    let lines = &lines[runs.start..];
    let mut log = RunnerLog::new(Runner::Xcodebuild, runs);
    let (mut seen, mut executed) = (false, None);
    for line in lines {
        if let Some(c) = XC_CASE.captures(line) {
            log.push(xctest_name(&c[1]), xc_outcome(&c[2]));
            seen = true;
        } else if let Some(c) = XC_SWIFT_RUN.captures(line) {
            log.failure_reported |= &c[1] == "failed";
            seen = true;
        } else if let Some(c) = XC_SWIFT_TEST.captures(line) {
            let name = c[1].trim_matches('"');
            log.push(name.strip_suffix("()").unwrap_or(name), xc_outcome(&c[2]));
            seen = true;
        } else if let Some(c) = XC_EXECUTED.captures(line) {
            let num = |i: usize| c[i].parse::<u64>().unwrap_or(0);
            executed = Some((num(1), num(2)));
            seen = true;
        } else if let Some(c) = XC_RESULT.captures(line) {
            log.failure_reported |= &c[2] == "FAILED";
            seen = true;
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
    Some(log)
}

/// `-[Module.Class method]` or `Class.method()` as `Class::method`.
fn xctest_name(raw: &str) -> String {
    if let Some(inner) = raw.strip_prefix("-[").and_then(|s| s.strip_suffix(']'))
        && let Some((class, method)) = inner.split_once(' ')
    {
        return format!("{class}::{method}");
    }
    let raw = raw.strip_suffix("()").unwrap_or(raw);
    match raw.rsplit_once('.') {
        Some((class, method)) => format!("{class}::{method}"),
        None => raw.to_string(),
    }
}

fn xc_outcome(word: &str) -> Outcome {
    match word {
        "passed" => Outcome::Passed,
        "skipped" => Outcome::Skipped,
        _ => Outcome::Failed,
    }
}
