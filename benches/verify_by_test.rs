//! Verify-by-test's own cost around the agent and the tests, on a
//! generated worktree of 10,000 committed files: the snapshot taken before
//! the dispatch, the isolation before the tests run (the code put back but
//! the named test files) and the cleanup after them (everything put back
//! but the confirmed test, the invariant checked), with an agent that
//! created three test files, edited a tracked source file and left a stray
//! file. Target: the three together under 1.5 s (a cargo build of the
//! smallest crate takes longer than that).
//!
//! Run with `cargo bench --bench verify_by_test`; prints its figures and
//! exits 1 when the target is missed.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

mod common;
use common::{load_average, ms, percentile};
use loopwatch::engine::review::verify_by_test::answer::{Answered, Repro};
use loopwatch::engine::review::verify_by_test::cleanup;
use loopwatch::engine::review::verify_by_test::tree::Tree;

const FILES: usize = 10_000;
const RUNS: usize = 7;
const TARGET: Duration = Duration::from_millis(1500);

fn main() -> ExitCode {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    let pipeline = root.join(".pipeline");
    git(root, &["init", "-q"]);
    for k in 0..FILES {
        write(
            root,
            &format!("src/m{:03}/f{:03}.rs", k / 100, k % 100),
            &format!("pub fn f{k}() -> u32 {{ {k} }}\n"),
        );
    }
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "generated"]);
    let mut answered = Answered::default();
    for n in 1..=3 {
        answered.by_finding.insert(
            format!("F{n}"),
            Ok(Repro {
                file: format!("tests/repro_f{n}.rs"),
                test_ref: format!("tests/repro_f{n}.rs::f{n}"),
            }),
        );
    }
    let keep: BTreeSet<String> = ["tests/repro_f1.rs".to_string()].into();
    let (mut before_t, mut isolate_t, mut cleanup_t, mut total_t) =
        (vec![], vec![], vec![], vec![]);
    for _ in 0..=RUNS {
        let t = Instant::now();
        let before = Tree::take(root, &pipeline).expect("snapshot");
        let snap = t.elapsed();
        for n in 1..=3 {
            write(
                root,
                &format!("tests/repro_f{n}.rs"),
                "#[test]\nfn f() { assert!(false); }\n",
            );
        }
        write(root, "src/m000/f000.rs", "pub fn f0() -> u32 { 1 }\n");
        write(root, "notes.txt", "scratch\n");
        let t1 = Instant::now();
        let mut notes = Vec::new();
        let tampered = cleanup::isolate(&before, &answered, &mut notes);
        assert!(tampered.is_empty() && notes.len() == 2, "{notes:?}");
        let iso = t1.elapsed();
        let t2 = Instant::now();
        let mut tree = None;
        let violations = cleanup::cleanup(&before, &keep, &mut tree);
        assert!(violations.is_empty(), "{violations:?}");
        let clean = t2.elapsed();
        assert!(
            root.join("tests/repro_f1.rs").exists() && !root.join("tests/repro_f2.rs").exists()
        );
        std::fs::remove_dir_all(root.join("tests")).expect("reset");
        before_t.push(snap);
        isolate_t.push(iso);
        cleanup_t.push(clean);
        total_t.push(snap + iso + clean);
    }
    let report = |name: &str, v: &mut Vec<Duration>| {
        v.remove(0); // the warm-up run
        let (median, max) = (percentile(v, 50.0), percentile(v, 100.0));
        println!(
            "{name}: median {} max {} ({RUNS} runs)",
            ms(median),
            ms(max)
        );
        max
    };
    println!(
        "== worktree of {FILES} committed files; the agent created 3 tests, edited 1 source file, left 1 stray file (load average {})",
        load_average()
    );
    report("snapshot before the dispatch      ", &mut before_t);
    report("isolation before the tests run    ", &mut isolate_t);
    report("cleanup and invariant check after ", &mut cleanup_t);
    let max = report("the three together                ", &mut total_t);
    if max < TARGET {
        println!("target met: every step's own cost under {}", ms(TARGET));
        ExitCode::SUCCESS
    } else {
        println!("TARGET MISSED: {} over {}", ms(max), ms(TARGET));
        ExitCode::from(1)
    }
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}

fn git(root: &Path, args: &[&str]) {
    let st = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .env("GIT_AUTHOR_NAME", "b")
        .env("GIT_AUTHOR_EMAIL", "b@example.invalid")
        .env("GIT_COMMITTER_NAME", "b")
        .env("GIT_COMMITTER_EMAIL", "b@example.invalid")
        .status()
        .expect("git");
    assert!(st.success(), "git {args:?}");
}
