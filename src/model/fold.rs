//! Folding events into [`State`]: pure, deterministic, total.
//!
//! Every event is accepted: an event that refers to an iteration not yet
//! started creates it, a decision or an expiry on an unknown gate or one
//! already decided or expired is ignored (the first outcome stands), unknown
//! types are counted.

use super::event::*;
use super::kinds::Effect;
use super::rules;
use super::state::*;
use super::types::*;

/// Folds a whole sequence of events from the empty state.
pub fn fold<'a>(events: impl IntoIterator<Item = &'a Event>) -> State {
    let mut state = State::default();
    for ev in events {
        state.apply(ev);
    }
    state.finish();
    state
}

/// Puts `item` in the place of the one `same` finds, or appends it: a
/// later event about the same thing replaces the earlier one.
fn upsert<T: Clone>(items: &mut Vec<T>, item: &T, same: impl Fn(&T) -> bool) {
    match items.iter_mut().find(|x| same(x)) {
        Some(slot) => *slot = item.clone(),
        None => items.push(item.clone()),
    }
}

impl State {
    /// Applies one event. Call [`State::finish`] after the last one of a batch
    /// to bring `status` and `next` up to date.
    pub fn apply(&mut self, ev: &Event) {
        self.seq = ev.seq;
        self.last_event_at = Some(ev.at.clone());
        match &ev.body {
            EventBody::RunStarted { run, .. } => {
                *self = State::default();
                self.seq = ev.seq;
                self.last_event_at = Some(ev.at.clone());
                self.caps = PerGate::splat(run.max_rounds.unwrap_or(DEFAULT_MAX_ROUNDS).max(1));
                self.review = run.review.as_ref().map(|_| ReviewCounters {
                    cap: self.caps.floor,
                    ..ReviewCounters::default()
                });
                self.run = Some(RunInfo::clone(run));
            }
            EventBody::IterationStarted { iteration, trigger } => {
                let it = self.iteration_mut(*iteration, ev);
                it.trigger.clone_from(trigger);
                self.marks.last_dev_seq = ev.seq;
            }
            EventBody::GateStarted {
                gate,
                iteration,
                round,
                ..
            } => {
                self.iteration_mut(*iteration, ev);
                self.current_gate = Some(GateInProgress {
                    gate: *gate,
                    iteration: *iteration,
                    round: *round,
                    since: ev.at.clone(),
                });
            }
            EventBody::GateFinished(g) => {
                let outcome = rules::round_outcome(g);
                match outcome {
                    rules::RoundOutcome::Structural => {
                        *self.structural_strikes.get_mut(g.gate) += 1
                    }
                    rules::RoundOutcome::Failed => {
                        *self.counters.get_mut(g.gate) += 1;
                        *self.structural_strikes.get_mut(g.gate) = 0;
                    }
                    rules::RoundOutcome::Passed | rules::RoundOutcome::Contract => {
                        *self.structural_strikes.get_mut(g.gate) = 0;
                    }
                }
                if self.current_gate.as_ref().is_some_and(|c| c.gate == g.gate) {
                    self.current_gate = None;
                }
                self.iteration_mut(g.iteration, ev)
                    .gates
                    .push(GateFinished::clone(g));
                self.marks.last_gate_seq = ev.seq;
            }
            EventBody::FindingsVerified {
                iteration,
                findings,
            } => {
                let review = self.review.is_some();
                let it = self.iteration_mut(*iteration, ev);
                if review {
                    it.review.get_or_insert_default().verified = true;
                }
                for f in findings {
                    upsert(&mut it.findings, f, |x| x.id == f.id);
                }
            }
            EventBody::TriageRecorded {
                iteration,
                file,
                counts,
                buckets,
            } => {
                self.iteration_mut(*iteration, ev).triage = Some(TriageRecord {
                    file: file.clone(),
                    counts: *counts,
                    buckets: buckets.as_deref().cloned(),
                });
            }
            EventBody::VerifyResult(r) => {
                let it = self.iteration_mut(r.iteration, ev);
                upsert(&mut it.verifications, r, |x| x.finding == r.finding);
            }
            EventBody::VerifySummary(s) => {
                self.iteration_mut(s.iteration, ev).verify_by_test = Some(VerifySummary::clone(s));
            }
            EventBody::FloorGuardFinished(f) => {
                self.iteration_mut(f.iteration, ev).floor_guard = Some(f.clone());
            }
            EventBody::HumanRequested(req) => {
                if self.human_gate(&req.id).is_none() {
                    let mut request = HumanRequest::clone(req);
                    request.read_as_now();
                    self.human_gates.push(HumanGate {
                        request,
                        requested_at: ev.at.clone(),
                        requested_seq: ev.seq,
                        status: GateStatus::Open,
                        decision: None,
                        approvals: Vec::new(),
                        expired: None,
                        notified: 0,
                        notified_at: None,
                        contract_applied: None,
                    });
                }
            }
            EventBody::HumanDecided(d) => {
                // An option recorded under an earlier name is read as its new one.
                let decision = self.read_decision(&d.id, d.decision);
                self.close_gate(&d.id, decision, |gate| {
                    gate.status = GateStatus::Decided;
                    let mut decided = HumanDecision::clone(d);
                    decided.decision = decision;
                    gate.decision = Some(DecisionRecord {
                        decision: decided,
                        at: ev.at.clone(),
                        seq: ev.seq,
                    });
                })
            }
            EventBody::HumanApproved(d) => {
                if let Some(gate) = self.human_gates.iter_mut().find(|g| g.request.id == d.id)
                    && gate.is_open()
                {
                    gate.approvals.push(DecisionRecord {
                        decision: HumanDecision::clone(d),
                        at: ev.at.clone(),
                        seq: ev.seq,
                    });
                }
            }
            EventBody::HumanExpired(x) => {
                let action = self.read_decision(&x.id, x.action);
                self.close_gate(&x.id, action, |gate| {
                    gate.status = GateStatus::Expired;
                    gate.expired = Some(ExpiryRecord {
                        after: x.after.clone(),
                        action,
                        at: ev.at.clone(),
                        seq: ev.seq,
                    });
                })
            }
            EventBody::ContractJudged(c) => {
                if c.rerun {
                    self.marks.last_contract_seq = ev.seq;
                }
                if let Some(g) = c
                    .gate
                    .as_deref()
                    .and_then(|id| self.human_gates.iter_mut().find(|g| g.request.id == id))
                {
                    g.contract_applied = Some(ev.seq);
                }
                self.contract = Some(ContractJudged::clone(c));
            }
            EventBody::NotifySent(n) => {
                if let Some(gate) = self.human_gates.iter_mut().find(|g| g.request.id == n.id) {
                    gate.notified = gate.notified.max(n.n);
                    gate.notified_at = Some(ev.at.clone());
                }
            }
            EventBody::DevDispatched { iteration, inputs } => {
                self.iteration_mut(*iteration, ev)
                    .dev_inputs
                    .extend(inputs.iter().cloned());
                self.marks.last_dev_seq = ev.seq;
            }
            EventBody::RunEnded(end) => {
                self.ended = Some(RunEnded::clone(end));
                self.current_gate = None;
            }
            EventBody::AgentStarted(a) => {
                if self.dispatch(a.dispatch).is_none() {
                    self.agents.push(AgentDispatch {
                        started: AgentStarted::clone(a),
                        started_at: ev.at.clone(),
                        started_seq: ev.seq,
                        finished: None,
                        finished_at: None,
                        limited: None,
                    });
                }
            }
            EventBody::AgentFinished(f) => self.apply_agent_finished(f, ev),
            EventBody::AgentLimited(l) => {
                if let Some(d) = self
                    .agents
                    .iter_mut()
                    .find(|d| d.started.dispatch == l.dispatch)
                    && d.finished.is_none()
                {
                    d.limited = Some(crate::model::state::Limited {
                        until: l.until.clone(),
                        message: l.message.clone(),
                        seq: ev.seq,
                    });
                }
            }
            // The review stage.
            EventBody::FindingLane(l) => {
                self.iteration_mut(l.iteration, ev)
                    .review
                    .get_or_insert_default()
                    .apply(l);
            }
            EventBody::ReviewFinished(r) => {
                if r.gaps > 0
                    && let Some(c) = self.review.as_mut()
                {
                    c.rounds += 1;
                }
                self.iteration_mut(r.iteration, ev)
                    .review
                    .get_or_insert_default()
                    .finished = Some(ReviewFinished::clone(r));
            }
            EventBody::Note { .. } => {}
            EventBody::FindingSplit(x) => {
                let known = self.finding_splits.iter().any(|y| {
                    y.iteration == x.iteration
                        && y.finding == x.finding
                        && y.earlier_iteration == x.earlier_iteration
                        && y.earlier == x.earlier
                });
                if !known {
                    self.finding_splits
                        .push(crate::model::ledger::FindingSplit::clone(x));
                }
            }
            EventBody::VerifyGreen(g) => {
                let it = self.iteration_mut(g.iteration, ev);
                upsert(&mut it.greens, g, |x| x.test_ref == g.test_ref);
            }
            EventBody::Unknown { .. } => self.unknown_events += 1,
        }
    }

    /// `decision` recorded on gate `id`, as this version reads it.
    fn read_decision(&self, id: &str, decision: Decision) -> Decision {
        self.human_gate(id)
            .map_or(decision, |g| g.request.kind.read_decision(decision))
    }

    /// Closes the open gate `id` with `close` (its decision or its expiry)
    /// and applies what `outcome` changes; an unknown gate, or one already
    /// closed, is left as it is (the first outcome stands).
    fn close_gate(&mut self, id: &str, outcome: Decision, close: impl FnOnce(&mut HumanGate)) {
        let Some(gate) = self.human_gates.iter_mut().find(|g| g.request.id == id) else {
            return;
        };
        if !gate.is_open() {
            return;
        }
        close(gate);
        let asked_by = gate.request.gate;
        let developer = rules::is_developer_gate(&gate.request);
        let review = rules::review::gate_role(&gate.request);
        // An outcome that is not an option of the kind changes nothing.
        let Some(effect) = gate.request.kind.effect(outcome) else {
            return;
        };
        self.apply_review_outcome(effect, review);
        self.apply_outcome(effect, asked_by, developer);
    }

    /// What a gate's outcome (decided or expired) changes in the counters.
    fn apply_outcome(&mut self, effect: Effect, asked_by: Option<GateName>, developer: bool) {
        if developer && effect.resets_failures() {
            // A person let the developer try again: its failures count anew.
            self.dev_strikes = 0;
        }
        let Some(g) = asked_by else { return };
        if effect == Effect::OneMoreRound {
            *self.caps.get_mut(g) += 1;
        }
        if effect.resets_failures() {
            *self.structural_strikes.get_mut(g) = 0;
        }
    }

    /// What a review gate's outcome changes: one more round on the
    /// review's cap gate raises its cap; any second chance on the
    /// reviewer's structural gate lets it try again.
    fn apply_review_outcome(&mut self, effect: Effect, gate: Option<rules::review::ReviewGate>) {
        let (Some(gate), Some(c)) = (gate, self.review.as_mut()) else {
            return;
        };
        match gate {
            rules::review::ReviewGate::Cap if effect == Effect::OneMoreRound => c.cap += 1,
            rules::review::ReviewGate::Reviewer if effect.resets_failures() => c.strikes = 0,
            _ => {}
        }
    }

    /// Brings the derived fields (`status`, `next`) up to date.
    pub fn finish(&mut self) {
        self.status = if self.ended.is_some() {
            RunStatus::Ended
        } else if self.open_human_gates().next().is_some() {
            RunStatus::AwaitingHuman
        } else if self.run.is_some() || self.seq > 0 {
            RunStatus::Running
        } else {
            RunStatus::Idle
        };
        self.next = rules::next(self);
    }

    /// The first finish of a started dispatch counts; a finish of a dispatch
    /// never started, or a second one, is ignored.
    fn apply_agent_finished(&mut self, f: &AgentFinished, ev: &Event) {
        let Some(d) = self
            .agents
            .iter_mut()
            .rev()
            .find(|a| a.started.dispatch == f.dispatch)
        else {
            return;
        };
        if d.finished.is_some() {
            return;
        }
        d.finished = Some(f.clone());
        d.finished_at = Some(ev.at.clone());
        let (gate, role, iteration) = (d.started.gate, d.started.role, d.started.iteration);
        // A usage limit is the CLI's account, not the agent's failure.
        let counted = !f.interrupted && d.limited.is_none();
        self.usage.add(gate, role, f);
        self.iteration_mut(iteration, ev).usage.add(f);
        if role == AgentRole::Reviewer
            && counted
            && let Some(c) = self.review.as_mut()
        {
            c.strikes = if f.succeeded() { 0 } else { c.strikes + 1 };
        }
        if role == AgentRole::Developer && counted {
            // An interrupted dispatch is the engine's doing, not the agent's.
            self.dev_strikes = if f.succeeded() {
                0
            } else {
                self.dev_strikes + 1
            };
        }
    }

    fn iteration_mut(&mut self, n: u32, ev: &Event) -> &mut Iteration {
        // From the back: events almost always name the latest iteration.
        let pos = match self
            .review_iterations
            .iter()
            .rposition(|i| i.iteration == n)
        {
            Some(p) => p,
            None => {
                let at = self
                    .review_iterations
                    .iter()
                    .position(|i| i.iteration > n)
                    .unwrap_or(self.review_iterations.len());
                self.review_iterations.insert(
                    at,
                    std::sync::Arc::new(Iteration {
                        iteration: n,
                        started_at: ev.at.clone(),
                        start_seq: ev.seq,
                        ..Iteration::default()
                    }),
                );
                at
            }
        };
        // Iterations are shared between the states of a replay history:
        // only the one being changed is copied.
        std::sync::Arc::make_mut(&mut self.review_iterations[pos])
    }
}
