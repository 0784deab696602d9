//! The contract as judged, kept by the engine: the judged parts recorded
//! in the journal (`contract.judged`), the contract's last bytes loopwatch
//! accepted (in memory, and in `.pipeline/contract.judged.md` for a
//! resume), and the looks that compare the file with them:
//!
//! - after every dispatch, a change of the judged parts is the agent's:
//!   the file is put back to the bytes last accepted and the changes are
//!   the dispatch's failure (a change of other lines, an `ABANDON:` the
//!   developer adds, is accepted);
//! - between the engine's steps, a change of the judged parts is a
//!   person's: a `contract-changed` gate asks whether to adopt it (GATE 0
//!   then judges again) or put it back.
//!
//! The contract is read as any file from outside: never blocking, a
//! regular file only, bounded. A contract removed, replaced by a FIFO or by
//! a link it was not is a change too, and putting it back writes a regular
//! file in its place (never through a link it became).

use std::path::{Path, PathBuf};

use crate::contract::judged::Judged;
use crate::journal::Pipeline;
use crate::model::event::ContractJudged;

/// The copy of the last accepted bytes, in `.pipeline/`.
pub const COPY: &str = "contract.judged.md";

/// The engine's view of the contract.
#[derive(Debug)]
pub struct ContractWatch {
    path: PathBuf,
    rel: String,
    copy: PathBuf,
    judged: Judged,
    sha: String,
    known: Vec<u8>,
    was_link: bool,
}

/// What a look between steps found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Look {
    /// The judged parts are as recorded.
    Same,
    /// They changed: the changes, one line each.
    Changed(Vec<String>),
}

impl ContractWatch {
    /// The watch of the contract `rel` (relative to the worktree) as it is
    /// now, and the `contract.judged` payload recording it (`why`).
    pub fn record_now(
        pipeline: &Pipeline,
        rel: &str,
        why: &str,
    ) -> Result<(ContractWatch, ContractJudged), String> {
        let path = pipeline.worktree().join(rel);
        let bytes = read(&path)?;
        let w = ContractWatch::new(pipeline, rel, bytes)?;
        let payload = w.payload(why, None, false);
        Ok((w, payload))
    }

    /// The watch of a run whose contract was recorded as `recorded`: the
    /// bytes last accepted are the file's when its judged parts are the
    /// recorded ones, else the copy's (when they are); `Err` when neither.
    pub fn resume(pipeline: &Pipeline, recorded: &ContractJudged) -> Result<ContractWatch, String> {
        let path = pipeline.worktree().join(&recorded.path);
        let copy = pipeline.dir().join(COPY);
        for bytes in [read(&path), read(&copy)].into_iter().flatten() {
            if Judged::read(&bytes).sha256() == recorded.judged {
                let w = ContractWatch::new(pipeline, &recorded.path, bytes)?;
                return Ok(w);
            }
        }
        Err(format!(
            "neither the contract {} nor its copy {} holds the judged parts recorded ({})",
            path.display(),
            copy.display(),
            recorded.judged
        ))
    }

    fn new(pipeline: &Pipeline, rel: &str, known: Vec<u8>) -> Result<ContractWatch, String> {
        let path = pipeline.worktree().join(rel);
        let judged = Judged::read(&known);
        let w = ContractWatch {
            was_link: std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()),
            path,
            rel: rel.to_string(),
            copy: pipeline.dir().join(COPY),
            sha: judged.sha256(),
            judged,
            known,
        };
        w.keep_copy()?;
        Ok(w)
    }

    /// The `contract.judged` payload of what is accepted now.
    pub fn payload(&self, why: &str, gate: Option<String>, rerun: bool) -> ContractJudged {
        ContractJudged {
            path: self.rel.clone(),
            judged: self.sha.clone(),
            bytes: crate::util::sha256_tagged(&self.known),
            why: why.to_string(),
            gate,
            rerun,
            extra: Default::default(),
        }
    }

    /// After a dispatch: the judged parts' changes, put back (empty when
    /// none); other changes are accepted.
    pub fn after_dispatch(&mut self) -> Result<Vec<String>, String> {
        match self.look_now() {
            Ok((Look::Same, bytes)) => {
                self.accept_bytes(bytes)?;
                Ok(Vec::new())
            }
            Ok((Look::Changed(changes), _)) => {
                self.put_back()?;
                Ok(changes)
            }
            Err(why) => {
                self.put_back()?;
                Ok(vec![why])
            }
        }
    }

    /// Between steps: the judged parts as recorded (other changes, such as
    /// GATE 0's evidence, accepted), or their changes.
    pub fn look(&mut self) -> Result<Look, String> {
        match self.look_now() {
            Ok((Look::Same, bytes)) => {
                self.accept_bytes(bytes)?;
                Ok(Look::Same)
            }
            Ok((changed, _)) => Ok(changed),
            Err(why) => Ok(Look::Changed(vec![why])),
        }
    }

    /// Takes the contract as it is now as the one judged (a person's
    /// approval or adoption) and returns what to record.
    pub fn adopt(
        &mut self,
        why: &str,
        gate: Option<String>,
        rerun: bool,
    ) -> Result<ContractJudged, String> {
        let bytes = read(&self.path)?;
        self.judged = Judged::read(&bytes);
        self.sha = self.judged.sha256();
        self.known = bytes;
        self.was_link =
            std::fs::symlink_metadata(&self.path).is_ok_and(|m| m.file_type().is_symlink());
        self.keep_copy()?;
        Ok(self.payload(why, gate, rerun))
    }

    /// Applies an approval's own edit (`path` joining FILE SCOPE with its
    /// `[gated DATE]` and `reason`) to the bytes last accepted, not to the
    /// file: whatever else changed in the file stays a change to look at.
    /// The date is the one the file's tag carries, when it carries one.
    pub fn join_scope(
        &mut self,
        path: &str,
        reason: &str,
        why: &str,
        gate: String,
    ) -> Result<ContractJudged, String> {
        let now = read(&self.path).unwrap_or_default();
        let date = gated_date(&now, path).unwrap_or_else(crate::contract::today_local);
        match crate::contract::gate_path(&self.known, path, &date, Some(reason)) {
            Ok(crate::contract::ScopeEdit::Changed(bytes)) => {
                self.judged = Judged::read(&bytes);
                self.sha = self.judged.sha256();
                self.known = bytes;
                self.keep_copy()?;
            }
            Ok(crate::contract::ScopeEdit::AlreadyGated) => {}
            Err(e) => return Err(format!("{path} cannot join FILE SCOPE: {e}")),
        }
        Ok(self.payload(why, Some(gate), false))
    }

    /// Writes the bytes last accepted back into the contract, as a regular
    /// file (a link it became is replaced, its target left alone).
    pub fn put_back(&self) -> Result<(), String> {
        let is_link =
            std::fs::symlink_metadata(&self.path).is_ok_and(|m| m.file_type().is_symlink());
        let not_regular = std::fs::symlink_metadata(&self.path)
            .is_ok_and(|m| !m.file_type().is_symlink() && !m.file_type().is_file());
        if (is_link && !self.was_link) || not_regular {
            std::fs::remove_file(&self.path)
                .map_err(|e| format!("cannot remove what replaced {}: {e}", self.path.display()))?;
        }
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        crate::util::replace_atomically(&self.path, &self.known)
            .map_err(|e| format!("cannot put back {}: {e}", self.path.display()))
    }

    /// The contract's path, relative to the worktree.
    pub fn rel(&self) -> &str {
        &self.rel
    }

    fn look_now(&self) -> Result<(Look, Vec<u8>), String> {
        if !self.was_link
            && std::fs::symlink_metadata(&self.path).is_ok_and(|m| m.file_type().is_symlink())
        {
            return Err("the contract was replaced by a symbolic link".into());
        }
        let bytes = read(&self.path)?;
        let now = Judged::read(&bytes);
        if now.sha256() == self.sha {
            return Ok((Look::Same, bytes));
        }
        let mut changes = self.judged.changes(&now);
        if changes.is_empty() {
            changes.push("the judged parts changed".into());
        }
        Ok((Look::Changed(changes), bytes))
    }

    fn accept_bytes(&mut self, bytes: Vec<u8>) -> Result<(), String> {
        if bytes != self.known {
            self.known = bytes;
            self.keep_copy()?;
        }
        Ok(())
    }

    fn keep_copy(&self) -> Result<(), String> {
        crate::util::replace_in_pipeline(&self.copy, &self.known).map_err(|e| {
            format!(
                "cannot keep a copy of the contract in {}: {e}",
                self.copy.display()
            )
        })
    }
}

/// The date of the `[gated DATE]` tag on the line of `contract` naming `path`.
fn gated_date(contract: &[u8], path: &str) -> Option<String> {
    let text = String::from_utf8_lossy(contract);
    text.lines().filter(|l| l.contains(path)).find_map(|l| {
        let at = l.find("[gated ")? + "[gated ".len();
        let date = l.get(at..at + 10)?;
        crate::contract::is_date_shaped(date).then(|| date.to_string())
    })
}

/// The contract's bytes: a regular file (through a link it is), read
/// without blocking, bounded; why not, when not.
fn read(path: &Path) -> Result<Vec<u8>, String> {
    crate::util::read_regular(path, crate::util::MAX_TEXT_BYTES).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "the contract was removed".to_string(),
        _ => format!("the contract cannot be read: {e}"),
    })
}
