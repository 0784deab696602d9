//! `on_human_gate`: the configured shell command, run with the gate's
//! notice as JSON on its stdin and its id in `LOOPWATCH_GATE`, in its own
//! process group, killed (with the group) past its time limit.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::GateNotice;

/// How long the command may run.
pub const HOOK_TIMEOUT: Duration = Duration::from_secs(30);

/// Why the command did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    /// It could not be started.
    #[error("on_human_gate `{command}` could not start: {source}")]
    Spawn {
        /// The command.
        command: String,
        /// The error.
        source: std::io::Error,
    },
    /// It ran past its limit and was killed.
    #[error("on_human_gate `{command}` ran past {secs} s and was stopped")]
    Timeout {
        /// The command.
        command: String,
        /// The limit.
        secs: u64,
    },
    /// It failed.
    #[error("on_human_gate `{command}` exited with {status}")]
    Failed {
        /// The command.
        command: String,
        /// Its exit status.
        status: std::process::ExitStatus,
    },
}

/// Runs `command` for `notice`; blocks until it ends or `timeout` passes.
pub fn run(command: &str, notice: &GateNotice, timeout: Duration) -> Result<(), HookError> {
    use std::os::unix::process::CommandExt;
    let spawn_err = |source| HookError::Spawn {
        command: command.into(),
        source,
    };
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .env("LOOPWATCH_GATE", &notice.id)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(spawn_err)?;
    if let Some(mut stdin) = child.stdin.take() {
        let mut json = serde_json::to_vec(notice).unwrap_or_default();
        json.push(b'\n');
        // A command that does not read its stdin closes the pipe: not an error.
        let _ = stdin.write_all(&json);
    }
    let start = Instant::now();
    loop {
        match child.try_wait().map_err(spawn_err)? {
            Some(status) if status.success() => return Ok(()),
            Some(status) => {
                return Err(HookError::Failed {
                    command: command.into(),
                    status,
                });
            }
            None if start.elapsed() >= timeout => {
                if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
                    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
                }
                let _ = child.wait();
                return Err(HookError::Timeout {
                    command: command.into(),
                    secs: timeout.as_secs(),
                });
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}
