//! The loop's rules: what a finished round means, which human gates it
//! opens, and what the orchestrator does next (PROTOCOL §1, §7).
//!
//! Everything here is a pure function of the state and the round, so the
//! recorder, `status`, the TUI and replay all agree.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::event::*;
use super::kinds::Effect;
use super::state::*;
use super::types::*;

pub mod green;
mod handoff;
mod limit;
pub mod progress;
pub mod review;
pub use handoff::{
    DEVELOPER_SUBJECT, NOTE_HANDOFF_MAX, auditor_input, developer_input, handoff_lines,
    is_developer_gate, notes_section, pending_notes, verifier_input,
};
pub use limit::pending_limit;
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

/// What happens next: each step with what it needs, and why (one line
/// for people).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "NextWire", try_from = "NextWire")]
pub enum Next {
    /// Run `gate` (the next one in loop order, or GATE 0 after new work).
    Gate {
        /// The gate.
        gate: GateName,
        /// Why.
        why: String,
    },
    /// Run the same gate again (structural failure, contract error).
    Retry {
        /// The gate.
        gate: GateName,
        /// Why.
        why: String,
    },
    /// Hand the gaps back to the developer.
    Dev {
        /// Why.
        why: String,
    },
    /// Await the human gate `id`.
    Human {
        /// The gate's id.
        id: String,
        /// The loop's gate that asked, when one did.
        gate: Option<GateName>,
        /// Why.
        why: String,
    },
    /// A step of the review stage.
    Review {
        /// The step.
        step: ReviewStep,
        /// Why.
        why: String,
    },
    /// The loop is over: record the end of the run with `end`.
    Done {
        /// The status the run ends with.
        end: EndStatus,
        /// Why.
        why: String,
    },
    /// A person stopped the run: record its end with `end`, do nothing else.
    Stop {
        /// The status the run ends with.
        end: EndStatus,
        /// Why.
        why: String,
    },
}

impl Default for Next {
    /// A run starts at GATE 0.
    fn default() -> Self {
        Next::Gate {
            gate: GateName::Floor,
            why: String::new(),
        }
    }
}

impl Next {
    /// The action's token and exit code.
    pub fn action(&self) -> NextAction {
        match self {
            Next::Gate { .. } => NextAction::NextGate,
            Next::Retry { .. } => NextAction::Retry,
            Next::Dev { .. } => NextAction::Dev,
            Next::Human { .. } => NextAction::Human,
            Next::Review { .. } => NextAction::Review,
            Next::Done { .. } => NextAction::Done,
            Next::Stop { .. } => NextAction::Stop,
        }
    }

    /// One line for people.
    pub fn why(&self) -> &str {
        match self {
            Next::Gate { why, .. }
            | Next::Retry { why, .. }
            | Next::Dev { why }
            | Next::Human { why, .. }
            | Next::Review { why, .. }
            | Next::Done { why, .. }
            | Next::Stop { why, .. } => why,
        }
    }

    /// The gate the step runs or waits on, when there is one.
    pub fn gate(&self) -> Option<GateName> {
        match self {
            Next::Gate { gate, .. } | Next::Retry { gate, .. } => Some(*gate),
            Next::Human { gate, .. } => *gate,
            _ => None,
        }
    }

    /// `<action> [gate | human id | end status | step]`, for scripts (`status --next`).
    pub fn machine_line(&self) -> String {
        let action = self.action().as_str();
        match self {
            Next::Gate { gate, .. } | Next::Retry { gate, .. } => format!("{action} {gate}"),
            Next::Human { id, .. } => format!("{action} {id}"),
            Next::Done { end, .. } | Next::Stop { end, .. } => {
                format!("{action} {}", end.as_str())
            }
            Next::Review { step, .. } => format!("{action} {}", step.as_str()),
            Next::Dev { .. } => action.to_string(),
        }
    }

    /// The `NEXT: ...` line of a recording command.
    pub fn line(&self) -> String {
        match self {
            Next::Human { .. } | Next::Review { .. } => format!("NEXT: {}", self.machine_line()),
            _ => format!("NEXT: {}", self.action().as_str()),
        }
    }
}

// `Next` as `state.json` and `status --json` write it.
/// What happens next, and why.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "Next")]
struct NextWire {
    /// The action.
    action: NextAction,
    /// The gate to run (next-gate, retry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    gate: Option<GateName>,
    /// The human gate to await (human).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    human: Option<String>,
    /// One line for people.
    #[serde(default)]
    why: String,
    /// For done and stop: the status the run should end with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    end: Option<EndStatus>,
    /// The review step to carry out (review).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    step: Option<ReviewStep>,
}

impl From<Next> for NextWire {
    fn from(n: Next) -> Self {
        let action = n.action();
        let gate = n.gate();
        match n {
            Next::Gate { why, .. } | Next::Retry { why, .. } | Next::Dev { why } => NextWire {
                action,
                gate,
                why,
                ..NextWire::default()
            },
            Next::Human { id, why, .. } => NextWire {
                action,
                gate,
                human: Some(id),
                why,
                ..NextWire::default()
            },
            Next::Review { step, why } => NextWire {
                action,
                why,
                step: Some(step),
                ..NextWire::default()
            },
            Next::Done { end, why } | Next::Stop { end, why } => NextWire {
                action,
                why,
                end: Some(end),
                ..NextWire::default()
            },
        }
    }
}

impl TryFrom<NextWire> for Next {
    type Error = String;
    /// A `next` read from a `state.json` (possibly a foreign one): each
    /// action needs its field, except `next-gate`, which without a gate
    /// means the start of the loop, GATE 0.
    fn try_from(w: NextWire) -> Result<Self, String> {
        let missing = |field: &str| format!("next: {} without `{field}`", w.action.as_str());
        let why = w.why.clone();
        Ok(match w.action {
            NextAction::NextGate => Next::Gate {
                gate: w.gate.unwrap_or(GateName::Floor),
                why,
            },
            NextAction::Retry => Next::Retry {
                gate: w.gate.ok_or_else(|| missing("gate"))?,
                why,
            },
            NextAction::Dev => Next::Dev { why },
            NextAction::Human => Next::Human {
                id: w.human.clone().ok_or_else(|| missing("human"))?,
                gate: w.gate,
                why,
            },
            NextAction::Review => Next::Review {
                step: w.step.ok_or_else(|| missing("step"))?,
                why,
            },
            NextAction::Done => Next::Done {
                end: w.end.ok_or_else(|| missing("end"))?,
                why,
            },
            NextAction::Stop => Next::Stop {
                end: w.end.ok_or_else(|| missing("end"))?,
                why,
            },
        })
    }
}

impl JsonSchema for Next {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        NextWire::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        NextWire::json_schema(generator)
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
            kind: HumanGateKind::UnverifiableFinding,
            gate: None,
            subject: f.id.clone(),
            summary: format!("finding {} UNVERIFIABLE: {}", f.id, one_line(&f.note)),
            evidence: json!({ "findings": [f] }),
        })
        .collect()
}

/// Where a human gate came from, in a person's words: the loop's gate
/// that asked (`GATE 1 conformity`), else `review`, `finding verifier`,
/// `developer`, `contract`, or `by hand` (`loopwatch ask`).
pub fn origin(req: &HumanRequest) -> String {
    if let Some(g) = req.gate {
        return format!("GATE {} {g}", g.number());
    }
    if review::gate_role(req).is_some() || review::is_limit_gate(req) {
        "review"
    } else if is_developer_gate(req) {
        "developer"
    } else if req.id.contains("-manual-") {
        "by hand"
    } else if req.is_finding_gate() {
        "finding verifier"
    } else if req.kind == HumanGateKind::ContractChanged {
        "contract"
    } else if req.kind == HumanGateKind::Budget {
        "budget"
    } else {
        "by hand"
    }
    .to_string()
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
    (!f.interrupted && !d.is_limited() && d.started_seq > s.marks.last_gate_seq).then_some(f)
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
                options: r.kind.options(),
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
        return Next::Done {
            end: e.status,
            why: "the run has ended".into(),
        };
    }
    if let Some(g) = s.open_human_gates().next() {
        return Next::Human {
            id: g.request.id.clone(),
            gate: g.request.gate,
            why: format!("waiting on a person: {} ({})", g.request.id, g.request.kind),
        };
    }
    if let Some((id, d, how, end)) = s.human_gates.iter().find_map(|g| {
        let d = g.outcome()?;
        let end = g.request.kind.effect(d)?.ends()?;
        let how = if g.expired.is_some() {
            "expired with"
        } else {
            "decided"
        };
        Some((&g.request.id, d, how, end))
    }) {
        return Next::Stop {
            end,
            why: format!("{id} {how} {d}: record the end of the run"),
        };
    }
    if s.run.is_none() && s.seq == 0 {
        return gate(GateName::Floor, "no run yet");
    }
    if s.run.as_ref().is_some_and(|r| r.engine) && dev_handed_off(s) {
        // A run driven by `loopwatch run`: every iteration opens with a
        // developer dispatch, and its gates wait for that dispatch to succeed.
        let n = s.iteration_number().max(1);
        if !dev_done(s, n) {
            return Next::Dev {
                why: format!("iteration {n}: the developer's work has not finished"),
            };
        }
        if let Some(green) = review::green_step(s) {
            return green;
        }
    }
    let Some(g) = s.latest_round() else {
        return gate(GateName::Floor, "GATE 0 has not run yet");
    };
    if s.marks.last_dev_seq > s.marks.last_gate_seq {
        return gate(GateName::Floor, "new developer work: re-run from GATE 0");
    }
    if s.marks.last_contract_seq > s.marks.last_gate_seq {
        return gate(
            GateName::Floor,
            "the contract as judged changed: re-run from GATE 0",
        );
    }
    // Gates of this round whose outcome hands their subject back.
    let to_developer = s
        .human_gates
        .iter()
        .filter(|h| {
            h.request.gate == Some(g.gate)
                && h.request.iteration == g.iteration
                && h.effect() == Some(Effect::ToDeveloper)
        })
        .count();
    match round_outcome(g) {
        RoundOutcome::Structural => {
            return Next::Retry {
                gate: g.gate,
                why: format!(
                    "GATE {} output was not usable: run it again",
                    g.gate.number()
                ),
            };
        }
        RoundOutcome::Contract => {
            return Next::Retry {
                gate: g.gate,
                why: "the contract is malformed: fix it, then re-run GATE 0".into(),
            };
        }
        RoundOutcome::Failed | RoundOutcome::Passed => {}
    }
    // Findings a person asked to be fixed: the review stage hands them back
    // itself; a run without one hands them back with the round's gaps.
    let fixed = if review::has_review(s) {
        0
    } else {
        review::fixed(s, g.iteration).len()
    };
    let gaps = dev_gaps_in_round(g) + to_developer + fixed;
    if gaps > 0 {
        return Next::Dev {
            why: format!(
                "GATE {} {}: {gaps} gap(s) back to the developer",
                g.gate.number(),
                g.verdict
            ),
        };
    }
    if g.gate == GateName::Conformity
        && let Some(n) = review::after_conformity(s, g.iteration)
    {
        return n;
    }
    match g.gate.next() {
        Some(n) => gate(
            n,
            format!("GATE {} passed: run GATE {}", g.gate.number(), n.number()),
        ),
        None => Next::Done {
            end: if s.accepted_partial() {
                EndStatus::Partial
            } else {
                EndStatus::Complete
            },
            why: "every gate passed: record the end of the run".into(),
        },
    }
}

fn gate(gate: GateName, why: impl Into<String>) -> Next {
    Next::Gate {
        gate,
        why: why.into(),
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
