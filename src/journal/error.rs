//! Errors of the journal, each naming the file and what went wrong.

use std::path::PathBuf;
use std::time::Duration;

use super::Appended;

/// What can go wrong reading or writing a pipeline.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// An I/O operation failed. The cause is part of the message and not
    /// also a `source()`, so an error chain (`{:#}`) does not say it twice.
    #[error("{op} {}: {cause}", path.display())]
    Io {
        /// What was being done ("append to", "read", "create"...).
        op: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        cause: std::io::Error,
    },
    /// The lock stayed held by another writer.
    #[error("{} is held by {holder} and was not released within {:.1}s; retry, or check that process", path.display(), waited.as_secs_f64())]
    LockTimeout {
        /// The lock file.
        path: PathBuf,
        /// How long we waited.
        waited: Duration,
        /// Who holds it, as far as can be told.
        holder: LockHolder,
    },
    /// `LOOPWATCH_LOCK_TIMEOUT` is not a number of seconds.
    #[error(
        "LOOPWATCH_LOCK_TIMEOUT must be a number of seconds between 0 and {max}, got '{value}'"
    )]
    BadLockTimeout {
        /// The value as given.
        value: String,
        /// The largest accepted.
        max: u64,
    },
    /// No `.pipeline` was found upwards from a folder.
    #[error("no pipeline (looked in {} and above; start one with `loopwatch record run-start`, or pass --pipeline DIR)", start.display())]
    NoPipeline {
        /// Where it would be.
        start: PathBuf,
    },
    /// The pipeline named on the command line does not exist.
    #[error("no pipeline at {}", dir.display())]
    NoPipelineAt {
        /// The folder.
        dir: PathBuf,
    },
    /// The journal's last seq leaves no room for the events to append.
    #[error("{}: the last seq is {last}: no further event can be numbered (start a new pipeline)", path.display())]
    SeqExhausted {
        /// The journal.
        path: PathBuf,
        /// Its last seq.
        last: u64,
    },
    /// The events were appended (and fsynced), but `state.json` could not be
    /// rewritten: it is stale until the next writer repairs it. Retrying
    /// would record the events twice.
    #[error("the event was recorded (seq {}) but {} could not be written: {cause}; it is stale until the next write repairs it (do not retry: the journal already has the event)", appended.state.seq, path.display())]
    StateStale {
        /// `state.json`.
        path: PathBuf,
        /// Why it could not be written.
        cause: std::io::Error,
        /// What was appended, for the caller to report as usual.
        appended: Box<Appended>,
    },
    /// While `loopwatch run` drives the pipeline, the journal was replaced,
    /// cut or rewritten at its end by another writer.
    #[error("{}: {why}: the journal is written by `loopwatch run` alone while it drives the run; it stops here (restore the journal, then `loopwatch run` resumes)", path.display())]
    Replaced {
        /// The journal.
        path: PathBuf,
        /// What changed.
        why: String,
    },
    /// Another writer appended lines the engine does not take (see
    /// [`super::Guard`]); they were moved out of the journal.
    #[error("{} line(s) written into the journal by another writer while `loopwatch run` drives it{}: {}; moved to {} and the journal put back as loopwatch wrote it; the run stops here (`loopwatch run` resumes it)", .0.lines, .0.first_seq.map(|s| format!(" (from seq {s})")).unwrap_or_default(), .0.why, .0.kept.display())]
    Foreign(super::Foreign),
    /// A line could not be serialised (should never happen).
    #[error("could not serialise an event: {0}")]
    Serialise(#[from] serde_json::Error),
}

/// The holder of the writer lock named in a timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockHolder {
    /// The process holding the lock, as the kernel reports it.
    Pid(u32),
    /// Unknown: the kernel did not say and the pid in the file is not a
    /// live process (a stale pid left by an earlier holder).
    Unknown,
}

impl std::fmt::Display for LockHolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LockHolder::Pid(p) => write!(f, "pid {p}"),
            LockHolder::Unknown => f.write_str("another process"),
        }
    }
}

impl JournalError {
    /// Shorthand for [`JournalError::Io`].
    pub fn io(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        JournalError::Io {
            op,
            path: path.into(),
            cause: source,
        }
    }
}

/// Why a path from a file (an event, the run's contract) was not used.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    /// A recorded path was empty.
    #[error("empty path")]
    Empty,
    /// A recorded path was absolute.
    #[error("absolute path refused: {0}")]
    Absolute(String),
    /// A recorded path climbs out with `..`.
    #[error("path leaving the pipeline refused: {0}")]
    LeavesPipeline(String),
    /// The contract's recorded path is absolute and outside the worktree.
    #[error("contract path refused: {recorded} is outside the worktree {}", worktree.display())]
    ContractOutside {
        /// The path as recorded.
        recorded: String,
        /// The worktree.
        worktree: PathBuf,
    },
    /// The contract's recorded path climbs out with `..`.
    #[error("contract path refused: {0} leaves the worktree")]
    ContractLeaves(String),
    /// The contract is a link whose target is outside the worktree.
    #[error("contract path refused: {0} resolves outside the worktree")]
    ContractResolvesOutside(String),
    /// The worktree itself could not be resolved.
    #[error("worktree unreadable: {0}")]
    WorktreeUnreadable(std::io::Error),
    /// The file could not be opened or read.
    #[error("cannot open {}: {cause}", path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        cause: std::io::Error,
    },
    /// The file resolves (links followed) outside the worktree.
    #[error("refused: {} resolves outside the worktree", .0.display())]
    ResolvesOutside(PathBuf),
    /// Not a regular file (FIFO, device, folder).
    #[error("refused: {} is not a regular file", .0.display())]
    NotRegular(PathBuf),
}
