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
        Mode::Run => {
            forward_interrupts();
            gate0::run(&path, &timeout)
        }
    };
    if let Some(code) = gate0::exec::interrupted() {
        eprintln!("loopwatch: {}", gate0::INTERRUPTED);
        return Ok(ExitCode::from(u8::try_from(code).unwrap_or(2)));
    }
    print_report(&outcome.report)?;
    after_run(&outcome, globals);
    Ok(ExitCode::from(outcome.exit_code))
}

/// Where the outcome of a judged contract is available to be recorded in
/// `.pipeline` (gate.started / gate.finished). Records nothing yet.
fn after_run(_outcome: &Gate0Outcome, _globals: &Globals) {}

/// On SIGINT, SIGTERM or SIGHUP during `run`: kill the running check's
/// process group (it is not in the terminal's foreground group, so it would
/// not get the signal), start no other check, write nothing, and exit
/// 128+signal. A second signal, or a run that does not wind down within
/// [`WIND_DOWN`], exits at once.
fn forward_interrupts() {
    use tokio::signal::unix::{SignalKind, signal};
    const WARN: &str = "loopwatch: cannot watch for interrupts; a check may outlive one";
    std::thread::spawn(|| {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            eprintln!("{WARN}");
            return;
        };
        rt.block_on(async {
            let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
                signal(SignalKind::interrupt()),
                signal(SignalKind::terminate()),
                signal(SignalKind::hangup()),
            ) else {
                eprintln!("{WARN}");
                return;
            };
            let mut next = async || {
                tokio::select! {
                    _ = int.recv() => 130,
                    _ = term.recv() => 143,
                    _ = hup.recv() => 129,
                }
            };
            let code = next().await;
            gate0::exec::interrupt(code);
            let again = tokio::time::timeout(WIND_DOWN, next()).await;
            eprintln!("loopwatch: {}", gate0::INTERRUPTED);
            std::process::exit(again.unwrap_or(code));
        });
    });
}

/// How long an interrupted run may take to stop before the process exits.
const WIND_DOWN: std::time::Duration = std::time::Duration::from_secs(5);

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
