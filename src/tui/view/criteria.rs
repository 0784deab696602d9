//! The Criteria tab: each contract criterion, GATE 0 evidence beside GATE 1 status.

use super::marks;
use super::table::{Cell, Column, col, wide};
use crate::model::{GateName, GateRow};
use crate::tui::app::App;
use crate::tui::rows;

/// Columns: id, GATE 0 state, GATE 1 status, evidence; detail and text on wide terminals.
pub const COLUMNS: &[Column] = &[
    col("id", 3),
    col("GATE 0", 14),
    col("GATE 1", 14),
    col("GATE 0 evidence", 0),
    wide("GATE 1 detail", 0, 120),
    wide("criterion", 0, 150),
];

/// The cells of criterion `i` of `App::criteria`.
pub fn cells(app: &App, i: usize) -> Vec<Cell> {
    let Some(line) = app.criteria.get(i) else {
        return Vec::new();
    };
    let floor = line
        .floor
        .and_then(|r| match rows::round(app, GateName::Floor)?.rows.get(r) {
            Some(GateRow::Floor(f)) => Some(f),
            _ => None,
        });
    let conf =
        line.conformity.and_then(
            |r| match rows::round(app, GateName::Conformity)?.rows.get(r) {
                Some(GateRow::Criterion(c)) => Some(c),
                _ => None,
            },
        );
    let g0 = floor.map_or_else(marks::none, |f| marks::floor_state(f.state));
    let g1 = conf.map_or_else(marks::none, |c| marks::criterion(c.status));
    let text = floor
        .map(|f| f.text.as_str())
        .or(conf.map(|c| c.text.as_str()))
        .unwrap_or("");
    vec![
        Cell::plain(line.id.clone()),
        Cell::mark(&g0),
        Cell::mark(&g1),
        Cell::plain(floor.map_or("", |f| f.evidence.as_str())),
        Cell::plain(conf.map_or("", |c| c.detail.as_str())),
        Cell::plain(text),
    ]
}
