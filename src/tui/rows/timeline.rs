//! The Timeline tab: every event, newest last; types this version does not
//! know are shown raw.

use super::cells::{Cell, Column, col, wide};
use super::marks;
use super::query::Query;
use super::time::time_of;
use crate::model::event::{GreenResult, LaneState};
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

/// What an event is, on one line ([`Event::line`], a person's gate and
/// decision marked), and its tone.
pub fn summary(ev: &Event) -> (String, Tone) {
    let tone = match &ev.body {
        EventBody::RunStarted { .. }
        | EventBody::IterationStarted { .. }
        | EventBody::RunEnded(_) => Tone::Accent,
        EventBody::GateFinished(g) => marks::verdict(&g.verdict).tone,
        EventBody::VerifyResult(r) => marks::outcome(r.result, false).tone,
        EventBody::FloorGuardFinished(f) if f.counted > 0 => Tone::Bad,
        EventBody::FloorGuardFinished(_) | EventBody::HumanDecided(_) => Tone::Good,
        EventBody::HumanRequested(_) | EventBody::FindingSplit(_) => Tone::Human,
        EventBody::FindingLane(l) => match (l.state, l.verdict) {
            (LaneState::Fault, _) => Tone::Bad,
            (LaneState::Rejected, _) => Tone::Warn,
            (_, Some(FindingVerdict::Verified)) => Tone::Bad,
            (_, Some(FindingVerdict::False)) => Tone::Good,
            (_, Some(FindingVerdict::Unverifiable)) => Tone::Human,
            _ => Tone::Muted,
        },
        EventBody::ReviewFinished(r) if r.gaps == 0 => Tone::Good,
        EventBody::AgentFinished(f) if f.succeeded() => Tone::Normal,
        EventBody::ReviewFinished(_) | EventBody::AgentFinished(_) => Tone::Bad,
        EventBody::VerifyGreen(g) if g.result == GreenResult::Green => Tone::Good,
        EventBody::VerifyGreen(_) => Tone::Bad,
        EventBody::AgentLimited(_)
        | EventBody::HumanApproved(_)
        | EventBody::HumanExpired(_)
        | EventBody::Unknown { .. } => Tone::Warn,
        EventBody::ContractJudged(c) if c.rerun => Tone::Accent,
        EventBody::NotifySent(_) | EventBody::ContractJudged(_) | EventBody::Note { .. } => {
            Tone::Muted
        }
        _ => Tone::Normal,
    };
    let line = ev.line();
    let text = match &ev.body {
        EventBody::HumanRequested(_) => format!("⚑ {line}"),
        EventBody::HumanDecided(_) | EventBody::HumanApproved(_) => format!("✓ {line}"),
        _ => line,
    };
    (text, tone)
}
