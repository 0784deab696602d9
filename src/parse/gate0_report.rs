//! A GATE 0 report printed by another floor implementation.
//!
//! ```text
//! GATES — <file> (<mode>)
//!   <id> <STATE> <text>              (printf '  %-3s %-13s %s')
//!   ABANDONED <id> — <reason>
//!   ERROR <message>
//! RUNNABLE: <k> of <n> criteria; timeout <T>s
//! GATES — VERDICT: MET | UNMET(n) | PENDING(n) | ABANDONED(n) | ERROR(n) | ERROR(<reason>)
//! ```
//!
//! Lines before the `GATES — <file> (<mode>)` header are ignored (without a
//! header, every line before the verdict must be part of the report); after
//! the verdict only blank lines may follow. The verdict must be the one the
//! rows give, in the floor's order: ERROR(n) counts ERROR lines, then
//! UNMET(n) NOT-MET rows, PENDING(n) PENDING rows, ABANDONED(n) ABANDONED
//! rows, else MET. `ERROR(<reason>)` is taken as printed.

use std::sync::LazyLock;

use regex::Regex;

use super::GateOutput;
use super::body::{once, skeleton};
use super::error::{Structural, StructuralKind};
use super::lines::Line;
use crate::model::{FloorRow, FloorState, GateName, GateRow, Verdict, VerdictKind};
use crate::util::count;

/// Everything a GATE 0 report says.
#[derive(Debug, Clone, PartialEq)]
pub struct FloorReport {
    /// The contract path of the header, when there is a header.
    pub contract: Option<String>,
    /// `run` or `status`, as printed in the header.
    pub mode: Option<String>,
    /// One row per criterion (evidence is not printed in a report: empty).
    pub rows: Vec<FloorRow>,
    /// The `ABANDONED <id> — <reason>` lines.
    pub handoffs: Vec<Handoff>,
    /// The `ERROR <message>` lines.
    pub errors: Vec<String>,
    /// The RUNNABLE line.
    pub runnable: Option<Runnable>,
    /// The VERDICT line.
    pub verdict: Verdict,
}

/// An `ABANDONED <id> — <reason>` line: a criterion handed off as impossible.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handoff {
    /// The criterion id.
    pub id: String,
    /// Why it was abandoned.
    pub reason: String,
}

/// `RUNNABLE: <k> of <n> criteria; timeout <T>s`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Runnable {
    /// Criteria with a CHECK.
    pub runnable: u32,
    /// All criteria.
    pub total: u32,
    /// The per-check timeout, in seconds.
    pub timeout_secs: u64,
}

impl FloorReport {
    /// The `gate.finished`-shaped view of this report (floor rows, verdict,
    /// contract).
    pub fn to_gate_output(&self) -> GateOutput {
        let mut out = GateOutput::new(GateName::Floor, self.verdict.clone());
        out.rows = self.rows.iter().cloned().map(GateRow::Floor).collect();
        out.contract = self.contract.clone();
        out
    }
}

/// Reads a GATE 0 report named `input`. A structural error carries the
/// report read so far as a [`GateOutput`].
pub fn parse_gate0_report(input: &str, text: &[u8]) -> Result<FloorReport, Structural> {
    let sk = skeleton(input, GateName::Floor, text)?;
    let before = sk.lines.get(..sk.verdict_line.index).unwrap_or_default();
    let header = before.iter().rposition(|l| HEADER.is_match(l.text));
    let mut report = FloorReport {
        contract: None,
        mode: None,
        rows: Vec::new(),
        handoffs: Vec::new(),
        errors: Vec::new(),
        runnable: None,
        verdict: sk.output.verdict.clone(),
    };
    let body = match header.and_then(|i| before.get(i).map(|l| (i, l))) {
        Some((i, line)) => {
            if let Some(c) = HEADER.captures(line.text) {
                report.contract = c.get(1).map(|m| m.as_str().to_owned());
                report.mode = c.get(2).map(|m| m.as_str().to_owned());
            }
            before.get(i + 1..).unwrap_or_default()
        }
        None => before,
    };
    let mut seen_runnable = None;
    let result = body
        .iter()
        .try_for_each(|line| read_line(input, line, &mut report, &mut seen_runnable))
        .and_then(|()| trailing(input, sk.body()))
        .and_then(|()| check(input, &report, sk.verdict_line.number));
    match result {
        Ok(()) => Ok(report),
        Err(e) => Err(e.with_partial(report.to_gate_output())),
    }
}

static HEADER: LazyLock<Regex> =
    static_regex!(r"^GATES[ \t]*(?:—|--)[ \t]*(.+?)[ \t]+\(([^()]+)\)$");

static ROW: LazyLock<Regex> = static_regex!(
    r"^[ \t]+([0-9]+)[ \t]+(MET-RECORDED|NOT-MET|MET|MANUAL|ABANDONED|PENDING)(?:[ \t]+(.*))?$"
);

static ROW_LIKE: LazyLock<Regex> = static_regex!(r"^[ \t]+[0-9]+(?:[ \t]|$)");

static HANDOFF: LazyLock<Regex> =
    static_regex!(r"^[ \t]+ABANDONED[ \t]+(\S+)[ \t]+(?:—|--)(?:[ \t]+(.*))?$");

static ERROR_LINE: LazyLock<Regex> = static_regex!(r"^[ \t]+ERROR(?:[ \t]+(.*))?$");

static RUNNABLE: LazyLock<Regex> = static_regex!(
    r"^RUNNABLE:[ \t]*([0-9]+)[ \t]+of[ \t]+([0-9]+)[ \t]+criteria;[ \t]*timeout[ \t]+([0-9]+)s$"
);

const ROW_SHAPE: &str = "`  <id> <MET|NOT-MET|MANUAL|ABANDONED|MET-RECORDED|PENDING> <text>`";

fn read_line(
    input: &str,
    line: &Line<'_>,
    report: &mut FloorReport,
    seen_runnable: &mut Option<usize>,
) -> Result<(), Structural> {
    let t = line.text;
    let err = |kind, message: String| Structural::new(input, kind, Some(line.number), message);
    if line.is_blank() {
        return Ok(());
    }
    if let Some(c) = ROW.captures(t) {
        let state = match c.get(2).map_or("", |m| m.as_str()) {
            "MET" => FloorState::Met,
            "NOT-MET" => FloorState::NotMet,
            "MANUAL" => FloorState::Manual,
            "ABANDONED" => FloorState::Abandoned,
            "MET-RECORDED" => FloorState::MetRecorded,
            _ => FloorState::Pending,
        };
        report.rows.push(FloorRow {
            id: c.get(1).map_or("", |m| m.as_str()).to_owned(),
            state,
            text: c.get(3).map_or("", |m| m.as_str()).to_owned(),
            evidence: String::new(),
        });
    } else if let Some(c) = HANDOFF.captures(t) {
        let reason = c.get(2).map_or("", |m| m.as_str().trim());
        if reason.is_empty() {
            return Err(err(
                StructuralKind::MalformedRow,
                "ABANDONED line without a reason; expected `  ABANDONED <id> — <reason>`".into(),
            ));
        }
        report.handoffs.push(Handoff {
            id: c.get(1).map_or("", |m| m.as_str()).to_owned(),
            reason: reason.to_owned(),
        });
    } else if let Some(c) = ERROR_LINE.captures(t) {
        report
            .errors
            .push(c.get(1).map_or("", |m| m.as_str()).to_owned());
    } else if t.starts_with("RUNNABLE:") {
        once(input, seen_runnable, line, "RUNNABLE")?;
        let parsed = RUNNABLE.captures(t).and_then(|c| {
            Some(Runnable {
                runnable: c.get(1)?.as_str().parse().ok()?,
                total: c.get(2)?.as_str().parse().ok()?,
                timeout_secs: c.get(3)?.as_str().parse().ok()?,
            })
        });
        report.runnable = Some(parsed.ok_or_else(|| {
            err(
                StructuralKind::MalformedField,
                format!("malformed `{t}`; expected `RUNNABLE: <k> of <n> criteria; timeout <T>s`"),
            )
        })?);
    } else if ROW_LIKE.is_match(t) {
        return Err(err(
            StructuralKind::MalformedRow,
            format!(
                "malformed criterion row `{}`; expected {ROW_SHAPE}",
                t.trim()
            ),
        ));
    } else {
        return Err(err(
            StructuralKind::UnknownLine,
            format!(
                "`{t}` is not part of a GATE 0 report; expected a row {ROW_SHAPE}, `  ABANDONED <id> — <reason>`, `  ERROR <message>` or `RUNNABLE: …`"
            ),
        ));
    }
    Ok(())
}

/// Only blank lines may follow the verdict.
fn trailing(input: &str, after: &[Line<'_>]) -> Result<(), Structural> {
    match after.iter().find(|l| !l.is_blank()) {
        None => Ok(()),
        Some(l) => Err(Structural::new(
            input,
            StructuralKind::UnknownLine,
            Some(l.number),
            format!(
                "`{}` after the verdict; expected the `GATES — VERDICT:` line to be last",
                l.text
            ),
        )),
    }
}

/// The printed verdict must be the one the rows give.
fn check(input: &str, report: &FloorReport, verdict_line: usize) -> Result<(), Structural> {
    let printed = &report.verdict;
    if printed.kind == VerdictKind::Error && printed.n.is_none() {
        return Ok(());
    }
    let n_of = |s: FloorState| report.rows.iter().filter(|r| r.state == s).count();
    let counted = |kind, n: usize| Verdict::counted(kind, u32::try_from(n).unwrap_or(u32::MAX));
    let errors = report.errors.len();
    let expected = if errors > 0 {
        counted(VerdictKind::Error, errors)
    } else if n_of(FloorState::NotMet) > 0 {
        counted(VerdictKind::Unmet, n_of(FloorState::NotMet))
    } else if n_of(FloorState::Pending) > 0 {
        counted(VerdictKind::Pending, n_of(FloorState::Pending))
    } else if n_of(FloorState::Abandoned) > 0 {
        counted(VerdictKind::Abandoned, n_of(FloorState::Abandoned))
    } else {
        Verdict::bare(VerdictKind::Met)
    };
    if *printed == expected {
        return Ok(());
    }
    Err(Structural::new(
        input,
        StructuralKind::CountMismatch,
        Some(verdict_line),
        format!(
            "{printed} but the report holds {}, {}, {}, {} and {}; expected {expected}",
            count(errors, "ERROR line"),
            count(n_of(FloorState::NotMet), "NOT-MET row"),
            count(n_of(FloorState::Pending), "PENDING row"),
            count(n_of(FloorState::Abandoned), "ABANDONED row"),
            count(
                n_of(FloorState::Met) + n_of(FloorState::MetRecorded),
                "MET row"
            ),
        ),
    ))
}

#[cfg(test)]
#[path = "gate0_report_tests.rs"]
mod tests;
