//! `o` on the Logs tab: the TUI steps aside for the real `less`, which gets
//! every key (none is read by loopwatch meanwhile), and comes back whole.

use std::io::Write;

use super::support::tmux::Session;
use super::support::{serial, worktree::Worktree};
use super::{COLS, ROWS, is_run_frame, line, wait_frame};

/// A started run whose journal holds one Claude Code dispatch, its log the
/// session recorded from the real CLI.
fn with_a_claude_log() -> Worktree {
    let w = Worktree::new();
    w.start_run();
    let pipeline = w.root.join(".pipeline");
    std::fs::create_dir_all(pipeline.join("agents")).unwrap();
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/engine/claude-verifier.jsonl"),
        pipeline.join("agents/001-verifier.log"),
    )
    .unwrap();
    let next = std::fs::read_to_string(pipeline.join("events.jsonl"))
        .unwrap()
        .lines()
        .count()
        + 1;
    let mut journal = std::fs::OpenOptions::new()
        .append(true)
        .open(pipeline.join("events.jsonl"))
        .unwrap();
    writeln!(
        journal,
        r#"{{"v":1,"seq":{next},"at":"2026-12-01T08:01:00Z","type":"agent.started","dispatch":1,"role":"verifier","iteration":1,"adapter":"claude","pid":1,"pgid":1,"inputSha256":"sha256:00","log":"agents/001-verifier.log"}}"#
    )
    .unwrap();
    writeln!(
        journal,
        r#"{{"v":1,"seq":{},"at":"2026-12-01T08:01:05Z","type":"agent.finished","dispatch":1,"role":"verifier","exitCode":0,"durationMs":5000,"tokensIn":200,"tokensOut":40,"costUsd":0.0012}}"#,
        next + 1
    )
    .unwrap();
    w
}

#[test]
fn o_shows_the_whole_log_in_less_and_the_tui_comes_back() {
    let _serial = serial();
    let w = with_a_claude_log();
    // No LESS options (-F would quit at once on a short page).
    let s = Session::start(
        COLS,
        ROWS,
        &w.watch_command(),
        &[("PAGER", "less"), ("LESS", "")],
    );
    wait_frame(&s);
    s.send(&["6"]);
    s.wait_for("the agent's log on the Logs tab", |sc| {
        sc.lines()
            .any(|l| l.starts_with("›") && l.contains("agents/001-verifier.log"))
    });
    s.send(&["o"]);
    let page = s.wait_for("the transcript in less", |sc| {
        line(sc, 0).starts_with(
            "agents/001-verifier.log — the transcript of a Claude Code session; the raw stream is ",
        ) && sc.contains("→ Bash  cargo test --offline -q")
    });
    assert!(!is_run_frame(&page), "{page}");
    assert!(!page.contains("{\"type\""), "no raw JSON:\n{page}");
    // Keys go to less: `/` searches, and the pager shows what it found.
    s.type_text("/test result");
    s.send(&["Enter"]);
    s.wait_for("less's search", |sc| {
        sc.lines().next().is_some_and(|l| l.contains("test result"))
    });
    s.send(&["q"]);
    let back = s.wait_for("the TUI back", |sc| is_run_frame(sc) && s.alternate_on());
    assert!(
        line(&back, ROWS as usize - 1).contains("agents/001-verifier.log closed"),
        "{back}"
    );
    // And keys are the TUI's again.
    s.send(&["5"]);
    s.wait_for("the Timeline tab", |sc| {
        sc.contains(" seq  time     type                event")
    });
}
