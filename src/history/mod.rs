//! A run's past: its events stored once ([`Events`]), the state after any
//! event (fast seeking through periodic checkpoints of the fold), the replay
//! positioning rules ([`position`]) and what changed between two iterations.
//!
//! Pure: built from events already read. The live feed owns the one
//! [`History`] of a pipeline; the TUI and replay read positions of it.
//! Checkpoints are taken every [`CHECKPOINT_EVERY`] events; past
//! [`MAX_CHECKPOINTS`] every other one is dropped and the spacing doubles,
//! so a long journal keeps a bounded number of folded states in memory while
//! a seek still replays at most one spacing of events.

mod diff;
mod events;
pub mod position;

use crate::model::{Event, State};

pub use diff::{Change, IterationDiff, diff_iterations};
pub use events::{CHUNK, Events};
pub use position::{ReplayMove, ReplayStart, Steps, move_target, start_position};

/// Events between two checkpoints, at first (the spacing never gets smaller).
pub const CHECKPOINT_EVERY: usize = 512;

/// Checkpoints kept (besides the empty state) before they are thinned out.
pub const MAX_CHECKPOINTS: usize = 32;

/// Every event of a run, with folded checkpoints for seeking.
#[derive(Debug, Clone)]
pub struct History {
    events: Events,
    /// `checkpoints[i]` is the state after `i * every` events.
    checkpoints: Vec<State>,
    /// Events between two checkpoints.
    every: usize,
    /// Checkpoints allowed past the first before thinning.
    max: usize,
    tail: State,
    /// Each iteration's number and the index of its first event, in order.
    starts: Vec<(u32, usize)>,
}

impl Default for History {
    fn default() -> Self {
        History::new(Vec::new())
    }
}

impl History {
    /// Builds the history of a list of events.
    pub fn new(events: Vec<Event>) -> Self {
        History::with_checkpoints(events, CHECKPOINT_EVERY, MAX_CHECKPOINTS)
    }

    /// Builds a history with a checkpoint every `every` events at first and at
    /// most `max` checkpoints before thinning (both at least 1): smaller
    /// numbers trade seek time for memory.
    pub fn with_checkpoints(events: Vec<Event>, every: usize, max: usize) -> Self {
        let mut h = History {
            events: Events::new(),
            checkpoints: vec![State::default()],
            every: every.max(1),
            max: max.max(1),
            tail: State::default(),
            starts: Vec::new(),
        };
        h.extend(events);
        h
    }

    /// Appends events (live updates keep arriving while replaying).
    pub fn extend(&mut self, events: impl IntoIterator<Item = Event>) {
        self.append(events.into_iter().collect());
    }

    /// Appends a batch of events; a long batch is stored as it is, never
    /// copied (see [`Events::append`]).
    pub fn append(&mut self, batch: Vec<Event>) {
        for (i, ev) in batch.iter().enumerate() {
            let pos = self.events.len() + i;
            self.tail.apply(ev);
            if let Some(n) = ev.body.iteration()
                && !self.starts.iter().any(|(m, _)| *m == n)
            {
                self.starts.push((n, pos));
            }
            if (pos + 1).is_multiple_of(self.every) {
                let mut cp = self.tail.clone();
                cp.finish();
                self.checkpoints.push(cp);
                if self.checkpoints.len() > self.max + 1 {
                    self.thin();
                }
            }
        }
        self.events.append(batch);
        self.tail.finish();
    }

    /// Events between two checkpoints now.
    pub fn checkpoint_spacing(&self) -> usize {
        self.every
    }

    /// Folded states kept for seeking (the empty state included).
    pub fn checkpoint_count(&self) -> usize {
        self.checkpoints.len()
    }

    /// Number of events.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// True when there is no event.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Every event.
    pub fn events(&self) -> &Events {
        &self.events
    }

    /// The first `k` events, shared (no event is copied).
    pub fn events_to(&self, k: usize) -> Events {
        self.events.prefix(k)
    }

    /// The state after the whole history.
    pub fn latest(&self) -> &State {
        &self.tail
    }

    /// The state after the first `k` events (0 = before any).
    pub fn state_at(&self, k: usize) -> State {
        let k = k.min(self.events.len());
        // Invariant: there is a checkpoint for every multiple of `every` up to
        // the length, and `checkpoints[0]` always exists.
        let cp = (k / self.every).min(self.checkpoints.len() - 1);
        let mut s = self.checkpoints[cp].clone();
        for ev in self
            .events
            .iter_from(cp * self.every)
            .take(k - cp * self.every)
        {
            s.apply(ev);
        }
        s.finish();
        s
    }

    /// The number of events up to and including the one with this seq.
    pub fn position_of_seq(&self, seq: u64) -> usize {
        self.events.count_through_seq(seq)
    }

    /// Position (events applied) at the start of each iteration: the index
    /// of its first event, so `state_at(pos)` is the state just before it
    /// and `state_at(pos + 1)` the first state inside it.
    pub fn iteration_starts(&self) -> Vec<(u32, usize)> {
        self.starts.clone()
    }

    /// The time of the event at position `k` (the `k`-th event, 1-based), if any.
    pub fn time_at(&self, k: usize) -> Option<&str> {
        k.checked_sub(1)
            .and_then(|i| self.events.get(i))
            .map(|e| e.at.as_str())
    }

    /// Keeps every other checkpoint and doubles the spacing:
    /// `checkpoints[i]` becomes the old `checkpoints[2 * i]`, the state after
    /// `2 * i * every` events.
    fn thin(&mut self) {
        let mut i = 0;
        self.checkpoints.retain(|_| {
            i += 1;
            i % 2 == 1
        });
        self.every *= 2;
    }
}

impl Steps for History {
    fn len(&self) -> usize {
        self.events.len()
    }

    fn iteration_starts(&self) -> Vec<(u32, usize)> {
        History::iteration_starts(self)
            .into_iter()
            .map(|(n, p)| (n, p + 1))
            .collect()
    }

    fn position_of_seq(&self, seq: u64) -> usize {
        History::position_of_seq(self, seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{EventBody, fold};

    fn events(n: u64) -> Vec<Event> {
        (1..=n)
            .map(|seq| Event {
                v: 1,
                seq,
                at: "2026-01-01T00:00:00Z".into(),
                prev: None,
                body: if seq % 100 == 1 {
                    EventBody::IterationStarted {
                        iteration: (seq / 100 + 1) as u32,
                        trigger: "ecarts".into(),
                    }
                } else {
                    EventBody::Note {
                        text: format!("n{seq}"),
                    }
                },
            })
            .collect()
    }

    #[test]
    fn every_position_equals_the_fold_of_its_prefix() {
        let evs = events(1500);
        let h = History::new(evs.clone());
        for k in [0, 1, 2, 511, 512, 513, 1024, 1499, 1500] {
            assert_eq!(h.state_at(k), fold(&evs[..k]), "at {k}");
        }
        assert_eq!(h.latest(), &fold(&evs));
        assert_eq!(h.position_of_seq(700), 700);
        assert_eq!(h.iteration_starts()[1], (2, 100));
    }

    #[test]
    fn thinning_keeps_every_position_equal_to_the_fold() {
        let evs = events(700);
        let h = History::with_checkpoints(evs.clone(), 4, 5);
        assert_eq!((h.checkpoint_spacing(), h.checkpoint_count()), (128, 6));
        for k in 0..=700 {
            assert_eq!(h.state_at(k), fold(&evs[..k]), "at {k}");
        }
        let mut grown = History::with_checkpoints(evs[..33].to_vec(), 4, 5);
        grown.extend(evs[33..].iter().cloned());
        assert_eq!(
            (grown.checkpoint_spacing(), grown.checkpoint_count()),
            (128, 6)
        );
        assert_eq!(grown.state_at(517), fold(&evs[..517]));
    }

    #[test]
    fn a_long_history_keeps_a_bounded_number_of_checkpoints() {
        let h = History::new(events(40_000));
        assert_eq!(h.checkpoint_spacing(), 2048);
        assert_eq!(h.checkpoint_count(), 40_000 / 2048 + 1);
    }

    #[test]
    fn extending_keeps_checkpoints_consistent() {
        let evs = events(1200);
        let mut h = History::new(evs[..300].to_vec());
        h.extend(evs[300..].iter().cloned());
        assert_eq!(h.state_at(1100), fold(&evs[..1100]));
    }
}
