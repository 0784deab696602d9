//! What changed between two iterations, for the `d` overlay: the changes
//! of [`crate::history::diff_iterations`] as lines with good/bad news.

use crate::model::State;

/// One change, and whether it is good news.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// What changed, in words.
    pub text: String,
    /// True for an improvement, false for a regression, `None` when neutral.
    pub better: Option<bool>,
}

/// The changes from iteration `from` to iteration `to` of `state`.
pub fn changes(state: &State, from: u32, to: u32) -> Vec<Change> {
    crate::history::diff_iterations(state, from, to)
        .map(|d| {
            d.changes
                .iter()
                .map(|c| Change {
                    text: c.describe(),
                    better: c.is_better(),
                })
                .collect()
        })
        .unwrap_or_default()
}
