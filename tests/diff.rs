//! What changed between two iterations, on constructed runs: every kind of
//! change (gate verdict, criterion at GATE 0 and GATE 1, finding verdict,
//! verify-by-test result, triage move, security row added and removed, gate
//! decided), what is deliberately not reported, and `loopwatch diff` text and
//! `--json` output with its exit codes, through the real binary.

use std::path::{Path, PathBuf};

use loopwatch::history::{Change, IterationDiff, diff_iterations};
use loopwatch::model::{Decision, Event, GateName, HumanGateKind, State, fold};
use serde_json::{Value, json};
use support::code::{journal_text, loopwatch};

mod support;

fn fixture() -> PathBuf {
    support::fixture_path("replay/diff-run.events.jsonl")
}

fn parse(text: &str) -> Vec<Event> {
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| Event::parse_line(l.as_bytes()).expect("valid event"))
        .collect()
}

fn fixture_state() -> State {
    fold(parse(&std::fs::read_to_string(fixture()).expect("fixture")).iter())
}

fn some(s: &str) -> Option<String> {
    Some(s.to_string())
}

/// Events from JSON bodies, numbered from 1.
fn events(bodies: &[Value]) -> Vec<Event> {
    parse(&journal_text(bodies, |i| {
        format!("2026-12-02T11:00:{i:02}Z")
    }))
}

fn diff_of(bodies: &[Value], from: u32, to: u32) -> IterationDiff {
    diff_iterations(&fold(events(bodies).iter()), from, to).expect("both iterations exist")
}

fn iteration(n: u32) -> Value {
    json!({"type": "iteration.started", "iteration": n, "trigger": "ecarts"})
}

fn floor(n: u32, rows: &[(&str, &str)]) -> Value {
    let rows: Vec<Value> = rows
        .iter()
        .map(|(id, s)| json!({"id": id, "state": s, "text": "t", "evidence": ""}))
        .collect();
    json!({"type": "gate.finished", "gate": "floor", "iteration": n, "round": n, "verdict": {"kind": "MET"}, "rows": rows})
}

fn security(n: u32, rows: &[(&str, &str, &str)]) -> Value {
    let rows: Vec<Value> = rows
        .iter()
        .enumerate()
        .map(|(i, (sev, rule, loc))| json!({"n": i + 1, "severity": sev, "rule": rule, "location": loc}))
        .collect();
    json!({"type": "gate.finished", "gate": "security", "iteration": n, "round": n,
           "verdict": {"kind": "BLOCK", "n": rows.len()}, "rows": rows})
}

fn findings(n: u32, verdicts: &[(&str, &str)]) -> Value {
    let f: Vec<Value> = verdicts
        .iter()
        .map(|(id, v)| json!({"id": id, "verdict": v}))
        .collect();
    json!({"type": "findings.verified", "iteration": n, "findings": f})
}

fn expected_changes() -> Vec<Change> {
    vec![
        Change::GateVerdict {
            gate: GateName::Floor,
            before: some("UNMET(1)"),
            after: some("MET"),
        },
        Change::GateVerdict {
            gate: GateName::Conformity,
            before: some("ECARTS(1)"),
            after: some("CONFORME"),
        },
        Change::Criterion {
            id: "2".into(),
            gate: GateName::Floor,
            before: some("NOT-MET"),
            after: some("MET"),
        },
        Change::Criterion {
            id: "2".into(),
            gate: GateName::Conformity,
            before: some("NOT-MET"),
            after: some("MET"),
        },
        Change::FindingVerdict {
            id: "F2".into(),
            before: some("UNVERIFIABLE"),
            after: some("FALSE"),
        },
        Change::VerifyResult {
            id: "F1".into(),
            before: some("inconclusive"),
            after: some("confirmed"),
        },
        Change::Triage {
            id: "F2".into(),
            before: some("accepted"),
            after: some("deferred"),
        },
        Change::SecurityAdded {
            severity: "MEDIUM".into(),
            rule: "unbounded-read".into(),
            location: "src/csv.rs:8".into(),
        },
        Change::SecurityRemoved {
            severity: "HIGH".into(),
            rule: "csv-injection".into(),
            location: "src/csv.rs:40".into(),
        },
        // The fixture was written before finding gates had their own kind:
        // its `unverifiable` gate on F1 decided `accept` reads as an
        // `unverifiable-finding` gate decided `dismiss`.
        Change::Decided {
            id: "hg-2-findings-1".into(),
            kind: HumanGateKind::UnverifiableFinding,
            subject: "F1".into(),
            decision: Decision::Dismiss,
            by: "ana@desk".into(),
            reason: "checked by hand on a sample file".into(),
        },
    ]
}

const EXPECTED_TEXT: &str = "\
iteration 1 → 2
  GATE 0 floor: UNMET(1) → MET
  GATE 1 conformity: ECARTS(1) → CONFORME
  criterion 2 (GATE 0 floor): NOT-MET → MET
  criterion 2 (GATE 1 conformity): NOT-MET → MET
  finding F2 verdict: UNVERIFIABLE → FALSE
  finding F1 verify-by-test: inconclusive → confirmed
  finding F2 moved: accepted → deferred
  security + [MEDIUM] unbounded-read — src/csv.rs:8
  security − [HIGH] csv-injection — src/csv.rs:40
  hg-2-findings-1 (unverifiable-finding F1) decided dismiss by ana@desk: checked by hand on a sample file
";

#[test]
fn every_kind_of_change_between_two_constructed_iterations() {
    let d = diff_iterations(&fixture_state(), 1, 2).expect("both iterations exist");
    assert_eq!(
        d,
        IterationDiff {
            from: 1,
            to: 2,
            changes: expected_changes()
        }
    );
    assert_eq!(d.to_text(), EXPECTED_TEXT);
}

#[test]
fn a_missing_iteration_has_no_diff() {
    let s = fixture_state();
    assert_eq!(diff_iterations(&s, 1, 3), None);
    assert_eq!(diff_iterations(&s, 0, 2), None);
}

#[test]
fn the_same_iteration_against_itself_only_lists_its_decisions() {
    let d = diff_iterations(&fixture_state(), 1, 1).expect("iteration 1 exists");
    assert_eq!(d.changes, Vec::<Change>::new());
    assert_eq!(d.to_text(), "iteration 1 → 1\n  no change\n");
    let d = diff_iterations(&fixture_state(), 2, 2).expect("iteration 2 exists");
    assert_eq!(d.changes, expected_changes()[9..].to_vec());
}

#[test]
fn a_criterion_gone_without_a_later_floor_round_is_not_a_change() {
    let bodies = [
        iteration(1),
        floor(1, &[("1", "MET"), ("2", "NOT-MET")]),
        iteration(2),
    ];
    assert_eq!(
        diff_of(&bodies, 1, 2).changes,
        vec![Change::GateVerdict {
            gate: GateName::Floor,
            before: some("MET"),
            after: None
        }]
    );
}

#[test]
fn a_criterion_dropped_by_a_later_floor_round_is_a_change_to_nothing() {
    let bodies = [
        iteration(1),
        floor(1, &[("1", "MET"), ("2", "MANUAL")]),
        iteration(2),
        floor(2, &[("1", "MET")]),
    ];
    assert_eq!(
        diff_of(&bodies, 1, 2).changes,
        vec![Change::Criterion {
            id: "2".into(),
            gate: GateName::Floor,
            before: some("MANUAL"),
            after: None
        }]
    );
}

#[test]
fn a_finding_new_in_the_later_iteration_is_listed_and_one_gone_is_not() {
    let bodies = [
        iteration(1),
        findings(1, &[("F1", "VERIFIED")]),
        iteration(2),
        findings(2, &[("F2", "FALSE")]),
    ];
    assert_eq!(
        diff_of(&bodies, 1, 2).changes,
        vec![Change::FindingVerdict {
            id: "F2".into(),
            before: None,
            after: some("FALSE")
        }]
    );
}

#[test]
fn security_rows_are_compared_only_when_the_later_iteration_ran_security() {
    let ran = [
        iteration(1),
        security(1, &[("HIGH", "r1", "a.rs:1"), ("LOW", "r2", "b.rs:2")]),
        iteration(2),
        security(2, &[("LOW", "r2", "b.rs:2"), ("HIGH", "r3", "c.rs:3")]),
    ];
    assert_eq!(
        diff_of(&ran, 1, 2).changes,
        vec![
            Change::SecurityAdded {
                severity: "HIGH".into(),
                rule: "r3".into(),
                location: "c.rs:3".into()
            },
            Change::SecurityRemoved {
                severity: "HIGH".into(),
                rule: "r1".into(),
                location: "a.rs:1".into()
            },
        ]
    );
    let not_yet = [
        iteration(1),
        security(1, &[("HIGH", "r1", "a.rs:1")]),
        iteration(2),
    ];
    assert_eq!(
        diff_of(&not_yet, 1, 2).changes,
        vec![Change::GateVerdict {
            gate: GateName::Security,
            before: some("BLOCK(1)"),
            after: None
        }]
    );
}

#[test]
fn triage_moves_need_a_triage_in_the_later_iteration() {
    let triage = |n: u32, acc: &[&str], def: &[&str]| {
        json!({"type": "triage.recorded", "iteration": n, "file": format!("triage-{n}.json"),
               "counts": {"accepted": acc.len(), "deferred": def.len(), "rejected": 0},
               "buckets": {"accepted": acc, "deferred": def, "rejected": []}})
    };
    let moved = [
        iteration(1),
        triage(1, &["F1", "F2"], &[]),
        iteration(2),
        triage(2, &["F2"], &["F1"]),
    ];
    assert_eq!(
        diff_of(&moved, 1, 2).changes,
        vec![Change::Triage {
            id: "F1".into(),
            before: some("accepted"),
            after: some("deferred")
        }]
    );
    let none_yet = [iteration(1), triage(1, &["F1"], &[]), iteration(2)];
    assert_eq!(diff_of(&none_yet, 1, 2).changes, Vec::<Change>::new());
}

#[test]
fn a_decision_belongs_to_the_iteration_it_was_taken_in() {
    let request = json!({"type": "human.requested", "id": "hg-1-conformity-1", "kind": "out-of-scope",
                         "gate": "conformity", "iteration": 1, "subject": "Makefile", "summary": "s",
                         "options": ["approve", "deny"]});
    let decided = json!({"type": "human.decided", "id": "hg-1-conformity-1", "decision": "deny",
                         "reason": "not in this change", "by": "bo@box", "evidenceHash": "sha256:33"});
    let bodies = [iteration(1), request, iteration(2), decided, iteration(3)];
    let decision = Change::Decided {
        id: "hg-1-conformity-1".into(),
        kind: HumanGateKind::OutOfScope,
        subject: "Makefile".into(),
        decision: Decision::Deny,
        by: "bo@box".into(),
        reason: "not in this change".into(),
    };
    assert_eq!(diff_of(&bodies, 1, 2).changes, vec![decision]);
    assert_eq!(diff_of(&bodies, 1, 3).changes, Vec::<Change>::new());
}

/// A worktree holding `.pipeline/events.jsonl` copied from the fixture.
fn worktree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let pipeline = dir.path().join(".pipeline");
    std::fs::create_dir(&pipeline).expect("mkdir");
    std::fs::copy(fixture(), pipeline.join("events.jsonl")).expect("copy fixture");
    dir
}

/// What `loopwatch diff` adds for a journal without snapshots.
const NO_CODE: &str = "
code changes, iteration 1 → iteration 2
  not available: no snapshot of iteration 1 in the journal
";

#[test]
fn diff_prints_the_changes_as_text() {
    let w = worktree();
    loopwatch(w.path())
        .args(["diff", "1", "2"])
        .assert()
        .code(0)
        .stdout(format!("{EXPECTED_TEXT}{NO_CODE}"))
        .stderr("");
    let arg = w.path().to_str().expect("utf-8 path");
    loopwatch(Path::new("/"))
        .args(["diff", arg, "1", "2"])
        .assert()
        .code(0)
        .stdout(format!("{EXPECTED_TEXT}{NO_CODE}"));
}

#[test]
fn diff_json_is_the_diff_with_each_change_tagged() {
    let w = worktree();
    let expected = json!({
        "from": 1,
        "to": 2,
        "changes": [
            {"change": "gate-verdict", "gate": "floor", "before": "UNMET(1)", "after": "MET"},
            {"change": "gate-verdict", "gate": "conformity", "before": "ECARTS(1)", "after": "CONFORME"},
            {"change": "criterion", "id": "2", "gate": "floor", "before": "NOT-MET", "after": "MET"},
            {"change": "criterion", "id": "2", "gate": "conformity", "before": "NOT-MET", "after": "MET"},
            {"change": "finding-verdict", "id": "F2", "before": "UNVERIFIABLE", "after": "FALSE"},
            {"change": "verify-result", "id": "F1", "before": "inconclusive", "after": "confirmed"},
            {"change": "triage", "id": "F2", "before": "accepted", "after": "deferred"},
            {"change": "security-added", "severity": "MEDIUM", "rule": "unbounded-read", "location": "src/csv.rs:8"},
            {"change": "security-removed", "severity": "HIGH", "rule": "csv-injection", "location": "src/csv.rs:40"},
            {"change": "decided", "id": "hg-2-findings-1", "kind": "unverifiable-finding", "subject": "F1",
             "decision": "dismiss", "by": "ana@desk", "reason": "checked by hand on a sample file"}
        ],
        "code": null,
        "codeUnavailable": "no snapshot of iteration 1 in the journal"
    });
    let text = serde_json::to_string_pretty(&expected).expect("json") + "\n";
    loopwatch(w.path())
        .args(["diff", "1", "2", "--json"])
        .assert()
        .code(0)
        .stdout(text)
        .stderr("");
}

#[test]
fn diff_of_a_missing_iteration_exits_2() {
    let w = worktree();
    loopwatch(w.path())
        .args(["diff", "1", "3"])
        .assert()
        .code(2)
        .stdout("")
        .stderr("loopwatch: iteration 1 or 3 does not exist (the run has 2)\n");
}

#[test]
fn diff_without_a_pipeline_exits_3() {
    let empty = tempfile::tempdir().expect("temp dir");
    let arg = empty.path().to_str().expect("utf-8 path");
    loopwatch(empty.path())
        .args(["diff", arg, "1", "2"])
        .assert()
        .code(3)
        .stdout("")
        .stderr(format!("loopwatch: no pipeline at {arg}/.pipeline\n"));
}
