//! Running one CHECK: `bash -c CHECK` through the process runner, from the
//! folder the checks are written for, stdin from `/dev/null`, stdout and
//! stderr into one pipe read as a stream, under a wall-clock limit.
//!
//! A timeout is decided by the clock, never by an exit code (a check that
//! itself exits 124 is just a nonzero exit). A check is done when its
//! shell has exited and every writer of the pipe has closed it (a
//! background job still printing belongs to the check, as in the
//! reference's `$(…)`); a background process that keeps the pipe open past
//! the limit is a timeout. Then the check's whole tree is stopped, what
//! called `setsid` or daemonized included: TERM, [`KILL_GRACE`], KILL.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::evidence::{CheckOutcome, OutputSink};
use crate::process::{self, AfterExit, Exit, Sink, Stop};

/// Time between SIGTERM and SIGKILL of a check's tree.
pub const KILL_GRACE: Duration = Duration::from_millis(500);

/// Where the checks run and what stops them.
#[derive(Debug, Clone)]
pub struct Checks {
    /// The folder every check runs in (the contract's `CHECK:` lines are
    /// written for the worktree root; `loopwatch gate0 run` keeps the
    /// reference's: the current folder).
    pub cwd: PathBuf,
    /// Asked for: the running check's tree is stopped, no other starts,
    /// and no evidence is written.
    pub stop: Stop,
    /// The run the checks work for, when `loopwatch run` runs them (see
    /// [`process::Command::on_behalf_of`]).
    pub on_behalf_of: Option<String>,
}

impl Checks {
    /// Checks run in `cwd`, stopped by `stop`.
    pub fn new(cwd: impl Into<PathBuf>, stop: &Stop) -> Self {
        Checks {
            cwd: cwd.into(),
            stop: stop.clone(),
            on_behalf_of: None,
        }
    }
}

/// Everything known about one check once it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRun {
    /// How it ended, as written into the contract.
    pub outcome: CheckOutcome,
    /// The first bytes of its output (empty after a timeout).
    pub head: Vec<u8>,
    /// More output followed `head`.
    pub head_truncated: bool,
    /// Wall-clock time it took.
    pub elapsed: Duration,
}

/// Runs `check` with `bash -c`, judging it against `expect`; `limit` of
/// `None` means no time limit. A check that cannot be started ends as exit
/// 127 with the reason as its output, as a missing shell would.
pub fn run_check(check: &[u8], expect: &[u8], limit: Option<Duration>, at: &Checks) -> CheckRun {
    let started = Instant::now();
    let sink = Arc::new(Mutex::new(OutputSink::new(expect)));
    let feed = sink.clone();
    let mut command = process::Command::new("bash", &at.cwd);
    if let Some(m) = &at.on_behalf_of {
        command = command.on_behalf_of(m.clone());
    }
    let ran = command
        .arg("-c")
        .arg(OsStr::from_bytes(check))
        .deadline_opt(limit)
        .grace(KILL_GRACE)
        .stdout(Sink::read().observe(move |chunk| {
            if let Ok(mut s) = feed.lock() {
                s.feed(chunk);
            }
        }))
        .merge_stderr()
        .after_exit(AfterExit::DrainOutput)
        .stop(&at.stop)
        .run();
    let outcome = match ran {
        Ok(ended) if ended.timed_out() => (CheckOutcome::TimedOut, None),
        Ok(ended) => {
            // The readers are done (or given up on): what they fed is final.
            let result = sink
                .lock()
                .ok()
                .map(|mut s| std::mem::replace(&mut *s, OutputSink::new(expect)).finish());
            match result {
                Some(r) => (judge(&ended.exit, &r), Some(r)),
                None => (CheckOutcome::TimedOut, None),
            }
        }
        Err(e) => {
            let summary = super::evidence::summarize(format!("cannot start bash: {e}").as_bytes());
            (CheckOutcome::Nonzero { code: 127, summary }, None)
        }
    };
    let (outcome, sink) = outcome;
    let (head, head_truncated) = sink.map_or((Vec::new(), false), |s| (s.head, s.head_truncated));
    CheckRun {
        outcome,
        head,
        head_truncated,
        elapsed: started.elapsed(),
    }
}

/// Exit 0 and the marker: MET; otherwise the reason it is not.
fn judge(exit: &Exit, sink: &super::evidence::SinkResult) -> CheckOutcome {
    let summary = sink.summary.clone();
    match exit.shell_code() {
        0 if sink.marker_found => CheckOutcome::Met { summary },
        0 => CheckOutcome::MarkerAbsent { summary },
        code => CheckOutcome::Nonzero { code, summary },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn here() -> Checks {
        Checks::new(std::env::temp_dir(), &Stop::new())
    }

    fn run(check: &str, expect: &str, limit_ms: u64) -> CheckOutcome {
        run_check(
            check.as_bytes(),
            expect.as_bytes(),
            Some(Duration::from_millis(limit_ms)),
            &here(),
        )
        .outcome
    }

    fn met(summary: &str) -> CheckOutcome {
        CheckOutcome::Met {
            summary: summary.into(),
        }
    }

    fn nonzero(code: i32, summary: &str) -> CheckOutcome {
        CheckOutcome::Nonzero {
            code,
            summary: summary.into(),
        }
    }

    #[test]
    fn met_needs_exit_zero_and_marker() {
        assert_eq!(run("echo OK; echo err >&2", "OK", 10_000), met("OK err"));
        assert_eq!(run("echo OK; exit 3", "OK", 10_000), nonzero(3, "OK"));
        assert_eq!(
            run("echo no", "OK", 10_000),
            CheckOutcome::MarkerAbsent {
                summary: "no".into()
            }
        );
    }

    #[test]
    fn exit_124_is_not_a_timeout_and_signals_add_128() {
        assert_eq!(run("exit 124", "x", 10_000), nonzero(124, ""));
        assert_eq!(run("kill -9 $$", "x", 10_000), nonzero(137, ""));
    }

    #[test]
    fn stdin_is_empty() {
        assert_eq!(run("cat; echo done", "done", 10_000), met("done"));
    }

    #[test]
    fn timeout_by_the_clock() {
        let r = run_check(b"sleep 5", b"x", Some(Duration::from_millis(200)), &here());
        assert_eq!(r.outcome, CheckOutcome::TimedOut);
        assert!(r.elapsed < Duration::from_secs(3), "{:?}", r.elapsed);
    }

    #[test]
    fn a_background_job_still_printing_belongs_to_the_check() {
        assert_eq!(
            run("(sleep 0.2; echo late) & echo early", "late", 10_000),
            met("early late")
        );
    }

    #[test]
    fn a_stop_ends_the_running_check() {
        let dir = tempfile::tempdir().unwrap();
        let at = Checks::new(dir.path(), &Stop::new());
        let stop = at.stop.clone();
        let flag = dir.path().join("running");
        std::thread::spawn(move || {
            // Once the check runs (its file is there), the stop comes.
            while !flag.exists() {
                std::thread::yield_now();
            }
            stop.ask(143);
        });
        let r = run_check(b"touch running; sleep 30", b"x", None, &at);
        assert!(r.elapsed < Duration::from_secs(10), "{:?}", r.elapsed);
        assert_eq!(
            r.outcome,
            CheckOutcome::Nonzero {
                code: 143,
                summary: String::new()
            }
        );
    }

    #[test]
    fn no_limit_waits_for_the_end() {
        let r = run_check(b"sleep 0.2; echo late", b"late", None, &here());
        assert!(r.outcome.is_met());
    }
}
