//! Errors of the journal, each naming the file and what went wrong.

use std::path::PathBuf;
use std::time::Duration;

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
    #[error("{} is held by {} and was not released within {:.1}s; retry, or check that process", path.display(), holder.map_or_else(|| "another process".to_string(), |p| format!("pid {p}")), waited.as_secs_f64())]
    LockTimeout {
        /// The lock file.
        path: PathBuf,
        /// How long we waited.
        waited: Duration,
        /// The holder's pid, when it wrote it.
        holder: Option<u32>,
    },
    /// No `.pipeline` was found and none may be created here.
    #[error("no .pipeline found from {} upwards (run `loopwatch record run-start` first, or pass --pipeline DIR)", start.display())]
    NoPipeline {
        /// Where the search started.
        start: PathBuf,
    },
    /// The caller refused the append (e.g. a gate already decided).
    #[error("{0}")]
    Refused(String),
    /// A line could not be serialised (should never happen).
    #[error("could not serialise an event: {0}")]
    Serialise(#[from] serde_json::Error),
}

impl JournalError {
    /// Shorthand for [`JournalError::Io`].
    pub fn io(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        JournalError::Io { op, path: path.into(), cause: source }
    }
}
