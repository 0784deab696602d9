//! Hostile files in and around `.pipeline/`, through the real binary:
//! links planted where loopwatch writes are refused and their targets left
//! alone; FIFOs and devices never hang a command; a `state.json` that cannot
//! be written after the append is reported truthfully (exit 4); temp files
//! of dead writers are removed; a lost `report.md` is completed; the lock
//! timeout names the real holder; the pipeline ignores itself in git.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use loopwatch::journal::{Pipeline, PipelineLock, read_all};

#[allow(dead_code)]
#[path = "support/worktree.rs"]
mod worktree;

#[allow(dead_code)]
#[path = "support/headless.rs"]
mod headless;

use headless::Headless;

use worktree::{
    BIN, Worktree, ask_unverifiable, assert_has, record_gate, started_loop as wt, text,
};

fn pipe(w: &Worktree, name: &str) -> std::path::PathBuf {
    w.root.join(".pipeline").join(name)
}

fn mkfifo(path: &Path) {
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        path,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .expect("mkfifo");
}

/// Runs the binary in `w` and waits for it at most 20 s (a hang is a
/// failure, the child is killed). The deadline only bounds a hang: a
/// correct run answers at once.
fn run_bounded(w: &Worktree, args: &[&str]) -> Output {
    let child = Command::new(BIN)
        .args(args)
        .current_dir(&w.root)
        .env("LOOPWATCH_LOCK_TIMEOUT", "0.3")
        .env_remove("LOOPWATCH_PIPELINE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn loopwatch");
    wait_bounded(child, args)
}

fn wait_bounded(mut child: Child, what: &[&str]) -> Output {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("loopwatch {what:?} hung");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A pid that is certainly not running: a child that has exited and been reaped.
fn dead_pid() -> u32 {
    let mut c = Command::new("true").spawn().unwrap();
    let pid = c.id();
    c.wait().unwrap();
    pid
}

#[test]
fn links_planted_where_loopwatch_writes_are_refused_and_their_targets_untouched() {
    let w = wt();
    let outside = w.root.parent().unwrap().join("victim");
    std::fs::write(&outside, b"precious").unwrap();
    let journal = w.journal();
    for name in ["lock", "events.jsonl", "state.json"] {
        let path = pipe(&w, name);
        let aside = w.root.join(format!("{name}.aside"));
        std::fs::rename(&path, &aside).unwrap();
        symlink(&outside, &path).unwrap();
        let o = w.run(&["record", "note", "x"]);
        // state.json is written after the append: recorded, snapshot stale (4).
        let code = if name == "state.json" { 4 } else { 2 };
        assert_eq!(o.status.code(), Some(code), "{name}: {}", text(&o.stderr));
        let e = text(&o.stderr);
        assert!(
            e.contains(&path.display().to_string()) && e.contains("symbolic link: refused"),
            "{name}: {e}"
        );
        assert_eq!(std::fs::read(&outside).unwrap(), b"precious", "{name}");
        std::fs::remove_file(&path).unwrap();
        std::fs::rename(&aside, &path).unwrap();
    }
    // The refusals above were before the append, except state.json's.
    let notes = read_all(&pipe(&w, "events.jsonl")).unwrap().events.len();
    assert_eq!(notes, journal.iter().filter(|&&b| b == b'\n').count() + 1);

    let triage = w.write("triage.json", TRIAGE);
    symlink(&outside, pipe(&w, "triage-1.json")).unwrap();
    let o = w.expect(&["record", "triage", &triage, "--iteration", "1"], 2);
    assert!(text(&o.stderr).contains("triage-1.json: a symbolic link: refused"));
    assert_eq!(std::fs::read(&outside).unwrap(), b"precious");

    std::fs::remove_dir_all(pipe(&w, "gates")).ok();
    symlink(w.root.parent().unwrap(), pipe(&w, "gates")).unwrap();
    let out = w.write("floor.out", "GATES — VERDICT: MET\n");
    let o = w.expect(&record_gate("floor", &out), 2);
    assert_has(&text(&o.stderr), "gates: a symbolic link: refused");
    std::fs::remove_file(pipe(&w, "gates")).unwrap();

    // report.md: `run.ended` is recorded, the report refused; with the link
    // gone, a second run-end writes the missing report and appends nothing.
    symlink(&outside, pipe(&w, "report.md")).unwrap();
    let o = w.expect(&["record", "run-end", "--status", "aborted"], 2);
    assert!(text(&o.stderr).contains("report.md: a symbolic link: refused"));
    assert_eq!(std::fs::read(&outside).unwrap(), b"precious");
    std::fs::remove_file(pipe(&w, "report.md")).unwrap();
    let before = w.journal();
    let o = w.expect(&["record", "run-end", "--status", "partial"], 2);
    assert_has(&text(&o.stderr), "already ended as aborted");
    let o = w.expect(&["record", "run-end", "--status", "aborted"], 0);
    assert!(text(&o.stdout).contains("its missing report was written"));
    assert!(
        w.read(".pipeline/report.md")
            .contains("final status: **aborted**")
    );
    assert_eq!(w.journal(), before, "nothing appended");
    // A third run-end is refused.
    w.expect(&["record", "run-end", "--status", "aborted"], 2);
}

/// A triage file of iteration 1 with one deferred finding.
pub const TRIAGE: &str = r#"{"schemaVersion": "3.2.0", "iteration": 1, "accepted": [],
  "deferred": [{"id": "F1", "severity": "minor", "title": "later", "path": "src/a.rs", "lines": "1",
    "claim": "slow", "reviewer": "performance", "reason": "minor"}],
  "rejected": []}"#;

#[test]
fn fifos_and_devices_never_hang_a_command() {
    let w = wt();
    // state.json as a FIFO: writers fold the journal and replace it.
    let state = pipe(&w, "state.json");
    std::fs::remove_file(&state).unwrap();
    mkfifo(&state);
    let o = run_bounded(&w, &["record", "note", "fifo state"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(std::fs::metadata(&state).unwrap().is_file());

    // state.json linked to /dev/zero, alone (a foreign state): refused at once.
    let foreign = tempfile::tempdir().unwrap();
    let fp = foreign.path().join(".pipeline");
    std::fs::create_dir(&fp).unwrap();
    symlink("/dev/zero", fp.join("state.json")).unwrap();
    let o = run_bounded(&w, &["status", "--pipeline", fp.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert_has(&text(&o.stderr), "not a regular file (a device)");

    // The journal as a FIFO: every reader and writer refuses it at once.
    let journal = pipe(&w, "events.jsonl");
    std::fs::rename(&journal, w.root.join("journal.aside")).unwrap();
    mkfifo(&journal);
    for args in [
        vec!["record", "note", "x"],
        vec!["status"],
        vec!["report"],
        vec!["validate", ".pipeline/events.jsonl"],
    ] {
        let o = run_bounded(&w, &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains("not a regular file"),
            "{args:?}: {}",
            text(&o.stderr)
        );
    }
    std::fs::remove_file(&journal).unwrap();
    std::fs::rename(w.root.join("journal.aside"), &journal).unwrap();

    // FIFOs as inputs: contract, gate output, log, verification file.
    let fifo = w.root.join("fifo");
    mkfifo(&fifo);
    for (args, code) in [
        (vec!["record", "gate", "floor", "--output", "fifo"], 2),
        (
            vec![
                "record",
                "run-start",
                "--flow",
                "f",
                "--contract",
                "fifo",
                "--force",
            ],
            2,
        ),
        (vec!["gate0", "status", "fifo"], 2),
        (
            vec![
                "evidence-gate",
                "--claim",
                "test",
                "--status",
                "passed",
                "--log",
                "fifo",
            ],
            2,
        ),
        (vec!["triage", "apply", "fifo", "--verification", "fifo"], 2),
        (vec!["validate", "fifo", "--kind", "state"], 2),
    ] {
        let o = run_bounded(&w, &args);
        assert_eq!(
            o.status.code(),
            Some(code),
            "{args:?}: {}{}",
            text(&o.stdout),
            text(&o.stderr)
        );
    }
}

#[test]
fn a_state_json_that_cannot_be_written_after_the_append_is_reported_truthfully() {
    let w = wt();
    let state = pipe(&w, "state.json");
    std::fs::remove_file(&state).unwrap();
    std::fs::create_dir(&state).unwrap();
    let before = read_all(&pipe(&w, "events.jsonl")).unwrap().events.len();
    let o = w.expect(&ask_unverifiable("F1", "check"), 4);
    let e = text(&o.stderr);
    assert!(
        e.starts_with("loopwatch: the event was recorded (seq 3) but "),
        "{e}"
    );
    assert!(
        e.contains("stale until the next write repairs it") && e.contains("do not retry"),
        "{e}"
    );
    let out = text(&o.stdout);
    assert!(out.contains("human gate opened: hg-1-manual-1"), "{out}");
    assert!(out.ends_with("NEXT: human hg-1-manual-1\n"), "{out}");
    let events = read_all(&pipe(&w, "events.jsonl")).unwrap().events;
    assert_eq!(events.len(), before + 1, "recorded once");

    // The next writer repairs it.
    std::fs::remove_dir(&state).unwrap();
    w.lw(&["record", "note", "after"], 10);
    let s: serde_json::Value = serde_json::from_slice(&std::fs::read(&state).unwrap()).unwrap();
    assert_eq!(s["seq"], before as u64 + 2);
}

#[test]
fn temp_files_of_dead_writers_are_removed_and_live_ones_kept() {
    let w = wt();
    let dead = pipe(&w, &format!(".loopwatch-{}-AbC123.tmp", dead_pid()));
    let live = pipe(&w, &format!(".loopwatch-{}-XyZ789.tmp", std::process::id()));
    let beside = w.root.join(format!(".loopwatch-{}-QqQqQq.tmp", dead_pid()));
    for p in [&dead, &live, &beside] {
        std::fs::write(p, b"half").unwrap();
    }
    w.lw(&["record", "note", "x"], 0);
    assert!(!dead.exists(), "a dead writer's temp file is removed");
    assert!(live.exists(), "a live writer's temp file is kept");
    // Beside the contract: the next contract edit there cleans up.
    loopwatch::util::replace_atomically(&w.root.join("other.md"), b"x").unwrap();
    assert!(!beside.exists());
    let left: Vec<_> = std::fs::read_dir(pipe(&w, ""))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");
}

#[test]
fn the_lock_timeout_names_the_real_holder_not_a_stale_pid() {
    let w = wt();
    let p = Pipeline::at(w.root.join(".pipeline"));
    let lock = PipelineLock::acquire(&p.lock_path(), Duration::from_secs(1)).unwrap();
    let stale = dead_pid();
    std::fs::write(p.lock_path(), format!("{stale}\n")).unwrap();
    let o = w.expect(&["record", "note", "x"], 2);
    let e = text(&o.stderr);
    assert_has(&e, &format!("is held by pid {} ", std::process::id()));
    assert!(!e.contains(&format!("pid {stale}")), "{e}");
    drop(lock);
}

#[test]
fn a_pipeline_ignores_itself_in_git_from_its_creation_and_after() {
    let w = wt();
    let gi = pipe(&w, ".gitignore");
    assert!(w.read(".pipeline/.gitignore").lines().any(|l| l == "*"));
    std::fs::remove_file(&gi).unwrap();
    w.lw(&["record", "note", "x"], 0);
    assert!(w.read(".pipeline/.gitignore").lines().any(|l| l == "*"));
    if Command::new("git").arg("--version").output().is_ok() {
        std::fs::remove_dir_all(w.root.join(".git")).unwrap();
        let git = |args: &[&str]| {
            Command::new("git")
                .args(args)
                .current_dir(&w.root)
                .output()
                .unwrap()
        };
        assert!(git(&["init", "-q"]).status.success());
        let st = git(&["status", "--porcelain", "--untracked-files=all"]);
        assert!(
            !text(&st.stdout).contains(".pipeline"),
            "{}",
            text(&st.stdout)
        );
    }
}

#[test]
fn watch_headless_on_a_fifo_state_json_keeps_reading_and_ends_on_sigterm() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join(".pipeline");
    std::fs::create_dir(&p).unwrap();
    // A foreign state.json that is a FIFO: reading it must not block the loop.
    mkfifo(&p.join("state.json"));
    let mut h = Headless::spawn([p.as_os_str()], &[], Stdio::piped());
    // A journal appears beside it: the loop (not stuck on the FIFO) reads it.
    std::fs::write(
        p.join("events.jsonl"),
        "{\"v\":1,\"seq\":1,\"at\":\"2026-01-01T00:00:00Z\",\"type\":\"note\",\"text\":\"n\"}\n",
    )
    .unwrap();
    let line = h.wait_for(Duration::from_secs(10), |_| true);
    let pid = rustix::process::Pid::from_raw(h.pid() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let o = wait_bounded(h.into_child(), &["watch", "--headless"]);
    let line = line.expect("the journal's update was printed").text;
    assert!(line.contains(" seq=1 "), "{line}");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}
