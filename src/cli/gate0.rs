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
use crate::model::GateName;
use crate::recorder::Recorder;

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
    let recorder = match mode {
        Mode::Run => before_run(globals),
        Mode::Status => None,
    };
    let stop = crate::process::Stop::new();
    let outcome = match mode {
        Mode::Status => gate0::status(&path, &timeout),
        Mode::Run => {
            forward_interrupts(&stop);
            // The reference runs each check from the caller's folder.
            let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
            gate0::run(&path, &timeout, &gate0::exec::Checks::new(here, &stop))
        }
    };
    if let Some(code) = stop.asked() {
        eprintln!("loopwatch: {}", gate0::INTERRUPTED);
        return Ok(ExitCode::from(u8::try_from(code).unwrap_or(2)));
    }
    print_report(&outcome.report)?;
    if let Some(rec) = recorder {
        after_run(&rec, &outcome);
    }
    Ok(ExitCode::from(outcome.exit_code))
}

/// When a `.pipeline` exists, records `gate.started` before the checks run.
/// Stdout stays the floor's own: anything of ours goes to stderr, and a
/// refusal (a gate out of order) never changes what the floor prints.
fn before_run(globals: &Globals) -> Option<Recorder> {
    let rec = Recorder::new(globals.existing_pipeline()?);
    if let Err(e) = crate::recorder::admit(rec.pipeline(), crate::recorder::Caller::Orchestrator) {
        not_recorded(&e.into());
        return None;
    }
    match rec.start_round(GateName::Floor, false) {
        Ok(_) => Some(rec),
        Err(e) => {
            // A stale state.json still means the round was started.
            let started = not_recorded(&e);
            started.then_some(rec)
        }
    }
}

/// Records the round (`gate.finished` with the rows, the report under
/// `.pipeline/gates/`) and prints the loop's next step on stderr.
fn after_run(rec: &Recorder, outcome: &Gate0Outcome) {
    let result = crate::recorder::floor_round(outcome.rows.clone(), outcome.verdict.clone());
    match rec.round(GateName::Floor, result, &outcome.report, false) {
        Ok(out) => {
            let _ = super::output::finish(&out, true);
        }
        Err(e) => {
            not_recorded(&e);
        }
    }
}

/// Says on stderr why recording failed; true when the events were recorded
/// after all (only `state.json` is stale), whose `NEXT:` line is then printed.
fn not_recorded(e: &crate::recorder::RecordError) -> bool {
    use crate::journal::JournalError;
    use crate::recorder::RecordError;
    if let RecordError::Journal(JournalError::StateStale { appended, .. }) = e {
        let _ = super::output::finish(appended, true);
        super::output::warn(&format!(
            "loopwatch: {}",
            super::output::shown(&e.to_string())
        ));
        return true;
    }
    super::output::warn(&format!(
        "loopwatch: not recorded: {}",
        super::output::shown(&e.to_string())
    ));
    false
}

/// On SIGINT, SIGTERM or SIGHUP during `run`: stop the running check's
/// tree (it is not in the terminal's foreground group, so it would not get
/// the signal), start no other check, write nothing, and exit 128+signal.
/// A second signal, or a run that does not wind down within
/// [`WIND_DOWN`], exits at once.
fn forward_interrupts(stop: &crate::process::Stop) {
    let stop = stop.clone();
    use tokio::signal::unix::{SignalKind, signal};
    const WARN: &str = "loopwatch: cannot watch for interrupts; a check may outlive one";
    std::thread::spawn(move || {
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
            stop.ask(code);
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
