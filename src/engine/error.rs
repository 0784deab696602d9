//! Why the engine could not go on: each refusal a variant of its own, the
//! words the person reads written once, here. `loopwatch run` maps them to
//! its exit code through `cli::exit`.

use std::path::PathBuf;

use super::dispatch::DispatchError;
use super::lock::EngineLockError;
use crate::journal::{JournalError, PathError};
use crate::model::event::AgentRole;

/// Why the engine could not go on.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// Another engine drives the pipeline, or its lock failed.
    #[error(transparent)]
    Lock(#[from] EngineLockError),
    /// Nothing can run as asked (no contract, a run driven by someone else...).
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The journal refused or failed an append.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// The recorder refused or failed a step.
    #[error(transparent)]
    Record(#[from] crate::recorder::RecordError),
    /// A dispatch could not be run or recorded.
    #[error(transparent)]
    Dispatch(#[from] DispatchError),
    /// The filesystem watch could not be set up.
    #[error("watch {}: {source}", path.display())]
    Watch {
        /// The pipeline folder.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// What the engine refuses to do, or could not do, as asked.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// A new run was asked for while one is in progress.
    #[error(
        "run {run} is still in progress: `loopwatch run` resumes it; --new starts anew only after a run ended"
    )]
    InProgress {
        /// The run in progress.
        run: String,
    },
    /// The run in progress was recorded with `loopwatch record`.
    #[error(
        "run {run} is driven by another orchestrator (recorded with `loopwatch record`): end it first, or keep driving it that way"
    )]
    OtherOrchestrator {
        /// The run in progress.
        run: String,
    },
    /// The contract given is not the one of the run in progress.
    #[error(
        "run {run} in progress is on {contract}, not {given}: resume it without a contract, or end it first"
    )]
    OtherContract {
        /// The run in progress.
        run: String,
        /// Its contract.
        contract: String,
        /// The contract given.
        given: String,
    },
    /// A contract was given for a pipeline whose run ended.
    #[error(
        "run {run} already ended {status} in this pipeline, and a journal holds one run: {hint}"
    )]
    Ended {
        /// The run.
        run: String,
        /// How it ended.
        status: &'static str,
        /// What to do instead.
        hint: String,
    },
    /// A dry run's pipeline holds an ended run and no contract was given.
    #[error("run {run} already ended {status}: give a CONTRACT to start a new one")]
    EndedNoContract {
        /// The run.
        run: String,
        /// How it ended.
        status: &'static str,
    },
    /// Nothing to resume and no contract to start with.
    #[error("no run in progress in this pipeline: give the CONTRACT to start one")]
    NoContract,
    /// The journal holds no run where one was expected.
    #[error("the journal holds no run")]
    NoRun,
    /// `loopwatch.toml` has no agent for a role the loop needs.
    #[error("{} has no [agents.{role}]", config.display())]
    NoAgent {
        /// The config file.
        config: PathBuf,
        /// The role.
        role: AgentRole,
    },
    /// The door for a person's decisions could not be opened.
    #[error("cannot open the door through which a person's decisions reach {}: {source}", dir.display())]
    Door {
        /// The pipeline folder.
        dir: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// `GATES_TIMEOUT` is not a timeout.
    #[error(transparent)]
    Gate0Timeout(#[from] crate::gate0::TimeoutError),
    /// GATE 0's task did not finish.
    #[error("GATE 0 stopped: {0}")]
    Gate0Stopped(tokio::task::JoinError),
    /// The contract recorded is not a path inside the worktree.
    #[error(transparent)]
    ContractPath(#[from] PathError),
    /// The contract could not be read.
    #[error("contract {}: {source}", path.display())]
    ReadContract {
        /// The contract.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The worktree could not be resolved.
    #[error("worktree {}: {source}", path.display())]
    Worktree {
        /// The worktree.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The contract is outside the worktree.
    #[error("contract {} is outside the worktree {}", contract.display(), worktree.display())]
    OutsideWorktree {
        /// The contract.
        contract: PathBuf,
        /// The worktree.
        worktree: PathBuf,
    },
    /// No `[run] diff` and no HEAD to take instead.
    #[error(
        "cannot read HEAD in {} (is it a git worktree with a commit?): set [run] diff in {}",
        worktree.display(),
        config.display()
    )]
    NoHead {
        /// The worktree.
        worktree: PathBuf,
        /// The config file.
        config: PathBuf,
    },
    /// The ended run could not be archived.
    #[error("cannot archive the ended run: {what} {}: {source}", path.display())]
    Archive {
        /// What was being done.
        what: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The contract's watch failed (its text, or its lock).
    #[error("{0}")]
    ContractWatch(String),
    /// The triage of an iteration could not be written as JSON.
    #[error("the triage of iteration {iteration}: {source}")]
    TriageJson {
        /// The iteration.
        iteration: u32,
        /// The cause.
        source: serde_json::Error,
    },
    /// The triage file is not a triage.
    #[error("{0}")]
    Triage(String),
}
