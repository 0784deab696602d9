//! Readers of each test runner's console output. Each reader looks for its
//! runner's signature lines (summaries, per-test result lines) and, for
//! every run of the runner the log holds, returns the counts, the per-test
//! outcomes it could see (with where the runner says each test is: a file,
//! a go package, a cargo target, a JVM class), whether a failure was
//! reported beyond the counts (a build failure, a suite that failed to run,
//! unhandled errors) and whether the run was cut before its end.
//!
//! A log holding several runs of one runner (a re-run appended to the same
//! file) is cut into runs with [`runs::split`]; every run is returned.

mod native;
mod node;
mod runs;
mod rust;
mod script;

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

pub(super) use node::attribute_file;
pub(super) use rust::target_id;

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
pub enum Outcome {
    /// It passed.
    Passed,
    /// It failed (or crashed, timed out).
    Failed,
    /// It was skipped, ignored, left out by a name filter, or is a todo.
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
        self.into()
    }

    /// The test ran (it was neither skipped nor kept from running by an error).
    pub fn ran(self) -> bool {
        matches!(self, Outcome::Passed | Outcome::Failed | Outcome::XFailed)
    }
}

/// Where a runner says a test is.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Place {
    /// A test file, as the runner printed it (relative to its root).
    File(String),
    /// A go package's import path.
    Package(String),
    /// A cargo test target, by its root source file (`src/lib.rs`,
    /// `tests/cart.rs`, `src/bin/till.rs`).
    Target(String),
    /// A JVM or XCTest class (`com.acme.CartTest`, `ShopTests.CartTests`).
    Class(String),
}

/// One test's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestLine {
    /// Where the runner says it is, when it says.
    pub place: Option<Place>,
    /// Its name: the enclosing groups (describes, classes, parent tests,
    /// modules) then its own name. An empty segment is a group the runner
    /// did not name on that line.
    pub path: Vec<String>,
    /// Its outcome.
    pub outcome: Outcome,
}

impl TestLine {
    /// The name as shown: its path joined by `::` (by `/` for go, as go
    /// names subtests), after its file when the runner names one.
    pub fn shown(&self) -> String {
        match &self.place {
            Some(Place::File(f)) => format!("{f}::{}", self.path.join("::")),
            Some(Place::Package(_)) => self.path.join("/"),
            _ => self.path.join("::"),
        }
    }
}

/// What one run of one runner showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RunnerLog {
    /// The runner.
    pub runner: Runner,
    /// The index of the run's first line in the log.
    pub start: usize,
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
    /// A failure beyond the counts: a build that failed, a suite that did
    /// not run, unhandled errors.
    pub failure_reported: bool,
    /// The run stopped before its closing lines (a summary, a package's
    /// result line, a test binary's result): it proves nothing.
    pub cut: bool,
    /// Per-test outcomes, in log order.
    pub tests: Vec<TestLine>,
    /// Test files the run names without a test under them (a passing
    /// file's line of vitest's default reporter, jest's quiet headers).
    pub files: Vec<String>,
    /// The session was interrupted (Ctrl-C, `pytest.exit`, a collection
    /// error that stopped it): whatever it printed proves nothing.
    pub interrupted: bool,
    /// The tests passed but a coverage threshold was not met (the command
    /// exited non-zero for a reason that is not a test result).
    pub coverage_unmet: bool,
}

impl RunnerLog {
    /// An empty run of `runner` starting at line `start`.
    fn new(runner: Runner, start: usize) -> RunnerLog {
        RunnerLog {
            runner,
            start,
            passed: 0,
            failed: 0,
            skipped: 0,
            errors: 0,
            unit: "tests",
            failure_reported: false,
            cut: false,
            tests: Vec::new(),
            files: Vec::new(),
            interrupted: false,
            coverage_unmet: false,
        }
    }

    fn push(&mut self, place: Option<Place>, path: Vec<String>, outcome: Outcome) {
        self.tests.push(TestLine {
            place,
            path,
            outcome,
        });
    }

    /// Counts taken from the per-test lines (each name of each place once,
    /// its worst outcome). Linear: a log holds up to hundreds of thousands.
    fn count_tests(&mut self) {
        let mut seen: HashMap<(Option<&Place>, &[String]), Outcome> = HashMap::new();
        for t in &self.tests {
            seen.entry((t.place.as_ref(), t.path.as_slice()))
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

    /// Takes the runner's own summary as the counts; failed test lines
    /// that the summary does not count are still a reported failure.
    /// Errors stay as counted from the test lines.
    fn take_summary(&mut self, passed: u64, failed: u64, skipped: u64) {
        self.failure_reported |= self.failed > 0 && failed == 0;
        (self.passed, self.failed, self.skipped) = (passed, failed, skipped);
    }
}

/// Every run of every runner whose output appears in the lines, in the
/// order the runs start.
pub(super) fn detect(lines: &[String]) -> Vec<RunnerLog> {
    let nextest = rust::nextest(lines);
    // nextest replays a failing test's own libtest output: read it once.
    let cargo = if nextest.is_empty() {
        rust::cargo_test(lines)
    } else {
        Vec::new()
    };
    let mut all: Vec<RunnerLog> = [
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
    .collect();
    all.sort_by_key(|r| r.start);
    all
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

/// A name split at `sep`, brackets respected (pytest's `test_x[a::b]` is
/// one segment).
pub(super) fn split_outside_brackets(name: &str, sep: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    let mut rest = name;
    while !rest.is_empty() {
        if depth == 0 && rest.starts_with(sep) {
            out.push(std::mem::take(&mut current));
            rest = &rest[sep.len()..];
            continue;
        }
        let Some(c) = rest.chars().next() else { break };
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        current.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out.push(current);
    out
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

    #[test]
    fn names_split_outside_brackets() {
        assert_eq!(
            split_outside_brackets("TestCart::test_param[c::d-3]", "::"),
            ["TestCart", "test_param[c::d-3]"]
        );
        assert_eq!(split_outside_brackets("a > b > c", " > "), ["a", "b", "c"]);
        assert_eq!(split_outside_brackets("x", "::"), ["x"]);
    }
}
