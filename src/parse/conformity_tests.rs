//! Unit tests of the GATE 1 reader.

use super::*;
use crate::model::Verdict;
use crate::parse::tests::scope;

const CONFORME: &str = "\
Some preamble the agent wrote.
VERIFY — VERDICT: CONFORME
CONTRACT: contracts/sample.md
CRITERIA:
  1. Widgets render — in two columns — MET — shown in ui/grid.rs:10
  2. Quit key works — MET
SCOPE: in-scope 2 files; out-of-scope: none
FLOOR: clean
PROOF: read 2 files
";

fn parse(s: &str) -> Result<GateOutput, Structural> {
    parse_conformity("v.txt", s.as_bytes())
}

fn criteria(out: &GateOutput) -> Vec<(String, String, CriterionStatus, String)> {
    out.rows
        .iter()
        .filter_map(|r| match r {
            GateRow::Criterion(c) => {
                Some((c.id.clone(), c.text.clone(), c.status, c.detail.clone()))
            }
            _ => None,
        })
        .collect()
}

fn failure(s: &str) -> (StructuralKind, Option<usize>, String) {
    let e = parse(s).unwrap_err();
    (e.kind, e.line, e.message)
}

#[test]
fn conforme_reads_every_section_and_splits_on_first_status() {
    let out = parse(CONFORME).unwrap();
    assert_eq!(out.verdict, Verdict::bare(VerdictKind::Conforme));
    assert_eq!(out.contract.as_deref(), Some("contracts/sample.md"));
    assert_eq!(
        criteria(&out),
        vec![
            (
                "1".into(),
                "Widgets render — in two columns".into(),
                CriterionStatus::Met,
                "shown in ui/grid.rs:10".into()
            ),
            (
                "2".into(),
                "Quit key works".into(),
                CriterionStatus::Met,
                String::new()
            ),
        ]
    );
    assert_eq!(out.scope, scope(2, &[]));
    assert_eq!(out.floor.as_deref(), Some("clean"));
    assert_eq!(out.proof.as_deref(), Some("read 2 files"));
}

#[test]
fn detail_keeps_double_hyphens_and_status_words() {
    let s = "VERIFY -- VERDICT: ECARTS(1)\nCRITERIA:\n  3. Runs `t -- --x` -- NOT-MET -- MET only when run with -- flags\nSCOPE: in-scope 1 file; out-of-scope: none\n";
    let out = parse(s).unwrap();
    assert_eq!(
        criteria(&out),
        vec![(
            "3".into(),
            "Runs `t -- --x`".into(),
            CriterionStatus::NotMet,
            "MET only when run with -- flags".into()
        )]
    );
}

#[test]
fn out_of_scope_list_is_split_on_commas() {
    let s = "VERIFY — VERDICT: ECARTS(2)\nSCOPE: in-scope 4 files; out-of-scope: a.lock, b/c.rs\n";
    let out = parse(s).unwrap();
    assert_eq!(out.scope, scope(4, &["a.lock", "b/c.rs"]));
}

#[test]
fn error_verdict_needs_no_body() {
    let out = parse("VERIFY — VERDICT: ERROR(no diff given)").unwrap();
    assert_eq!(out.verdict.reason.as_deref(), Some("no diff given"));
    assert!(out.rows.is_empty());
}

#[test]
fn conforme_without_proof_or_floor() {
    let no_proof = CONFORME.replace("PROOF: read 2 files\n", "");
    assert_eq!(
        failure(&no_proof),
        (
            StructuralKind::ConformeWithoutProof,
            Some(2),
            "CONFORME without a PROOF line; expected `PROOF: <text>` after the verdict".into()
        )
    );
    let empty_floor = CONFORME.replace("FLOOR: clean", "FLOOR:");
    assert_eq!(
        failure(&empty_floor),
        (
            StructuralKind::ConformeWithoutFloor,
            Some(8),
            "CONFORME with an empty FLOOR line; expected `FLOOR: <text>`".into()
        )
    );
}

#[test]
fn conforme_must_be_clean() {
    let s = CONFORME.replace(
        "Quit key works — MET",
        "Quit key works — UNVERIFIABLE — no tty",
    );
    assert_eq!(
        failure(&s),
        (
            StructuralKind::ConformeNotClean,
            Some(6),
            "CONFORME but criterion 2 is UNVERIFIABLE; expected every criterion MET (or ECARTS/ABANDONED)".into()
        )
    );
    let s = CONFORME.replace("out-of-scope: none", "out-of-scope: Cargo.lock");
    let e = parse(&s).unwrap_err();
    assert_eq!(
        (e.kind, e.line),
        (StructuralKind::ConformeNotClean, Some(7))
    );
    assert_eq!(e.partial.map(|p| p.rows.len()), Some(2));
}

#[test]
fn counts_must_agree_with_rows() {
    let s = "VERIFY — VERDICT: ECARTS(3)\nCRITERIA:\n  1. a — NOT-MET — x\n  2. b — UNVERIFIABLE — y\nSCOPE: in-scope 1 file; out-of-scope: none\n";
    assert_eq!(
        failure(s),
        (
            StructuralKind::CountMismatch,
            Some(1),
            "ECARTS(3) but the rows give 2 gaps (1 NOT-MET, 1 UNVERIFIABLE, 0 out-of-scope files); expected ECARTS(n) with n the sum, at least 1".into()
        )
    );
    assert!(parse(&s.replace("ECARTS(3)", "ECARTS(2)")).is_ok());
    assert_eq!(
        failure("VERIFY — VERDICT: ECARTS(0)\n").0,
        StructuralKind::CountMismatch
    );
    let s = "VERIFY — VERDICT: ABANDONED(2)\nCRITERIA:\n  1. a — ABANDONED — impossible\n";
    assert_eq!(
        failure(s),
        (
            StructuralKind::CountMismatch,
            Some(1),
            "ABANDONED(2) but the rows hold 1 ABANDONED row; expected ABANDONED(n) with n the number of ABANDONED rows, at least 1".into()
        )
    );
    assert!(parse(&s.replace("ABANDONED(2)", "ABANDONED(1)")).is_ok());
}

#[test]
fn body_lines_must_fit_a_section() {
    let s = format!("{CONFORME}Thanks, all done!\n");
    assert_eq!(
        failure(&s),
        (
            StructuralKind::UnknownLine,
            Some(10),
            "`Thanks, all done!` fits no section; expected CONTRACT:, CRITERIA:, a criterion row `<id>. <text> — <MET|NOT-MET|UNVERIFIABLE|ABANDONED> — <detail>`, SCOPE:, FLOOR: or PROOF:".into()
        )
    );
    let s = CONFORME.replace("  2. Quit key works — MET", "  2. Quit key works — DONE");
    assert_eq!(
        failure(&s),
        (
            StructuralKind::MalformedRow,
            Some(6),
            "malformed criterion row: no ` — <MET|NOT-MET|UNVERIFIABLE|ABANDONED>` status; expected `<id>. <text> — <MET|NOT-MET|UNVERIFIABLE|ABANDONED> — <detail>`".into()
        )
    );
    let s = CONFORME.replace("  2. Quit key works", "  2.");
    assert_eq!(failure(&s).0, StructuralKind::MalformedRow);
    let s = CONFORME.replace("  2. Quit", "  - Quit");
    assert_eq!(failure(&s).0, StructuralKind::MalformedRow);
    let s = CONFORME.replace("FLOOR: clean\n", "FLOOR: clean\nFLOOR: again\n");
    assert_eq!(
        failure(&s),
        (
            StructuralKind::DuplicateSection,
            Some(9),
            "second `FLOOR:` line (the first is line 8); expected one".into()
        )
    );
    let s = CONFORME.replace("out-of-scope: none", "out-of-scope none");
    assert_eq!(failure(&s).0, StructuralKind::MalformedField);
    let s = CONFORME.replace("CRITERIA:", "CRITERIA: 1. x");
    assert_eq!(failure(&s).0, StructuralKind::MalformedField);
}

#[test]
fn rows_outside_criteria_are_unknown_lines() {
    let s = "VERIFY — VERDICT: ECARTS(1)\n  1. a — NOT-MET — x\n";
    assert_eq!(failure(s).0, StructuralKind::UnknownLine);
}

#[test]
fn verdict_failures() {
    assert_eq!(
        failure("all good\n"),
        (
            StructuralKind::NoVerdict,
            None,
            "no `VERIFY — VERDICT:` line; expected one with CONFORME, ECARTS(n), ABANDONED(n) or ERROR(<reason>)".into()
        )
    );
    assert_eq!(
        failure("VERIFY — VERDICT: CONFORMANT\n"),
        (
            StructuralKind::UnknownVerdict,
            Some(1),
            "unknown verdict `CONFORMANT`; expected CONFORME, ECARTS(n), ABANDONED(n) or ERROR(<reason>)".into()
        )
    );
    let e = parse_conformity("v.txt", b"VERIFY \xE2\x80\x94 VERDICT: CONFORME\n\xFF").unwrap_err();
    assert_eq!((e.kind, e.line), (StructuralKind::InvalidUtf8, Some(2)));
    assert_eq!(
        e.to_string(),
        "v.txt:2: invalid UTF-8 at byte column 1; expected the VERIFY output as UTF-8 text"
    );
}
