//! What a read-only role (verifier, auditor, reviewer, finding verifier)
//! may change: nothing. The CLIs' own means are the first line (Claude
//! Code's tool set, Codex's read-only profile); this is the second, for
//! every adapter alike: before the dispatch the worktree is snapshotted (a
//! git tree of tracked and untracked files, the pipeline left out), and
//! its git refs and worktrees listed; after it, whatever differs is put
//! back (files byte for byte, a ref to its object, a new ref or worktree
//! removed) and named, and the dispatch fails with the list.
//!
//! Runs of several read-only agents at once (the finding verifier's
//! lanes) each compare against their own snapshot: a change is put back
//! by the first lane that finishes after it, and named in that lane.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::review::verify_by_test::tree::Tree;
use crate::code::git_stdout;

/// The worktree and its repository before a read-only dispatch.
#[derive(Debug)]
pub struct Before {
    tree: Tree,
    refs: BTreeMap<String, String>,
    worktrees: Vec<PathBuf>,
    head: Option<String>,
    worktree: PathBuf,
}

impl Before {
    /// The worktree as it is now; `None` when it cannot be snapshotted
    /// (not a git worktree): then nothing is compared, as the dispatch
    /// says nothing about it.
    pub fn take(worktree: &Path, pipeline: &Path) -> Option<Before> {
        let tree = Tree::take(worktree, pipeline).ok()?;
        Some(Before {
            tree,
            refs: refs(worktree),
            worktrees: worktrees(worktree),
            head: head(worktree),
            worktree: worktree.to_path_buf(),
        })
    }

    /// Puts back what changed since, and names each change (`src/x.rs
    /// modified`, `ref refs/heads/lw created`, `worktree ../w added`).
    pub fn put_back(&self) -> Vec<String> {
        let mut out = Vec::new();
        let wt = &self.worktree;
        // Worktrees first: removing one may drop a ref it held.
        for w in worktrees(wt) {
            if !self.worktrees.contains(&w) {
                let shown = w.display().to_string();
                let removed = git_stdout(wt, &["worktree", "remove", "--force", &shown]);
                let _ = git_stdout(wt, &["worktree", "prune"]);
                out.push(match removed {
                    Ok(_) => format!("worktree {shown} added (removed)"),
                    Err(e) => format!("worktree {shown} added (could not be removed: {e})"),
                });
            }
        }
        if let (Some(was), now) = (&self.head, head(wt))
            && now.as_deref() != Some(was.as_str())
        {
            let put = match was.strip_prefix("ref: ") {
                Some(r) => git_stdout(wt, &["symbolic-ref", "HEAD", r]),
                None => git_stdout(wt, &["update-ref", "--no-deref", "HEAD", was]),
            };
            out.push(match put {
                Ok(_) => format!("HEAD moved to {} (put back)", now.unwrap_or_default()),
                Err(e) => format!("HEAD moved (could not be put back: {e})"),
            });
        }
        let now = refs(wt);
        for (name, id) in &now {
            let fix = match self.refs.get(name) {
                None => Some(("created", git_stdout(wt, &["update-ref", "-d", name]))),
                Some(old) if old != id => {
                    Some(("moved", git_stdout(wt, &["update-ref", name, old])))
                }
                Some(_) => None,
            };
            if let Some((how, r)) = fix {
                out.push(match r {
                    Ok(_) => format!("ref {name} {how} (put back)"),
                    Err(e) => format!("ref {name} {how} (could not be put back: {e})"),
                });
            }
        }
        for (name, old) in &self.refs {
            if !now.contains_key(name) {
                let r = git_stdout(wt, &["update-ref", name, old]);
                out.push(match r {
                    Ok(_) => format!("ref {name} deleted (put back)"),
                    Err(e) => format!("ref {name} deleted (could not be put back: {e})"),
                });
            }
        }
        for change in super::review::verify_by_test::cleanup::cleanup_changes(&self.tree) {
            out.push(change.map_or_else(|e| e, |c| format!("{c} (put back)")));
        }
        out.sort();
        out.dedup();
        out
    }
}

/// Every ref but loopwatch's own snapshots, with the object it names.
fn refs(worktree: &Path) -> BTreeMap<String, String> {
    let Ok(raw) = git_stdout(
        worktree,
        &["for-each-ref", "--format=%(refname)%00%(objectname)"],
    ) else {
        return BTreeMap::new();
    };
    String::from_utf8_lossy(&raw)
        .lines()
        .filter_map(|l| l.split_once('\0'))
        .filter(|(name, _)| !name.starts_with(crate::code::SNAPSHOT_REFS))
        .map(|(n, id)| (n.to_string(), id.to_string()))
        .collect()
}

/// The repository's worktrees (their folders).
fn worktrees(worktree: &Path) -> Vec<PathBuf> {
    let Ok(raw) = git_stdout(worktree, &["worktree", "list", "--porcelain", "-z"]) else {
        return Vec::new();
    };
    raw.split(|&b| b == 0)
        .filter_map(|f| f.strip_prefix(b"worktree "))
        .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
        .collect()
}

/// `ref: refs/heads/x` or the commit HEAD names.
fn head(worktree: &Path) -> Option<String> {
    if let Ok(r) = git_stdout(worktree, &["symbolic-ref", "-q", "HEAD"]) {
        let r = String::from_utf8_lossy(&r).trim().to_string();
        if !r.is_empty() {
            return Some(format!("ref: {r}"));
        }
    }
    git_stdout(worktree, &["rev-parse", "--verify", "-q", "HEAD"])
        .ok()
        .map(|r| String::from_utf8_lossy(&r).trim().to_string())
        .filter(|r| !r.is_empty())
}
