//! `on_human_gate`: the configured shell command, run with the gate's
//! notice as JSON on its stdin and its id in `LOOPWATCH_GATE`, run in the
//! gate's worktree through the process runner: its whole tree is stopped
//! past its time limit.

use std::time::Duration;

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
    #[error("on_human_gate `{command}` {status}")]
    Failed {
        /// The command.
        command: String,
        /// How it ended (`exited with status 1`).
        status: String,
    },
}

/// Runs `command` for `notice`; blocks until it ends or `timeout` passes
/// (then its whole tree is stopped).
pub fn run(command: &str, notice: &GateNotice, timeout: Duration) -> Result<(), HookError> {
    let mut json = serde_json::to_vec(notice).unwrap_or_default();
    json.push(b'\n');
    let worktree = std::path::Path::new(&notice.worktree);
    let cwd = if worktree.is_dir() {
        worktree.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let ended = crate::process::Command::new("sh", cwd)
        .arg("-c")
        .arg(command)
        .env("LOOPWATCH_GATE", &notice.id)
        .stdin(json)
        .deadline(timeout)
        .grace(Duration::from_millis(500))
        .run()
        .map_err(|e| HookError::Spawn {
            command: command.into(),
            source: std::io::Error::other(e.to_string()),
        })?;
    if ended.timed_out() {
        return Err(HookError::Timeout {
            command: command.into(),
            secs: timeout.as_secs(),
        });
    }
    if ended.success() {
        Ok(())
    } else {
        Err(HookError::Failed {
            command: command.into(),
            status: ended.describe(),
        })
    }
}
