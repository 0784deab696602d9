//! Shared helpers of the hardening suite (its `watch --headless` child is
//! [`super::headless`]): worktrees with a pipeline holding an open
//! out-of-scope gate, event lines, and a small seeded random source for
//! fault timing.

use std::path::PathBuf;
use std::process::Command;

use loopwatch::journal::Pipeline;
use loopwatch::model::rules::GateRequest;
use loopwatch::model::{GateName, HumanGateKind, event::RunInfo};
use loopwatch::recorder::Recorder;

/// The binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_loopwatch")
}

/// A fixture of this suite (`tests/fixtures/hardening/<name>`), as bytes.
pub fn fixture(name: &str) -> Vec<u8> {
    super::fixture(&format!("hardening/{name}"))
}

/// A journal line of a `note` event.
pub fn note_line(seq: u64) -> String {
    format!(
        "{{\"v\":1,\"seq\":{seq},\"at\":\"2026-11-02T10:00:00Z\",\"type\":\"note\",\"text\":\"n{seq}\"}}\n"
    )
}

/// `note_line` for 1..=n, joined.
pub fn notes(n: u64) -> String {
    (1..=n).map(note_line).collect()
}

/// A `state.json` as a foreign orchestrator writes it, at `seq`.
pub fn foreign_state(seq: u64) -> String {
    format!(
        "{{\"v\":1,\"seq\":{seq},\"status\":\"running\",\"reviewIterations\":[],\"counters\":{{\"floor\":0,\"conformity\":0,\"security\":0}},\"humanGates\":[]}}\n"
    )
}

/// A temporary worktree (with a `.git` folder and the suite's contract).
pub struct Worktree {
    _dir: tempfile::TempDir,
    /// Its root.
    pub root: PathBuf,
}

/// The contract every decision test uses.
pub const CONTRACT: &str = "contract.md";

impl Worktree {
    /// An empty worktree with the contract fixture.
    pub fn new() -> Worktree {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical tempdir");
        std::fs::create_dir(root.join(".git")).expect("mkdir .git");
        std::fs::write(root.join(CONTRACT), fixture("contract.md")).expect("write contract");
        Worktree { _dir: dir, root }
    }

    /// An empty worktree whose `.pipeline` folder exists; returns its
    /// pipeline too.
    pub fn with_pipeline() -> (Worktree, Pipeline) {
        let w = Worktree::new();
        let p = w.pipeline();
        std::fs::create_dir_all(p.dir()).expect("mkdir .pipeline");
        (w, p)
    }

    /// The worktree's pipeline.
    pub fn pipeline(&self) -> Pipeline {
        Pipeline::at(self.root.join(".pipeline"))
    }

    /// A recorder on the pipeline.
    pub fn recorder(&self) -> Recorder {
        Recorder::new(self.pipeline())
    }

    /// Starts a run on the contract.
    pub fn start_run(&self) {
        let run = RunInfo {
            id: "2026-11-02-hardening".into(),
            flow: "feat".into(),
            contract: CONTRACT.into(),
            ..RunInfo::default()
        };
        self.recorder().run_start(run, false).expect("run-start");
    }

    /// Opens an out-of-scope gate for `subject`; returns its id.
    pub fn ask_out_of_scope(&self, subject: &str) -> String {
        let req = GateRequest {
            kind: HumanGateKind::OutOfScope,
            gate: Some(GateName::Conformity),
            subject: subject.into(),
            summary: format!("{subject} changed outside FILE SCOPE"),
            evidence: serde_json::json!({ "paths": [subject] }),
        };
        self.recorder().ask(req).expect("ask").0
    }

    /// Runs the binary in the worktree to its end; returns what it did.
    pub fn output(&self, args: &[&str]) -> std::process::Output {
        self.command(args).output().expect("run loopwatch")
    }

    /// Runs the binary in the worktree.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(bin());
        c.args(args)
            .current_dir(&self.root)
            .env("LOOPWATCH_USER", "hardening")
            .env_remove("LOOPWATCH_PIPELINE");
        c
    }
}

/// A small xorshift generator: fault timings vary per run, and the seed is
/// printed so a failing run can be replayed with `HARDENING_SEED`.
pub struct Rng(u64);

impl Rng {
    /// Seeded from `HARDENING_SEED` or the clock.
    pub fn from_env() -> Rng {
        let seed = std::env::var("HARDENING_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos() as u64)
            });
        eprintln!("HARDENING_SEED={seed}");
        Rng(seed | 1)
    }

    /// The next value in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}
