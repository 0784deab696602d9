//! GATE 0, the deterministic floor: parse a contract's acceptance criteria
//! (`status`), run their CHECK: oracles fail-closed and write the evidence
//! back (`run`), byte-compatible with the reference floor.
//!
//! [`contract::parse`] is a pure function over the file's bytes; [`status`]
//! and [`run`] read the file, judge it and return a [`Gate0Outcome`] whose
//! `report` is the exact text to print. Nothing here touches the terminal:
//! the caller decides whether to pass the report through
//! [`escape_for_terminal`].

pub mod contract;
pub mod evidence;
pub mod exec;
pub mod line;
pub mod report;
pub mod timeout;

use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::model::{FloorRow, Verdict, VerdictKind};

pub use contract::{Contract, Criterion, LedgerError, parse};
pub use evidence::CheckOutcome;
pub use report::{escape_for_terminal, fatal_line};
pub use timeout::{Timeout, TimeoutError};

/// `status` (parse only) or `run` (execute and write evidence).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
pub enum Mode {
    /// Parse and report; never executes, never writes.
    Status,
    /// Execute every runnable criterion and write its evidence back.
    Run,
}

impl Mode {
    /// The word used on the command line and in the report title.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Parses `status` / `run`.
    pub fn from_arg(arg: &[u8]) -> Option<Self> {
        match arg {
            b"status" => Some(Mode::Status),
            b"run" => Some(Mode::Run),
            _ => None,
        }
    }
}

/// The result of one `status` or `run`.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate0Outcome {
    /// Which mode ran.
    pub mode: Mode,
    /// The contract path as given.
    pub contract_path: PathBuf,
    /// One row per criterion (empty after a fatal error).
    pub rows: Vec<FloorRow>,
    /// The verdict (`ERROR(<reason>)` after a fatal error).
    pub verdict: Verdict,
    /// The exact report text (stdout of the command).
    pub report: Vec<u8>,
    /// 0 MET, 2 ERROR / UNMET / PENDING, 3 ABANDONED.
    pub exit_code: u8,
}

/// The errors that end GATE 0 with a one-line report and exit 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Fatal {
    /// Wrong mode or argument count.
    #[error("usage: loopwatch gate0 {{status|run}} <contract-path>")]
    Usage,
    /// The contract cannot be read.
    #[error("contract unreadable: {}", .path.display())]
    Unreadable {
        /// The path as given.
        path: PathBuf,
    },
    /// No numbered criterion under `## ACCEPTANCE CRITERIA`.
    #[error("no numbered criteria under ## ACCEPTANCE CRITERIA")]
    NoCriteria,
    /// `GATES_TIMEOUT` is not a duration.
    #[error(transparent)]
    Timeout(#[from] TimeoutError),
}

/// Parses and reports a contract; never executes, never writes.
pub fn status(path: &Path, timeout: &Timeout) -> Gate0Outcome {
    judge(Mode::Status, path, timeout, None)
}

/// Runs every runnable criterion of a clean contract and writes each one's
/// evidence into its `EVIDENCE:` line (atomically, every other byte kept).
/// A malformed contract runs nothing and writes nothing; a run stopped by
/// `at.stop` writes nothing either.
pub fn run(path: &Path, timeout: &Timeout, at: &exec::Checks) -> Gate0Outcome {
    judge(Mode::Run, path, timeout, Some(at))
}

/// The outcome of a fatal error: the one-line report, exit 2.
pub fn fatal_outcome(mode: Mode, path: &Path, fatal: &Fatal) -> Gate0Outcome {
    let reason = fatal.to_string();
    let report = match fatal {
        // The path goes out byte for byte, even when it is not UTF-8.
        Fatal::Unreadable { path } => {
            let mut raw = b"contract unreadable: ".to_vec();
            raw.extend_from_slice(path.as_os_str().as_bytes());
            fatal_line(&raw)
        }
        other => fatal_line(other.to_string().as_bytes()),
    };
    Gate0Outcome {
        mode,
        contract_path: path.to_path_buf(),
        rows: Vec::new(),
        report,
        verdict: Verdict {
            kind: VerdictKind::Error,
            n: None,
            reason: Some(reason),
        },
        exit_code: 2,
    }
}

/// Message of the error added when the file changed under the checks.
pub const CHANGED_WHILE_RUNNING: &str =
    "contract changed while the checks ran: evidence not written";

/// Message of the error added when the checks' stop was asked for.
pub const INTERRUPTED: &str = "interrupted: checks stopped, evidence not written";

fn judge(mode: Mode, path: &Path, timeout: &Timeout, at: Option<&exec::Checks>) -> Gate0Outcome {
    let bytes = match read_contract(path) {
        Ok(b) => b,
        Err(_) => {
            return fatal_outcome(
                mode,
                path,
                &Fatal::Unreadable {
                    path: path.to_path_buf(),
                },
            );
        }
    };
    let contract = parse(&bytes);
    if contract.criteria.is_empty() {
        return fatal_outcome(mode, path, &Fatal::NoCriteria);
    }
    let mut outcomes: Vec<Option<CheckOutcome>> = vec![None; contract.criteria.len()];
    let mut run_errors = Vec::new();
    if let Some(at) = at.filter(|_| mode == Mode::Run && contract.errors.is_empty()) {
        for (slot, crit) in outcomes.iter_mut().zip(&contract.criteria) {
            if crit.is_runnable() && at.stop.asked().is_none() {
                let done = exec::run_check(&crit.check, &crit.expect, timeout.limit(), at);
                *slot = Some(done.outcome);
            }
        }
        if at.stop.asked().is_some() {
            run_errors.push(INTERRUPTED.to_owned());
        } else if let Err(e) = write_back(path, &bytes, &contract, &outcomes, timeout.label()) {
            run_errors.push(e);
        }
    }
    report::build(&report::ReportInput {
        mode,
        path,
        timeout_label: timeout.label(),
        contract: &contract,
        outcomes: &outcomes,
        run_errors: &run_errors,
    })
}

/// Reads the contract (a folder is as unreadable as a missing file).
fn read_contract(path: &Path) -> io::Result<Vec<u8>> {
    crate::util::read_regular(path, crate::util::MAX_TEXT_BYTES)
}

/// Rewrites the EVIDENCE lines of the criteria that ran, unless the file
/// changed since it was parsed. Returns the report error otherwise.
fn write_back(
    path: &Path,
    parsed: &[u8],
    contract: &Contract,
    outcomes: &[Option<CheckOutcome>],
    timeout_label: &str,
) -> Result<(), String> {
    let mut edits: Vec<_> = contract
        .criteria
        .iter()
        .zip(outcomes)
        .filter_map(|(crit, o)| {
            let ev = crit.evidence.as_ref()?;
            let text = format!("EVIDENCE: {}", o.as_ref()?.evidence(timeout_label));
            Some((ev.replace.clone(), text.into_bytes()))
        })
        .collect();
    if edits.is_empty() {
        return Ok(());
    }
    edits.sort_by_key(|(r, _)| r.start);
    match read_contract(path) {
        Ok(now) if now == parsed => {}
        _ => return Err(CHANGED_WHILE_RUNNING.to_owned()),
    }
    let updated = evidence::splice(parsed, &edits);
    crate::util::replace_atomically(path, &updated)
        .map_err(|e| format!("evidence not written: {e}"))
}
