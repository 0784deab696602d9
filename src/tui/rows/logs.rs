//! The Logs tab: the agents' logs, gate outputs and verify-by-test logs;
//! `Enter` loads one, and the detail pane shows its tail (an agent CLI's
//! stream as a transcript); `o` shows it whole in `$PAGER`.

use super::cells::{Cell, Column, col, wide};
use super::query::Query;
use crate::tui::app::parts::LogView;
use crate::tui::tone::Tone;

/// Columns: state, path, what it is.
pub const COLUMNS: &[Column] = &[col("state", 10), col("path", 0), wide("what", 0, 100)];

/// The cells of `App::log_entries[i]`.
pub fn cells(app: &dyn Query, i: usize) -> Vec<Cell> {
    let Some(e) = app.log_entries().get(i) else {
        return Vec::new();
    };
    let state = match app.run().logs.get(&e.path) {
        Some(LogView::Loaded(_) | LogView::Transcript(_)) => Cell::toned("✓ read", Tone::Good),
        Some(LogView::Loading) => Cell::toned("… reading", Tone::Muted),
        Some(LogView::Failed(_)) => Cell::toned("✗ failed", Tone::Bad),
        None => Cell::toned("· enter", Tone::Muted),
    };
    vec![
        state,
        Cell::plain(e.path.clone()),
        Cell::plain(e.label.clone()),
    ]
}
