//! The triage file of an iteration without `[agents.triage]`, and the
//! check of one a triage agent wrote.

use super::triage_severity;
use crate::model::rules::one_line;
use crate::model::types::*;

/// The triage an iteration gets without `[agents.triage]`: VERIFIED →
/// accepted with the reviewer's severity, FALSE → rejected (`finding
/// verifier: FALSE`), UNVERIFIABLE → deferred with its note.
pub fn derive_triage(iteration: u32, findings: &[Finding]) -> crate::model::triage::Triage {
    use crate::model::triage::{SchemaVersion, Triage, TriageFinding};
    let entry = |f: &Finding, reason: Option<String>| TriageFinding {
        id: f.id.clone(),
        severity: triage_severity(&f.severity),
        title: one_line(&f.claim).chars().take(80).collect(),
        path: f.path.clone(),
        lines: f.lines.clone(),
        claim: f.claim.clone(),
        reviewer: f
            .extra
            .get("reviewer")
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string(),
        reason,
        verification: None,
        extra: Default::default(),
    };
    let mut t = Triage {
        schema_version: SchemaVersion,
        iteration,
        accepted: Vec::new(),
        deferred: Vec::new(),
        rejected: Vec::new(),
        extra: Default::default(),
    };
    for f in findings {
        match f.verdict {
            FindingVerdict::Verified => t.accepted.push(entry(f, None)),
            FindingVerdict::False => t
                .rejected
                .push(entry(f, Some("finding verifier: FALSE".to_string()))),
            FindingVerdict::Unverifiable => {
                let note = if f.note.trim().is_empty() {
                    "finding verifier: UNVERIFIABLE".to_string()
                } else {
                    f.note.clone()
                };
                t.deferred.push(entry(f, Some(note)));
            }
        }
    }
    t
}

/// Why a triage file written for `iteration` of `findings` cannot be kept
/// (another iteration, an unknown finding, one triaged twice or not at all).
pub fn check_triage(
    t: &crate::model::triage::Triage,
    iteration: u32,
    findings: &[Finding],
) -> Result<(), String> {
    if t.iteration != iteration {
        return Err(format!(
            "it is for iteration {}, not {iteration}",
            t.iteration
        ));
    }
    let mut seen: Vec<&str> = Vec::new();
    for e in t.accepted.iter().chain(&t.deferred).chain(&t.rejected) {
        if !findings.iter().any(|f| f.id == e.id) {
            return Err(format!(
                "it triages {}, which is not a finding of the review",
                e.id
            ));
        }
        if seen.contains(&e.id.as_str()) {
            return Err(format!("it triages {} twice", e.id));
        }
        seen.push(&e.id);
    }
    if let Some(f) = findings.iter().find(|f| !seen.contains(&f.id.as_str())) {
        return Err(format!("it leaves {} out", f.id));
    }
    Ok(())
}
