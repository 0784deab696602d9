//! The loop's rules: what a finished round means, which human gates it
//! opens, and what the orchestrator does next (PROTOCOL §1, §7).
//!
//! Everything here is a pure function of the state and the round, so the
//! recorder, `status`, the TUI and replay all agree.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::event::*;
use super::state::*;
use super::types::*;

pub mod green;
mod handoff;
pub mod review;
pub use handoff::{
    DEVELOPER_SUBJECT, auditor_input, developer_input, handoff_lines, is_developer_gate,
    verifier_input,
};
pub use review::ReviewStep;

/// What the orchestrator does next.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum NextAction {
    /// Run the next gate (`gate` says which).
    #[default]
    NextGate,
    /// Hand the gaps back to the developer.
    Dev,
    /// Await the human gate `human`.
    Human,
    /// Run the same gate again (structural failure, contract error).
    Retry,
    /// The loop is over: record the end of the run.
    Done,
    /// A person stopped the run: record its end, do nothing else.
    Stop,
    /// A step of the review stage (`step` says which).
    Review,
}

impl NextAction {
    /// The exit code a recording command returns for this action.
    pub fn exit_code(self) -> u8 {
        match self {
            NextAction::NextGate | NextAction::Done => 0,
            NextAction::Human => 10,
            NextAction::Dev => 11,
            NextAction::Retry => 12,
            NextAction::Stop => 13,
            NextAction::Review => 14,
        }
    }

    /// The token printed after `NEXT:`.
    pub fn as_str(self) -> &'static str {
        match self {
            NextAction::NextGate => "next-gate",
            NextAction::Dev => "dev",
            NextAction::Human => "human",
            NextAction::Retry => "retry",
            NextAction::Done => "done",
            NextAction::Stop => "stop",
            NextAction::Review => "review",
        }
    }
}

/// What happens next, and why.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Next {
    /// The action.
    pub action: NextAction,
    /// The gate to run (next-gate, retry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateName>,
    /// The human gate to await (human).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub human: Option<String>,
    /// One line for people.
    #[serde(default)]
    pub why: String,
    /// For done and stop: the status the run should end with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<EndStatus>,
    /// The review step to carry out (review).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<ReviewStep>,
}

impl Next {
    fn new(action: NextAction, gate: Option<GateName>, why: impl Into<String>) -> Self {
        Next {
            action,
            gate,
            human: None,
            why: why.into(),
            end: None,
            step: None,
        }
    }

    /// The same, with the status the run should end with.
    fn ending(mut self, end: EndStatus) -> Self {
        self.end = Some(end);
        self
    }

    /// `<action> [gate | human id | end status]`, for scripts (`status --next`).
    pub fn machine_line(&self) -> String {
        let arg = match self.action {
            NextAction::Human => self.human.clone(),
            NextAction::NextGate | NextAction::Retry => self.gate.map(|g| g.as_str().to_string()),
            NextAction::Done | NextAction::Stop => self.end.map(|e| e.as_str().to_string()),
            NextAction::Review => self.step.map(|s| s.as_str().to_string()),
            NextAction::Dev => None,
        };
        match arg {
            Some(a) => format!("{} {a}", self.action.as_str()),
            None => self.action.as_str().to_string(),
        }
    }

    /// The `NEXT: ...` line of a recording command.
    pub fn line(&self) -> String {
        match (&self.action, &self.human) {
            (NextAction::Human, Some(id)) => format!("NEXT: human {id}"),
            (NextAction::Review, _) => format!("NEXT: {}", self.machine_line()),
            (a, _) => format!("NEXT: {}", a.as_str()),
        }
    }
}

/// What a finished round means for the counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoundOutcome {
    /// The gate let the loop go on (MET, ABANDONED at GATE 0, CONFORME, PASS).
    Passed,
    /// The gate found gaps: a round is used.
    Failed,
    /// The output could not be trusted (structural failure, ERROR verdict).
    Structural,
    /// GATE 0 found the contract malformed: fixed by the orchestrator, no round used.
    Contract,
}

/// Classifies a finished round.
pub fn round_outcome(g: &GateFinished) -> RoundOutcome {
    if g.structural.is_some() {
        return RoundOutcome::Structural;
    }
    match (g.gate, g.verdict.kind) {
        (GateName::Floor, VerdictKind::Error) => RoundOutcome::Contract,
        (_, VerdictKind::Error) => RoundOutcome::Structural,
        (GateName::Floor, VerdictKind::Met | VerdictKind::Abandoned) => RoundOutcome::Passed,
        (GateName::Floor, _) => RoundOutcome::Failed,
        (GateName::Conformity, VerdictKind::Conforme) => RoundOutcome::Passed,
        (GateName::Conformity, _) => {
            if dev_gaps_in_round(g) > 0 {
                RoundOutcome::Failed
            } else {
                // Only person-decided leftovers (UNVERIFIABLE, ABANDONED,
                // out-of-scope): no developer round is spent.
                RoundOutcome::Passed
            }
        }
        (GateName::Security, VerdictKind::Pass | VerdictKind::Degraded) => RoundOutcome::Passed,
        (GateName::Security, _) => RoundOutcome::Failed,
    }
}

/// Gaps of a round that only the developer can close (NOT-MET criteria,
/// UNMET floor criteria, BLOCKING rows).
fn dev_gaps_in_round(g: &GateFinished) -> usize {
    match g.gate {
        GateName::Floor => g
            .floor_rows()
            .filter(|r| r.state == FloorState::NotMet)
            .count(),
        GateName::Conformity => g
            .criterion_rows()
            .filter(|r| r.status == CriterionStatus::NotMet)
            .count(),
        GateName::Security => g
            .security_rows()
            .count()
            .max(usize::from(g.verdict.kind == VerdictKind::Block)),
    }
}

/// A human gate the rules want opened, before it gets its id.
#[derive(Debug, Clone, PartialEq)]
pub struct GateRequest {
    /// Kind.
    pub kind: HumanGateKind,
    /// Gate that asked, if any.
    pub gate: Option<GateName>,
    /// Criterion, finding, path or gate.
    pub subject: String,
    /// One line.
    pub summary: String,
    /// What to show.
    pub evidence: serde_json::Value,
}

/// The human gates a finished round opens, given the state *before* it.
pub fn gates_for_round(before: &State, g: &GateFinished) -> Vec<GateRequest> {
    let mut out = Vec::new();
    let output = g.output.clone().unwrap_or_default();
    match round_outcome(g) {
        RoundOutcome::Structural => {
            if before.structural_strikes.get(g.gate) + 1 >= 2 {
                let why = g
                    .structural
                    .clone()
                    .or_else(|| g.verdict.reason.clone().map(|r| format!("ERROR({r})")))
                    .unwrap_or_else(|| g.verdict.to_string());
                out.push(GateRequest {
                    kind: HumanGateKind::Structural,
                    gate: Some(g.gate),
                    subject: g.gate.as_str().to_string(),
                    summary: format!(
                        "GATE {} {} failed structurally twice: {why}",
                        g.gate.number(),
                        g.gate
                    ),
                    evidence: json!({ "output": output, "structural": why }),
                });
            }
            return out;
        }
        RoundOutcome::Contract | RoundOutcome::Passed => {}
        RoundOutcome::Failed => {
            let used = before.counters.get(g.gate) + 1;
            if used >= before.caps.get(g.gate) {
                out.push(GateRequest {
                    kind: HumanGateKind::CapReached,
                    gate: Some(g.gate),
                    subject: g.gate.as_str().to_string(),
                    summary: format!(
                        "GATE {} {} used {used} of {} rounds: last verdict {}",
                        g.gate.number(),
                        g.gate,
                        before.caps.get(g.gate),
                        g.verdict
                    ),
                    evidence: json!({ "output": output, "rows": g.rows, "verdict": g.verdict }),
                });
            }
        }
    }
    if g.gate == GateName::Conformity {
        let rows: Vec<&CriterionRow> = g.criterion_rows().collect();
        for r in rows
            .iter()
            .filter(|r| r.status == CriterionStatus::Abandoned)
        {
            out.push(GateRequest {
                kind: HumanGateKind::Abandoned,
                gate: Some(g.gate),
                subject: r.id.clone(),
                summary: format!("criterion {} abandoned: {}", r.id, one_line(&r.detail)),
                evidence: json!({ "rows": [r], "output": output }),
            });
        }
        for path in g.out_of_scope() {
            out.push(GateRequest {
                kind: HumanGateKind::OutOfScope,
                gate: Some(g.gate),
                subject: path.clone(),
                summary: format!("{path} changed outside FILE SCOPE"),
                evidence: json!({ "paths": [path], "output": output }),
            });
        }
        let not_met = rows.iter().any(|r| r.status == CriterionStatus::NotMet);
        if !not_met {
            for r in rows
                .iter()
                .filter(|r| r.status == CriterionStatus::Unverifiable)
            {
                out.push(GateRequest {
                    kind: HumanGateKind::Unverifiable,
                    gate: Some(g.gate),
                    subject: r.id.clone(),
                    summary: format!("criterion {} UNVERIFIABLE: {}", r.id, one_line(&r.detail)),
                    evidence: json!({ "rows": [r], "output": output }),
                });
            }
        }
    }
    out
}

/// The human gates a set of finding verdicts opens: one per UNVERIFIABLE finding.
pub fn gates_for_findings(findings: &[Finding]) -> Vec<GateRequest> {
    findings
        .iter()
        .filter(|f| f.verdict == FindingVerdict::Unverifiable)
        .map(|f| GateRequest {
            kind: HumanGateKind::Unverifiable,
            gate: None,
            subject: f.id.clone(),
            summary: format!("finding {} UNVERIFIABLE: {}", f.id, one_line(&f.note)),
            evidence: json!({ "findings": [f] }),
        })
        .collect()
}

/// The human gates a finished dispatch opens, given the state *before* it:
/// a developer dispatch that failed (exit status, timeout, no answer) for
/// the second time in a row opens a `structural` gate. A failed gate agent
/// opens nothing here: its round is recorded structural, and
/// [`gates_for_round`] applies.
pub fn gates_for_dispatch(
    before: &State,
    started: &AgentStarted,
    f: &AgentFinished,
) -> Vec<GateRequest> {
    match started.role {
        AgentRole::Reviewer => review::gates_for_reviewer(before, started, f),
        AgentRole::Developer => failed_twice(
            "developer",
            DEVELOPER_SUBJECT,
            before.dev_strikes,
            started,
            f,
        ),
        _ => Vec::new(),
    }
}

/// The `structural` gate a failed dispatch of `who` opens when it is the
/// second failure in a row (`strikes` failures before it); an interrupted
/// dispatch is the engine's doing and opens nothing.
fn failed_twice(
    who: &str,
    subject: &str,
    strikes: u32,
    started: &AgentStarted,
    f: &AgentFinished,
) -> Vec<GateRequest> {
    if f.interrupted || f.succeeded() || strikes + 1 < 2 {
        return Vec::new();
    }
    let why = f.failure().unwrap_or_default();
    vec![GateRequest {
        kind: HumanGateKind::Structural,
        gate: None,
        subject: subject.to_string(),
        summary: format!("the {who} dispatch failed twice: {}", one_line(&why)),
        evidence: json!({ "dispatch": f.dispatch, "log": started.log, "failure": why }),
    }]
}

/// True when the work of the current iteration was handed to the developer
/// (the iteration began after the last gate round), so the next developer
/// dispatch needs no new `dev.dispatched`.
pub fn dev_handed_off(s: &State) -> bool {
    s.marks.last_dev_seq > s.marks.last_gate_seq
}

/// The dispatch that answered the round of `gate` in progress when its
/// answer was never recorded as the round (the engine stopped in between):
/// the round is recorded from that answer instead of dispatching again.
pub fn unrecorded_answer(s: &State, gate: GateName) -> Option<&AgentFinished> {
    let cur = s.current_gate.as_ref().filter(|c| c.gate == gate)?;
    let d = s.agents.iter().rev().find(|d| {
        d.started.gate == Some(gate)
            && d.started.iteration == cur.iteration
            && d.started.round == Some(cur.round)
    })?;
    let f = d.finished.as_ref()?;
    (!f.interrupted && d.started_seq > s.marks.last_gate_seq).then_some(f)
}

/// True when a developer dispatch of iteration `n` finished successfully.
pub fn dev_done(s: &State, n: u32) -> bool {
    s.agents.iter().any(|a| {
        a.started.role == AgentRole::Developer && a.started.iteration == n && a.succeeded()
    })
}

/// Turns requests into `human.requested` payloads with stable ids
/// `hg-<iter>-<gate>-<n>` (`findings` or `manual` when no gate asked).
pub fn assign_ids(
    state: &State,
    iteration: u32,
    reqs: Vec<GateRequest>,
    scope: &str,
) -> Vec<HumanRequest> {
    let mut taken: Vec<String> = state
        .human_gates
        .iter()
        .map(|g| g.request.id.clone())
        .collect();
    reqs.into_iter()
        .map(|r| {
            let prefix = format!("hg-{iteration}-{}", r.gate.map_or(scope, |g| g.as_str()));
            let mut n = 1;
            while taken.contains(&format!("{prefix}-{n}")) {
                n += 1;
            }
            let id = format!("{prefix}-{n}");
            taken.push(id.clone());
            HumanRequest {
                id,
                kind: r.kind,
                gate: r.gate,
                iteration,
                subject: r.subject,
                summary: r.summary,
                options: r.kind.options().to_vec(),
                evidence: r.evidence,
                expires: None,
                extra: Default::default(),
            }
        })
        .collect()
}

/// What the orchestrator does next, from the state alone.
pub fn next(s: &State) -> Next {
    if let Some(e) = &s.ended {
        return Next::new(NextAction::Done, None, "the run has ended").ending(e.status);
    }
    if let Some(g) = s.open_human_gates().next() {
        return Next {
            action: NextAction::Human,
            gate: g.request.gate,
            human: Some(g.request.id.clone()),
            why: format!("waiting on a person: {} ({})", g.request.id, g.request.kind),
            end: None,
            step: None,
        };
    }
    if let Some((id, d, how)) = s.human_gates.iter().find_map(|g| {
        let d = g.outcome()?;
        let how = if g.expired.is_some() {
            "expired with"
        } else {
            "decided"
        };
        matches!(d, Decision::TakeOver | Decision::Abort | Decision::Reject).then_some((
            &g.request.id,
            d,
            how,
        ))
    }) {
        let end = match d {
            Decision::Reject => EndStatus::NotConformant,
            Decision::Abort => EndStatus::Aborted,
            _ => EndStatus::Stopped,
        };
        return Next::new(
            NextAction::Stop,
            None,
            format!("{id} {how} {d}: record the end of the run"),
        )
        .ending(end);
    }
    if s.run.is_none() && s.seq == 0 {
        return Next::new(NextAction::NextGate, Some(GateName::Floor), "no run yet");
    }
    if s.run.as_ref().is_some_and(|r| r.engine) && dev_handed_off(s) {
        // A run driven by `loopwatch run`: every iteration opens with a
        // developer dispatch, and its gates wait for that dispatch to succeed.
        let n = s.iteration_number().max(1);
        if !dev_done(s, n) {
            return Next::new(
                NextAction::Dev,
                None,
                format!("iteration {n}: the developer's work has not finished"),
            );
        }
        if let Some(green) = review::green_step(s) {
            return green;
        }
    }
    let Some(g) = s.latest_round() else {
        return Next::new(
            NextAction::NextGate,
            Some(GateName::Floor),
            "GATE 0 has not run yet",
        );
    };
    if s.marks.last_dev_seq > s.marks.last_gate_seq {
        return Next::new(
            NextAction::NextGate,
            Some(GateName::Floor),
            "new developer work: re-run from GATE 0",
        );
    }
    let decided = |kind: HumanGateKind, want: Decision| {
        s.human_gates.iter().any(|h| {
            h.request.kind == kind
                && h.request.gate == Some(g.gate)
                && h.request.iteration == g.iteration
                && h.outcome() == Some(want)
        })
    };
    match round_outcome(g) {
        RoundOutcome::Structural => {
            return Next::new(
                NextAction::Retry,
                Some(g.gate),
                format!(
                    "GATE {} output was not usable: run it again",
                    g.gate.number()
                ),
            );
        }
        RoundOutcome::Contract => {
            return Next::new(
                NextAction::Retry,
                Some(g.gate),
                "the contract is malformed: fix it, then re-run GATE 0",
            );
        }
        RoundOutcome::Failed | RoundOutcome::Passed => {}
    }
    let mut gaps = dev_gaps_in_round(g);
    if g.gate == GateName::Conformity {
        gaps += usize::from(decided(HumanGateKind::Abandoned, Decision::Lift));
        gaps += usize::from(decided(HumanGateKind::OutOfScope, Decision::Deny));
    }
    if gaps > 0 {
        return Next::new(
            NextAction::Dev,
            None,
            format!(
                "GATE {} {}: {gaps} gap(s) back to the developer",
                g.gate.number(),
                g.verdict
            ),
        );
    }
    if g.gate == GateName::Conformity
        && let Some(n) = review::after_conformity(s, g.iteration)
    {
        return n;
    }
    match g.gate.next() {
        Some(n) => Next::new(
            NextAction::NextGate,
            Some(n),
            format!("GATE {} passed: run GATE {}", g.gate.number(), n.number()),
        ),
        None => {
            let end = if s.accepted_partial() {
                EndStatus::Partial
            } else {
                EndStatus::Complete
            };
            Next::new(
                NextAction::Done,
                None,
                "every gate passed: record the end of the run",
            )
            .ending(end)
        }
    }
}

pub(crate) fn one_line(s: &str) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > 160 {
        let mut t: String = flat.chars().take(160).collect();
        t.push('…');
        t
    } else {
        flat
    }
}
