//! The recorder: what the orchestrator's calls write into the journal, with
//! the loop's rules applied under the writer lock so that ids, counters and
//! "already decided" checks never race.
//!
//! Every function here appends through [`crate::journal::append_with`] and
//! returns what was written; printing belongs to the CLI. Refusals are
//! [`Refusal`]s (nothing was written); journal failures are carried as
//! [`RecordError::Journal`].

use std::collections::HashMap;
use std::path::PathBuf;

use serde_json::Value;

use crate::code::CodeSnapshot;
mod checks;
pub mod dispatch;
pub mod door;
mod error;
pub mod evidence;
pub mod gates;
pub mod review;

pub use checks::{accepted_partial, check_decision, check_iteration, contract_path};
pub use error::{Expected, RecordError, Refusal};

use checks::check_order;

use crate::journal::{AppendOptions, Appended, JournalError, Pipeline, append_with};
use crate::model::event::*;
use crate::model::rules::{self, GateRequest};
use crate::model::*;

use crate::parse::{GateOutput, Structural};

/// A gate round as parsed: its output, or why it is structurally invalid.
pub type RoundResult = Result<GateOutput, Structural>;

/// A GATE 0 round run here, from its rows and verdict.
pub fn floor_round(rows: Vec<FloorRow>, verdict: Verdict) -> RoundResult {
    let mut out = GateOutput::new(GateName::Floor, verdict);
    out.rows = rows.into_iter().map(GateRow::Floor).collect();
    Ok(out)
}

/// Who asks to write into a pipeline from the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// An orchestrator recording the loop's steps (`record`, `gate0 run`,
    /// `floor-guard`, `triage apply`): refused while `loopwatch run`
    /// drives the pipeline, whose steps are its own.
    Orchestrator,
    /// A person (`decide`, `ask`, `await`, `record note`).
    Person,
}

/// Refuses a write asked from inside the tree of something the run's
/// engine started (whatever its environment says), and an orchestrator's
/// step while an engine drives the pipeline.
pub fn admit(pipeline: &Pipeline, caller: Caller) -> Result<(), Refusal> {
    if let Some(inside) = crate::process::tree::dispatch_of(pipeline.dir()) {
        return Err(Refusal::InsideRun {
            what: inside.what(),
            supervisor: inside.supervisor,
        });
    }
    if caller == Caller::Orchestrator
        && let Some(pid) = crate::journal::running_engine(pipeline.dir())
    {
        return Err(Refusal::EngineDrives { pid });
    }
    Ok(())
}

/// The run's report, in `.pipeline/`.
pub const REPORT: &str = "report.md";

/// Writes the loop's events into one pipeline.
#[derive(Debug, Clone)]
pub struct Recorder {
    pipeline: Pipeline,
    opts: AppendOptions,
    expiry: HashMap<HumanGateKind, ExpiryRule>,
    /// Decides by appending itself even while an engine drives the run
    /// (the engine's own door does).
    direct: bool,
}

impl Recorder {
    /// A recorder on a pipeline.
    pub fn new(pipeline: Pipeline) -> Self {
        Recorder {
            pipeline,
            opts: AppendOptions::default(),
            expiry: HashMap::new(),
            direct: false,
        }
    }

    /// The same recorder, appending decisions itself while an engine runs:
    /// for the engine's door alone ([`door`]).
    pub(crate) fn direct(mut self) -> Self {
        self.direct = true;
        self
    }

    /// The same recorder, giving the gates it opens an expiry by kind
    /// (`[expiry.<kind>]` in the config) unless one is asked for explicitly.
    pub fn with_expiry(mut self, expiry: HashMap<HumanGateKind, ExpiryRule>) -> Self {
        self.expiry = expiry;
        self
    }

    /// This recorder, when [`admit`] lets `caller` write through it.
    pub fn admitted(self, caller: Caller) -> Result<Self, RecordError> {
        admit(&self.pipeline, caller)?;
        Ok(self)
    }

    /// The pipeline written to.
    pub fn pipeline(&self) -> &Pipeline {
        &self.pipeline
    }

    /// Starts a run: `run.started` then `iteration.started` 1 (initial).
    /// Refused while another run is in progress, unless `force`.
    /// The worktree's snapshot is taken first, outside the lock, and
    /// recorded as the run's base (`tree`, or `treeMissing` with why).
    pub fn run_start(&self, run: RunInfo, force: bool) -> Result<Appended, RecordError> {
        let code = self.snapshot();
        let (tree, tree_missing) = code_fields(&code);
        let appended = append_with::<_, RecordError>(&self.pipeline, &self.opts, |s| {
            if !force && s.run.is_some() && s.ended.is_none() {
                return Err(Refusal::RunInProgress {
                    id: s.run.as_ref().map_or("", |r| r.id.as_str()).into(),
                }
                .into());
            }
            Ok(vec![
                EventBody::RunStarted {
                    run: Box::new(run),
                    tree,
                    tree_missing,
                },
                EventBody::IterationStarted {
                    iteration: 1,
                    trigger: "initial".into(),
                },
            ])
        })?;
        self.keep(&appended, &code, "base");
        Ok(appended)
    }

    /// Records that a gate round begins (`gate.started`, and the next
    /// iteration's `iteration.started` when the loop comes back from the
    /// developer). Refused when the loop expects another gate, unless `force`.
    /// A GATE 0 round records the snapshot of the code it judges.
    pub fn start_round(&self, gate: GateName, force: bool) -> Result<Appended, RecordError> {
        let code = (gate == GateName::Floor).then(|| self.snapshot());
        let appended = append_with::<_, RecordError>(&self.pipeline, &self.opts, |s| {
            check_order(s, gate, force)?;
            let (mut bodies, iteration) = opening(s, gate);
            bodies.push(gate_started(
                gate,
                iteration,
                s.next_round(gate),
                code.as_ref(),
            ));
            Ok(bodies)
        })?;
        self.keep_round(&appended, code.as_ref());
        Ok(appended)
    }

    /// Records one gate round from its parsed output; saves the verbatim
    /// output under `gates/`, opens the human gates the rules call for.
    pub fn round(
        &self,
        gate: GateName,
        result: RoundResult,
        raw_output: &[u8],
        force: bool,
    ) -> Result<Appended, RecordError> {
        let gates_dir = self.pipeline.gates_dir();
        // A GATE 0 round recorded without its start gets its snapshot here;
        // one already started has it on its `gate.started`.
        let code = (gate == GateName::Floor && !self.floor_started()).then(|| self.snapshot());
        let appended = append_with::<_, RecordError>(&self.pipeline, &self.opts, |s| {
            let started = s.current_gate.as_ref().filter(|c| c.gate == gate).cloned();
            let (mut bodies, iteration, round) = match started {
                Some(c) => (Vec::new(), c.iteration, c.round),
                None => {
                    check_order(s, gate, force)?;
                    let (mut bodies, iteration) = opening(s, gate);
                    let round = s.next_round(gate);
                    let missing;
                    let code = match (gate, code.as_ref()) {
                        (GateName::Floor, None) => {
                            missing = CodeSnapshot::Missing(
                                "not taken: the round was started by another call at the same moment".into(),
                            );
                            Some(&missing)
                        }
                        (_, code) => code,
                    };
                    bodies.push(gate_started(gate, iteration, round, code));
                    (bodies, iteration, round)
                }
            };
            let output = save_output(&gates_dir, iteration, gate, round, raw_output)?;
            let failing_line = result.as_ref().err().and_then(|st| st.line);
            let finished = match result {
                Ok(out) => out.into_finished(iteration, round, Some(output)),
                Err(st) => st.into_finished(gate, iteration, round, Some(output)),
            };
            let mut requests = rules::gates_for_round(s, &finished);
            let opening = evidence::Opening {
                state: s,
                finished: Some(&finished),
                raw_output: Some(raw_output),
                failing_line,
                iteration,
            };
            evidence::capture(&mut requests, &self.pipeline, &opening);
            bodies.push(EventBody::from(finished));
            bodies.extend(
                rules::assign_ids(s, iteration, requests, "manual")
                    .into_iter()
                    .map(|r| EventBody::from(self.stamp(r, None))),
            );
            Ok(bodies)
        })?;
        self.keep_round(&appended, code.as_ref());
        Ok(appended)
    }

    /// The snapshot of the worktree, the pipeline folder left out.
    fn snapshot(&self) -> CodeSnapshot {
        crate::code::take(self.pipeline.worktree(), self.pipeline.dir())
    }

    /// True when `state.json` says a GATE 0 round is in progress (a cheap
    /// look before the lock; a wrong answer only costs a snapshot or its
    /// absence on a round recorded in two calls racing with a third).
    fn floor_started(&self) -> bool {
        crate::journal::read_foreign_state(&self.pipeline.state_path())
            .ok()
            .flatten()
            .and_then(|s| s.current_gate)
            .is_some_and(|c| c.gate == GateName::Floor)
    }

    /// Keeps the snapshot of a `gate.started` just appended reachable.
    fn keep_round(&self, appended: &Appended, code: Option<&CodeSnapshot>) {
        let started = appended.events.iter().find_map(|e| match e.body {
            EventBody::GateStarted {
                gate: GateName::Floor,
                iteration,
                round,
                ..
            } => Some((iteration, round)),
            _ => None,
        });
        if let (Some((iteration, round)), Some(code)) = (started, code) {
            self.keep(
                appended,
                code,
                &format!("iteration-{iteration}-floor-{round}"),
            );
        }
    }

    /// Makes a snapshot reachable under `refs/loopwatch/<run-id>/<label>`.
    /// The event is already written: a failure here is logged, and the tree
    /// stays readable until git prunes unreachable objects (two weeks by
    /// default).
    fn keep(&self, appended: &Appended, code: &CodeSnapshot, label: &str) {
        let (Some(tree), Some(run)) = (code.tree(), appended.state.run.as_ref()) else {
            return;
        };
        if let Err(e) = crate::code::keep(self.pipeline.worktree(), &run.id, label, tree) {
            tracing::warn!("snapshot {tree} not kept under refs/loopwatch: {e}");
        }
    }

    /// Records the finding verifier's verdicts; opens an `unverifiable`
    /// human gate for each UNVERIFIABLE finding.
    pub fn findings(
        &self,
        iteration: Option<u32>,
        findings: Vec<Finding>,
    ) -> Result<Appended, RecordError> {
        append_with(&self.pipeline, &self.opts, |s| {
            let iteration = iteration.unwrap_or_else(|| s.iteration_number().max(1));
            check_iteration(s, iteration)?;
            let known: Vec<&str> = s
                .iteration(iteration)
                .map(|i| i.findings.iter().map(|f| f.id.as_str()).collect())
                .unwrap_or_default();
            let fresh: Vec<Finding> = findings
                .iter()
                .filter(|f| !known.contains(&f.id.as_str()))
                .cloned()
                .collect();
            // A finding raised again is never asked again (the finding ledger).
            let mut requests = rules::gates_for_findings(&crate::model::ledger::asked(&fresh));
            let opening = evidence::Opening {
                state: s,
                finished: None,
                raw_output: None,
                failing_line: None,
                iteration,
            };
            evidence::capture(&mut requests, &self.pipeline, &opening);
            let mut bodies = vec![EventBody::FindingsVerified {
                iteration,
                findings,
            }];
            bodies.extend(
                rules::assign_ids(s, iteration, requests, "findings")
                    .into_iter()
                    .map(|r| EventBody::from(self.stamp(r, None))),
            );
            Ok(bodies)
        })
    }

    /// Records a triage file already copied into the pipeline.
    pub fn triage(
        &self,
        iteration: u32,
        file: String,
        counts: TriageCounts,
        buckets: TriageBuckets,
    ) -> Result<Appended, RecordError> {
        append_with(&self.pipeline, &self.opts, |s| {
            check_iteration(s, iteration)?;
            Ok(vec![EventBody::TriageRecorded {
                iteration,
                file,
                counts,
                buckets: Some(Box::new(buckets)),
            }])
        })
    }

    /// Records verify-by-test results and, optionally, the summary.
    pub fn verify(
        &self,
        results: Vec<VerifyResult>,
        summary: Option<VerifySummary>,
    ) -> Result<Appended, RecordError> {
        append_with(&self.pipeline, &self.opts, |s| {
            for i in results
                .iter()
                .map(|r| r.iteration)
                .chain(summary.as_ref().map(|x| x.iteration))
            {
                check_iteration(s, i)?;
            }
            let mut bodies: Vec<EventBody> = results.into_iter().map(EventBody::from).collect();
            bodies.extend(summary.map(EventBody::from));
            Ok(bodies)
        })
    }

    /// Records the reruns of the red tests handed to a developer
    /// (`verify.green`, one per test), refused for an iteration not started.
    pub fn verify_green(&self, greens: Vec<VerifyGreen>) -> Result<Appended, RecordError> {
        append_with(&self.pipeline, &self.opts, |s| {
            for g in &greens {
                check_iteration(s, g.iteration)?;
            }
            Ok(greens.iter().cloned().map(EventBody::from).collect())
        })
    }

    /// Records a floor-guard result.
    pub fn floor_guard(&self, mut result: FloorGuardResult) -> Result<Appended, RecordError> {
        append_with(&self.pipeline, &self.opts, |s| {
            if result.iteration == 0 {
                result.iteration = s.iteration_number().max(1);
            }
            Ok(vec![EventBody::FloorGuardFinished(result)])
        })
    }

    /// Work goes back to the developer: `dev.dispatched` for the current
    /// iteration, then `iteration.started` for the next one.
    pub fn dev(&self, inputs: Vec<Value>) -> Result<Appended, RecordError> {
        append_with(&self.pipeline, &self.opts, |s| {
            let iteration = s.iteration_number().max(1);
            Ok(vec![
                EventBody::DevDispatched { iteration, inputs },
                EventBody::IterationStarted {
                    iteration: iteration + 1,
                    trigger: reloop_trigger(s),
                },
            ])
        })
    }

    /// Opens a human gate by hand. Refused when the subject or the summary
    /// is blank (a person could not tell what the gate is about).
    pub fn ask(&self, req: GateRequest) -> Result<(String, Appended), RecordError> {
        self.ask_expiring(req, None)
    }

    /// Opens a human gate by hand that expires as `expires` says (else as
    /// the recorder's per-kind expiry says, else never).
    pub fn ask_expiring(
        &self,
        req: GateRequest,
        expires: Option<ExpiryRule>,
    ) -> Result<(String, Appended), RecordError> {
        for (field, text) in [("--subject", &req.subject), ("--summary", &req.summary)] {
            if text.trim().is_empty() {
                return Err(Refusal::Blank { field }.into());
            }
        }
        let appended = append_with::<_, RecordError>(&self.pipeline, &self.opts, |s| {
            let iteration = s.iteration_number().max(1);
            Ok(rules::assign_ids(s, iteration, vec![req], "manual")
                .into_iter()
                .map(|r| EventBody::from(self.stamp(r, expires.clone())))
                .collect())
        })?;
        let id = match appended.events.first().map(|e| &e.body) {
            Some(EventBody::HumanRequested(r)) => r.id.clone(),
            _ => String::new(),
        };
        Ok((id, appended))
    }

    /// Records a decision. Refused when the gate does not exist, is already
    /// decided (the existing decision is in the error), the decision is not
    /// one of its options, or the reason is blank. Approving an out-of-scope
    /// file first tags it `[gated YYYY-MM-DD]` in the contract's FILE SCOPE
    /// (atomically; never twice) and records the contract's hashes before
    /// and after: a crash between the two leaves the contract tagged and the
    /// gate open, and deciding again finds the tag and changes nothing.
    pub fn decide(&self, decision: HumanDecision) -> Result<Appended, RecordError> {
        self.decide_inner(decision, None)
    }

    /// Records a decision on the evidence shown: `evidence` (the exact
    /// bytes) is saved as `evidence/<gate-id>.txt` once the decision is
    /// accepted, and the decision's `evidenceHash` is their sha256.
    pub fn decide_on(
        &self,
        mut decision: HumanDecision,
        evidence: &[u8],
    ) -> Result<Appended, RecordError> {
        decision.evidence_hash = crate::util::sha256_tagged(evidence);
        self.decide_inner(decision, Some(evidence))
    }

    fn decide_inner(
        &self,
        mut decision: HumanDecision,
        evidence: Option<&[u8]>,
    ) -> Result<Appended, RecordError> {
        refuse_read_only(&self.pipeline, "decide")?;
        // While `loopwatch run` drives the run, its journal is the engine's
        // to write: the decision goes through the engine's door.
        if !self.direct
            && let Some(engine) = crate::journal::running_engine(self.pipeline.dir())
        {
            return door::decide_through(&self.pipeline, engine, decision, evidence);
        }
        let worktree = self.pipeline.worktree().to_path_buf();
        // The person's own decision policy (never the worktree's): who may
        // decide, how many must agree, whether a signature is needed.
        let policy = crate::audit::policy::Policy::load_user()
            .map_err(|e| Refusal::PolicyUnusable { why: e.to_string() })?;
        let who = policy.decider(&decision).map_err(Refusal::from)?;
        append_with(&self.pipeline, &self.opts, |s| {
            check_decision(s, &decision)?;
            if let Some(gate) = s.human_gate(&decision.id) {
                use crate::audit::policy::{Outcome, approver};
                let outcome = policy.judge(gate, &decision, &who).map_err(Refusal::from)?;
                if policy.rules.contains_key(&gate.request.kind) {
                    decision
                        .extra
                        .insert("approver".into(), who.identity().into());
                }
                if let Outcome::Approves { awaiting } = outcome {
                    // Counted; the gate stays open. Each approval keeps the
                    // evidence it was given as `<id>.<n>.txt`.
                    if let Some(bytes) = evidence {
                        let n = gate.approvals.len() + 1;
                        evidence::save(&self.pipeline, &format!("{}.{n}", decision.id), bytes)?;
                    }
                    decision.extra.insert("awaiting".into(), awaiting.into());
                    return Ok(vec![EventBody::HumanApproved(Box::new(decision))]);
                }
                if !gate.approvals.is_empty() {
                    let by: Vec<String> = gate
                        .approvals
                        .iter()
                        .map(|a| approver(&a.decision))
                        .collect();
                    decision.extra.insert("approvedBy".into(), by.into());
                }
            }
            if let Some(bytes) = evidence {
                evidence::save(&self.pipeline, &decision.id, bytes)?;
            }
            let is_approval = s.human_gate(&decision.id).is_some_and(|g| {
                g.request.kind.effect(decision.decision) == Some(crate::model::Effect::JoinScope)
            });
            if is_approval && let Some(run) = s.run.as_ref().filter(|r| !r.contract.is_empty()) {
                let subject = s
                    .human_gate(&decision.id)
                    .map(|g| g.request.subject.clone())
                    .unwrap_or_default();
                let path = contract_path(&worktree, &run.contract).map_err(Refusal::from)?;
                let edit = crate::contract::gate_path_in_file(
                    &path,
                    &subject,
                    &crate::contract::today_local(),
                    Some(&decision.reason),
                    None,
                )
                .map_err(Refusal::from)?;
                decision.contract_edit = Some(ContractEdit {
                    path: run.contract.clone(),
                    before: edit.before,
                    after: edit.after,
                });
            }
            Ok(vec![EventBody::from(decision)])
        })
    }

    /// Ends the run: `run.ended` naming `report.md`, then the report
    /// written (PROTOCOL §7). An error after the event names what is
    /// missing; `record run-end` with the same status writes it later.
    pub fn run_end(&self, status: EndStatus) -> Result<Appended, RecordError> {
        let out = append_with(&self.pipeline, &self.opts, |s| -> Result<_, RecordError> {
            if s.ended.is_some() {
                return Err(Refusal::AlreadyEnded.into());
            }
            if status == EndStatus::Complete && accepted_partial(s) {
                return Err(Refusal::CompleteAfterPartial.into());
            }
            Ok(vec![EventBody::from(RunEnded {
                status,
                report: Some(REPORT.into()),
            })])
        })?;
        self.write_report(&out.state)?;
        Ok(out)
    }

    /// Writes `.pipeline/report.md` for `state` (never through a link).
    pub fn write_report(&self, state: &State) -> Result<(), RecordError> {
        let path = self.pipeline.dir().join(REPORT);
        let report = crate::report::markdown(state, Some(self.pipeline.dir()));
        crate::util::replace_in_pipeline(&path, report.as_bytes())
            .map_err(|e| RecordError::Journal(JournalError::io("write", &path, e)))
    }

    /// Records the contract as judged (`contract.judged`).
    pub fn contract_judged(
        &self,
        c: crate::model::event::ContractJudged,
    ) -> Result<Appended, RecordError> {
        append_with(&self.pipeline, &self.opts, |_| Ok(vec![EventBody::from(c)]))
    }

    /// Opens a `contract-changed` gate for a change of the contract's
    /// judged parts nobody owned up to (`hg-<iter>-contract-<n>`), with the
    /// changes as its evidence; nothing when one is open already.
    pub fn contract_changed(
        &self,
        path: &str,
        changes: &[String],
    ) -> Result<Appended, RecordError> {
        append_with(&self.pipeline, &self.opts, |s| {
            // One gate at a time: while one waits, or was decided and its
            // outcome is not applied yet (the engine applies it on its next
            // look), the change is already asked about.
            if s.human_gates.iter().any(|g| {
                g.request.kind == crate::model::HumanGateKind::ContractChanged
                    && (g.is_open() || g.contract_applied.is_none())
            }) {
                return Ok(Vec::new());
            }
            let req = GateRequest {
                kind: crate::model::HumanGateKind::ContractChanged,
                gate: None,
                subject: path.to_string(),
                summary: format!(
                    "the contract's judged parts changed while the run goes on: {}",
                    rules::one_line(&changes.join("; "))
                ),
                evidence: serde_json::json!({ "changes": changes, "path": path }),
            };
            let iteration = s.iteration_number().max(1);
            Ok(rules::assign_ids(s, iteration, vec![req], "contract")
                .into_iter()
                .map(|r| EventBody::from(self.stamp(r, None)))
                .collect())
        })
    }

    /// Opens a gate the engine found the need for (a `budget` limit, a
    /// usage limit nobody waits out, rounds without progress), with its
    /// evidence, as `hg-<iter>-<gate or scope>-<n>`; nothing when a gate of
    /// the same kind and subject is open already.
    pub fn engine_gate(&self, req: GateRequest, scope: &str) -> Result<Appended, RecordError> {
        append_with(&self.pipeline, &self.opts, |s| {
            if s.open_human_gates()
                .any(|g| g.request.kind == req.kind && g.request.subject == req.subject)
            {
                return Ok(Vec::new());
            }
            let iteration = s.iteration_number().max(1);
            Ok(rules::assign_ids(s, iteration, vec![req.clone()], scope)
                .into_iter()
                .map(|r| EventBody::from(self.stamp(r, None)))
                .collect())
        })
    }

    /// Appends a free-text note.
    pub fn note(&self, text: String) -> Result<Appended, RecordError> {
        append_with(&self.pipeline, &self.opts, |_| {
            Ok(vec![EventBody::Note { text }])
        })
    }

    /// Records that finding `finding` of `iteration`, raised again, is not
    /// the same as the earlier finding it was matched with (`finding.split`):
    /// from the next review on, the earlier finding is never matched with
    /// it, nor with any finding that is the same as it.
    pub fn split(
        &self,
        iteration: u32,
        finding: &str,
        reason: String,
        by: String,
    ) -> Result<Appended, RecordError> {
        refuse_read_only(&self.pipeline, "split")?;
        append_with(&self.pipeline, &self.opts, |s| {
            if reason.trim().is_empty() {
                return Err(Refusal::Blank { field: "--reason" }.into());
            }
            let lane = s
                .iteration(iteration)
                .and_then(|it| it.review.as_ref())
                .and_then(|r| r.lanes.iter().find(|l| l.finding == finding))
                .and_then(|l| l.raised_again.clone());
            let verified = s
                .iteration(iteration)
                .and_then(|it| it.findings.iter().find(|f| f.id == finding))
                .and_then(crate::model::ledger::raised_again_of);
            let Some(r) = lane.or(verified) else {
                return Err(Refusal::NoSuchMatch(format!(
                    "finding {finding} of iteration {iteration} was not raised again: there is no match to split"
                ))
                .into());
            };
            if crate::model::ledger::is_split(s, iteration, finding) {
                return Err(Refusal::NoSuchMatch(format!(
                    "finding {finding} of iteration {iteration} was already split from {} of iteration {}",
                    r.finding, r.iteration
                ))
                .into());
            }
            Ok(vec![EventBody::from(crate::model::ledger::FindingSplit {
                iteration,
                finding: finding.to_string(),
                earlier_iteration: r.iteration,
                earlier: r.finding,
                reason: reason.clone(),
                by: by.clone(),
                extra: Default::default(),
            })])
        })
    }
}

mod expiry;
mod notice;
mod read_only;
pub use expiry::expires_at;
pub use read_only::is_read_only;
use read_only::refuse_read_only;

/// A `gate.started`; GATE 0 carries the snapshot of the code it judges.
fn gate_started(
    gate: GateName,
    iteration: u32,
    round: u32,
    code: Option<&CodeSnapshot>,
) -> EventBody {
    let (tree, tree_missing) = code.map(code_fields).unwrap_or_default();
    EventBody::GateStarted {
        gate,
        iteration,
        round,
        tree,
        tree_missing,
    }
}

/// The `tree` / `treeMissing` pair of an event.
fn code_fields(code: &CodeSnapshot) -> (Option<String>, Option<String>) {
    (
        code.tree().map(ToString::to_string),
        code.missing().map(str::to_string),
    )
}

/// The events that open a round of `gate` (a new iteration when the loop
/// comes back from the developer) and the iteration the round belongs to.
fn opening(s: &State, gate: GateName) -> (Vec<EventBody>, u32) {
    if gate == GateName::Floor && matches!(s.next, crate::model::Next::Dev { .. }) {
        let iteration = s.iteration_number() + 1;
        return (
            vec![EventBody::IterationStarted {
                iteration,
                trigger: reloop_trigger(s),
            }],
            iteration,
        );
    }
    if s.review_iterations.is_empty() {
        return (
            vec![EventBody::IterationStarted {
                iteration: 1,
                trigger: "initial".into(),
            }],
            1,
        );
    }
    (Vec::new(), s.iteration_number())
}

fn reloop_trigger(s: &State) -> String {
    let Some(last) = s.latest_round() else {
        return "review".into();
    };
    if rules::review::sent_back(s) {
        return "review".into();
    }
    if rules::round_outcome(last) != rules::RoundOutcome::Failed {
        // No gap of the developer's own: a person's decision sent the work back.
        return "human".into();
    }
    match last.gate {
        GateName::Floor => "floor-unmet",
        GateName::Conformity => "ecarts",
        GateName::Security => "block",
    }
    .into()
}

fn save_output(
    dir: &std::path::Path,
    iteration: u32,
    gate: GateName,
    round: u32,
    raw: &[u8],
) -> Result<String, JournalError> {
    crate::util::pipeline_dir(dir).map_err(|e| JournalError::io("write into", dir, e))?;
    let base = format!("{iteration}-{gate}-{round}");
    let mut name = format!("{base}.out");
    let mut k = 2;
    // symlink_metadata: a dangling link counts as taken, never written through.
    while std::fs::symlink_metadata(dir.join(&name)).is_ok() {
        name = format!("{base}.{k}.out");
        k += 1;
    }
    let path: PathBuf = dir.join(&name);
    crate::util::replace_in_pipeline(&path, raw)
        .map_err(|e| JournalError::io("write", &path, e))?;
    Ok(format!("gates/{name}"))
}
