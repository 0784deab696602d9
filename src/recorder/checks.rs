//! The recorder's refusals, as checks of the state under the lock: a
//! decision that may not be taken, an iteration the run does not have, a
//! gate out of the loop's order, a contract path that leaves the worktree.

use std::path::PathBuf;

use super::{Expected, Refusal};
use crate::journal::PathError;
use crate::model::event::HumanDecision;
use crate::model::state::RunStatus;
use crate::model::*;

/// The contract file of a run: its recorded path inside the worktree.
/// Absolute paths and `..` are refused, and so is a symlink whose target
/// is outside the worktree (one whose target is inside is followed: its
/// target is edited and the link kept).
pub fn contract_path(worktree: &std::path::Path, recorded: &str) -> Result<PathBuf, PathError> {
    let p = std::path::Path::new(recorded);
    let rel = if p.is_absolute() {
        p.strip_prefix(worktree)
            .map_err(|_| PathError::ContractOutside {
                recorded: recorded.into(),
                worktree: worktree.to_path_buf(),
            })?
    } else {
        p
    };
    if rel
        .components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err(PathError::ContractLeaves(recorded.into()));
    }
    let joined = worktree.join(rel);
    // A symlink is followed when the contract is edited: its target must be inside too.
    if let (Ok(target), Ok(root)) = (
        std::fs::canonicalize(&joined),
        std::fs::canonicalize(worktree),
    ) && !target.starts_with(&root)
    {
        return Err(PathError::ContractResolvesOutside(recorded.into()));
    }
    Ok(joined)
}

/// Why a decision may not be recorded, if it may not.
pub fn check_decision(s: &State, d: &HumanDecision) -> Result<(), Refusal> {
    let Some(gate) = s.human_gate(&d.id) else {
        return Err(Refusal::UnknownGate { id: d.id.clone() });
    };
    if let Some(prev) = &gate.decision {
        return Err(Refusal::AlreadyDecided {
            id: d.id.clone(),
            decision: prev.decision.decision,
            by: prev.decision.by.clone(),
            at: prev.at.clone(),
            reason: prev.decision.reason.clone(),
        });
    }
    if let Some(x) = &gate.expired {
        return Err(Refusal::Expired {
            id: d.id.clone(),
            at: x.at.clone(),
            after: x.after.clone(),
            action: x.action,
        });
    }
    let kind = gate.request.kind;
    if !gate.request.options.contains(&d.decision) || kind.choice(d.decision).is_none() {
        return Err(Refusal::NotAnOption {
            decision: d.decision,
            id: d.id.clone(),
            kind,
            gate: gate.request.gate,
        });
    }
    if d.reason.trim().is_empty() {
        return Err(Refusal::BlankReason);
    }
    Ok(())
}

/// Refuses an iteration the run does not have: 0, or past the current one
/// (iteration 1 is accepted before the first `iteration.started`).
pub fn check_iteration(s: &State, iteration: u32) -> Result<(), Refusal> {
    let last = s.iteration_number().max(1);
    if iteration == 0 || iteration > last {
        return Err(Refusal::NoSuchIteration { iteration, last });
    }
    Ok(())
}

/// True when a person accepted an abandonment as a partial delivery (the
/// rule is [`State::accepted_partial`]).
pub fn accepted_partial(s: &State) -> bool {
    s.accepted_partial()
}

pub(super) fn check_order(s: &State, gate: GateName, force: bool) -> Result<(), Refusal> {
    if force {
        return Ok(());
    }
    if s.status == RunStatus::Ended {
        return Err(Refusal::RunEnded);
    }
    let n = &s.next;
    let expected = match n {
        Next::Human { id, .. } => Expected::Human(Some(id.clone())),
        Next::Stop { .. } => Expected::Stopped,
        Next::Done { .. } => Expected::Done,
        // New work is judged from GATE 0, whatever was next.
        Next::Dev { .. } | Next::Review { .. } if gate == GateName::Floor => return Ok(()),
        Next::Dev { .. } => Expected::Dev,
        Next::Review { .. } => Expected::Review(n.machine_line()),
        Next::Gate { gate: g, .. } | Next::Retry { gate: g, .. } => {
            if *g == gate || gate == GateName::Floor {
                return Ok(());
            }
            Expected::Gate(Some(*g))
        }
    };
    Err(Refusal::OutOfOrder { gate, expected })
}
