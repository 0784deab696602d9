//! A pipeline read incrementally, and the one store of what was read: the
//! journal from its last offset appended to the pipeline's [`History`]
//! (its events, stored once, and the folded checkpoints), or, when there is
//! no journal, a `state.json` written by another program.
//!
//! The feed also holds the position shown: the newest (live) or a replay
//! position, which later events never move. Readers take the state and the
//! events at that position ([`Feed::shown_state`], [`Feed::shown_events`])
//! without copying an event.
//!
//! Truncation is handled here and only here: a journal truncated in place
//! and being rewritten (a restore, a `cp` over it) is empty or holds only a
//! partial line for a moment, so the feed keeps the last state it read until
//! the new file holds a complete line, and a reader never sees the run drop
//! back to nothing; then the history is rebuilt and a replay position is
//! kept inside it.

use std::time::SystemTime;

use crate::history::{Events, History};
use crate::journal::{JournalReader, LineProblem, Pipeline, parse_foreign_state};
use crate::model::State;

/// How many recent problems a feed keeps.
const MAX_PROBLEMS: usize = 64;

/// What one [`Feed::refresh`] changed.
#[derive(Debug, Default, Clone)]
pub struct FeedUpdate {
    /// Events appended since the last refresh.
    pub new_events: usize,
    /// The journal was truncated or replaced: everything was re-read.
    pub reset: bool,
    /// New problems found.
    pub problems: Vec<LineProblem>,
    /// Anything visible changed (state, partial flag, problems).
    pub changed: bool,
}

/// One pipeline's live view of the disk.
#[derive(Debug)]
pub struct Feed {
    pipeline: Pipeline,
    reader: JournalReader,
    history: History,
    /// The replay position (events applied), or `None` for the newest.
    position: Option<usize>,
    /// The state read from a foreign `state.json`.
    foreign_state: State,
    problems: Vec<LineProblem>,
    partial_since: Option<SystemTime>,
    /// The state comes from a foreign `state.json` (there is no journal).
    foreign: bool,
    foreign_hash: Option<String>,
    exists: bool,
    /// The journal was truncated or replaced but the new file holds no
    /// complete line yet: the old state stays until it does.
    reset_pending: bool,
}

impl Feed {
    /// A feed on a pipeline (which may not exist yet).
    pub fn new(pipeline: Pipeline) -> Self {
        let reader = JournalReader::new(pipeline.journal_path());
        Feed {
            pipeline,
            reader,
            history: History::default(),
            position: None,
            foreign_state: State::default(),
            problems: Vec::new(),
            partial_since: None,
            foreign: false,
            foreign_hash: None,
            exists: false,
            reset_pending: false,
        }
    }

    /// Re-reads everything from the start (after a watcher overflow, when
    /// events may have been lost): the journal is read again from byte 0 and
    /// the state refolded, and a foreign `state.json` is parsed again.
    pub fn rescan(&mut self) -> FeedUpdate {
        self.reader = JournalReader::new(self.pipeline.journal_path());
        self.foreign_hash = None;
        self.reset_pending = !self.history.is_empty();
        self.refresh()
    }

    /// Reads what changed on disk.
    pub fn refresh(&mut self) -> FeedUpdate {
        let mut up = FeedUpdate::default();
        let was_partial = self.partial_since.is_some();
        let existed = self.exists;
        self.exists = self.pipeline.exists();
        match self.reader.read_new() {
            Ok(batch) if !batch.missing => {
                let reset = batch.reset || self.reset_pending;
                self.reset_pending = reset && batch.events.is_empty();
                if self.reset_pending {
                    if batch.reset {
                        up.problems.push(LineProblem {
                            path: self.reader.path().to_path_buf(),
                            line: 0,
                            column: None,
                            message: "the journal was truncated or replaced: showing the last state read until it holds a complete line".into(),
                        });
                    }
                } else if reset {
                    self.clear();
                    up.reset = true;
                }
                up.new_events = batch.events.len();
                if !batch.events.is_empty() {
                    self.history.append(batch.events);
                }
                self.partial_since = if batch.partial {
                    self.partial_since.or_else(|| Some(SystemTime::now()))
                } else {
                    None
                };
                up.problems.extend(batch.problems);
            }
            Ok(batch) => {
                if batch.reset || std::mem::take(&mut self.reset_pending) {
                    self.clear();
                    up.reset = true;
                }
                self.partial_since = None;
                self.refresh_foreign(&mut up);
            }
            Err(e) => up.problems.push(LineProblem {
                path: self.reader.path().to_path_buf(),
                line: 0,
                column: None,
                message: format!("cannot read: {e}"),
            }),
        }
        self.problems.extend(up.problems.iter().cloned());
        if self.problems.len() > MAX_PROBLEMS {
            let cut = self.problems.len() - MAX_PROBLEMS;
            self.problems.drain(..cut);
        }
        up.changed = up.new_events > 0
            || up.reset
            || !up.problems.is_empty()
            || was_partial != self.partial_since.is_some()
            || existed != self.exists;
        if let Some(k) = &mut self.position {
            *k = (*k).min(self.history.len());
        }
        up
    }

    /// Drops what was read (the journal was replaced): the history starts
    /// over; a replay position is clamped once the new events are in.
    fn clear(&mut self) {
        self.history = History::default();
        self.foreign_state = State::default();
    }

    fn refresh_foreign(&mut self, up: &mut FeedUpdate) {
        let path = self.pipeline.state_path();
        let Ok(bytes) = crate::util::read_regular(&path, crate::journal::MAX_STATE_BYTES) else {
            return;
        };
        let hash = crate::util::sha256_tagged(&bytes);
        if self.foreign_hash.as_deref() == Some(hash.as_str()) {
            return;
        }
        self.foreign_hash = Some(hash);
        match parse_foreign_state(&path, &bytes) {
            Ok(mut s) => {
                s.finish();
                self.foreign_state = s;
                self.foreign = true;
                up.new_events += 1;
            }
            Err(e) => up.problems.push(LineProblem {
                path,
                line: 0,
                column: None,
                message: e.to_string(),
            }),
        }
    }

    /// The pipeline.
    pub fn pipeline(&self) -> &Pipeline {
        &self.pipeline
    }

    /// The newest folded state (the journal's, or a foreign `state.json`).
    pub fn state(&self) -> &State {
        if self.is_foreign() {
            &self.foreign_state
        } else {
            self.history.latest()
        }
    }

    /// Every event read, in order.
    pub fn events(&self) -> &Events {
        self.history.events()
    }

    /// The store: every event read, with the checkpoints for seeking.
    pub fn history(&self) -> &History {
        &self.history
    }

    /// The replay position (events applied), or `None` when live.
    pub fn position(&self) -> Option<usize> {
        self.position
    }

    /// Moves to a replay position (clamped to the events read), or back to
    /// the newest with `None`; returns the position now shown.
    pub fn seek(&mut self, position: Option<usize>) -> Option<usize> {
        self.position = position.map(|k| k.min(self.history.len()));
        self.position
    }

    /// The state at the position shown.
    pub fn shown_state(&self) -> State {
        match self.position {
            Some(k) => self.history.state_at(k),
            None => self.state().clone(),
        }
    }

    /// The events up to the position shown, shared with the store.
    pub fn shown_events(&self) -> Events {
        match self.position {
            Some(k) => self.history.events_to(k),
            None => self.history.events().clone(),
        }
    }

    /// Recent problems, oldest first.
    pub fn problems(&self) -> &[LineProblem] {
        &self.problems
    }

    /// Since when an incomplete last line has been waiting.
    pub fn partial_since(&self) -> Option<SystemTime> {
        self.partial_since
    }

    /// True when the state comes from a foreign `state.json` (the TUI
    /// keeps each version it sees in an [`super::ObservedLog`]).
    pub fn is_foreign(&self) -> bool {
        self.foreign && self.history.is_empty()
    }

    /// True when the pipeline folder exists.
    pub fn exists(&self) -> bool {
        self.exists
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Event, EventBody, fold};

    fn note(seq: u64) -> Event {
        Event {
            v: 1,
            seq,
            at: "2026-11-02T10:00:00Z".into(),
            prev: None,
            body: EventBody::Note {
                text: format!("n{seq}"),
            },
        }
    }

    fn write(dir: &std::path::Path, seqs: std::ops::RangeInclusive<u64>) -> Vec<Event> {
        let evs: Vec<Event> = seqs.map(note).collect();
        let text: String = evs.iter().map(|e| e.to_line() + "\n").collect();
        std::fs::write(dir.join("events.jsonl"), text).unwrap();
        evs
    }

    fn seqs(e: &Events) -> Vec<u64> {
        e.iter().map(|e| e.seq).collect()
    }

    #[test]
    fn a_replay_position_shows_its_prefix_and_later_events_do_not_move_it() {
        let d = tempfile::tempdir().unwrap();
        let evs = write(d.path(), 1..=3);
        let mut feed = Feed::new(Pipeline::at(d.path()));
        feed.refresh();
        assert_eq!(feed.seek(Some(2)), Some(2));
        assert_eq!(seqs(&feed.shown_events()), vec![1, 2]);
        assert_eq!(feed.shown_state(), fold(&evs[..2]));
        let evs = write(d.path(), 1..=5);
        assert_eq!(feed.refresh().new_events, 2);
        assert_eq!(feed.position(), Some(2));
        assert_eq!(seqs(&feed.shown_events()), vec![1, 2]);
        assert_eq!(feed.state(), &fold(&evs));
        assert_eq!(feed.seek(Some(99)), Some(5));
        assert_eq!(feed.seek(None), None);
        assert_eq!(seqs(&feed.shown_events()), vec![1, 2, 3, 4, 5]);
        assert_eq!(feed.shown_state(), fold(&evs));
    }

    #[test]
    fn a_truncated_journal_rebuilds_the_store_and_keeps_the_position_inside_it() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), 1..=6);
        let mut feed = Feed::new(Pipeline::at(d.path()));
        feed.refresh();
        feed.seek(Some(5));
        // Emptied in place: the last state read stays until a line is complete.
        std::fs::write(d.path().join("events.jsonl"), "").unwrap();
        let up = feed.refresh();
        assert!(!up.reset);
        assert_eq!((feed.history().len(), feed.position()), (6, Some(5)));
        let evs = write(d.path(), 1..=2);
        let up = feed.refresh();
        assert!(up.reset);
        assert_eq!(feed.history().len(), 2);
        assert_eq!(feed.position(), Some(2));
        assert_eq!(feed.shown_state(), fold(&evs));
    }
}
