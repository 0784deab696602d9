//! Why the recorder did not write: a refusal by the loop's rules (nothing
//! was written), or a failure of the journal underneath.

use crate::contract::ScopeError;
use crate::journal::{JournalError, PathError};
use crate::model::{Decision, GateName, HumanGateKind};

/// What a recorder call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The journal could not be read or written (see [`JournalError`]).
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// The loop's rules refused the call; nothing was written.
    #[error(transparent)]
    Refused(#[from] Refusal),
}

/// Why the loop's rules refused a call. Nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// `run-start` while a run is in progress.
    #[error("run {id} is still in progress (record its end first, or pass --force to start over)")]
    RunInProgress {
        /// The run's id.
        id: String,
    },
    /// No human gate has this id.
    #[error("no human gate {id} in this pipeline")]
    UnknownGate {
        /// The id asked for.
        id: String,
    },
    /// The gate has a decision already (shown, so a person sees who decided).
    #[error("{id} was already decided: {decision} by {by} at {at} ({reason})")]
    AlreadyDecided {
        /// The gate.
        id: String,
        /// The decision on record.
        decision: Decision,
        /// Who took it.
        by: String,
        /// When.
        at: String,
        /// Why (as stored: sanitised when printed).
        reason: String,
    },
    /// The decision is not one of the gate's options: each is listed with
    /// what it does.
    #[error("{decision} is not an option of {id} ({kind}): its options are {}", kind.option_lines(*gate).join("; "))]
    NotAnOption {
        /// The decision given.
        decision: Decision,
        /// The gate.
        id: String,
        /// Its kind.
        kind: HumanGateKind,
        /// The loop's gate that asked, when one did.
        gate: Option<GateName>,
    },
    /// A decision without a reason.
    #[error("a decision needs a non-empty reason")]
    BlankReason,
    /// The decision policy cannot be read: nothing is decided without it.
    #[error("refused: the decision policy cannot be used: {why}")]
    PolicyUnusable {
        /// File, line, key and problem.
        why: String,
    },
    /// A rule of the person's decision policy refused the decision.
    #[error(transparent)]
    Policy(#[from] crate::audit::policy::PolicyRefusal),
    /// Called from inside the process tree of something the run's engine
    /// started (an agent, a check, a repro test).
    #[error(
        "refused: this runs inside {what} of the run `loopwatch run` drives (its supervisor is pid {supervisor}): while it runs, only loopwatch writes the run's journal, and its gates are decided by a person from outside the run"
    )]
    InsideRun {
        /// What it runs inside (`agent dispatch #3`).
        what: String,
        /// The supervisor holding it (0: told by the environment).
        supervisor: u32,
    },
    /// A recording command while `loopwatch run` drives the pipeline.
    #[error(
        "refused: `loopwatch run` (pid {pid}) drives this run and writes its journal alone; decide its gates with `loopwatch decide`, watch it with `loopwatch watch`"
    )]
    EngineDrives {
        /// The engine's pid (0 when it cannot be told).
        pid: u32,
    },
    /// The engine that drives the run did not take the decision at its
    /// door (it is not listening, or went away).
    #[error(
        "not decided: `loopwatch run` (pid {pid}) drives this run and records its decisions, but its door did not answer ({why}); try again, or stop it and decide once it is gone"
    )]
    DoorClosed {
        /// The engine's pid (0 when it cannot be told).
        pid: u32,
        /// What went wrong.
        why: String,
    },
    /// The engine refused the decision handed to it at its door.
    #[error(transparent)]
    AtTheDoor(#[from] super::door::DoorRefusal),
    /// `split` of a finding that is not raised again, or was split before.
    #[error("{0}")]
    NoSuchMatch(String),
    /// A text the record needs is empty (`ask --subject ""`).
    #[error("{field} must not be empty")]
    Blank {
        /// The option (`--subject`, `--summary`).
        field: &'static str,
    },
    /// An iteration that the run does not have.
    #[error(
        "iteration {iteration} does not exist (the run is at iteration {last}; iterations start at 1)"
    )]
    NoSuchIteration {
        /// The iteration asked for.
        iteration: u32,
        /// The run's current iteration.
        last: u32,
    },
    /// A gate that expired before anyone decided it.
    #[error(
        "{id} expired at {at} (nobody decided within {after}): {action} applied, and a decision can no longer be recorded"
    )]
    Expired {
        /// The gate.
        id: String,
        /// When it expired.
        at: String,
        /// Its delay.
        after: String,
        /// The action applied.
        action: Decision,
    },
    /// An expiry recorded after a person decided.
    #[error("{id} was decided before it expired: {decision} by {by} at {at}")]
    DecidedBeforeExpiry {
        /// The gate.
        id: String,
        /// The decision.
        decision: Decision,
        /// Who.
        by: String,
        /// When.
        at: String,
    },
    /// An expiry recorded twice.
    #[error("{id} has already expired at {at} ({action} applied)")]
    AlreadyExpired {
        /// The gate.
        id: String,
        /// When.
        at: String,
        /// The action applied.
        action: Decision,
    },
    /// An expiry asked of a gate that has none.
    #[error("{id} has no expiry")]
    NoExpiry {
        /// The gate.
        id: String,
    },
    /// An expiry recorded before it is due.
    #[error("{id} does not expire before {due}")]
    NotDue {
        /// The gate.
        id: String,
        /// When it is due.
        due: String,
    },
    /// An expiry whose times cannot be read.
    #[error("{id}: its request time '{requested_at}' or its expiry '{after}' cannot be read")]
    ExpiryUnreadable {
        /// The gate.
        id: String,
        /// The request's time.
        requested_at: String,
        /// The expiry's delay.
        after: String,
    },
    /// A pipeline this process cannot write (a synced copy).
    #[error("{dir} is read-only here (a synced copy?): {what} on the host that writes it")]
    ReadOnly {
        /// The pipeline folder.
        dir: String,
        /// What would have been written.
        what: &'static str,
    },
    /// `run-end` twice.
    #[error("the run has already ended")]
    AlreadyEnded,
    /// A gate recorded after the run ended.
    #[error("the run has ended: start a new one with `loopwatch record run-start`")]
    RunEnded,
    /// `run-end --status complete` after an accepted partial delivery.
    #[error(
        "an abandonment was accepted as a partial delivery: the run cannot end complete (use --status partial)"
    )]
    CompleteAfterPartial,
    /// A gate out of the loop's order.
    #[error("GATE {} {gate} out of order: {expected} (pass --force to record it anyway)", gate.number())]
    OutOfOrder {
        /// The gate recorded.
        gate: GateName,
        /// What the loop expects instead.
        expected: Expected,
    },
    /// The run's contract path is not usable.
    #[error(transparent)]
    ContractPath(#[from] PathError),
    /// The contract could not be tagged for an approval.
    #[error("the approval was not recorded: {0}")]
    ContractEdit(#[from] ScopeError),
}

/// What the loop expects when a gate comes out of order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expected {
    /// A person must decide this gate first.
    Human(Option<String>),
    /// A person stopped the run.
    Stopped,
    /// Every gate passed.
    Done,
    /// The developer works first.
    Dev,
    /// This gate next.
    Gate(Option<GateName>),
    /// A step of the review stage first (`review <step>`).
    Review(String),
}

impl std::fmt::Display for Expected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expected::Human(id) => write!(
                f,
                "await {} first",
                id.as_deref().unwrap_or("the open human gate")
            ),
            Expected::Review(step) => write!(f, "the review stage goes first ({step})"),
            Expected::Stopped => f.write_str("the run was stopped by a person: record its end"),
            Expected::Done => f.write_str("every gate passed: record the end of the run"),
            Expected::Dev => {
                f.write_str("the developer must work first; every re-loop starts at GATE 0")
            }
            Expected::Gate(g) => write!(
                f,
                "the loop expects GATE {} {} next",
                g.map_or(0, GateName::number),
                g.map_or("floor", GateName::as_str)
            ),
        }
    }
}
