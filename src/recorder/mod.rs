//! The recorder: what the orchestrator's calls write into the journal, with
//! the loop's rules applied under the writer lock so that ids, counters and
//! "already decided" checks never race.
//!
//! Every function here appends through [`crate::journal::append_with`] and
//! returns what was written; printing belongs to the CLI.

mod round;

use std::path::PathBuf;

use serde_json::Value;

use crate::journal::{AppendOptions, Appended, JournalError, Pipeline, append_with};
use crate::model::event::*;
use crate::model::rules::{self, GateRequest, NextAction};
use crate::model::state::RunStatus;
use crate::model::*;

pub use round::{RoundInput, floor_round_input};

/// Writes the loop's events into one pipeline.
#[derive(Debug, Clone)]
pub struct Recorder {
    pipeline: Pipeline,
    opts: AppendOptions,
}

impl Recorder {
    /// A recorder on a pipeline.
    pub fn new(pipeline: Pipeline) -> Self {
        Recorder { pipeline, opts: AppendOptions::default() }
    }

    /// The pipeline written to.
    pub fn pipeline(&self) -> &Pipeline {
        &self.pipeline
    }

    /// Starts a run: `run.started` then `iteration.started` 1 (initial).
    /// Refused while another run is in progress, unless `force`.
    pub fn run_start(&self, run: RunInfo, force: bool) -> Result<Appended, JournalError> {
        append_with(&self.pipeline, &self.opts, |s| {
            if !force && s.run.is_some() && s.ended.is_none() {
                return Err(JournalError::Refused(format!(
                    "run {} is still in progress (record its end first, or pass --force to start over)",
                    s.run.as_ref().map_or("", |r| r.id.as_str())
                )));
            }
            Ok(vec![
                EventBody::RunStarted { run },
                EventBody::IterationStarted { iteration: 1, trigger: "initial".into() },
            ])
        })
    }

    /// Records one gate round from its parsed output; saves the verbatim
    /// output under `gates/`, opens the human gates the rules call for.
    pub fn round(&self, gate: GateName, input: RoundInput, raw_output: &[u8], force: bool) -> Result<Appended, JournalError> {
        let gates_dir = self.pipeline.gates_dir();
        append_with(&self.pipeline, &self.opts, |s| {
            let mut bodies = Vec::new();
            check_order(s, gate, force)?;
            let mut iteration = s.iteration_number().max(1);
            if gate == GateName::Floor && s.next.action == NextAction::Dev {
                iteration = s.iteration_number() + 1;
                bodies.push(EventBody::IterationStarted { iteration, trigger: reloop_trigger(s) });
            } else if s.review_iterations.is_empty() {
                bodies.push(EventBody::IterationStarted { iteration, trigger: "initial".into() });
            }
            let round = s.next_round(gate);
            if !s.current_gate.as_ref().is_some_and(|c| c.gate == gate && c.iteration == iteration) {
                bodies.push(EventBody::GateStarted { gate, iteration, round });
            }
            let output = save_output(&gates_dir, iteration, gate, round, raw_output)?;
            let finished = input.into_finished(gate, iteration, round, Some(output));
            let requests = rules::gates_for_round(s, &finished);
            bodies.push(EventBody::GateFinished(finished));
            bodies.extend(rules::assign_ids(s, iteration, requests, "manual").into_iter().map(EventBody::HumanRequested));
            Ok(bodies)
        })
    }

    /// Records the finding verifier's verdicts; opens an `unverifiable`
    /// human gate for each UNVERIFIABLE finding.
    pub fn findings(&self, iteration: Option<u32>, findings: Vec<Finding>) -> Result<Appended, JournalError> {
        append_with(&self.pipeline, &self.opts, |s| {
            let iteration = iteration.unwrap_or_else(|| s.iteration_number().max(1));
            let known: Vec<&str> = s
                .iteration(iteration)
                .map(|i| i.findings.iter().map(|f| f.id.as_str()).collect())
                .unwrap_or_default();
            let fresh: Vec<Finding> = findings.iter().filter(|f| !known.contains(&f.id.as_str())).cloned().collect();
            let requests = rules::gates_for_findings(&fresh);
            let mut bodies = vec![EventBody::FindingsVerified { iteration, findings }];
            bodies.extend(rules::assign_ids(s, iteration, requests, "findings").into_iter().map(EventBody::HumanRequested));
            Ok(bodies)
        })
    }

    /// Records a triage file already copied into the pipeline.
    pub fn triage(&self, iteration: u32, file: String, counts: TriageCounts) -> Result<Appended, JournalError> {
        append_with(&self.pipeline, &self.opts, |_| Ok(vec![EventBody::TriageRecorded { iteration, file, counts }]))
    }

    /// Records verify-by-test results and, optionally, the summary.
    pub fn verify(&self, results: Vec<VerifyResult>, summary: Option<VerifySummary>) -> Result<Appended, JournalError> {
        append_with(&self.pipeline, &self.opts, |_| {
            let mut bodies: Vec<EventBody> = results.into_iter().map(EventBody::VerifyResult).collect();
            bodies.extend(summary.map(EventBody::VerifySummary));
            Ok(bodies)
        })
    }

    /// Records a floor-guard result.
    pub fn floor_guard(&self, mut result: FloorGuardResult) -> Result<Appended, JournalError> {
        append_with(&self.pipeline, &self.opts, |s| {
            if result.iteration == 0 {
                result.iteration = s.iteration_number().max(1);
            }
            Ok(vec![EventBody::FloorGuardFinished(result)])
        })
    }

    /// Work goes back to the developer: `dev.dispatched` for the current
    /// iteration, then `iteration.started` for the next one.
    pub fn dev(&self, inputs: Vec<Value>) -> Result<Appended, JournalError> {
        append_with(&self.pipeline, &self.opts, |s| {
            let iteration = s.iteration_number().max(1);
            Ok(vec![
                EventBody::DevDispatched { iteration, inputs },
                EventBody::IterationStarted { iteration: iteration + 1, trigger: reloop_trigger(s) },
            ])
        })
    }

    /// Opens a human gate by hand.
    pub fn ask(&self, req: GateRequest) -> Result<(String, Appended), JournalError> {
        let appended = append_with(&self.pipeline, &self.opts, |s| {
            let iteration = s.iteration_number().max(1);
            Ok(rules::assign_ids(s, iteration, vec![req], "manual").into_iter().map(EventBody::HumanRequested).collect())
        })?;
        let id = match appended.events.first().map(|e| &e.body) {
            Some(EventBody::HumanRequested(r)) => r.id.clone(),
            _ => String::new(),
        };
        Ok((id, appended))
    }

    /// Records a decision. Refused when the gate does not exist, is already
    /// decided (the existing decision is in the error), the decision is not
    /// one of its options, or the reason is blank.
    pub fn decide(&self, decision: HumanDecision) -> Result<Appended, JournalError> {
        append_with(&self.pipeline, &self.opts, |s| {
            check_decision(s, &decision)?;
            Ok(vec![EventBody::HumanDecided(decision)])
        })
    }

    /// Ends the run.
    pub fn run_end(&self, status: EndStatus, report: Option<String>) -> Result<Appended, JournalError> {
        append_with(&self.pipeline, &self.opts, |s| {
            if s.ended.is_some() {
                return Err(JournalError::Refused("the run has already ended".into()));
            }
            if status == EndStatus::Complete && accepted_partial(s) {
                return Err(JournalError::Refused(
                    "an abandonment was accepted as a partial delivery: the run cannot end complete (use --status partial)".into(),
                ));
            }
            Ok(vec![EventBody::RunEnded(RunEnded { status, report })])
        })
    }

    /// Appends a free-text note.
    pub fn note(&self, text: String) -> Result<Appended, JournalError> {
        append_with(&self.pipeline, &self.opts, |_| Ok(vec![EventBody::Note { text }]))
    }
}

/// Why a decision may not be recorded, if it may not.
pub fn check_decision(s: &State, d: &HumanDecision) -> Result<(), JournalError> {
    let Some(gate) = s.human_gate(&d.id) else {
        return Err(JournalError::Refused(format!("no human gate {} in this pipeline", d.id)));
    };
    if let Some(prev) = &gate.decision {
        return Err(JournalError::Refused(format!(
            "{} was already decided: {} by {} at {} ({})",
            d.id, prev.decision.decision, prev.decision.by, prev.at, prev.decision.reason
        )));
    }
    if !gate.request.options.contains(&d.decision) {
        let opts: Vec<&str> = gate.request.options.iter().map(|o| o.as_str()).collect();
        return Err(JournalError::Refused(format!(
            "{} is not an option of {} ({}): expected one of {}",
            d.decision,
            d.id,
            gate.request.kind,
            opts.join(", ")
        )));
    }
    if d.reason.trim().is_empty() {
        return Err(JournalError::Refused("a decision needs a non-empty reason".into()));
    }
    Ok(())
}

/// True when a person accepted an abandonment as a partial delivery.
pub fn accepted_partial(s: &State) -> bool {
    s.human_gates
        .iter()
        .any(|g| g.decision.as_ref().is_some_and(|d| d.decision.decision == Decision::AcceptPartial))
}

fn check_order(s: &State, gate: GateName, force: bool) -> Result<(), JournalError> {
    if force {
        return Ok(());
    }
    if s.status == RunStatus::Ended {
        return Err(JournalError::Refused("the run has ended: start a new one with `loopwatch record run-start`".into()));
    }
    let n = &s.next;
    let ok = match n.action {
        NextAction::Human => false,
        NextAction::Stop | NextAction::Done => false,
        NextAction::Dev => gate == GateName::Floor,
        NextAction::NextGate | NextAction::Retry => n.gate.is_none_or(|g| g == gate) || gate == GateName::Floor,
    };
    if ok {
        return Ok(());
    }
    let expected = match n.action {
        NextAction::Human => format!("await {} first", n.human.as_deref().unwrap_or("the open human gate")),
        NextAction::Stop => "the run was stopped by a person: record its end".to_string(),
        NextAction::Done => "every gate passed: record the end of the run".to_string(),
        NextAction::Dev => "the developer must work first; every re-loop starts at GATE 0".to_string(),
        NextAction::NextGate | NextAction::Retry => {
            format!("the loop expects GATE {} {} next", n.gate.map_or(0, GateName::number), n.gate.map_or("floor", GateName::as_str))
        }
    };
    Err(JournalError::Refused(format!(
        "GATE {} {gate} out of order: {expected} (pass --force to record it anyway)",
        gate.number()
    )))
}

fn reloop_trigger(s: &State) -> String {
    let last = s.review_iterations.iter().rev().find_map(|i| i.gates.last());
    let decided_since = s
        .human_gates
        .iter()
        .filter_map(|g| g.decision.as_ref())
        .any(|d| d.seq > s.marks.last_gate_seq);
    if decided_since {
        return "human".into();
    }
    match last.map(|g| g.gate) {
        Some(GateName::Floor) => "floor-unmet",
        Some(GateName::Conformity) => "ecarts",
        Some(GateName::Security) => "block",
        None => "review",
    }
    .into()
}

fn save_output(dir: &std::path::Path, iteration: u32, gate: GateName, round: u32, raw: &[u8]) -> Result<String, JournalError> {
    std::fs::create_dir_all(dir).map_err(|e| JournalError::io("create", dir, e))?;
    let base = format!("{iteration}-{gate}-{round}");
    let mut name = format!("{base}.out");
    let mut k = 2;
    while dir.join(&name).exists() {
        name = format!("{base}.{k}.out");
        k += 1;
    }
    let path: PathBuf = dir.join(&name);
    crate::util::replace_atomically(&path, raw).map_err(|e| JournalError::io("write", &path, e))?;
    Ok(format!("gates/{name}"))
}
