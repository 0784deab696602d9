//! One finding's lane of the finding-verifier graph, a small state machine
//! whose every transition is one `finding.lane` event:
//!
//! queued → running(1) → done (a verdict passed the verdict gate)
//!                     → rejected (first rejection: dispatched again with
//!                       the gate's feedback) → running(k) → done (a second
//!                       rejection is recorded UNVERIFIABLE with its note)
//!                     → running(k) after a crash or a timeout → fault on
//!                       the second one (UNVERIFIABLE, `PIPELINE-FAULT: `).
//!
//! A fault can only ever produce UNVERIFIABLE.

use serde_json::{Value, json};
use tokio::sync::watch;

use super::graph::Verdict;
use super::verdict_gate::{self, Judged};
use super::{Ctx, EngineError};
use crate::engine::config::AgentConfig;
use crate::engine::dispatch::{self, FINDING_ENV, Job, STEP_ENV};
use crate::journal::{AppendOptions, JournalError, append_with};
use crate::model::event::{FindingLane, LaneState};
use crate::model::{EventBody, FindingVerdict};
use crate::recorder::Recorder;

/// Agent failures (crash, timeout, no answer) a lane takes before its fault.
pub const MAX_FAILURES: u32 = 2;
/// Verdict-gate rejections a lane takes before its verdict is UNVERIFIABLE.
pub const MAX_REJECTIONS: u32 = 2;

/// What one lane verifies.
#[derive(Debug, Clone)]
pub struct LaneJob {
    /// Iteration.
    pub iteration: u32,
    /// Position in the findings list.
    pub index: u32,
    /// The finding's id (stamped on the verdict).
    pub finding: String,
    /// The finding as parsed.
    pub item: Value,
    /// The project folder.
    pub project_dir: String,
}

/// How a lane ended.
#[derive(Debug, Clone)]
pub enum LaneOutcome {
    /// Its verdict (recorded).
    Final(Verdict),
    /// A stop was asked for while it ran (its dispatch was stopped).
    Stopped(i32),
}

/// The lane's input: the finding and the project folder as one JSON
/// object, then the verdict gate's feedback when an answer was refused.
pub fn input(job: &LaneJob, feedback: Option<&str>) -> String {
    let mut s = json!({ "finding": job.item, "project_dir": job.project_dir }).to_string();
    s.push('\n');
    if let Some(f) = feedback {
        s.push('\n');
        s.push_str(f);
        s.push('\n');
    }
    s
}

/// Runs one lane to its verdict (or the stop).
pub async fn run(
    ctx: &Ctx<'_>,
    agent: &AgentConfig,
    job: LaneJob,
    stop: &mut watch::Receiver<Option<i32>>,
) -> Result<LaneOutcome, EngineError> {
    let (mut failures, mut rejections, mut attempt) = (0, 0, 0);
    let mut feedback: Option<String> = None;
    let mut reason: Option<String> = None;
    loop {
        attempt += 1;
        let n = ctx.dispatches.take();
        let mut ev = transition(&job, LaneState::Running, attempt);
        ev.reason = reason.take();
        ev.dispatch = Some(n);
        record(ctx.recorder, ev)?;
        let d = dispatch::dispatch_env(
            ctx.settings,
            Job {
                agent,
                iteration: job.iteration,
                gate: None,
                inputs: input(&job, feedback.as_deref()),
                dispatch: n,
            },
            &[
                (STEP_ENV, "verify".to_string()),
                (FINDING_ENV, job.finding.clone()),
            ],
            stop,
        )
        .await?;
        if d.finished.interrupted {
            return Ok(LaneOutcome::Stopped(stop.borrow().unwrap_or(130)));
        }
        if let Some(why) = d.finished.failure() {
            failures += 1;
            if failures >= MAX_FAILURES {
                let v = Verdict {
                    verdict: FindingVerdict::Unverifiable,
                    evidence: String::new(),
                    note: verdict_gate::lane_fault_note(&why),
                };
                return finish(ctx.recorder, &job, LaneState::Fault, attempt, v, Vec::new());
            }
            reason = Some(format!("attempt {attempt} failed: {why}"));
            continue;
        }
        match verdict_gate::judge(&d.answer.text, &job.finding) {
            Ok(Judged {
                verdict,
                evidence,
                note,
                normalized,
            }) => {
                let v = Verdict {
                    verdict,
                    evidence,
                    note,
                };
                return finish(ctx.recorder, &job, LaneState::Done, attempt, v, normalized);
            }
            Err(why) => {
                rejections += 1;
                if rejections >= MAX_REJECTIONS {
                    let v = Verdict {
                        verdict: FindingVerdict::Unverifiable,
                        evidence: String::new(),
                        note: verdict_gate::retry_failed_note(&why),
                    };
                    return finish(ctx.recorder, &job, LaneState::Done, attempt, v, Vec::new());
                }
                let mut ev = transition(&job, LaneState::Rejected, attempt);
                ev.reason = Some(why.clone());
                record(ctx.recorder, ev)?;
                feedback = Some(verdict_gate::feedback(&why));
            }
        }
    }
}

fn transition(job: &LaneJob, state: LaneState, attempt: u32) -> FindingLane {
    FindingLane::new(job.iteration, &job.finding, job.index, state, attempt)
}

fn finish(
    rec: &Recorder,
    job: &LaneJob,
    state: LaneState,
    attempt: u32,
    v: Verdict,
    normalized: Vec<String>,
) -> Result<LaneOutcome, EngineError> {
    let mut ev = transition(job, state, attempt);
    ev.verdict = Some(v.verdict);
    ev.evidence = Some(v.evidence.clone());
    ev.note = Some(v.note.clone());
    ev.normalized = normalized;
    record(rec, ev)?;
    Ok(LaneOutcome::Final(v))
}

fn record(rec: &Recorder, ev: FindingLane) -> Result<(), JournalError> {
    append_with::<_, JournalError>(rec.pipeline(), &AppendOptions::default(), |_| {
        Ok(vec![EventBody::from(ev)])
    })?;
    Ok(())
}
