//! Judging a repro test from loopwatch's own run of it: verify-by-test's
//! confirmed / not-reproduced / inconclusive, and the recheck's green /
//! red / missing / weakened.
//!
//! The run's machine-readable report says which tests ran, in which file,
//! under which full name, with which result ([`crate::checks::evidence_gate::report`]):
//! the named test must have run exactly once, and no other test named
//! alike (the same name in another file, in another group, in another
//! case) may have run, since the run could not tell them apart. Its result
//! is then checked against its log with the evidence gate, the same check
//! `triage apply` makes before a finding moves to deferred: a report and a
//! log that disagree are no verdict.

use std::path::{Path, PathBuf};
use std::time::Instant;

use tokio::sync::watch;

use super::answer::Repro;
use super::exec::{self, Ran, TestJob};
use super::runner::{self, Dir, OneTest, TestCommand};
use crate::checks::evidence_gate::report;
use crate::checks::evidence_gate::{self, Claim, ClaimStatus, Place, Verdict};
use crate::engine::dispatch::Settings;
use crate::model::event::GreenResult;
use crate::model::triage::AttemptResult;

mod decide;

use decide::decide;

/// Bytes of a report read at most.
const MAX_REPORT: u64 = 32 << 20;

/// How one test was judged.
pub(super) enum Judged {
    Done(AttemptResult, String),
    OutOfTime(String),
    Stopped(i32),
}

/// What one run of the named test showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum RunVerdict {
    /// It ran once and failed.
    Failed,
    /// It ran once and passed, and the run passed.
    Passed,
    /// The runner skipped it (and why, as the report says).
    Skipped(String),
    /// The runner did not run it (and what it ran).
    NotRun(String),
    /// No verdict: why.
    Undecided(String),
}

/// How a run ended, judged when the runner exited.
pub(super) enum RunEnd {
    Judged(RunVerdict),
    TimedOut { waiting: bool },
    Stopped(i32),
    NotStarted(String),
}

/// The command of the repro test `repro`, its report beside `log`.
pub(super) fn command(
    set: &Settings,
    runner: &Result<TestCommand, runner::SingleTestError>,
    repro_file: &str,
    test_ref: &str,
    log: &Path,
) -> Result<OneTest, String> {
    let cmd = runner.as_ref().map_err(ToString::to_string)?;
    let worktree = set.pipeline.worktree();
    let report = report_base(log);
    runner::invocation(cmd, &Dir(worktree), repro_file, test_ref, &report)
        .map_err(|e| format!("not run: {e}"))
}

/// `verify-1-F1.test.log` → `<absolute>/verify-1-F1.report` (the runner
/// adds its extension).
fn report_base(log: &Path) -> PathBuf {
    let name = log
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".test.log").unwrap_or(&name);
    let base = log.with_file_name(format!("{stem}.report"));
    std::path::absolute(&base).unwrap_or(base)
}

pub(super) async fn verify_test(
    set: &Settings,
    runner: &Result<TestCommand, runner::SingleTestError>,
    repro: &Repro,
    log: &Path,
    deadline: Instant,
    stop: &mut watch::Receiver<Option<i32>>,
    finding: &str,
) -> Judged {
    let undecided = |why: String| Judged::Done(AttemptResult::Inconclusive, why);
    let inv = match command(set, runner, &repro.file, &repro.test_ref, log) {
        Ok(i) => i,
        Err(e) => return undecided(e),
    };
    let file = set.pipeline.worktree().join(&repro.file);
    if !file.is_file() {
        return undecided(format!(
            "not run: the repro test file {} does not exist",
            repro.file
        ));
    }
    let run = TestRun {
        set,
        log,
        deadline,
        tag: format!("verify-by-test-{finding}"),
        test_ref: &repro.test_ref,
    };
    match run_one(&run, &inv, stop).await {
        Err(e) => undecided(format!("not run: {e}")),
        Ok(RunEnd::Stopped(code)) => Judged::Stopped(code),
        Ok(RunEnd::NotStarted(why)) => undecided(format!("not run: {why}")),
        Ok(RunEnd::TimedOut { waiting: true }) => Judged::OutOfTime(
            "not run: the build lock was not free before the step ran out of time".into(),
        ),
        Ok(RunEnd::TimedOut { waiting: false }) => Judged::OutOfTime(format!(
            "timed out: `{}` was stopped when the step ran out of time",
            inv.invocation.display()
        )),
        Ok(RunEnd::Judged(v)) => match v {
            RunVerdict::Failed => Judged::Done(AttemptResult::Confirmed, String::new()),
            RunVerdict::Passed => Judged::Done(AttemptResult::NotReproduced, String::new()),
            RunVerdict::Skipped(why) => undecided(format!("the repro test did not run: {why}")),
            RunVerdict::NotRun(why) | RunVerdict::Undecided(why) => {
                undecided(format!("the repro test did not run to a result: {why}"))
            }
        },
    }
}

/// One run of a repro test: where its log goes, until when, its process
/// marker's tag, the test reference it is judged by.
pub(super) struct TestRun<'a> {
    pub set: &'a Settings,
    pub log: &'a Path,
    pub deadline: Instant,
    pub tag: String,
    pub test_ref: &'a str,
}

/// Runs `inv` into the log and judges it. node: a test that did not run
/// though it has groups is run again with its groups' names too (a
/// `t.test()` subtest runs only when its parent test is selected).
pub(super) async fn run_one(
    run: &TestRun<'_>,
    inv: &OneTest,
    stop: &mut watch::Receiver<Option<i32>>,
) -> std::io::Result<RunEnd> {
    let end = run_once(run, inv, stop).await?;
    if let RunEnd::Judged(RunVerdict::NotRun(_)) = &end
        && let Some(wide) = runner::widen(inv)
    {
        return run_once(run, &wide, stop).await;
    }
    Ok(end)
}

async fn run_once(
    run: &TestRun<'_>,
    inv: &OneTest,
    stop: &mut watch::Receiver<Option<i32>>,
) -> std::io::Result<RunEnd> {
    let (set, log) = (run.set, run.log);
    // A report left by an earlier run (or planted) must not be read as this one's.
    if let Some(r) = &inv.report {
        match std::fs::remove_file(&r.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    let job = TestJob {
        invocation: &inv.invocation,
        log: log.to_path_buf(),
        deadline: run.deadline,
        tag: run.tag.clone(),
    };
    Ok(match exec::run_test(set, job, stop).await? {
        Ran::Stopped(code) => RunEnd::Stopped(code),
        Ran::NotStarted(why) => RunEnd::NotStarted(why),
        Ran::TimedOut { waiting } => RunEnd::TimedOut { waiting },
        Ran::Exited(_) => {
            let text = match evidence_gate::read_log(log) {
                Ok(t) => t,
                Err(e) => {
                    return Ok(RunEnd::Judged(RunVerdict::Undecided(format!(
                        "the test log cannot be read: {e}"
                    ))));
                }
            };
            let report = inv
                .report
                .as_ref()
                .map(|r| crate::util::read_regular(&r.path, MAX_REPORT).map_err(|e| e.to_string()));
            let root = set.pipeline.worktree();
            RunEnd::Judged(judge_run(inv, &text, report, root, run.test_ref))
        }
    })
}

/// Judges one run of `inv` from its report (read from its file, or the
/// log itself) and its log.
pub(super) fn judge_run(
    inv: &OneTest,
    log: &str,
    report_bytes: Option<Result<Vec<u8>, String>>,
    root: &Path,
    test_ref: &str,
) -> RunVerdict {
    let runner = inv.invocation.runner.gate();
    let name = runner.as_str();
    let mut ran = match (&inv.report, report_bytes) {
        (Some(r), Some(Ok(bytes))) => match report::read(r.format, &bytes, root) {
            Ok(ran) => ran,
            Err(e) => return RunVerdict::Undecided(format!("{name}'s report cannot be read: {e}")),
        },
        (Some(r), _) => {
            return RunVerdict::Undecided(format!(
                "no test ran: {name} wrote no report ({}); the log ends with: {}",
                r.path.display(),
                last_words(log)
            ));
        }
        (None, _) => match report::from_log(log, runner) {
            Some(ran) => ran,
            None => {
                return RunVerdict::Undecided(format!(
                    "no test ran: the log holds no output of {name}; it ends with: {}",
                    last_words(log)
                ));
            }
        },
    };
    if inv.invocation.runner == runner::Runner::Node {
        // node names no file: the run ran the one file it was given.
        for t in ran.tests.iter_mut().filter(|t| t.place.is_none()) {
            t.place = Some(Place::File(inv.selected.file.clone()));
        }
    }
    let verdict = decide(&ran, &inv.selected, name);
    let status = match verdict {
        RunVerdict::Passed => ClaimStatus::Passed,
        RunVerdict::Failed => ClaimStatus::Failed,
        other => return other,
    };
    let claim = Claim {
        status,
        test: Some(test_ref.to_string()),
    };
    match evidence_gate::judge(log, &claim) {
        Verdict::Proven(_) => verdict,
        Verdict::NotProven(why) => RunVerdict::Undecided(format!(
            "{name}'s report says it {}, but its log does not prove it: {why}",
            status.as_str()
        )),
    }
}

/// The log's last line of output (before loopwatch's own last line), one
/// line, cut.
fn last_words(log: &str) -> String {
    let line = log
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("[loopwatch: "))
        .unwrap_or("(nothing)");
    format!("`{}`", crate::sanitize::sanitize_line(line, 200))
}

/// The recheck's result of a run of a red test.
pub(super) fn green_of(end: RunVerdict) -> (GreenResult, String) {
    match end {
        RunVerdict::Passed => (GreenResult::Green, String::new()),
        RunVerdict::Failed => (GreenResult::Red, "it still fails".into()),
        RunVerdict::Skipped(why) => (
            GreenResult::Weakened,
            format!("the runner skipped it: {why}"),
        ),
        RunVerdict::NotRun(why) => (GreenResult::Missing, why),
        RunVerdict::Undecided(why) => (GreenResult::Red, why),
    }
}

#[cfg(test)]
#[path = "judge_tests.rs"]
mod tests;
