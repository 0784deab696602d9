//! The Security tab: BLOCKING rows, then REPORTED (non-blocking) rows of
//! the shown iteration's last GATE 2 round.

use super::cells::{Cell, Column, col, wide};
use super::query::{self, Query};
use crate::model::{GateName, GateRow, ReportedRow, SecurityRow};
use crate::tui::tone::Tone;

/// Columns: kind, severity, rule, location; why and hint when wide.
pub const COLUMNS: &[Column] = &[
    col("kind", 10),
    col("severity", 8),
    col("rule", 0),
    col("location", 0),
    wide("why", 0, 110),
    wide("hint", 0, 150),
];

/// BLOCKING row `i` (index in the round's rows).
pub fn blocking(app: &dyn Query, i: usize) -> Option<&SecurityRow> {
    match query::round(app, GateName::Security)?.rows.get(i)? {
        GateRow::Security(r) => Some(r),
        _ => None,
    }
}

/// REPORTED row `i`.
pub fn reported(app: &dyn Query, i: usize) -> Option<&ReportedRow> {
    query::round(app, GateName::Security)?.reported.get(i)
}

/// The cells of BLOCKING row `i` (index in the round's rows).
pub fn blocking_cells(app: &dyn Query, i: usize) -> Vec<Cell> {
    let Some(r) = blocking(app, i) else {
        return Vec::new();
    };
    vec![
        Cell::toned("✗ BLOCKING", Tone::Bad),
        Cell::plain(r.severity.clone()),
        Cell::plain(r.rule.clone()),
        Cell::plain(r.location.clone()),
        Cell::plain(r.why.clone()),
        Cell::plain(r.hint.clone()),
    ]
}

/// The cells of REPORTED row `i`.
pub fn reported_cells(app: &dyn Query, i: usize) -> Vec<Cell> {
    let Some(r) = reported(app, i) else {
        return Vec::new();
    };
    vec![
        Cell::toned("· REPORTED", Tone::Muted),
        Cell::plain(r.severity.clone()),
        Cell::plain(r.rule.clone()),
        Cell::plain(r.location.clone()),
        Cell::plain(""),
        Cell::plain(""),
    ]
}

/// The line above the table: the round's verdict, and DEGRADED with its TOOL line.
pub fn banner(app: &dyn Query) -> Option<(String, Tone)> {
    let g = query::round(app, GateName::Security)?;
    let mark = super::marks::verdict(&g.verdict);
    let mut text = format!("round {} {}", g.round, mark.text());
    if g.degraded {
        text.push_str("  ? DEGRADED");
        if let Some(t) = &g.tool {
            text.push_str(": ");
            text.push_str(t);
        }
        return Some((text, Tone::Warn));
    }
    Some((text, mark.tone))
}
