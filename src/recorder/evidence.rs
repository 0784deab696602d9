//! The evidence a human gate carries, captured when the gate opens, so the
//! person decides on the code as it was then: an out-of-scope file's hunks
//! against the run's base snapshot (with what the verifier said about it),
//! the cited lines of an UNVERIFIABLE finding from its iteration's snapshot.
//!
//! What is captured is raw text stored in the request's `evidence` (`code`:
//! lines, `justification`: lines); whoever shows it sanitises it. A file
//! too large or binary is summarised by the diff limits, never dumped; a
//! failure to read the code is said in the evidence instead of hidden.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::code::{CodeSnapshot, DiffLimits, FileStatus, RunTrees, TreeId};
use crate::journal::{JournalError, Pipeline};
use crate::model::event::Event;
use crate::model::event::GateFinished;
use crate::model::rules::GateRequest;
use crate::model::{Finding, HumanGateKind};

/// Most changed lines shown for one file; a larger change is summarised.
pub const MAX_EVIDENCE_CHANGED_LINES: u32 = 5_000;

/// Lines of context shown around a finding's cited lines.
pub const EXCERPT_CONTEXT: u32 = 3;

/// Adds the code evidence to the requests a round or a set of findings
/// opens. `events` is read only when a request needs a snapshot.
pub fn capture(
    requests: &mut [GateRequest],
    pipeline: &Pipeline,
    run_diff: Option<&str>,
    finished: Option<&GateFinished>,
    iteration: u32,
) {
    let needs_code = requests.iter().any(|r| {
        matches!(
            r.kind,
            HumanGateKind::OutOfScope | HumanGateKind::Unverifiable
        )
    });
    if !needs_code {
        return;
    }
    let events: Vec<Event> = crate::journal::read_all(&pipeline.journal_path())
        .map(|b| b.events)
        .unwrap_or_default();
    let trees = RunTrees::from_events(&events);
    let worktree = pipeline.worktree();
    // One fresh snapshot for every out-of-scope file of the round.
    let mut fresh: Option<CodeSnapshot> = None;
    for r in requests.iter_mut() {
        let code = match r.kind {
            HumanGateKind::OutOfScope => {
                let now = fresh.get_or_insert_with(|| crate::code::take(worktree, pipeline.dir()));
                if let (Some(f), Some(ev)) = (finished, r.evidence.as_object_mut()) {
                    let said = justification(f, &r.subject);
                    if !said.is_empty() {
                        ev.insert("justification".into(), json!(said));
                    }
                }
                let diff_base = s_diff_base(run_diff);
                Some(file_hunks(
                    worktree,
                    trees.of(0),
                    diff_base,
                    now,
                    &r.subject,
                ))
            }
            HumanGateKind::Unverifiable => finding_of(&r.evidence)
                .map(|f| cited_lines(worktree, trees.of(iteration), &f.path, &f.lines)),
            _ => None,
        };
        if let (Some(code), Some(ev)) = (code, r.evidence.as_object_mut()) {
            ev.insert("code".into(), json!(code));
        }
    }
}

/// The start of a run's `--diff` range (`main..HEAD` → `main`), if any.
fn s_diff_base(run_diff: Option<&str>) -> Option<&str> {
    let base = run_diff?.split("..").next()?.trim();
    (!base.is_empty()).then_some(base)
}

/// The hunks of `path` from the run's base snapshot to now, as lines; when
/// the file did not change since the run started, its hunks against the
/// run's diff base revision (a change made before the run).
pub fn file_hunks(
    worktree: &Path,
    base: Option<&CodeSnapshot>,
    diff_base: Option<&str>,
    now: &CodeSnapshot,
    path: &str,
) -> Vec<String> {
    let b = match tree_of(Some(now), "the worktree") {
        Ok(b) => b,
        Err(why) => return vec![format!("code not available: {why}")],
    };
    let since_base = match tree_of(base, "the run's base") {
        Ok(a) => file_diff(worktree, a, b, path),
        Err(why) => Err(why),
    };
    match since_base {
        Ok(Some(lines)) => return lines,
        Ok(None) => {}
        Err(why) if diff_base.is_none() => return vec![format!("code not available: {why}")],
        Err(_) => {}
    }
    if let Some(rev) = diff_base {
        let against = crate::code::revision_tree(worktree, rev)
            .map_err(|e| e.to_string())
            .and_then(|a| file_diff(worktree, &a, b, path));
        if let Ok(Some(mut lines)) = against {
            lines.insert(
                0,
                format!("{path}: changed against {rev}, the run's diff base"),
            );
            return lines;
        }
    }
    vec![format!("{path}: no change against the run's base")]
}

/// The text of `path`'s change from `a` to `b`; `None` when it did not change.
fn file_diff(
    worktree: &Path,
    a: &TreeId,
    b: &TreeId,
    path: &str,
) -> Result<Option<Vec<String>>, String> {
    let limits = DiffLimits {
        max_changed_lines: MAX_EVIDENCE_CHANGED_LINES,
        ..DiffLimits::default()
    };
    let files = crate::code::diff_with(worktree, a, b, &limits).map_err(|e| e.to_string())?;
    let Some(file) = files
        .into_iter()
        .find(|f| f.path == path || f.old_path.as_deref() == Some(path))
    else {
        return Ok(None);
    };
    let mut out = Vec::new();
    if file.status == FileStatus::Deleted {
        out.push(format!("{path}: deleted since the run's base"));
    }
    out.extend(
        crate::code::diff_text(std::slice::from_ref(&file))
            .lines()
            .map(str::to_string),
    );
    Ok(Some(out))
}

/// The lines a finding cites with their context, `  12 | text`, the cited
/// ones marked `>`.
pub fn cited_lines(
    worktree: &Path,
    snapshot: Option<&CodeSnapshot>,
    path: &str,
    lines: &str,
) -> Vec<String> {
    let tree = match tree_of(snapshot, "the iteration") {
        Ok(t) => t,
        Err(why) => return vec![format!("code not available: {why}")],
    };
    let Some(range) = parse_lines(lines) else {
        return vec![format!(
            "code not shown: {path}:{lines} names no line range"
        )];
    };
    match crate::code::excerpt(worktree, tree, path, range, EXCERPT_CONTEXT) {
        Ok(x) => {
            let mut out = vec![format!("{}:{lines}", x.path)];
            out.extend(x.lines.iter().map(|l| {
                let mark = if l.cited { '>' } else { ' ' };
                format!("{mark}{:>5} | {}", l.number, l.text)
            }));
            if let Some(note) = x.note {
                out.push(format!("({note})"));
            }
            out
        }
        Err(e) => vec![format!("code not available: {e}")],
    }
}

/// Saves the evidence a decision was taken on as `evidence/<gate-id>.txt`
/// in the pipeline (never through a link); returns its path.
pub fn save(pipeline: &Pipeline, id: &str, bytes: &[u8]) -> Result<PathBuf, JournalError> {
    let dir = pipeline.dir().join("evidence");
    let refuse = |path: &Path, why: String| {
        JournalError::io(
            "write",
            path,
            std::io::Error::new(std::io::ErrorKind::InvalidInput, why),
        )
    };
    let safe = !id.is_empty()
        && id.len() <= 128
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if !safe {
        return Err(refuse(
            &dir,
            format!("gate id {id:?} cannot name an evidence file"),
        ));
    }
    std::fs::create_dir_all(&dir).map_err(|e| JournalError::io("create", &dir, e))?;
    if std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(JournalError::io(
            "write into",
            &dir,
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                crate::util::FileRefusal::Symlink,
            ),
        ));
    }
    let path = dir.join(format!("{id}.txt"));
    crate::util::replace_in_pipeline(&path, bytes)
        .map_err(|e| JournalError::io("write", &path, e))?;
    Ok(path)
}

/// `12`, `12-18` or `L12-L18` as a range of lines (1-based).
fn parse_lines(s: &str) -> Option<std::ops::RangeInclusive<u32>> {
    let num = |t: &str| t.trim().trim_start_matches(['L', 'l']).parse::<u32>().ok();
    let (a, b) = match s.split_once(['-', '–']) {
        Some((a, b)) => (num(a)?, num(b)?),
        None => {
            let n = num(s)?;
            (n, n)
        }
    };
    (a >= 1 && a <= b).then_some(a..=b)
}

fn tree_of<'a>(snap: Option<&'a CodeSnapshot>, what: &str) -> Result<&'a TreeId, String> {
    match snap {
        Some(CodeSnapshot::Tree(t)) => Ok(t),
        Some(CodeSnapshot::Missing(why)) => Err(format!("no snapshot of {what}: {why}")),
        None => Err(format!("no snapshot of {what} in the journal")),
    }
}

fn finding_of(ev: &Value) -> Option<Finding> {
    let f = ev.get("findings")?.as_array()?.first()?;
    serde_json::from_value(f.clone()).ok()
}

/// What the verifier's rows say about `path`: every criterion row whose
/// text or detail names it.
fn justification(f: &GateFinished, path: &str) -> Vec<String> {
    f.criterion_rows()
        .filter(|r| r.text.contains(path) || r.detail.contains(path))
        .map(|r| {
            if r.detail.is_empty() {
                format!("{} {}: {}", r.id, r.status.as_str(), r.text)
            } else {
                format!("{} {}: {} — {}", r.id, r.status.as_str(), r.text, r.detail)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::parse_lines;

    #[test]
    fn line_ranges_are_parsed_or_refused() {
        assert_eq!(parse_lines("12"), Some(12..=12));
        assert_eq!(parse_lines("12-18"), Some(12..=18));
        assert_eq!(parse_lines("L3-L4"), Some(3..=4));
        assert_eq!(parse_lines("0"), None);
        assert_eq!(parse_lines("9-3"), None);
        assert_eq!(parse_lines("all"), None);
    }
}
