//! `loopwatch gate0 status|run CONTRACT`: GATE 0, the deterministic floor.
//!
//! Arguments are taken verbatim so that usage errors print the reference
//! floor's one-line verdict. The report goes to stdout byte for byte when
//! piped; on a terminal, control characters from the contract are shown as
//! visible escapes so a contract can never drive the terminal.

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::Globals;
use crate::gate0::{self, Fatal, Gate0Outcome, Mode, Timeout};

/// Arguments of `gate0`, taken verbatim so usage errors print the reference
/// floor's one-line verdict.
#[derive(Debug, Args)]
pub struct Gate0Args {
    /// `status` or `run`, then the contract path.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub args: Vec<OsString>,
}

/// Runs `gate0`.
pub fn run(args: Gate0Args, globals: &Globals) -> anyhow::Result<ExitCode> {
    let (mode, path) = match args.args.as_slice() {
        [mode, path] => match Mode::from_arg(mode.as_bytes()) {
            Some(m) => (m, PathBuf::from(path)),
            None => return print_fatal(&Fatal::Usage),
        },
        _ => return print_fatal(&Fatal::Usage),
    };
    let timeout = match Timeout::from_env() {
        Ok(t) => t,
        Err(e) => return print_fatal(&Fatal::Timeout(e)),
    };
    let outcome = match mode {
        Mode::Status => gate0::status(&path, &timeout),
        Mode::Run => gate0::run(&path, &timeout),
    };
    print_report(&outcome.report)?;
    after_run(&outcome, globals);
    Ok(ExitCode::from(outcome.exit_code))
}

/// Where the outcome of a judged contract is available to be recorded in
/// `.pipeline` (gate.started / gate.finished). Records nothing yet.
fn after_run(_outcome: &Gate0Outcome, _globals: &Globals) {}

/// Prints the one-line verdict of an error found before any contract was read.
fn print_fatal(fatal: &Fatal) -> anyhow::Result<ExitCode> {
    print_report(&gate0::fatal_line(fatal.to_string().as_bytes()))?;
    Ok(ExitCode::from(2))
}

/// Writes the report to stdout, escaped when stdout is a terminal.
fn print_report(report: &[u8]) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    let written = if stdout.is_terminal() {
        stdout.write_all(gate0::escape_for_terminal(report).as_bytes())
    } else {
        stdout.write_all(report)
    };
    match written.and_then(|()| stdout.flush()) {
        // A reader that went away (`| head`) is not our failure.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}
