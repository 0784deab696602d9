//! pytest, jest and vitest output.

use std::sync::LazyLock;

use regex::Regex;

use super::{Outcome, Runner, RunnerLog, constant, count_of, counts};

static PYTEST_HEADER: LazyLock<Regex> = LazyLock::new(|| constant(r"^=+ test session starts =+$"));
static PYTEST_SUMMARY: LazyLock<Regex> = LazyLock::new(|| {
    constant(
        r"^(?:=+ )?((?:\d+ (?:passed|failed|skipped|errors?|xfailed|xpassed|deselected|warnings?|rerun)(?:, )?)+|no tests ran) in \d+(?:\.\d+)?s(?: \([^)]*\))?(?: =+)?$",
    )
});
static PYTEST_VERBOSE: LazyLock<Regex> =
    LazyLock::new(|| constant(r"^(\S+::\S+) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b"));
static PYTEST_SHORT: LazyLock<Regex> = LazyLock::new(|| {
    constant(r"^(?:\[gw\d+\] \[\s*\d+%\] )?(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S+::\S+)")
});

/// pytest's session header, verbose and short-summary lines, final summary.
pub(super) fn pytest(lines: &[String]) -> Option<RunnerLog> {
    let mut log = RunnerLog::new(Runner::Pytest);
    let (mut header, mut summary) = (false, None);
    for line in lines {
        if PYTEST_HEADER.is_match(line) {
            header = true;
        } else if let Some(c) = PYTEST_SUMMARY.captures(line) {
            summary = Some(counts(&c[1]));
        } else if let Some(c) = PYTEST_VERBOSE.captures(line) {
            log.push(&c[1], pytest_outcome(&c[2]));
        } else if let Some(c) = PYTEST_SHORT.captures(line) {
            log.push(&c[2], pytest_outcome(&c[1]));
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
                count_of(&c, &["failed", "error", "errors"]),
                count_of(&c, &["skipped", "xfailed"]),
            );
        }
        // A session that never printed its summary was interrupted.
        None => log.failure_reported = true,
    }
    Some(log)
}

fn pytest_outcome(word: &str) -> Outcome {
    match word {
        "PASSED" | "XPASS" => Outcome::Passed,
        "SKIPPED" | "XFAIL" => Outcome::Skipped,
        _ => Outcome::Failed,
    }
}

static JEST_TESTS: LazyLock<Regex> = LazyLock::new(|| constant(r"^Tests:\s+(.*\d+ total)$"));
static JEST_SUITES: LazyLock<Regex> = LazyLock::new(|| constant(r"^Test Suites:\s+(.*\d+ total)$"));
static JEST_NONE: LazyLock<Regex> =
    LazyLock::new(|| constant(r"^No tests found, exiting with code \d+"));
static JEST_TICK: LazyLock<Regex> = LazyLock::new(|| {
    constant(r"^\s+(✓|√|✕|×|○|✎)\s+(?:skipped |todo )?(.+?)(?:\s+\(\d+(?:\.\d+)?\s*m?s\))?$")
});
static JEST_BULLET: LazyLock<Regex> = LazyLock::new(|| constant(r"^\s*● (.+)$"));
static JEST_FAIL_FILE: LazyLock<Regex> = LazyLock::new(|| constant(r"^FAIL\s+\S"));

/// jest's `Tests:` / `Test Suites:` summary, verbose ticks and `●` failure headers.
pub(super) fn jest(lines: &[String]) -> Option<RunnerLog> {
    let mut log = RunnerLog::new(Runner::Jest);
    let (mut tests, mut seen) = (None, false);
    for line in lines {
        if let Some(c) = JEST_TESTS.captures(line) {
            tests = Some(counts(&c[1]));
            seen = true;
        } else if let Some(c) = JEST_SUITES.captures(line) {
            log.failure_reported |= count_of(&counts(&c[1]), &["failed"]) > 0;
            seen = true;
        } else if JEST_NONE.is_match(line) {
            seen = true;
        }
    }
    if !seen {
        return None;
    }
    for line in lines {
        if let Some(c) = JEST_TICK.captures(line) {
            let outcome = match &c[1] {
                "✓" | "√" => Outcome::Passed,
                "✕" | "×" => Outcome::Failed,
                _ => Outcome::Skipped,
            };
            log.push(&c[2], outcome);
        } else if let Some(c) = JEST_BULLET.captures(line) {
            match &c[1] {
                "Console" => {}
                "Test suite failed to run" => log.failure_reported = true,
                title => log.push(title.replace(" › ", "::"), Outcome::Failed),
            }
        } else if JEST_FAIL_FILE.is_match(line) {
            log.failure_reported = true;
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

static VITEST_TESTS: LazyLock<Regex> =
    LazyLock::new(|| constant(r"^\s*Tests\s{2,}(.+?)\s*\(\d+\)$"));
static VITEST_FILES: LazyLock<Regex> =
    LazyLock::new(|| constant(r"^\s*Test Files\s{2,}(.+?)\s*\(\d+\)$"));
static VITEST_NONE: LazyLock<Regex> = LazyLock::new(|| constant(r"^No test files found"));
static VITEST_TICK: LazyLock<Regex> =
    LazyLock::new(|| constant(r"^\s*(✓|√|×|✗|↓)\s+(.+?)(?:\s+\d+(?:\.\d+)?m?s)?$"));
static VITEST_FILE_LINE: LazyLock<Regex> =
    LazyLock::new(|| constant(r"\(\d+ tests?(?: \| [^)]*)?\)$"));
static VITEST_FAIL: LazyLock<Regex> = LazyLock::new(|| constant(r"^\s*FAIL\s+(.+)$"));

/// vitest's `Test Files` / `Tests` summary, verbose ticks and `FAIL` headers.
pub(super) fn vitest(lines: &[String]) -> Option<RunnerLog> {
    let mut log = RunnerLog::new(Runner::Vitest);
    let (mut tests, mut seen) = (None, false);
    for line in lines {
        if let Some(c) = VITEST_TESTS.captures(line) {
            tests = Some(counts(&c[1]));
            seen = true;
        } else if let Some(c) = VITEST_FILES.captures(line) {
            log.failure_reported |= count_of(&counts(&c[1]), &["failed"]) > 0;
            seen = true;
        } else if VITEST_NONE.is_match(line) {
            seen = true;
        }
    }
    if !seen {
        return None;
    }
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
