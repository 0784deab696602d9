//! A run's past: the state after any event (fast seeking through periodic
//! checkpoints of the fold) and what changed between two iterations.
//!
//! Pure: built from events already read; replay, `diff` and the TUI use it.

mod diff;

use crate::model::{Event, State};

pub use diff::{Change, IterationDiff, diff_iterations};

/// Events between two checkpoints.
pub const CHECKPOINT_EVERY: usize = 512;

/// Every event of a run, with folded checkpoints for seeking.
#[derive(Debug, Clone, Default)]
pub struct History {
    events: Vec<Event>,
    /// `checkpoints[k]` is the state after `k * CHECKPOINT_EVERY` events.
    checkpoints: Vec<State>,
    tail: State,
}

impl History {
    /// Builds the history of a list of events.
    pub fn new(events: Vec<Event>) -> Self {
        let mut h = History { events: Vec::new(), checkpoints: vec![State::default()], tail: State::default() };
        h.extend(events);
        h
    }

    /// Appends events (live updates keep arriving while replaying).
    pub fn extend(&mut self, events: impl IntoIterator<Item = Event>) {
        for ev in events {
            self.tail.apply(&ev);
            self.events.push(ev);
            if self.events.len().is_multiple_of(CHECKPOINT_EVERY) {
                let mut cp = self.tail.clone();
                cp.finish();
                self.checkpoints.push(cp);
            }
        }
        self.tail.finish();
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
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// The state after the whole history.
    pub fn latest(&self) -> &State {
        &self.tail
    }

    /// The state after the first `k` events (0 = before any).
    pub fn state_at(&self, k: usize) -> State {
        let k = k.min(self.events.len());
        let cp = k / CHECKPOINT_EVERY;
        let mut s = self.checkpoints.get(cp).cloned().unwrap_or_default();
        for ev in &self.events[cp * CHECKPOINT_EVERY..k] {
            s.apply(ev);
        }
        s.finish();
        s
    }

    /// The number of events up to and including the one with this seq.
    pub fn position_of_seq(&self, seq: u64) -> usize {
        self.events.partition_point(|e| e.seq <= seq)
    }

    /// Position (events applied) at the start of each iteration: the index
    /// of its first event, so `state_at(pos)` is the state just before it
    /// and `state_at(pos + 1)` the first state inside it.
    pub fn iteration_starts(&self) -> Vec<(u32, usize)> {
        let mut out: Vec<(u32, usize)> = Vec::new();
        for (i, ev) in self.events.iter().enumerate() {
            if let Some(n) = ev.body.iteration()
                && !out.iter().any(|(m, _)| *m == n)
            {
                out.push((n, i));
            }
        }
        out
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
                body: if seq % 100 == 1 {
                    EventBody::IterationStarted { iteration: (seq / 100 + 1) as u32, trigger: "ecarts".into() }
                } else {
                    EventBody::Note { text: format!("n{seq}") }
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
    fn extending_keeps_checkpoints_consistent() {
        let evs = events(1200);
        let mut h = History::new(evs[..300].to_vec());
        h.extend(evs[300..].iter().cloned());
        assert_eq!(h.state_at(1100), fold(&evs[..1100]));
    }
}
