//! Running one CHECK: `bash -c CHECK` in its own process group, stdin from
//! `/dev/null`, stdout and stderr into one pipe read as a stream, under a
//! wall-clock limit.
//!
//! A timeout is decided by the clock, never by an exit code (a check that
//! itself exits 124 is just a nonzero exit). On timeout the whole process
//! group gets SIGTERM, then SIGKILL after [`KILL_GRACE`], so nothing the
//! check started in the background outlives it. A check is done when its
//! shell has exited and every writer of the pipe has closed it; a
//! background process that keeps the pipe open past the limit is a timeout.

use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group};

use super::evidence::{CheckOutcome, OutputSink, SinkResult};

/// Time between SIGTERM and SIGKILL of a timed-out check's process group.
pub const KILL_GRACE: Duration = Duration::from_millis(500);

/// How long to wait for the pipe to close once the group was killed.
const DRAIN_AFTER_KILL: Duration = Duration::from_secs(2);

/// Process group id of the check running now (0: none).
static RUNNING_GROUP: AtomicI32 = AtomicI32::new(0);

/// Exit code asked for by an interrupt (0: not interrupted).
static INTERRUPTED: AtomicI32 = AtomicI32::new(0);

/// Records an interrupt (`exit_code` is what the process should exit with)
/// and kills the process group of the check running now, if any: SIGTERM,
/// then SIGKILL after [`KILL_GRACE`]. No further check starts and `run`
/// writes no evidence once this was called.
pub fn interrupt(exit_code: i32) {
    INTERRUPTED.store(exit_code, Ordering::SeqCst);
    let Some(pgid) = Pid::from_raw(RUNNING_GROUP.load(Ordering::SeqCst)) else {
        return;
    };
    let _ = kill_process_group(pgid, Signal::TERM);
    thread::sleep(KILL_GRACE);
    let _ = kill_process_group(pgid, Signal::KILL);
}

/// The exit code given to [`interrupt`], if it was called.
pub fn interrupted() -> Option<i32> {
    match INTERRUPTED.load(Ordering::SeqCst) {
        0 => None,
        code => Some(code),
    }
}

/// Clears [`RUNNING_GROUP`] when the check it names is over.
struct RunningGuard;

impl Drop for RunningGuard {
    fn drop(&mut self) {
        RUNNING_GROUP.store(0, Ordering::SeqCst);
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
pub fn run_check(check: &[u8], expect: &[u8], limit: Option<Duration>) -> CheckRun {
    let started = Instant::now();
    let (outcome, sink) = match spawn_and_wait(check, expect, limit, started) {
        Ok(Finished::Exited(status, sink)) => (judge(status, &sink), Some(sink)),
        Ok(Finished::TimedOut) => (CheckOutcome::TimedOut, None),
        Err(e) => {
            let summary = super::evidence::summarize(format!("cannot start bash: {e}").as_bytes());
            (CheckOutcome::Nonzero { code: 127, summary }, None)
        }
    };
    let (head, head_truncated) = sink.map_or((Vec::new(), false), |s| (s.head, s.head_truncated));
    CheckRun {
        outcome,
        head,
        head_truncated,
        elapsed: started.elapsed(),
    }
}

/// Exit 0 and the marker: MET; otherwise the reason it is not.
fn judge(status: ExitStatus, sink: &SinkResult) -> CheckOutcome {
    let summary = sink.summary.clone();
    match exit_code(status) {
        0 if sink.marker_found => CheckOutcome::Met { summary },
        0 => CheckOutcome::MarkerAbsent { summary },
        code => CheckOutcome::Nonzero { code, summary },
    }
}

/// The shell convention: the exit code, or 128 + the signal number.
fn exit_code(status: ExitStatus) -> i32 {
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(128)
}

enum Finished {
    Exited(ExitStatus, SinkResult),
    TimedOut,
}

enum Event {
    Exited(std::io::Result<ExitStatus>),
    Drained(SinkResult),
}

fn spawn_and_wait(
    check: &[u8],
    expect: &[u8],
    limit: Option<Duration>,
    started: Instant,
) -> std::io::Result<Finished> {
    let (mut reader, writer) = std::io::pipe()?;
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(OsStr::from_bytes(check))
        .stdin(Stdio::null())
        .stdout(writer.try_clone()?)
        .stderr(writer)
        .process_group(0)
        .spawn()?;
    // The Command (and its copies of the write end) is gone: only the
    // child's processes hold the pipe open now.
    let pgid = Pid::from_child(&child);
    RUNNING_GROUP.store(pgid.as_raw_nonzero().get(), Ordering::SeqCst);
    let _running = RunningGuard;
    let (tx, rx) = mpsc::channel();
    let tx_read = tx.clone();
    let marker = expect.to_vec();
    thread::spawn(move || {
        let mut sink = OutputSink::new(&marker);
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => sink.feed(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = tx_read.send(Event::Drained(sink.finish()));
    });
    thread::spawn(move || {
        let _ = tx.send(Event::Exited(child.wait()));
    });

    let deadline = limit.and_then(|l| started.checked_add(l));
    let (mut status, mut sink) = (None, None);
    while status.is_none() || sink.is_none() {
        let event = match deadline {
            None => rx.recv().ok(),
            Some(d) => match rx.recv_timeout(d.saturating_duration_since(Instant::now())) {
                Ok(ev) => Some(ev),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    kill_group(pgid, &rx, status.is_some(), sink.is_some());
                    return Ok(Finished::TimedOut);
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => None,
            },
        };
        match event {
            Some(Event::Exited(s)) => status = Some(s?),
            Some(Event::Drained(r)) => sink = Some(r),
            None => return Err(std::io::Error::other("check supervisor threads vanished")),
        }
    }
    match (status, sink) {
        (Some(s), Some(r)) => Ok(Finished::Exited(s, r)),
        _ => Err(std::io::Error::other("check ended without status")),
    }
}

/// SIGTERM to the group, a grace period for it to exit and close the pipe,
/// then SIGKILL to whatever is left; waits (bounded) for the shell's exit.
fn kill_group(pgid: Pid, rx: &mpsc::Receiver<Event>, mut exited: bool, mut drained: bool) {
    let _ = kill_process_group(pgid, Signal::TERM);
    let grace_end = Instant::now() + KILL_GRACE;
    while !(exited && drained) {
        match rx.recv_timeout(grace_end.saturating_duration_since(Instant::now())) {
            Ok(Event::Exited(_)) => exited = true,
            Ok(Event::Drained(_)) => drained = true,
            Err(_) => break,
        }
    }
    // Members that ignored SIGTERM, or that closed the pipe but linger.
    let _ = kill_process_group(pgid, Signal::KILL);
    let drain_end = Instant::now() + DRAIN_AFTER_KILL;
    while !exited {
        match rx.recv_timeout(drain_end.saturating_duration_since(Instant::now())) {
            Ok(Event::Exited(_)) => exited = true,
            Ok(Event::Drained(_)) => {}
            Err(_) => break,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(check: &str, expect: &str, limit_ms: u64) -> CheckOutcome {
        run_check(
            check.as_bytes(),
            expect.as_bytes(),
            Some(Duration::from_millis(limit_ms)),
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
        let r = run_check(b"sleep 5", b"x", Some(Duration::from_millis(200)));
        assert_eq!(r.outcome, CheckOutcome::TimedOut);
        assert!(r.elapsed < Duration::from_secs(3), "{:?}", r.elapsed);
    }

    #[test]
    fn no_limit_waits_for_the_end() {
        let r = run_check(b"sleep 0.2; echo late", b"late", None);
        assert!(r.outcome.is_met());
    }
}
