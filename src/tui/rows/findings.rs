//! The Findings tab: severity, place, verifier verdict, verify-by-test
//! result (red tests marked) and triage bucket of each finding. While the
//! finding verifier runs, one row per lane instead (queued, verifying with
//! its attempt, rejected once, the verdict, fault), under the stage's
//! progress (`5/8 verified`).

use super::cells::{Cell, Column, col, wide};
use super::marks;
use super::query::{self, Query};
use crate::model::event::{LaneState, VerifyResult};
use crate::model::state::Lane;
use crate::model::{Bucket, Finding, Iteration};
use crate::tui::tone::Tone;

/// Columns: id, severity, path:lines, verdict, verify-by-test, the review
/// rounds it was seen in; triage and claim when wide.
pub const COLUMNS: &[Column] = &[
    col("id", 6),
    col("severity", 8),
    col("path:lines", 0),
    col("verdict", 14),
    col("verify-by-test", 18),
    wide("seen", 7, 90),
    wide("triage", 10, 100),
    wide("claim", 0, 120),
];

/// The cells of finding `i` of the shown iteration.
pub fn cells(app: &dyn Query, i: usize) -> Vec<Cell> {
    let Some(it) = query::shown(app) else {
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
    // A finding raised again says so where its verdict goes: it was not verified again.
    let verdict = match crate::model::ledger::raised_again_of(f) {
        Some(_) => marks::raised_again(),
        None => marks::finding(f.verdict),
    };
    vec![
        Cell::plain(f.id.clone()),
        Cell::toned(f.severity.clone(), sev_tone),
        Cell::plain(place(f)),
        Cell::mark(&verdict),
        Cell::mark(&test),
        Cell::plain(seen(app, i)),
        Cell::mark(&triage),
        Cell::plain(f.claim.clone()),
    ]
}

/// The review rounds finding `i` of the shown iteration was seen in:
/// `r1 r3` (`r2` alone when only this round raised it).
pub fn seen(app: &dyn Query, i: usize) -> String {
    app.finding_rounds()
        .get(i)
        .map(|rs| {
            rs.iter()
                .map(|r| format!("r{r}"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

/// The rounds each finding of the shown iteration was seen in (the
/// finding ledger's [`seen_in`](crate::model::ledger::seen_in)).
pub fn rounds_of_shown(app: &dyn Query) -> Vec<Vec<u32>> {
    let Some(it) = query::shown(app) else {
        return Vec::new();
    };
    it.findings
        .iter()
        .map(|f| crate::model::ledger::seen_in(app.state(), it.iteration, f))
        .collect()
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
pub fn verification<'a>(app: &'a dyn Query, f: &Finding) -> Option<&'a VerifyResult> {
    query::shown(app)?.verification_of(&f.id)
}

/// True when the finding's repro test is kept red.
pub fn is_red(app: &dyn Query, f: &Finding) -> bool {
    query::shown(app).is_some_and(|it| it.is_red(&f.id))
}

/// The triage bucket of a finding of the shown iteration, when known.
pub fn bucket(app: &dyn Query, f: &Finding) -> Option<Bucket> {
    query::shown(app)?.bucket_of(f)
}

/// The lanes of an iteration whose findings are being verified (lanes
/// recorded, verdicts not yet), if it has them.
pub fn live_lanes(it: &Iteration) -> Option<&[Lane]> {
    let r = it.review.as_ref()?;
    (!r.verified && !r.lanes.is_empty()).then_some(r.lanes.as_slice())
}

/// The lane `i` of the shown iteration.
pub fn lane(app: &dyn Query, i: usize) -> Option<&Lane> {
    query::shown(app)?.review.as_ref()?.lanes.get(i)
}

/// A field of a lane's finding as text.
pub fn lane_field(l: &Lane, key: &str) -> String {
    match l.item.get(key) {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

/// The cells of lane `i`: the finding as parsed, its lane's state in the
/// verdict column.
pub fn lane_cells(app: &dyn Query, i: usize) -> Vec<Cell> {
    let Some(l) = lane(app, i) else {
        return Vec::new();
    };
    let severity = lane_field(l, "severity");
    let sev_tone = match severity.as_str() {
        "blocking" => Tone::Bad,
        "major" => Tone::Warn,
        _ => Tone::Normal,
    };
    let (path, lines) = (lane_field(l, "path"), lane_field(l, "lines"));
    let place = match (path.is_empty(), lines.is_empty()) {
        (false, false) => format!("{path}:{lines}"),
        (false, true) => path,
        _ => String::new(),
    };
    vec![
        Cell::plain(l.finding.clone()),
        Cell::toned(severity, sev_tone),
        Cell::plain(place),
        Cell::mark(&marks::lane(l)),
        Cell::mark(&marks::none()),
        Cell::plain(String::new()),
        Cell::mark(&marks::none()),
        Cell::plain(lane_field(l, "claim")),
    ]
}

/// The stage's progress while its lanes run: `finding verifier: 5/8
/// verified · 2 verifying · 1 queued · 1 rejected once · 1 fault`.
pub fn progress(it: &Iteration) -> Option<String> {
    let lanes = live_lanes(it)?;
    let count = |f: &dyn Fn(&Lane) -> bool| lanes.iter().filter(|l| f(l)).count();
    let done = count(&|l| l.state.is_final());
    let mut parts = vec![format!("finding verifier: {done}/{} verified", lanes.len())];
    for (n, what) in [
        (
            count(&|l| matches!(l.state, LaneState::Running | LaneState::Rejected)),
            "verifying",
        ),
        (count(&|l| l.state == LaneState::Queued), "queued"),
        (
            count(&|l| l.rejected_once && !l.state.is_final()),
            "rejected once",
        ),
        (count(&|l| l.state == LaneState::Fault), "fault"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    Some(parts.join(" · "))
}

#[cfg(test)]
#[path = "findings_tests.rs"]
mod tests;
