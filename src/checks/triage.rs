//! triage apply: verify-by-test results into a triage file.
//!
//! `confirmed` keeps the finding accepted and its test joins `redTests`;
//! `not-reproduced` moves it to deferred, but only when the evidence gate
//! proves from the log that the repro test ran and passed (otherwise it is
//! recorded as `inconclusive` with the gate's reason); `inconclusive` keeps
//! it accepted. Candidates past `maxFindings` (accepted blocking findings and
//! any finding with a result, in accepted order) keep their judgement as
//! `cap-exceeded`. Nothing is ever rejected. The file is re-validated by a
//! serde round trip and replaced atomically.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use crate::checks::evidence_gate::{self, Claim, ClaimStatus, Verdict};
use crate::model::event::{VerifyResult, VerifySummary};
use crate::model::triage::{
    AttemptResult, EvidenceGateStatus, Triage, TriageSeverity, Verification, VerificationEntry,
    VerificationReport,
};
use crate::model::types::{RedTest, VerifyOutcome};

/// What applying a verification report produced.
#[derive(Debug, Clone, PartialEq)]
pub struct ApplyOutcome {
    /// The triage file after the change.
    pub triage: Triage,
    /// One result per finding recorded, in accepted order.
    pub results: Vec<VerifyResult>,
    /// The iteration's verify-by-test summary.
    pub summary: VerifySummary,
}

/// Why a triage file could not be updated (it is then left as it was).
#[derive(Debug, thiserror::Error)]
pub enum TriageError {
    /// A file could not be read or written.
    #[error("cannot {op} {}: {source}", path.display())]
    Io {
        /// read or write.
        op: &'static str,
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A file is not what its format expects.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What was expected.
        message: String,
    },
    /// A result names a finding that is not accepted.
    #[error("finding {finding} is not in accepted{}", bucket.map(|b| format!(" (it is {b})")).unwrap_or_default())]
    NotAccepted {
        /// The finding id.
        finding: String,
        /// The bucket it is in, if any.
        bucket: Option<&'static str>,
    },
    /// Two results name the same finding.
    #[error("finding {0} has more than one result")]
    Duplicate(String),
    /// The changed triage no longer reads back as a 3.2.0 file.
    #[error("the updated triage does not validate: {0}")]
    Invalid(String),
}

/// Applies `--verification` to the triage file at `triage_path` and
/// replaces it atomically. Logs are looked up in the triage file's folder,
/// then in `pipeline` when given.
pub fn apply_files(
    triage_path: &Path,
    verification_path: &Path,
    pipeline: Option<&Path>,
) -> Result<ApplyOutcome, TriageError> {
    let triage: Triage = parse(triage_path)?;
    let report: VerificationReport = parse(verification_path)?;
    let mut roots = vec![
        triage_path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf(),
    ];
    roots.extend(pipeline.map(Path::to_path_buf));
    let outcome = apply(triage, &report, &roots)?;
    let mut bytes = serde_json::to_vec_pretty(&outcome.triage)
        .map_err(|e| TriageError::Invalid(e.to_string()))?;
    bytes.push(b'\n');
    let back: Triage =
        serde_json::from_slice(&bytes).map_err(|e| TriageError::Invalid(e.to_string()))?;
    if back != outcome.triage {
        return Err(TriageError::Invalid(
            "the file does not read back as written".into(),
        ));
    }
    crate::util::replace_atomically(triage_path, &bytes).map_err(|source| TriageError::Io {
        op: "write",
        path: triage_path.to_path_buf(),
        source,
    })?;
    Ok(outcome)
}

/// Applies a verification report to a triage value; `log_roots` are the
/// folders a relative log path may live in.
pub fn apply(
    mut triage: Triage,
    report: &VerificationReport,
    log_roots: &[PathBuf],
) -> Result<ApplyOutcome, TriageError> {
    let entries = index_entries(&triage, report)?;
    let cap = usize::try_from(report.max_findings).unwrap_or(usize::MAX);
    let mut summary = VerifySummary {
        iteration: triage.iteration,
        duration_ms: report.duration_ms,
        tokens_in: report.tokens_in,
        tokens_out: report.tokens_out,
        timed_out: report.timed_out,
        ..VerifySummary::default()
    };
    let mut results = Vec::new();
    let mut downgraded = Vec::new();
    let mut rank = 0;
    for finding in &mut triage.accepted {
        let entry = entries.get(finding.id.as_str()).copied();
        if entry.is_none() && finding.severity != TriageSeverity::Blocking {
            continue;
        }
        rank += 1;
        let verification = match entry {
            _ if rank > cap => {
                summary.cap_exceeded += 1;
                cap_exceeded(entry, report.max_findings)
            }
            None => continue, // within the cap but not attempted (timeout): judgement stands
            Some(e) => judge_entry(e, log_roots, &mut summary),
        };
        if verification.result == VerifyOutcome::NotReproduced {
            downgraded.push(finding.id.clone());
        }
        results.push(verify_result(triage.iteration, &finding.id, &verification));
        finding.verification = Some(verification);
    }
    for id in downgraded {
        if let Some(i) = triage.accepted.iter().position(|f| f.id == id) {
            let mut finding = triage.accepted.remove(i);
            let test_ref = finding
                .verification
                .as_ref()
                .map(|v| v.test_ref.as_str())
                .unwrap_or_default();
            finding.reason = Some(format!(
                "verify-by-test: not reproduced - repro test {test_ref} passed"
            ));
            triage.deferred.push(finding);
        }
    }
    Ok(ApplyOutcome {
        triage,
        results,
        summary,
    })
}

/// Each result by finding id; every one must be accepted, and only once.
fn index_entries<'a>(
    triage: &Triage,
    report: &'a VerificationReport,
) -> Result<HashMap<&'a str, &'a VerificationEntry>, TriageError> {
    let mut entries = HashMap::new();
    let (_, buckets) = triage.buckets();
    for e in &report.results {
        let bucket = buckets.bucket_of(&e.finding);
        if bucket != Some("accepted") {
            return Err(TriageError::NotAccepted {
                finding: e.finding.clone(),
                bucket,
            });
        }
        if entries.insert(e.finding.as_str(), e).is_some() {
            return Err(TriageError::Duplicate(e.finding.clone()));
        }
    }
    Ok(entries)
}

fn judge_entry(
    e: &VerificationEntry,
    roots: &[PathBuf],
    summary: &mut VerifySummary,
) -> Verification {
    summary.attempted += 1;
    let (result, note, gate) = match e.result {
        AttemptResult::Confirmed => {
            summary.confirmed += 1;
            summary.red_tests.push(RedTest {
                file: e.file.clone(),
                test_ref: e.test_ref.clone(),
                issue: e.finding.clone(),
            });
            (
                VerifyOutcome::Confirmed,
                e.note.clone(),
                EvidenceGateStatus::Skipped,
            )
        }
        AttemptResult::Inconclusive => {
            summary.inconclusive += 1;
            let note = if e.note.trim().is_empty() {
                "no cause given".to_string()
            } else {
                e.note.clone()
            };
            (
                VerifyOutcome::Inconclusive,
                note,
                EvidenceGateStatus::Skipped,
            )
        }
        AttemptResult::NotReproduced => match passing_log(e, roots) {
            Ok(()) => {
                summary.downgraded += 1;
                (
                    VerifyOutcome::NotReproduced,
                    e.note.clone(),
                    EvidenceGateStatus::Passed,
                )
            }
            Err(why) => {
                summary.inconclusive += 1;
                (
                    VerifyOutcome::Inconclusive,
                    format!("evidence gate: {why}"),
                    EvidenceGateStatus::Failed,
                )
            }
        },
    };
    Verification {
        result,
        test_ref: e.test_ref.clone(),
        file: e.file.clone(),
        log: e.log.clone(),
        note,
        evidence_gate: gate,
        extra: Default::default(),
    }
}

fn cap_exceeded(entry: Option<&VerificationEntry>, max: u32) -> Verification {
    Verification {
        result: VerifyOutcome::CapExceeded,
        test_ref: entry.map(|e| e.test_ref.clone()).unwrap_or_default(),
        file: entry.map(|e| e.file.clone()).unwrap_or_default(),
        log: entry.map(|e| e.log.clone()).unwrap_or_default(),
        note: format!("past maxFindings ({max}): judgement only"),
        evidence_gate: EvidenceGateStatus::Skipped,
        extra: Default::default(),
    }
}

/// The evidence gate on a not-reproduced result's log: Ok when it proves
/// the repro test ran and passed, otherwise why not.
fn passing_log(e: &VerificationEntry, roots: &[PathBuf]) -> Result<(), String> {
    if e.test_ref.trim().is_empty() {
        return Err("no testRef to look for in the log".into());
    }
    let path = resolve_log(&e.log, roots)?;
    let text = evidence_gate::read_log(&path).map_err(|err| err.to_string())?;
    let claim = Claim {
        status: ClaimStatus::Passed,
        test: Some(e.test_ref.clone()),
    };
    match evidence_gate::judge(&text, &claim) {
        Verdict::Proven(_) => Ok(()),
        Verdict::NotProven(r) => Err(r.to_string()),
    }
}

/// A relative log path inside one of `roots`; absolute paths, `..` and
/// symlinks leading out of the folder are refused.
fn resolve_log(log: &str, roots: &[PathBuf]) -> Result<PathBuf, String> {
    let rel = Path::new(log);
    if log.is_empty() {
        return Err("no log given".into());
    }
    if rel.is_absolute()
        || !rel
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(format!(
            "log path {log} must be relative and stay inside its folder"
        ));
    }
    for root in roots {
        let Ok(found) = root.join(rel).canonicalize() else {
            continue;
        };
        let inside = root.canonicalize().is_ok_and(|r| found.starts_with(r));
        return match inside {
            true => Ok(found),
            false => Err(format!("log {log} leads outside {}", root.display())),
        };
    }
    Err(format!("log {log} not found"))
}

fn verify_result(iteration: u32, finding: &str, v: &Verification) -> VerifyResult {
    VerifyResult {
        iteration,
        finding: finding.to_string(),
        result: v.result,
        test_ref: v.test_ref.clone(),
        file: v.file.clone(),
        log: v.log.clone(),
        note: v.note.clone(),
        evidence_gate: Some(v.evidence_gate.as_str().to_string()),
        extra: Default::default(),
    }
}

fn parse<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, TriageError> {
    let bytes = crate::util::read_regular(path, crate::util::MAX_TEXT_BYTES).map_err(|source| {
        TriageError::Io {
            op: "read",
            path: path.to_path_buf(),
            source,
        }
    })?;
    serde_json::from_slice(&bytes).map_err(|e| {
        let message = e.to_string();
        let message = message
            .rfind(" at line ")
            .map_or(message.clone(), |i| message[..i].to_string());
        TriageError::Parse {
            path: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            message,
        }
    })
}
