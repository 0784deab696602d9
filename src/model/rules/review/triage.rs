//! The triage file of an iteration without `[agents.triage]`, and the
//! check of one a triage agent wrote.

use super::triage_severity;
use crate::model::rules::one_line;
use crate::model::types::*;

/// The triage entry of a finding.
fn entry(f: &Finding, reason: Option<String>) -> crate::model::triage::TriageFinding {
    crate::model::triage::TriageFinding {
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
    }
}

/// Puts every finding raised again (the finding ledger) in the bucket of
/// its earlier outcome, its sentence as the reason: rejected when it was
/// dismissed or found FALSE, the earlier bucket when the triage left it
/// as it is. Never accepted: it never goes to the developer again.
pub fn place_raised_again(t: &mut crate::model::triage::Triage, findings: &[Finding]) {
    for f in findings {
        let Some(r) = crate::model::ledger::raised_again_of(f) else {
            continue;
        };
        let e = entry(f, Some(r.sentence()));
        match r.bucket() {
            "deferred" => t.deferred.push(e),
            _ => t.rejected.push(e),
        }
    }
}

/// The triage an iteration gets without `[agents.triage]`: VERIFIED →
/// accepted with the reviewer's severity, FALSE → rejected (`finding
/// verifier: FALSE`), UNVERIFIABLE → deferred with its note; a finding
/// raised again goes where [`place_raised_again`] puts it.
pub fn derive_triage(iteration: u32, findings: &[Finding]) -> crate::model::triage::Triage {
    use crate::model::triage::{SchemaVersion, Triage};
    let mut t = Triage {
        schema_version: SchemaVersion,
        iteration,
        accepted: Vec::new(),
        deferred: Vec::new(),
        rejected: Vec::new(),
        extra: Default::default(),
    };
    for f in findings
        .iter()
        .filter(|f| crate::model::ledger::raised_again_of(f).is_none())
    {
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
    place_raised_again(&mut t, findings);
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
