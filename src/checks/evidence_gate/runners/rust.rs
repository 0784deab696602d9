//! cargo test (libtest) and cargo-nextest output.

use std::sync::LazyLock;

use regex::Regex;

use super::runs::{Mark, last_run};
use super::{Outcome, Runner, RunnerLog, count_of, counts};

static RUNNING: LazyLock<Regex> = static_regex!(r"^running \d+ tests?$");
static TEST: LazyLock<Regex> = static_regex!(r"^test (.+?) \.\.\. (ok|FAILED|ignored)(?:,.*)?$");
static RESULT: LazyLock<Regex> = static_regex!(
    r"^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored; \d+ measured; \d+ filtered out"
);
static CARGO_FAILED: LazyLock<Regex> =
    static_regex!(r"^error: (?:test failed|\d+ targets? failed|could not compile)");
static CARGO_BUILD_FAILED: LazyLock<Regex> = static_regex!(r"^error: could not compile");
/// The build lines that open one `cargo test` invocation.
static CARGO_INVOCATION: LazyLock<Regex> = static_regex!(r"^\s*(?:Compiling|Finished) \S");

fn cargo_mark(line: &str) -> Mark {
    if CARGO_INVOCATION.is_match(line) {
        Mark::SoftStart
    } else if CARGO_BUILD_FAILED.is_match(line) {
        Mark::End
    } else if RUNNING.is_match(line) || TEST.is_match(line) || RESULT.is_match(line) {
        Mark::Content
    } else {
        Mark::Other
    }
}

/// libtest's `running N tests` / `test x ... ok` / `test result:` lines.
/// A build that failed (`error: could not compile`) is a run in which no
/// test ran.
pub(super) fn cargo_test(lines: &[String]) -> Option<RunnerLog> {
    let runs = last_run(lines, cargo_mark);
    let mut log = RunnerLog::new(Runner::CargoTest, runs);
    let (mut running, mut results, mut seen) = (0, 0, false);
    let (mut passed, mut failed, mut ignored) = (0, 0, 0);
    for line in &lines[runs.start..] {
        if RUNNING.is_match(line) {
            running += 1;
            seen = true;
        } else if let Some(c) = TEST.captures(line) {
            let name = c[1].strip_suffix(" - should panic").unwrap_or(&c[1]);
            log.push(name, outcome(&c[2]));
            seen = true;
        } else if let Some(c) = RESULT.captures(line) {
            results += 1;
            passed += c[2].parse::<u64>().unwrap_or(0);
            failed += c[3].parse::<u64>().unwrap_or(1);
            ignored += c[4].parse::<u64>().unwrap_or(0);
            log.failure_reported |= &c[1] != "ok";
            seen = true;
        } else if CARGO_FAILED.is_match(line) {
            log.failure_reported = true;
            seen |= CARGO_BUILD_FAILED.is_match(line);
        }
    }
    if !seen {
        return None;
    }
    log.count_tests();
    if results > 0 {
        log.failed = log.failed.max(failed);
        (log.passed, log.skipped) = (passed, ignored);
    }
    // A test binary that started but never printed its result crashed or was cut.
    log.failure_reported |= running > results;
    Some(log)
}

fn outcome(word: &str) -> Outcome {
    match word {
        "ok" => Outcome::Passed,
        "ignored" => Outcome::Skipped,
        _ => Outcome::Failed,
    }
}

static NEXTEST_STATUS: LazyLock<Regex> = static_regex!(
    r"^\s*(PASS|FAIL|SKIP|FLAKY(?: \d+/\d+)?|LEAK|LEAK-FAIL|TIMEOUT|ABORT|SIG[A-Z]+|TRY \d+ [A-Z-]+|RETRY \d+/\d+)\s+\[\s*[\d.]+s\]\s+(?:\(\s*\d+/\d+\)\s+)?(\S+)\s+(\S.*)$"
);
static NEXTEST_SUMMARY: LazyLock<Regex> =
    static_regex!(r"^\s*Summary \[\s*[\d.]+s\] \d+ tests? run: (.*)$");
static NEXTEST_START: LazyLock<Regex> = static_regex!(r"^\s*Starting \d+ tests? across");
static NEXTEST_FAILED: LazyLock<Regex> =
    static_regex!(r"^(?:error: test run failed|\s*Cancelling due to test failure)");

/// cargo-nextest's status lines and `Summary` line. Each run opens with
/// `Starting N tests`; the status lines repeated after `Summary` are a recap.
pub(super) fn nextest(lines: &[String]) -> Option<RunnerLog> {
    let runs = last_run(lines, |line| match NEXTEST_START.is_match(line) {
        true => Mark::Start,
        false => Mark::Other,
    });
    let mut log = RunnerLog::new(Runner::Nextest, runs);
    let (mut started, mut summary, mut seen) = (false, None, false);
    for line in &lines[runs.start..] {
        if let Some(c) = NEXTEST_STATUS.captures(line) {
            let status = &c[1];
            if !status.starts_with("RETRY") {
                log.push(c[3].trim(), nextest_outcome(status));
            }
            seen = true;
        } else if let Some(c) = NEXTEST_SUMMARY.captures(line) {
            summary = Some(counts(&c[1]));
            seen = true;
        } else if NEXTEST_START.is_match(line) {
            started = true;
            seen = true;
        } else if NEXTEST_FAILED.is_match(line) {
            log.failure_reported = true;
        }
    }
    if !seen {
        return None;
    }
    log.count_tests();
    match summary {
        Some(c) => {
            log.passed = count_of(&c, &["passed"]);
            log.failed = log.failed.max(count_of(&c, &["failed", "timed out"]));
            log.skipped = count_of(&c, &["skipped"]);
        }
        None => log.failure_reported |= started,
    }
    Some(log)
}

fn nextest_outcome(status: &str) -> Outcome {
    let last = status.rsplit(' ').next().unwrap_or(status);
    match (status, last) {
        ("SKIP", _) => Outcome::Skipped,
        (s, _) if s.starts_with("FLAKY") => Outcome::Passed,
        (_, "PASS" | "LEAK") => Outcome::Passed,
        _ => Outcome::Failed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::evidence_gate::runners::lines;

    #[test]
    fn a_binary_without_its_result_line_is_a_reported_failure() {
        let log = cargo_test(&lines("running 2 tests\ntest a ... ok\n")).unwrap();
        assert_eq!((log.passed, log.failed, log.failure_reported), (1, 0, true));
    }

    #[test]
    fn nextest_retries_keep_the_failed_try() {
        let text = "    Starting 1 test across 1 binary\n  TRY 1 FAIL [   0.010s] crate tests::flaky\n  TRY 2 PASS [   0.011s] crate tests::flaky\n     Summary [   0.020s] 1 test run: 1 passed (1 flaky), 0 skipped\n";
        let log = nextest(&lines(text)).unwrap();
        assert_eq!(log.tests.len(), 2);
        assert_eq!(log.tests[0].outcome, Outcome::Failed);
        assert_eq!(
            (log.passed, log.failed, log.failure_reported),
            (1, 1, false)
        );
    }
}
