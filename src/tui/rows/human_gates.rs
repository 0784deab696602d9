//! The Gates tab: human gates waiting on a person (oldest first), then the
//! decided ones with decision, reason, who and when; an expired gate is
//! marked EXPIRED, never shown as a decision.

use super::cells::{Cell, Column, col, wide};
use super::marks::Mark;
use super::query::Query;
use super::time::time_of;
use crate::tui::tone::Tone;

/// Columns: status, id, kind, summary; reason, by and when on wide terminals.
pub const COLUMNS: &[Column] = &[
    col("status", 18),
    col("id", 20),
    wide("kind", 12, 90),
    col("summary", 0),
    wide("reason", 0, 110),
    wide("by", 16, 130),
    wide("when", 8, 140),
];

/// The mark of a gate: ⚑ waiting, ✓ and its decision, or ⌛ EXPIRED.
pub fn status_mark(app: &dyn Query, i: usize) -> Mark {
    let gate = app.state().human_gates.get(i);
    if let Some(x) = gate.and_then(|g| g.expired.as_ref()) {
        return Mark {
            symbol: "⌛",
            word: format!("EXPIRED {}", x.action),
            tone: Tone::Warn,
        };
    }
    match gate.and_then(|g| g.decision.as_ref()) {
        Some(d) => Mark {
            symbol: "✓",
            word: d.decision.decision.to_string(),
            tone: Tone::Good,
        },
        None => Mark {
            symbol: "⚑",
            word: "WAITING ON YOU".into(),
            tone: Tone::Human,
        },
    }
}

/// The cells of `state.human_gates[i]`.
pub fn cells(app: &dyn Query, i: usize) -> Vec<Cell> {
    let Some(g) = app.state().human_gates.get(i) else {
        return Vec::new();
    };
    let (reason, by, when) = match (&g.decision, &g.expired) {
        (Some(d), _) => (
            match d.decision.developer_note() {
                // A note to the developer rides with its reason (cut: a
                // cell shows one line).
                Some(note) => format!(
                    "{} · note: {}",
                    d.decision.reason,
                    note.chars().take(512).collect::<String>()
                ),
                None => d.decision.reason.clone(),
            },
            d.decision.by.clone(),
            time_of(&d.at),
        ),
        (None, Some(x)) => (
            format!("nobody decided within {}", x.after),
            String::new(),
            time_of(&x.at),
        ),
        (None, None) => (String::new(), String::new(), time_of(&g.requested_at)),
    };
    vec![
        Cell::mark(&status_mark(app, i)),
        Cell::plain(g.request.id.clone()),
        Cell::plain(g.request.kind.as_str()),
        Cell::plain(g.request.summary.clone()),
        Cell::plain(reason),
        Cell::plain(by),
        Cell::plain(when),
    ]
}
