//! Readers of agent output, driven by fixtures in tests/fixtures/parse/ (own
//! text, same formats as the real outputs) and, when it is present, by the
//! shared corpus of real outputs.

use std::path::Path;

use loopwatch::model::{
    CriterionStatus, FindingVerdict, FloorState, GateName, GateRow, ReportedRow, Scope,
    SecurityRow, Verdict, VerdictKind,
};
use loopwatch::parse::{
    GateOutput, JsonInputError, Structural, StructuralKind, VerdictEntry, findings_from_verdicts,
    match_findings, parse_conformity, parse_findings, parse_gate0_report, parse_security,
    parse_verdicts, verify_findings,
};
use proptest::prelude::*;

mod support;

fn fixture(name: &str) -> Vec<u8> {
    support::fixture(&format!("parse/{name}"))
}

fn criteria(out: &GateOutput) -> Vec<(&str, CriterionStatus)> {
    out.rows
        .iter()
        .filter_map(|r| match r {
            GateRow::Criterion(c) => Some((c.id.as_str(), c.status)),
            _ => None,
        })
        .collect()
}

/// A SCOPE line's value: `in_scope` files and the out-of-scope paths.
fn scope(in_scope: u32, out_of_scope: &[&str]) -> Option<Scope> {
    Some(Scope {
        in_scope,
        out_of_scope: out_of_scope.iter().map(|p| p.to_string()).collect(),
    })
}

/// A REPORTED (non-blocking) row.
fn reported(severity: &str, rule: &str, location: &str) -> ReportedRow {
    ReportedRow {
        severity: severity.into(),
        rule: rule.into(),
        location: location.into(),
    }
}

#[test]
fn conforme_with_preamble_and_dash_in_criterion_text() {
    let out = parse_conformity("c", &fixture("conformity-conforme.txt")).unwrap();
    assert_eq!(out.verdict, Verdict::bare(VerdictKind::Conforme));
    let GateRow::Criterion(row) = &out.rows[1] else {
        panic!("not a criterion row")
    };
    assert_eq!(row.text, "Page size is configurable — from the CLI");
    assert_eq!(row.detail, "src/pager/opts.rs:22 reads --page-size");
    let GateRow::Criterion(row) = &out.rows[2] else {
        panic!("not a criterion row")
    };
    assert_eq!(
        (row.text.as_str(), row.detail.as_str()),
        ("The footer says \"page N of M\"", "")
    );
    assert_eq!(
        out.contract.as_deref(),
        Some("docs/contracts/2030-01-05-report-pager.md")
    );
    assert_eq!(out.floor.as_deref(), Some("clean"));
    assert_eq!(
        out.proof.as_deref(),
        Some("read 4 files, ran make check-pager → ok, checked 3/3 criteria")
    );
}

#[test]
fn crlf_bom_trailing_blanks_and_double_hyphens_read_like_the_plain_file() {
    let plain = parse_conformity("e", &fixture("conformity-ecarts.txt")).unwrap();
    let mut odd = parse_conformity("e", &fixture("conformity-ecarts-crlf-bom.txt")).unwrap();
    // Read the same, and what was normalised to read it is named.
    assert_eq!(
        std::mem::take(&mut odd.normalized),
        [
            "CRLF line endings read as LF",
            "trailing blanks removed on 9 line(s)"
        ]
    );
    assert!(plain.normalized.is_empty());
    assert_eq!(odd, plain);
    assert_eq!(plain.verdict, Verdict::counted(VerdictKind::Ecarts, 3));
    assert_eq!(
        criteria(&plain),
        vec![
            ("1", CriterionStatus::Met),
            ("2", CriterionStatus::NotMet),
            ("3", CriterionStatus::Unverifiable)
        ]
    );
    assert_eq!(plain.scope, scope(4, &["Makefile"]));
}

#[test]
fn abandoned_verdict_counts_abandoned_rows() {
    let out = parse_conformity("a", &fixture("conformity-abandoned.txt")).unwrap();
    assert_eq!(out.verdict, Verdict::counted(VerdictKind::Abandoned, 1));
    assert_eq!(criteria(&out)[1], ("2", CriterionStatus::Abandoned));
}

#[test]
fn every_structural_failure_is_named_with_its_line_and_message() {
    type Parser = fn(&str, &[u8]) -> Result<GateOutput, Structural>;
    let c: Parser = parse_conformity;
    let s: Parser = parse_security;
    use StructuralKind as K;
    let cases: [(&str, Parser, K, Option<usize>, &str); 13] = [
        (
            "conformity-no-verdict.txt",
            c,
            K::NoVerdict,
            None,
            "no `VERIFY — VERDICT:` line; expected one with CONFORME, ECARTS(n), ABANDONED(n) or ERROR(<reason>)",
        ),
        (
            "conformity-two-verdicts.txt",
            c,
            K::DuplicateVerdict,
            Some(13),
            "second `VERIFY — VERDICT:` line (the first is line 3); expected exactly one",
        ),
        (
            "conformity-unknown-verdict.txt",
            c,
            K::UnknownVerdict,
            Some(3),
            "unknown verdict `CONFORM`; expected CONFORME, ECARTS(n), ABANDONED(n) or ERROR(<reason>)",
        ),
        (
            "conformity-conforme-no-proof.txt",
            c,
            K::ConformeWithoutProof,
            Some(3),
            "CONFORME without a PROOF line; expected `PROOF: <text>` after the verdict",
        ),
        (
            "conformity-conforme-no-floor.txt",
            c,
            K::ConformeWithoutFloor,
            Some(3),
            "CONFORME without a FLOOR line; expected `FLOOR: <text>` after the verdict",
        ),
        (
            "conformity-conforme-not-met.txt",
            c,
            K::ConformeNotClean,
            Some(8),
            "CONFORME but criterion 3 is NOT-MET; expected every criterion MET (or ECARTS/ABANDONED)",
        ),
        (
            "conformity-conforme-out-of-scope.txt",
            c,
            K::ConformeNotClean,
            Some(9),
            "CONFORME but `Makefile` is out of scope; expected `out-of-scope: none` (or ECARTS)",
        ),
        (
            "conformity-ecarts-count.txt",
            c,
            K::CountMismatch,
            Some(1),
            "ECARTS(2) but the rows give 3 gaps (1 NOT-MET, 1 UNVERIFIABLE, 1 out-of-scope file); expected ECARTS(n) with n the sum, at least 1",
        ),
        (
            "conformity-abandoned-count.txt",
            c,
            K::CountMismatch,
            Some(1),
            "ABANDONED(2) but the rows hold 1 ABANDONED row; expected ABANDONED(n) with n the number of ABANDONED rows, at least 1",
        ),
        (
            "conformity-unknown-line.txt",
            c,
            K::UnknownLine,
            Some(10),
            "`Let me know if you need anything else.` fits no section; expected CONTRACT:, CRITERIA:, a criterion row `<id>. <text> — <MET|NOT-MET|UNVERIFIABLE|ABANDONED> — <detail>`, SCOPE:, FLOOR: or PROOF:",
        ),
        (
            "conformity-malformed-row.txt",
            c,
            K::MalformedRow,
            Some(6),
            "malformed criterion row: no ` — <MET|NOT-MET|UNVERIFIABLE|ABANDONED>` status; expected `<id>. <text> — <MET|NOT-MET|UNVERIFIABLE|ABANDONED> — <detail>`",
        ),
        (
            "security-block-count.txt",
            s,
            K::CountMismatch,
            Some(1),
            "BLOCK(2) with 1 BLOCKING row; expected BLOCK(n) with n the number of BLOCKING rows, at least 1",
        ),
        (
            "security-pass-with-blocking.txt",
            s,
            K::PassWithBlocking,
            Some(1),
            "PASS with 1 BLOCKING row; expected no BLOCKING row (or BLOCK(n))",
        ),
    ];
    for (name, parse, kind, line, message) in cases {
        let e = parse(name, &fixture(&format!("structural/{name}"))).unwrap_err();
        assert_eq!(
            (e.kind, e.line, e.message.as_str()),
            (kind, line, message),
            "{name}"
        );
        let shown = match line {
            Some(l) => format!("{name}:{l}: {message}"),
            None => format!("{name}: {message}"),
        };
        assert_eq!(e.to_string(), shown);
    }
}

#[test]
fn structural_failure_keeps_what_was_read_for_the_journal() {
    let e = parse_conformity(
        "x.out",
        &fixture("structural/conformity-conforme-no-proof.txt"),
    )
    .unwrap_err();
    let finished = e.into_finished(
        GateName::Conformity,
        2,
        1,
        Some("gates/2-conformity-1.out".into()),
    );
    assert_eq!(finished.verdict, Verdict::bare(VerdictKind::Conforme));
    assert_eq!(finished.rows.len(), 3);
    assert_eq!(
        finished.structural.as_deref(),
        Some(
            "conforme-without-proof: line 3: CONFORME without a PROOF line; expected `PROOF: <text>` after the verdict"
        )
    );
    let e =
        parse_conformity("x.out", &fixture("structural/conformity-no-verdict.txt")).unwrap_err();
    let finished = e.into_finished(GateName::Conformity, 2, 1, None);
    assert_eq!(finished.verdict.kind, VerdictKind::Error);
    assert_eq!(finished.verdict.reason.as_deref(), Some("structural"));
    assert!(finished.rows.is_empty());
}

#[test]
fn security_block_rows_and_reported_rows() {
    let out = parse_security("s", &fixture("security-block.txt")).unwrap();
    assert_eq!(out.verdict, Verdict::counted(VerdictKind::Block, 1));
    assert!(!out.degraded);
    assert_eq!(
        out.rows,
        vec![GateRow::Security(SecurityRow {
            n: 1,
            severity: "CRITICAL".into(),
            rule: "secrets.hardcoded-token".into(),
            location: "src/net/client.rs:9".into(),
            why: "token literal — checked into git".into(),
            hint: "load it from the keyring".into(),
        })]
    );
    assert_eq!(
        out.reported,
        vec![
            reported("MEDIUM", "fs.tempfile-race", "src/cache.rs:30"),
            reported("LOW", "log.verbose", "src/main.rs:4"),
        ]
    );
    let finished = out.into_finished(1, 1, None);
    assert_eq!(
        (finished.gate, finished.reported.len()),
        (GateName::Security, 2)
    );
}

#[test]
fn degraded_security_runs() {
    let out = parse_security("s", &fixture("security-degraded-tool.txt")).unwrap();
    assert_eq!(out.verdict, Verdict::bare(VerdictKind::Pass));
    assert!(out.degraded);
    assert_eq!(
        out.tool.as_deref(),
        Some("ABSENT (DEGRADED — checklist only)")
    );
    assert!(out.rows.is_empty() && out.reported.is_empty());

    let out = parse_security("s", &fixture("security-bare-degraded.txt")).unwrap();
    assert_eq!(out.verdict, Verdict::bare(VerdictKind::Degraded));
    assert!(out.degraded);
    assert_eq!(out.scope, scope(1, &[]));
}

#[test]
fn gate0_reports() {
    let r = parse_gate0_report("g", &fixture("gate0-run.txt")).unwrap();
    assert_eq!(r.verdict, Verdict::counted(VerdictKind::Unmet, 1));
    let states: Vec<_> = r.rows.iter().map(|row| row.state).collect();
    use FloorState::*;
    assert_eq!(states, vec![Met, NotMet, Manual, Abandoned]);
    assert_eq!(r.handoffs[0].reason, "no device in CI; handoff HND-7");
    let r = parse_gate0_report("g", &fixture("gate0-status.txt")).unwrap();
    assert_eq!((r.mode.as_deref(), r.verdict.n), (Some("status"), Some(1)));
    let states: Vec<_> = r.rows.iter().map(|row| row.state).collect();
    assert_eq!(states, vec![MetRecorded, Pending, Manual]);
}

/// Each verdict entry's echoed id, verdict, and whether it is a pipeline fault.
fn echoes(v: &[VerdictEntry]) -> Vec<(Option<&str>, FindingVerdict, bool)> {
    v.iter()
        .map(|e| (e.echo_id.as_deref(), e.verdict, e.is_fault()))
        .collect()
}

#[test]
fn finding_verdicts_with_a_fault_entry() {
    let v = parse_verdicts("v", &fixture("verdicts-with-fault.txt")).unwrap();
    use FindingVerdict::*;
    assert_eq!(
        echoes(&v),
        vec![
            (Some("R1"), Verified, false),
            (Some("R2"), False, false),
            (Some("R3"), Unverifiable, false),
            (Some("lane"), Unverifiable, true),
        ]
    );
    assert_eq!((v[0].line, v[0].column), (4, 3));
    let from_echo = findings_from_verdicts(&v);
    assert_eq!(from_echo[3].id, "lane");
    assert_eq!(from_echo[3].note, "PIPELINE-FAULT: lane crashed twice");
}

#[test]
fn entries_failing_each_gate_rule_become_pipeline_faults() {
    let v = parse_verdicts("v", &fixture("verdicts-gate-rules.json")).unwrap();
    let notes: Vec<_> = v.iter().map(|e| (e.verdict, e.note.as_str())).collect();
    let u = FindingVerdict::Unverifiable;
    assert_eq!(
        notes,
        vec![
            (u, "PIPELINE-FAULT: VERIFIED without evidence"),
            (
                u,
                "PIPELINE-FAULT: FALSE without evidence (verifier note: looked)"
            ),
            (u, "PIPELINE-FAULT: UNVERIFIABLE without a note"),
            (
                u,
                "PIPELINE-FAULT: verdict \"PROBABLY\" is not VERIFIED, FALSE or UNVERIFIABLE (verifier note: y)"
            ),
        ]
    );
}

#[test]
fn positional_matching_with_fewer_and_more_verdicts() {
    let findings = parse_findings("f", &fixture("findings.json")).unwrap();
    let v = parse_verdicts("v", &fixture("verdicts-with-fault.txt")).unwrap();
    let fewer = verify_findings(&findings, &v[..2]);
    let got: Vec<_> = fewer
        .iter()
        .map(|f| (f.id.as_str(), f.verdict, f.note.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("R1", FindingVerdict::Verified, ""),
            ("R2", FindingVerdict::False, ""),
            (
                "R3",
                FindingVerdict::Unverifiable,
                "PIPELINE-FAULT: no verdict returned"
            ),
        ]
    );
    assert_eq!(fewer[1].lines, "30");
    let more = match_findings(&findings, &v);
    assert_eq!(more.findings.len(), 3);
    assert_eq!(
        more.findings[2].note,
        "depends on terminal width at runtime"
    );
    assert_eq!(more.extra_verdicts.len(), 1);
    assert_eq!(more.extra_verdicts[0].echo_id.as_deref(), Some("lane"));
    assert!(more.echo_mismatches.is_empty());
}

#[test]
fn truncated_json_names_line_and_column() {
    let e = parse_verdicts("v.json", &fixture("verdicts-truncated.json")).unwrap_err();
    assert_eq!(
        e,
        JsonInputError::Syntax {
            input: "v.json".into(),
            line: 3,
            column: 30,
            message: "EOF while parsing a string (truncated?); expected a JSON array of {id, verdict, evidence, note}".into(),
        }
    );
}

#[test]
#[cfg_attr(
    not(loopwatch_corpus),
    ignore = "the shared corpus of real gate outputs (../shared/corpus) is not beside the project"
)]
fn real_corpus_outputs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/outputs");
    let read = |n: &str| std::fs::read(dir.join(n)).unwrap_or_else(|e| panic!("{n}: {e}"));

    let out = parse_conformity("c", &read("verify-conforme.txt")).unwrap();
    assert_eq!(out.verdict, Verdict::bare(VerdictKind::Conforme));
    assert_eq!(
        criteria(&out),
        vec![
            ("1", CriterionStatus::Met),
            ("2", CriterionStatus::Met),
            ("3", CriterionStatus::Met)
        ]
    );
    assert_eq!(out.scope, scope(3, &[]));

    let out = parse_conformity("c", &read("verify-ecarts-out-of-scope.txt")).unwrap();
    assert_eq!(out.verdict, Verdict::counted(VerdictKind::Ecarts, 2));
    let not_met: Vec<_> = criteria(&out)
        .into_iter()
        .filter(|(_, s)| *s != CriterionStatus::Met)
        .collect();
    assert_eq!(not_met, vec![("2", CriterionStatus::NotMet)]);
    assert_eq!(out.scope, scope(3, &["Cargo.lock"]));

    let e = parse_conformity("c", &read("verify-structural-no-proof.txt")).unwrap_err();
    assert_eq!(
        (e.kind, e.line),
        (StructuralKind::ConformeWithoutProof, Some(1))
    );

    let out = parse_conformity("c", &read("verify-unverifiable-only.txt")).unwrap();
    assert_eq!(out.verdict, Verdict::counted(VerdictKind::Ecarts, 1));
    assert_eq!(
        criteria(&out),
        vec![
            ("1", CriterionStatus::Met),
            ("2", CriterionStatus::Unverifiable)
        ]
    );

    let out = parse_security("s", &read("security-block.txt")).unwrap();
    assert_eq!(out.verdict, Verdict::counted(VerdictKind::Block, 2));
    assert!(!out.degraded);
    let rows: Vec<_> = out
        .rows
        .iter()
        .filter_map(|r| match r {
            GateRow::Security(s) => Some((
                s.n,
                s.severity.as_str(),
                s.location.as_str(),
                !s.why.is_empty() && !s.hint.is_empty(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            (1, "CRITICAL", "src/export/upload.rs:14", true),
            (2, "HIGH", "src/cli/export.rs:51", true),
        ]
    );
    assert_eq!(out.reported.len(), 1);

    let out = parse_security("s", &read("security-pass-degraded.txt")).unwrap();
    assert_eq!(
        (out.verdict.kind, out.degraded, out.rows.len()),
        (VerdictKind::Pass, true, 0)
    );
    assert_eq!(
        out.reported,
        vec![reported("LOW", "checklist.logging", "src/export/csv.rs:12")]
    );

    let r = parse_gate0_report("g", &read("gates-run.txt")).unwrap();
    assert_eq!(r.verdict, Verdict::counted(VerdictKind::Unmet, 1));
    let states: Vec<_> = r
        .rows
        .iter()
        .map(|row| (row.id.as_str(), row.state))
        .collect();
    assert_eq!(
        states,
        vec![
            ("1", FloorState::Met),
            ("2", FloorState::NotMet),
            ("3", FloorState::Manual),
            ("4", FloorState::Abandoned)
        ]
    );
    assert_eq!(r.handoffs.len(), 1);
    assert_eq!(
        r.runnable.map(|x| (x.runnable, x.total, x.timeout_secs)),
        Some((2, 4, 120))
    );

    let v = parse_verdicts("f", &read("finding-verifier-results.txt")).unwrap();
    use FindingVerdict::*;
    assert_eq!(
        echoes(&v),
        vec![
            (Some("F1"), Verified, false),
            (Some("F2"), False, false),
            (Some("F3"), Unverifiable, false),
            (Some("pipeline-fault"), Unverifiable, true),
        ]
    );
}

/// Byte strings a mutation may splice in, to reach deep parser paths.
const TOKENS: [&str; 18] = [
    "\n",
    "\r\n",
    " — ",
    " -- ",
    "—",
    "VERIFY — VERDICT: ",
    "SECURITY — VERDICT: ",
    "GATES — VERDICT: ",
    "MET",
    "NOT-MET",
    "(",
    ")",
    "  1. ",
    "[HIGH] ",
    "{",
    "\"",
    "]",
    "é",
];

const VALID: [&str; 10] = [
    "conformity-conforme.txt",
    "conformity-ecarts.txt",
    "conformity-ecarts-crlf-bom.txt",
    "security-block.txt",
    "security-bare-degraded.txt",
    "gate0-run.txt",
    "gate0-status.txt",
    "verdicts-with-fault.txt",
    "verdicts-gate-rules.json",
    "findings.json",
];

fn run_every_parser(bytes: &[u8]) {
    let _ = parse_conformity("p", bytes);
    let _ = parse_security("p", bytes);
    let _ = parse_gate0_report("p", bytes);
    let findings = parse_findings("p", bytes).unwrap_or_default();
    if let Ok(v) = parse_verdicts("p", bytes) {
        let _ = match_findings(&findings, &v);
        let _ = findings_from_verdicts(&v);
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    Insert(usize, Vec<u8>),
    InsertToken(usize, usize),
    Delete(usize, usize),
    Truncate(usize),
    DuplicateLine(usize),
}

fn apply(mut bytes: Vec<u8>, m: &Mutation) -> Vec<u8> {
    let at = |i: usize, b: &Vec<u8>| i % (b.len() + 1);
    match m {
        Mutation::Insert(i, ins) => {
            let i = at(*i, &bytes);
            bytes.splice(i..i, ins.iter().copied());
        }
        Mutation::InsertToken(i, t) => {
            let i = at(*i, &bytes);
            bytes.splice(i..i, TOKENS[t % TOKENS.len()].bytes());
        }
        Mutation::Delete(i, n) => {
            let i = at(*i, &bytes);
            let end = (i + n).min(bytes.len());
            bytes.drain(i..end);
        }
        Mutation::Truncate(i) => bytes.truncate(at(*i, &bytes)),
        Mutation::DuplicateLine(i) => {
            let i = at(*i, &bytes);
            let start = bytes[..i]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1);
            let end = bytes[i..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |p| i + p + 1);
            let line = bytes[start..end].to_vec();
            bytes.splice(start..start, line);
        }
    }
    bytes
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(i, b)| Mutation::Insert(i, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(i, t)| Mutation::InsertToken(i, t)),
        (any::<usize>(), 1usize..40).prop_map(|(i, n)| Mutation::Delete(i, n)),
        any::<usize>().prop_map(Mutation::Truncate),
        any::<usize>().prop_map(Mutation::DuplicateLine),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        run_every_parser(&bytes);
    }

    #[test]
    fn mutated_valid_outputs_never_panic(
        base in 0usize..VALID.len(),
        mutations in prop::collection::vec(mutation(), 1..6),
    ) {
        let bytes = mutations.iter().fold(fixture(VALID[base]), apply);
        run_every_parser(&bytes);
    }
}
