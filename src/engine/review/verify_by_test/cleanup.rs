//! The worktree around the repro tests: before they run, the code is put
//! back to what the findings are about; after, every change but the
//! confirmed tests' files is put back and the invariant checked (the only
//! changes left since the snapshot are those files).

use std::collections::{BTreeMap, BTreeSet};

use super::answer;
use super::tree::{self, Tree};
use crate::code::FileStatus;

/// Before any test runs, the code is what it was: every change the agent
/// made outside the test files it named is put back (a note names each),
/// and a named file that existed is refused when the agent changed or
/// removed lines of it rather than only adding a test (the map gives why,
/// by top-level path). A test can only reproduce a finding, or fail to,
/// against the code the finding is about.
pub fn isolate(
    before: &Tree,
    answered: &answer::Answered,
    notes: &mut Vec<String>,
) -> BTreeMap<String, String> {
    let named: BTreeSet<String> = answered
        .by_finding
        .values()
        .filter_map(|r| r.as_ref().ok())
        .map(|r| before.to_top(&r.file))
        .collect();
    let changes = match before.again().and_then(|now| before.changes(&now, 0)) {
        Ok(c) => c,
        Err(e) => {
            notes.push(format!("verify-by-test: {e}"));
            return BTreeMap::new();
        }
    };
    let mut tampered = BTreeMap::new();
    for f in &changes {
        let paths: Vec<&String> = std::iter::once(&f.path)
            .chain(f.old_path.as_ref())
            .collect();
        if named.contains(&f.path) && f.status == FileStatus::Modified && f.removed > 0 {
            tampered.insert(
                f.path.clone(),
                format!(
                    "not run: the agent changed {} existing line(s) of {} instead of only adding a test",
                    f.removed, f.path
                ),
            );
        }
        for p in paths {
            if named.contains(p) && f.status != FileStatus::Renamed {
                continue;
            }
            match before.restore(p) {
                Ok(()) => notes.push(format!(
                    "verify-by-test: put {p} back before running the tests (the agent {} it and named no test in it)",
                    tree::status_word(f)
                )),
                Err(e) => notes.push(format!("verify-by-test: {e}")),
            }
        }
    }
    tampered
}

/// Puts back every file changed since `before`: per change its name
/// (`path created`, `path modified`), or why it could not be put back.
pub fn cleanup_changes(before: &Tree) -> Vec<Result<String, String>> {
    let changed = match before.again().and_then(|now| before.changes(&now, 0)) {
        Ok(c) => c,
        Err(e) => {
            return vec![Err(format!(
                "the worktree cannot be compared with its snapshot: {e}"
            ))];
        }
    };
    let mut out = Vec::new();
    for f in &changed {
        for path in Tree::paths(std::slice::from_ref(f)) {
            let word = tree::status_word(f);
            out.push(match before.restore(&path) {
                Ok(()) => Ok(format!("{path} {word}")),
                Err(e) => Err(format!("{path} {word} (could not be put back: {e})")),
            });
        }
    }
    out
}

/// Puts back every file changed since `before` but those in `keep`;
/// returns the problems (a file that could not be put back).
pub fn put_back(before: &Tree, keep: &BTreeSet<String>) -> Vec<String> {
    let changed = match before.again().and_then(|now| before.changes(&now, 0)) {
        Ok(c) => c,
        Err(e) => {
            return vec![format!(
                "the worktree cannot be compared with its snapshot: {e}"
            )];
        }
    };
    let mut problems = Vec::new();
    for path in Tree::paths(&changed) {
        if !keep.contains(&path)
            && let Err(e) = before.restore(&path)
        {
            problems.push(e.to_string());
        }
    }
    problems
}

/// Puts the worktree back and checks the invariant: the only changes left
/// since `before` are the files in `keep`. Returns the violations; `tree`
/// gets the worktree's snapshot after the cleanup.
pub fn cleanup(before: &Tree, keep: &BTreeSet<String>, tree: &mut Option<String>) -> Vec<String> {
    let mut violations = put_back(before, keep);
    match before.again() {
        Ok(now) => {
            *tree = Some(now.id.as_str().to_string());
            match before.changes(&now, 0) {
                Ok(left) => {
                    violations.extend(left.iter().filter(|f| !keep.contains(&f.path)).map(|f| {
                        format!(
                            "{} {} and not a confirmed repro test",
                            f.path,
                            tree::status_word(f)
                        )
                    }))
                }
                Err(e) => violations.push(e.to_string()),
            }
        }
        Err(e) => violations.push(e.to_string()),
    }
    violations
}
