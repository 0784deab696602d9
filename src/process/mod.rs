//! The one way loopwatch runs a child process: agents, GATE 0's `CHECK:`
//! commands, repro tests, git (the code module's and floor-guard's) and
//! the `on_human_gate` hook all go through [`Command`].
//!
//! A command names its working folder (loopwatch never changes its own),
//! its environment (inherited or clean), its stdin, a deadline, a grace
//! period, what is kept of its output and a [`Stop`] it obeys. Its result,
//! [`Ended`], says how it ended (an exit code, or a signal and why
//! loopwatch sent it), with the head and the tail of each stream.
//!
//! Each child runs under a small supervisor: the `loopwatch` binary itself,
//! started as `loopwatch __supervise` ([`supervise`]). The supervisor is
//! the subreaper of the child's whole tree (`PR_SET_CHILD_SUBREAPER`), so
//! every descendant, whether it called `setsid`, daemonized or
//! double-forked, stays below it; when the child has ended (or the
//! deadline or a stop came) it sends TERM to the whole tree, waits the
//! grace period, then KILL, until nothing is left. Its life is tied to
//! loopwatch's by a socket on its stdin that only loopwatch holds: when
//! loopwatch goes away, even by `kill -9`, the socket's end is read, and
//! the supervisor ends the tree within [`LIFELINE_GRACE`] and a little.
//! Nothing here depends on which thread started the child (a parent-death
//! signal would: it fires when the forking *thread* exits).
//!
//! The exception is [`terminal::run_in_terminal`]: a program a person uses
//! on the terminal (the TUI's pager), which needs the terminal itself.
//!
//! Without the `loopwatch` binary at hand (the library's own unit tests
//! built alone), a child runs in a process group of its own instead, and
//! the group is what is stopped.

mod capture;
mod running;
mod stop;
pub mod supervise;
pub mod terminal;
pub mod tree;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

pub use capture::{Captured, LogFile, Sink};
pub use running::{Running, Stopper};
pub use stop::Stop;

/// How long the supervisor lets a tree wind down (TERM → KILL) when
/// loopwatch went away without ending it: nobody is left to record
/// anything, and a person expects nothing to go on writing.
pub const LIFELINE_GRACE: Duration = Duration::from_secs(1);

/// A child process to run.
pub struct Command {
    program: OsString,
    args: Vec<OsString>,
    cwd: PathBuf,
    clear_env: bool,
    env: Vec<(OsString, Option<OsString>)>,
    stdin: Option<Vec<u8>>,
    deadline: Option<Duration>,
    grace: Duration,
    stdout: Sink,
    stderr: Sink,
    merge_stderr: bool,
    stop: Option<Stop>,
    after_exit: AfterExit,
    supervisor: Supervisor,
    on_behalf_of: Option<String>,
}

/// What the runner waits for once the child itself has exited, before its
/// tree is ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterExit {
    /// Nothing: what it left running is stopped at once (agents, tests).
    EndTree,
    /// Its output to close (every writer of the pipes gone), up to the
    /// deadline: a `CHECK:` whose background job still prints belongs to
    /// the check, as in the reference floor's `$(…)`.
    DrainOutput,
}

#[derive(Debug, Clone)]
enum Supervisor {
    /// Found next to the running binary (see [`supervisor_binary`]).
    Located,
    /// Given by the caller.
    At(PathBuf),
    /// None: a process group only.
    Without,
}

impl Command {
    /// `program` run in `cwd`, inheriting loopwatch's environment, stdin
    /// from `/dev/null`, both streams discarded, no deadline, a 5 s grace.
    pub fn new(program: impl Into<OsString>, cwd: impl Into<PathBuf>) -> Self {
        Command {
            program: program.into(),
            args: Vec::new(),
            cwd: cwd.into(),
            clear_env: false,
            env: Vec::new(),
            stdin: None,
            deadline: None,
            grace: Duration::from_secs(5),
            stdout: Sink::null(),
            stderr: Sink::null(),
            merge_stderr: false,
            stop: None,
            after_exit: AfterExit::EndTree,
            supervisor: Supervisor::Located,
            on_behalf_of: None,
        }
    }

    /// The child works for a run (`<pipeline>#<what>`, the dispatch
    /// marker): set in its environment as `LOOPWATCH_DISPATCH` and in its
    /// supervisor's command line, so that nothing in its tree may record
    /// into that run or decide its gates (see [`tree::dispatch_of`]).
    pub fn on_behalf_of(mut self, marker: impl Into<String>) -> Self {
        let marker = marker.into();
        self.env
            .push((tree::MARKER_ENV.into(), Some(marker.clone().into())));
        self.on_behalf_of = Some(marker);
        self
    }

    /// Adds an argument.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), Some(value.into())));
        self
    }

    /// Sets environment variables.
    pub fn envs<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<OsString>,
        V: Into<OsString>,
    {
        for (k, v) in vars {
            self.env.push((k.into(), Some(v.into())));
        }
        self
    }

    /// Removes an inherited environment variable.
    pub fn env_remove(mut self, key: impl Into<OsString>) -> Self {
        self.env.push((key.into(), None));
        self
    }

    /// Starts from an empty environment: only the variables set here.
    pub fn env_clear(mut self) -> Self {
        self.clear_env = true;
        self.env.clear();
        self
    }

    /// Bytes the child reads on stdin (then end of file). It reads them
    /// from a private temporary file, so it may read them at its own pace
    /// or not at all.
    pub fn stdin(mut self, bytes: Vec<u8>) -> Self {
        self.stdin = Some(bytes);
        self
    }

    /// How long it may run; past it the tree is stopped ([`Cause::Deadline`]).
    pub fn deadline(mut self, limit: Duration) -> Self {
        self.deadline = Some(limit);
        self
    }

    /// [`Command::deadline`] when `Some`, none otherwise.
    pub fn deadline_opt(mut self, limit: Option<Duration>) -> Self {
        self.deadline = limit;
        self
    }

    /// Time between TERM and KILL when the tree is stopped.
    pub fn grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// What happens to stdout.
    pub fn stdout(mut self, sink: Sink) -> Self {
        self.stdout = sink;
        self
    }

    /// What happens to stderr.
    pub fn stderr(mut self, sink: Sink) -> Self {
        self.stderr = sink;
        self
    }

    /// Stderr goes into stdout's pipe, as `2>&1` would: one stream, in the
    /// order written (the stderr sink is then unused).
    pub fn merge_stderr(mut self) -> Self {
        self.merge_stderr = true;
        self
    }

    /// The stop this child obeys ([`Cause::Stop`]).
    pub fn stop(mut self, stop: &Stop) -> Self {
        self.stop = Some(stop.clone());
        self
    }

    /// What is waited for after the child exits (default [`AfterExit::EndTree`]).
    pub fn after_exit(mut self, after: AfterExit) -> Self {
        self.after_exit = after;
        self
    }

    /// Runs the child under this supervisor binary (a `loopwatch`).
    pub fn supervisor(mut self, binary: impl Into<PathBuf>) -> Self {
        self.supervisor = Supervisor::At(binary.into());
        self
    }

    /// Runs the child without a supervisor, in a process group of its own.
    pub fn unsupervised(mut self) -> Self {
        self.supervisor = Supervisor::Without;
        self
    }

    /// The program and its arguments as one line, for messages.
    pub fn display(&self) -> String {
        let mut words = vec![self.program.to_string_lossy().into_owned()];
        words.extend(self.args.iter().map(|a| a.to_string_lossy().into_owned()));
        shlex::try_join(words.iter().map(String::as_str)).unwrap_or_else(|_| words.join(" "))
    }

    /// Starts it. An error when the program or the supervisor cannot be
    /// started (missing, not executable: the path and the reason), before
    /// anything ran.
    pub fn spawn(self) -> Result<Running, SpawnError> {
        running::spawn(self)
    }

    /// Starts it and waits for its end.
    pub fn run(self) -> Result<Ended, SpawnError> {
        Ok(self.spawn()?.wait())
    }

    fn supervisor_path(&self) -> Option<PathBuf> {
        match &self.supervisor {
            Supervisor::Located => supervisor_binary().map(Path::to_path_buf),
            Supervisor::At(p) => Some(p.clone()),
            Supervisor::Without => None,
        }
    }
}

/// How a child ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this status.
    Code(i32),
    /// A signal ended it (see [`Ended::cause`] for whether loopwatch sent it).
    Signal(i32),
    /// Its supervisor ended before saying how (it was killed from outside).
    Lost(String),
}

impl Exit {
    /// The exit status, when it exited.
    pub fn code(&self) -> Option<i32> {
        match self {
            Exit::Code(c) => Some(*c),
            _ => None,
        }
    }

    /// The signal that ended it, when one did.
    pub fn signal(&self) -> Option<i32> {
        match self {
            Exit::Signal(s) => Some(*s),
            _ => None,
        }
    }

    /// The shell's convention: the status, or 128 + the signal.
    pub fn shell_code(&self) -> i32 {
        match self {
            Exit::Code(c) => *c,
            Exit::Signal(s) => 128 + s,
            Exit::Lost(_) => 128,
        }
    }

    /// Exited 0.
    pub fn success(&self) -> bool {
        *self == Exit::Code(0)
    }
}

/// Why loopwatch ended a child before it ended by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// It ran past its deadline.
    Deadline(Duration),
    /// A stop was asked for, with the exit code loopwatch will end with
    /// (130 SIGINT, 143 SIGTERM, 129 SIGHUP: loopwatch going away).
    Stop(i32),
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cause::Deadline(d) => write!(f, "its deadline ({})", crate::util::duration_text(*d)),
            Cause::Stop(code) => match code {
                129 => f.write_str("loopwatch going away (SIGHUP)"),
                130 => f.write_str("loopwatch being stopped (SIGINT)"),
                143 => f.write_str("loopwatch going away (SIGTERM)"),
                c => write!(f, "a stop (exit {c})"),
            },
        }
    }
}

/// A finished child.
#[derive(Debug, Clone)]
pub struct Ended {
    /// How the child itself ended.
    pub exit: Exit,
    /// Why loopwatch stopped it, when it did (the deadline or a stop came
    /// before it ended by itself).
    pub cause: Option<Cause>,
    /// What was kept of stdout (of both streams when merged).
    pub stdout: Captured,
    /// What was kept of stderr.
    pub stderr: Captured,
    /// From the spawn until the tree was gone.
    pub duration: std::time::Duration,
    /// Processes of its tree still running once it had ended, stopped then.
    pub leftovers: usize,
}

impl Ended {
    /// Exited 0 on its own.
    pub fn success(&self) -> bool {
        self.cause.is_none() && self.exit.success()
    }

    /// Stopped at its deadline.
    pub fn timed_out(&self) -> bool {
        matches!(self.cause, Some(Cause::Deadline(_)))
    }

    /// Stopped by a stop (the code asked), when it was.
    pub fn stopped(&self) -> Option<i32> {
        match self.cause {
            Some(Cause::Stop(c)) => Some(c),
            _ => None,
        }
    }

    /// One line: `exited with status 1`, `killed by SIGTERM, sent by
    /// loopwatch at its deadline (20m)`, `killed by SIGKILL (not sent by
    /// loopwatch)`.
    pub fn describe(&self) -> String {
        let how = match &self.exit {
            Exit::Code(c) => format!("exited with status {c}"),
            Exit::Signal(s) => format!("killed by {}", crate::util::signal_name(*s)),
            Exit::Lost(why) => format!("ended unobserved: {why}"),
        };
        match (&self.exit, self.cause) {
            (Exit::Signal(_), Some(c)) => format!("{how}, sent by loopwatch at {c}"),
            (Exit::Signal(_), None) => format!("{how} (not sent by loopwatch)"),
            (_, Some(c)) => format!("stopped at {c}: {how}"),
            (_, None) => how,
        }
    }
}

/// Why a child could not be started.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// The program could not be executed.
    #[error("cannot start {program}: {reason}")]
    Program {
        /// The program as given.
        program: String,
        /// Why (not found, permission denied, …).
        reason: String,
    },
    /// The supervisor could not be started or did not answer.
    #[error("cannot start the process supervisor {}: {reason}", path.display())]
    Supervisor {
        /// The `loopwatch` binary.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// Setting up its pipes or stdin failed.
    #[error("cannot start {program}: {source}")]
    Io {
        /// The program as given.
        program: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// The binary the `loopwatch` program runs from, told by its `main`
/// ([`this_binary_supervises`]): whatever its file is named, it is the one
/// that supervises children.
static MAIN_BINARY: OnceLock<PathBuf> = OnceLock::new();

/// Called by the `loopwatch` binary's `main`: this executable is the
/// program, and starts the supervisors of its children (`__supervise`),
/// whatever its file is named (installed as `lw`, copied, linked).
pub fn this_binary_supervises() {
    if let Ok(exe) = std::env::current_exe() {
        let _ = MAIN_BINARY.set(exe);
    }
}

/// The `loopwatch` binary that supervises children: the running program's
/// (see [`this_binary_supervises`]), else the running binary when it is
/// named `loopwatch`, else a `loopwatch` beside the folder it runs from (a
/// test binary in `target/debug/deps/`), else none. Found once: it is a
/// fact about this process.
pub fn supervisor_binary() -> Option<&'static Path> {
    if let Some(main) = MAIN_BINARY.get() {
        return Some(main);
    }
    static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let exe = std::env::current_exe().ok()?;
            if exe.file_name() == Some(OsStr::new(BINARY)) {
                return Some(exe);
            }
            let beside = exe.parent()?.parent()?.join(BINARY);
            beside.is_file().then_some(beside)
        })
        .as_deref()
}

/// The binary's file name.
const BINARY: &str = "loopwatch";

#[cfg(test)]
mod tests;
