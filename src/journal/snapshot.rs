//! Reading a pipeline's whole state once, for one-shot readers (`status`,
//! `await`, `report`): the fold of `events.jsonl`, or failing that a
//! `state.json` written by another program.

use std::path::Path;

use crate::model::{Event, State, fold};

use super::{JournalError, LineProblem, Pipeline, read_all};

/// Where a snapshot came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Folded from `events.jsonl`.
    Journal,
    /// Only a `state.json` exists (written by another program).
    ForeignState,
}

/// A pipeline read once.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The folded state.
    pub state: State,
    /// The events (empty for a foreign state).
    pub events: Vec<Event>,
    /// Lines that were not used.
    pub problems: Vec<LineProblem>,
    /// A partial last line was left out.
    pub partial: bool,
    /// Where it came from.
    pub source: Source,
}

/// Reads a pipeline; `Ok(None)` when it has neither journal nor state.
pub fn snapshot(pipeline: &Pipeline) -> Result<Option<Snapshot>, JournalError> {
    let jp = pipeline.journal_path();
    if jp.exists() {
        let batch = read_all(&jp).map_err(|e| JournalError::io("read", &jp, e))?;
        let state = fold(&batch.events);
        return Ok(Some(Snapshot {
            state,
            events: batch.events,
            problems: batch.problems,
            partial: batch.partial,
            source: Source::Journal,
        }));
    }
    let sp = pipeline.state_path();
    match read_foreign_state(&sp)? {
        Some(state) => Ok(Some(Snapshot {
            state,
            events: Vec::new(),
            problems: Vec::new(),
            partial: false,
            source: Source::ForeignState,
        })),
        None => Ok(None),
    }
}

/// Parses a `state.json` written by another program; `Ok(None)` when absent.
pub fn read_foreign_state(path: &Path) -> Result<Option<State>, JournalError> {
    let bytes = match crate::util::read_regular(path, super::MAX_STATE_BYTES) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(JournalError::io("read", path, e)),
    };
    parse_foreign_state(path, &bytes).map(Some)
}

/// Parses the bytes of a `state.json` written by another program; the
/// error names the file, line and column.
pub fn parse_foreign_state(path: &Path, bytes: &[u8]) -> Result<State, JournalError> {
    serde_json::from_slice::<State>(bytes).map_err(|e| {
        JournalError::io(
            "parse",
            path,
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("line {} column {}: {e}", e.line(), e.column()),
            ),
        )
    })
}
