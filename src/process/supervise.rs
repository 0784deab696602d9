//! The supervisor: `loopwatch __supervise …`, one per child loopwatch runs.
//!
//! ```text
//! loopwatch __supervise --protocol 1 --grace-ms N [--stdin FILE] [--for MARKER] -- PROGRAM ARGS…
//! ```
//!
//! It makes itself the subreaper of its tree, starts PROGRAM (stdin from
//! FILE or `/dev/null`, stdout and stderr its own, which are loopwatch's
//! pipes), and talks to loopwatch over the socket that is its own stdin,
//! one line at a time:
//!
//! | from | line | meaning |
//! |---|---|---|
//! | supervisor | `started <pid>` | PROGRAM runs |
//! | supervisor | `failed <reason>` | PROGRAM could not be started (then it exits) |
//! | supervisor | `exited code <n>` / `exited signal <n>` | PROGRAM ended |
//! | loopwatch | `end` | stop the tree: TERM, the grace period, KILL |
//! | supervisor | `ended <n>` | the tree is gone (`n` processes were stopped besides PROGRAM), then it exits |
//!
//! The end of the socket, read when loopwatch is gone (whatever killed
//! it), ends the tree too, with at most [`super::LIFELINE_GRACE`] of grace.
//! The supervisor is entered before any command-line parsing of the
//! binary's own, so it costs one `exec` and little else.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::process::{ExitCode, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use rustix::process::{WaitOptions, WaitStatus};

use super::tree;

/// The hidden subcommand.
pub const SUBCOMMAND: &str = "__supervise";

/// The option naming the run a child works for.
pub const FOR: &str = "--for";

/// The protocol spoken on the socket; a supervisor of another version
/// refuses to start rather than misunderstand.
pub const PROTOCOL: &str = "1";

/// What the supervisor was asked to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    /// Grace between TERM and KILL.
    pub grace: Duration,
    /// The file PROGRAM reads as stdin.
    pub stdin: Option<OsString>,
    /// The run this child works for (`<pipeline>#<what>`): its whole tree
    /// is inside that run, which `loopwatch record`, `ask` and `decide`
    /// refuse (see [`super::tree::dispatch_of`]). In the supervisor's own
    /// command line, so clearing the environment does not hide it.
    pub on_behalf_of: Option<OsString>,
    /// PROGRAM.
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
}

impl Args {
    /// The supervisor's own arguments (after the subcommand).
    pub fn to_argv(&self) -> Vec<OsString> {
        let mut v: Vec<OsString> = vec![
            "--protocol".into(),
            PROTOCOL.into(),
            "--grace-ms".into(),
            self.grace.as_millis().to_string().into(),
        ];
        if let Some(f) = &self.stdin {
            v.push("--stdin".into());
            v.push(f.clone());
        }
        if let Some(m) = &self.on_behalf_of {
            v.push(FOR.into());
            v.push(m.clone());
        }
        v.push("--".into());
        v.push(self.program.clone());
        v.extend(self.args.iter().cloned());
        v
    }

    /// Parses what [`Args::to_argv`] wrote.
    pub fn parse(argv: &[OsString]) -> Result<Args, String> {
        let mut it = argv.iter();
        let mut grace = None;
        let mut stdin = None;
        let mut on_behalf_of = None;
        let mut protocol = None;
        loop {
            let Some(a) = it.next() else {
                return Err("no -- before the program".into());
            };
            match a.to_str() {
                Some("--") => break,
                Some("--protocol") => protocol = it.next().cloned(),
                Some("--grace-ms") => {
                    let ms = it
                        .next()
                        .and_then(|v| v.to_str())
                        .and_then(|v| v.parse::<u64>().ok())
                        .ok_or("--grace-ms needs milliseconds")?;
                    grace = Some(Duration::from_millis(ms));
                }
                Some("--stdin") => stdin = Some(it.next().cloned().ok_or("--stdin needs a file")?),
                Some(FOR) => on_behalf_of = Some(it.next().cloned().ok_or("--for needs a marker")?),
                _ => return Err(format!("unknown argument {}", a.to_string_lossy())),
            }
        }
        if protocol.as_deref().and_then(|p| p.to_str()) != Some(PROTOCOL) {
            return Err(format!(
                "this supervisor speaks protocol {PROTOCOL}, not {}",
                protocol.map_or("none".into(), |p| p.to_string_lossy().into_owned())
            ));
        }
        let program = it.next().cloned().ok_or("no program")?;
        Ok(Args {
            grace: grace.ok_or("no --grace-ms")?,
            stdin,
            on_behalf_of,
            program,
            args: it.cloned().collect(),
        })
    }
}

enum Msg {
    Exited(WaitStatus),
    End,
    Gone,
}

/// Runs the supervisor (`argv`: what follows the subcommand). Its exit
/// code says only whether it could do its job; how PROGRAM ended is on
/// the socket.
pub fn main(argv: &[OsString]) -> ExitCode {
    let args = match Args::parse(argv) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("loopwatch {SUBCOMMAND}: {e}");
            return ExitCode::from(2);
        }
    };
    // The socket is fd 0; a close-on-exec copy of it is what is used, so
    // PROGRAM inherits neither (its stdin is set below).
    let control = match std::io::stdin().as_fd().try_clone_to_owned() {
        Ok(fd) => UnixStream::from(fd),
        Err(e) => {
            eprintln!("loopwatch {SUBCOMMAND}: no control socket on stdin: {e}");
            return ExitCode::from(2);
        }
    };
    let mut out = match control.try_clone() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("loopwatch {SUBCOMMAND}: {e}");
            return ExitCode::from(2);
        }
    };
    let say = move |out: &mut UnixStream, line: String| {
        // loopwatch gone: the socket's end is read below and ends the tree.
        let _ = out.write_all(format!("{line}\n").as_bytes());
    };
    if let Err(e) = rustix::process::set_child_subreaper(Some(rustix::process::getpid())) {
        say(
            &mut out,
            format!("failed cannot become the subreaper of its tree: {e}"),
        );
        return ExitCode::from(2);
    }
    let stdin = match &args.stdin {
        Some(f) => match std::fs::File::open(f) {
            Ok(file) => Stdio::from(file),
            Err(e) => {
                say(&mut out, format!("failed cannot open its stdin: {e}"));
                return ExitCode::from(2);
            }
        },
        None => Stdio::null(),
    };
    let child = std::process::Command::new(&args.program)
        .args(&args.args)
        .stdin(stdin)
        .spawn();
    let main_pid = match child {
        // Reaped below with every other child of the tree: the handle is
        // only needed for its pid (dropping it neither waits nor kills).
        Ok(c) => c.id(),
        Err(e) => {
            say(&mut out, format!("failed {}", spawn_reason(&e)));
            return ExitCode::from(127);
        }
    };
    // From now on only PROGRAM's tree holds loopwatch's pipes: their end
    // tells loopwatch that every writer is gone (a check's background job
    // included), so the supervisor lets go of its own copies.
    if let Ok(null) = std::fs::File::options().write(true).open("/dev/null") {
        let _ = rustix::stdio::dup2_stdout(&null);
        let _ = rustix::stdio::dup2_stderr(&null);
    }
    say(&mut out, format!("started {main_pid}"));

    let (tx, rx) = mpsc::channel();
    let tx_control = tx.clone();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(control).lines();
        loop {
            match lines.next() {
                Some(Ok(l)) if l.trim() == "end" => {
                    let _ = tx_control.send(Msg::End);
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => {
                    let _ = tx_control.send(Msg::Gone);
                    return;
                }
            }
        }
    });
    let tx_reap = tx.clone();
    std::thread::spawn(move || {
        // Blocks until any child ends: PROGRAM, or an orphan of its tree.
        loop {
            match rustix::process::wait(WaitOptions::empty()) {
                Ok(Some((pid, status))) => {
                    if pid.as_raw_nonzero().get().unsigned_abs() == main_pid {
                        let _ = tx_reap.send(Msg::Exited(status));
                        return;
                    }
                }
                Ok(None) => {}
                Err(rustix::io::Errno::INTR) => {}
                // No child at all, or a failure: PROGRAM was reaped elsewhere.
                Err(_) => return,
            }
        }
    });
    drop(tx);

    let mut main_ended = false;
    let reap = |main_ended: &mut bool, out: &mut UnixStream| {
        while let Ok(Some((pid, status))) = rustix::process::wait(WaitOptions::NOHANG) {
            if pid.as_raw_nonzero().get().unsigned_abs() == main_pid && !*main_ended {
                *main_ended = true;
                say(out, exited(status));
            }
        }
    };
    let me = std::process::id();
    loop {
        match rx.recv() {
            Ok(Msg::Exited(status)) => {
                if !main_ended {
                    main_ended = true;
                    say(&mut out, exited(status));
                }
            }
            Ok(Msg::End) => {
                let others = tree::descendants(me)
                    .into_iter()
                    .filter(|&p| p != main_pid)
                    .count();
                tree::stop_all(
                    || tree::descendants(me),
                    args.grace,
                    || reap(&mut main_ended, &mut out),
                );
                // PROGRAM may have been reaped by the waiting thread.
                while !main_ended {
                    match rx.recv_timeout(Duration::from_secs(1)) {
                        Ok(Msg::Exited(status)) => {
                            main_ended = true;
                            say(&mut out, exited(status));
                        }
                        Ok(_) => {}
                        Err(_) => break,
                    }
                }
                say(&mut out, format!("ended {others}"));
                return ExitCode::SUCCESS;
            }
            Ok(Msg::Gone) | Err(_) => {
                tree::stop_all(
                    || tree::descendants(me),
                    args.grace.min(super::LIFELINE_GRACE),
                    || reap(&mut main_ended, &mut out),
                );
                return ExitCode::SUCCESS;
            }
        }
    }
}

fn exited(status: WaitStatus) -> String {
    match (status.exit_status(), status.terminating_signal()) {
        (Some(code), _) => format!("exited code {code}"),
        (None, Some(sig)) => format!("exited signal {sig}"),
        _ => "exited code 128".into(),
    }
}

/// Why `spawn` failed, in words a person reads (`not found`, `permission
/// denied (not executable?)`).
fn spawn_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => format!("not found ({e})"),
        std::io::ErrorKind::PermissionDenied => {
            format!("permission denied: not executable, or a folder on its path is closed ({e})")
        }
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_go_there_and_back() {
        let a = Args {
            grace: Duration::from_millis(1500),
            stdin: Some("/tmp/in put".into()),
            on_behalf_of: Some("/w/.pipeline#3".into()),
            program: "--weird".into(),
            args: vec!["--".into(), "-x".into(), "".into()],
        };
        assert_eq!(Args::parse(&a.to_argv()), Ok(a.clone()));
        let mut old = a.to_argv();
        old[1] = "0".into();
        assert!(Args::parse(&old).unwrap_err().contains("protocol 1, not 0"));
    }
}
