//! Unit tests of the GATE 2 reader.

use super::*;
use crate::model::Verdict;
use crate::parse::tests::scope;

const BLOCK: &str = "\
SECURITY — VERDICT: BLOCK(2)
TOOL: scanner 2.1 — rulesets a, b
SCOPE: 3 files
BLOCKING:
  1. [HIGH] sql.injection — src/db.rs:40 — query built by string concat — hint: bind parameters
  2. [LOW] weak.hash — src/auth.rs:7 — md5 — still used — for tokens
REPORTED (non-blocking):
  - [INFO] todo.comment — src/main.rs:1
PROOF: scanner 120 rules on 3 files
";

fn parse(s: &str) -> Result<GateOutput, Structural> {
    parse_security("s.txt", s.as_bytes())
}

fn failure(s: &str) -> (StructuralKind, Option<usize>, String) {
    let e = parse(s).unwrap_err();
    (e.kind, e.line, e.message)
}

#[test]
fn block_reads_rows_hints_and_reported() {
    let out = parse(BLOCK).unwrap();
    assert_eq!(out.verdict, Verdict::counted(VerdictKind::Block, 2));
    assert!(!out.degraded);
    assert_eq!(out.tool.as_deref(), Some("scanner 2.1 — rulesets a, b"));
    assert_eq!(out.scope, scope(3, &[]));
    assert_eq!(
        out.rows,
        vec![
            GateRow::Security(SecurityRow {
                n: 1,
                severity: "HIGH".into(),
                rule: "sql.injection".into(),
                location: "src/db.rs:40".into(),
                why: "query built by string concat".into(),
                hint: "bind parameters".into(),
            }),
            GateRow::Security(SecurityRow {
                n: 2,
                severity: "LOW".into(),
                rule: "weak.hash".into(),
                location: "src/auth.rs:7".into(),
                why: "md5 — still used — for tokens".into(),
                hint: String::new(),
            }),
        ]
    );
    assert_eq!(
        out.reported,
        vec![ReportedRow {
            severity: "INFO".into(),
            rule: "todo.comment".into(),
            location: "src/main.rs:1".into()
        }]
    );
    assert_eq!(out.proof.as_deref(), Some("scanner 120 rules on 3 files"));
}

#[test]
fn degraded_from_tool_line_or_bare_verdict() {
    let s = "SECURITY -- VERDICT: PASS\nTOOL: ABSENT (checklist only)\nBLOCKING: none\n";
    assert!(parse(s).unwrap().degraded);
    let s = "SECURITY — VERDICT: PASS\nTOOL: scanner (DEGRADED -- no rules)\n";
    assert!(parse(s).unwrap().degraded);
    let out = parse("SECURITY — VERDICT: DEGRADED\nBLOCKING:\n").unwrap();
    assert_eq!(out.verdict, Verdict::bare(VerdictKind::Degraded));
    assert!(out.degraded);
    assert!(out.tool.is_none());
}

#[test]
fn counts_must_agree_with_blocking_rows() {
    assert_eq!(
        failure(&BLOCK.replace("BLOCK(2)", "BLOCK(3)")),
        (
            StructuralKind::CountMismatch,
            Some(1),
            "BLOCK(3) with 2 BLOCKING rows; expected BLOCK(n) with n the number of BLOCKING rows, at least 1".into()
        )
    );
    assert_eq!(
        failure(&BLOCK.replace("BLOCK(2)", "PASS")),
        (
            StructuralKind::PassWithBlocking,
            Some(1),
            "PASS with 2 BLOCKING rows; expected no BLOCKING row (or BLOCK(n))".into()
        )
    );
    assert_eq!(
        failure(&BLOCK.replace("BLOCK(2)", "DEGRADED")).0,
        StructuralKind::PassWithBlocking
    );
    assert_eq!(
        failure("SECURITY — VERDICT: BLOCK(0)").0,
        StructuralKind::CountMismatch
    );
}

#[test]
fn malformed_rows_and_lines() {
    let s = BLOCK.replace(
        "  1. [HIGH] sql.injection — src/db.rs:40",
        "  1. HIGH sql.injection — src/db.rs:40",
    );
    assert_eq!(
        failure(&s),
        (
            StructuralKind::MalformedRow,
            Some(5),
            "malformed BLOCKING row: no `<n>. [<SEVERITY>]` at its start; expected `<n>. [<SEVERITY>] <rule> — <file:line> — <why> — hint: <hint>`".into()
        )
    );
    let s = BLOCK.replace("todo.comment — src/main.rs:1", "todo.comment src/main.rs:1");
    assert_eq!(
        failure(&s),
        (
            StructuralKind::MalformedRow,
            Some(8),
            "malformed REPORTED row: no ` — ` after the rule; expected `- [<SEVERITY>] <rule> — <file:line>`".into()
        )
    );
    let s = BLOCK.replace("src/main.rs:1", "src/main.rs:1 — extra");
    assert_eq!(failure(&s).0, StructuralKind::MalformedRow);
    let s = BLOCK.replace("[INFO]", "[]");
    assert_eq!(failure(&s).0, StructuralKind::MalformedRow);
    let s = BLOCK.replace("SCOPE: 3 files", "SCOPE: three files");
    assert_eq!(
        failure(&s),
        (
            StructuralKind::MalformedField,
            Some(3),
            "malformed SCOPE `three files`; expected `SCOPE: <k> files`".into()
        )
    );
    let s = format!("{BLOCK}  3. [HIGH] late.row — a:1\n");
    assert_eq!(failure(&s).0, StructuralKind::UnknownLine);
    let s = BLOCK.replace("BLOCKING:", "BLOCKING: 2 rows");
    assert_eq!(failure(&s).0, StructuralKind::MalformedField);
    let s = BLOCK.replace("PROOF:", "TOOL: again\nPROOF:");
    assert_eq!(failure(&s).0, StructuralKind::DuplicateSection);
}

#[test]
fn verdict_failures() {
    assert_eq!(
        failure("VERIFY — VERDICT: CONFORME\n"),
        (
            StructuralKind::NoVerdict,
            None,
            "no `SECURITY — VERDICT:` line; expected one with PASS, BLOCK(n), ERROR(<reason>) or DEGRADED".into()
        )
    );
    assert_eq!(
        failure("SECURITY — VERDICT: OK\n"),
        (
            StructuralKind::UnknownVerdict,
            Some(1),
            "unknown verdict `OK`; expected PASS, BLOCK(n), ERROR(<reason>) or DEGRADED".into()
        )
    );
    let out = parse("SECURITY — VERDICT: ERROR(scanner crashed)").unwrap();
    assert_eq!(out.verdict.reason.as_deref(), Some("scanner crashed"));
}
