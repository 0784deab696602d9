//! Cells and columns of the tables: what each row says, as text with a
//! [`Tone`], for the views to draw and for the app to filter and copy.
//! Columns say from which width they appear.

use super::marks::Mark;
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
