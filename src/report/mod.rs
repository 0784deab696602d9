//! The run report (`loopwatch report`, and `.pipeline/report.md` at the end
//! of a run): final status, every iteration with its gate verdicts,
//! abandonments, deferred findings, every human decision, the red tests.
//!
//! Built from the folded state plus the triage files it names; rendered as
//! markdown, JSON or one self-contained HTML file. Never claims "complete"
//! when an abandonment was accepted.

mod html;

use std::path::Path;

use serde::Serialize;

use crate::model::event::GateFinished;
use crate::model::*;

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
    /// Criteria abandoned, with the decision taken.
    pub abandonments: Vec<Abandonment>,
    /// Findings deferred (for a human eye).
    pub deferred: Vec<DeferredFinding>,
    /// Every human decision.
    pub decisions: Vec<DecisionLine>,
    /// Human gates still open.
    pub open_gates: Vec<String>,
    /// Repro tests kept red.
    pub red_tests: Vec<RedTest>,
    /// Tokens and cost of the agents `loopwatch run` dispatched: the total,
    /// then per gate and for the developer (empty for other runs).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<String>,
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
    /// Tokens and cost of this iteration's dispatches, when there were any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agents: Option<String>,
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
}

impl Report {
    /// Builds the report from the state; deferred findings are read from the
    /// triage files under `pipeline_dir` when given.
    pub fn build(s: &State, pipeline_dir: Option<&Path>) -> Report {
        let run = s.run.clone().unwrap_or_default();
        let accepted_partial = crate::recorder::accepted_partial(s);
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
                agents: (!it.usage.is_empty()).then(|| it.usage.summary()),
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
                decision: g
                    .decision
                    .as_ref()
                    .map_or("open".into(), |d| d.decision.decision.as_str().into()),
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
        let deferred = pipeline_dir
            .map(|d| deferred_findings(s, d))
            .unwrap_or_default();
        Report {
            run: run.id,
            flow: run.flow,
            contract: run.contract,
            final_status,
            status_note,
            iterations,
            abandonments,
            deferred,
            decisions,
            open_gates: s.open_human_gates().map(|g| g.request.id.clone()).collect(),
            red_tests,
            agents: usage_lines(&s.usage),
        }
    }

    /// Markdown.
    pub fn to_markdown(&self) -> String {
        use std::fmt::Write;
        let mut o = String::new();
        let _ = writeln!(o, "# Run report — {}\n", md(&self.run));
        let _ = writeln!(o, "- flow: {}", md(&self.flow));
        let _ = writeln!(o, "- contract: {}", md(&self.contract));
        let _ = writeln!(o, "- final status: **{}**", self.final_status);
        if let Some(n) = &self.status_note {
            let _ = writeln!(o, "- note: {}", md(n));
        }
        if !self.open_gates.is_empty() {
            let _ = writeln!(
                o,
                "- waiting on a person: {}",
                md(&self.open_gates.join(", "))
            );
        }
        if !self.agents.is_empty() {
            let _ = writeln!(o, "\n## Agents (tokens and cost)\n");
            for a in &self.agents {
                let _ = writeln!(o, "- {}", md(a));
            }
        }
        let _ = writeln!(o, "\n## Iterations\n");
        if self.iterations.is_empty() {
            let _ = writeln!(o, "none");
        }
        for it in &self.iterations {
            let _ = writeln!(o, "### Iteration {} ({})\n", it.iteration, md(&it.trigger));
            for g in &it.gates {
                let _ = writeln!(o, "- {}", md(g));
            }
            if let Some(a) = &it.agents {
                let _ = writeln!(o, "- agents: {}", md(a));
            }
            let _ = writeln!(o);
        }
        let _ = writeln!(o, "## Abandonments\n");
        if self.abandonments.is_empty() {
            let _ = writeln!(o, "none\n");
        }
        for a in &self.abandonments {
            let _ = writeln!(
                o,
                "- criterion {}: {} — decision: {}",
                md(&a.criterion),
                md(&a.reason),
                a.decision
            );
        }
        if !self.abandonments.is_empty() {
            let _ = writeln!(o);
        }
        let _ = writeln!(o, "## Deferred findings (for a human eye)\n");
        if self.deferred.is_empty() {
            let _ = writeln!(o, "none\n");
        }
        for f in &self.deferred {
            let _ = writeln!(
                o,
                "- {} (iteration {}): {} — {}",
                md(&f.id),
                f.iteration,
                md(&f.title),
                md(&f.reason)
            );
        }
        if !self.deferred.is_empty() {
            let _ = writeln!(o);
        }
        let _ = writeln!(o, "## Human decisions\n");
        if self.decisions.is_empty() {
            let _ = writeln!(o, "none\n");
        }
        for d in &self.decisions {
            let _ = writeln!(
                o,
                "- {} ({} {}): **{}** by {} at {} — {} (evidence {})",
                md(&d.id),
                d.kind,
                md(&d.subject),
                d.decision,
                md(&d.by),
                md(&d.at),
                md(&d.reason),
                md(&d.evidence_hash)
            );
        }
        if !self.decisions.is_empty() {
            let _ = writeln!(o);
        }
        let _ = writeln!(o, "## Red tests kept\n");
        if self.red_tests.is_empty() {
            let _ = writeln!(o, "none");
        }
        for t in &self.red_tests {
            let _ = writeln!(
                o,
                "- {} ({}) proves {}",
                md(&t.test_ref),
                md(&t.file),
                md(&t.issue)
            );
        }
        o
    }

    /// JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// One self-contained HTML page (no network).
    pub fn to_html(&self) -> String {
        html::render(self)
    }
}

/// `total: …`, then one line per gate and for the developer that dispatched anything.
fn usage_lines(u: &crate::model::state::RunUsage) -> Vec<String> {
    if u.is_empty() {
        return Vec::new();
    }
    let mut out = vec![format!(
        "total ({} dispatches): {}",
        u.total.dispatches,
        u.total.summary()
    )];
    for (name, part) in [
        ("GATE 1 conformity", &u.conformity),
        ("GATE 2 security", &u.security),
        ("developer", &u.developer),
        ("other", &u.other),
    ] {
        if !part.is_empty() {
            out.push(format!(
                "{name} ({} dispatches): {}",
                part.dispatches,
                part.summary()
            ));
        }
    }
    out
}

/// The markdown report of a state (what `record run-end` writes).
pub fn markdown(s: &State, pipeline_dir: Option<&Path>) -> String {
    Report::build(s, pipeline_dir).to_markdown()
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

fn deferred_findings(s: &State, dir: &Path) -> Vec<DeferredFinding> {
    let mut out = Vec::new();
    for it in &s.review_iterations {
        let Some(t) = &it.triage else { continue };
        let Ok(path) = crate::journal::Pipeline::at(dir).resolve_recorded(&t.file) else {
            continue;
        };
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if !meta.is_file() || meta.len() > 16 * 1024 * 1024 {
            continue;
        }
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        let Ok(file) = crate::model::triage::Triage::parse(&t.file, &bytes) else {
            continue;
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
    out
}

/// Markdown-safe text: one line, control characters escaped, markup
/// characters that could restructure the report escaped.
fn md(s: &str) -> String {
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
