//! `loopwatch watch --headless DIR`: the pipelines found under DIR (to the
//! depth, never inside `.git`, `node_modules` or `target`), the ones that
//! appear while watching, damaged and unreadable ones never fatal, and the
//! polling fallback past the watch limit still showing every append.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_loopwatch");

/// Generous: a passing test never waits this long (the search runs every 3 s).
const DEADLINE: Duration = Duration::from_secs(20);

/// A `watch --headless` child, its lines read on a thread (killed on drop).
struct Headless {
    child: Child,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Headless {
    fn start(args: &[&str], env: &[(&str, &str)]) -> Headless {
        let mut cmd = Command::new(BIN);
        cmd.args(["watch", "--headless"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env_remove("LOOPWATCH_PIPELINE");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn watch --headless");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(l) = line else { break };
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        Headless {
            child,
            lines: rx,
            seen: Vec::new(),
        }
    }

    /// Waits for a line naming `dir` with `seq=<seq>`.
    fn wait(&mut self, dir: &Path, seq: u64) {
        let want = (format!("seq={seq} "), format!("pipeline={}", dir.display()));
        let end = Instant::now() + DEADLINE;
        if self
            .seen
            .iter()
            .any(|l| l.contains(&want.0) && l.ends_with(&want.1))
        {
            return;
        }
        loop {
            let left = end
                .checked_duration_since(Instant::now())
                .unwrap_or_else(|| panic!("no line {want:?}; saw {:#?}", self.seen));
            match self.lines.recv_timeout(left) {
                Ok(l) => {
                    let hit = l.contains(&want.0) && l.ends_with(&want.1);
                    self.seen.push(l);
                    if hit {
                        return;
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!("no line {want:?}; saw {:#?}", self.seen),
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("watch ended; saw {:#?}", self.seen)
                }
            }
        }
    }

    fn pipelines_seen(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .seen
            .iter()
            .filter_map(|l| l.split(" pipeline=").nth(1).map(String::from))
            .collect();
        v.sort();
        v.dedup();
        v
    }
}

impl Drop for Headless {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn note(seq: u64) -> String {
    format!(
        "{{\"v\":1,\"seq\":{seq},\"at\":\"2026-11-02T10:00:00Z\",\"type\":\"note\",\"text\":\"n{seq}\"}}\n"
    )
}

/// A `.pipeline` at `root/rel` holding notes 1..=n.
fn pipeline(root: &Path, rel: &str, n: u64) -> PathBuf {
    let dir = root.join(rel).join(".pipeline");
    std::fs::create_dir_all(&dir).unwrap();
    let text: String = (1..=n).map(note).collect();
    std::fs::write(dir.join("events.jsonl"), text).unwrap();
    dir
}

fn append(dir: &Path, seq: u64) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join("events.jsonl"))
        .unwrap();
    f.write_all(note(seq).as_bytes()).unwrap();
}

#[test]
fn pipelines_under_a_folder_are_found_to_the_depth_and_new_ones_while_watching() {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path();
    let a = pipeline(r, "a", 1);
    let b = pipeline(r, "team/b", 2);
    let c = pipeline(r, "x/y/z/c", 3);
    pipeline(r, "x/y/z/c/five", 4);
    pipeline(r, "node_modules/pkg", 5);
    pipeline(r, "a/target/debug", 6);
    pipeline(r, "a/.git/modules", 7);
    let mut w = Headless::start(&[r.to_str().unwrap()], &[]);
    w.wait(&a, 1);
    w.wait(&b, 2);
    w.wait(&c, 3);
    // A fourth appears while watching.
    let d = pipeline(r, "later/d", 8);
    w.wait(&d, 8);
    // And an append in a pipeline found by the search is followed.
    append(&b, 3);
    w.wait(&b, 3);
    let seen = w.pipelines_seen();
    let want: Vec<String> = [&a, &b, &c, &d]
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let mut want = want;
    want.sort();
    assert_eq!(
        seen, want,
        "too deep, node_modules, target and .git are not entered"
    );
}

#[test]
fn depth_limits_the_search() {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path();
    let a = pipeline(r, "a", 1);
    pipeline(r, "team/b", 2);
    let mut w = Headless::start(&[r.to_str().unwrap(), "--depth", "1"], &[]);
    w.wait(&a, 1);
    // A later append in the one found comes after the first line of every pipeline found.
    append(&a, 2);
    w.wait(&a, 2);
    assert_eq!(w.pipelines_seen(), vec![a.display().to_string()]);
    let bad = Command::new(BIN)
        .args(["watch", "--headless", "--depth", "99"])
        .arg(r)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn damaged_and_unreadable_pipelines_are_never_fatal() {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path();
    let good = pipeline(r, "good", 2);
    // A damaged line in the middle: the lines around it are still read.
    let damaged = r.join("damaged/.pipeline");
    std::fs::create_dir_all(&damaged).unwrap();
    std::fs::write(
        damaged.join("events.jsonl"),
        format!("{}{{not json\n{}", note(1), note(2)),
    )
    .unwrap();
    // A journal that cannot be read at all (a folder where the file should be).
    let unreadable = r.join("unreadable/.pipeline");
    std::fs::create_dir_all(unreadable.join("events.jsonl")).unwrap();
    let mut w = Headless::start(&[r.to_str().unwrap()], &[]);
    w.wait(&good, 2);
    w.wait(&damaged, 2);
    append(&good, 3);
    w.wait(&good, 3);
    assert!(
        matches!(w.child.try_wait(), Ok(None)),
        "watch ended on a damaged pipeline"
    );
}

#[test]
fn past_the_watch_limit_pipelines_are_polled_and_their_appends_still_show() {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path();
    let dirs: Vec<PathBuf> = (0..4).map(|i| pipeline(r, &format!("p{i}"), 1)).collect();
    // One watch allowed: the first pipeline is watched, the three others polled.
    let mut w = Headless::start(
        &[r.to_str().unwrap()],
        &[("LOOPWATCH_TEST_WATCH_LIMIT", "1")],
    );
    for d in &dirs {
        w.wait(d, 1);
    }
    for d in &dirs {
        for seq in 2..=3 {
            append(d, seq);
            w.wait(d, seq);
        }
    }
    let _ = w.child.kill();
    let out = std::mem::replace(&mut w.child, Command::new("true").spawn().unwrap())
        .wait_with_output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let polled: Vec<&str> = stderr.lines().filter(|l| l.contains("polling")).collect();
    assert_eq!(polled.len(), 3, "{stderr}");
    assert!(polled.iter().all(|l| l.contains("watch limit")), "{stderr}");
}

#[test]
fn a_searched_folder_that_goes_away_is_said_once_on_stderr_and_not_fatal() {
    let tmp = tempfile::tempdir().unwrap();
    let gone = tmp.path().join("gone");
    let a = pipeline(&gone, "a", 1);
    let kept = tmp.path().join("kept");
    let b = pipeline(&kept, "b", 1);
    let mut w = Headless::start(&[gone.to_str().unwrap(), kept.to_str().unwrap()], &[]);
    w.wait(&a, 1);
    w.wait(&b, 1);
    std::fs::remove_dir_all(&gone).unwrap();
    // The next search says it; the other folder's runs go on.
    let stderr = w.child.stderr.take().unwrap();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for l in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    let line = rx.recv_timeout(DEADLINE).expect("a line on stderr");
    assert!(
        line.contains("cannot search") && line.contains(&gone.display().to_string()),
        "{line}"
    );
    append(&b, 2);
    w.wait(&b, 2);
    assert!(rx.try_recv().is_err(), "said once");
}
