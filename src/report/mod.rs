//! The run report (`loopwatch report`, and `.pipeline/report.md` at the end
//! of a run): final status, every iteration with its gate verdicts, the
//! criteria table per iteration (GATE 0 evidence beside GATE 1 status), the
//! findings with their verdicts, verify-by-test results and triage buckets,
//! abandonments, deferred findings, every human decision with who, when, why
//! and its evidence, the code changes per iteration, the agents' tokens and
//! cost where recorded, the red tests, and (HTML) a picture of the run.
//!
//! Built from the folded state plus the triage files it names, and from the
//! journal's events for what the state does not keep (snapshots, times); rendered as markdown, JSON or one self-contained HTML file.
//! Never claims "complete" when an abandonment was accepted. Every format
//! is scrubbed of secrets ([`crate::redact`]); the journal is not.

mod html;
mod markdown;
mod run_events;
mod svg;
mod tables;

use std::path::Path;

use serde::Serialize;

use crate::model::event::GateFinished;
use crate::model::*;

pub use run_events::{AgentLine, IterationCode, Span, Usage};
pub use tables::{CriteriaTable, CriterionLine, FindingLine};

/// Everything a report says, in a serialisable form.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Run id.
    pub run: String,
    /// Flow.
    pub flow: String,
    /// Contract path.
    pub contract: String,
    /// complete, partial, not-conformant, stopped, aborted, or in-progress.
    pub final_status: String,
    /// Why the final status is what it is, when it differs from what was recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_note: Option<String>,
    /// Iterations with their gate verdicts.
    pub iterations: Vec<IterationLine>,
    /// The criteria of each iteration, GATE 0 beside GATE 1.
    pub criteria: Vec<CriteriaTable>,
    /// Every finding with its verdict, verify-by-test result and bucket.
    pub findings: Vec<FindingLine>,
    /// Criteria abandoned, with the decision taken.
    pub abandonments: Vec<Abandonment>,
    /// Findings deferred (for a human eye).
    pub deferred: Vec<DeferredFinding>,
    /// Triage files the journal names that could not be read: their
    /// deferred findings are missing above, and the report says so.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreadable_triage: Vec<UnreadableTriage>,
    /// Every human decision.
    pub decisions: Vec<DecisionLine>,
    /// Gates nobody decided in time (never counted as decisions).
    pub expirations: Vec<ExpiryLine>,
    /// Human gates still open.
    pub open_gates: Vec<String>,
    /// Repro tests kept red.
    pub red_tests: Vec<RedTest>,
    /// The code changes of each iteration (from the journal's snapshots).
    pub code: Vec<IterationCode>,
    /// Tokens and cost where recorded.
    pub usage: Usage,
    /// Each gate's failing rows per round, the rows fixed and new, and the
    /// spend of each round.
    pub convergence: Vec<rules::progress::GateRounds>,
    /// The budget as spent / limit, when the run has one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub budget: Vec<String>,
    /// Gate rounds and waits on a person over time.
    pub timeline: Vec<Span>,
}

/// One iteration.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IterationLine {
    /// Number.
    pub iteration: u32,
    /// Why it started.
    pub trigger: String,
    /// `GATE n gate round r: VERDICT` for each round.
    pub gates: Vec<String>,
}

/// An abandoned criterion.
#[derive(Debug, Clone, Serialize)]
pub struct Abandonment {
    /// Criterion id.
    pub criterion: String,
    /// Why (the verifier's detail or the ABANDON reason).
    pub reason: String,
    /// lift, accept-partial, or open.
    pub decision: String,
}

/// A triage file that could not be read, and why.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct UnreadableTriage {
    /// The iteration that recorded it.
    pub iteration: u32,
    /// The file as recorded (relative to `.pipeline/`).
    pub file: String,
    /// Why it could not be read.
    pub reason: String,
}

/// A deferred finding.
#[derive(Debug, Clone, Serialize)]
pub struct DeferredFinding {
    /// Iteration.
    pub iteration: u32,
    /// Finding id.
    pub id: String,
    /// Title or claim.
    pub title: String,
    /// Why deferred.
    pub reason: String,
}

/// A gate that expired: its action applied without a person.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExpiryLine {
    /// Gate id.
    pub id: String,
    /// Kind.
    pub kind: String,
    /// Subject.
    pub subject: String,
    /// How long it was allowed to wait.
    pub after: String,
    /// The option that applied.
    pub action: String,
    /// When it expired.
    pub at: String,
    /// When it was asked.
    pub requested_at: String,
    /// The request's summary.
    pub summary: String,
}

/// A decision.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionLine {
    /// Gate id.
    pub id: String,
    /// Kind.
    pub kind: String,
    /// Subject.
    pub subject: String,
    /// Decision token.
    pub decision: String,
    /// Who.
    pub by: String,
    /// When.
    pub at: String,
    /// Why.
    pub reason: String,
    /// Hash of the evidence shown.
    pub evidence_hash: String,
    /// When the gate opened.
    pub requested_at: String,
    /// The gate's one-line summary.
    pub summary: String,
    /// The evidence recorded with the gate, as lines.
    pub evidence: Vec<String>,
    /// The note to the developer, scrubbed of secrets and cut at
    /// [`crate::model::rules::NOTE_HANDOFF_MAX`] characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Report {
    /// Builds the report from the state; deferred findings are read from the
    /// triage files under `pipeline_dir` when given.
    pub fn build(s: &State, pipeline_dir: Option<&Path>) -> Report {
        let run = s.run.clone().unwrap_or_default();
        let accepted_partial = s.accepted_partial();
        let recorded = s.ended.as_ref().map(|e| e.status);
        let (final_status, status_note) = match recorded {
            Some(EndStatus::Complete) if accepted_partial => (
                "partial".to_string(),
                Some(
                    "recorded as complete, but an abandonment was accepted: reported as partial"
                        .to_string(),
                ),
            ),
            Some(st) => (st.as_str().to_string(), None),
            None => ("in-progress".to_string(), None),
        };
        let iterations = s
            .review_iterations
            .iter()
            .map(|it| IterationLine {
                iteration: it.iteration,
                trigger: it.trigger.clone(),
                gates: it.gates.iter().map(gate_line).collect(),
            })
            .collect();
        let mut abandonments = Vec::new();
        for g in s
            .human_gates
            .iter()
            .filter(|g| g.request.kind == HumanGateKind::Abandoned)
        {
            abandonments.push(Abandonment {
                criterion: g.request.subject.clone(),
                reason: g.request.summary.clone(),
                decision: match (&g.decision, &g.expired) {
                    (Some(d), _) => d.decision.decision.as_str().into(),
                    (None, Some(x)) => format!("EXPIRED ({} applied)", x.action),
                    (None, None) => "open".into(),
                },
            });
        }
        let decisions = s
            .human_gates
            .iter()
            .filter_map(|g| {
                let d = g.decision.as_ref()?;
                Some(DecisionLine {
                    id: g.request.id.clone(),
                    kind: g.request.kind.as_str().into(),
                    subject: g.request.subject.clone(),
                    decision: d.decision.decision.as_str().into(),
                    by: d.decision.by.clone(),
                    at: d.at.clone(),
                    reason: d.decision.reason.clone(),
                    evidence_hash: d.decision.evidence_hash.clone(),
                    requested_at: g.requested_at.clone(),
                    summary: g.request.summary.clone(),
                    evidence: tables::evidence_lines(&g.request.evidence),
                    note: d.decision.developer_note().map(report_note),
                })
            })
            .collect();
        let mut red_tests: Vec<RedTest> = Vec::new();
        for it in &s.review_iterations {
            if let Some(v) = &it.verify_by_test {
                for t in &v.red_tests {
                    if !red_tests.contains(t) {
                        red_tests.push(t.clone());
                    }
                }
            }
        }
        let (deferred, unreadable_triage) = pipeline_dir
            .map(|d| deferred_findings(s, d))
            .unwrap_or_default();
        Report {
            run: run.id,
            flow: run.flow,
            contract: run.contract,
            final_status,
            status_note,
            iterations,
            criteria: tables::criteria(s),
            findings: tables::findings(s),
            abandonments,
            deferred,
            unreadable_triage,
            decisions,
            expirations: s
                .human_gates
                .iter()
                .filter_map(|g| {
                    let x = g.expired.as_ref()?;
                    Some(ExpiryLine {
                        id: g.request.id.clone(),
                        kind: g.request.kind.as_str().into(),
                        subject: g.request.subject.clone(),
                        after: x.after.clone(),
                        action: x.action.as_str().into(),
                        at: x.at.clone(),
                        requested_at: g.requested_at.clone(),
                        summary: g.request.summary.clone(),
                    })
                })
                .collect(),
            open_gates: s.open_human_gates().map(|g| g.request.id.clone()).collect(),
            red_tests,
            code: Vec::new(),
            usage: run_events::usage(s),
            convergence: rules::progress::convergence(s),
            budget: s
                .run
                .as_ref()
                .and_then(|r| r.budget.as_ref())
                .map(|b| crate::model::budget::from_json(b).lines(s))
                .unwrap_or_default(),
            timeline: Vec::new(),
        }
    }

    /// Adds what only the events hold: the code changes per iteration (read
    /// from the snapshots in the git repository of `worktree`) and the
    /// timeline of the picture.
    pub fn with_events(mut self, events: &[Event], worktree: &Path) -> Report {
        self.code = run_events::code_changes(events, worktree);
        self.timeline = run_events::timeline(events);
        self
    }

    /// Markdown.
    pub fn to_markdown(&self) -> String {
        markdown::render(self)
    }

    /// JSON, every string scrubbed of secrets.
    pub fn to_json(&self) -> String {
        let mut v = match serde_json::to_value(self) {
            Ok(v) => v,
            Err(e) => return format!("{{\"error\":{:?}}}", crate::sanitize::field(&e.to_string())),
        };
        crate::redact::scrub_json(&mut v);
        crate::sanitize::json::to_string_pretty(&v).unwrap_or_else(|e| {
            format!("{{\"error\":{:?}}}", crate::sanitize::field(&e.to_string()))
        })
    }

    /// One self-contained HTML page (no network).
    pub fn to_html(&self) -> String {
        html::render(self)
    }
}

/// The markdown report of a state (what `record run-end` writes); with a
/// pipeline folder, its journal's events add the code changes and times.
pub fn markdown(s: &State, pipeline_dir: Option<&Path>) -> String {
    let mut r = Report::build(s, pipeline_dir);
    if let Some(dir) = pipeline_dir {
        let p = crate::journal::Pipeline::at(dir);
        if let Ok(batch) = crate::journal::read_all(&p.journal_path()) {
            r = r.with_events(&batch.events, p.worktree());
        }
    }
    r.to_markdown()
}

fn gate_line(g: &GateFinished) -> String {
    let mut s = format!(
        "GATE {} {} round {}: {}",
        g.gate.number(),
        g.gate,
        g.round,
        g.verdict
    );
    if g.degraded {
        s.push_str(" (degraded)");
    }
    if let Some(st) = &g.structural {
        s.push_str(&format!(" — structural: {st}"));
    }
    s
}

/// Largest triage file read for a report.
const MAX_TRIAGE_BYTES: u64 = 16 * 1024 * 1024;

/// The deferred findings of every recorded triage file, and the files that
/// could not be read (refused path, missing, not a regular file, too large,
/// not a triage file), each with its reason.
fn deferred_findings(s: &State, dir: &Path) -> (Vec<DeferredFinding>, Vec<UnreadableTriage>) {
    let mut out = Vec::new();
    let mut unreadable = Vec::new();
    let pipeline = crate::journal::Pipeline::at(dir);
    for it in &s.review_iterations {
        let Some(t) = &it.triage else { continue };
        let read = pipeline
            .resolve_recorded(&t.file)
            .map_err(|e| e.to_string())
            .and_then(|path| {
                crate::util::read_regular(&path, MAX_TRIAGE_BYTES).map_err(|e| e.to_string())
            })
            .and_then(|bytes| crate::model::triage::Triage::parse(&t.file, &bytes));
        let file = match read {
            Ok(f) => f,
            Err(reason) => {
                unreadable.push(UnreadableTriage {
                    iteration: it.iteration,
                    file: t.file.clone(),
                    reason,
                });
                continue;
            }
        };
        for f in &file.deferred {
            out.push(DeferredFinding {
                iteration: it.iteration,
                id: f.id.clone(),
                title: if f.title.is_empty() {
                    f.claim.clone()
                } else {
                    f.title.clone()
                },
                reason: f.reason.clone().unwrap_or_default(),
            });
        }
    }
    (out, unreadable)
}

/// A note as a report shows it: scrubbed of secrets first (a secret cut
/// in two would no longer be recognised), then cut.
fn report_note(note: &str) -> String {
    let clean = crate::redact::scrub(note);
    let max = crate::model::rules::NOTE_HANDOFF_MAX;
    if clean.chars().count() <= max {
        return clean.into_owned();
    }
    let mut cut: String = clean.chars().take(max).collect();
    cut.push_str("… (cut: the whole note is in the journal)");
    cut
}

/// Markdown-safe text: secrets scrubbed, one line, control characters
/// escaped, markup characters that could restructure the report escaped.
pub(super) fn md(s: &str) -> String {
    let s = crate::redact::scrub(s);
    let flat = crate::sanitize::terminal_text(s.replace(['\n', '\r'], " ").as_bytes());
    let mut o = String::with_capacity(flat.len());
    for c in flat.chars() {
        if matches!(c, '*' | '`' | '[' | ']' | '<' | '>' | '|') {
            o.push('\\');
        }
        o.push(c);
    }
    o
}
