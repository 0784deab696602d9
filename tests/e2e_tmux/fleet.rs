//! Many runs in one view, in a real terminal: `loopwatch watch DIR` finds
//! the runs under DIR at different depths and lists them waiting first
//! (the oldest wait on top), then running, then ended and not looked at;
//! a run that appears while watching is listed; `n` goes to the gate that
//! has waited longest in any run; `.git`, `node_modules` and `target` are
//! not entered; a damaged journal and an unreadable one are listed and
//! marked; past the watch limit the rest are polled, said so, and their
//! appends still show.

use std::path::PathBuf;

use loopwatch::journal::Pipeline;
use loopwatch::model::event::RunInfo;
use loopwatch::model::rules::GateRequest;
use loopwatch::model::{EndStatus, GateName, HumanGateKind};
use loopwatch::recorder::Recorder;

use crate::support::serial;
use crate::support::tmux::Session;
use crate::support::worktree::BIN;

const COLS: u16 = 160;
const ROWS: u16 = 32;

/// A folder of runs, with loopwatch's own state and config kept apart.
struct Fleet {
    dir: tempfile::TempDir,
}

impl Fleet {
    fn new() -> Fleet {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("runs")).unwrap();
        Fleet { dir }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("runs")
    }

    /// A worktree at `runs/<rel>` whose run `id` has started.
    fn run(&self, rel: &str, id: &str) -> Recorder {
        let wt = self.root().join(rel);
        std::fs::create_dir_all(wt.join(".git")).unwrap();
        let rec = Recorder::new(Pipeline::at(wt.join(".pipeline")));
        rec.run_start(
            RunInfo {
                id: id.into(),
                flow: "feat".into(),
                contract: "contract.md".into(),
                ..RunInfo::default()
            },
            false,
        )
        .unwrap();
        rec
    }

    fn session(&self, env: &[(&str, &str)]) -> Session {
        let state = self.dir.path().join("state");
        let config = self.dir.path().join("config");
        let (state, config) = (state.display().to_string(), config.display().to_string());
        let mut all = vec![
            ("XDG_STATE_HOME", state.as_str()),
            ("XDG_CONFIG_HOME", config.as_str()),
            ("LOOPWATCH_USER", "dana"),
        ];
        all.extend_from_slice(env);
        Session::start(
            COLS,
            ROWS,
            // Not `exec`: the pane's shell records the exit status.
            &format!("{BIN} watch '{}'", self.root().display()),
            &all,
        )
    }
}

fn ask(rec: &Recorder, subject: &str) -> String {
    rec.ask(GateRequest {
        kind: HumanGateKind::OutOfScope,
        gate: Some(GateName::Conformity),
        subject: subject.into(),
        summary: format!("{subject} changed outside FILE SCOPE"),
        evidence: serde_json::json!({ "paths": [subject] }),
    })
    .unwrap()
    .0
}

/// The row (line number) naming `needle`, if on screen.
fn row(screen: &str, needle: &str) -> Option<usize> {
    screen.lines().position(|l| l.contains(needle))
}

fn rows_in_order(screen: &str, needles: &[&str]) -> bool {
    let at: Vec<Option<usize>> = needles.iter().map(|n| row(screen, n)).collect();
    at.iter().all(Option::is_some) && at.windows(2).all(|w| w[0] < w[1])
}

#[test]
fn the_run_list_orders_the_runs_found_follows_new_ones_and_n_goes_to_the_oldest_gate() {
    let _serial = serial();
    let f = Fleet::new();
    let root = f.root();
    let waiting = f.run("alpha", "run-alpha");
    let first_gate = ask(&waiting, "Makefile");
    f.run("team/beta", "run-beta");
    let ended = f.run("team/x/y/gamma", "run-gamma");
    ended.run_end(EndStatus::Complete).unwrap();
    // Runs inside folders never entered.
    for hidden in ["node_modules/pkg", "alpha/target/t", "alpha/.git/modules/m"] {
        f.run(hidden, "run-hidden");
    }
    // A damaged journal, and one that cannot be read at all.
    f.run("damaged", "run-damaged");
    let damaged = root.join("damaged/.pipeline/events.jsonl");
    let mut text = std::fs::read_to_string(&damaged).unwrap();
    text.push_str("{\"v\":1,\"seq\":2,\"type\":\"note\" this is not json\n");
    std::fs::write(&damaged, text).unwrap();
    std::fs::create_dir_all(root.join("unreadable/.pipeline/events.jsonl")).unwrap();

    let s = f.session(&[]);
    let screen = s.wait_for("the run list", |sc| {
        sc.contains(" loopwatch · 5 runs · 1 waiting on you")
            && rows_in_order(sc, &["run-alpha", "run-beta", "run-gamma"])
    });
    assert!(!screen.contains("run-hidden"), "{screen}");
    let gamma = screen.lines().find(|l| l.contains("run-gamma")).unwrap();
    assert!(gamma.contains("ENDED COMPLETE •new"), "{screen}");
    let alpha = screen.lines().find(|l| l.contains("run-alpha")).unwrap();
    assert!(
        alpha.contains("⚑1") && alpha.contains("WAITING ON YOU"),
        "{screen}"
    );
    // Worktrees are named from the folder searched.
    assert!(alpha.trim_end().ends_with(" alpha"), "{screen}");
    assert!(gamma.trim_end().ends_with(" team/x/y/gamma"), "{screen}");
    let bad = screen
        .lines()
        .find(|l| l.trim_end().ends_with(" unreadable"))
        .unwrap_or_else(|| panic!("the unreadable run is not listed:\n{screen}"));
    assert!(
        bad.trim_start().starts_with('!') && bad.contains("UNREADABLE"),
        "{screen}"
    );
    let dmg = screen.lines().find(|l| l.contains("run-damaged")).unwrap();
    assert!(dmg.trim_start().starts_with('!'), "{screen}");

    // A fourth run appears while watching, and waits too (on a newer gate).
    let late = f.run("later/delta", "run-delta");
    let late_gate = ask(&late, "Dockerfile");
    s.wait_for("the new run, under the older wait", |sc| {
        sc.contains(" loopwatch · 6 runs · 2 waiting on you")
            && rows_in_order(sc, &["run-alpha", "run-delta", "run-beta", "run-gamma"])
    });

    // n: the oldest gate of any run, then the next one.
    s.send(&["n"]);
    s.wait_for("alpha's gate", |sc| {
        sc.lines().next().is_some_and(|l| l.contains("run-alpha"))
            && sc
                .lines()
                .any(|l| l.starts_with('›') && l.contains(&first_gate))
    });
    s.send(&["n"]);
    s.wait_for("delta's gate", |sc| {
        sc.lines().next().is_some_and(|l| l.contains("run-delta"))
            && sc
                .lines()
                .any(|l| l.starts_with('›') && l.contains(&late_gate))
    });
    // Back to the list, where the runs are as they were.
    s.send(&["Escape"]);
    s.wait_for("the list again", |sc| {
        rows_in_order(sc, &["run-alpha", "run-delta", "run-beta", "run-gamma"])
    });
    s.send(&["q"]);
    assert_eq!(s.wait_dead(), 0);
}

#[test]
fn past_the_watch_limit_runs_are_polled_marked_and_still_live() {
    let _serial = serial();
    let f = Fleet::new();
    for name in ["one", "two", "three"] {
        f.run(name, &format!("run-{name}"));
    }
    // One watch allowed: the two runs after the first are polled.
    let s = f.session(&[("LOOPWATCH_TEST_WATCH_LIMIT", "1")]);
    let screen = s.wait_for("the list with its notice", |sc| {
        sc.contains("~ 2 runs polled every 500 ms, not watched") && sc.contains("run-three")
    });
    let polled: Vec<&str> = screen
        .lines()
        .filter(|l| l.contains("run-") && l.trim_start().starts_with('~'))
        .collect();
    assert_eq!(polled.len(), 2, "{screen}");
    // An append in a polled run reaches the screen.
    let rec = Recorder::new(Pipeline::at(f.root().join("three/.pipeline")));
    ask(&rec, "Cargo.lock");
    s.wait_for("the polled run waiting on top", |sc| {
        sc.contains("1 waiting on you")
            && sc
                .lines()
                .find(|l| l.contains("run-"))
                .is_some_and(|l| l.contains("run-three") && l.contains("⚑1"))
    });
    s.send(&["q"]);
    assert_eq!(s.wait_dead(), 0);
}
