//! The Timeline tab: every event, newest last; types this version does not
//! know are shown raw.

use super::cells::{Cell, Column, col, wide};
use super::marks;
use super::query::Query;
use super::time::time_of;
use crate::model::event::LaneState;
use crate::model::{Event, EventBody, FindingVerdict};
use crate::tui::tone::Tone;

/// Columns: seq, time, type, what happened.
pub const COLUMNS: &[Column] = &[
    col("seq", 4),
    wide("time", 8, 60),
    col("type", 19),
    col("event", 0),
];

/// The cells of `run.events[i]`.
pub fn cells(app: &dyn Query, i: usize) -> Vec<Cell> {
    let Some(ev) = app.run().events.get(i) else {
        return Vec::new();
    };
    let (what, tone) = summary(ev);
    vec![
        Cell::plain(ev.seq.to_string()),
        Cell::plain(time_of(&ev.at)),
        Cell::toned(
            ev.body.type_name().to_string(),
            if matches!(ev.body, EventBody::Unknown { .. }) {
                Tone::Warn
            } else {
                Tone::Muted
            },
        ),
        Cell::toned(what, tone),
    ]
}

/// One line saying what an event is.
pub fn summary(ev: &Event) -> (String, Tone) {
    match &ev.body {
        EventBody::RunStarted { run, .. } => (
            format!("{} {} on {}", run.flow, run.id, run.branch),
            Tone::Accent,
        ),
        EventBody::IterationStarted { iteration, trigger } => {
            (format!("iteration {iteration} ({trigger})"), Tone::Accent)
        }
        EventBody::GateStarted {
            gate,
            iteration,
            round,
            ..
        } => (
            format!(
                "GATE {} {gate} iter {iteration} round {round}",
                gate.number()
            ),
            Tone::Normal,
        ),
        EventBody::GateFinished(g) => {
            let m = marks::verdict(&g.verdict);
            let deg = if g.degraded { " ? DEGRADED" } else { "" };
            let st = g
                .structural
                .as_ref()
                .map(|s| format!(" structural: {s}"))
                .unwrap_or_default();
            (
                format!(
                    "GATE {} {} round {} {}{deg}{st}",
                    g.gate.number(),
                    g.gate,
                    g.round,
                    m.text()
                ),
                m.tone,
            )
        }
        EventBody::FindingsVerified { findings, .. } => (
            format!("{} findings verified", findings.len()),
            Tone::Normal,
        ),
        EventBody::TriageRecorded { file, counts, .. } => (
            format!(
                "{file}: {} accepted, {} deferred, {} rejected",
                counts.accepted, counts.deferred, counts.rejected
            ),
            Tone::Normal,
        ),
        EventBody::VerifyResult(r) => {
            let m = marks::outcome(r.result, false);
            (format!("{} {} {}", r.finding, m.text(), r.test_ref), m.tone)
        }
        EventBody::VerifySummary(s) => (
            format!(
                "verify-by-test: {} attempted, {} confirmed, {} downgraded, {} inconclusive{}",
                s.attempted,
                s.confirmed,
                s.downgraded,
                s.inconclusive,
                if s.timed_out { ", timed out" } else { "" }
            ),
            Tone::Normal,
        ),
        EventBody::FloorGuardFinished(f) => (
            format!(
                "floor-guard against {}: {} counted, {} waived",
                f.base, f.counted, f.waived
            ),
            if f.counted > 0 { Tone::Bad } else { Tone::Good },
        ),
        EventBody::HumanRequested(h) => {
            (format!("⚑ {} {}: {}", h.id, h.kind, h.summary), Tone::Human)
        }
        EventBody::AgentStarted(a) => (a.summary(), Tone::Normal),
        EventBody::FindingLane(l) => (
            l.summary(),
            match (l.state, l.verdict) {
                (LaneState::Fault, _) => Tone::Bad,
                (LaneState::Rejected, _) => Tone::Warn,
                (_, Some(FindingVerdict::Verified)) => Tone::Bad,
                (_, Some(FindingVerdict::False)) => Tone::Good,
                (_, Some(FindingVerdict::Unverifiable)) => Tone::Human,
                _ => Tone::Muted,
            },
        ),
        EventBody::ReviewFinished(r) => (
            r.summary(),
            if r.gaps == 0 { Tone::Good } else { Tone::Bad },
        ),
        EventBody::AgentFinished(f) => (
            f.summary(),
            if f.succeeded() {
                Tone::Normal
            } else {
                Tone::Bad
            },
        ),
        EventBody::AgentLimited(l) => (l.summary(), Tone::Warn),
        EventBody::HumanDecided(d) => (format!("✓ {}", d.summary()), Tone::Good),
        EventBody::HumanApproved(d) => (
            format!("✓ {} (more approvals awaited)", d.summary()),
            Tone::Warn,
        ),
        EventBody::HumanExpired(x) => (
            format!(
                "⌛ {} EXPIRED after {}: {} applied (nobody decided)",
                x.id, x.after, x.action
            ),
            Tone::Warn,
        ),
        EventBody::NotifySent(n) => (
            if n.n > 1 {
                format!("✉ {} reminder {} sent by {}", n.id, n.n - 1, n.by)
            } else {
                format!("✉ {} notification sent by {}", n.id, n.by)
            },
            Tone::Muted,
        ),
        EventBody::DevDispatched { iteration, inputs } => (
            format!(
                "to the developer (iter {iteration}): {} inputs",
                inputs.len()
            ),
            Tone::Normal,
        ),
        EventBody::RunEnded(e) => (format!("run ended: {}", e.status.as_str()), Tone::Accent),
        EventBody::ContractJudged(c) => (
            format!("contract {} judged as it is: {}", c.path, c.why),
            if c.rerun { Tone::Accent } else { Tone::Muted },
        ),
        EventBody::Note { text } => (text.clone(), Tone::Muted),
        EventBody::FindingSplit(x) => (
            format!(
                "✂ {} (iteration {}) split from {} (iteration {}) by {}: {}",
                x.finding, x.iteration, x.earlier, x.earlier_iteration, x.by, x.reason
            ),
            Tone::Human,
        ),
        EventBody::VerifyGreen(g) => (
            format!("red test {} of {}: {}", g.test_ref, g.finding, g.result),
            if g.result == crate::model::event::GreenResult::Green {
                Tone::Good
            } else {
                Tone::Bad
            },
        ),
        EventBody::Unknown { fields, .. } => (
            serde_json::Value::Object(fields.as_ref().clone()).to_string(),
            Tone::Warn,
        ),
    }
}
