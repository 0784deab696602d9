//! The Findings tab: severity, place, verifier verdict, verify-by-test
//! result (red tests marked) and triage bucket of each finding.

use super::cells::{Cell, Column, col, wide};
use super::marks;
use crate::model::event::VerifyResult;
use crate::model::{Bucket, Finding};
use crate::tui::app::App;
use crate::tui::rows;
use crate::tui::tone::Tone;

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

/// The verify-by-test result of a finding of the shown iteration, if it was attempted.
pub fn verification<'a>(app: &'a App, f: &Finding) -> Option<&'a VerifyResult> {
    rows::shown(app)?.verification_of(&f.id)
}

/// True when the finding's repro test is kept red.
pub fn is_red(app: &App, f: &Finding) -> bool {
    rows::shown(app).is_some_and(|it| it.is_red(&f.id))
}

/// The triage bucket of a finding of the shown iteration, when known.
pub fn bucket(app: &App, f: &Finding) -> Option<Bucket> {
    rows::shown(app)?.bucket_of(f)
}
