//! The Findings tab: severity, place, verifier verdict, verify-by-test
//! result (red tests marked) and triage bucket of each finding.

use super::marks;
use super::table::{Cell, Column, col, wide};
use crate::model::event::VerifyResult;
use crate::model::{Finding, VerifyOutcome};
use crate::tui::app::{App, Bucket};
use crate::tui::rows;
use crate::tui::theme::Tone;

/// Columns: id, severity, path:lines, verdict, verify-by-test; triage and claim when wide.
pub const COLUMNS: &[Column] = &[
    col("id", 6),
    col("severity", 8),
    col("path:lines", 0),
    col("verdict", 14),
    col("verify-by-test", 18),
    wide("triage", 10, 100),
    wide("claim", 0, 120),
];

/// The cells of finding `i` of the shown iteration.
pub fn cells(app: &App, i: usize) -> Vec<Cell> {
    let Some(it) = rows::shown(app) else {
        return Vec::new();
    };
    let Some(f) = it.findings.get(i) else {
        return Vec::new();
    };
    let sev_tone = match f.severity.as_str() {
        "blocking" => Tone::Bad,
        "major" => Tone::Warn,
        _ => Tone::Normal,
    };
    let test =
        verification(app, f).map_or_else(marks::none, |v| marks::outcome(v.result, is_red(app, f)));
    let triage = bucket(app, f).map_or_else(marks::none, marks::bucket);
    vec![
        Cell::plain(f.id.clone()),
        Cell::toned(f.severity.clone(), sev_tone),
        Cell::plain(place(f)),
        Cell::mark(&marks::finding(f.verdict)),
        Cell::mark(&test),
        Cell::mark(&triage),
        Cell::plain(f.claim.clone()),
    ]
}

/// `path:lines`, or the part that is known.
pub fn place(f: &Finding) -> String {
    match (f.path.is_empty(), f.lines.is_empty()) {
        (false, false) => format!("{}:{}", f.path, f.lines),
        (false, true) => f.path.clone(),
        _ => String::new(),
    }
}

/// The verify-by-test result of a finding, if it was attempted.
pub fn verification<'a>(app: &'a App, f: &Finding) -> Option<&'a VerifyResult> {
    rows::shown(app)?
        .verifications
        .iter()
        .find(|v| v.finding == f.id)
}

/// True when the finding's repro test is kept red.
pub fn is_red(app: &App, f: &Finding) -> bool {
    rows::shown(app)
        .and_then(|it| it.verify_by_test.as_ref())
        .is_some_and(|s| s.red_tests.iter().any(|t| t.issue == f.id))
}

/// The triage bucket, when known: recorded with the triage, from the
/// finding itself, or implied by a verify-by-test result.
pub fn bucket(app: &App, f: &Finding) -> Option<Bucket> {
    // The buckets recorded with `triage.recorded`, then the finding's own field.
    let recorded = rows::shown(app)
        .and_then(|i| i.triage.as_ref())
        .and_then(|t| t.buckets.as_ref())
        .and_then(|b| b.bucket_of(&f.id));
    let named = recorded.or_else(|| {
        ["bucket", "triage"]
            .iter()
            .find_map(|k| f.extra.get(*k).and_then(|v| v.as_str()))
    });
    match named {
        Some("accepted") => return Some(Bucket::Accepted),
        Some("deferred") => return Some(Bucket::Deferred),
        Some("rejected") => return Some(Bucket::Rejected),
        _ => {}
    }
    match verification(app, f).map(|v| v.result) {
        Some(VerifyOutcome::NotReproduced) => Some(Bucket::Deferred),
        Some(VerifyOutcome::Confirmed | VerifyOutcome::Inconclusive) => Some(Bucket::Accepted),
        _ => None,
    }
}
