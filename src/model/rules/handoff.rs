//! What each dispatch of `loopwatch run` is handed, and nothing more.
//!
//! - developer, iteration 1: the CONTRACT path and its REQUEST;
//! - developer after GATE 0 UNMET: the CONTRACT path and the NOT-MET rows
//!   as the floor printed them;
//! - developer after GATE 1 ECARTS (or a person's decision): the CONTRACT
//!   path and the gap lines (NOT-MET criteria, lifted abandonments,
//!   out-of-scope files a person denied);
//! - developer after GATE 2 BLOCK: the BLOCKING list, then the CONTRACT path;
//! - verifier: `CONTRACT:`, `DIFF:`, `TEST:` only, never what the developer
//!   said or an earlier iteration's gaps;
//! - auditor: `MODE: gate` and `SCOPE: <DIFF>`.
//!
//! The gap lines are fixed when the work is handed back (`dev.dispatched`
//! records them), so a resumed run hands over exactly what was recorded.

use serde_json::Value;

use crate::model::event::{GateFinished, HumanRequest, RunInfo};
use crate::model::kinds::Effect;
use crate::model::state::{HumanGate, State};
use crate::model::types::*;

/// The section the gap lines of a hand-off go under.
fn section(trigger: &str) -> &'static str {
    match trigger {
        "floor-unmet" => "NOT-MET",
        "block" => "BLOCKING",
        "review" => "FINDINGS",
        _ => "GAPS",
    }
}

/// The lines handed back to the developer after the last finished round,
/// as `dev.dispatched` records them.
pub fn handoff_lines(s: &State) -> Vec<String> {
    let Some(g) = s.latest_round() else {
        return Vec::new();
    };
    if super::review::sent_back(s)
        && let Some(it) = s.iteration(g.iteration)
    {
        return super::review::handoff_lines(s, it);
    }
    let mut lines = gate_lines(s, g);
    if super::review::has_review(s) {
        // Red tests that did not turn green go back with any hand-off.
        lines.extend(super::green::gaps(s));
    } else {
        // Without a review stage, the findings a person asked to be fixed
        // go back with the round's gaps.
        lines.extend(super::review::fixed_lines(s, g.iteration));
    }
    lines
}

/// The gap lines of the last finished round.
fn gate_lines(s: &State, g: &GateFinished) -> Vec<String> {
    match g.gate {
        GateName::Floor => g
            .floor_rows()
            .filter(|r| r.state == FloorState::NotMet)
            .map(|r| format!("  {:<3} {:<13} {}", r.id, r.state.as_str(), r.text))
            .collect(),
        GateName::Conformity => conformity_gaps(s, g),
        GateName::Security => g
            .security_rows()
            .map(|r| {
                let mut line = format!("  {}. [{}] {} — {}", r.n, r.severity, r.rule, r.location);
                if !r.why.is_empty() {
                    line.push_str(&format!(" — {}", r.why));
                }
                if !r.hint.is_empty() {
                    line.push_str(&format!(" — hint: {}", r.hint));
                }
                line
            })
            .collect(),
    }
}

fn conformity_gaps(s: &State, g: &GateFinished) -> Vec<String> {
    // A gate of this round whose outcome hands its subject back.
    let handed_back = |subject: &str| {
        s.human_gates.iter().find(|h| {
            h.request.gate == Some(g.gate)
                && h.request.iteration == g.iteration
                && h.request.subject == subject
                && h.effect() == Some(Effect::ToDeveloper)
        })
    };
    let by = |h: &HumanGate| {
        if h.expired.is_some() {
            "when the gate expired"
        } else {
            "by a person"
        }
    };
    let mut out = Vec::new();
    for r in g.criterion_rows() {
        let lifted = handed_back(&r.id).filter(|_| r.status == CriterionStatus::Abandoned);
        if r.status == CriterionStatus::NotMet || lifted.is_some() {
            let mut line = format!("  {}. {} — {}", r.id, r.text, r.status.as_str());
            if !r.detail.is_empty() {
                line.push_str(&format!(" — {}", r.detail));
            }
            if let Some(h) = lifted {
                line.push_str(&format!(" — lifted {}: implement it", by(h)));
            }
            out.push(line);
        }
    }
    for path in g.out_of_scope() {
        if let Some(h) = handed_back(path) {
            out.push(format!(
                "  out-of-scope: {path} — denied {}: remove the change",
                by(h)
            ));
        }
    }
    out
}

/// The developer's input for `iteration`: `request` is the contract's
/// REQUEST section (read by the caller), used for iteration 1.
pub fn developer_input(s: &State, iteration: u32, request: &str) -> String {
    let contract = s.run.as_ref().map_or("", |r| r.contract.as_str());
    let trigger = s
        .iteration(iteration)
        .map_or("initial", |i| i.trigger.as_str());
    let previous = iteration
        .checked_sub(1)
        .and_then(|p| s.iteration(p))
        .map(|i| i.dev_inputs.as_slice())
        .unwrap_or_default();
    let notes = notes_section(s);
    if iteration <= 1 || trigger == "initial" {
        return format!(
            "CONTRACT: {contract}\nREQUEST:\n{}\n{notes}",
            request.trim_end()
        );
    }
    let lines: Vec<&str> = previous.iter().filter_map(Value::as_str).collect();
    let name = section(trigger);
    let mut body = format!("{name}:\n");
    for l in &lines {
        body.push_str(l);
        body.push('\n');
    }
    if name == "BLOCKING" {
        format!("{body}CONTRACT: {contract}\n{notes}")
    } else {
        format!("CONTRACT: {contract}\n{body}{notes}")
    }
}

/// The most of one note the developer is handed, in characters; the rest
/// stays in the journal (`human.decided`), which keeps it as written.
pub const NOTE_HANDOFF_MAX: usize = 8000;

/// The decisions whose notes the next developer dispatch receives: every
/// decision with a note recorded after the start of the last developer
/// dispatch that succeeded (an interrupted or failed one hands them over
/// again), in the order recorded.
pub fn pending_notes(s: &State) -> Vec<&HumanGate> {
    let since = s
        .agents
        .iter()
        .rev()
        .find(|a| a.started.role == crate::model::event::AgentRole::Developer && a.succeeded())
        .map_or(0, |a| a.started_seq);
    let mut out: Vec<&HumanGate> = s
        .human_gates
        .iter()
        .filter(|g| {
            g.decision
                .as_ref()
                .is_some_and(|d| d.seq > since && d.decision.developer_note().is_some())
        })
        .collect();
    out.sort_by_key(|g| g.decision.as_ref().map_or(0, |d| d.seq));
    out
}

/// The notes people left for the developer with their decisions, each
/// under its own heading (`NOTE FROM <by> (<gate> <decision>):`), control
/// characters shown as visible stand-ins, each cut at [`NOTE_HANDOFF_MAX`].
pub fn notes_section(s: &State) -> String {
    let mut out = String::new();
    for g in pending_notes(s) {
        let Some(d) = g.decision.as_ref() else {
            continue;
        };
        let Some(note) = d.decision.developer_note() else {
            continue;
        };
        let by = if d.decision.by.is_empty() {
            "a person"
        } else {
            d.decision.by.as_str()
        };
        out.push_str(&format!(
            "NOTE FROM {} ({} {}):\n",
            crate::sanitize::field(by),
            crate::sanitize::field(&g.request.id),
            d.decision.decision
        ));
        out.push_str(&note_text(note, &g.request.id));
        out.push('\n');
    }
    out
}

/// A note as the developer reads it: line breaks and tabs kept, every
/// other control shown as its stand-in, cut at [`NOTE_HANDOFF_MAX`].
fn note_text(note: &str, id: &str) -> String {
    let mut out = String::new();
    let trimmed = note.trim_end();
    for (n, c) in trimmed.chars().enumerate() {
        if n >= NOTE_HANDOFF_MAX {
            out.push_str(&format!(
                "… (cut: the whole note is recorded with the decision of {})",
                crate::sanitize::field(id)
            ));
            break;
        }
        match c {
            '\n' | '\t' => out.push(c),
            '\r' => {}
            c => match crate::sanitize::stand_in(c) {
                Some(x) => out.push_str(&x),
                None => out.push(c),
            },
        }
    }
    out
}

/// The verifier's input: `CONTRACT:`, `DIFF:`, `TEST:`.
pub fn verifier_input(run: &RunInfo) -> String {
    format!(
        "CONTRACT: {}\nDIFF: {}\nTEST: {}\n",
        run.contract,
        run.diff,
        if run.test.trim().is_empty() {
            "none"
        } else {
            run.test.as_str()
        }
    )
}

/// The auditor's input: `MODE: gate`, `SCOPE: <DIFF>`.
pub fn auditor_input(run: &RunInfo) -> String {
    format!("MODE: gate\nSCOPE: {}\n", run.diff)
}

/// True for the human gate opened when the developer failed twice.
pub fn is_developer_gate(req: &HumanRequest) -> bool {
    req.kind == HumanGateKind::Structural && req.gate.is_none() && req.subject == DEVELOPER_SUBJECT
}

/// The subject of the human gate opened when the developer failed twice.
pub const DEVELOPER_SUBJECT: &str = "developer";

#[cfg(test)]
#[path = "notes_tests.rs"]
mod notes_tests;
