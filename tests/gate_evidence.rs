//! Every human gate carries its evidence as it was when the gate opened:
//! an out-of-scope file's hunks against the run's base (binary and huge
//! files summarised, a vanished file said so), an UNVERIFIABLE finding's
//! cited lines from its iteration's snapshot. The decision saves the text
//! shown as `.pipeline/evidence/<gate-id>.txt` and its `evidenceHash` is
//! the sha256 of exactly those bytes, from `loopwatch decide` and from the
//! TUI's path (`Recorder::decide_on`).

mod support;

use std::path::{Path, PathBuf};

use loopwatch::journal::Pipeline;
use loopwatch::model::event::{HumanDecision, HumanRequest};
use loopwatch::model::{
    Decision, EventBody, Finding, FindingVerdict, GateName, Scope, Verdict, VerdictKind,
};
use loopwatch::parse::GateOutput;
use loopwatch::recorder::Recorder;
use loopwatch::recorder::evidence::lines::{evidence_lines, evidence_text};
use loopwatch::recorder::evidence::{Refreshed, Sources, refresh};
use support::code::{loopwatch, repo, start_run, write};

/// `src/lib.rs` edited to return 2 (the repository's base returns 1).
const LIB_2: &str = "pub fn one() -> u32 {\n    2\n}\n";

/// A fresh repository with a run started in it.
fn started() -> (tempfile::TempDir, Recorder) {
    let dir = repo();
    let (rec, _) = start_run(dir.path(), "2026-12-01-evidence", "");
    (dir, rec)
}

/// A run whose `src/lib.rs` was edited to [`LIB_2`] and reported out of
/// scope by a conformity round: the one gate that round opened.
fn lib_out_of_scope() -> (tempfile::TempDir, Recorder, HumanRequest) {
    let (dir, rec) = started();
    write(dir.path(), "src/lib.rs", LIB_2);
    let mut reqs = out_of_scope(&rec, &["src/lib.rs"]);
    assert_eq!(reqs.len(), 1, "{reqs:#?}");
    (dir, rec, reqs.remove(0))
}

/// Records a conformity round that reports `paths` out of scope and returns
/// the gates it opened.
fn out_of_scope(rec: &Recorder, paths: &[&str]) -> Vec<HumanRequest> {
    let mut out = GateOutput::new(GateName::Conformity, Verdict::bare(VerdictKind::Met));
    out.scope = Some(Scope {
        in_scope: 1,
        out_of_scope: paths.iter().map(|p| p.to_string()).collect(),
    });
    let appended = rec
        .round(GateName::Conformity, Ok(out), b"VERDICT: MET\n", true)
        .expect("round");
    requests(&appended.events)
}

fn requests(events: &[loopwatch::model::Event]) -> Vec<HumanRequest> {
    events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::HumanRequested(r) => Some(HumanRequest::clone(r)),
            _ => None,
        })
        .collect()
}

/// An UNVERIFIABLE finding citing `path` at `lines`.
fn unverifiable(id: &str, path: &str, lines: &str, claim: &str, note: &str) -> Finding {
    Finding {
        id: id.into(),
        severity: "high".into(),
        path: path.into(),
        lines: lines.into(),
        claim: claim.into(),
        verdict: FindingVerdict::Unverifiable,
        evidence: String::new(),
        note: note.into(),
        extra: Default::default(),
    }
}

/// The lines of the gate's evidence `key` (`code`, `contract`, `rounds`, …).
fn lines_of(r: &HumanRequest, key: &str) -> Vec<String> {
    r.evidence[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {}", r.evidence))
        .iter()
        .map(|l| l.as_str().expect("a line").to_string())
        .collect()
}

/// Asserts `line` is one of `lines`, showing them all when it is not.
#[track_caller]
fn assert_has(lines: &[String], line: &str) {
    assert!(
        lines.iter().any(|l| l == line),
        "{line:?} not in {lines:#?}"
    );
}

fn decision(id: &str) -> HumanDecision {
    HumanDecision {
        id: id.into(),
        decision: Decision::Deny,
        reason: "remove it".into(),
        by: "tester@host".into(),
        evidence_hash: String::new(),
        contract_edit: None,
        note: None,
        extra: Default::default(),
    }
}

/// The evidence hash the journal recorded for the decision on `id`, if any.
fn recorded_hash(root: &Path, id: &str) -> Option<String> {
    let batch = loopwatch::journal::read_all(&root.join(".pipeline/events.jsonl")).expect("read");
    batch.events.iter().find_map(|e| match &e.body {
        EventBody::HumanDecided(d) if d.id == id => Some(d.evidence_hash.clone()),
        _ => None,
    })
}

/// Asserts the decision on `id` was recorded with the hash of exactly `bytes`.
#[track_caller]
fn assert_hashed(root: &Path, id: &str, bytes: &[u8]) {
    let want = loopwatch::util::sha256_tagged(bytes);
    assert_eq!(recorded_hash(root, id), Some(want), "{id}");
}

/// Where the decision on `id` saves the evidence it was taken on.
fn evidence_file(root: &Path, id: &str) -> PathBuf {
    root.join(format!(".pipeline/evidence/{id}.txt"))
}

/// The evidence of `r` recomputed as the worktree is now.
fn refreshed(root: &Path, r: &HumanRequest) -> Refreshed {
    refresh(
        &Pipeline::at(root.join(".pipeline")),
        &Sources::default(),
        r,
    )
}

#[test]
fn an_out_of_scope_gate_shows_the_files_hunks_captured_when_it_opened() {
    let (dir, _rec, gate) = lib_out_of_scope();
    let root = dir.path();
    let lines = lines_of(&gate, "code");
    assert_has(&lines, "-    1");
    assert_has(&lines, "+    2");
    assert!(
        lines.iter().any(|l| l.starts_with("@@ -1,3 +1,3 @@")),
        "{lines:#?}"
    );
    assert!(gate.evidence.get("diffStat").is_none());
    // The dialog shows them.
    let shown = evidence_lines(&gate);
    assert_has(&shown, "  +    2");
    // Edited again after the gate opened: the gate still holds what it opened on.
    write(root, "src/lib.rs", "pub fn one() -> u32 {\n    3\n}\n");
    let state = loopwatch::journal::snapshot(&Pipeline::at(root.join(".pipeline")))
        .expect("snapshot")
        .expect("state");
    let held = state.state.human_gate(&gate.id).expect("gate");
    assert_eq!(lines_of(&held.request, "code"), lines);
}

#[test]
fn binary_huge_and_vanished_files_are_summarised_or_said_so() {
    let dir = repo();
    let root = dir.path();
    write(root, "data.bin", "seed\n");
    write(root, "big.txt", "seed\n");
    write(root, "gone.txt", "here\n");
    let (rec, _) = start_run(root, "2026-12-01-evidence", "");
    std::fs::write(root.join("data.bin"), [0u8, 1, 2, 0, 255, 0]).unwrap();
    let huge: String = (0..6_000).map(|i| format!("line {i}\n")).collect();
    write(root, "big.txt", &huge);
    std::fs::remove_file(root.join("gone.txt")).unwrap();
    let reqs = out_of_scope(&rec, &["data.bin", "big.txt", "gone.txt", "untouched.txt"]);
    let by = |p: &str| lines_of(reqs.iter().find(|r| r.subject == p).expect(p), "code");
    let bin = by("data.bin");
    assert!(
        bin.iter().any(|l| l.starts_with("(binary file:")),
        "{bin:#?}"
    );
    let big = by("big.txt");
    assert!(
        big.iter().any(|l| l.contains("too many to show")),
        "{big:#?}"
    );
    assert!(
        big.len() < 20,
        "a huge change is never dumped: {} lines",
        big.len()
    );
    let gone = by("gone.txt");
    assert_eq!(
        gone[0], "gone.txt: deleted since the run's base",
        "{gone:#?}"
    );
    assert_has(&gone, "-here");
    let none = by("untouched.txt");
    assert_eq!(none, ["untouched.txt: no change against the run's base"]);
}

#[test]
fn an_unverifiable_finding_shows_its_cited_lines_from_its_iteration() {
    let (dir, rec) = started();
    let root = dir.path();
    write(root, "src/lib.rs", "pub fn one() -> u32 {\n    7\n}\n");
    rec.start_round(GateName::Floor, false).expect("floor");
    // Edited after the iteration's snapshot: the excerpt is the snapshot's.
    write(root, "src/lib.rs", "pub fn one() -> u32 {\n    8\n}\n");
    let finding = unverifiable(
        "F1",
        "src/lib.rs",
        "2",
        "the constant is wrong",
        "needs the spec",
    );
    let appended = rec.findings(Some(1), vec![finding]).expect("findings");
    let reqs = requests(&appended.events);
    let lines = lines_of(&reqs[0], "code");
    assert_eq!(lines[0], "src/lib.rs:2");
    assert_has(&lines, ">    2 |     7");
    assert_has(&lines, "     1 | pub fn one() -> u32 {");
    let shown = evidence_lines(&reqs[0]);
    assert!(
        shown.iter().any(|l| l.contains("note: needs the spec")),
        "{shown:#?}"
    );
}

#[test]
fn loopwatch_decide_saves_the_evidence_shown_and_hashes_exactly_it() {
    let (dir, _rec, gate) = lib_out_of_scope();
    // The exit code is the NEXT action's; the decision is what matters here.
    let [said, err, file] = decided_on_its_evidence(dir.path(), &gate, "deny");
    assert!(said.contains("decision saved"), "{said}{err}");
    assert!(file.contains("+    2"), "{file}");
}

#[test]
fn a_decision_from_the_dialog_saves_its_text_and_hashes_it() {
    let (dir, rec, gate) = lib_out_of_scope();
    let root = dir.path();
    let id = &gate.id;
    let text = evidence_text(&evidence_lines(&gate));
    rec.decide_on(decision(id), text.as_bytes())
        .expect("decide");
    let file = std::fs::read(evidence_file(root, id)).expect("file");
    assert_eq!(file, text.as_bytes());
    assert_hashed(root, id, &file);
    // A second decision is refused and leaves the file as it was.
    assert!(rec.decide_on(decision(id), b"other\n").is_err());
    assert_eq!(
        std::fs::read(evidence_file(root, id)).unwrap(),
        text.as_bytes()
    );
}

#[cfg(unix)]
#[test]
fn the_evidence_file_is_never_written_through_a_link() {
    let (dir, rec, gate) = lib_out_of_scope();
    let root = dir.path();
    let id = &gate.id;
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.join(".pipeline/evidence")).unwrap();
    let target = outside.path().join("victim");
    std::fs::write(&target, "keep\n").unwrap();
    std::os::unix::fs::symlink(&target, evidence_file(root, id)).unwrap();
    let err = rec.decide_on(decision(id), b"text\n").expect_err("refused");
    assert!(err.to_string().contains(&format!("{id}.txt")), "{err}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
    assert!(
        recorded_hash(root, id).is_none(),
        "no decision without its file"
    );
}

const CONTRACT: &str = "# CONTRACT — invoices\n\n## ACCEPTANCE CRITERIA\n\
1. The export passes its tests.\n   CHECK: true\n   EXPECT: OK\n   EVIDENCE: pending\n\
2. Export streams rows for a million invoices.\n   (measured with the big fixture)\n\
ABANDON: 2 no million-row fixture in CI; handoff in BLK-31\n\n## FILE SCOPE\n- src/lib.rs\n";

/// Records a conformity round from its text; returns the gates it opened.
fn conformity(rec: &Recorder, text: &str) -> Vec<HumanRequest> {
    let result = loopwatch::parse::parse_conformity("gate1.out", text.as_bytes());
    let appended = rec
        .round(GateName::Conformity, result, text.as_bytes(), true)
        .expect("conformity round");
    requests(&appended.events)
}

/// `loopwatch decide` in `root`; returns (exit code, stdout, stderr).
fn decide_cli(root: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = loopwatch(root).arg("decide").args(args).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

/// Decides `r` with `loopwatch decide` and checks the evidence file holds
/// exactly what the dialog shows and the decision hashes exactly its bytes;
/// returns the command's stdout and stderr and the file's text.
fn decided_on_its_evidence(root: &Path, r: &HumanRequest, option: &str) -> [String; 3] {
    let (code, out, err) = decide_cli(root, &[&r.id, option, "--reason", "read it"]);
    assert_ne!(code, Some(2), "{}: {err}", r.id);
    let file = std::fs::read(evidence_file(root, &r.id))
        .unwrap_or_else(|e| panic!("{}: no evidence file: {e}", r.id));
    let text = String::from_utf8(file).unwrap();
    assert_eq!(
        text,
        evidence_text(&evidence_lines(r)),
        "{}: the file holds exactly what the dialog shows",
        r.id
    );
    assert_hashed(root, &r.id, text.as_bytes());
    [out, err, text]
}

#[test]
fn an_unverifiable_criterion_shows_the_code_its_row_cites_or_says_it_cites_none() {
    let (dir, rec) = started();
    let root = dir.path();
    write(root, "src/lib.rs", "pub fn one() -> u32 {\n    7\n}\n");
    rec.start_round(GateName::Floor, false).expect("floor");
    // Edited after the iteration's snapshot: the code shown is the snapshot's.
    write(root, "src/lib.rs", "pub fn one() -> u32 {\n    8\n}\n");
    let reqs = conformity(
        &rec,
        "VERIFY — VERDICT: ECARTS(2)\nCONTRACT: contract.md\nCRITERIA:\n\
  1. One is one — UNVERIFIABLE — the constant at src/lib.rs:2 needs the spec\n\
  2. Reads naturally — UNVERIFIABLE — nobody can tell\n\
SCOPE: in-scope 1 files; out-of-scope: none\nFLOOR: clean\nPROOF: read 1 file\n",
    );
    assert_eq!(reqs.len(), 2, "{reqs:#?}");
    let cited = lines_of(&reqs[0], "code");
    assert_eq!(cited[0], "src/lib.rs:2");
    assert_has(&cited, ">    2 |     7");
    assert_has(&cited, "     1 | pub fn one() -> u32 {");
    let shown = evidence_lines(&reqs[0]);
    assert_has(
        &shown,
        "  detail: the constant at src/lib.rs:2 needs the spec",
    );
    assert_has(&shown, "  >    2 |     7");
    assert_eq!(
        lines_of(&reqs[1], "code"),
        ["(the verifier's row cites no path:line: no code to show)"]
    );
    // A location outside the worktree is refused, and said so.
    let outside = conformity(
        &rec,
        "VERIFY — VERDICT: ECARTS(1)\nCONTRACT: contract.md\nCRITERIA:\n\
  1. Keys are safe — UNVERIFIABLE — compare with /etc/passwd:1 and ../secret.txt:2\n\
SCOPE: in-scope 1 files; out-of-scope: none\nFLOOR: clean\nPROOF: read 1 file\n",
    );
    let refused = lines_of(&outside[0], "code");
    assert_eq!(
        refused,
        [
            "code not available: path refused: /etc/passwd: it is absolute",
            "code not available: path refused: ../secret.txt: it leaves the worktree",
        ]
    );
    // The file back as the iteration judged it: the evidence is current.
    write(root, "src/lib.rs", "pub fn one() -> u32 {\n    7\n}\n");
    for r in reqs.iter().chain(&outside) {
        decided_on_its_evidence(root, r, "accept");
    }
}

#[test]
fn an_abandonment_shows_its_criterion_and_abandon_line_from_the_contract() {
    let dir = repo();
    let root = dir.path();
    write(root, "contract.md", CONTRACT);
    let (rec, _) = start_run(root, "2026-12-01-kinds", "contract.md");
    let reqs = conformity(
        &rec,
        "VERIFY — VERDICT: ABANDONED(1)\nCONTRACT: contract.md\nCRITERIA:\n\
  1. The export passes its tests — MET — EVIDENCE: MET exit=0 marker-found :: OK\n\
  2. Export streams rows — ABANDONED — no fixture, see the ABANDON line\n\
SCOPE: in-scope 1 files; out-of-scope: none\nFLOOR: clean\nPROOF: read 2 files\n",
    );
    let r = reqs
        .iter()
        .find(|r| r.kind == loopwatch::model::HumanGateKind::Abandoned)
        .expect("an abandoned gate");
    assert_eq!(
        lines_of(r, "contract"),
        [
            "contract contract.md:",
            "     8 | 2. Export streams rows for a million invoices.",
            "     9 |    (measured with the big fixture)",
            ">   10 | ABANDON: 2 no million-row fixture in CI; handoff in BLK-31",
            "proof: no million-row fixture in CI; handoff in BLK-31",
        ]
    );
    let shown = evidence_lines(r);
    // The verifier's row.
    assert_has(&shown, "criterion 2 ABANDONED: Export streams rows");
    assert_has(&shown, "the contract (as read when the gate opened):");
    // The contract edited (the ABANDON line removed): the check says so and
    // a decision needs --refresh.
    write(
        root,
        "contract.md",
        &CONTRACT.replace(
            "ABANDON: 2 no million-row fixture in CI; handoff in BLK-31\n",
            "",
        ),
    );
    let (code, _, err) = decide_cli(root, &[&r.id, "accept-partial", "--reason", "ok"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(
            "the contract's criterion 2 or its ABANDON line changed since the gate opened"
        ),
        "{err}"
    );
    assert!(recorded_hash(root, &r.id).is_none());
    let (code, _, err) = decide_cli(
        root,
        &[&r.id, "accept-partial", "--reason", "ok", "--refresh"],
    );
    assert_ne!(code, Some(2), "{err}");
    let file = std::fs::read_to_string(evidence_file(root, &r.id)).unwrap();
    assert!(
        file.contains("  (the contract has no ABANDON line for criterion 2)"),
        "{file}"
    );
    assert!(
        file.contains("refreshed before deciding: the contract's criterion 2"),
        "{file}"
    );
    assert_hashed(root, &r.id, file.as_bytes());
}

#[test]
fn a_cap_shows_the_gates_gaps_over_all_its_rounds() {
    use loopwatch::model::{FloorRow, FloorState};
    let (dir, rec) = started();
    let root = dir.path();
    let mut cap = None;
    for n in 1..=3 {
        let rows = vec![
            FloorRow {
                id: "1".into(),
                state: FloorState::Met,
                text: "builds".into(),
                evidence: "MET exit=0".into(),
            },
            FloorRow {
                id: "2".into(),
                state: FloorState::NotMet,
                text: "the total row".into(),
                evidence: format!("NOT-MET exit=1 (nonzero) :: try {n}"),
            },
        ];
        let mut verdict = Verdict::bare(VerdictKind::Unmet);
        verdict.n = Some(1);
        let appended = rec
            .round(
                GateName::Floor,
                loopwatch::recorder::floor_round(rows, verdict),
                b"GATES - VERDICT: UNMET(1)\n",
                true,
            )
            .expect("floor round");
        cap = requests(&appended.events).into_iter().next().or(cap);
    }
    let cap = cap.expect("the third round opens cap-reached");
    assert_eq!(cap.kind, loopwatch::model::HumanGateKind::CapReached);
    let rounds = lines_of(&cap, "rounds");
    assert_eq!(rounds.len(), 6, "{rounds:#?}");
    for n in 1..=3u32 {
        let head = rounds
            .iter()
            .position(|l| l.starts_with(&format!("round {n} · iteration ")))
            .unwrap_or_else(|| panic!("round {n}: {rounds:#?}"));
        assert!(rounds[head].ends_with("· UNMET(1)"), "{rounds:#?}");
        assert_eq!(
            rounds[head + 1],
            format!("  2 NOT-MET: the total row — NOT-MET exit=1 (nonzero) :: try {n}")
        );
    }
    // Only the gaps: the MET row is not among them.
    assert!(!rounds.iter().any(|l| l.contains("builds")), "{rounds:#?}");
    let shown = evidence_lines(&cap);
    assert_has(&shown, "rounds of the gate, oldest first:");
    decided_on_its_evidence(root, &cap, "extend");
}

#[test]
fn a_security_cap_shows_the_blocking_table_round_by_round() {
    let (dir, rec) = started();
    let root = dir.path();
    let mut cap = None;
    for n in 1..=3 {
        let text = format!(
            "SECURITY — VERDICT: BLOCK(1)\nTOOL: semgrep 1.0\nSCOPE: 2 files\nBLOCKING:\n  \
1. [HIGH] rust.secrets.key — src/lib.rs:{n} — key in source — hint: use the environment\n\
PROOF: semgrep 10 rules\n"
        );
        let result = loopwatch::parse::parse_security("gate2.out", text.as_bytes());
        let appended = rec
            .round(GateName::Security, result, text.as_bytes(), true)
            .expect("security round");
        cap = requests(&appended.events).into_iter().next().or(cap);
    }
    let cap = cap.expect("cap-reached");
    let rounds = lines_of(&cap, "rounds");
    for n in 1..=3 {
        assert_has(
            &rounds,
            &format!(
                "  BLOCKING 1 HIGH rust.secrets.key src/lib.rs:{n}: key in source (hint: use the environment)"
            ),
        );
    }
    assert_eq!(rounds.len(), 6, "{rounds:#?}");
    decided_on_its_evidence(root, &cap, "take-over");
}

#[test]
fn a_structural_failure_shows_the_output_with_its_failing_line_marked() {
    let (dir, rec) = started();
    let root = dir.path();
    let text = "VERIFY — VERDICT: ECARTS(1)\nCONTRACT: contract.md\nCRITERIA:\n\
  1. One — NOT-MET — wrong\n!! this line fits no section\nSCOPE: in-scope 1 files; out-of-scope: none\n\
FLOOR: clean\nPROOF: read\n";
    let first = loopwatch::parse::parse_conformity("gate1.out", text.as_bytes());
    let line = first.as_ref().expect_err("structural").line;
    assert_eq!(line, Some(5), "{first:?}");
    assert!(conformity(&rec, text).is_empty());
    let reqs = conformity(&rec, text);
    let r = &reqs[0];
    assert_eq!(r.kind, loopwatch::model::HumanGateKind::Structural);
    let marked = lines_of(r, "outputLines");
    assert_eq!(marked.len(), 8, "{marked:#?}");
    assert_eq!(marked[4], ">    5 | !! this line fits no section");
    assert_eq!(marked[3], "     4 | 1. One — NOT-MET — wrong");
    assert_eq!(r.evidence["failingLine"], 5);
    let shown = evidence_lines(r);
    assert_has(&shown, "the output, line 5 marked >:");
    assert!(
        shown
            .iter()
            .any(|l| l.starts_with("structural: ") && l.contains("line 5")),
        "the reason: {shown:#?}"
    );
    decided_on_its_evidence(root, r, "retry");
}

#[test]
fn loopwatch_decide_refuses_evidence_changed_since_the_gate_opened_unless_refresh() {
    let (dir, _rec, gate) = lib_out_of_scope();
    let root = dir.path();
    let id = &gate.id;
    // Unchanged: decided without a word about it (checked below after the edit).
    write(root, "src/lib.rs", "pub fn one() -> u32 {\n    3\n}\n");
    let (code, _, err) = decide_cli(root, &[id, "approve", "--reason", "ok"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(
            "the evidence changed since the gate opened: src/lib.rs: edited since the gate opened"
        ),
        "{err}"
    );
    assert!(err.contains("--refresh"), "{err}");
    assert!(recorded_hash(root, id).is_none(), "nothing decided");
    assert!(!evidence_file(root, id).exists());
    let (code, _, err) = decide_cli(root, &[id, "deny", "--reason", "ok", "--refresh"]);
    assert_ne!(code, Some(2), "{err}");
    assert!(
        err.contains("deciding on the evidence as it is now"),
        "{err}"
    );
    let file = std::fs::read_to_string(evidence_file(root, id)).unwrap();
    assert!(
        file.contains("refreshed before deciding: src/lib.rs: edited since the gate opened"),
        "{file}"
    );
    assert!(file.contains("  +    3"), "{file}");
    assert!(!file.contains("  +    2"), "{file}");
    assert_hashed(root, id, file.as_bytes());
}

#[test]
fn cited_lines_that_moved_were_edited_or_vanished_are_said_so_on_refresh() {
    let (dir, rec) = started();
    let root = dir.path();
    write(root, "src/a.rs", "fn a() {\n    let x = 1;\n}\n");
    write(root, "src/b.rs", "fn b() {\n    let y = 2;\n}\n");
    write(root, "src/c.rs", "fn c() {\n    let z = 3;\n}\n");
    rec.start_round(GateName::Floor, false).expect("floor");
    let finding =
        |id: &str, path: &str| unverifiable(id, path, "2", "suspicious", "needs a person");
    let appended = rec
        .findings(
            Some(1),
            vec![
                finding("F1", "src/a.rs"),
                finding("F2", "src/b.rs"),
                finding("F3", "src/c.rs"),
            ],
        )
        .expect("findings");
    let reqs = requests(&appended.events);
    // Nothing changed yet: the evidence is the one captured.
    for r in &reqs {
        let same = refreshed(root, r);
        assert_eq!(same.changes, Vec::<String>::new(), "{}", r.id);
        assert_eq!(same.evidence, r.evidence);
    }
    write(
        root,
        "src/a.rs",
        "// header\n// more\nfn a() {\n    let x = 1;\n}\n",
    );
    write(root, "src/b.rs", "fn b() {\n    let y = 20;\n}\n");
    std::fs::remove_file(root.join("src/c.rs")).unwrap();
    let moved = refreshed(root, &reqs[0]);
    assert_eq!(
        moved.changes,
        ["src/a.rs: the cited lines moved from 2 to 4"]
    );
    let mut now = reqs[0].clone();
    now.evidence = moved.evidence.clone();
    let code = lines_of(&now, "code");
    assert_eq!(code[0], "src/a.rs:4 (cited as src/a.rs:2)");
    assert_has(&code, ">    4 |     let x = 1;");
    assert_eq!(moved.evidence["cited"][0]["lines"], "4");
    let edited = refreshed(root, &reqs[1]);
    assert_eq!(
        edited.changes,
        ["src/b.rs: the cited lines 2 were edited since the gate opened"]
    );
    let gone = refreshed(root, &reqs[2]);
    assert_eq!(
        gone.changes,
        ["src/c.rs: no longer in the worktree (vanished)"]
    );
    let mut shown = reqs[2].clone();
    shown.evidence = gone.evidence.clone();
    assert_has(
        &lines_of(&shown, "code"),
        "(src/c.rs is not in the snapshot)",
    );
    // The dialog's text of a refresh says what changed, first.
    let lines = evidence_lines(&shown);
    assert_eq!(
        lines[3], "refreshed before deciding: src/c.rs: no longer in the worktree (vanished)",
        "{lines:#?}"
    );
    assert_has(&lines, "code (as it is now):");
}

#[test]
fn a_binary_file_edited_to_the_same_size_is_seen_changed_on_refresh() {
    let (dir, rec) = started();
    let root = dir.path();
    std::fs::write(root.join("logo.bin"), [0u8, 1, 2, 3]).unwrap();
    let reqs = out_of_scope(&rec, &["logo.bin"]);
    let shown = lines_of(&reqs[0], "code");
    assert!(
        shown.iter().any(|l| l.starts_with("(binary file:")),
        "{shown:#?}"
    );
    assert!(refreshed(root, &reqs[0]).changes.is_empty());
    // Same size, other bytes: its summary reads the same, git sees the change.
    std::fs::write(root.join("logo.bin"), [0u8, 9, 9, 9]).unwrap();
    let r = refreshed(root, &reqs[0]);
    assert_eq!(r.changes, ["logo.bin: edited since the gate opened"]);
    assert_eq!(
        r.evidence["code"], reqs[0].evidence["code"],
        "the same summary"
    );
    assert_ne!(
        r.evidence["at"], reqs[0].evidence["at"],
        "taken on the new snapshot"
    );
}

#[test]
fn a_vanished_out_of_scope_file_is_said_so_on_refresh() {
    let (dir, rec) = started();
    let root = dir.path();
    write(root, "tools/gen.sh", "echo gen\n");
    let reqs = out_of_scope(&rec, &["tools/gen.sh"]);
    std::fs::remove_file(root.join("tools/gen.sh")).unwrap();
    let r = refreshed(root, &reqs[0]);
    assert_eq!(
        r.changes,
        ["tools/gen.sh: no longer in the worktree (vanished)"]
    );
    assert_eq!(
        r.evidence["code"],
        serde_json::json!(["tools/gen.sh: no change against the run's base"])
    );
}

#[test]
fn without_a_snapshot_now_nothing_can_be_compared_and_no_change_is_claimed() {
    let (dir, rec) = started();
    let root = dir.path();
    write(root, "Makefile", "all:\n");
    rec.start_round(GateName::Floor, false).expect("floor");
    let mut reqs = out_of_scope(&rec, &["Makefile"]);
    let finding = unverifiable("F1", "Makefile", "1", "the target", "needs a person");
    reqs.extend(requests(
        &rec.findings(Some(1), vec![finding])
            .expect("findings")
            .events,
    ));
    assert_has(&lines_of(&reqs[0], "code"), "+all:");
    assert_has(&lines_of(&reqs[1], "code"), ">    1 | all:");
    // The repository gone (a synced copy elsewhere, git failing): nothing
    // can be compared, and nothing is said to have changed.
    std::fs::rename(root.join(".git"), root.join("git-away")).unwrap();
    write(root, "Makefile", "all:\n\techo edited\n");
    for r in &reqs {
        let fresh = refreshed(root, r);
        assert!(fresh.changes.is_empty(), "{}: {:?}", r.id, fresh.changes);
        assert_eq!(fresh.evidence, r.evidence);
    }
}
