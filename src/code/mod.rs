//! The code of a run: a git tree per iteration, the diff between two of
//! them, and the lines a finding cites, read from a snapshot.
//!
//! A snapshot ([`snapshot()`]) writes the worktree as a git tree object
//! (tracked and untracked files, ignored ones left out, the pipeline folder
//! left out) through a temporary index, so the user's index, HEAD,
//! branches, stash and files are never touched. [`keep`] makes it reachable
//! under `refs/loopwatch/<run-id>/` so `git gc` keeps it; [`remove_kept`]
//! is `loopwatch gc`. [`diff()`] and [`excerpt()`] only read objects.
//!
//! Nothing here prints or touches the terminal: the text of files is
//! returned as data and sanitised by whoever shows it.

mod bundle;
mod diff;
mod excerpt;
mod git;
mod hunks;
mod objects;
mod refs;
mod run;
mod snapshot;
mod text;

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

pub use bundle::{bundle_run, trees_present, unbundle_into};
pub use diff::{DiffLimits, FileDiff, FileStatus, Hunk, diff, diff_with};
pub use excerpt::{Excerpt, ExcerptLine, excerpt};
pub use git::{GIT_TIMEOUT, answer as git_answer, stdout as git_stdout};
pub use refs::{KeptSnapshot, SNAPSHOT_REFS, keep, kept, ref_prefix, remove_kept};
pub use run::{CodeChanges, RunTrees};
pub use snapshot::{
    CodeSnapshot, SNAPSHOTS_ENV, revision_tree, snapshot, snapshot_excluding, take,
};
pub use text::{diff_text, file_list};

/// A git tree object id (40 hex digits, 64 in a SHA-256 repository).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct TreeId(String);

impl TreeId {
    /// Parses an object id; `None` unless it is 40 or 64 lowercase hex digits.
    pub fn parse(s: &str) -> Option<TreeId> {
        let ok = matches!(s.len(), 40 | 64)
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        ok.then(|| TreeId(s.to_string()))
    }

    /// The hex id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TreeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why a snapshot, diff or excerpt could not be made.
#[derive(Debug, thiserror::Error)]
pub enum CodeError {
    /// The folder is not inside a git worktree.
    #[error("{} is not inside a git worktree", path.display())]
    NotARepository {
        /// The folder.
        path: PathBuf,
    },
    /// git could not be started or failed.
    #[error("git {command} in {}: {message}", cwd.display())]
    Git {
        /// The git subcommand and its arguments.
        command: String,
        /// Where it ran.
        cwd: PathBuf,
        /// git's message.
        message: String,
    },
    /// git ran past its deadline and was killed.
    #[error("git {command} in {}: killed after {} s", cwd.display(), after.as_secs())]
    Timeout {
        /// The git subcommand and its arguments.
        command: String,
        /// Where it ran.
        cwd: PathBuf,
        /// The deadline.
        after: Duration,
    },
    /// A temporary file for the index could not be made.
    #[error("{operation} {}: {source}", path.display())]
    Io {
        /// What was being done.
        operation: &'static str,
        /// On which path.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// git printed something this module cannot read.
    #[error("git {command}: unexpected output: {detail}")]
    Unexpected {
        /// The git subcommand.
        command: String,
        /// What was wrong.
        detail: String,
    },
    /// The snapshot is not in the repository (removed by `loopwatch gc`, or
    /// recorded in another clone).
    #[error("snapshot {tree} is not in the repository at {} (removed by `loopwatch gc`, or recorded elsewhere)", repo.display())]
    MissingTree {
        /// The tree id.
        tree: TreeId,
        /// The repository looked in.
        repo: PathBuf,
    },
    /// A path that does not name a file inside the worktree.
    #[error("path refused: {path}: {why}")]
    Path {
        /// The path as given.
        path: String,
        /// Why it was refused.
        why: &'static str,
    },
    /// A run id that cannot be part of a ref name.
    #[error("run id refused for a ref name: {0:?}")]
    RunId(String),
}
