//! Agent processes that cannot escape: each one in its own process group
//! (and, through the `loopwatch` binary as a shim, with a parent-death
//! signal so it dies with the engine), its stdout and stderr read at once
//! as they come into its log with a byte cap (a reader that waited for the
//! exit would deadlock on a full pipe), a timeout, and a stop that goes to
//! the whole group: SIGTERM, a grace period, SIGKILL. When the agent exits,
//! whatever it left running in its group is stopped the same way.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group, test_kill_process_group};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::watch;

use super::adapter::Invocation;

/// The environment variable that marks every process of a dispatch:
/// `<pipeline dir>#<dispatch>`. A later engine finds and stops the
/// processes of a dead one by it.
pub const MARKER_ENV: &str = "LOOPWATCH_DISPATCH";

/// The hidden subcommand of the `loopwatch` binary that sets the
/// parent-death signal and then runs the agent in its place.
pub const SHIM_SUBCOMMAND: &str = "__agent-shim";

/// Everything needed to start one agent.
#[derive(Debug, Clone)]
pub struct Spawn {
    /// What to run.
    pub invocation: Invocation,
    /// Its working folder.
    pub cwd: PathBuf,
    /// Extra environment.
    pub env: Vec<(String, String)>,
    /// The log both streams go to.
    pub log: PathBuf,
    /// Bytes written to the log at most.
    pub log_limit: u64,
    /// Bytes of stdout kept in memory at most (the adapter reads them).
    pub stdout_limit: usize,
    /// How long it may run.
    pub timeout: Duration,
    /// SIGTERM → SIGKILL grace.
    pub grace: Duration,
    /// The `loopwatch` binary, to start the agent through its shim.
    pub shim: Option<PathBuf>,
}

/// How a dispatch ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Exit status, when it exited (not killed by a signal).
    pub exit_code: Option<i32>,
    /// Stopped at its timeout.
    pub timed_out: bool,
    /// Stopped because the engine was asked to stop.
    pub interrupted: bool,
    /// Stdout, up to the limit.
    pub stdout: Vec<u8>,
    /// Stdout went past the limit.
    pub stdout_truncated: bool,
    /// Bytes the agent wrote on both streams.
    pub bytes: u64,
    /// Spawn to reap.
    pub duration: Duration,
}

/// A started agent.
pub struct Running {
    child: tokio::process::Child,
    pid: u32,
    started: Instant,
    spec: Spawn,
}

/// The log of one dispatch, shared by the two readers.
struct Log {
    file: std::fs::File,
    written: u64,
    limit: u64,
    cut: bool,
}

impl Log {
    fn write(&mut self, chunk: &[u8]) {
        let room = self.limit.saturating_sub(self.written);
        let take = chunk.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        // A log that cannot be written must not stop the agent: the
        // answer is read from memory.
        if take > 0 && self.file.write_all(&chunk[..take]).is_ok() {
            self.written += take as u64;
        }
        if take < chunk.len() && !self.cut {
            self.cut = true;
            let _ = writeln!(
                self.file,
                "\n[loopwatch: log cut at {} bytes; the rest was read and dropped]",
                self.limit
            );
        }
    }
}

/// Starts an agent in a new process group; stdin is written by [`Running::finish`].
pub fn spawn(spec: Spawn) -> std::io::Result<Running> {
    let inv = &spec.invocation;
    let mut cmd = match &spec.shim {
        Some(shim) => {
            let mut c = tokio::process::Command::new(shim);
            c.arg(SHIM_SUBCOMMAND)
                .arg(std::process::id().to_string())
                .arg(&inv.program)
                .args(&inv.args);
            c
        }
        None => {
            let mut c = tokio::process::Command::new(&inv.program);
            c.args(&inv.args);
            c
        }
    };
    cmd.current_dir(&spec.cwd)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(false);
    let child = cmd.spawn()?;
    let pid = child.id().unwrap_or(0);
    Ok(Running {
        child,
        pid,
        started: Instant::now(),
        spec,
    })
}

impl Running {
    /// The agent's pid (and process group id).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Feeds stdin, reads both streams into the log, and waits for the
    /// exit, the timeout or a stop (`stop` turning true), whichever comes
    /// first; stops the whole group in the last two cases and always stops
    /// what the agent left behind in it.
    pub async fn finish(
        mut self,
        stop: &mut watch::Receiver<Option<i32>>,
    ) -> std::io::Result<Outcome> {
        let spec = self.spec.clone();
        if let Some(dir) = spec.log.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let log = Arc::new(Mutex::new(Log {
            file: std::fs::File::create(&spec.log)?,
            written: 0,
            limit: spec.log_limit,
            cut: false,
        }));
        let stdin_task = self.child.stdin.take().map(|mut w| {
            let data = spec.invocation.stdin.clone();
            tokio::spawn(async move {
                // An agent that does not read its stdin closes the pipe: not an error.
                let _ = w.write_all(&data).await;
                let _ = w.shutdown().await;
            })
        });
        let out_task = self
            .child
            .stdout
            .take()
            .map(|r| tokio::spawn(read_stream(r, log.clone(), Some(spec.stdout_limit))));
        let err_task = self
            .child
            .stderr
            .take()
            .map(|r| tokio::spawn(read_stream(r, log.clone(), None)));
        let mut timed_out = false;
        let mut interrupted = stop.borrow().is_some();
        let status = if interrupted {
            None
        } else {
            tokio::select! {
                s = self.child.wait() => Some(s?),
                () = tokio::time::sleep(spec.timeout) => { timed_out = true; None }
                () = stopped(stop) => { interrupted = true; None }
            }
        };
        let status = match status {
            Some(s) => s,
            None => stop_group(&mut self.child, self.pid, spec.grace).await?,
        };
        // Whatever the agent started and left behind dies with the dispatch.
        stop_leftovers(self.pid, spec.grace).await;
        let duration = self.started.elapsed();
        if let Some(t) = stdin_task {
            t.abort();
        }
        let mut outcome = Outcome {
            exit_code: status.code(),
            timed_out,
            interrupted,
            duration,
            ..Outcome::default()
        };
        for (task, is_stdout) in [(out_task, true), (err_task, false)] {
            let Some(task) = task else { continue };
            // A process that left the group may still hold the pipe open:
            // the reader is given up on after the grace period.
            let abort = task.abort_handle();
            match tokio::time::timeout(spec.grace.max(Duration::from_millis(200)), task).await {
                Ok(Ok(r)) => {
                    outcome.bytes += r.total;
                    if is_stdout {
                        outcome.stdout = r.kept;
                        outcome.stdout_truncated = r.truncated;
                    }
                }
                _ => abort.abort(),
            }
        }
        if let Ok(mut l) = log.lock() {
            let _ = l.file.flush();
        }
        Ok(outcome)
    }
}

async fn stopped(stop: &mut watch::Receiver<Option<i32>>) {
    // A closed channel means nobody can ask for a stop any more.
    if stop.wait_for(Option::is_some).await.is_err() {
        std::future::pending::<()>().await;
    }
}

struct StreamResult {
    kept: Vec<u8>,
    truncated: bool,
    total: u64,
}

async fn read_stream<R: tokio::io::AsyncRead + Unpin>(
    mut r: R,
    log: Arc<Mutex<Log>>,
    keep: Option<usize>,
) -> StreamResult {
    let mut buf = vec![0u8; 64 * 1024];
    let mut res = StreamResult {
        kept: Vec::new(),
        truncated: false,
        total: 0,
    };
    loop {
        let n = match r.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let chunk = &buf[..n];
        res.total += n as u64;
        if let Ok(mut l) = log.lock() {
            l.write(chunk);
        }
        if let Some(limit) = keep {
            let room = limit.saturating_sub(res.kept.len());
            res.kept.extend_from_slice(&chunk[..n.min(room)]);
            res.truncated |= n > room;
        }
    }
    res
}

/// SIGTERM to the group, SIGKILL after `grace`; returns the agent's status.
async fn stop_group(
    child: &mut tokio::process::Child,
    pgid: u32,
    grace: Duration,
) -> std::io::Result<std::process::ExitStatus> {
    signal_group(pgid, Signal::TERM);
    match tokio::time::timeout(grace, child.wait()).await {
        Ok(s) => s,
        Err(_) => {
            signal_group(pgid, Signal::KILL);
            child.wait().await
        }
    }
}

fn signal_group(pgid: u32, sig: Signal) {
    if let Some(p) = i32::try_from(pgid).ok().and_then(Pid::from_raw) {
        // ESRCH: the group is already gone.
        let _ = kill_process_group(p, sig);
    }
}

fn group_alive(pgid: u32) -> bool {
    i32::try_from(pgid)
        .ok()
        .and_then(Pid::from_raw)
        .is_some_and(|p| test_kill_process_group(p).is_ok())
}

/// Stops what is left in a group: SIGTERM, up to `grace` for it to go, SIGKILL.
pub async fn stop_leftovers(pgid: u32, grace: Duration) {
    if !group_alive(pgid) {
        return;
    }
    signal_group(pgid, Signal::TERM);
    if wait_gone(pgid, grace).await {
        return;
    }
    signal_group(pgid, Signal::KILL);
    wait_gone(pgid, Duration::from_secs(5)).await;
}

async fn wait_gone(pgid: u32, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    while group_alive(pgid) {
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    true
}

/// Stops every process still carrying the marker of a dispatch of
/// `pipeline_dir` (left by an engine that died), group by group; returns how
/// many processes were found. Only processes of the same user are visible.
pub async fn stop_marked(pipeline_dir: &Path, grace: Duration) -> usize {
    let prefix = format!("{MARKER_ENV}={}#", pipeline_dir.display());
    let found = marked_processes(&prefix);
    let mut groups: Vec<u32> = found.iter().map(|&(_, g)| g).collect();
    groups.sort_unstable();
    groups.dedup();
    for &(pid, _) in &found {
        if let Some(p) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
            let _ = rustix::process::kill_process(p, Signal::TERM);
        }
    }
    for g in groups {
        stop_leftovers(g, grace).await;
    }
    // A marked process outside those groups gets SIGKILL directly.
    for (pid, _) in marked_processes(&prefix) {
        if let Some(p) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
            let _ = rustix::process::kill_process(p, Signal::KILL);
        }
    }
    found.len()
}

/// `(pid, pgid)` of every process whose environment holds `prefix`.
fn marked_processes(prefix: &str) -> Vec<(u32, u32)> {
    let me = std::process::id();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(env) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if !env
            .split(|&b| b == 0)
            .any(|kv| kv.starts_with(prefix.as_bytes()))
        {
            continue;
        }
        if let Some(pgid) = pgid_of(pid) {
            out.push((pid, pgid));
        }
    }
    out
}

/// Field 5 of `/proc/<pid>/stat` (after the parenthesised command name).
fn pgid_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(2)?.parse().ok()
}

/// The shim's side: sets the parent-death signal, checks the engine is
/// still its parent (it may have died before the signal was set), then
/// runs the agent in this process. Returns only on failure.
pub fn shim_exec(
    engine_pid: &str,
    program: &std::ffi::OsStr,
    args: &[std::ffi::OsString],
) -> std::io::Error {
    use std::os::unix::process::CommandExt;
    if let Err(e) = rustix::process::set_parent_process_death_signal(Some(Signal::KILL)) {
        return e.into();
    }
    let parent = rustix::process::getppid().map_or(0, |p| p.as_raw_nonzero().get());
    if engine_pid.parse::<i32>().ok() != Some(parent) {
        return std::io::Error::other("the engine that started this agent is gone");
    }
    std::process::Command::new(program).args(args).exec()
}
