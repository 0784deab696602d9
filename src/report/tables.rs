//! The tables of a report read from the folded state: the criteria of each
//! iteration (GATE 0 evidence beside GATE 1 status), every finding with its
//! verdict, verify-by-test result and triage bucket, and the evidence of
//! each decision as lines.

use serde::Serialize;
use serde_json::Value;

use crate::model::*;

/// The criteria of one iteration.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CriteriaTable {
    /// Iteration.
    pub iteration: u32,
    /// One row per criterion, in the order GATE 0 then GATE 1 named them.
    pub rows: Vec<CriterionLine>,
}

/// One criterion as the two gates saw it in an iteration (their last rounds).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CriterionLine {
    /// Criterion id.
    pub id: String,
    /// Criterion text.
    pub text: String,
    /// GATE 0 state (absent when GATE 0 did not judge it).
    pub floor: Option<String>,
    /// GATE 0 evidence.
    pub floor_evidence: String,
    /// GATE 1 status (absent when GATE 1 did not judge it).
    pub conformity: Option<String>,
    /// GATE 1 detail.
    pub conformity_detail: String,
}

/// One finding with everything decided about it in its iteration.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FindingLine {
    /// Iteration.
    pub iteration: u32,
    /// Finding id.
    pub id: String,
    /// Severity.
    pub severity: String,
    /// `path:lines`.
    pub location: String,
    /// The claim.
    pub claim: String,
    /// The finding verifier's verdict.
    pub verdict: String,
    /// The verifier's note.
    pub note: String,
    /// The verify-by-test result, when one ran.
    pub verify_by_test: Option<String>,
    /// The repro test, when one was written.
    pub repro_test: String,
    /// accepted, deferred or rejected, when triaged.
    pub triage: Option<String>,
    /// Settled in an earlier round (the finding ledger): what became of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raised_again: Option<String>,
    /// The review rounds it was seen in, when more than its own.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<u32>,
}

/// The criteria tables, one per iteration in which a gate judged criteria.
pub fn criteria(s: &State) -> Vec<CriteriaTable> {
    let mut out = Vec::new();
    for it in &s.review_iterations {
        let mut rows: Vec<CriterionLine> = Vec::new();
        if let Some(g) = it.last_gate(GateName::Floor) {
            for r in g.floor_rows() {
                rows.push(CriterionLine {
                    id: r.id.clone(),
                    text: r.text.clone(),
                    floor: Some(r.state.as_str().into()),
                    floor_evidence: r.evidence.clone(),
                    conformity: None,
                    conformity_detail: String::new(),
                });
            }
        }
        if let Some(g) = it.last_gate(GateName::Conformity) {
            for r in g.criterion_rows() {
                let line = match rows.iter_mut().find(|l| l.id == r.id) {
                    Some(l) => l,
                    None => {
                        rows.push(CriterionLine {
                            id: r.id.clone(),
                            text: r.text.clone(),
                            floor: None,
                            floor_evidence: String::new(),
                            conformity: None,
                            conformity_detail: String::new(),
                        });
                        let last = rows.len() - 1;
                        &mut rows[last]
                    }
                };
                line.conformity = Some(r.status.as_str().into());
                line.conformity_detail.clone_from(&r.detail);
            }
        }
        if !rows.is_empty() {
            out.push(CriteriaTable {
                iteration: it.iteration,
                rows,
            });
        }
    }
    out
}

/// Every finding of every iteration.
pub fn findings(s: &State) -> Vec<FindingLine> {
    let mut out = Vec::new();
    for it in &s.review_iterations {
        let buckets = it.triage.as_ref().and_then(|t| t.buckets.as_ref());
        for f in &it.findings {
            let verify = it.verifications.iter().rev().find(|v| v.finding == f.id);
            let location = match (f.path.as_str(), f.lines.as_str()) {
                ("", _) => String::new(),
                (p, "") => p.to_string(),
                (p, l) => format!("{p}:{l}"),
            };
            out.push(FindingLine {
                iteration: it.iteration,
                id: f.id.clone(),
                severity: f.severity.clone(),
                location,
                claim: f.claim.clone(),
                verdict: f.verdict.as_str().into(),
                note: f.note.clone(),
                verify_by_test: verify.map(|v| v.result.as_str().to_string()),
                repro_test: verify.map(|v| v.test_ref.clone()).unwrap_or_default(),
                triage: triage_of(s, it.iteration, &f.id, buckets),
                raised_again: crate::model::ledger::raised_again_of(f).map(|r| r.sentence()),
                rounds: Some(crate::model::ledger::seen_in(s, it.iteration, f))
                    .filter(|r| r.len() > 1)
                    .unwrap_or_default(),
            });
        }
    }
    out
}

/// A finding's triage bucket, with what a person decided on it when one
/// did (`rejected — dismissed by ana@desk: not on the hot path`).
fn triage_of(
    s: &State,
    iteration: u32,
    id: &str,
    buckets: Option<&crate::model::event::TriageBuckets>,
) -> Option<String> {
    use crate::model::kinds::Effect;
    use crate::model::rules::review::{by_whom, person_on_finding};
    let bucket = buckets.and_then(|b| b.bucket_of(id));
    let person = person_on_finding(s, iteration, id).and_then(|(g, e)| match e {
        Effect::Dismiss => Some(format!("dismissed {}", by_whom(g))),
        Effect::Fix => Some(format!("fix asked {}", by_whom(g))),
        _ => None,
    });
    match (bucket, person) {
        (Some(b), Some(p)) => Some(format!("{b} — {p}")),
        (None, p) => p,
        (Some(b), None) => Some(b.to_string()),
    }
}

/// Lines a decision's evidence adds to it.
const MAX_EVIDENCE_LINES: usize = 40;

/// The evidence a person was shown, as `key: value` lines (multi-line
/// values indented below their key), at most 40 lines.
pub fn evidence_lines(evidence: &Value) -> Vec<String> {
    let mut out = Vec::new();
    match evidence {
        Value::Null => {}
        Value::Object(map) => {
            for (k, v) in map {
                push_value(&mut out, k, v);
            }
        }
        other => push_value(&mut out, "evidence", other),
    }
    if out.len() > MAX_EVIDENCE_LINES {
        let more = out.len() - MAX_EVIDENCE_LINES;
        out.truncate(MAX_EVIDENCE_LINES);
        out.push(format!("… {more} more lines"));
    }
    out
}

fn push_value(out: &mut Vec<String>, key: &str, v: &Value) {
    match v {
        Value::String(s) => {
            // Scrubbed whole before it is cut into lines: a key block spans many.
            let s = crate::redact::scrub(s);
            let mut lines = s.lines();
            let first = lines.next().unwrap_or("");
            let rest: Vec<&str> = lines.collect();
            if rest.is_empty() {
                out.push(format!("{key}: {first}"));
            } else {
                out.push(format!("{key}:"));
                out.extend(
                    std::iter::once(first)
                        .chain(rest)
                        .map(|l| format!("    {l}")),
                );
            }
        }
        Value::Array(items) if items.iter().all(Value::is_string) => {
            let items: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
            out.push(format!("{key}: {}", items.join(", ")));
        }
        Value::Array(items) => {
            out.push(format!("{key}:"));
            for item in items {
                out.push(format!("    {}", compact(item)));
            }
        }
        other => out.push(format!("{key}: {}", compact(other))),
    }
}

fn compact(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| format!("{k}={}", compact(v)))
            .collect::<Vec<_>>()
            .join(" "),
        other => other.to_string(),
    }
}
