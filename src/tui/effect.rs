//! What the app asks the event loop to do: [`Effect`], pure data.
//!
//! The app never writes a file, a clipboard or a terminal byte itself; it
//! returns effects and the event loop performs them, then reports results
//! back (`App::on_write_result`, `App::on_log_loaded`,
//! `App::on_evidence_checked`).

use std::path::PathBuf;

use crate::model::Decision;

/// A decision a person confirmed, to be appended to the journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionRequest {
    /// The human gate decided.
    pub id: String,
    /// The option chosen.
    pub decision: Decision,
    /// Why (never empty).
    pub reason: String,
    /// `sha256:<hex>` of `evidence`.
    pub evidence_hash: String,
    /// The exact evidence text shown in the dialog (the evidence file's bytes).
    pub evidence: String,
    /// The note to the developer typed in the dialog, if any.
    pub note: Option<String>,
}

/// The evidence of an open dialog to recompute from what is there now
/// (the worktree, the contract, the saved output), off the UI thread.
#[derive(Debug, Clone, PartialEq)]
pub struct EvidenceCheck {
    /// The gate, with the evidence the dialog shows now.
    pub request: Box<crate::model::event::HumanRequest>,
    /// The run's contract and diff range.
    pub sources: crate::recorder::evidence::Sources,
    /// The hash of the evidence shown when the check was asked (a result
    /// for other evidence is dropped).
    pub against: String,
    /// Show the recomputed evidence (a refresh) instead of only saying
    /// that it changed.
    pub apply: bool,
}

// Every field compares totally (JSON values, strings, flags): `Effect` is `Eq`.
impl Eq for EvidenceCheck {}

/// A move asked of the replay driver (the rules live with the history).
pub use crate::history::ReplayMove;

/// Something for the event loop to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Append a decision (then call `App::on_write_result`).
    WriteDecision(DecisionRequest),
    /// Put text on the clipboard (OSC 52).
    CopyToClipboard(String),
    /// Read the tail of a file (then call `App::on_log_loaded` with this path).
    LoadLog(PathBuf),
    /// Compute the code diff of the `d` overlay (then call `App::on_code_loaded`).
    LoadCode(crate::tui::code_pane::CodeRequest),
    /// Recompute a dialog's evidence (then call `App::on_evidence_checked`).
    CheckEvidence(EvidenceCheck),
    /// Ring the terminal bell.
    Bell,
    /// Write a terminal notification (OSC 9 / OSC 777) for a new human gate.
    TerminalNotice {
        /// The gate that opened.
        gate: String,
        /// One line for the person (sanitised when written).
        text: String,
    },
    /// Move the replay position.
    Replay(ReplayMove),
    /// Suspend the TUI and show a whole log in `$PAGER` (then call
    /// `App::on_pager_closed`).
    OpenPager(crate::tui::pager::PagerRequest),
    /// Leave the program.
    Quit,
}
