//! Why a FILE SCOPE edit was refused or failed, naming the contract and the problem.

use std::path::{Path, PathBuf};

/// What can go wrong tagging a path in a contract's FILE SCOPE.
#[derive(Debug, thiserror::Error)]
pub enum ScopeError {
    /// The file path to approve cannot be written into a contract line.
    #[error("refused file path {path:?}: {problem}")]
    InvalidPath {
        /// The path as given.
        path: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The reason cannot be written into a contract line.
    #[error("refused reason: {problem}")]
    InvalidReason {
        /// What is wrong with it.
        problem: String,
    },
    /// The date is not a real calendar date written `YYYY-MM-DD`.
    #[error("refused date {date:?}: expected a calendar date written YYYY-MM-DD")]
    InvalidDate {
        /// The date as given.
        date: String,
    },
    /// A line of the FILE SCOPE section is not UTF-8, so it cannot be matched safely.
    #[error("line {line}: the FILE SCOPE section holds bytes that are not UTF-8")]
    NotUtf8 {
        /// 1-based line number.
        line: usize,
    },
    /// A problem above, found while editing a contract file.
    #[error("{}: {source}", contract.display())]
    InContract {
        /// The contract file.
        contract: PathBuf,
        /// The problem.
        #[source]
        source: Box<ScopeError>,
    },
    /// The contract could not be read or replaced.
    #[error("cannot {op} {}: {source}", contract.display())]
    Io {
        /// What was being done ("read", "replace").
        op: &'static str,
        /// The contract file.
        contract: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Someone kept rewriting the contract while it was being edited.
    #[error(
        "{}: the file changed during each of {attempts} attempts to edit it; \
         nothing was written (retry when the other writer is done)",
        contract.display()
    )]
    Conflict {
        /// The contract file.
        contract: PathBuf,
        /// How many edits were computed and found stale.
        attempts: u32,
    },
}

impl ScopeError {
    /// Attaches the contract path to a problem found in its text.
    pub(crate) fn in_contract(self, contract: &Path) -> Self {
        ScopeError::InContract {
            contract: contract.to_path_buf(),
            source: Box::new(self),
        }
    }

    pub(crate) fn io(op: &'static str, contract: &Path, source: std::io::Error) -> Self {
        ScopeError::Io {
            op,
            contract: contract.to_path_buf(),
            source,
        }
    }
}
