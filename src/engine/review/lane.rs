//! One finding's lane of the finding-verifier graph, a small state machine
//! whose every transition is one `finding.lane` event:
//!
//! queued → running(1) → done (a verdict passed the verdict gate)
//!                     → rejected (first rejection: dispatched again with
//!                       the gate's feedback) → running(k) → done (a second
//!                       rejection is recorded UNVERIFIABLE with its note)
//!                     → running(k) after a crash or a timeout → fault on
//!                       the second one (UNVERIFIABLE, `PIPELINE-FAULT: `)
//!                     → limited (its agent answered a usage limit, or
//!                       another lane's did before this one's next attempt)
//!                       → running(k+1) when the stage resumes.
//!
//! A fault can only ever produce UNVERIFIABLE. A usage limit is no failure:
//! it counts toward neither the lane's failures nor its rejections.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::{Semaphore, watch};

use super::graph::Verdict;
use super::verdict_gate::{self, Judged};
use super::{Ctx, EngineError};
use crate::engine::adapter::Answer;
use crate::engine::config::AgentConfig;
use crate::engine::dispatch::{self, Committer, FINDING_ENV, Job, STEP_ENV, Starts, With};
use crate::model::event::{AgentFinished, FindingLane, LaneState};
use crate::model::{EventBody, FindingVerdict};

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
    /// No verdict yet, recorded `limited`: its agent answered a usage
    /// limit, or the lanes were held before its next attempt because
    /// another lane's did.
    Limited,
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

/// What one attempt's answer makes of the lane.
#[derive(Debug, Clone)]
enum Step {
    /// The lane has its verdict (`done` or `fault`).
    Final(Verdict),
    /// Dispatched again: after a failure (`reason`), or after a rejection
    /// (`feedback` for the agent too).
    Again {
        reason: String,
        feedback: Option<String>,
    },
    /// The agent answered a usage limit: no verdict, no failure.
    Limited,
}

/// The lane's counts before an attempt.
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    attempt: u32,
    failures: u32,
    rejections: u32,
}

/// Judges one attempt: the transition it records and what comes next. Pure,
/// so the event written with the dispatch's finish and the lane's next move
/// are the same decision.
fn judge(
    job: &LaneJob,
    c: Counts,
    finished: &AgentFinished,
    answer: &Answer,
) -> (FindingLane, Step) {
    if let Some(l) = &answer.limited {
        let mut ev = transition(job, LaneState::Limited, c.attempt);
        ev.reason = Some(limit_reason(c.attempt, l));
        ev.dispatch = Some(finished.dispatch);
        return (ev, Step::Limited);
    }
    if let Some(why) = finished.failure() {
        if c.failures + 1 >= MAX_FAILURES {
            let v = Verdict {
                verdict: FindingVerdict::Unverifiable,
                evidence: String::new(),
                note: verdict_gate::lane_fault_note(&why),
            };
            return (
                final_event(job, LaneState::Fault, c.attempt, &v, Vec::new()),
                Step::Final(v),
            );
        }
        // Nothing to record yet: the next `running` says why.
        let ev = transition(job, LaneState::Running, c.attempt);
        return (
            ev,
            Step::Again {
                reason: format!("attempt {} failed: {why}", c.attempt),
                feedback: None,
            },
        );
    }
    match verdict_gate::judge(&answer.text, &job.finding) {
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
            (
                final_event(job, LaneState::Done, c.attempt, &v, normalized),
                Step::Final(v),
            )
        }
        Err(why) if c.rejections + 1 >= MAX_REJECTIONS => {
            let v = Verdict {
                verdict: FindingVerdict::Unverifiable,
                evidence: String::new(),
                note: verdict_gate::retry_failed_note(&why),
            };
            (
                final_event(job, LaneState::Done, c.attempt, &v, Vec::new()),
                Step::Final(v),
            )
        }
        Err(why) => {
            let mut ev = transition(job, LaneState::Rejected, c.attempt);
            ev.reason = Some(why.clone());
            (
                ev,
                Step::Again {
                    reason: format!("attempt {} rejected: {why}", c.attempt),
                    feedback: Some(verdict_gate::feedback(&why)),
                },
            )
        }
    }
}

/// The reason of a `limited` transition for the answer of attempt `attempt`.
fn limit_reason(attempt: u32, l: &crate::engine::adapter::limits::Limit) -> String {
    let until = l.until.map_or_else(
        || "no reset time given".to_string(),
        |t| format!("resets {t}"),
    );
    format!(
        "attempt {attempt} hit a usage limit ({until}): {}",
        l.message
    )
}

/// Runs one lane to its verdict (or the stop, or a usage limit). Each
/// transition is written in the append of the dispatch it belongs to:
/// `running` with `agent.started`, `rejected`/`done`/`fault`/`limited` with
/// `agent.finished`; the appends go through the map's `commit` (grouped
/// with other lanes'). Each attempt's agent runs holding one of `slots`,
/// its start recorded in the lanes' `starts` order; once the slots are
/// closed no attempt starts (a stop, or another lane's usage limit: the
/// lane is then recorded `limited` unless its last transition already says
/// where it stands). `attempts_before`: the attempts an
/// earlier engine made (a lane resumed after a usage limit numbers its
/// attempts on from there).
pub async fn run(
    ctx: &Ctx<'_>,
    agent: &AgentConfig,
    (job, attempts_before): (LaneJob, u32),
    commit: Committer<'_>,
    (slots, starts): (&Arc<Semaphore>, &Starts),
    stop: &mut watch::Receiver<Option<i32>>,
) -> Result<LaneOutcome, EngineError> {
    let mut c = Counts {
        attempt: attempts_before,
        ..Counts::default()
    };
    let mut feedback: Option<String> = None;
    let mut reason: Option<String> =
        (attempts_before > 0).then(|| "dispatched again after a usage limit".to_string());
    loop {
        // A slot per agent running; closed once a lane was stopped or hit
        // a usage limit. No agent starts once a stop was asked for.
        let mut slot = Arc::clone(slots).acquire_owned().await.ok();
        // A usage limit read while this lane waited for its turn to start
        // closed the slots: looked at again in the start order.
        let starting = starts.starting().await;
        if slots.is_closed() {
            slot = None;
        }
        if stop.borrow().is_some() {
            return Ok(LaneOutcome::Stopped(stop.borrow().unwrap_or(130)));
        }
        let Some(slot) = slot else {
            if c.attempt > attempts_before {
                // Held between two attempts: its last transition (running
                // after a failure, rejected) would read as under way.
                let mut held = transition(&job, LaneState::Limited, c.attempt);
                held.reason = Some(format!(
                    "held before attempt {}: another lane hit a usage limit",
                    c.attempt + 1
                ));
                let r = dispatch::Record {
                    bodies: vec![EventBody::from(held)],
                    ..dispatch::Record::default()
                };
                commit(r).await?;
            }
            return Ok(LaneOutcome::Limited);
        };
        let slot = Some(slot);
        c.attempt += 1;
        let n = ctx.dispatches.take();
        let mut running = transition(&job, LaneState::Running, c.attempt);
        running.reason = reason.take();
        running.dispatch = Some(n);
        let counts = c;
        let lane = &job;
        let after = move |a: &Answer, f: &AgentFinished| {
            let (ev, _) = judge(lane, counts, f, a);
            // A failure before the last one records nothing until the next start.
            if ev.state == LaneState::Running {
                Vec::new()
            } else {
                vec![EventBody::from(ev)]
            }
        };
        let env = [
            (STEP_ENV, "verify".to_string()),
            (FINDING_ENV, job.finding.clone()),
        ];
        let with = With {
            env: &env,
            with_start: vec![EventBody::from(running)],
            after_finish: Some(&after),
            commit: Some(commit),
            slot,
            starting: Some(starting),
        };
        let job_of = Job {
            agent,
            iteration: job.iteration,
            gate: None,
            inputs: input(&job, feedback.as_deref()),
            dispatch: n,
        };
        let d = dispatch::dispatch_with(ctx.settings, job_of, with, stop).await?;
        if d.finished.interrupted {
            return Ok(LaneOutcome::Stopped(stop.borrow().unwrap_or(130)));
        }
        match judge(&job, c, &d.finished, &d.answer).1 {
            Step::Final(v) => return Ok(LaneOutcome::Final(v)),
            Step::Limited => return Ok(LaneOutcome::Limited),
            Step::Again {
                reason: why,
                feedback: fb,
            } => {
                if d.finished.failure().is_some() {
                    c.failures += 1;
                } else {
                    c.rejections += 1;
                    feedback = fb;
                }
                reason = Some(why);
            }
        }
    }
}

fn final_event(
    job: &LaneJob,
    state: LaneState,
    attempt: u32,
    v: &Verdict,
    normalized: Vec<String>,
) -> FindingLane {
    let mut ev = transition(job, state, attempt);
    ev.verdict = Some(v.verdict);
    ev.evidence = Some(v.evidence.clone());
    ev.note = Some(v.note.clone());
    ev.normalized = normalized;
    ev
}

fn transition(job: &LaneJob, state: LaneState, attempt: u32) -> FindingLane {
    FindingLane::new(job.iteration, &job.finding, job.index, state, attempt)
}
