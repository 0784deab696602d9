//! Unit tests of the GATE 0 report reader.

use super::*;

const RUN: &str = "\
$ floor run
GATES — docs/c.md (run)
  1   MET           Builds cleanly.
  2   NOT-MET       Lints — all of them.
  3   MANUAL
  12  ABANDONED     Runs on the cluster.
  ABANDONED 12 — no cluster in CI
RUNNABLE: 2 of 4 criteria; timeout 90s
GATES — VERDICT: UNMET(1)
";

fn parse(s: &str) -> Result<FloorReport, Structural> {
    parse_gate0_report("g.txt", s.as_bytes())
}

fn failure(s: &str) -> (StructuralKind, Option<usize>, String) {
    let e = parse(s).unwrap_err();
    (e.kind, e.line, e.message)
}

fn row(id: &str, state: FloorState, text: &str) -> FloorRow {
    FloorRow {
        id: id.into(),
        state,
        text: text.into(),
        evidence: String::new(),
    }
}

#[test]
fn run_report_reads_rows_handoffs_runnable_and_verdict() {
    let r = parse(RUN).unwrap();
    assert_eq!(r.contract.as_deref(), Some("docs/c.md"));
    assert_eq!(r.mode.as_deref(), Some("run"));
    assert_eq!(
        r.rows,
        vec![
            row("1", FloorState::Met, "Builds cleanly."),
            row("2", FloorState::NotMet, "Lints — all of them."),
            row("3", FloorState::Manual, ""),
            row("12", FloorState::Abandoned, "Runs on the cluster."),
        ]
    );
    assert_eq!(
        r.handoffs,
        vec![Handoff {
            id: "12".into(),
            reason: "no cluster in CI".into()
        }]
    );
    assert_eq!(
        r.runnable,
        Some(Runnable {
            runnable: 2,
            total: 4,
            timeout_secs: 90
        })
    );
    assert_eq!(r.verdict, Verdict::counted(VerdictKind::Unmet, 1));
    let out = r.to_gate_output();
    assert_eq!((out.gate, out.rows.len()), (GateName::Floor, 4));
}

#[test]
fn status_and_error_reports() {
    let s = "GATES -- c.md (status)\n  1   MET-RECORDED  a\n  2   PENDING       b\nGATES -- VERDICT: PENDING(1)\n";
    let r = parse(s).unwrap();
    assert_eq!(r.rows[0].state, FloorState::MetRecorded);
    assert_eq!(r.verdict, Verdict::counted(VerdictKind::Pending, 1));

    let s = "GATES — c.md (run)\n  ERROR duplicate id 2\n  ERROR CHECK without EXPECT in 3\nGATES — VERDICT: ERROR(2)\n";
    let r = parse(s).unwrap();
    assert_eq!(
        r.errors,
        vec![
            "duplicate id 2".to_string(),
            "CHECK without EXPECT in 3".into()
        ]
    );

    let r = parse("GATES — VERDICT: ERROR(contract not found: x.md)\n").unwrap();
    assert_eq!(
        r.verdict.reason.as_deref(),
        Some("contract not found: x.md")
    );
    assert_eq!(r.contract, None);
}

#[test]
fn verdict_must_be_the_one_the_rows_give() {
    assert_eq!(
        failure(&RUN.replace("UNMET(1)", "MET")),
        (
            StructuralKind::CountMismatch,
            Some(9),
            "MET but the report holds 0 ERROR lines, 1 NOT-MET row, 0 PENDING rows, 1 ABANDONED row and 1 MET row; expected UNMET(1)".into()
        )
    );
    assert_eq!(
        failure(&RUN.replace("UNMET(1)", "UNMET(2)")).0,
        StructuralKind::CountMismatch
    );
    let abandoned_only = RUN.replace("NOT-MET  ", "MET      ");
    assert_eq!(
        failure(&abandoned_only).2,
        "UNMET(1) but the report holds 0 ERROR lines, 0 NOT-MET rows, 0 PENDING rows, 1 ABANDONED row and 2 MET rows; expected ABANDONED(1)"
    );
    assert!(parse(&abandoned_only.replace("UNMET(1)", "ABANDONED(1)")).is_ok());
}

#[test]
fn malformed_lines() {
    let s = RUN.replace("  3   MANUAL", "  3   SKIPPED  x");
    assert_eq!(
        failure(&s),
        (
            StructuralKind::MalformedRow,
            Some(5),
            "malformed criterion row `3   SKIPPED  x`; expected `  <id> <MET|NOT-MET|MANUAL|ABANDONED|MET-RECORDED|PENDING> <text>`".into()
        )
    );
    let s = RUN.replace("— no cluster in CI", "—");
    assert_eq!(failure(&s).0, StructuralKind::MalformedRow);
    let s = RUN.replace("timeout 90s", "timeout soon");
    assert_eq!(failure(&s).0, StructuralKind::MalformedField);
    let s = RUN.replace("RUNNABLE", "Some prose\nRUNNABLE");
    assert_eq!(failure(&s).0, StructuralKind::UnknownLine);
    let s = format!("{RUN}trailing words\n");
    assert_eq!(
        failure(&s),
        (
            StructuralKind::UnknownLine,
            Some(10),
            "`trailing words` after the verdict; expected the `GATES — VERDICT:` line to be last"
                .into()
        )
    );
    let s = RUN.replace(
        "RUNNABLE: 2",
        "RUNNABLE: 2 of 4 criteria; timeout 90s\nRUNNABLE: 2",
    );
    assert_eq!(failure(&s).0, StructuralKind::DuplicateSection);
    let e = parse(&RUN.replace("UNMET(1)", "UNMET")).unwrap_err();
    assert_eq!(e.kind, StructuralKind::UnknownVerdict);
}

#[test]
fn without_header_every_line_counts() {
    let s = "prose\n  1   MET  a\nGATES — VERDICT: MET\n";
    assert_eq!(failure(s).0, StructuralKind::UnknownLine);
    assert!(parse("  1   MET  a\nGATES — VERDICT: MET\n").is_ok());
}
