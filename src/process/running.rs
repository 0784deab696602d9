//! loopwatch's side of a child: starting it (under its supervisor, or in a
//! process group of its own when there is none), reading its streams on
//! threads of their own as they come, and waiting for its end, its
//! deadline or its stop, whichever comes first. Everything the wait hears
//! arrives on one channel, so the waiting thread sleeps until something
//! happens: no polling.

use std::io::{BufRead, BufReader, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rustix::process::Signal;

use super::capture::Captured;
use super::stop::Listening;
use super::supervise::{self, SUBCOMMAND};
use super::{AfterExit, Cause, Command, Ended, Exit, SpawnError, tree};

/// How long a supervisor may take to say it started its program.
const START_ANSWER: Duration = Duration::from_secs(30);

/// How long the readers get, once the tree is gone, to read what is left
/// in the pipes (a process outside the tree holding a pipe open is given
/// up on).
const DRAIN_AFTER_END: Duration = Duration::from_millis(500);

/// A started child.
pub struct Running {
    pid: u32,
    group: u32,
    ctl: Control,
    tx: mpsc::Sender<Event>,
    rx: mpsc::Receiver<Event>,
    streams: usize,
    started: Instant,
    deadline: Option<Duration>,
    grace: Duration,
    after_exit: AfterExit,
    _listening: Option<Listening>,
}

/// Asks a running child to stop, from any thread.
#[derive(Clone)]
pub struct Stopper(mpsc::Sender<Event>);

impl Stopper {
    /// Stops the child's tree (TERM, grace, KILL), [`Cause::Stop`] `code`.
    pub fn stop(&self, code: i32) {
        let _ = self.0.send(Event::Stop(code));
    }
}

enum Control {
    Supervised {
        child: std::process::Child,
        socket: UnixStream,
    },
    Group {
        pgid: u32,
    },
    /// Waited for.
    Done,
}

enum Event {
    Exited(Exit),
    TreeEnded(usize),
    SupervisorGone,
    Stream(usize, Captured),
    Stop(i32),
}

pub(super) fn spawn(cmd: Command) -> Result<Running, SpawnError> {
    let program_name = cmd.program.to_string_lossy().into_owned();
    let io = |source| SpawnError::Io {
        program: program_name.clone(),
        source,
    };
    let stdin_file = match &cmd.stdin {
        Some(bytes) => Some(stdin_file(bytes).map_err(io)?),
        None => None,
    };
    let supervisor = cmd.supervisor_path();
    let mut sys = match &supervisor {
        Some(bin) => {
            let mut c = std::process::Command::new(bin);
            c.arg(SUBCOMMAND).args(
                supervise::Args {
                    grace: cmd.grace,
                    stdin: stdin_file.as_ref().map(|p| p.as_os_str().to_os_string()),
                    on_behalf_of: cmd.on_behalf_of.clone().map(Into::into),
                    program: cmd.program.clone(),
                    args: cmd.args.clone(),
                }
                .to_argv(),
            );
            c
        }
        None => {
            let mut c = std::process::Command::new(&cmd.program);
            c.args(&cmd.args);
            match &stdin_file {
                Some(p) => c.stdin(std::fs::File::open(p).map_err(io)?),
                None => c.stdin(Stdio::null()),
            };
            c
        }
    };
    sys.current_dir(&cmd.cwd).process_group(0);
    if cmd.clear_env {
        sys.env_clear();
    }
    for (k, v) in &cmd.env {
        match v {
            Some(v) => sys.env(k, v),
            None => sys.env_remove(k),
        };
    }
    let (tx, rx) = mpsc::channel();
    // The pipes: their write ends go to the child (and are dropped here
    // with `sys`), the read ends to the reader threads.
    let mut readers = Vec::new();
    let Command {
        stdout,
        stderr,
        merge_stderr,
        ..
    } = cmd;
    if merge_stderr {
        if stdout.piped {
            let (r, w) = std::io::pipe().map_err(io)?;
            sys.stdout(w.try_clone().map_err(io)?).stderr(w);
            readers.push((0, r, stdout));
        } else {
            sys.stdout(Stdio::null()).stderr(Stdio::null());
        }
    } else {
        for (n, sink) in [(0, stdout), (1, stderr)] {
            let stdio = if sink.piped {
                let (r, w) = std::io::pipe().map_err(io)?;
                readers.push((n, r, sink));
                Stdio::from(w)
            } else {
                Stdio::null()
            };
            if n == 0 {
                sys.stdout(stdio);
            } else {
                sys.stderr(stdio);
            }
        }
    }
    let (ctl, pid) = match supervisor {
        Some(bin) => {
            let (ours, theirs) = UnixStream::pair().map_err(io)?;
            sys.stdin(Stdio::from(OwnedFd::from(theirs)));
            let child = sys.spawn().map_err(|e| SpawnError::Supervisor {
                path: bin.clone(),
                reason: e.to_string(),
            })?;
            drop(sys);
            let pid = match first_answer(&ours, &bin) {
                Ok(pid) => pid,
                Err(e) => {
                    reap_supervisor(child);
                    return Err(match e {
                        Answer::Failed(reason) => SpawnError::Program {
                            program: program_name,
                            reason,
                        },
                        Answer::Broken(reason) => SpawnError::Supervisor { path: bin, reason },
                    });
                }
            };
            let reader = ours.try_clone().map_err(io)?;
            let tx_ctl = tx.clone();
            std::thread::spawn(move || control_reader(reader, tx_ctl));
            (
                Control::Supervised {
                    child,
                    socket: ours,
                },
                pid,
            )
        }
        None => {
            let mut child = sys.spawn().map_err(|e| SpawnError::Program {
                program: program_name,
                reason: e.to_string(),
            })?;
            drop(sys);
            let pid = child.id();
            let tx_wait = tx.clone();
            std::thread::spawn(move || {
                let exit = match child.wait() {
                    Ok(s) => match (s.code(), s.signal()) {
                        (Some(c), _) => Exit::Code(c),
                        (None, Some(sig)) => Exit::Signal(sig),
                        _ => Exit::Lost("no status".into()),
                    },
                    Err(e) => Exit::Lost(e.to_string()),
                };
                let _ = tx_wait.send(Event::Exited(exit));
            });
            (Control::Group { pgid: pid }, pid)
        }
    };
    let streams = readers.len();
    for (n, pipe, sink) in readers {
        let tx_read = tx.clone();
        std::thread::spawn(move || {
            let captured = sink.reader().drain(pipe);
            let _ = tx_read.send(Event::Stream(n, captured));
        });
    }
    let listening = cmd.stop.as_ref().map(|s| {
        let tx_stop = tx.clone();
        s.listen(move |code| {
            let _ = tx_stop.send(Event::Stop(code));
        })
    });
    let group = match &ctl {
        Control::Supervised { child, .. } => child.id(),
        Control::Group { pgid } => *pgid,
        Control::Done => 0,
    };
    // The child opened its stdin before it was reported started.
    drop(stdin_file);
    Ok(Running {
        pid,
        group,
        ctl,
        tx,
        rx,
        streams,
        started: Instant::now(),
        deadline: cmd.deadline,
        grace: cmd.grace,
        after_exit: cmd.after_exit,
        _listening: listening,
    })
}

impl Running {
    /// The child's own pid.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The process group it runs in (its supervisor's, when supervised).
    pub fn group(&self) -> u32 {
        self.group
    }

    /// True when a supervisor holds its tree.
    pub fn supervised(&self) -> bool {
        matches!(self.ctl, Control::Supervised { .. })
    }

    /// A handle that stops it from another thread.
    pub fn stopper(&self) -> Stopper {
        Stopper(self.tx.clone())
    }

    /// Waits for the end: the child's exit (then what [`AfterExit`] says),
    /// its deadline or a stop; then its whole tree is stopped and reaped.
    pub fn wait(mut self) -> Ended {
        let deadline_at = self.deadline.and_then(|d| self.started.checked_add(d));
        let mut exit: Option<Exit> = None;
        let mut cause: Option<Cause> = None;
        let mut ending = false;
        let mut leftovers = 0;
        let mut tree_gone = false;
        let mut drain_until: Option<Instant> = None;
        let mut outputs: [Captured; 2] = Default::default();
        let mut open = self.streams;
        loop {
            if tree_gone && open == 0 && exit.is_some() {
                break;
            }
            let timer = if tree_gone {
                drain_until
            } else if ending {
                None
            } else {
                deadline_at
            };
            let ev = match timer {
                Some(at) => match self
                    .rx
                    .recv_timeout(at.saturating_duration_since(Instant::now()))
                {
                    Ok(ev) => Some(ev),
                    Err(mpsc::RecvTimeoutError::Timeout) => None,
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                },
                None => match self.rx.recv() {
                    Ok(ev) => Some(ev),
                    Err(_) => break,
                },
            };
            match ev {
                None if tree_gone => break,
                None => {
                    if let Some(d) = self.deadline {
                        cause = Some(Cause::Deadline(d));
                    }
                    self.end(&mut ending);
                }
                Some(Event::Stop(code)) => {
                    if exit.is_none() && cause.is_none() {
                        cause = Some(Cause::Stop(code));
                    }
                    self.end(&mut ending);
                }
                Some(Event::Exited(e)) => {
                    exit = Some(e);
                    if self.after_exit == AfterExit::EndTree || open == 0 {
                        self.end(&mut ending);
                    }
                }
                Some(Event::Stream(n, c)) => {
                    outputs[n] = c;
                    open -= 1;
                    if open == 0 && exit.is_some() {
                        self.end(&mut ending);
                    }
                }
                Some(Event::TreeEnded(n)) => {
                    leftovers = n;
                    tree_gone = true;
                    drain_until = Some(Instant::now() + self.grace.min(DRAIN_AFTER_END));
                }
                Some(Event::SupervisorGone) => {
                    // Killed from outside before it finished: its tree is
                    // orphaned; stop what can still be found of it.
                    if !tree_gone {
                        tree::signal_group(self.group, Signal::KILL);
                        tree::signal(self.pid, Signal::KILL);
                        tree_gone = true;
                        drain_until = Some(Instant::now() + DRAIN_AFTER_END);
                        if exit.is_none() {
                            exit = Some(Exit::Lost(
                                "its supervisor was killed before the child ended".into(),
                            ));
                        }
                    }
                }
            }
        }
        if let Control::Supervised { child, .. } = std::mem::replace(&mut self.ctl, Control::Done) {
            reap_supervisor(child);
        }
        let [stdout, stderr] = outputs;
        Ended {
            exit: exit.unwrap_or_else(|| Exit::Lost("no status was reported".into())),
            cause,
            stdout,
            stderr,
            duration: self.started.elapsed(),
            leftovers,
        }
    }

    /// Asks for the tree to be stopped (once).
    fn end(&mut self, ending: &mut bool) {
        if *ending {
            return;
        }
        *ending = true;
        match &mut self.ctl {
            Control::Supervised { socket, .. } => {
                if socket.write_all(b"end\n").is_err() {
                    let _ = self.tx.send(Event::SupervisorGone);
                }
            }
            Control::Group { pgid } => {
                let (pgid, grace, tx) = (*pgid, self.grace, self.tx.clone());
                std::thread::spawn(move || {
                    let n = tree::stop_all(|| group_members(pgid), grace, || {});
                    let _ = tx.send(Event::TreeEnded(n));
                });
            }
            Control::Done => {}
        }
    }

    /// [`Running::wait`] from async code, obeying `stop` too (the engine's
    /// stop channel); the waiting happens on the blocking pool.
    pub async fn finish(self, stop: &mut tokio::sync::watch::Receiver<Option<i32>>) -> Ended {
        let stopper = self.stopper();
        let (pid, started) = (self.pid, self.started);
        let mut task = tokio::task::spawn_blocking(move || self.wait());
        let joined = loop {
            let asked = *stop.borrow();
            if let Some(code) = asked {
                stopper.stop(code);
                break (&mut task).await;
            }
            tokio::select! {
                r = &mut task => break r,
                changed = stop.changed() => if changed.is_err() { break (&mut task).await },
            }
        };
        joined.unwrap_or_else(|e| Ended {
            exit: Exit::Lost(format!("the wait for pid {pid} failed: {e}")),
            cause: None,
            stdout: Captured::default(),
            stderr: Captured::default(),
            duration: started.elapsed(),
            leftovers: 0,
        })
    }
}

impl Drop for Running {
    /// A child given up on (its wait never came: a task cancelled) is not
    /// left running: the socket's end tells its supervisor to end the tree,
    /// as if loopwatch had gone away, and the supervisor is reaped aside.
    fn drop(&mut self) {
        match std::mem::replace(&mut self.ctl, Control::Done) {
            Control::Supervised { child, socket } => {
                let _ = socket.shutdown(std::net::Shutdown::Both);
                std::thread::spawn(move || reap_supervisor(child));
            }
            Control::Group { pgid } => {
                let grace = self.grace;
                std::thread::spawn(move || tree::stop_all(|| group_members(pgid), grace, || {}));
            }
            Control::Done => {}
        }
    }
}

/// The live members of process group `pgid` (the unsupervised case).
fn group_members(pgid: u32) -> Vec<u32> {
    tree::all()
        .into_iter()
        .filter(|p| p.pgid == pgid && !p.zombie)
        .map(|p| p.pid)
        .collect()
}

enum Answer {
    Failed(String),
    Broken(String),
}

/// The supervisor's first line: `started <pid>` or `failed <reason>`.
fn first_answer(socket: &UnixStream, bin: &std::path::Path) -> Result<u32, Answer> {
    let broken = |why: String| Answer::Broken(why);
    socket
        .set_read_timeout(Some(START_ANSWER))
        .map_err(|e| broken(e.to_string()))?;
    // One byte at a time: what follows the first line is the control
    // reader's to read.
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    let mut r = socket;
    loop {
        match std::io::Read::read(&mut r, &mut byte) {
            Ok(0) => {
                return Err(broken(format!(
                    "it ended without a word (is {} a loopwatch binary of this version?)",
                    bin.display()
                )));
            }
            Ok(_) if byte[0] == b'\n' => break,
            Ok(_) => line.push(byte[0]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(broken(format!("no answer: {e}"))),
        }
    }
    let _ = socket.set_read_timeout(None);
    let line = String::from_utf8_lossy(&line).into_owned();
    if let Some(pid) = line.strip_prefix("started ") {
        return pid
            .trim()
            .parse()
            .map_err(|_| broken(format!("unexpected answer {line:?}")));
    }
    match line.strip_prefix("failed ") {
        Some(reason) => Err(Answer::Failed(reason.to_string())),
        None => Err(broken(format!("unexpected answer {line:?}"))),
    }
}

fn control_reader(socket: UnixStream, tx: mpsc::Sender<Event>) {
    for line in BufReader::new(socket).lines() {
        let Ok(line) = line else { break };
        let mut words = line.split_whitespace();
        let ev = match (words.next(), words.next(), words.next()) {
            (Some("exited"), Some("code"), Some(n)) => n.parse().ok().map(Exit::Code),
            (Some("exited"), Some("signal"), Some(n)) => n.parse().ok().map(Exit::Signal),
            (Some("ended"), Some(n), _) => {
                let _ = tx.send(Event::TreeEnded(n.parse().unwrap_or(0)));
                continue;
            }
            _ => None,
        };
        if let Some(exit) = ev {
            let _ = tx.send(Event::Exited(exit));
        }
    }
    let _ = tx.send(Event::SupervisorGone);
}

/// Waits for a supervisor that said its last word (bounded: one that
/// hangs is killed).
fn reap_supervisor(mut child: std::process::Child) {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => return,
            Ok(None) if Instant::now() >= until => {
                let _ = child.kill();
                let _ = child.wait();
                return;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(1)),
        }
    }
}

/// The child's stdin as a private temporary file (read at its own pace).
fn stdin_file(bytes: &[u8]) -> std::io::Result<tempfile::TempPath> {
    let mut f = tempfile::Builder::new()
        .prefix(".loopwatch-stdin-")
        .tempfile()?;
    f.write_all(bytes)?;
    f.flush()?;
    Ok(f.into_temp_path())
}
