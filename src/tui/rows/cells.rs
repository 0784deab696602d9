//! Cells and columns of the tables: what each row says, as text with a
//! [`Tone`], for the views to draw and for the app to filter and copy.
//! Columns say from which width they appear.

use super::marks::Mark;
use super::{RowKey, criteria, findings, human_gates, logs, security, timeline};
use crate::tui::app::{App, Tab};
use crate::tui::tone::Tone;

/// One cell: raw text (sanitised when drawn) and its tone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    /// The text.
    pub text: String,
    /// Its meaning.
    pub tone: Tone,
}

impl Cell {
    /// Plain text.
    pub fn plain(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            tone: Tone::Normal,
        }
    }

    /// Text with a tone.
    pub fn toned(text: impl Into<String>, tone: Tone) -> Cell {
        Cell {
            text: text.into(),
            tone,
        }
    }

    /// A verdict mark.
    pub fn mark(m: &Mark) -> Cell {
        Cell {
            text: m.text(),
            tone: m.tone,
        }
    }
}

/// A column: its title, its width (0 = share what is left) and the
/// smallest table width at which it is shown.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    /// Heading.
    pub title: &'static str,
    /// Fixed width, or 0 to fill.
    pub width: u16,
    /// Shown only when the table is at least this wide.
    pub from: u16,
}

/// A column shown from any width.
pub const fn col(title: &'static str, width: u16) -> Column {
    Column {
        title,
        width,
        from: 0,
    }
}

/// A column shown from `from` columns of width.
pub const fn wide(title: &'static str, width: u16, from: u16) -> Column {
    Column { title, width, from }
}

/// The columns of a tab.
pub fn columns(tab: Tab) -> &'static [Column] {
    match tab {
        Tab::Criteria => criteria::COLUMNS,
        Tab::Findings => findings::COLUMNS,
        Tab::Security => security::COLUMNS,
        Tab::Gates => human_gates::COLUMNS,
        Tab::Timeline => timeline::COLUMNS,
        Tab::Logs => logs::COLUMNS,
    }
}

/// The cells of a row, one per column of its tab.
pub fn cells_of(app: &App, key: RowKey) -> Vec<Cell> {
    match key {
        RowKey::Criterion(i) => criteria::cells(app, i),
        RowKey::Finding(i) => findings::cells(app, i),
        RowKey::Lane(i) => findings::lane_cells(app, i),
        RowKey::Blocking(i) => security::blocking_cells(app, i),
        RowKey::Reported(i) => security::reported_cells(app, i),
        RowKey::Gate(i) => human_gates::cells(app, i),
        RowKey::Event(i) => timeline::cells(app, i),
        RowKey::Log(i) => logs::cells(app, i),
    }
}
