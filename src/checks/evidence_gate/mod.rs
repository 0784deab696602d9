//! evidence-gate: does a test log prove a claim about a test run?
//!
//! Verify-by-test may only downgrade a finding when the repro test's log
//! proves the test ran and passed. [`judge`] reads the output of cargo test,
//! cargo-nextest, pytest, jest, vitest, go test, gradle, xcodebuild and
//! node's test runner and holds a claim only when the log shows at least one
//! test run, the status claimed, and (when a test is named) that very test
//! with that status. Fail-closed: a log no runner recognises, an incomplete
//! or interrupted run, a build or collection error (no test ran) or a test
//! that cannot be found is never proof. Of several runs in one log only the
//! last is read. [`read_log`] reads at most the last [`MAX_LOG_BYTES`] of a
//! file, lossily. Never prints.

mod read;
mod runners;
mod text;

use std::fmt;

pub use read::{LogError, MAX_LOG_BYTES, read_log};
pub use runners::Runner;
use runners::{Outcome, RunnerLog};

/// The status a claim says the test run had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimStatus {
    /// Every test passed.
    Passed,
    /// The test (or some test) failed.
    Failed,
}

impl ClaimStatus {
    /// `passed` or `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimStatus::Passed => "passed",
            ClaimStatus::Failed => "failed",
        }
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

/// Runners recognised and their summed counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// Runners recognised, in a fixed order.
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
    /// The most runs of one runner in the log (only the last one is read).
    pub runs: usize,
    /// A coverage threshold was not met while the tests passed.
    pub coverage_unmet: bool,
    /// The session was interrupted before its end.
    pub interrupted: bool,
    /// What the counts count: `tests`, or `packages` for a quiet go test.
    pub unit: &'static str,
    /// A failure was reported beyond the counts (build failed, suite
    /// failed, run cut short).
    pub failure_reported: bool,
}

/// Why a log does not prove a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No known test runner output.
    UnknownRunner,
    /// A runner was recognised but no test ran (a build or collection
    /// error, a file that crashed, nothing selected).
    NoTestRan(Tally),
    /// The run was interrupted before its end: nothing it printed counts.
    Interrupted(Tally),
    /// `passed` was claimed but the run failed.
    RunFailed(Tally),
    /// `failed` was claimed but nothing failed.
    NothingFailed(Tally),
    /// The named test is not in the log.
    TestAbsent {
        /// The test reference asked for.
        test: String,
        /// What the log showed.
        tally: Tally,
    },
    /// The named test is there with another status.
    StatusDiffers {
        /// The test as it appears in the log.
        test: String,
        /// Its status in the log.
        found: &'static str,
        /// The status claimed.
        claimed: ClaimStatus,
    },
}

/// Judges whether `log` proves `claim`.
pub fn judge(log: &str, claim: &Claim) -> Verdict {
    let lines = text::clean_lines(log);
    let logs = runners::detect(&lines);
    if logs.is_empty() {
        return Verdict::NotProven(Refusal::UnknownRunner);
    }
    let tally = tally(&logs);
    if tally.passed + tally.failed == 0 {
        return Verdict::NotProven(Refusal::NoTestRan(tally));
    }
    if tally.interrupted {
        return Verdict::NotProven(Refusal::Interrupted(tally));
    }
    // Failures in the run come first for a `passed` claim; otherwise the
    // named test's own status is the clearest reason.
    if claim.status == ClaimStatus::Passed && tally.failed > 0 {
        return Verdict::NotProven(Refusal::RunFailed(tally));
    }
    let mut shown = None;
    if let Some(reference) = &claim.test {
        let seen = named(&logs, reference);
        let Some(first) = seen.first() else {
            return Verdict::NotProven(Refusal::TestAbsent {
                test: reference.clone(),
                tally,
            });
        };
        let wanted = match claim.status {
            ClaimStatus::Passed => Outcome::Passed,
            ClaimStatus::Failed => Outcome::Failed,
        };
        // Every occurrence must agree: a retried test that failed once is not a pass.
        if let Some(other) = seen.iter().find(|(_, o)| *o != wanted) {
            return Verdict::NotProven(Refusal::StatusDiffers {
                test: other.0.clone(),
                found: other.1.as_str(),
                claimed: claim.status,
            });
        }
        shown = Some(first.0.clone());
    }
    match claim.status {
        ClaimStatus::Passed if tally.failed > 0 || tally.failure_reported => {
            Verdict::NotProven(Refusal::RunFailed(tally))
        }
        ClaimStatus::Failed if tally.failed == 0 => {
            Verdict::NotProven(Refusal::NothingFailed(tally))
        }
        _ => Verdict::Proven(Proof {
            status: claim.status,
            tally,
            test: shown,
        }),
    }
}

fn tally(logs: &[RunnerLog]) -> Tally {
    let mut t = Tally {
        unit: "tests",
        ..Tally::default()
    };
    for l in logs {
        t.runners.push(l.runner);
        t.passed += l.passed;
        t.failed += l.failed;
        t.skipped += l.skipped;
        t.errors += l.errors;
        t.runs = t.runs.max(l.runs);
        t.coverage_unmet |= l.coverage_unmet;
        t.interrupted |= l.interrupted;
        t.failure_reported |= l.failure_reported;
        if l.unit != "tests" {
            t.unit = l.unit;
        }
    }
    t
}

/// The occurrences of the named test: exact names when there are any,
/// otherwise the names the reference stands for ([`text::Reference`]).
fn named(logs: &[RunnerLog], reference: &str) -> Vec<(String, Outcome)> {
    let all = logs.iter().flat_map(|l| l.tests.iter());
    let shown = |t: &runners::TestLine| match &t.file {
        Some(file) => format!("{file}::{}", t.name),
        None => t.name.clone(),
    };
    let exact: Vec<_> = all
        .clone()
        .filter(|t| t.name == reference || shown(t) == reference)
        .map(|t| (shown(t), t.outcome))
        .collect();
    if !exact.is_empty() {
        return exact;
    }
    let wanted = text::Reference::parse(reference);
    all.filter(|t| wanted.matches(t.file.as_deref(), &t.name))
        .map(|t| (shown(t), t.outcome))
        .collect()
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

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::UnknownRunner => write!(f, "no known test runner output in the log"),
            Refusal::NoTestRan(t) => write!(f, "no test ran ({t})"),
            Refusal::Interrupted(t) => {
                write!(f, "the run was interrupted before its end ({t})")
            }
            Refusal::RunFailed(t) if t.failed == 0 && t.errors > 0 => {
                write!(f, "the run has errors that are not test results ({t})")
            }
            Refusal::RunFailed(t) if t.failed == 0 => {
                write!(f, "the run reported a failure or did not complete ({t})")
            }
            Refusal::RunFailed(t) => write!(f, "the run has failures ({t})"),
            Refusal::NothingFailed(t) => write!(f, "no test failed ({t})"),
            Refusal::TestAbsent { test, tally } => {
                write!(f, "test {test} is not in the log ({tally})")
            }
            Refusal::StatusDiffers {
                test,
                found,
                claimed,
            } => {
                let why = match *found {
                    "errored" => " (a setup, teardown or collection error: not a test result)",
                    "xfailed" => " (an expected failure is not a failure)",
                    _ => "",
                };
                write!(f, "test {test} {found}{why}, not {}", claimed.as_str())
            }
        }
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
        if self.runs > 1 {
            write!(f, "; the last of {} runs in the log", self.runs)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_cut_before_its_summary_is_not_a_pass() {
        let claim = Claim {
            status: ClaimStatus::Passed,
            test: None,
        };
        let verdict = judge("running 2 tests\ntest a ... ok\n", &claim);
        assert_eq!(
            verdict.to_string(),
            "not proven: the run reported a failure or did not complete (cargo test: 1 passed, 0 failed, 0 skipped)"
        );
    }
}
