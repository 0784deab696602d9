//! Shared helpers of the hardening suite: a `watch --headless` child whose
//! lines are read on a thread and waited for with deadlines, worktrees with
//! a pipeline holding an open out-of-scope gate, event lines, and a small
//! seeded random source for fault timing.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

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

/// One line printed by `watch --headless`, with the instant it was read.
#[derive(Debug, Clone)]
pub struct HeadlessLine {
    /// The line as printed.
    pub text: String,
    /// Its `seq=` field.
    pub seq: u64,
    /// When the test read it.
    pub at: Instant,
}

/// A running `loopwatch watch --headless` (killed on drop).
pub struct Headless {
    child: Child,
    lines: Receiver<HeadlessLine>,
    /// Every line received so far, in order.
    pub seen: Vec<HeadlessLine>,
}

impl Headless {
    /// Starts watching `path` (a worktree or a `.pipeline` folder).
    pub fn start(path: &Path) -> Headless {
        let mut child = Command::new(bin())
            .args(["watch", "--headless"])
            .arg(path)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .env_remove("LOOPWATCH_PIPELINE")
            .spawn()
            .expect("spawn loopwatch watch --headless");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(text) = line else { break };
                let seq = text
                    .split_whitespace()
                    .find_map(|w| w.strip_prefix("seq="))
                    .and_then(|s| s.parse().ok())
                    .unwrap_or_else(|| panic!("headless line without seq: {text:?}"));
                if tx
                    .send(HeadlessLine {
                        text,
                        seq,
                        at: Instant::now(),
                    })
                    .is_err()
                {
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

    /// The child's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits until a line satisfies `want`, at most `limit`; returns it.
    pub fn wait_for(
        &mut self,
        limit: Duration,
        want: impl Fn(&HeadlessLine) -> bool,
    ) -> Option<HeadlessLine> {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            match self.lines.recv_timeout(left) {
                Ok(l) => {
                    self.seen.push(l.clone());
                    if want(&l) {
                        return Some(l);
                    }
                }
                Err(RecvTimeoutError::Timeout) => return None,
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("headless child ended: {:?}", self.seen)
                }
            }
        }
    }

    /// Waits for the line reporting `seq`.
    pub fn wait_seq(&mut self, seq: u64, limit: Duration) -> HeadlessLine {
        self.wait_for(limit, |l| l.seq == seq).unwrap_or_else(|| {
            panic!(
                "no line with seq={seq} within {limit:?}; saw {:?}",
                self.texts()
            )
        })
    }

    /// Lines arriving within `quiet` of each other are taken until none does.
    pub fn drain(&mut self, quiet: Duration) {
        while self.wait_for(quiet, |_| true).is_some() {}
    }

    /// True while the child runs.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Peak resident memory of the child so far (`VmHWM`, KiB).
    pub fn peak_rss_kib(&self) -> u64 {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.pid())).expect("proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmHWM in /proc/<pid>/status")
    }

    /// The texts seen so far.
    pub fn texts(&self) -> Vec<&str> {
        self.seen.iter().map(|l| l.text.as_str()).collect()
    }
}

impl Drop for Headless {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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
