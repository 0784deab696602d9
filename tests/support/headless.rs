//! A `loopwatch watch --headless` child whose lines are read on a thread
//! and waited for with deadlines (killed on drop). It stands alone, so a
//! test crate can take just this file.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

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
    /// `None` once handed out by [`Headless::into_child`].
    child: Option<Child>,
    lines: Receiver<HeadlessLine>,
    /// Every line received so far, in order.
    pub seen: Vec<HeadlessLine>,
}

impl Headless {
    /// Starts watching `path` (a worktree or a `.pipeline` folder); the
    /// child's stderr is dropped.
    pub fn start(path: &Path) -> Headless {
        Headless::spawn([path.as_os_str()], &[], Stdio::null())
    }

    /// Starts `watch --headless ARGS...` with `env` added; `stderr` is
    /// where the child's stderr goes (piped: [`Headless::child`] has it).
    pub fn spawn<'a>(
        args: impl IntoIterator<Item = &'a OsStr>,
        env: &[(&str, &str)],
        stderr: Stdio,
    ) -> Headless {
        let mut child = Command::new(env!("CARGO_BIN_EXE_loopwatch"))
            .args(["watch", "--headless"])
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
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
            child: Some(child),
            lines: rx,
            seen: Vec::new(),
        }
    }

    /// The child process.
    pub fn child(&mut self) -> &mut Child {
        self.child.as_mut().expect("the child was handed out")
    }

    /// The child process, no longer killed on drop (to signal and wait for).
    pub fn into_child(mut self) -> Child {
        self.child.take().expect("the child was handed out")
    }

    /// The child's pid.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("the child was handed out").id()
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
        matches!(self.child().try_wait(), Ok(None))
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
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
