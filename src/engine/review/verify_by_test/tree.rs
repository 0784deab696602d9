//! The worktree around verify-by-test: what it was before the agent wrote
//! its repro tests, what the agent changed, putting back what must not
//! stay, and the check that only the confirmed repro tests are left.
//!
//! "Before" is a snapshot of the whole worktree as a git tree object
//! ([`crate::code::snapshot_excluding`]: tracked and untracked files,
//! ignored ones and the pipeline left out; the user's index is never
//! touched), so a file the agent edited is put back byte for byte and mode
//! for mode, and one it created is removed. Paths here are relative to the
//! git top level; [`Tree::to_top`] turns a worktree-relative one into one.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::code::{self, DiffLimits, FileDiff, FileStatus, TreeId};

/// A snapshot of the worktree and where its paths start.
#[derive(Debug, Clone)]
pub struct Tree {
    /// The tree object.
    pub id: TreeId,
    top: PathBuf,
    prefix: String,
    exclude: PathBuf,
}

/// Why the worktree could not be read or put back.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TreeError(pub String);

impl Tree {
    /// The worktree as it is now, `exclude` (the pipeline) left out.
    pub fn take(worktree: &Path, exclude: &Path) -> Result<Tree, TreeError> {
        let id = code::snapshot_excluding(worktree, exclude)
            .map_err(|e| TreeError(format!("cannot snapshot the worktree: {e}")))?;
        let top = git(worktree, &["rev-parse", "--show-toplevel"])?;
        let prefix = git(worktree, &["rev-parse", "--show-prefix"])?;
        Ok(Tree {
            id,
            top: PathBuf::from(String::from_utf8_lossy(&top).trim()),
            prefix: String::from_utf8_lossy(&prefix).trim().to_string(),
            exclude: exclude.to_path_buf(),
        })
    }

    /// The same worktree now.
    pub fn again(&self) -> Result<Tree, TreeError> {
        let id = code::snapshot_excluding(&self.top, &self.exclude)
            .map_err(|e| TreeError(format!("cannot snapshot the worktree: {e}")))?;
        Ok(Tree { id, ..self.clone() })
    }

    /// A tree recorded earlier (`verify.summary.tree`) of the same worktree.
    pub fn recorded(&self, id: TreeId) -> Tree {
        Tree { id, ..self.clone() }
    }

    /// A worktree-relative path as a top-level-relative one.
    pub fn to_top(&self, rel: &str) -> String {
        format!("{}{}", self.prefix, rel.strip_prefix("./").unwrap_or(rel))
    }

    /// The files changed from this tree to `later` (renames as a removal
    /// and an addition), with hunks of `context` lines.
    pub fn changes(&self, later: &Tree, context: usize) -> Result<Vec<FileDiff>, TreeError> {
        let limits = DiffLimits {
            context,
            ..DiffLimits::default()
        };
        code::diff_with(&self.top, &self.id, &later.id, &limits)
            .map_err(|e| TreeError(format!("cannot diff the worktree: {e}")))
    }

    /// Every path a change touches (both sides of a rename).
    pub fn paths(changes: &[FileDiff]) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for f in changes {
            out.insert(f.path.clone());
            if let Some(old) = &f.old_path {
                out.insert(old.clone());
            }
        }
        out
    }

    /// Puts `path` back as it is in this tree: its content and mode, or
    /// no file when the tree has none.
    pub fn restore(&self, path: &str) -> Result<(), TreeError> {
        let full = self.top.join(path);
        let entry = git(&self.top, &["ls-tree", "-z", self.id.as_str(), "--", path])?;
        let entry = String::from_utf8_lossy(&entry);
        let entry = entry.trim_end_matches('\0');
        let io = |op: &str, e: std::io::Error| TreeError(format!("cannot {op} {path}: {e}"));
        if entry.is_empty() {
            match std::fs::symlink_metadata(&full) {
                Ok(m) if m.is_dir() => {
                    std::fs::remove_dir_all(&full).map_err(|e| io("remove", e))?
                }
                Ok(_) => std::fs::remove_file(&full).map_err(|e| io("remove", e))?,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io("read", e)),
            }
            self.remove_empty_parents(&full);
            return Ok(());
        }
        // `<mode> <type> <id>\t<path>`
        let mut fields = entry.split(['\t', ' ']);
        let (mode, kind, id) = (fields.next(), fields.next(), fields.next());
        let (Some(mode), Some("blob"), Some(id)) = (mode, kind, id) else {
            return Err(TreeError(format!(
                "{path} is not a file in the snapshot ({entry})"
            )));
        };
        let bytes = git(&self.top, &["cat-file", "blob", id])?;
        if let Some(dir) = full.parent() {
            std::fs::create_dir_all(dir).map_err(|e| io("create the folder of", e))?;
        }
        if let Ok(m) = std::fs::symlink_metadata(&full)
            && (m.is_dir() || m.file_type().is_symlink())
        {
            let gone = if m.is_dir() {
                std::fs::remove_dir_all(&full)
            } else {
                std::fs::remove_file(&full)
            };
            gone.map_err(|e| io("remove", e))?;
        }
        if mode == "120000" {
            let target = String::from_utf8_lossy(&bytes).into_owned();
            return std::os::unix::fs::symlink(target, &full).map_err(|e| io("link", e));
        }
        crate::util::replace_atomically(&full, &bytes).map_err(|e| io("write", e))?;
        use std::os::unix::fs::PermissionsExt;
        let perm = if mode == "100755" { 0o755 } else { 0o644 };
        std::fs::set_permissions(&full, std::fs::Permissions::from_mode(perm))
            .map_err(|e| io("set the mode of", e))
    }

    /// Folders left empty by a removal go too (git cannot show them, and
    /// an agent that made `tests/` for its repro test made it for nothing).
    fn remove_empty_parents(&self, file: &Path) {
        let mut dir = file.parent();
        while let Some(d) = dir {
            if d == self.top || !d.starts_with(&self.top) || std::fs::remove_dir(d).is_err() {
                break;
            }
            dir = d.parent();
        }
    }
}

/// The one-line kind of a change, for notes.
pub fn status_word(f: &FileDiff) -> &'static str {
    match f.status {
        FileStatus::Added => "created",
        FileStatus::Modified => "edited",
        FileStatus::Deleted => "deleted",
        FileStatus::Renamed => "renamed",
        FileStatus::TypeChanged => "changed kind",
    }
}

fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, TreeError> {
    crate::code::git_stdout(dir, args).map_err(|e| TreeError(e.to_string()))
}
