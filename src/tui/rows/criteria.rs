//! The Criteria tab: each contract criterion, GATE 0 evidence beside GATE 1 status.

use super::cells::{Cell, Column, col, wide};
use super::marks::{self, Mark};
use super::query::{self, Query};
use crate::model::{CriterionRow, FloorRow, GateName, GateRow};

/// Columns: id, GATE 0 state, GATE 1 status, evidence; detail and text on wide terminals.
pub const COLUMNS: &[Column] = &[
    col("id", 3),
    col("GATE 0", 14),
    col("GATE 1", 14),
    col("GATE 0 evidence", 0),
    wide("GATE 1 detail", 0, 120),
    wide("criterion", 0, 150),
];

/// A criterion of the shown iteration: its GATE 0 row beside its GATE 1 row.
#[derive(Debug, Clone, Copy)]
pub struct Criterion<'a> {
    /// Criterion id.
    pub id: &'a str,
    /// Its row in the last floor round.
    pub floor: Option<&'a FloorRow>,
    /// Its row in the last conformity round.
    pub conformity: Option<&'a CriterionRow>,
}

impl Criterion<'_> {
    /// The GATE 0 state.
    pub fn floor_mark(&self) -> Mark {
        self.floor
            .map_or_else(marks::none, |f| marks::floor_state(f.state))
    }

    /// The GATE 1 status.
    pub fn conformity_mark(&self) -> Mark {
        self.conformity
            .map_or_else(marks::none, |c| marks::criterion(c.status))
    }

    /// The criterion's text (from GATE 0, else GATE 1).
    pub fn text(&self) -> &str {
        self.floor
            .map(|f| f.text.as_str())
            .or(self.conformity.map(|c| c.text.as_str()))
            .unwrap_or("")
    }

    /// The GATE 0 evidence.
    pub fn evidence(&self) -> &str {
        self.floor.map_or("", |f| f.evidence.as_str())
    }

    /// The GATE 1 detail.
    pub fn detail(&self) -> &str {
        self.conformity.map_or("", |c| c.detail.as_str())
    }
}

/// Criterion `i` of `App::criteria`.
pub fn criterion(app: &dyn Query, i: usize) -> Option<Criterion<'_>> {
    let line = app.criteria().get(i)?;
    let floor = line
        .floor
        .and_then(|r| match query::round(app, GateName::Floor)?.rows.get(r) {
            Some(GateRow::Floor(f)) => Some(f),
            _ => None,
        });
    let conformity =
        line.conformity.and_then(
            |r| match query::round(app, GateName::Conformity)?.rows.get(r) {
                Some(GateRow::Criterion(c)) => Some(c),
                _ => None,
            },
        );
    Some(Criterion {
        id: &line.id,
        floor,
        conformity,
    })
}

/// The cells of criterion `i` of `App::criteria`.
pub fn cells(app: &dyn Query, i: usize) -> Vec<Cell> {
    let Some(c) = criterion(app, i) else {
        return Vec::new();
    };
    vec![
        Cell::plain(c.id),
        Cell::mark(&c.floor_mark()),
        Cell::mark(&c.conformity_mark()),
        Cell::plain(c.evidence()),
        Cell::plain(c.detail()),
        Cell::plain(c.text()),
    ]
}
