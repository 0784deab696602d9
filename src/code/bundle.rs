//! A run's snapshots carried elsewhere: the refs that keep them written to
//! a git bundle (`loopwatch export`), fetched from one into a fresh
//! repository (opening an export), and whether a repository holds a tree.

use std::path::Path;

use super::git::Git;
use super::snapshot::toplevel;
use super::{CodeError, TreeId, kept};

/// Writes the refs that keep `run_id`'s snapshots (`refs/loopwatch/<run>/…`)
/// to a bundle at `out`; returns the refs written (none: nothing written).
pub fn bundle_run(worktree: &Path, run_id: &str, out: &Path) -> Result<Vec<String>, CodeError> {
    let refs: Vec<String> = kept(worktree, Some(run_id))?
        .into_iter()
        .map(|k| k.name)
        .collect();
    if refs.is_empty() {
        return Ok(refs);
    }
    let top = toplevel(worktree)?;
    let out_s = out.to_string_lossy().into_owned();
    let mut args = vec!["bundle".to_string(), "create".into(), "-q".into(), out_s];
    args.extend(refs.iter().cloned());
    Git::new(&top, &args).run()?;
    Ok(refs)
}

/// Makes a new repository at `dir` (a folder that exists) holding the
/// refs and objects of the bundle at `bundle`. Reads only the bundle: no
/// network, no hook.
pub fn unbundle_into(dir: &Path, bundle: &Path) -> Result<(), CodeError> {
    Git::new(dir, &["init", "-q"]).run()?;
    let b = bundle.to_string_lossy().into_owned();
    Git::new(dir, &["bundle", "verify", "-q", &b]).run()?;
    Git::new(
        dir,
        &[
            "fetch",
            "-q",
            "--no-tags",
            "--no-write-fetch-head",
            &b,
            "refs/loopwatch/*:refs/loopwatch/*",
        ],
    )
    .run()?;
    Ok(())
}

/// For each id, whether the repository at `repo` holds it as a tree.
pub fn trees_present(repo: &Path, ids: &[TreeId]) -> Result<Vec<bool>, CodeError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let top = toplevel(repo)?;
    let mut input = String::new();
    for id in ids {
        input.push_str(id.as_str());
        input.push('\n');
    }
    let out = Git::new(
        &top,
        &["cat-file", "--batch-check=%(objectname) %(objecttype)"],
    )
    .input(input.into_bytes())
    .run()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let answers: Vec<&str> = text.lines().collect();
    Ok(ids
        .iter()
        .enumerate()
        .map(|(i, id)| {
            answers
                .get(i)
                .is_some_and(|a| *a == format!("{} tree", id.as_str()))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bundle_carries_a_runs_snapshots_to_a_new_repository() {
        let d = tempfile::tempdir().unwrap();
        let w = d.path().join("w");
        std::fs::create_dir(&w).unwrap();
        Git::new(&w, &["init", "-q"]).run().unwrap();
        std::fs::write(w.join("a.txt"), "one\n").unwrap();
        let tree = super::super::snapshot(&w).unwrap();
        super::super::keep(&w, "run-1", "base", &tree).unwrap();
        let out = d.path().join("code.bundle");
        let refs = bundle_run(&w, "run-1", &out).unwrap();
        assert_eq!(refs, vec!["refs/loopwatch/run-1/base".to_string()]);
        assert!(
            bundle_run(&w, "other", &d.path().join("none"))
                .unwrap()
                .is_empty()
        );

        let r = d.path().join("r");
        std::fs::create_dir(&r).unwrap();
        unbundle_into(&r, &out).unwrap();
        let gone = TreeId::parse(&"0".repeat(40)).unwrap();
        assert_eq!(
            trees_present(&r, &[tree.clone(), gone]).unwrap(),
            vec![true, false]
        );
        // A file that is not a bundle is git's error, named.
        std::fs::write(d.path().join("bad"), "x").unwrap();
        let r2 = d.path().join("r2");
        std::fs::create_dir(&r2).unwrap();
        assert!(unbundle_into(&r2, &d.path().join("bad")).is_err());
    }
}
