//! The one child that is not supervised: a program handed the terminal
//! (the pager the TUI opens on a log). It needs the terminal itself as its
//! stdin, stdout and stderr, which rules out the supervisor's lifeline on
//! stdin and the captured pipes; it stays in loopwatch's process group, so
//! the terminal's keys reach it, and loopwatch waits for it while the TUI
//! is suspended. A person is at the keyboard: it ends when they quit it.

use std::ffi::OsString;
use std::path::Path;

/// Runs `program` with `args` in `cwd` on the terminal loopwatch has,
/// waiting for its end; its exit code (`None` when a signal ended it).
pub fn run_in_terminal(
    program: &OsString,
    args: &[OsString],
    cwd: &Path,
) -> std::io::Result<Option<i32>> {
    let status = std::process::Command::new(program)
        .args(args)
        .current_dir(cwd)
        .stdin(std::process::Stdio::inherit())
        .stdout(std::process::Stdio::inherit())
        .stderr(std::process::Stdio::inherit())
        .status()?;
    Ok(status.code())
}
