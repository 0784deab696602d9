//! Edges of numbers, ranges and empty values, through the real binary: each
//! is refused with a clear message and exit 2 (never a panic, exit 101),
//! and nothing is written; `validate` and the readers agree on what a
//! journal line is worth; a journal over 16 MiB is validated line by line;
//! the report names the triage files it could not read.

use std::io::Write;
use std::process::Output;

#[allow(dead_code)]
#[path = "support/worktree.rs"]
mod worktree;

use worktree::{Worktree, ask_unverifiable, assert_has, started_loop as wt, text};

/// Runs `args`, expects exit 2 with `message` in stderr, and that the
/// journal did not change.
fn refused(w: &Worktree, args: &[&str], message: &str) -> Output {
    let before = w.journal();
    let o = w.expect(args, 2);
    assert!(
        text(&o.stderr).contains(message),
        "{args:?}: {}",
        text(&o.stderr)
    );
    assert_eq!(w.journal(), before, "{args:?} wrote to the journal");
    o
}

fn note_line(v: &str, seq: &str) -> String {
    format!(
        "{{\"v\":{v},\"seq\":{seq},\"at\":\"2026-01-01T00:00:00Z\",\"type\":\"note\",\"text\":\"n\"}}\n"
    )
}

#[test]
fn the_last_seq_refuses_the_next_append_instead_of_wrapping() {
    let w = wt();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(w.root.join(".pipeline/events.jsonl"))
        .unwrap();
    f.write_all(note_line("1", &u64::MAX.to_string()).as_bytes())
        .unwrap();
    drop(f);
    refused(
        &w,
        &["record", "note", "x"],
        "the last seq is 18446744073709551615: no further event",
    );
}

#[test]
fn validate_agrees_with_the_readers_on_huge_seqs_and_other_versions() {
    let w = wt();
    let mut j = w.journal();
    j.extend_from_slice(note_line("1", "18446744073709551616").as_bytes());
    j.extend_from_slice(note_line("2", "3").as_bytes());
    std::fs::write(w.root.join(".pipeline/events.jsonl"), &j).unwrap();
    let status = w.lw(&["status"], 0);
    let v = w.expect(&["validate", ".pipeline/events.jsonl"], 1);
    let vout = text(&v.stdout);
    assert_has(
        &status,
        "problem: events.jsonl:3: \"seq\" must be a non-negative integer",
    );
    assert_has(
        &vout,
        "events.jsonl:3: \"seq\" must be a non-negative integer",
    );
    assert_has(
        &status,
        "problem: events.jsonl:4: format version 2 is not 1",
    );
    assert_has(
        &vout,
        "events.jsonl:4: /v: 2 is greater than the maximum of 1",
    );
}

#[test]
fn iterations_outside_the_run_are_refused() {
    let w = wt();
    let verdicts = w.write(
        "v.json",
        r#"[{"id": "F1", "verdict": "VERIFIED", "evidence": "e", "note": ""}]"#,
    );
    for it in ["0", "2", "4294967295"] {
        let want = format!("iteration {it} does not exist (the run is at iteration 1");
        refused(
            &w,
            &["record", "findings", "--file", &verdicts, "--iteration", it],
            &want,
        );
        refused(
            &w,
            &[
                "record",
                "verify",
                "--finding",
                "F1",
                "--result",
                "confirmed",
                "--iteration",
                it,
            ],
            &want,
        );
        let triage = w.write(
            "t.json",
            r#"{"schemaVersion": "3.2.0", "iteration": 1, "accepted": [], "deferred": [], "rejected": []}"#,
        );
        refused(&w, &["record", "triage", &triage, "--iteration", it], &want);
        assert!(!w.root.join(format!(".pipeline/triage-{it}.json")).exists());
    }
    w.lw(
        &[
            "record",
            "findings",
            "--file",
            &verdicts,
            "--iteration",
            "1",
        ],
        0,
    );
}

#[test]
fn timeouts_that_are_not_a_duration_are_refused() {
    let w = wt();
    w.lw(&ask_unverifiable("F1", "s"), 10);
    for t in ["1e30", "inf", "-1", "NaN", "1e400", "soon"] {
        let o = w.expect(&["await", "hg-1-manual-1", "--timeout", t], 2);
        assert!(
            text(&o.stderr).contains("--timeout"),
            "{t}: {}",
            text(&o.stderr)
        );
    }
    w.expect(&["await", "hg-1-manual-1", "--timeout", "0"], 124);
    for t in ["abc", "-1", "inf", "1e30", "NaN"] {
        let before = w.journal();
        let o = std::process::Command::new(worktree::BIN)
            .args(["record", "note", "x"])
            .current_dir(&w.root)
            .env("LOOPWATCH_LOCK_TIMEOUT", t)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{t}");
        assert_eq!(
            text(&o.stderr),
            format!(
                "loopwatch: LOOPWATCH_LOCK_TIMEOUT must be a number of seconds between 0 and 86400, got '{t}'\n"
            )
        );
        assert_eq!(w.journal(), before);
    }
}

#[test]
fn empty_and_missing_values_are_refused_before_anything_is_written() {
    let w = wt();
    refused(
        &w,
        &ask_unverifiable("", "s"),
        "--subject must not be empty",
    );
    refused(
        &w,
        &ask_unverifiable("F1", "  "),
        "--summary must not be empty",
    );
    std::fs::create_dir(w.root.join("dir")).unwrap();
    refused(
        &w,
        &[
            "evidence-gate",
            "--claim",
            "test",
            "--status",
            "passed",
            "--log",
            "dir",
        ],
        "is a folder, not a file",
    );
    std::fs::write(w.root.join("empty.md"), "\n  \n").unwrap();
    for (contract, message) in [
        (
            "missing.md",
            "--contract missing.md: No such file or directory",
        ),
        ("empty.md", "--contract empty.md is empty"),
        (
            "dir",
            "--contract dir: not a regular file (a folder): refused",
        ),
    ] {
        refused(
            &w,
            &[
                "record",
                "run-start",
                "--flow",
                "feat",
                "--contract",
                contract,
                "--force",
            ],
            message,
        );
    }
    refused(
        &w,
        &[
            "record",
            "run-start",
            "--flow",
            " ",
            "--contract",
            "contract.md",
            "--force",
        ],
        "must not be empty",
    );
}

#[test]
fn replay_positions_outside_the_run_are_out_of_range() {
    let w = wt();
    for (args, message) in [
        (
            vec!["replay", "--iteration", "99"],
            "--iteration 99 is out of range: the run has iterations 1 to 1",
        ),
        (
            vec!["replay", "--iteration", "0"],
            "--iteration 0 is out of range",
        ),
        (
            vec!["replay", "--at", "999999"],
            "--at 999999 is out of range: the journal's events are seq 1 to 2",
        ),
        (vec!["replay", "--at", "0"], "--at 0 is out of range"),
    ] {
        refused(&w, &args, message);
    }
}

#[test]
fn a_journal_over_16_mib_is_validated_line_by_line() {
    let w = Worktree::new();
    let path = w.root.join("big.jsonl");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let pad = "x".repeat(1000);
    let mut seq = 0u64;
    while seq * 1100 < 17 * 1024 * 1024 {
        seq += 1;
        writeln!(
            f,
            "{{\"v\":1,\"seq\":{seq},\"at\":\"2026-01-01T00:00:00Z\",\"type\":\"note\",\"text\":\"{pad}\"}}"
        )
        .unwrap();
    }
    // One bad line deep inside is still found, with its number.
    writeln!(
        f,
        "{{\"v\":1,\"seq\":{},\"at\":1,\"type\":\"note\",\"text\":\"t\"}}",
        seq + 1
    )
    .unwrap();
    drop(f);
    assert!(std::fs::metadata(&path).unwrap().len() > 16 * 1024 * 1024);
    let o = w.expect(&["validate", "big.jsonl"], 1);
    let out = text(&o.stdout);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(
        out.starts_with(&format!("big.jsonl:{}: /at:", seq + 1)),
        "{out}"
    );
}

#[test]
fn the_report_names_the_triage_files_it_could_not_read() {
    let w = wt();
    let triage = w.write(
        "t.json",
        r#"{"schemaVersion": "3.2.0", "iteration": 1, "accepted": [],
  "deferred": [{"id": "F7", "severity": "minor", "title": "later", "path": "src/a.rs", "lines": "1",
    "claim": "slow", "reviewer": "performance", "reason": "minor"}], "rejected": []}"#,
    );
    w.lw(&["record", "triage", &triage], 0);
    assert!(w.lw(&["report"], 0).contains("F7 (iteration 1): later"));
    std::fs::remove_file(w.root.join(".pipeline/triage-1.json")).unwrap();
    std::fs::create_dir(w.root.join(".pipeline/triage-1.json")).unwrap();
    let md = w.lw(&["report"], 0);
    assert_has(
        &md,
        "- triage file triage-1.json (iteration 1) could not be read: not a regular file (a folder): refused",
    );
    let json: serde_json::Value =
        serde_json::from_str(&w.lw(&["report", "--format", "json"], 0)).unwrap();
    assert_eq!(json["unreadableTriage"][0]["file"], "triage-1.json");
    assert_eq!(json["unreadableTriage"][0]["iteration"], 1);
    assert!(
        w.lw(&["report", "--format", "html"], 0)
            .contains("could not be read")
    );
}
