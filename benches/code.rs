//! Code snapshot and code diff benchmark on a generated worktree of 10,000
//! files (100 folders of 100 files, committed), with 20 files edited and 10
//! untracked files added: the time of `code::snapshot` (target: under
//! 300 ms) beside `git stash create` on the same tree (the ratio), and of
//! `code::diff` between the snapshots before and after the edits (target:
//! under 100 ms), plus a diff with 1,000 changed files for scale.
//!
//! Run with `cargo bench --bench code`; prints its figures and exits 1 when
//! a target is missed.

mod common;
#[path = "../tests/support/mod.rs"]
mod support;

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use common::{ms, percentile, times};
use loopwatch::code;
use support::code::{git, write};

const FOLDERS: usize = 100;
const FILES_PER_FOLDER: usize = 100;
const RUNS: usize = 15;
const SNAPSHOT_TARGET: Duration = Duration::from_millis(300);
const DIFF_TARGET: Duration = Duration::from_millis(100);

fn main() -> ExitCode {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    let t = Instant::now();
    generate(root);
    println!(
        "== worktree of {} files generated and committed in {}",
        FOLDERS * FILES_PER_FOLDER,
        ms(t.elapsed())
    );
    let before = code::snapshot(root).expect("snapshot before the edits");
    edit(root, 20, "edited");
    for k in 0..10 {
        write(root, &format!("untracked/new-{k}.rs"), &body(k, "new"));
    }
    let snapshot = measure(|| {
        code::snapshot(root).expect("snapshot");
    });
    let stash = measure(|| {
        git(root, &["stash", "create"]);
    });
    let after = code::snapshot(root).expect("snapshot after the edits");
    let diff = measure(|| {
        let files = code::diff(root, &before, &after).expect("diff");
        assert_eq!(files.len(), 30);
    });
    edit(root, 1000, "rewritten");
    let many = code::snapshot(root).expect("snapshot after 1000 edits");
    let diff_many = measure(|| {
        let files = code::diff(root, &before, &many).expect("diff");
        assert_eq!(files.len(), 1010);
    });
    println!("snapshot (temporary index, untracked included): {snapshot}");
    println!("git stash create (tracked only, the baseline):   {stash}");
    println!(
        "ratio snapshot / stash create (medians): {:.2}",
        snapshot.median.as_secs_f64() / stash.median.as_secs_f64()
    );
    println!("code diff, 30 files changed:    {diff}");
    println!("code diff, 1,010 files changed: {diff_many}");
    let met = snapshot.max < SNAPSHOT_TARGET && diff.max < DIFF_TARGET;
    if met {
        println!(
            "targets met: every snapshot under {}, every 30-file diff under {}",
            ms(SNAPSHOT_TARGET),
            ms(DIFF_TARGET)
        );
        ExitCode::SUCCESS
    } else {
        println!("TARGET MISSED");
        ExitCode::from(1)
    }
}

/// Median, p90 and max of some runs.
struct Figures {
    median: Duration,
    p90: Duration,
    max: Duration,
}

impl std::fmt::Display for Figures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "median {}, p90 {}, max {} ({RUNS} runs)",
            ms(self.median),
            ms(self.p90),
            ms(self.max)
        )
    }
}

/// Runs `f` once to warm the caches, then `RUNS` times.
fn measure(f: impl FnMut()) -> Figures {
    let mut times = times(RUNS, f);
    Figures {
        median: percentile(&mut times, 50.0),
        p90: percentile(&mut times, 90.0),
        max: percentile(&mut times, 100.0),
    }
}

fn generate(root: &Path) {
    git(root, &["init", "-q"]);
    write(root, ".gitignore", "target/\n");
    for d in 0..FOLDERS {
        for f in 0..FILES_PER_FOLDER {
            write(root, &path(d * FILES_PER_FOLDER + f), &body(f, "first"));
        }
    }
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "generated"]);
}

/// Rewrites one line in the middle of the first `n` files.
fn edit(root: &Path, n: usize, word: &str) {
    for k in 0..n {
        write(
            root,
            &path(k * 7 % (FOLDERS * FILES_PER_FOLDER)),
            &body(k, word),
        );
    }
}

fn path(k: usize) -> String {
    format!(
        "src/m{:03}/f{:03}.rs",
        k / FILES_PER_FOLDER,
        k % FILES_PER_FOLDER
    )
}

/// About 40 lines of code; `word` changes line 20.
fn body(k: usize, word: &str) -> String {
    (0..40)
        .map(|i| {
            if i == 20 {
                format!("    let v{i} = \"{word}\"; // {k}\n")
            } else {
                format!("    let v{i} = {k} + {i};\n")
            }
        })
        .collect()
}
