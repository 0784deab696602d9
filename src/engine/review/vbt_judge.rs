//! Judging a repro test from the log of loopwatch's own run of it, with
//! the evidence gate: verify-by-test's confirmed / not-reproduced /
//! inconclusive, and the recheck's green / red / missing / weakened.

use std::path::Path;
use std::time::Instant;

use tokio::sync::watch;

use super::single_test::{self, TestCommand};
use super::vbt_answer::Repro;
use super::vbt_exec::{self, Ran, TestJob};
use crate::checks::evidence_gate::{self, Claim, ClaimStatus, Refusal, Verdict};
use crate::engine::dispatch::Settings;
use crate::model::event::GreenResult;
use crate::model::triage::AttemptResult;

/// How one test was judged.
pub(super) enum Judged {
    Done(AttemptResult, String),
    OutOfTime(String),
    Stopped(i32),
}

pub(super) async fn verify_test(
    set: &Settings,
    runner: &Result<TestCommand, single_test::SingleTestError>,
    repro: &Repro,
    log: &Path,
    deadline: Instant,
    stop: &mut watch::Receiver<Option<i32>>,
    finding: &str,
) -> Judged {
    let undecided = |why: String| Judged::Done(AttemptResult::Inconclusive, why);
    let cmd = match runner {
        Ok(c) => c,
        Err(e) => return undecided(e.to_string()),
    };
    let inv = match single_test::invocation(cmd, &repro.file, &repro.test_ref) {
        Ok(i) => i,
        Err(e) => return undecided(format!("not run: {e}")),
    };
    let file = set.pipeline.worktree().join(&repro.file);
    if !file.is_file() {
        return undecided(format!(
            "not run: the repro test file {} does not exist",
            repro.file
        ));
    }
    let tj = TestJob {
        invocation: &inv,
        log: log.to_path_buf(),
        deadline,
        tag: format!("verify-by-test-{finding}"),
    };
    match vbt_exec::run_test(set, tj, stop).await {
        Err(e) => undecided(format!("not run: {e}")),
        Ok(Ran::Stopped(code)) => Judged::Stopped(code),
        Ok(Ran::NotStarted(why)) => undecided(format!("not run: {why}")),
        Ok(Ran::TimedOut { waiting: true }) => Judged::OutOfTime(
            "not run: the build lock was not free before the step ran out of time".into(),
        ),
        Ok(Ran::TimedOut { waiting: false }) => Judged::OutOfTime(format!(
            "timed out: `{}` was stopped when the step ran out of time",
            inv.display()
        )),
        Ok(Ran::Exited(_)) => {
            let text = match evidence_gate::read_log(log) {
                Ok(t) => t,
                Err(e) => return undecided(format!("the test log cannot be read: {e}")),
            };
            let claim = |status| Claim {
                status,
                test: Some(repro.test_ref.clone()),
            };
            match evidence_gate::judge(&text, &claim(ClaimStatus::Failed)) {
                Verdict::Proven(_) => Judged::Done(AttemptResult::Confirmed, String::new()),
                Verdict::NotProven(why_not_failed) => {
                    match evidence_gate::judge(&text, &claim(ClaimStatus::Passed)) {
                        Verdict::Proven(_) => {
                            Judged::Done(AttemptResult::NotReproduced, String::new())
                        }
                        Verdict::NotProven(_) => undecided(format!(
                            "the repro test did not run to a result: {why_not_failed}"
                        )),
                    }
                }
            }
        }
    }
}

/// What a rerun's log shows.
pub(super) fn green_of_log(log: &Path, test_ref: &str) -> (GreenResult, String) {
    let text = match evidence_gate::read_log(log) {
        Ok(t) => t,
        Err(e) => return (GreenResult::Red, format!("the log cannot be read: {e}")),
    };
    let claim = |status| Claim {
        status,
        test: Some(test_ref.to_string()),
    };
    let refusal = match evidence_gate::judge(&text, &claim(ClaimStatus::Passed)) {
        Verdict::Proven(_) => return (GreenResult::Green, String::new()),
        Verdict::NotProven(r) => r,
    };
    if evidence_gate::judge(&text, &claim(ClaimStatus::Failed)).is_proven() {
        return (GreenResult::Red, "it still fails".into());
    }
    match &refusal {
        Refusal::NoTestRan(t) if t.skipped > 0 => (
            GreenResult::Weakened,
            format!("the runner skipped it ({t})"),
        ),
        Refusal::StatusDiffers {
            found: "skipped", ..
        } => (
            GreenResult::Weakened,
            format!("the runner skipped it: {refusal}"),
        ),
        Refusal::NoTestRan(t) if !t.failure_reported => (
            GreenResult::Missing,
            format!("the runner ran no test by that name ({t})"),
        ),
        Refusal::TestAbsent { .. } => (GreenResult::Missing, refusal.to_string()),
        _ => (GreenResult::Red, refusal.to_string()),
    }
}
