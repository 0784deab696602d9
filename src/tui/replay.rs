//! Replay as the TUI shows it: a position of the pipeline's store handed to
//! the app with its replay bar, or, for a pipeline written by another
//! program (no journal), a version of its `state.json` that was observed.
//! Where replay starts and where a key moves are the history's rules
//! ([`crate::history::position`]), the same for both.

use super::app::{App, ReplayBar};
use crate::history::{History, Steps};
use crate::model::State;

pub use crate::history::{ReplayMove, ReplayStart, move_target, start_position};

/// Shows position `k` of a history in the app exactly as replay does: the
/// replay bar (position, time and iteration of the event at `k`), then the
/// state after the first `k` events with those events (shared, not
/// copied). Returns the position shown (`k` clamped to the history's length).
pub fn show_position(app: &mut App, history: &History, k: usize) -> usize {
    let k = k.min(history.len());
    let state = history.state_at(k);
    app.set_replay(Some(ReplayBar {
        event: k as u64,
        total: history.len() as u64,
        at: history.time_at(k).unwrap_or_default().to_string(),
        iteration: state.iteration_number(),
    }));
    // Replay never rings nor runs hooks: the effects are always empty here.
    let _ = app.on_run_state(0, state, history.events_to(k));
    k
}

/// The versions of a foreign `state.json` observed, oldest first, each
/// with the time it was seen: what a replay steps through when there is no
/// journal.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    versions: Vec<(String, State)>,
}

impl Observed {
    /// The versions, oldest first: `(observed at, state)`.
    pub fn new(versions: Vec<(String, State)>) -> Self {
        Observed { versions }
    }

    /// A newer version, seen now.
    pub fn push(&mut self, at: String, state: State) {
        self.versions.push((at, state));
    }

    /// Shows version `k` (1-based) in the app with its replay bar; returns
    /// the position shown.
    pub fn show(&self, app: &mut App, k: usize) -> usize {
        let k = k.min(self.versions.len());
        let Some((at, state)) = k.checked_sub(1).and_then(|i| self.versions.get(i)) else {
            return k;
        };
        app.set_replay(Some(ReplayBar {
            event: k as u64,
            total: self.versions.len() as u64,
            at: at.clone(),
            iteration: state.iteration_number(),
        }));
        let _ = app.on_run_state(0, state.clone(), crate::history::Events::new());
        k
    }
}

impl Steps for Observed {
    fn len(&self) -> usize {
        self.versions.len()
    }

    fn iteration_starts(&self) -> Vec<(u32, usize)> {
        let mut out: Vec<(u32, usize)> = Vec::new();
        for (i, (_, s)) in self.versions.iter().enumerate() {
            let n = s.iteration_number();
            if !out.iter().any(|(m, _)| *m == n) {
                out.push((n, i + 1));
            }
        }
        out
    }

    /// Versions are numbered from 1 in the order they were seen.
    fn position_of_seq(&self, seq: u64) -> usize {
        usize::try_from(seq).map_or(self.versions.len(), |k| k.min(self.versions.len()))
    }
}
