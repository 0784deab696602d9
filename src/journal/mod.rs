//! The `.pipeline` store (PROTOCOL §2, §5): discovery, the locked append that
//! every writer goes through, the `state.json` snapshot, and the tail reader
//! every reader uses.
//!
//! Never prints and never touches the terminal; errors carry the path and
//! the operation that failed.

mod append;
mod chain;
mod error;
mod guard;
mod lock;
mod pipeline;
mod reader;
mod snapshot;
mod tail;

pub use append::{
    AppendOptions, Appended, MAX_STATE_BYTES, append, append_with, check_guard, write_state,
};
pub use chain::{Chain, ChainBreak, check_bytes as check_chain, line_hash};
pub use error::{JournalError, LockHolder, PathError};
pub use guard::{Allowed, Foreign, Guard};
pub(crate) use lock::read_pid;
pub use lock::{DEFAULT_LOCK_TIMEOUT, MAX_LOCK_TIMEOUT_SECS, PipelineLock, parse_timeout};
pub use pipeline::{ENGINE_LOCK, Pipeline, WRITER_LOCK, engine_holder, running_engine};
pub use reader::{
    JournalReader, LineProblem, MAX_LINE_BYTES, ReadBatch, read_all, version_problem,
};
pub use snapshot::{Snapshot, Source, parse_foreign_state, read_foreign_state, snapshot};
pub use tail::{TAIL_BYTES, read_tail};
