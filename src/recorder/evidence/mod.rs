//! The evidence a human gate carries, captured when the gate opens so the
//! person decides on what was there then, whatever its kind:
//!
//! - out-of-scope: the file's hunks against the run's base snapshot, with
//!   what the verifier said about it (`code`, `justification`);
//! - unverifiable: the cited lines of a finding, or of the locations a
//!   criterion row cites, from the iteration's snapshot (`code`, `cited`);
//! - abandoned: the criterion and its ABANDON line and proof, read from the
//!   contract (`contract`);
//! - cap-reached: the gate's gap rows over all its rounds (`rounds`);
//! - structural: the output with its failing line marked (`outputLines`).
//!
//! What is captured is raw text stored in the request's `evidence`;
//! whoever shows it sanitises it. A file too large or binary is summarised
//! by the diff limits, never dumped; a failure to read is said in the
//! evidence instead of hidden. [`refresh()`] recomputes it all from what is
//! there now, for a person who wants to decide on the current code.

mod code;
mod kinds;
pub mod lines;
mod refresh;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

pub use code::{
    Citation, EXCERPT_CONTEXT, MAX_CAPTURED_LINE, MAX_CITATIONS, MAX_EVIDENCE_CHANGED_LINES,
    citations, cited_lines, file_hunks,
};
pub use kinds::{abandonment, log_tail, marked_output, rounds};
pub use refresh::{Refreshed, Sources, refresh};

use crate::code::{CodeSnapshot, RunTrees};
use crate::journal::{JournalError, Pipeline};
use crate::model::event::{Event, GateFinished};
use crate::model::kinds::Evidence;
use crate::model::rules::GateRequest;
use crate::model::{CriterionRow, Finding, State};

/// What a gate opens on: the state before it, the round that opened it
/// (with its raw output and the line a structural failure blames), the
/// iteration.
#[derive(Debug, Clone, Copy)]
pub struct Opening<'a> {
    /// The state before the round or the findings are recorded.
    pub state: &'a State,
    /// The round that opens the gates, when a round does.
    pub finished: Option<&'a GateFinished>,
    /// That round's output as the agent printed it.
    pub raw_output: Option<&'a [u8]>,
    /// The line of the output a structural failure blames, when one does.
    pub failing_line: Option<usize>,
    /// The iteration the gates belong to.
    pub iteration: u32,
}

/// Adds the evidence of its kind to every request a round or a set of
/// findings opens. The journal is read (for the snapshots) only when a
/// request shows code.
pub fn capture(requests: &mut [GateRequest], pipeline: &Pipeline, at: &Opening<'_>) {
    let needs_code = requests.iter().any(|r| {
        matches!(
            r.kind.spec().evidence,
            Evidence::FileChange | Evidence::CitedLines
        )
    });
    let trees = if needs_code {
        let events: Vec<Event> = crate::journal::read_all(&pipeline.journal_path())
            .map(|b| b.events)
            .unwrap_or_default();
        RunTrees::from_events(&events)
    } else {
        RunTrees::default()
    };
    let worktree = pipeline.worktree();
    let run = at.state.run.as_ref();
    // One fresh snapshot for every out-of-scope file of the round.
    let mut fresh: Option<CodeSnapshot> = None;
    for r in requests.iter_mut() {
        let subject = r.subject.clone();
        let evidence = r.kind.spec().evidence;
        let gate = r.gate;
        let Some(ev) = r.evidence.as_object_mut() else {
            continue;
        };
        match evidence {
            Evidence::FileChange => {
                let now = fresh.get_or_insert_with(|| crate::code::take(worktree, pipeline.dir()));
                if let Some(f) = at.finished {
                    let said: Vec<String> = justification(f, &subject)
                        .into_iter()
                        .map(code::bounded)
                        .collect();
                    if !said.is_empty() {
                        ev.insert("justification".into(), json!(said));
                    }
                }
                let diff_base = diff_base(run.map(|r| r.diff.as_str()));
                let code = file_hunks(worktree, trees.of(0), diff_base, now, &subject);
                ev.insert("code".into(), json!(code));
                // The snapshot the hunks were taken to: a later look asks git
                // whether the file changed since, whatever the summary says.
                if let Some(t) = now.tree() {
                    ev.insert("at".into(), json!(t.as_str()));
                }
            }
            Evidence::CitedLines => {
                let cites = claim_citations(&Value::Object(ev.clone()));
                let snapshot = trees.of(at.iteration);
                let (code, cited) = cited_blocks(worktree, snapshot, &cites, at.iteration);
                ev.insert("code".into(), json!(code));
                ev.insert("cited".into(), json!(cited));
            }
            Evidence::ContractLines => {
                let lines = abandonment(worktree, run.map(|r| r.contract.as_str()), &subject);
                ev.insert("contract".into(), json!(lines));
            }
            Evidence::Rounds => {
                if let Some(g) = gate {
                    let earlier = at.state.review_iterations.iter().flat_map(|i| &i.gates);
                    let lines = rounds(g, earlier.chain(at.finished));
                    ev.insert("rounds".into(), json!(lines));
                }
            }
            Evidence::Output => {
                if let Some(raw) = at.raw_output {
                    ev.insert(
                        "outputLines".into(),
                        json!(marked_output(raw, at.failing_line)),
                    );
                    if let Some(l) = at.failing_line {
                        ev.insert("failingLine".into(), json!(l));
                    }
                }
            }
            // The engine asks with what it found (the changes, the spend,
            // the rounds' rows and trees).
            Evidence::ContractChanges | Evidence::Spend | Evidence::Progress => {}
        }
    }
}

/// The locations a gate's claim cites: a finding's `path:lines`, or the
/// `path:lines` a criterion row's detail or text names (at most
/// [`MAX_CITATIONS`]).
pub fn claim_citations(evidence: &Value) -> Vec<Citation> {
    if let Some(f) = finding_of(evidence) {
        return vec![Citation {
            path: f.path,
            lines: f.lines,
        }];
    }
    let mut out: Vec<Citation> = Vec::new();
    for r in evidence
        .get("rows")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| serde_json::from_value::<CriterionRow>(r.clone()).ok())
    {
        for c in citations(&r.detail).into_iter().chain(citations(&r.text)) {
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    out.truncate(MAX_CITATIONS);
    out
}

/// The code of each citation from `snapshot` (`code` lines) and the cited
/// text itself (`cited`: `{path, lines, text}`), kept so a later look can
/// tell whether the lines were edited, moved or vanished.
fn cited_blocks(
    worktree: &Path,
    snapshot: Option<&CodeSnapshot>,
    cites: &[Citation],
    iteration: u32,
) -> (Vec<String>, Vec<Value>) {
    if cites.is_empty() {
        return (
            vec!["(the verifier's row cites no path:line: no code to show)".into()],
            Vec::new(),
        );
    }
    let mut code = Vec::new();
    let mut cited = Vec::new();
    for c in cites {
        let (block, text) = code::cited_block(worktree, snapshot, &c.path, &c.lines);
        cited.push(json!({
            "path": c.path,
            "lines": c.lines,
            "iteration": iteration,
            "text": text,
        }));
        code.extend(block);
    }
    (code, cited)
}

/// The start of a run's `--diff` range (`main..HEAD` → `main`), if any.
fn diff_base(run_diff: Option<&str>) -> Option<&str> {
    let base = run_diff?.split("..").next()?.trim();
    (!base.is_empty()).then_some(base)
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
    crate::util::pipeline_dir(&dir).map_err(|e| JournalError::io("write into", &dir, e))?;
    let path = dir.join(format!("{id}.txt"));
    crate::util::replace_in_pipeline(&path, bytes)
        .map_err(|e| JournalError::io("write", &path, e))?;
    Ok(path)
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
