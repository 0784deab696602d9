//! What a gate's evidence would be now: recomputed from the worktree, the
//! contract and the saved gate output as they are, and compared with the
//! evidence shown, so a person can tell that a file was edited, its cited
//! lines moved or the file vanished since the gate opened, and decide on
//! the current text instead.
//!
//! Only what was captured is recomputed (a request recorded before a kind
//! of evidence existed is left as it is), and a cap's rounds, read from
//! the journal, never change.

use std::path::{Component, Path};

use serde_json::{Value, json};

use super::code::{EXCERPT_CONTEXT, bounded, cited_text, excerpt_lines, parse_lines, tree_of};
use super::{Citation, abandonment, claim_citations, diff_base, file_hunks, marked_output};
use crate::code::{CodeSnapshot, DiffLimits, ExcerptLine, RunTrees, TreeId};
use crate::journal::Pipeline;
use crate::model::State;
use crate::model::event::HumanRequest;
use crate::model::kinds::Evidence;

/// What of the run a refresh reads besides the request: the contract and
/// the `--diff` range the run recorded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sources {
    /// The contract path, as the run recorded it.
    pub contract: Option<String>,
    /// The run's `--diff` range.
    pub diff: Option<String>,
}

impl Sources {
    /// The sources of the run `state` is the state of.
    pub fn of(state: &State) -> Sources {
        let run = state.run.as_ref();
        Sources {
            contract: run.map(|r| r.contract.clone()).filter(|c| !c.is_empty()),
            diff: run.map(|r| r.diff.clone()).filter(|d| !d.is_empty()),
        }
    }
}

/// The evidence as it would be captured now.
#[derive(Debug, Clone, PartialEq)]
pub struct Refreshed {
    /// The evidence: the one given when nothing changed, else the one
    /// given with what changed recomputed and `refreshed` saying what.
    pub evidence: Value,
    /// What changed, one line each (`Makefile: edited since the gate
    /// opened`); empty when nothing did.
    pub changes: Vec<String>,
}

/// Recomputes the evidence `req` shows from what is there now.
pub fn refresh(pipeline: &Pipeline, sources: &Sources, req: &HumanRequest) -> Refreshed {
    let old = &req.evidence;
    let mut new = old.clone();
    let mut changes = Vec::new();
    let worktree = pipeline.worktree();
    match req.kind.spec().evidence {
        Evidence::FileChange if old.get("code").is_some() => {
            let events = crate::journal::read_all(&pipeline.journal_path())
                .map(|b| b.events)
                .unwrap_or_default();
            let trees = RunTrees::from_events(&events);
            let now = crate::code::take(worktree, pipeline.dir());
            let at = old
                .get("at")
                .and_then(Value::as_str)
                .and_then(TreeId::parse);
            // git says whether the file changed since the hunks were taken
            // (a summarised or binary change shows no difference in text).
            let touched = match (&at, now.tree()) {
                // No snapshot now (not a git worktree here, git failing):
                // nothing can be compared, so no change is claimed.
                (_, None) => Some(false),
                (Some(at), Some(t)) if at == t => Some(false),
                (Some(at), Some(t)) => touched(worktree, at, t, &req.subject),
                (None, Some(_)) => None,
            };
            if touched != Some(false) {
                let code = file_hunks(
                    worktree,
                    trees.of(0),
                    diff_base(sources.diff.as_deref()),
                    &now,
                    &req.subject,
                );
                if touched.unwrap_or_else(|| Some(&json!(code)) != old.get("code")) {
                    changes.push(if exists_in(worktree, &req.subject) {
                        format!("{}: edited since the gate opened", req.subject)
                    } else {
                        format!("{}: no longer in the worktree (vanished)", req.subject)
                    });
                    new["code"] = json!(code);
                    if let Some(t) = now.tree() {
                        new["at"] = json!(t.as_str());
                    }
                }
            }
        }
        Evidence::CitedLines if old.get("code").is_some() => {
            let now = crate::code::take(worktree, pipeline.dir());
            let (code, cited, why) = cited_now(worktree, &now, old);
            if Some(&json!(code)) != old.get("code") {
                changes.extend(why);
                if changes.is_empty() {
                    changes.push("the cited code changed since the gate opened".into());
                }
                new["code"] = json!(code);
                new["cited"] = json!(cited);
            }
        }
        Evidence::ContractLines if old.get("contract").is_some() => {
            let lines = abandonment(worktree, sources.contract.as_deref(), &req.subject);
            if Some(&json!(lines)) != old.get("contract") {
                changes.push(format!(
                    "the contract's criterion {} or its ABANDON line changed since the gate opened",
                    req.subject
                ));
                new["contract"] = json!(lines);
            }
        }
        Evidence::Output if old.get("outputLines").is_some() => {
            let failing = old
                .get("failingLine")
                .and_then(Value::as_u64)
                .and_then(|l| usize::try_from(l).ok());
            let rel = old.get("output").and_then(Value::as_str).unwrap_or("");
            let read = pipeline
                .resolve_recorded(rel)
                .map_err(|e| e.to_string())
                .and_then(|p| {
                    crate::util::read_regular(&p, crate::util::MAX_TEXT_BYTES)
                        .map_err(|e| e.to_string())
                });
            let lines = match read {
                Ok(bytes) => marked_output(&bytes, failing),
                Err(e) => vec![format!("(the gate output {rel} cannot be read now: {e})")],
            };
            if Some(&json!(lines)) != old.get("outputLines") {
                changes.push(format!(
                    "the gate output {rel} changed since the gate opened"
                ));
                new["outputLines"] = json!(lines);
            }
        }
        _ => {}
    }
    if changes.is_empty() {
        return Refreshed {
            evidence: old.clone(),
            changes,
        };
    }
    new["refreshed"] = json!(changes);
    Refreshed {
        evidence: new,
        changes,
    }
}

/// The cited code as it is in `now`: per citation its block, what it
/// cites now, and why it differs (vanished, moved, edited).
fn cited_now(
    worktree: &Path,
    now: &CodeSnapshot,
    old: &Value,
) -> (Vec<String>, Vec<Value>, Vec<String>) {
    let was: Vec<(Citation, Option<Vec<String>>)> = match old.get("cited").and_then(Value::as_array)
    {
        Some(list) => list
            .iter()
            .filter_map(|c| {
                let cite = Citation {
                    path: c.get("path")?.as_str()?.to_string(),
                    lines: c.get("lines")?.as_str()?.to_string(),
                };
                let text = c.get("text").and_then(Value::as_array).map(|t| {
                    t.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                });
                Some((cite, text))
            })
            .collect(),
        None => claim_citations(old)
            .into_iter()
            .map(|c| (c, None))
            .collect(),
    };
    if was.is_empty() {
        // Nothing cited: the "cites nothing" line stays as it was.
        return (old_code(old), Vec::new(), Vec::new());
    }
    let Ok(tree) = tree_of(Some(now), "the worktree") else {
        // No snapshot now: nothing can be compared, the code stays as shown.
        return (old_code(old), Vec::new(), Vec::new());
    };
    let mut code = Vec::new();
    let mut cited = Vec::new();
    let mut why = Vec::new();
    for (c, text) in was {
        let Some(range) = parse_lines(&c.lines) else {
            code.push(format!(
                "code not shown: {}:{} names no line range",
                c.path, c.lines
            ));
            continue;
        };
        let x = match crate::code::excerpt(worktree, tree, &c.path, range.clone(), EXCERPT_CONTEXT)
        {
            Ok(x) => x,
            Err(e) => {
                code.push(format!("code not available: {e}"));
                continue;
            }
        };
        if x.lines.is_empty() && x.total_lines == 0 && !exists_in(worktree, &c.path) {
            why.push(format!("{}: no longer in the worktree (vanished)", c.path));
            code.extend(excerpt_lines(&x, &format!("{}:{}", x.path, c.lines)));
            cited.push(json!({"path": c.path, "lines": c.lines, "text": []}));
            continue;
        }
        let now_text: Vec<String> = cited_text(&x.lines);
        let Some(was_text) = text.filter(|t| !t.is_empty()) else {
            code.extend(excerpt_lines(&x, &format!("{}:{}", x.path, c.lines)));
            cited.push(json!({"path": c.path, "lines": c.lines, "text": now_text}));
            why.push(format!("{}: edited since the gate opened", c.path));
            continue;
        };
        if now_text == was_text {
            code.extend(excerpt_lines(&x, &format!("{}:{}", x.path, c.lines)));
            cited.push(json!({"path": c.path, "lines": c.lines, "text": now_text}));
            why.push(format!(
                "{}: edited around the cited lines {}",
                c.path, c.lines
            ));
            continue;
        }
        // Where the cited text is now, if it is still there.
        let moved = crate::code::excerpt(worktree, tree, &c.path, 1..=u32::MAX, 0)
            .ok()
            .and_then(|all| find_block(&all.lines, &was_text, *range.start()));
        match moved {
            Some(start) => {
                let end = start + u32::try_from(was_text.len()).unwrap_or(1) - 1;
                let lines = if start == end {
                    start.to_string()
                } else {
                    format!("{start}-{end}")
                };
                why.push(format!(
                    "{}: the cited lines moved from {} to {lines}",
                    c.path, c.lines
                ));
                match crate::code::excerpt(worktree, tree, &c.path, start..=end, EXCERPT_CONTEXT) {
                    Ok(y) => code.extend(excerpt_lines(
                        &y,
                        &format!("{}:{lines} (cited as {}:{})", y.path, c.path, c.lines),
                    )),
                    Err(e) => code.push(format!("code not available: {e}")),
                }
                cited.push(json!({"path": c.path, "lines": lines, "text": was_text}));
            }
            None => {
                why.push(format!(
                    "{}: the cited lines {} were edited since the gate opened",
                    c.path, c.lines
                ));
                code.extend(excerpt_lines(&x, &format!("{}:{}", x.path, c.lines)));
                cited.push(json!({"path": c.path, "lines": c.lines, "text": now_text}));
            }
        }
    }
    (code, cited, why)
}

/// The `code` lines of the evidence shown.
fn old_code(old: &Value) -> Vec<String> {
    crate::util::json_strings(old.get("code"))
}

/// Whether `path` differs between the snapshots `a` and `b` (`None` when
/// git cannot tell). Every file is summarised: only the list matters.
fn touched(worktree: &Path, a: &TreeId, b: &TreeId, path: &str) -> Option<bool> {
    let names_only = DiffLimits {
        max_file_bytes: 0,
        max_changed_lines: 0,
        context: 0,
    };
    let files = crate::code::diff_with(worktree, a, b, &names_only).ok()?;
    Some(
        files
            .iter()
            .any(|f| f.path == path || f.old_path.as_deref() == Some(path)),
    )
}

/// The first line where `want` stands whole in `all`, the nearest to
/// `near` when it stands at several places.
fn find_block(all: &[ExcerptLine], want: &[String], near: u32) -> Option<u32> {
    if want.is_empty() || want.len() > all.len() {
        return None;
    }
    all.windows(want.len())
        .filter(|w| {
            w.iter()
                .zip(want)
                .all(|(l, t)| &bounded(l.text.clone()) == t)
        })
        .map(|w| w[0].number)
        .min_by_key(|n| n.abs_diff(near))
}

/// True when `path` (relative, inside the worktree) names something there
/// now; a path that leaves the worktree is never looked at.
fn exists_in(worktree: &Path, path: &str) -> bool {
    let p = Path::new(path);
    let inside = p
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    inside && std::fs::symlink_metadata(worktree.join(p)).is_ok()
}
