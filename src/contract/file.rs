//! [`gate_path_in_file`]: the FILE SCOPE edit applied to a contract on disk.
//!
//! The file is read, edited in memory, re-read just before the atomic
//! replacement, and replaced only when it still holds what the edit was
//! computed from; otherwise the edit is computed again on the new content.
//! Nothing locks the contract against a person's editor, so this narrows
//! the window to the time between the last comparison and the rename.

use std::path::Path;

use super::error::ScopeError;
use super::scope::{ScopeEdit, gate_path};
use crate::util::{replace_atomically, sha256_tagged};

/// How many times a stale edit is computed again before giving up.
pub const RETRIES: u32 = 3;

/// What [`gate_path_in_file`] did; `before`/`after` are what the
/// `human.decided` event records as `contractEdit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContractEditOutcome {
    /// `sha256:<hex>` of the content the edit was applied to.
    pub before: String,
    /// `sha256:<hex>` of the content written (equal to `before` when nothing changed).
    pub after: String,
    /// The file was replaced.
    pub changed: bool,
    /// The content edited is not the content the caller read: it differs
    /// from `expected_hash`, or (without one) from this call's first read.
    pub content_changed: bool,
}

/// Records `path` as approved in the FILE SCOPE of the `contract` file.
///
/// `expected_hash` is the `sha256:<hex>` of the content the person was
/// shown. When the file no longer has it, the edit is still made if the
/// path is not gated yet, and the outcome says `content_changed`. A
/// symlinked contract has its target replaced and keeps its link;
/// permissions are kept.
pub fn gate_path_in_file(
    contract: &Path,
    path: &str,
    date: &str,
    reason: Option<&str>,
    expected_hash: Option<&str>,
) -> Result<ContractEditOutcome, ScopeError> {
    gate_path_in_file_with_hook(contract, path, date, reason, expected_hash, &mut |_| {})
}

/// [`gate_path_in_file`], calling `before_commit(attempt)` (1-based) after
/// each edit is computed and before the file is re-read for the final
/// comparison. Tests use it to rewrite the file inside that window.
pub fn gate_path_in_file_with_hook(
    contract: &Path,
    path: &str,
    date: &str,
    reason: Option<&str>,
    expected_hash: Option<&str>,
    before_commit: &mut dyn FnMut(u32),
) -> Result<ContractEditOutcome, ScopeError> {
    // Bounded, and never blocking on a FIFO planted as the contract.
    let read = || {
        crate::util::read_regular(contract, crate::util::MAX_TEXT_BYTES)
            .map_err(|e| ScopeError::io("read", contract, e))
    };
    let mut current = read()?;
    let baseline = expected_hash.map_or_else(|| sha256_tagged(&current), str::to_owned);
    for attempt in 1..=RETRIES + 1 {
        let before = sha256_tagged(&current);
        let content_changed = before != baseline;
        let edited = match gate_path(&current, path, date, reason) {
            Ok(ScopeEdit::AlreadyGated) => {
                let after = before.clone();
                return Ok(ContractEditOutcome {
                    before,
                    after,
                    changed: false,
                    content_changed,
                });
            }
            Ok(ScopeEdit::Changed(edited)) => edited,
            Err(e) => return Err(e.in_contract(contract)),
        };
        before_commit(attempt);
        let now = read()?;
        if now != current {
            current = now;
            continue;
        }
        replace_atomically(contract, &edited)
            .map_err(|e| ScopeError::io("replace", contract, e))?;
        let after = sha256_tagged(&edited);
        return Ok(ContractEditOutcome {
            before,
            after,
            changed: true,
            content_changed,
        });
    }
    Err(ScopeError::Conflict {
        contract: contract.to_path_buf(),
        attempts: RETRIES + 1,
    })
}
