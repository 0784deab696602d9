//! A pipeline read incrementally: the journal from its last offset folded
//! into the state, or, when there is no journal, a `state.json` written by
//! another program (each distinct version kept, for replay).
//!
//! A journal truncated in place and being rewritten (a restore, a `cp`
//! over it) is empty or holds only a partial line for a moment: the feed
//! keeps showing the last state it read until the new file holds a
//! complete line, so a reader never sees the run drop back to nothing.

use std::time::SystemTime;

use crate::journal::{JournalReader, LineProblem, Pipeline, parse_foreign_state};
use crate::model::{Event, State};

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
    state: State,
    events: Vec<Event>,
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
            state: State::default(),
            events: Vec::new(),
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
        self.reset_pending = !self.events.is_empty();
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
                    self.state = State::default();
                    self.events.clear();
                    up.reset = true;
                }
                for ev in &batch.events {
                    self.state.apply(ev);
                }
                if !batch.events.is_empty() || up.reset {
                    self.state.finish();
                }
                up.new_events = batch.events.len();
                self.events.extend(batch.events);
                self.partial_since = if batch.partial {
                    self.partial_since.or_else(|| Some(SystemTime::now()))
                } else {
                    None
                };
                up.problems.extend(batch.problems);
            }
            Ok(batch) => {
                if batch.reset || std::mem::take(&mut self.reset_pending) {
                    self.state = State::default();
                    self.events.clear();
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
        up
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
                self.state = s;
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

    /// The folded state.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// Every event read, in order.
    pub fn events(&self) -> &[Event] {
        &self.events
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
        self.foreign && self.events.is_empty()
    }

    /// True when the pipeline folder exists.
    pub fn exists(&self) -> bool {
        self.exists
    }
}
