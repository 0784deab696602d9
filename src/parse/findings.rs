//! The review's findings and their matching with the verifier's verdicts.
//!
//! Findings (`[{id, severity, path, lines, claim, ...}]`) are matched to
//! verdicts BY POSITION: the n-th verdict judges the n-th finding, and the
//! id always comes from the finding, never from the model's echo. A finding
//! without a verdict becomes UNVERIFIABLE `PIPELINE-FAULT: no verdict
//! returned`; verdicts past the last finding are reported, never applied.
//! Without a findings list, [`findings_from_verdicts`] takes ids from the
//! echo, and an entry without one (or repeating one) is a pipeline fault.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::finding_verdicts::VerdictEntry;
use super::json::{JsonInputError, kind_of, read_array};
use crate::model::{Extra, Finding, FindingVerdict};

/// A finding as the review lists it, before verification.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewFinding {
    /// Finding id.
    pub id: String,
    /// blocking, major, minor, nit (other words kept as written).
    pub severity: String,
    /// File the finding is about.
    pub path: String,
    /// Line or range, as text (a number is kept as its digits).
    pub lines: String,
    /// What the finding claims.
    pub claim: String,
    /// Other fields, kept (a finding's own verdict/evidence/note are dropped).
    pub extra: Extra,
}

/// The outcome of matching findings with verdicts.
#[derive(Debug, Clone, PartialEq)]
pub struct Matching {
    /// One per finding, in the findings' order.
    pub findings: Vec<Finding>,
    /// Verdicts past the last finding (not applied to anything).
    pub extra_verdicts: Vec<VerdictEntry>,
    /// Positions where the model echoed an id other than the finding's:
    /// `(position, finding id, echoed id)`. The finding's id was kept.
    pub echo_mismatches: Vec<(usize, String, String)>,
}

/// Reads the review's findings list named `input`.
pub fn parse_findings(input: &str, text: &[u8]) -> Result<Vec<ReviewFinding>, JsonInputError> {
    let located = read_array(input, text, false, "{id, severity, path, lines, claim}")?;
    located
        .items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let (line, column) = located.positions.get(i).copied().unwrap_or((0, 0));
            review_finding(item).map_err(|message| JsonInputError::Shape {
                input: input.to_owned(),
                line,
                column,
                message: format!("finding {}: {message}", i + 1),
            })
        })
        .collect()
}

/// Matches `verdicts` to `findings` by position and returns the verified
/// findings. See [`match_findings`] for the extra verdicts and id echoes.
pub fn verify_findings(findings: &[ReviewFinding], verdicts: &[VerdictEntry]) -> Vec<Finding> {
    match_findings(findings, verdicts).findings
}

/// Matches `verdicts` to `findings` by position.
pub fn match_findings(findings: &[ReviewFinding], verdicts: &[VerdictEntry]) -> Matching {
    let mut echo_mismatches = Vec::new();
    let verified = findings
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let entry = verdicts.get(i).cloned().unwrap_or_else(|| {
                let mut missing = empty_entry(i);
                missing.fault("no verdict returned");
                missing
            });
            if let Some(echo) = entry.echo_id.as_ref().filter(|e| **e != f.id) {
                echo_mismatches.push((i, f.id.clone(), echo.clone()));
            }
            Finding {
                id: f.id.clone(),
                severity: f.severity.clone(),
                path: f.path.clone(),
                lines: f.lines.clone(),
                claim: f.claim.clone(),
                verdict: entry.verdict,
                evidence: entry.evidence,
                note: entry.note,
                extra: f.extra.clone(),
            }
        })
        .collect();
    Matching {
        findings: verified,
        extra_verdicts: verdicts.get(findings.len()..).unwrap_or_default().to_vec(),
        echo_mismatches,
    }
}

/// Findings built from verdicts alone, ids taken from the echo. An entry
/// without an id gets `#<position>` (1-based) and a pipeline fault; an id
/// echoed a second time is a pipeline fault too.
pub fn findings_from_verdicts(verdicts: &[VerdictEntry]) -> Vec<Finding> {
    let mut seen: HashSet<&str> = HashSet::new();
    verdicts
        .iter()
        .map(|v| {
            let mut entry = v.clone();
            let id = match v.echo_id.as_deref().filter(|s| !s.trim().is_empty()) {
                Some(id) if seen.contains(id) => {
                    entry.fault(&format!("id {id} echoed more than once"));
                    id.to_owned()
                }
                Some(id) => {
                    seen.insert(id);
                    id.to_owned()
                }
                None => {
                    entry.fault("no id echoed");
                    format!("#{}", v.position + 1)
                }
            };
            Finding {
                id,
                severity: String::new(),
                path: String::new(),
                lines: String::new(),
                claim: String::new(),
                verdict: entry.verdict,
                evidence: entry.evidence,
                note: entry.note,
                extra: Extra::new(),
            }
        })
        .collect()
}

fn empty_entry(position: usize) -> VerdictEntry {
    VerdictEntry {
        position,
        line: 0,
        column: 0,
        echo_id: None,
        verdict: FindingVerdict::Unverifiable,
        evidence: String::new(),
        note: String::new(),
    }
}

/// Fields of a finding that the verified [`Finding`] sets itself.
const OWN_FIELDS: [&str; 8] = [
    "id", "severity", "path", "lines", "claim", "verdict", "evidence", "note",
];

fn review_finding(item: Value) -> Result<ReviewFinding, String> {
    let Value::Object(obj) = item else {
        return Err(format!("found {}; expected an object", kind_of(&item)));
    };
    let id = match obj.get("id") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(v) => return Err(format!("id is {}; expected a non-empty string", kind_of(v))),
        None => return Err("no id; expected a non-empty string".to_owned()),
    };
    let lines = match obj.get("lines") {
        Some(Value::Number(n)) => n.to_string(),
        _ => text(&obj, "lines")?,
    };
    Ok(ReviewFinding {
        severity: text(&obj, "severity")?,
        path: text(&obj, "path")?,
        claim: text(&obj, "claim")?,
        id,
        lines,
        extra: obj
            .iter()
            .filter(|(k, _)| !OWN_FIELDS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    })
}

/// A string field (absent or null: empty).
fn text(obj: &Map<String, Value>, key: &str) -> Result<String, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(v) => Err(format!("{key} is {}; expected a string", kind_of(v))),
    }
}

#[cfg(test)]
#[path = "findings_tests.rs"]
mod tests;
