//! The GATE 0 report: rows, verdict, exit code and the printed text,
//! byte-compatible with the reference floor, plus the escaping applied when
//! the text goes to a terminal.

use std::fmt::Write as _;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::model::{FloorRow, FloorState, Verdict, VerdictKind};

use super::contract::{Contract, Criterion};
use super::evidence::CheckOutcome;
use super::{Gate0Outcome, Mode};

/// The first word of every report line that names the gate.
const TITLE: &str = "GATES —";

/// What `build` needs besides the contract.
pub(crate) struct ReportInput<'a> {
    /// Status or run.
    pub mode: Mode,
    /// The contract path as given (printed raw).
    pub path: &'a Path,
    /// The timeout as given.
    pub timeout_label: &'a str,
    /// The parsed contract.
    pub contract: &'a Contract,
    /// Per criterion, the outcome of its check when it ran.
    pub outcomes: &'a [Option<CheckOutcome>],
    /// Errors that arose while running (after a clean parse).
    pub run_errors: &'a [String],
}

/// Builds the outcome (rows, verdict, report text, exit code) of a contract
/// that has criteria.
pub(crate) fn build(input: &ReportInput<'_>) -> Gate0Outcome {
    let c = input.contract;
    let states: Vec<FloorState> = c
        .criteria
        .iter()
        .zip(input.outcomes)
        .map(|(crit, out)| row_state(c, crit, out.as_ref()))
        .collect();

    let mut out = Vec::new();
    out.extend_from_slice(format!("{TITLE} ").as_bytes());
    out.extend_from_slice(input.path.as_os_str().as_bytes());
    out.extend_from_slice(format!(" ({})\n", input.mode.as_str()).as_bytes());
    for (crit, state) in c.criteria.iter().zip(&states) {
        out.extend_from_slice(format!("  {:<3} {:<13} ", crit.id, state.as_str()).as_bytes());
        out.extend_from_slice(&crit.text);
        out.push(b'\n');
    }
    for a in &c.abandons {
        out.extend_from_slice(format!("  ABANDONED {} — ", a.id).as_bytes());
        out.extend_from_slice(&a.reason);
        out.push(b'\n');
    }
    let errors: Vec<String> = c
        .errors
        .iter()
        .map(ToString::to_string)
        .chain(input.run_errors.iter().cloned())
        .collect();
    let mut tail = String::new();
    for e in &errors {
        let _ = writeln!(tail, "  ERROR {e}");
    }
    let runnable = c.criteria.iter().filter(|k| k.is_runnable()).count();
    let _ = writeln!(
        tail,
        "RUNNABLE: {runnable} of {} criteria; timeout {}s",
        c.criteria.len(),
        input.timeout_label
    );
    let (verdict, exit_code) = verdict(input.mode, errors.len(), &states);
    let _ = writeln!(tail, "{TITLE} VERDICT: {verdict}");
    out.extend_from_slice(tail.as_bytes());

    let rows = c
        .criteria
        .iter()
        .zip(&states)
        .zip(input.outcomes)
        .map(|((crit, &state), o)| FloorRow {
            id: crit.id.clone(),
            state,
            text: crit.text_lossy().into_owned(),
            evidence: o
                .as_ref()
                .map(|o| o.evidence(input.timeout_label))
                .unwrap_or_default(),
        })
        .collect();
    Gate0Outcome {
        mode: input.mode,
        contract_path: input.path.to_path_buf(),
        rows,
        verdict,
        report: out,
        exit_code,
    }
}

/// The one-line report of a fatal error: `GATES — VERDICT: ERROR(<reason>)`.
pub fn fatal_line(reason: &[u8]) -> Vec<u8> {
    let mut line = format!("{TITLE} VERDICT: ERROR(").into_bytes();
    line.extend_from_slice(reason);
    line.extend_from_slice(b")\n");
    line
}

/// ABANDONED, MANUAL, the run result, MET-RECORDED or PENDING.
fn row_state(c: &Contract, crit: &Criterion, outcome: Option<&CheckOutcome>) -> FloorState {
    if c.abandons.iter().any(|a| a.id == crit.id) {
        FloorState::Abandoned
    } else if !crit.is_runnable() {
        FloorState::Manual
    } else if let Some(o) = outcome {
        if o.is_met() {
            FloorState::Met
        } else {
            FloorState::NotMet
        }
    } else if crit.recorded_evidence().starts_with(b"MET ") {
        FloorState::MetRecorded
    } else {
        FloorState::Pending
    }
}

/// ERROR(n), UNMET(n), PENDING(n) (status only), ABANDONED(n), MET.
fn verdict(mode: Mode, errors: usize, states: &[FloorState]) -> (Verdict, u8) {
    let count = |s: FloorState| states.iter().filter(|&&x| x == s).count();
    let n = |k: usize| u32::try_from(k).unwrap_or(u32::MAX);
    let (unmet, pending, abandoned) = (
        count(FloorState::NotMet),
        count(FloorState::Pending),
        count(FloorState::Abandoned),
    );
    if errors > 0 {
        (Verdict::counted(VerdictKind::Error, n(errors)), 2)
    } else if unmet > 0 {
        (Verdict::counted(VerdictKind::Unmet, n(unmet)), 2)
    } else if mode == Mode::Status && pending > 0 {
        (Verdict::counted(VerdictKind::Pending, n(pending)), 2)
    } else if abandoned > 0 {
        (Verdict::counted(VerdictKind::Abandoned, n(abandoned)), 3)
    } else {
        (Verdict::bare(VerdictKind::Met), 0)
    }
}

/// Makes a report safe for a terminal (see [`crate::sanitize::terminal_text`]).
pub fn escape_for_terminal(report: &[u8]) -> String {
    crate::sanitize::terminal_text(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_controls_for_terminals() {
        assert_eq!(
            escape_for_terminal(b"a\x1b[31mb\tc\r\n"),
            "a\u{241b}[31mb\u{2409}c\u{240d}\n"
        );
        assert_eq!(
            escape_for_terminal("x\u{202e}y\u{9b}".as_bytes()),
            "x<U+202E>y<U+009B>"
        );
        assert_eq!(escape_for_terminal(b"\xff\x7f"), "\u{fffd}\u{2421}");
        assert_eq!(escape_for_terminal("é — ok\n".as_bytes()), "é — ok\n");
    }

    #[test]
    fn verdict_order() {
        use FloorState::*;
        let v = |m, e, s: &[FloorState]| {
            let (v, code) = verdict(m, e, s);
            (v.to_string(), code)
        };
        assert_eq!(v(Mode::Run, 2, &[Met]), ("ERROR(2)".into(), 2));
        assert_eq!(
            v(Mode::Run, 0, &[NotMet, Abandoned, Pending]),
            ("UNMET(1)".into(), 2)
        );
        assert_eq!(
            v(Mode::Status, 0, &[Pending, Abandoned]),
            ("PENDING(1)".into(), 2)
        );
        assert_eq!(
            v(Mode::Run, 0, &[Pending, Abandoned]),
            ("ABANDONED(1)".into(), 3)
        );
        assert_eq!(
            v(Mode::Status, 0, &[MetRecorded, Manual]),
            ("MET".into(), 0)
        );
    }
}
