//! Keeping snapshots reachable: one commit per snapshot under
//! `refs/loopwatch/<run-id>/<label>`, so `git gc` never drops a tree an
//! event names, and their removal (`loopwatch gc`).
//!
//! The same thing by hand:
//! `git for-each-ref --format='delete %(refname)' refs/loopwatch/<run-id>/ | git update-ref --stdin`
//! (then `git gc --prune=now` to drop the objects at once rather than at
//! the next automatic gc).

use std::path::Path;

use serde::Serialize;

use super::git::Git;
use super::snapshot::toplevel;
use super::{CodeError, TreeId};

/// Where every snapshot ref lives.
pub const SNAPSHOT_REFS: &str = "refs/loopwatch/";
const ROOT: &str = SNAPSHOT_REFS;

/// One kept snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeptSnapshot {
    /// The full ref name.
    #[serde(rename = "ref")]
    pub name: String,
    /// The tree it keeps.
    pub tree: TreeId,
}

/// `refs/loopwatch/<run>/` for a run id: characters a ref name cannot hold
/// become `-`, and a short hash of the id is appended when anything was
/// changed, so that two ids never share a folder.
pub fn ref_prefix(run_id: &str) -> Result<String, CodeError> {
    Ok(format!("{ROOT}{}/", component(run_id)?))
}

/// Makes `tree` reachable as `refs/loopwatch/<run>/<label>` (a commit of
/// the tree, replacing what the ref held) and returns the ref name.
pub fn keep(
    worktree: &Path,
    run_id: &str,
    label: &str,
    tree: &TreeId,
) -> Result<String, CodeError> {
    let top = toplevel(worktree)?;
    let name = format!("{}{}", ref_prefix(run_id)?, component(label)?);
    let message = format!("loopwatch snapshot: {label} of run {run_id}");
    let out = Git::new(
        &top,
        &[
            "commit-tree",
            "--no-gpg-sign",
            tree.as_str(),
            "-m",
            &message,
        ],
    )
    .env("GIT_AUTHOR_NAME", "loopwatch")
    .env("GIT_AUTHOR_EMAIL", "loopwatch@localhost")
    .env("GIT_COMMITTER_NAME", "loopwatch")
    .env("GIT_COMMITTER_EMAIL", "loopwatch@localhost")
    .run()?;
    let commit = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if TreeId::parse(&commit).is_none() {
        return Err(CodeError::Unexpected {
            command: "commit-tree".into(),
            detail: format!("{commit:?} is not a commit id"),
        });
    }
    Git::new(
        &top,
        &["update-ref", "-m", "loopwatch snapshot", &name, &commit],
    )
    .run()?;
    Ok(name)
}

/// The snapshots kept for one run, or for every run.
pub fn kept(worktree: &Path, run_id: Option<&str>) -> Result<Vec<KeptSnapshot>, CodeError> {
    let top = toplevel(worktree)?;
    let prefix = match run_id {
        Some(id) => ref_prefix(id)?,
        None => ROOT.to_string(),
    };
    let out = Git::new(
        &top,
        &["for-each-ref", "--format=%(refname)%00%(tree)", &prefix],
    )
    .run()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut refs = Vec::new();
    for line in text.lines() {
        let Some((name, tree)) = line.split_once('\0') else {
            continue;
        };
        // A ref under the folder that is not one of ours (no commit) is left alone.
        if let Some(tree) = TreeId::parse(tree) {
            refs.push(KeptSnapshot {
                name: name.to_string(),
                tree,
            });
        }
    }
    Ok(refs)
}

/// Deletes the snapshot refs of one run (or of every run) in one
/// transaction and returns what was removed. The objects go at the next
/// `git gc` once nothing else reaches them.
pub fn remove_kept(worktree: &Path, run_id: Option<&str>) -> Result<Vec<KeptSnapshot>, CodeError> {
    let refs = kept(worktree, run_id)?;
    if refs.is_empty() {
        return Ok(refs);
    }
    let top = toplevel(worktree)?;
    let mut input = String::new();
    for r in &refs {
        input.push_str("delete ");
        input.push_str(&r.name);
        input.push('\n');
    }
    Git::new(&top, &["update-ref", "--stdin"])
        .input(input.into_bytes())
        .run()?;
    Ok(refs)
}

/// One ref-name component from free text.
fn component(raw: &str) -> Result<String, CodeError> {
    let mut s: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect();
    while s.contains("..") {
        s = s.replace("..", "-.");
    }
    if s.starts_with('.') {
        s.replace_range(0..1, "-");
    }
    if s.ends_with('.') || s.ends_with(".lock") {
        s.push('-');
    }
    if s.trim_matches('-').is_empty() {
        return Err(CodeError::RunId(raw.to_string()));
    }
    if s != raw {
        let hash = crate::util::sha256_tagged(raw.as_bytes());
        s.push('-');
        s.push_str(&hash["sha256:".len().."sha256:".len() + 8]);
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_become_safe_distinct_components() {
        assert_eq!(
            component("2026-11-02-demo-1000").unwrap(),
            "2026-11-02-demo-1000"
        );
        let a = component("a/b").unwrap();
        let b = component("a-b").unwrap();
        assert_ne!(a, b);
        assert!(a.starts_with("a-b-"), "{a}");
        for hostile in ["..", "x.lock", ".hidden", "a b", "a~b^c:d?*[", "émoji"] {
            let c = component(hostile).unwrap();
            assert!(
                !c.contains("..") && !c.starts_with('.') && !c.ends_with(".lock"),
                "{c}"
            );
            assert!(
                c.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)),
                "{c}"
            );
        }
        assert!(component("").is_err());
        assert!(component("///").is_err());
    }
}
