//! The review stage's rules: after GATE 1 passes with no developer gap, a
//! run with a review stage goes reviewer → finding-verifier graph → triage
//! → verify-by-test (when enabled and the triage accepted blocking
//! findings) → the stage's end; accepted blocking findings left go back to
//! the developer (a review round, capped like the gates), a clean review
//! goes on to GATE 2. After the developer's next dispatch, red tests handed
//! over are rerun before GATE 0 (the `green` step).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{GateRequest, Next, green, one_line};
use crate::model::event::{AgentFinished, AgentRole, AgentStarted, HumanRequest, ReviewFinished};
use crate::model::kinds::Effect;
use crate::model::state::{AgentDispatch, HumanGate, Iteration, State};
use crate::model::triage::TriageSeverity;
use crate::model::types::*;

/// The subject of the human gate opened when the review used its rounds.
pub const REVIEW_SUBJECT: &str = "review";

/// The subject of the human gate opened when the reviewer failed twice.
pub const REVIEWER_SUBJECT: &str = "reviewer";

/// The subject of the `structural` gate a usage limit of the review stage
/// opens: the role whose agent answered it (`None`: not a review role).
pub fn limit_subject(role: AgentRole) -> Option<&'static str> {
    match role {
        AgentRole::Reviewer => Some(REVIEWER_SUBJECT),
        AgentRole::FindingVerifier | AgentRole::Triage | AgentRole::VerifyByTest => {
            Some(role.as_str())
        }
        AgentRole::Developer | AgentRole::Verifier | AgentRole::Auditor => None,
    }
}

/// True for the `structural` gate a usage limit of the review stage opened.
pub fn is_limit_gate(req: &HumanRequest) -> bool {
    req.kind == HumanGateKind::Structural
        && req.gate.is_none()
        && AgentRole::ALL
            .iter()
            .any(|r| limit_subject(*r) == Some(req.subject.as_str()))
}

/// The step of the review stage to carry out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ReviewStep {
    /// Dispatch the reviewer.
    Review,
    /// Run the finding-verifier graph on the review.
    Verify,
    /// Write, validate and record the triage file.
    Triage,
    /// Run verify-by-test on the accepted blocking findings.
    VerifyByTest,
    /// Record the end of the stage (`review.finished`).
    Done,
    /// Rerun the red tests handed to the developer.
    Green,
}

impl ReviewStep {
    /// The token printed after `review`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewStep::Review => "review",
            ReviewStep::Verify => "verify",
            ReviewStep::Triage => "triage",
            ReviewStep::VerifyByTest => "verify-by-test",
            ReviewStep::Done => "done",
            ReviewStep::Green => "green",
        }
    }
}

/// Which review gate a human gate is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewGate {
    /// The review used its rounds.
    Cap,
    /// The reviewer dispatch failed twice.
    Reviewer,
    /// Review rounds made no progress.
    Stagnant,
}

/// The review gate `req` is, if it is one.
pub fn gate_role(req: &HumanRequest) -> Option<ReviewGate> {
    if req.gate.is_some() {
        return None;
    }
    match (req.kind, req.subject.as_str()) {
        (HumanGateKind::CapReached, REVIEW_SUBJECT) => Some(ReviewGate::Cap),
        (HumanGateKind::Structural, REVIEWER_SUBJECT) => Some(ReviewGate::Reviewer),
        (HumanGateKind::Stagnant, REVIEW_SUBJECT) => Some(ReviewGate::Stagnant),
        _ => None,
    }
}

/// True when the run has a review stage.
pub fn has_review(s: &State) -> bool {
    s.run.as_ref().is_some_and(|r| r.review.is_some())
}

fn review_next(step: ReviewStep, why: String) -> Next {
    Next::Review { step, why }
}

/// The reviewer's successful dispatch for iteration `n` since the last gate round.
pub fn reviewer_dispatch(s: &State, n: u32) -> Option<&AgentDispatch> {
    s.agents.iter().rev().find(|a| {
        a.started.role == AgentRole::Reviewer
            && a.started.iteration == n
            && a.started_seq > s.marks.last_gate_seq
            && a.succeeded()
    })
}

/// True for the reviewer's word for a blocking finding (🔴, blocking, critical).
pub fn is_blocking(severity: &str) -> bool {
    triage_severity(severity) == TriageSeverity::Blocking
}

/// The triage severity of a reviewer's severity word: 🔴/blocking/critical,
/// 🟠/major/high, 🟡/minor/medium/low, ⚪/🔵/nit/info; anything else major
/// (to be fixed, never blocking on a guess).
pub fn triage_severity(severity: &str) -> TriageSeverity {
    let s = severity.trim().to_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| s == *w || s.starts_with(w));
    if has(&["🔴", "blocking", "blocker", "critical"]) {
        TriageSeverity::Blocking
    } else if has(&["🟡", "minor", "medium", "low"]) {
        TriageSeverity::Minor
    } else if has(&["⚪", "🔵", "nit", "info"]) {
        TriageSeverity::Nit
    } else {
        TriageSeverity::Major
    }
}

/// The accepted blocking findings of an iteration, in triage order; a
/// finding a person decided on (its `unverifiable-finding` gate) is the
/// person's, never the triage's, and a finding raised again never is one,
/// whatever its triage says.
pub fn accepted_blocking(s: &State, it: &Iteration) -> Vec<String> {
    let Some(b) = it.triage.as_ref().and_then(|t| t.buckets.as_ref()) else {
        return Vec::new();
    };
    b.accepted
        .iter()
        .filter(|id| {
            it.findings.iter().find(|f| &f.id == *id).is_some_and(|f| {
                is_blocking(&f.severity) && crate::model::ledger::raised_again_of(f).is_none()
            }) && person_on_finding(s, it.iteration, id).is_none()
        })
        .cloned()
        .collect()
}

/// What a person decided (or an expiry applied) on finding `id` of
/// iteration `n`: its closed `unverifiable-finding` gate and the effect.
pub fn person_on_finding<'a>(s: &'a State, n: u32, id: &str) -> Option<(&'a HumanGate, Effect)> {
    s.human_gates.iter().find_map(|g| {
        let r = &g.request;
        if r.kind != HumanGateKind::UnverifiableFinding || r.iteration != n || r.subject != id {
            return None;
        }
        Some((g, g.effect()?))
    })
}

/// The findings of iteration `n` a person asked to be fixed, in finding order.
pub fn fixed(s: &State, n: u32) -> Vec<String> {
    let Some(it) = s.iteration(n) else {
        return Vec::new();
    };
    it.findings
        .iter()
        .filter(|f| matches!(person_on_finding(s, n, &f.id), Some((_, Effect::Fix))))
        .map(|f| f.id.clone())
        .collect()
}

/// Who closed a finding's gate, and why, in a line: `by <who>: <reason>`,
/// or `when the gate expired` for an expiry.
pub fn by_whom(g: &HumanGate) -> String {
    match &g.decision {
        Some(d) => format!(
            "by {}: {}",
            one_line(&d.decision.by),
            one_line(&d.decision.reason)
        ),
        None => "when the gate expired".to_string(),
    }
}

/// Puts the findings a person decided on where the decision says, in a
/// triage file of iteration `n`: `dismiss` → rejected (`dismissed by …`),
/// `fix` → accepted (`fix asked by …`), each with the person's reason.
pub fn apply_person(t: &mut crate::model::triage::Triage, s: &State, n: u32) {
    let all: Vec<crate::model::triage::TriageFinding> = t
        .accepted
        .iter()
        .chain(&t.deferred)
        .chain(&t.rejected)
        .cloned()
        .collect();
    for mut entry in all {
        let Some((g, effect)) = person_on_finding(s, n, &entry.id) else {
            continue;
        };
        let dismissed = match effect {
            Effect::Dismiss => true,
            Effect::Fix => false,
            _ => continue,
        };
        let id = entry.id.clone();
        for b in [&mut t.accepted, &mut t.deferred, &mut t.rejected] {
            b.retain(|e| e.id != id);
        }
        if dismissed {
            entry.reason = Some(format!("dismissed {}", by_whom(g)));
            t.rejected.push(entry);
        } else {
            entry.reason = Some(format!("fix asked {}", by_whom(g)));
            t.accepted.push(entry);
        }
    }
}

/// What comes after a GATE 1 round that passed with no developer gap, in a
/// run with a review stage (`None`: on to GATE 2).
pub fn after_conformity(s: &State, n: u32) -> Option<Next> {
    if !has_review(s) {
        return None;
    }
    let it = s.iteration(n)?;
    let progress = it.review.as_ref();
    if let Some(f) = progress.and_then(|p| p.finished.as_ref()) {
        if f.gaps == 0 {
            return None;
        }
        return Some(Next::Dev {
            why: format!(
                "review round {}: {} gap(s) back to the developer",
                f.round, f.gaps
            ),
        });
    }
    if reviewer_dispatch(s, n).is_none() {
        return Some(review_next(
            ReviewStep::Review,
            format!("GATE 1 passed: the reviewer reviews iteration {n}"),
        ));
    }
    if !progress.is_some_and(|p| p.verified) {
        let why = match progress {
            Some(p) if !p.lanes.is_empty() => format!(
                "the finding verifier: {}/{} finding(s) verified",
                p.final_lanes(),
                p.lanes.len()
            ),
            _ => "the finding verifier checks the review's findings".to_string(),
        };
        return Some(review_next(ReviewStep::Verify, why));
    }
    if it.triage.is_none() {
        return Some(review_next(
            ReviewStep::Triage,
            format!("{} finding(s) verified: triage them", it.findings.len()),
        ));
    }
    let blocking = accepted_blocking(s, it);
    let vbt = s.run.as_ref().and_then(|r| r.review.as_ref());
    if vbt.is_some_and(|v| v.verify_by_test) && !blocking.is_empty() && it.verify_by_test.is_none()
    {
        return Some(review_next(
            ReviewStep::VerifyByTest,
            format!(
                "{} accepted blocking finding(s): write and run their repro tests",
                blocking.len()
            ),
        ));
    }
    Some(review_next(
        ReviewStep::Done,
        format!("the review of iteration {n} is over: record its end"),
    ))
}

/// The green step, when red tests handed to the developer must be rerun now.
pub fn green_step(s: &State) -> Option<Next> {
    if !has_review(s) {
        return None;
    }
    let n = green::pending(s)?;
    Some(review_next(
        ReviewStep::Green,
        format!("the developer of iteration {n} finished: rerun its red tests"),
    ))
}

/// The `review.finished` of iteration `n` as the rules count it (round, the
/// accepted blocking findings, the findings a person asked to be fixed, the
/// gap lines).
pub fn finish(s: &State, n: u32, results: Option<String>) -> ReviewFinished {
    let blocking = s
        .iteration(n)
        .map(|it| accepted_blocking(s, it))
        .unwrap_or_default();
    let fixed = fixed(s, n);
    let gaps = blocking.len() + fixed.len() + green::gaps(s).len();
    // Every review of the run counts, clean or not; only those that send
    // work back use the cap (`ReviewCounters::rounds`).
    let before = s
        .review_iterations
        .iter()
        .filter(|it| it.iteration != n)
        .filter(|it| it.review.as_ref().is_some_and(|r| r.finished.is_some()))
        .count();
    ReviewFinished {
        iteration: n,
        round: u32::try_from(before + 1).unwrap_or(u32::MAX),
        blocking,
        fixed,
        gaps: u32::try_from(gaps).unwrap_or(u32::MAX),
        results,
        extra: Default::default(),
    }
}

/// The human gates the end of a review opens, given the state before it:
/// a `cap-reached` gate when this round sending work back uses the last one.
pub fn gates_for_review(before: &State, r: &ReviewFinished) -> Vec<GateRequest> {
    let Some(c) = before.review else {
        return Vec::new();
    };
    if r.gaps == 0 || c.rounds + 1 < c.cap {
        return Vec::new();
    }
    vec![GateRequest {
        kind: HumanGateKind::CapReached,
        gate: None,
        subject: REVIEW_SUBJECT.to_string(),
        summary: format!(
            "the review used {} of {} rounds: {} accepted blocking finding(s) left",
            c.rounds + 1,
            c.cap,
            r.blocking.len()
        ),
        evidence: json!({ "blocking": r.blocking, "gaps": r.gaps, "results": r.results }),
    }]
}

/// The human gate a failed reviewer dispatch opens the second time in a row.
pub fn gates_for_reviewer(
    before: &State,
    started: &AgentStarted,
    f: &AgentFinished,
) -> Vec<GateRequest> {
    if started.role != AgentRole::Reviewer {
        return Vec::new();
    }
    let strikes = before.review.map_or(0, |c| c.strikes);
    super::failed_twice("reviewer", REVIEWER_SUBJECT, strikes, started, f)
}

/// The reviewer's input: `MODE: review`, `CONTRACT:`, `DIFF:`, `TEST:`.
pub fn reviewer_input(s: &State) -> String {
    let Some(run) = s.run.as_ref() else {
        return String::new();
    };
    // The verifier's three lines, under the mode.
    format!("MODE: review\n{}", super::verifier_input(run))
}

/// The hand-off lines of a review that sent work back: one per accepted
/// blocking finding (id, severity, place, claim; its red test when one was
/// confirmed), one per finding a person asked to be fixed (with the
/// person's reason), then the red tests that did not turn green.
pub fn handoff_lines(s: &State, it: &Iteration) -> Vec<String> {
    if it
        .review
        .as_ref()
        .and_then(|p| p.finished.as_ref())
        .is_none()
    {
        return Vec::new();
    }
    let mut out: Vec<String> = sent_back_ids(it)
        .into_iter()
        .map(|id| finding_line(s, it, id))
        .collect();
    out.extend(green::gaps(s));
    out
}

/// The findings a finished review handed back to the developer, by id:
/// its accepted blocking ones, then those a person asked to be fixed
/// (none before its end).
pub fn sent_back_ids(it: &Iteration) -> Vec<&str> {
    it.review
        .as_ref()
        .and_then(|p| p.finished.as_ref())
        .map(|f| {
            f.blocking
                .iter()
                .chain(&f.fixed)
                .map(String::as_str)
                .collect()
        })
        .unwrap_or_default()
}

/// The hand-off line of finding `id` of iteration `it`: id, severity,
/// place, claim, then its red test when one was confirmed, or who asked for
/// it to be fixed, and why.
fn finding_line(s: &State, it: &Iteration, id: &str) -> String {
    let Some(x) = it.findings.iter().find(|x| x.id == id) else {
        return format!("  {id}");
    };
    let place = match (x.path.is_empty(), x.lines.is_empty()) {
        (false, false) => format!("{}:{}", x.path, x.lines),
        (false, true) => x.path.clone(),
        _ => "(no place)".to_string(),
    };
    let mut line = format!(
        "  {} [{}] {place} — {}",
        x.id,
        x.severity,
        one_line(&x.claim)
    );
    if let Some((g, Effect::Fix)) = person_on_finding(s, it.iteration, id) {
        line.push_str(&format!(
            " — the finding verifier could not check it; fix asked {}",
            by_whom(g)
        ));
    } else if let Some(t) = red_test(it, id) {
        line.push_str(&format!(
                    " — a failing repro test already exists at {t}; make it green; do not delete or weaken it"
                ));
    }
    line
}

/// The hand-off lines of the findings of iteration `n` a person asked to be
/// fixed (a run without a review stage hands them back with its gaps).
pub fn fixed_lines(s: &State, n: u32) -> Vec<String> {
    let Some(it) = s.iteration(n) else {
        return Vec::new();
    };
    fixed(s, n)
        .iter()
        .map(|id| finding_line(s, it, id))
        .collect()
}

/// The test reference of a finding's confirmed repro test, if it has one.
fn red_test<'a>(it: &'a Iteration, id: &str) -> Option<&'a str> {
    if let Some(t) = it
        .verify_by_test
        .as_ref()
        .and_then(|v| v.red_tests.iter().find(|t| t.issue == id))
    {
        return Some(t.test_ref.as_str()).filter(|r| !r.is_empty());
    }
    it.verifications
        .iter()
        .find(|v| v.finding == id && v.result == VerifyOutcome::Confirmed && !v.test_ref.is_empty())
        .map(|v| v.test_ref.as_str())
}

/// True when the last thing the loop did was a review sending work back.
pub fn sent_back(s: &State) -> bool {
    let Some(g) = s.latest_round() else {
        return false;
    };
    g.gate == GateName::Conformity
        && s.iteration(g.iteration)
            .and_then(|it| it.review.as_ref())
            .and_then(|p| p.finished.as_ref())
            .is_some_and(|f| f.gaps > 0)
}

mod triage;
pub use triage::{check_triage, derive_triage, place_raised_again};

#[cfg(test)]
mod tests;
