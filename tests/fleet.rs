//! `loopwatch watch --headless DIR`: the pipelines found under DIR (to the
//! depth, never inside `.git`, `node_modules` or `target`), the ones that
//! appear while watching, damaged and unreadable ones never fatal, and the
//! polling fallback past the watch limit still showing every append.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::channel;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_loopwatch");

/// Generous: a passing test never waits this long (the search runs every 3 s).
const DEADLINE: Duration = Duration::from_secs(20);

#[allow(dead_code)]
#[path = "support/headless.rs"]
mod headless;

use headless::{Headless, HeadlessLine};

/// Starts `watch --headless ARGS` with `env`, its stderr piped.
fn watch(args: &[&OsStr], env: &[(&str, &str)]) -> Headless {
    Headless::spawn(args.iter().copied(), env, Stdio::piped())
}

/// Waits for a line naming `dir` with `seq=<seq>` (it may have come already).
fn wait(w: &mut Headless, dir: &Path, seq: u64) {
    let field = format!("pipeline={}", dir.display());
    let hit = |l: &HeadlessLine| l.seq == seq && l.text.ends_with(&field);
    if !w.seen.iter().any(hit) && w.wait_for(DEADLINE, hit).is_none() {
        panic!("no line seq={seq} {field}; saw {:#?}", w.texts());
    }
}

/// Stops the watch; what it said on stderr.
fn stop(w: Headless) -> String {
    let mut child = w.into_child();
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The pipelines the lines seen so far name, sorted, once each.
fn pipelines_seen(w: &Headless) -> Vec<String> {
    let mut v: Vec<String> = w
        .texts()
        .iter()
        .filter_map(|l| l.split(" pipeline=").nth(1).map(String::from))
        .collect();
    v.sort();
    v.dedup();
    v
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
    let mut w = watch(&[r.as_os_str()], &[]);
    wait(&mut w, &a, 1);
    wait(&mut w, &b, 2);
    wait(&mut w, &c, 3);
    // A fourth appears while watching.
    let d = pipeline(r, "later/d", 8);
    wait(&mut w, &d, 8);
    // And an append in a pipeline found by the search is followed.
    append(&b, 3);
    wait(&mut w, &b, 3);
    let seen = pipelines_seen(&w);
    let mut want: Vec<String> = [&a, &b, &c, &d]
        .iter()
        .map(|p| p.display().to_string())
        .collect();
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
    let mut w = watch(&[r.as_os_str(), "--depth".as_ref(), "1".as_ref()], &[]);
    wait(&mut w, &a, 1);
    // A later append in the one found comes after the first line of every pipeline found.
    append(&a, 2);
    wait(&mut w, &a, 2);
    assert_eq!(pipelines_seen(&w), vec![a.display().to_string()]);
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
    // A journal that is a FIFO: never opened for reading (it would block).
    let fifo = r.join("fifo/.pipeline");
    std::fs::create_dir_all(&fifo).unwrap();
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        fifo.join("events.jsonl"),
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
    let mut w = watch(&[r.as_os_str()], &[]);
    wait(&mut w, &good, 2);
    wait(&mut w, &damaged, 2);
    append(&good, 3);
    wait(&mut w, &good, 3);
    assert!(w.alive(), "watch ended on a damaged pipeline");
    // Each run it could not read all of is named on stderr, once.
    let stderr = stop(w);
    let said = |what: &str| {
        stderr
            .lines()
            .filter(|l| l.starts_with("loopwatch: cannot read all of") && l.contains(what))
            .count()
    };
    assert_eq!(
        said("damaged/.pipeline/events.jsonl: line 2: "),
        1,
        "{stderr}"
    );
    assert_eq!(said("unreadable/.pipeline/events.jsonl: "), 1, "{stderr}");
    assert_eq!(said("fifo/.pipeline/events.jsonl: "), 1, "{stderr}");
    assert!(!stderr.contains("line 0"), "{stderr}");
}

#[test]
fn past_the_watch_limit_pipelines_are_polled_and_their_appends_still_show() {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path();
    let dirs: Vec<PathBuf> = (0..4).map(|i| pipeline(r, &format!("p{i}"), 1)).collect();
    // One watch allowed: the first pipeline is watched, the three others polled.
    let mut w = watch(&[r.as_os_str()], &[("LOOPWATCH_TEST_WATCH_LIMIT", "1")]);
    for d in &dirs {
        wait(&mut w, d, 1);
    }
    for d in &dirs {
        for seq in 2..=3 {
            append(d, seq);
            wait(&mut w, d, seq);
        }
    }
    let stderr = stop(w);
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
    let mut w = watch(&[gone.as_os_str(), kept.as_os_str()], &[]);
    wait(&mut w, &a, 1);
    wait(&mut w, &b, 1);
    std::fs::remove_dir_all(&gone).unwrap();
    // The next search says it; the other folder's runs go on.
    let stderr = w.child().stderr.take().unwrap();
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
    wait(&mut w, &b, 2);
    assert!(rx.try_recv().is_err(), "said once");
}
