//! Bad input and loop rules through the real binary: every case asserts the
//! exit code, the message, and that nothing was written when it is refused.

mod support;

use std::process::{Command, Output};

use loopwatch::journal::{Pipeline, PipelineLock, read_all};
use loopwatch::model::{State, fold};

use support::code::git;
use support::worktree::{Worktree, ask_unverifiable, assert_has, decide, record_gate};

/// A worktree holding the loop's contract.
fn wt() -> Worktree {
    Worktree::from_fixtures("loop", Some(&["contract.md"]))
}

/// `record run-start` with three rounds per gate.
fn start(w: &Worktree) {
    w.start_run_with(&["--max-rounds", "3"]);
}

/// The fold of the worktree's journal.
fn folded(w: &Worktree) -> State {
    fold(
        &read_all(&w.root.join(".pipeline/events.jsonl"))
            .unwrap()
            .events,
    )
}

/// `ask unverifiable-finding` about F4: opens a manual finding gate.
const ASK_FINDING: [&str; 6] = [
    "ask",
    "unverifiable-finding",
    "--subject",
    "F4",
    "--summary",
    "awk is slow on a million lines",
];

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn truncated_verdict_json_names_file_line_and_column() {
    let w = wt();
    start(&w);
    let before = w.journal();
    let f = w.write(
        "verdicts.json",
        "[\n  {\"id\": \"F1\", \"verdict\": \"VERIFIED\",\n",
    );
    let o = w.expect(&["record", "findings", "--file", &f], 2);
    let e = stderr(&o);
    assert!(e.starts_with("loopwatch: verdicts.json:3:"), "{e}");
    assert_eq!(w.journal(), before, "nothing written");
}

#[test]
fn wrong_types_in_the_journal_are_problems_with_their_line() {
    let w = wt();
    start(&w);
    let mut j = w.journal();
    j.extend_from_slice(b"{\"v\":1,\"seq\":3,\"at\":\"2026-01-01T00:00:00Z\",\"type\":\"gate.started\",\"gate\":\"floor\",\"iteration\":\"one\",\"round\":1}\n");
    j.extend_from_slice(b"{\"v\":1,\"seq\":5,\"at\":\"2026-01-01T00:00:00Z\",\"type\":\"note\",\"text\":\"after a gap\"}\n");
    j.extend_from_slice(
        b"{\"v\":1,\"seq\":6,\"at\":\"2026-01-01T00:00:00Z\",\"type\":\"note\",\"te",
    );
    std::fs::write(w.root.join(".pipeline/events.jsonl"), &j).unwrap();
    let o = w.expect(&["status"], 0);
    let out = stdout(&o);
    assert!(
        out.contains(
            "problem: events.jsonl:3: gate.started: invalid type: string \"one\", expected u32"
        ),
        "{out}"
    );
    assert_has(&out, "problem: events.jsonl:4: seq gap: 5 follows 2");
    // The partial last line is a write in progress: ignored, not a problem.
    assert_eq!(out.matches("problem:").count(), 2, "{out}");
    let v = w.expect(&["validate", ".pipeline/events.jsonl"], 1);
    let vout = stdout(&v);
    assert_has(
        &vout,
        ".pipeline/events.jsonl:3: /iteration: \"one\" is not of type \"integer\"",
    );
    assert_has(
        &vout,
        ".pipeline/events.jsonl:4: seq 5 follows 3 (expected 4)",
    );
    assert_has(&vout, ".pipeline/events.jsonl:5: last line has no newline");
    // The next writer repairs the partial line before appending.
    w.expect(&["record", "note", "repaired"], 0);
    let text = String::from_utf8(w.journal()).unwrap();
    assert!(
        text.ends_with("\"type\":\"note\",\"text\":\"repaired\"}\n"),
        "{text}"
    );
    assert!(!text.contains("\"te\n"));
}

#[test]
fn a_lock_held_by_another_process_is_named_and_nothing_is_written() {
    let w = wt();
    start(&w);
    let before = w.journal();
    let p = Pipeline::at(w.root.join(".pipeline"));
    let held = PipelineLock::acquire(&p.lock_path(), std::time::Duration::from_secs(1)).unwrap();
    let o = w.expect(&["record", "note", "blocked"], 2);
    let e = stderr(&o);
    let want = format!(
        "is held by pid {} and was not released within",
        std::process::id()
    );
    assert!(e.contains(".pipeline/lock") && e.contains(&want), "{e}");
    assert_eq!(w.journal(), before);
    drop(held);
    assert_eq!(w.run(&["record", "note", "now"]).status.code(), Some(0));
}

#[test]
fn structural_failures_retry_once_then_ask_a_person() {
    let w = wt();
    start(&w);
    w.lw(&["gate0", "run", "contract.md"], 0);
    let bad = w.write(
        "no-proof.txt",
        "VERIFY — VERDICT: CONFORME\nCONTRACT: contract.md\nCRITERIA:\n  1. The banner script prints the greeting — MET — ok\nSCOPE: in-scope 1 files; out-of-scope: none\nFLOOR: clean\n",
    );
    let o = w.expect(&record_gate("conformity", &bad), 12);
    assert_has(&stderr(&o), "structural failure: ");
    assert!(stdout(&o).ends_with("NEXT: retry\n"));
    let o = w.expect(&record_gate("conformity", &bad), 10);
    assert_has(
        &stdout(&o),
        "human gate opened: hg-1-conformity-1 (structural)",
    );
    let two = w.write(
        "two.txt",
        "VERIFY — VERDICT: CONFORME\nVERIFY — VERDICT: ECARTS(1)\n",
    );
    // While a person is asked, gates wait.
    let o = w.expect(&record_gate("conformity", &two), 2);
    assert_has(&stderr(&o), "await hg-1-conformity-1 first");
    w.expect(
        &decide("hg-1-conformity-1", "retry", "verifier restarted"),
        12,
    );
    w.expect(&record_gate("conformity", &two), 12);
    let state = folded(&w);
    let rounds: Vec<_> = state.review_iterations[0]
        .gates
        .iter()
        .filter_map(|g| g.structural.clone())
        .collect();
    assert_eq!(rounds.len(), 3);
    assert_eq!(
        rounds[0],
        "conforme-without-proof: line 1: CONFORME without a PROOF line; expected `PROOF: <text>` after the verdict"
    );
    assert_eq!(
        rounds[2],
        "duplicate-verdict: line 2: second `VERIFY — VERDICT:` line (the first is line 1); expected exactly one"
    );
}

#[test]
fn the_third_failed_floor_round_opens_cap_reached() {
    let w = wt();
    let failing = "# CONTRACT — x\n## ACCEPTANCE CRITERIA\n1. fails\n   CHECK: echo nope\n   EXPECT: YES\n   EVIDENCE: pending\n";
    w.write("contract.md", failing);
    start(&w);
    for round in 1..=3 {
        let o = w.expect(&["gate0", "run", "contract.md"], 2);
        assert!(
            stdout(&o).ends_with("GATES — VERDICT: UNMET(1)\n"),
            "stdout is the floor's own"
        );
        let e = stderr(&o);
        if round < 3 {
            assert!(e.ends_with("NEXT: dev\n"), "round {round}: {e}");
            w.lw(&["record", "dev", "--input", "criterion 1"], 0);
        } else {
            assert!(
                e.contains(
                    "human gate opened: hg-3-floor-1 (cap-reached) GATE 0 floor used 3 of 3 rounds"
                ),
                "{e}"
            );
            assert!(e.ends_with("NEXT: human hg-3-floor-1\n"), "{e}");
        }
    }
    w.expect(&decide("hg-3-floor-1", "extend", "one more try"), 11);
    let s = stdout(&w.run(&["status", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&s).unwrap();
    assert_eq!(v["caps"]["floor"], 4);
    assert_eq!(v["counters"]["floor"], 3);
}

#[test]
fn decisions_are_checked_before_anything_is_written() {
    let w = wt();
    start(&w);
    let o = w.expect(&ask_unverifiable("F9", "cannot check"), 10);
    assert_eq!(stdout(&o).lines().next(), Some("hg-1-manual-1"));
    let before = w.journal();
    for (args, msg) in [
        (
            vec!["decide", "hg-1-manual-1", "accept", "--reason", "  "],
            "a decision needs a non-empty reason",
        ),
        (
            vec!["decide", "hg-1-manual-1", "approve", "--reason", "x"],
            "approve is not an option of hg-1-manual-1 (unverifiable): its options are accept — checked by hand: the loop goes on; reject — stop the run: NOT-CONFORMANT",
        ),
        (
            vec!["decide", "hg-9-manual-1", "accept", "--reason", "x"],
            "no human gate hg-9-manual-1 in this pipeline",
        ),
    ] {
        let o = w.expect(&args, 2);
        assert_eq!(stderr(&o).trim_end(), format!("loopwatch: {msg}"));
        assert_eq!(w.journal(), before);
    }
    let o = w.expect(&["await", "hg-9-manual-1"], 2);
    assert!(stderr(&o).contains("no human gate hg-9-manual-1"));
    // A finding gate takes no criterion's option: the refusal lists its
    // own, each with what it does.
    let o = w.expect(&ASK_FINDING, 10);
    assert_eq!(stdout(&o).lines().next(), Some("hg-1-manual-2"));
    let before = w.journal();
    let o = w.expect(&["decide", "hg-1-manual-2", "reject", "--reason", "x"], 2);
    assert_eq!(
        stderr(&o).trim_end(),
        "loopwatch: reject is not an option of hg-1-manual-2 (unverifiable-finding): its options are \
         dismiss — not a problem here: the loop goes on; reported as dismissed, with your reason; \
         fix — treat it as real: to the developer as a gap, with your reason; \
         stop — stop the run: NOT-CONFORMANT"
    );
    assert_eq!(w.journal(), before);
}

#[test]
fn status_says_what_each_option_of_an_open_gate_does() {
    let w = wt();
    start(&w);
    w.expect(&ASK_FINDING, 10);
    let o = w.expect(&["status"], 10);
    let text = stdout(&o);
    assert!(
        text.contains(
            "  hg-1-manual-1  unverifiable-finding · by hand  awk is slow on a million lines\n\
             \x20   dismiss — not a problem here: the loop goes on; reported as dismissed, with your reason\n\
             \x20   fix — treat it as real: to the developer as a gap, with your reason\n\
             \x20   stop — stop the run: NOT-CONFORMANT\n"
        ),
        "{text}"
    );
    let o = w.expect(&["status", "--json"], 10);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        v["waiting"],
        serde_json::json!([{
            "id": "hg-1-manual-1",
            "kind": "unverifiable-finding",
            "origin": "by hand",
            "summary": "awk is slow on a million lines",
            "options": [
                {"decision": "dismiss", "key": "d", "does": "not a problem here: the loop goes on; reported as dismissed, with your reason"},
                {"decision": "fix", "key": "f", "does": "treat it as real: to the developer as a gap, with your reason"},
                {"decision": "stop", "key": "s", "does": "stop the run: NOT-CONFORMANT"},
            ],
        }])
    );
    // `decide --help` lists every kind's options with the same words.
    let o = w.expect(&["decide", "--help"], 0);
    let help = stdout(&o);
    for line in [
        "  unverifiable-finding",
        "    stop            stop the run: NOT-CONFORMANT",
        "    deny            back to the developer as a gap to close",
    ] {
        assert!(help.contains(line), "{line:?} not in\n{help}");
    }
}

#[test]
fn status_without_a_pipeline_exits_3_and_says_where_it_looked() {
    let d = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_loopwatch"))
        .arg("status")
        .current_dir(d.path())
        .env_remove("LOOPWATCH_PIPELINE")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3));
    assert!(
        stderr(&o).starts_with("loopwatch: no pipeline (looked in "),
        "{}",
        stderr(&o)
    );
}

#[test]
fn completions_and_man_are_generated() {
    let d = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_loopwatch"))
            .args(args)
            .current_dir(d.path())
            .output()
            .unwrap()
    };
    let bash = run(&["completions", "bash"]);
    assert_eq!(bash.status.code(), Some(0));
    assert!(stdout(&bash).contains("_loopwatch()"));
    let man = run(&["man"]);
    assert!(
        stdout(&man).starts_with(".ie \\n(.g .ds Aq"),
        "{}",
        &stdout(&man)[..60.min(stdout(&man).len())]
    );
    let help = run(&["record", "gate", "--help"]);
    assert_has(&stdout(&help), "13  stop");
}

#[test]
fn an_out_of_scope_gate_records_the_files_hunks_and_a_structural_one_the_output() {
    let w = wt();
    std::fs::remove_dir(w.root.join(".git")).unwrap();
    git(&w.root, &["init", "-q"]);
    git(&w.root, &["commit", "-q", "--allow-empty", "-m", "base"]);
    w.write("Makefile", "all:\n\techo hi\n");
    git(&w.root, &["add", "Makefile"]);
    w.start_run_with(&["--diff", "HEAD"]);
    w.lw(&["gate0", "run", "contract.md"], 0);
    let out = w.write(
        "ecarts.txt",
        "VERIFY — VERDICT: ECARTS(1)\nCONTRACT: contract.md\nCRITERIA:\n  1. The banner script prints the greeting — MET — ok\n  2. The banner reads well — MET — ok\nSCOPE: in-scope 1 files; out-of-scope: Makefile\nFLOOR: clean\nPROOF: read 2 files\n",
    );
    w.lw(&record_gate("conformity", &out), 10);
    let state = folded(&w);
    let gate = state.human_gate("hg-1-conformity-1").unwrap();
    // The file's hunks against the run's base, captured when the gate opened.
    let code: Vec<&str> = gate.request.evidence["code"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l.as_str())
        .collect();
    assert_eq!(
        code[0],
        "Makefile: changed against HEAD, the run's diff base"
    );
    assert!(code.contains(&"+++ b/Makefile"), "{code:#?}");
    assert!(code.contains(&"+all:"), "{code:#?}");
    assert!(code.contains(&"+\techo hi"), "{code:#?}");

    // A structural failure twice: the person sees the head of the output.
    w.run(&decide("hg-1-conformity-1", "approve", "build glue"));
    let w2 = wt();
    start(&w2);
    w2.lw(&["gate0", "run", "contract.md"], 0);
    let junk = w2.write("junk.txt", "I could not finish the review.\nsorry\n");
    w2.lw(&record_gate("conformity", &junk), 12);
    w2.lw(&record_gate("conformity", &junk), 10);
    let state = folded(&w2);
    let gate = state.open_human_gates().next().unwrap();
    assert_eq!(
        gate.request.evidence["outputLines"],
        serde_json::json!(["     1 | I could not finish the review.", "     2 | sorry"])
    );
}
