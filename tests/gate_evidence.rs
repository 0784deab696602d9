//! Every human gate carries its evidence as it was when the gate opened:
//! an out-of-scope file's hunks against the run's base (binary and huge
//! files summarised, a vanished file said so), an UNVERIFIABLE finding's
//! cited lines from its iteration's snapshot. The decision saves the text
//! shown as `.pipeline/evidence/<gate-id>.txt` and its `evidenceHash` is
//! the sha256 of exactly those bytes, from `loopwatch decide` and from the
//! TUI's path (`Recorder::decide_on`).

mod code_support;

use code_support::{repo, write};
use loopwatch::journal::Pipeline;
use loopwatch::model::event::{HumanDecision, HumanRequest, RunInfo};
use loopwatch::model::{
    Decision, EventBody, Finding, FindingVerdict, GateName, Scope, Verdict, VerdictKind,
};
use loopwatch::parse::GateOutput;
use loopwatch::recorder::Recorder;
use loopwatch::tui::evidence::{evidence_lines, evidence_text};

fn started(root: &std::path::Path) -> Recorder {
    let rec = Recorder::new(Pipeline::at(root.join(".pipeline")));
    let run = RunInfo {
        id: "2026-12-01-evidence".into(),
        ..RunInfo::default()
    };
    rec.run_start(run, false).expect("run start");
    rec
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

fn code(r: &HumanRequest) -> Vec<String> {
    r.evidence["code"]
        .as_array()
        .expect("code captured")
        .iter()
        .map(|l| l.as_str().expect("a line").to_string())
        .collect()
}

fn decision(id: &str) -> HumanDecision {
    HumanDecision {
        id: id.into(),
        decision: Decision::Deny,
        reason: "remove it".into(),
        by: "tester@host".into(),
        evidence_hash: String::new(),
        contract_edit: None,
        extra: Default::default(),
    }
}

fn recorded_hash(root: &std::path::Path, id: &str) -> String {
    let batch = loopwatch::journal::read_all(&root.join(".pipeline/events.jsonl")).expect("read");
    batch
        .events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::HumanDecided(d) if d.id == id => Some(d.evidence_hash.clone()),
            _ => None,
        })
        .expect("decided")
}

#[test]
fn an_out_of_scope_gate_shows_the_files_hunks_captured_when_it_opened() {
    let dir = repo();
    let root = dir.path();
    let rec = started(root);
    write(root, "src/lib.rs", "pub fn one() -> u32 {\n    2\n}\n");
    let reqs = out_of_scope(&rec, &["src/lib.rs"]);
    assert_eq!(reqs.len(), 1);
    let lines = code(&reqs[0]);
    assert!(lines.iter().any(|l| l == "-    1"), "{lines:#?}");
    assert!(lines.iter().any(|l| l == "+    2"), "{lines:#?}");
    assert!(
        lines.iter().any(|l| l.starts_with("@@ -1,3 +1,3 @@")),
        "{lines:#?}"
    );
    assert!(reqs[0].evidence.get("diffStat").is_none());
    // The dialog shows them.
    let shown = evidence_lines(&reqs[0]);
    assert!(shown.iter().any(|l| l == "  +    2"), "{shown:#?}");
    // Edited again after the gate opened: the gate still holds what it opened on.
    write(root, "src/lib.rs", "pub fn one() -> u32 {\n    3\n}\n");
    let state = loopwatch::journal::snapshot(&Pipeline::at(root.join(".pipeline")))
        .expect("snapshot")
        .expect("state");
    let gate = state.state.human_gate(&reqs[0].id).expect("gate");
    assert_eq!(code(&gate.request), lines);
}

#[test]
fn binary_huge_and_vanished_files_are_summarised_or_said_so() {
    let dir = repo();
    let root = dir.path();
    write(root, "data.bin", "seed\n");
    write(root, "big.txt", "seed\n");
    write(root, "gone.txt", "here\n");
    let rec = started(root);
    std::fs::write(root.join("data.bin"), [0u8, 1, 2, 0, 255, 0]).unwrap();
    let huge: String = (0..6_000).map(|i| format!("line {i}\n")).collect();
    write(root, "big.txt", &huge);
    std::fs::remove_file(root.join("gone.txt")).unwrap();
    let reqs = out_of_scope(&rec, &["data.bin", "big.txt", "gone.txt", "untouched.txt"]);
    let by = |p: &str| code(reqs.iter().find(|r| r.subject == p).expect(p));
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
    assert!(gone.iter().any(|l| l == "-here"), "{gone:#?}");
    let none = by("untouched.txt");
    assert_eq!(none, ["untouched.txt: no change against the run's base"]);
}

#[test]
fn an_unverifiable_finding_shows_its_cited_lines_from_its_iteration() {
    let dir = repo();
    let root = dir.path();
    let rec = started(root);
    write(root, "src/lib.rs", "pub fn one() -> u32 {\n    7\n}\n");
    rec.start_round(GateName::Floor, false).expect("floor");
    // Edited after the iteration's snapshot: the excerpt is the snapshot's.
    write(root, "src/lib.rs", "pub fn one() -> u32 {\n    8\n}\n");
    let finding = Finding {
        id: "F1".into(),
        severity: "high".into(),
        path: "src/lib.rs".into(),
        lines: "2".into(),
        claim: "the constant is wrong".into(),
        verdict: FindingVerdict::Unverifiable,
        evidence: String::new(),
        note: "needs the spec".into(),
        extra: Default::default(),
    };
    let appended = rec.findings(Some(1), vec![finding]).expect("findings");
    let reqs = requests(&appended.events);
    let lines = code(&reqs[0]);
    assert_eq!(lines[0], "src/lib.rs:2");
    assert!(lines.iter().any(|l| l == ">    2 |     7"), "{lines:#?}");
    assert!(
        lines.iter().any(|l| l == "     1 | pub fn one() -> u32 {"),
        "{lines:#?}"
    );
    let shown = evidence_lines(&reqs[0]);
    assert!(
        shown.iter().any(|l| l.contains("note: needs the spec")),
        "{shown:#?}"
    );
}

#[test]
fn loopwatch_decide_saves_the_evidence_shown_and_hashes_exactly_it() {
    let dir = repo();
    let root = dir.path();
    let rec = started(root);
    write(root, "src/lib.rs", "pub fn one() -> u32 {\n    2\n}\n");
    let reqs = out_of_scope(&rec, &["src/lib.rs"]);
    let id = reqs[0].id.clone();
    let out = assert_cmd::Command::cargo_bin("loopwatch")
        .unwrap()
        .current_dir(root)
        .env_remove("LOOPWATCH_PIPELINE")
        .args(["decide", &id, "deny", "--reason", "out of scope"])
        .output()
        .unwrap();
    // The exit code is the NEXT action's; the decision is what matters here.
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("decision saved"),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = std::fs::read(root.join(format!(".pipeline/evidence/{id}.txt"))).expect("file");
    assert_eq!(
        String::from_utf8(file.clone()).unwrap(),
        evidence_text(&evidence_lines(&reqs[0])),
        "the file holds exactly what the dialog shows"
    );
    assert!(String::from_utf8_lossy(&file).contains("+    2"));
    assert_eq!(
        recorded_hash(root, &id),
        loopwatch::util::sha256_tagged(&file)
    );
}

#[test]
fn a_decision_from_the_dialog_saves_its_text_and_hashes_it() {
    let dir = repo();
    let root = dir.path();
    let rec = started(root);
    write(root, "src/lib.rs", "pub fn one() -> u32 {\n    2\n}\n");
    let reqs = out_of_scope(&rec, &["src/lib.rs"]);
    let id = reqs[0].id.clone();
    let text = evidence_text(&evidence_lines(&reqs[0]));
    rec.decide_on(decision(&id), text.as_bytes())
        .expect("decide");
    let file = std::fs::read(root.join(format!(".pipeline/evidence/{id}.txt"))).expect("file");
    assert_eq!(file, text.as_bytes());
    assert_eq!(
        recorded_hash(root, &id),
        loopwatch::util::sha256_tagged(&file)
    );
    // A second decision is refused and leaves the file as it was.
    assert!(rec.decide_on(decision(&id), b"other\n").is_err());
    assert_eq!(
        std::fs::read(root.join(format!(".pipeline/evidence/{id}.txt"))).unwrap(),
        text.as_bytes()
    );
}

#[cfg(unix)]
#[test]
fn the_evidence_file_is_never_written_through_a_link() {
    let dir = repo();
    let root = dir.path();
    let rec = started(root);
    write(root, "src/lib.rs", "pub fn one() -> u32 {\n    2\n}\n");
    let reqs = out_of_scope(&rec, &["src/lib.rs"]);
    let id = reqs[0].id.clone();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.join(".pipeline/evidence")).unwrap();
    let target = outside.path().join("victim");
    std::fs::write(&target, "keep\n").unwrap();
    std::os::unix::fs::symlink(&target, root.join(format!(".pipeline/evidence/{id}.txt"))).unwrap();
    let err = rec
        .decide_on(decision(&id), b"text\n")
        .expect_err("refused");
    assert!(err.to_string().contains(&format!("{id}.txt")), "{err}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
    assert!(
        recorded_hash_opt(root, &id).is_none(),
        "no decision without its file"
    );
}

fn recorded_hash_opt(root: &std::path::Path, id: &str) -> Option<String> {
    let batch = loopwatch::journal::read_all(&root.join(".pipeline/events.jsonl")).ok()?;
    batch.events.iter().find_map(|e| match &e.body {
        EventBody::HumanDecided(d) if d.id == id => Some(d.evidence_hash.clone()),
        _ => None,
    })
}

/// A run on `contract.md` (written first) in a fresh repository.
fn started_on_contract(root: &std::path::Path, contract: &str) -> Recorder {
    write(root, "contract.md", contract);
    let rec = Recorder::new(Pipeline::at(root.join(".pipeline")));
    let run = RunInfo {
        id: "2026-12-01-kinds".into(),
        contract: "contract.md".into(),
        ..RunInfo::default()
    };
    rec.run_start(run, false).expect("run start");
    rec
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

fn lines_of(r: &HumanRequest, key: &str) -> Vec<String> {
    r.evidence[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {}", r.evidence))
        .iter()
        .map(|l| l.as_str().expect("a line").to_string())
        .collect()
}

/// `loopwatch decide` in `root`; returns (exit code, stderr).
fn decide_cli(root: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let out = assert_cmd::Command::cargo_bin("loopwatch")
        .unwrap()
        .current_dir(root)
        .env_remove("LOOPWATCH_PIPELINE")
        .arg("decide")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Decides `r` with `loopwatch decide` and checks the evidence file holds
/// exactly what the dialog shows and the decision hashes exactly its bytes.
fn decided_on_its_evidence(root: &std::path::Path, r: &HumanRequest, option: &str) {
    let (code, err) = decide_cli(root, &[&r.id, option, "--reason", "read it"]);
    assert_ne!(code, Some(2), "{}: {err}", r.id);
    let file = std::fs::read(root.join(format!(".pipeline/evidence/{}.txt", r.id)))
        .unwrap_or_else(|e| panic!("{}: no evidence file: {e}", r.id));
    assert_eq!(
        String::from_utf8(file.clone()).unwrap(),
        evidence_text(&evidence_lines(r)),
        "{}: the file holds exactly what the dialog shows",
        r.id
    );
    assert_eq!(
        recorded_hash(root, &r.id),
        loopwatch::util::sha256_tagged(&file),
        "{}",
        r.id
    );
}

#[test]
fn an_unverifiable_criterion_shows_the_code_its_row_cites_or_says_it_cites_none() {
    let dir = repo();
    let root = dir.path();
    let rec = started(root);
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
    assert!(cited.iter().any(|l| l == ">    2 |     7"), "{cited:#?}");
    assert!(
        cited.iter().any(|l| l == "     1 | pub fn one() -> u32 {"),
        "{cited:#?}"
    );
    let shown = evidence_lines(&reqs[0]);
    assert!(
        shown
            .iter()
            .any(|l| l == "  detail: the constant at src/lib.rs:2 needs the spec"),
        "{shown:#?}"
    );
    assert!(shown.iter().any(|l| l == "  >    2 |     7"), "{shown:#?}");
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
    let rec = started_on_contract(root, CONTRACT);
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
    assert!(
        shown
            .iter()
            .any(|l| l == "criterion 2 ABANDONED: Export streams rows"),
        "the verifier's row: {shown:#?}"
    );
    assert!(
        shown
            .iter()
            .any(|l| l == "the contract (as read when the gate opened):"),
        "{shown:#?}"
    );
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
    let (code, err) = decide_cli(root, &[&r.id, "accept-partial", "--reason", "ok"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(
            "the contract's criterion 2 or its ABANDON line changed since the gate opened"
        ),
        "{err}"
    );
    assert!(recorded_hash_opt(root, &r.id).is_none());
    let (code, err) = decide_cli(
        root,
        &[&r.id, "accept-partial", "--reason", "ok", "--refresh"],
    );
    assert_ne!(code, Some(2), "{err}");
    let file =
        std::fs::read_to_string(root.join(format!(".pipeline/evidence/{}.txt", r.id))).unwrap();
    assert!(
        file.contains("  (the contract has no ABANDON line for criterion 2)"),
        "{file}"
    );
    assert!(
        file.contains("refreshed before deciding: the contract's criterion 2"),
        "{file}"
    );
    assert_eq!(
        recorded_hash(root, &r.id),
        loopwatch::util::sha256_tagged(file.as_bytes())
    );
}

#[test]
fn a_cap_shows_the_gates_gaps_over_all_its_rounds() {
    use loopwatch::model::{FloorRow, FloorState};
    let dir = repo();
    let root = dir.path();
    let rec = started(root);
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
    assert!(
        shown
            .iter()
            .any(|l| l == "rounds of the gate, oldest first:"),
        "{shown:#?}"
    );
    decided_on_its_evidence(root, &cap, "extend");
}

#[test]
fn a_security_cap_shows_the_blocking_table_round_by_round() {
    let dir = repo();
    let root = dir.path();
    let rec = started(root);
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
        assert!(
            rounds.iter().any(|l| l
                == &format!("  BLOCKING 1 HIGH rust.secrets.key src/lib.rs:{n}: key in source (hint: use the environment)")),
            "{rounds:#?}"
        );
    }
    assert_eq!(rounds.len(), 6, "{rounds:#?}");
    decided_on_its_evidence(root, &cap, "take-over");
}

#[test]
fn a_structural_failure_shows_the_output_with_its_failing_line_marked() {
    let dir = repo();
    let root = dir.path();
    let rec = started(root);
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
    assert!(
        shown.iter().any(|l| l == "the output, line 5 marked >:"),
        "{shown:#?}"
    );
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
    let dir = repo();
    let root = dir.path();
    let rec = started(root);
    write(root, "src/lib.rs", "pub fn one() -> u32 {\n    2\n}\n");
    let reqs = out_of_scope(&rec, &["src/lib.rs"]);
    let id = reqs[0].id.clone();
    // Unchanged: decided without a word about it (checked below after the edit).
    write(root, "src/lib.rs", "pub fn one() -> u32 {\n    3\n}\n");
    let (code, err) = decide_cli(root, &[&id, "approve", "--reason", "ok"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(
            "the evidence changed since the gate opened: src/lib.rs: edited since the gate opened"
        ),
        "{err}"
    );
    assert!(err.contains("--refresh"), "{err}");
    assert!(recorded_hash_opt(root, &id).is_none(), "nothing decided");
    assert!(!root.join(format!(".pipeline/evidence/{id}.txt")).exists());
    let (code, err) = decide_cli(root, &[&id, "deny", "--reason", "ok", "--refresh"]);
    assert_ne!(code, Some(2), "{err}");
    assert!(
        err.contains("deciding on the evidence as it is now"),
        "{err}"
    );
    let file = std::fs::read_to_string(root.join(format!(".pipeline/evidence/{id}.txt"))).unwrap();
    assert!(
        file.contains("refreshed before deciding: src/lib.rs: edited since the gate opened"),
        "{file}"
    );
    assert!(file.contains("  +    3"), "{file}");
    assert!(!file.contains("  +    2"), "{file}");
    assert_eq!(
        recorded_hash(root, &id),
        loopwatch::util::sha256_tagged(file.as_bytes())
    );
}

#[test]
fn cited_lines_that_moved_were_edited_or_vanished_are_said_so_on_refresh() {
    use loopwatch::recorder::evidence::{Sources, refresh};
    let dir = repo();
    let root = dir.path();
    let rec = started(root);
    write(root, "src/a.rs", "fn a() {\n    let x = 1;\n}\n");
    write(root, "src/b.rs", "fn b() {\n    let y = 2;\n}\n");
    write(root, "src/c.rs", "fn c() {\n    let z = 3;\n}\n");
    rec.start_round(GateName::Floor, false).expect("floor");
    let finding = |id: &str, path: &str| Finding {
        id: id.into(),
        severity: "high".into(),
        path: path.into(),
        lines: "2".into(),
        claim: "suspicious".into(),
        verdict: FindingVerdict::Unverifiable,
        evidence: String::new(),
        note: "needs a person".into(),
        extra: Default::default(),
    };
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
    let pipeline = Pipeline::at(root.join(".pipeline"));
    let sources = Sources::default();
    // Nothing changed yet: the evidence is the one captured.
    for r in &reqs {
        let same = refresh(&pipeline, &sources, r);
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
    let moved = refresh(&pipeline, &sources, &reqs[0]);
    assert_eq!(
        moved.changes,
        ["src/a.rs: the cited lines moved from 2 to 4"]
    );
    let code: Vec<&str> = moved.evidence["code"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l.as_str())
        .collect();
    assert_eq!(code[0], "src/a.rs:4 (cited as src/a.rs:2)");
    assert!(code.contains(&">    4 |     let x = 1;"), "{code:#?}");
    assert_eq!(moved.evidence["cited"][0]["lines"], "4");
    let edited = refresh(&pipeline, &sources, &reqs[1]);
    assert_eq!(
        edited.changes,
        ["src/b.rs: the cited lines 2 were edited since the gate opened"]
    );
    let gone = refresh(&pipeline, &sources, &reqs[2]);
    assert_eq!(
        gone.changes,
        ["src/c.rs: no longer in the worktree (vanished)"]
    );
    assert!(
        gone.evidence["code"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l == "(src/c.rs is not in the snapshot)"),
        "{}",
        gone.evidence
    );
    // The dialog's text of a refresh says what changed, first.
    let mut shown = reqs[2].clone();
    shown.evidence = gone.evidence.clone();
    let lines = evidence_lines(&shown);
    assert_eq!(
        lines[3], "refreshed before deciding: src/c.rs: no longer in the worktree (vanished)",
        "{lines:#?}"
    );
    assert!(
        lines.iter().any(|l| l == "code (as it is now):"),
        "{lines:#?}"
    );
}

#[test]
fn a_binary_file_edited_to_the_same_size_is_seen_changed_on_refresh() {
    use loopwatch::recorder::evidence::{Sources, refresh};
    let dir = repo();
    let root = dir.path();
    let rec = started(root);
    std::fs::write(root.join("logo.bin"), [0u8, 1, 2, 3]).unwrap();
    let reqs = out_of_scope(&rec, &["logo.bin"]);
    let shown = code(&reqs[0]);
    assert!(
        shown.iter().any(|l| l.starts_with("(binary file:")),
        "{shown:#?}"
    );
    let pipeline = Pipeline::at(root.join(".pipeline"));
    assert!(
        refresh(&pipeline, &Sources::default(), &reqs[0])
            .changes
            .is_empty()
    );
    // Same size, other bytes: its summary reads the same, git sees the change.
    std::fs::write(root.join("logo.bin"), [0u8, 9, 9, 9]).unwrap();
    let r = refresh(&pipeline, &Sources::default(), &reqs[0]);
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
    use loopwatch::recorder::evidence::{Sources, refresh};
    let dir = repo();
    let root = dir.path();
    let rec = started(root);
    write(root, "tools/gen.sh", "echo gen\n");
    let reqs = out_of_scope(&rec, &["tools/gen.sh"]);
    std::fs::remove_file(root.join("tools/gen.sh")).unwrap();
    let pipeline = Pipeline::at(root.join(".pipeline"));
    let r = refresh(&pipeline, &Sources::default(), &reqs[0]);
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
    use loopwatch::recorder::evidence::{Sources, refresh};
    let dir = repo();
    let root = dir.path();
    let rec = started(root);
    write(root, "Makefile", "all:\n");
    rec.start_round(GateName::Floor, false).expect("floor");
    let mut reqs = out_of_scope(&rec, &["Makefile"]);
    let finding = Finding {
        id: "F1".into(),
        severity: "high".into(),
        path: "Makefile".into(),
        lines: "1".into(),
        claim: "the target".into(),
        verdict: FindingVerdict::Unverifiable,
        evidence: String::new(),
        note: "needs a person".into(),
        extra: Default::default(),
    };
    reqs.extend(requests(
        &rec.findings(Some(1), vec![finding])
            .expect("findings")
            .events,
    ));
    assert!(code(&reqs[0]).iter().any(|l| l == "+all:"), "{reqs:#?}");
    assert!(
        code(&reqs[1]).iter().any(|l| l == ">    1 | all:"),
        "{reqs:#?}"
    );
    // The repository gone (a synced copy elsewhere, git failing): nothing
    // can be compared, and nothing is said to have changed.
    std::fs::rename(root.join(".git"), root.join("git-away")).unwrap();
    write(root, "Makefile", "all:\n\techo edited\n");
    let pipeline = Pipeline::at(root.join(".pipeline"));
    for r in &reqs {
        let fresh = refresh(&pipeline, &Sources::default(), r);
        assert!(fresh.changes.is_empty(), "{}: {:?}", r.id, fresh.changes);
        assert_eq!(fresh.evidence, r.evidence);
    }
}
