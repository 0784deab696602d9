//! Replay positions: where `loopwatch replay` starts, where a replay key
//! moves, and how a position is shown — shared by the TUI loop and the
//! replay tests. A replay steps through the journal's events, or through the
//! versions of a foreign `state.json` the TUI observed.

use super::app::{App, ReplayBar};
use super::effect::ReplayMove;
use crate::history::History;
use crate::model::State;

/// Where `loopwatch replay` starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayStart {
    /// The first event.
    First,
    /// The event with this seq.
    Seq(u64),
    /// The first event of this iteration.
    Iteration(u32),
}

/// The position (events applied) where replay starts: the first event, the
/// event with a seq, or the first event of an iteration (the first event
/// when that iteration does not exist).
pub fn start_position(history: &History, start: ReplayStart) -> usize {
    let k = match start {
        ReplayStart::First => 1,
        ReplayStart::Seq(seq) => history.position_of_seq(seq).max(1),
        ReplayStart::Iteration(n) => history
            .iteration_starts()
            .iter()
            .find(|(i, _)| *i == n)
            .map_or(1, |(_, pos)| pos + 1),
    };
    k.min(history.len())
}

/// Where a replay key moves from position `k`; `None` for [`ReplayMove::Live`]
/// (leave replay).
pub fn move_target(history: &History, k: usize, m: ReplayMove) -> Option<usize> {
    let starts = history.iteration_starts();
    let target = match m {
        ReplayMove::Back => k.saturating_sub(1).max(1),
        ReplayMove::Forward => k + 1,
        ReplayMove::First => 1,
        ReplayMove::PrevIteration => starts
            .iter()
            .rev()
            .map(|(_, p)| p + 1)
            .find(|&p| p < k)
            .unwrap_or(1),
        ReplayMove::NextIteration => starts
            .iter()
            .map(|(_, p)| p + 1)
            .find(|&p| p > k)
            .unwrap_or(history.len()),
        ReplayMove::Live => return None,
    };
    Some(target.min(history.len()))
}

/// Shows position `k` of a history in the app exactly as replay does: the
/// replay bar (position, time and iteration of the event at `k`), then the
/// state after the first `k` events with those events. Returns the position
/// shown (`k` clamped to the history's length).
pub fn show_position(app: &mut App, history: &History, k: usize) -> usize {
    let k = k.min(history.len());
    let state = history.state_at(k);
    let at = k
        .checked_sub(1)
        .and_then(|i| history.events().get(i))
        .map(|e| e.at.clone())
        .unwrap_or_default();
    app.set_replay(Some(ReplayBar {
        event: k as u64,
        total: history.len() as u64,
        at,
        iteration: state.iteration_number(),
    }));
    // Replay never rings nor runs hooks: the effects are always empty here.
    let _ = app.on_run_state(0, state, &history.events()[..k]);
    k
}

/// What a replay steps through: the journal's events, or, for a pipeline
/// written by another program, the versions of its state.json observed.
pub(crate) enum Past {
    Events(Box<History>),
    States(Vec<(String, State)>),
}

impl Past {
    pub(crate) fn len(&self) -> usize {
        match self {
            Past::Events(h) => h.len(),
            Past::States(v) => v.len(),
        }
    }

    /// For observed states: the state after `k` steps and when it was seen
    /// (replays of events go through [`show_position`]).
    pub(crate) fn observed_at(&self, k: usize) -> Option<(State, String)> {
        match self {
            Past::Events(_) => None,
            Past::States(v) => k
                .checked_sub(1)
                .and_then(|i| v.get(i))
                .map(|(at, s)| (s.clone(), at.clone())),
        }
    }

    /// 1-based positions of the first step of each iteration.
    pub(crate) fn iteration_starts(&self) -> Vec<(u32, usize)> {
        match self {
            Past::Events(h) => h
                .iteration_starts()
                .into_iter()
                .map(|(n, p)| (n, p + 1))
                .collect(),
            Past::States(v) => {
                let mut out: Vec<(u32, usize)> = Vec::new();
                for (i, (_, s)) in v.iter().enumerate() {
                    let n = s.iteration_number();
                    if !out.iter().any(|(m, _)| *m == n) {
                        out.push((n, i + 1));
                    }
                }
                out
            }
        }
    }
}
