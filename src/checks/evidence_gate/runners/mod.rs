//! Readers of each test runner's console output. Each reader looks for its
//! runner's signature lines (summaries, per-test result lines) and, when it
//! finds them, returns the counts, the per-test outcomes it could see and
//! whether a failure was reported beyond the counts (a build failure, a
//! failed suite, a run cut short before its summary).
//!
//! A log holding several runs of one runner (a re-run appended to the same
//! file) is read from the start of its last run only: [`Runs`] finds it.

mod native;
mod node;
mod runs;
mod rust;
mod script;

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

use runs::Runs;

/// A test runner whose output the gate reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Runner {
    /// `cargo test` (the libtest harness).
    CargoTest,
    /// `cargo nextest run`.
    Nextest,
    /// pytest.
    Pytest,
    /// jest.
    Jest,
    /// vitest.
    Vitest,
    /// `go test`.
    GoTest,
    /// gradle's test task.
    Gradle,
    /// xcodebuild test (XCTest and Swift Testing).
    Xcodebuild,
    /// node's built-in test runner (`node --test`), spec or TAP reporter.
    NodeTest,
}

impl Runner {
    /// The runner's name in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Runner::CargoTest => "cargo test",
            Runner::Nextest => "cargo-nextest",
            Runner::Pytest => "pytest",
            Runner::Jest => "jest",
            Runner::Vitest => "vitest",
            Runner::GoTest => "go test",
            Runner::Gradle => "gradle",
            Runner::Xcodebuild => "xcodebuild",
            Runner::NodeTest => "node --test",
        }
    }
}

/// What happened to one test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    /// It passed.
    Passed,
    /// It failed (or errored, crashed, timed out).
    Failed,
    /// It was skipped or ignored.
    Skipped,
    /// It did not run or did not finish for a reason outside its body (a
    /// pytest fixture's setup or teardown ERROR): neither a pass nor a failure.
    Errored,
    /// It failed as expected (pytest's xfail): not a failure of the test.
    XFailed,
}

impl Outcome {
    /// `passed`, `failed`, `skipped`, `errored` or `xfailed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::Skipped => "skipped",
            Outcome::Errored => "errored",
            Outcome::XFailed => "xfailed",
        }
    }
}

/// One test's result line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TestLine {
    /// Its name, path segments joined by `::`.
    pub name: String,
    /// Its outcome.
    pub outcome: Outcome,
    /// The test file the runner printed it under, when it prints one
    /// apart from the name (jest's `PASS file` headers).
    pub file: Option<String>,
}

/// What one runner's output showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RunnerLog {
    /// The runner.
    pub runner: Runner,
    /// Passed tests (or packages, see `unit`).
    pub passed: u64,
    /// Failed tests.
    pub failed: u64,
    /// Skipped tests.
    pub skipped: u64,
    /// Errors that are not test failures (pytest's setup, teardown and
    /// collection errors).
    pub errors: u64,
    /// `tests`, or `packages` when only package lines were printed.
    pub unit: &'static str,
    /// A failure beyond the counts, or a run cut short.
    pub failure_reported: bool,
    /// Per-test outcomes, in log order.
    pub tests: Vec<TestLine>,
    /// The session was interrupted (Ctrl-C, `pytest.exit`, a collection
    /// error that stopped it): whatever it printed proves nothing.
    pub interrupted: bool,
    /// The tests passed but a coverage threshold was not met (the command
    /// exited non-zero for a reason that is not a test result).
    pub coverage_unmet: bool,
    /// How many runs of this runner the log holds (only the last is read).
    pub runs: usize,
}

impl RunnerLog {
    /// An empty log of `runner`, whose output the log holds `runs.count`
    /// times (counted once when no run was cut out).
    fn new(runner: Runner, runs: Runs) -> RunnerLog {
        RunnerLog {
            runner,
            passed: 0,
            failed: 0,
            skipped: 0,
            errors: 0,
            unit: "tests",
            failure_reported: false,
            tests: Vec::new(),
            interrupted: false,
            coverage_unmet: false,
            runs: runs.count.max(1),
        }
    }

    fn push(&mut self, name: impl Into<String>, outcome: Outcome) {
        self.push_in(None, name, outcome);
    }

    fn push_in(&mut self, file: Option<&str>, name: impl Into<String>, outcome: Outcome) {
        self.tests.push(TestLine {
            name: name.into(),
            outcome,
            file: file.map(str::to_string),
        });
    }

    /// Counts taken from the per-test lines (each name of each file once,
    /// its worst outcome). Linear: a log holds up to hundreds of thousands.
    fn count_tests(&mut self) {
        let mut seen: HashMap<(Option<&str>, &str), Outcome> = HashMap::new();
        for t in &self.tests {
            seen.entry((t.file.as_deref(), t.name.as_str()))
                .and_modify(|o| {
                    if t.outcome == Outcome::Failed {
                        *o = Outcome::Failed;
                    }
                })
                .or_insert(t.outcome);
        }
        let count = |want: &[Outcome]| seen.values().filter(|o| want.contains(o)).count() as u64;
        self.passed = count(&[Outcome::Passed]);
        self.failed = count(&[Outcome::Failed]);
        self.skipped = count(&[Outcome::Skipped, Outcome::XFailed]);
        self.errors = count(&[Outcome::Errored]);
    }
}

impl RunnerLog {
    /// Takes the runner's own summary as the counts; failed test lines
    /// that the summary does not count are still a reported failure.
    /// Errors stay as counted from the test lines.
    fn take_summary(&mut self, passed: u64, failed: u64, skipped: u64) {
        self.failure_reported |= self.failed > 0 && failed == 0;
        (self.passed, self.failed, self.skipped) = (passed, failed, skipped);
    }
}

/// Every runner whose output appears in the lines.
pub(super) fn detect(lines: &[String]) -> Vec<RunnerLog> {
    let nextest = rust::nextest(lines);
    // nextest replays a failing test's own libtest output: read it once.
    let cargo = if nextest.is_some() {
        None
    } else {
        rust::cargo_test(lines)
    };
    [
        cargo,
        nextest,
        script::pytest(lines),
        script::jest(lines),
        script::vitest(lines),
        native::go_test(lines),
        native::gradle(lines),
        native::xcodebuild(lines),
        node::node_test(lines),
    ]
    .into_iter()
    .flatten()
    .collect()
}

static COUNT: LazyLock<Regex> = static_regex!(
    r"(\d+) (passed|failed|skipped|ignored|errors?|xfailed|xpassed|deselected|warnings?|rerun|timed out|todo|pending|total|flaky|leaky|interrupted)\b"
);

/// `N word` pairs of a summary line.
type Counts = Vec<(u64, String)>;

/// `N word` pairs of a summary line (`3 passed, 1 failed`, `1 failed | 2 passed`).
fn counts(summary: &str) -> Counts {
    COUNT
        .captures_iter(summary)
        .filter_map(|c| Some((c[1].parse().ok()?, c[2].trim().to_string())))
        .collect()
}

/// The sum of the counts whose word is one of `words`.
fn count_of(pairs: &[(u64, String)], words: &[&str]) -> u64 {
    pairs
        .iter()
        .filter(|(_, w)| words.contains(&w.as_str()))
        .map(|(n, _)| *n)
        .sum()
}

/// The lines of a test's log text.
#[cfg(test)]
fn lines(text: &str) -> Vec<String> {
    text.lines().map(str::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_counts_are_read_in_any_separator() {
        let c = counts("3 passed, 1 failed, 2 skipped, 1 timed out in 0.2s");
        assert_eq!(count_of(&c, &["failed", "timed out"]), 2);
        let c = counts("1 failed | 2 passed (3)");
        assert_eq!(
            (count_of(&c, &["passed"]), count_of(&c, &["failed"])),
            (2, 1)
        );
    }
}
