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
