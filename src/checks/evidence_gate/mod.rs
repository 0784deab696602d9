//! evidence-gate: does a test log prove a claim about a test run?
//!
//! Verify-by-test may only downgrade a finding when the repro test's log
//! proves the test ran and passed. [`judge`] reads the output of cargo test,
//! cargo-nextest, pytest, jest, vitest, go test (text or `-json`), gradle,
//! xcodebuild and node's test runner and holds a claim only when the log
//! shows a run in which tests ran, the status claimed, and (when a test is
//! named) that very test with that status, in the file the reference names.
//! Fail-closed: a log no runner recognises, a run cut before its end or
//! interrupted, a build or collection error (no test ran), an error outside
//! the tests, or a test that cannot be found is never proof. Of several runs
//! in one log, a named test is judged by the last run in which it ran, and
//! `passed` also needs every failure of an earlier run to have passed in a
//! later one. [`read_log`] reads at most the last [`MAX_LOG_BYTES`] of a
//! file, lossily; [`report`] reads the runners' machine-readable reports.
//! Never prints.

mod read;
mod reference;
pub mod report;
mod runners;
mod text;
mod verdict;

use std::fmt;

pub use read::{LogError, MAX_LOG_BYTES, read_log};
pub use reference::module_path;
pub use runners::{Outcome, Place, Runner, TestLine};
pub use verdict::judge;

/// The status a claim says the test run had.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
pub enum ClaimStatus {
    /// Every test passed.
    Passed,
    /// The test (or some test) failed.
    Failed,
}

impl ClaimStatus {
    /// `passed` or `failed`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// What a log is asked to prove.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// The status claimed.
    pub status: ClaimStatus,
    /// The test that must appear with that status (`a/b.rs::name`).
    pub test: Option<String>,
}

/// The gate's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The log proves the claim.
    Proven(Proof),
    /// The log does not prove the claim, and why.
    NotProven(Refusal),
}

impl Verdict {
    /// True when the claim is proven.
    pub fn is_proven(&self) -> bool {
        matches!(self, Verdict::Proven(_))
    }
}

/// What was proven.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proof {
    /// The status proven.
    pub status: ClaimStatus,
    /// Runners and counts seen.
    pub tally: Tally,
    /// The named test, as it appears in the log.
    pub test: Option<String>,
}

/// The counts of the run a verdict speaks of.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// The run's runner.
    pub runners: Vec<Runner>,
    /// Tests (or, for go test without -v, packages) that passed.
    pub passed: u64,
    /// Tests that failed (errors included).
    pub failed: u64,
    /// Tests skipped or ignored (pytest's xfails included).
    pub skipped: u64,
    /// Errors that are not test results (pytest's setup, teardown and
    /// collection errors).
    pub errors: u64,
    /// How many runs the log holds (of every runner).
    pub runs: usize,
    /// Which of them this is (1 for the first).
    pub run: usize,
    /// A coverage threshold was not met while the tests passed.
    pub coverage_unmet: bool,
    /// The session was interrupted before its end.
    pub interrupted: bool,
    /// What the counts count: `tests`, or `packages` for a quiet go test.
    pub unit: &'static str,
    /// A failure was reported beyond the counts (a build that failed, a
    /// suite that did not run, errors outside the tests).
    pub failure_reported: bool,
    /// The run stopped before its closing lines.
    pub cut: bool,
}

/// Why a log does not prove a claim.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// No known test runner output.
    #[error("no known test runner output in the log")]
    UnknownRunner,
    /// A runner was recognised but no test ran (a build or collection
    /// error, a file that crashed, nothing selected).
    #[error("no test ran ({0})")]
    NoTestRan(Tally),
    /// The run was interrupted before its end: nothing it printed counts.
    #[error("the run was interrupted before its end ({0})")]
    Interrupted(Tally),
    /// The run stopped before its closing lines (its summary, a package's
    /// result, a test binary's result): nothing it printed counts.
    #[error("the run was cut before its end ({0})")]
    Cut(Tally),
    /// `passed` was claimed but a failure of the log was not made good by a
    /// later run.
    #[error("{failure} and no later run passed it ({tally})")]
    EarlierFailure {
        /// The failure (`test x failed in run 1 of the log`, `run 1 of the log failed`).
        failure: String,
        /// The run judged.
        tally: Tally,
    },
    /// `passed` was claimed but the run failed.
    #[error("{}", run_failed(.0))]
    RunFailed(Tally),
    /// `failed` was claimed but nothing failed.
    #[error("no test failed ({0})")]
    NothingFailed(Tally),
    /// The named test is not in the log.
    #[error("test {test} is not in the log ({tally})")]
    TestAbsent {
        /// The test reference asked for.
        test: String,
        /// What the log showed.
        tally: Tally,
    },
    /// The named test is there with another status.
    #[error("test {test} {found}{}, not {}", why_status(found), claimed.as_str())]
    StatusDiffers {
        /// The test as it appears in the log.
        test: String,
        /// Its status in the log.
        found: &'static str,
        /// The status claimed.
        claimed: ClaimStatus,
    },
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Proven(p) => {
                write!(f, "proven: the run {} ({})", p.status.as_str(), p.tally)?;
                match &p.test {
                    Some(t) => write!(f, "; test {t} {}", p.status.as_str()),
                    None => Ok(()),
                }
            }
            Verdict::NotProven(r) => write!(f, "not proven: {r}"),
        }
    }
}

/// [`Refusal::RunFailed`] in words: errors outside the tests, a failure
/// outside them, or failed tests.
fn run_failed(t: &Tally) -> String {
    if t.failed > 0 {
        format!("the run has failures ({t})")
    } else if t.errors > 0 {
        format!("the run has errors that are not test results ({t})")
    } else {
        format!(
            "the run reported a failure outside its tests: a build that failed, a suite that did not run or an error after the tests ({t})"
        )
    }
}

/// Why a status found is not the one claimed, when it is not a plain one.
fn why_status(found: &str) -> &'static str {
    match found {
        "errored" => " (a setup, teardown or collection error: not a test result)",
        "xfailed" => " (an expected failure is not a failure)",
        _ => "",
    }
}

impl fmt::Display for Tally {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.runners.iter().map(|r| r.as_str()).collect();
        let names = names.join(" + ");
        if self.unit == "tests" {
            write!(
                f,
                "{names}: {} passed, {} failed, {} skipped",
                self.passed, self.failed, self.skipped
            )?;
        } else {
            write!(
                f,
                "{names}: {} {} passed, {} failed",
                self.passed, self.unit, self.failed
            )?;
        }
        match self.errors {
            0 => {}
            1 => write!(f, ", 1 error")?,
            n => write!(f, ", {n} errors")?,
        }
        if self.coverage_unmet {
            write!(f, "; coverage below its threshold, not a test result")?;
        }
        if self.runs > 1 && self.run == self.runs {
            write!(f, "; the last of {} runs in the log", self.runs)?;
        } else if self.runs > 1 {
            write!(f, "; run {} of {} in the log", self.run, self.runs)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(status: ClaimStatus, test: Option<&str>) -> Claim {
        Claim {
            status,
            test: test.map(str::to_string),
        }
    }

    #[test]
    fn a_run_cut_before_its_summary_proves_nothing() {
        let log = "running 2 tests\ntest a ... ok\ntest b ... FAILED\n";
        let cut = "not proven: the run was cut before its end (cargo test: 1 passed, 1 failed, 0 skipped)";
        for status in [ClaimStatus::Passed, ClaimStatus::Failed] {
            assert_eq!(judge(log, &claim(status, None)).to_string(), cut);
            assert_eq!(judge(log, &claim(status, Some("b"))).to_string(), cut);
        }
    }

    #[test]
    fn every_earlier_failure_needs_a_later_pass() {
        let session = |lines: &str, summary: &str| {
            format!("=== test session starts ===\n{lines}=== {summary} in 0.1s ===\n")
        };
        let a_fails = session(
            "t.py::a FAILED [50%]\nt.py::b PASSED [100%]\n",
            "1 failed, 1 passed",
        );
        let b_fails = session(
            "t.py::a PASSED [50%]\nt.py::b FAILED [100%]\n",
            "1 failed, 1 passed",
        );
        let b_passes = session("t.py::b PASSED [100%]\n", "1 passed");
        let passed = claim(ClaimStatus::Passed, None);
        let log = format!("{a_fails}{b_fails}{b_passes}");
        assert!(judge(&log, &passed).is_proven(), "{}", judge(&log, &passed));
        let log = format!("{b_fails}{a_fails}{b_passes}");
        assert_eq!(
            judge(&log, &passed).to_string(),
            "not proven: test t.py::a failed in run 2 of the log and no later run passed it (pytest: 1 passed, 0 failed, 0 skipped; the last of 3 runs in the log)"
        );
        // A run that failed without naming a test (a collection error)
        // needs a later whole passing run.
        let broken = session("ERROR t.py\n", "1 error");
        let log = format!("{broken}{b_passes}");
        assert!(judge(&log, &passed).is_proven());
        let log = format!("{broken}{}", session("t.py::b FAILED [100%]\n", "1 failed"));
        assert!(!judge(&log, &passed).is_proven());
    }

    #[test]
    fn a_test_is_judged_by_the_last_run_in_which_it_ran() {
        let run = |results: &str, summary: &str| {
            format!(
                "   Compiling x v0.1.0\n    Finished `test` profile\n     Running tests/a.rs (target/debug/deps/a-1)\n\nrunning 2 tests\n{results}\ntest result: {summary}; 0 measured; 0 filtered out; finished in 0.00s\n\n"
            )
        };
        let failed = run(
            "test a ... FAILED\ntest b ... ok\n",
            "FAILED. 1 passed; 1 failed; 0 ignored",
        );
        let other = run("test b ... ok\n", "ok. 1 passed; 0 failed; 0 ignored");
        let log = format!("{failed}{other}");
        assert_eq!(
            judge(&log, &claim(ClaimStatus::Failed, Some("tests/a.rs::a"))).to_string(),
            "proven: the run failed (cargo test: 1 passed, 1 failed, 0 skipped; run 1 of 2 in the log); test a failed"
        );
        assert_eq!(
            judge(&log, &claim(ClaimStatus::Passed, None)).to_string(),
            "not proven: test a failed in run 1 of the log and no later run passed it (cargo test: 1 passed, 0 failed, 0 skipped; the last of 2 runs in the log)"
        );
        assert!(
            judge(&log, &claim(ClaimStatus::Passed, Some("tests/a.rs::b")))
                .to_string()
                .starts_with("not proven: test a failed in run 1")
        );
    }
}
