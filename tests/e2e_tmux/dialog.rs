//! The decision dialog of an out-of-scope gate on a changed Makefile, in a
//! real terminal over a real git repository: the hunk's `+` lines are on
//! screen, the evidence scrolls, the decision saves exactly the text shown
//! and hashes it; a Makefile edited after the gate opened is said so, and
//! ctrl-r shows (and saves) it as it is now.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::support::git::ENV as GIT_ENV;
use super::support::tmux::{DEADLINE, Session, poll};
use super::support::worktree::{BIN, RUN_START};
use super::support::{assert_has, serial};
use super::{COLS, ROWS, line, wait_frame};

const GATE: &str = "hg-1-conformity-1";

/// A git repository whose run opened `hg-1-conformity-1` on a Makefile
/// that gained 60 lines since the run started.
struct Repo {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Repo {
    fn new() -> Repo {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("wt");
        std::fs::create_dir_all(&root).expect("create the worktree");
        let contract = super::support::fixture("e2e/contract.md");
        std::fs::write(root.join("contract.md"), contract).expect("write the contract");
        std::fs::write(root.join("Makefile"), "all:\n\techo all\n").expect("write Makefile");
        let repo = Repo { _dir: dir, root };
        repo.git(&["init", "-q", "-b", "main"]);
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", "first"]);
        repo.lw(&RUN_START, 0);
        let added: String = (1..=60)
            .map(|i| format!("step-{i:02}:\n\techo step {i}\n"))
            .collect();
        std::fs::write(
            repo.root.join("Makefile"),
            format!("all:\n\techo all\n{added}"),
        )
        .expect("change Makefile");
        repo.lw(&["gate0", "run", "contract.md"], 0);
        let output = repo.root.parent().expect("parent").join("gate1.out");
        std::fs::write(
            &output,
            "VERIFY — VERDICT: ECARTS(1)\nCONTRACT: contract.md\nCRITERIA:\n  \
1. The clock script answers — MET — EVIDENCE: MET exit=0 marker-found :: OK\n  \
2. The footer stays on one line — MET — Makefile steps drive the release\n\
SCOPE: in-scope 1 files; out-of-scope: Makefile\nFLOOR: clean\nPROOF: read 2 files\n",
        )
        .expect("write the gate output");
        let out = output.display().to_string();
        repo.lw(&["record", "gate", "conformity", "--output", &out], 10);
        repo
    }

    fn git(&self, args: &[&str]) {
        let out = Command::new("git")
            .args(args)
            .current_dir(&self.root)
            .envs(GIT_ENV)
            .output()
            .expect("run git");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn lw(&self, args: &[&str], code: i32) {
        let out = Command::new(BIN)
            .args(args)
            .current_dir(&self.root)
            .envs(GIT_ENV)
            .env("LOOPWATCH_USER", "dana")
            .env_remove("LOOPWATCH_PIPELINE")
            .output()
            .expect("run loopwatch");
        assert_eq!(
            out.status.code(),
            Some(code),
            "loopwatch {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The TUI on this repository, its gate's dialog open.
    fn dialog(&self) -> Session {
        let mut env: Vec<(&str, &str)> = GIT_ENV.to_vec();
        env.push(("LOOPWATCH_USER", "dana"));
        let s = Session::start(
            COLS,
            ROWS,
            &format!("exec {BIN} watch '{}'", self.root.display()),
            &env,
        );
        wait_frame(&s);
        s.send(&["n"]);
        s.wait_for("the gate selected on the Gates tab", |sc| {
            line(sc, 5).starts_with(&format!("›⚑ WAITING ON YOU   {GATE}"))
        });
        s.send(&["Enter"]);
        s.wait_for("the dialog", |sc| sc.contains(&format!("decide {GATE}")));
        s
    }

    fn evidence_file(&self) -> Vec<u8> {
        let p = self.root.join(format!(".pipeline/evidence/{GATE}.txt"));
        std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    /// The `evidenceHash` the journal recorded with the decision.
    fn recorded_hash(&self) -> String {
        let journal = std::fs::read_to_string(self.root.join(".pipeline/events.jsonl"))
            .expect("read the journal");
        journal
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find(|e| e["type"] == "human.decided" && e["id"] == GATE)
            .and_then(|e| e["evidenceHash"].as_str().map(str::to_string))
            .expect("a decision in the journal")
    }
}

fn sha256(bytes: &[u8]) -> String {
    loopwatch::util::sha256_tagged(bytes)
}

/// Sends `key` until `pred` holds on screen: the dialog drops keys for
/// its first 300 ms, so the first ones may be lost; keys that scroll are
/// safe to repeat.
fn send_until(s: &Session, key: &str, what: &str, pred: impl Fn(&str) -> bool) -> String {
    poll(
        what,
        DEADLINE,
        || {
            let screen = s.screen();
            if pred(&screen) {
                return Some(screen);
            }
            s.send(&[key]);
            None
        },
        || s.screen(),
    )
}

/// Chooses deny, types a reason and confirms; waits for the saved status.
fn deny(s: &Session, root: &Path) {
    s.send(&["x"]);
    s.wait_for("deny chosen", |sc| sc.contains("reason: ▏"));
    s.type_text("remove the Makefile steps");
    s.wait_for("the reason typed", |sc| {
        sc.contains("remove the Makefile steps")
    });
    s.send(&["C-s"]);
    s.wait_for("the saved decision in the status line", |sc| {
        line(sc, ROWS as usize - 1) == format!(" decision saved ({GATE}: deny)")
    });
    assert!(root.join(format!(".pipeline/evidence/{GATE}.txt")).exists());
}

#[test]
fn the_dialog_shows_the_makefile_hunk_scrolls_it_and_saves_what_it_showed() {
    let _serial = serial();
    let repo = Repo::new();
    let s = repo.dialog();
    let first = s.wait_for("the hunk's + lines on screen", |sc| {
        sc.contains("code (as captured when the gate opened):")
            && sc.contains("+++ b/Makefile")
            && sc.contains("+step-01:")
            && sc.contains("+step-02:")
    });
    assert!(!first.contains("step-60"), "the end is below:\n{first}");
    assert_has(&first, "… more below (↓)");
    let end = send_until(
        &s,
        "PageDown",
        "the end of the hunk scrolled into view",
        |sc| sc.contains("+step-60:"),
    );
    assert!(!end.contains("+step-01:"), "scrolled past the top:\n{end}");
    deny(&s, &repo.root);
    let file = repo.evidence_file();
    let text = String::from_utf8(file.clone()).expect("UTF-8");
    assert_has(&text, "\n  +step-01:\n");
    assert_has(&text, "\n  +step-60:\n");
    assert_has(&text, "code (as captured when the gate opened):");
    assert_eq!(repo.recorded_hash(), sha256(&file));
}

#[test]
fn a_makefile_edited_after_the_gate_opened_is_said_and_ctrl_r_decides_on_it_as_it_is() {
    let _serial = serial();
    let repo = Repo::new();
    let makefile = repo.root.join("Makefile");
    let now = std::fs::read_to_string(&makefile).expect("read Makefile");
    std::fs::write(&makefile, format!("hotfix:\n\techo hotfix\n{now}")).expect("edit Makefile");
    let s = repo.dialog();
    s.wait_for("the change said", |sc| {
        sc.contains("CHANGED since the gate opened: Makefile: edited since the gate opened")
            && sc.contains("ctrl-r refreshes")
    });
    assert!(
        !s.screen().contains("+hotfix:"),
        "not shown before a refresh"
    );
    send_until(&s, "C-r", "the refreshed evidence", |sc| {
        sc.contains("refreshed before deciding: Makefile: edited since the gate opened")
            && sc.contains("+hotfix:")
    });
    s.wait_for("the refresh said", |sc| {
        sc.contains("refreshed: the evidence as it is now")
    });
    // The refresh starts the key guard again: wait until a scroll key lands.
    send_until(&s, "Down", "a key accepted after the refresh", |sc| {
        !sc.contains("out-of-scope · GATE 1 conformity · iteration 1")
    });
    deny(&s, &repo.root);
    let file = repo.evidence_file();
    let text = String::from_utf8(file.clone()).expect("UTF-8");
    assert_has(
        &text,
        "refreshed before deciding: Makefile: edited since the gate opened\n",
    );
    assert_has(&text, "\n  +hotfix:\n");
    assert_has(&text, "code (as it is now):");
    assert_eq!(repo.recorded_hash(), sha256(&file));
}
