//! `loopwatch floor-guard <base-ref> [-- <pathspec>...]`.
//!
//! Arguments are taken verbatim so that every usage error exits 3 with the
//! usage line on stderr, as the reference behaviour does.

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use super::Globals;
use crate::checks::floor_guard::{self, FloorGuardError, FloorGuardReport, USAGE};

/// Exit code of a usage error (and of a git failure: nothing was checked).
const EXIT_USAGE: u8 = 3;

/// Arguments of `floor-guard`, taken verbatim (usage errors exit 3).
///
/// Scope: `git diff <base-ref>` with the working tree, deleted files and
/// untracked files git does not ignore. Output: one `FLOOR <KIND>
/// <path>:<line> <snippet>` (or `WAIVED ...`) per finding, then `FLOOR
/// GUARD: clean` or `FLOOR GUARD: <n> finding(s), <m> waived`. Kinds:
/// SUPPRESS, SKIP, DELETED_TEST, ASSERT_DROP, STUB, THRESHOLD_DOWN. An added
/// line carrying `floor-guard: allow <reason>` is WAIVED and not counted.
#[derive(Debug, Args)]
pub struct FloorGuardArgs {
    /// `<base-ref> [-- <pathspec>...]`.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub args: Vec<OsString>,
}

/// Runs `floor-guard`: 0 clean, 2 findings, 3 usage or git failure.
pub fn run(args: FloorGuardArgs, globals: &Globals) -> anyhow::Result<ExitCode> {
    let Some((base, pathspec)) = parse_args(args.args) else {
        eprintln!("{USAGE}");
        return Ok(ExitCode::from(EXIT_USAGE));
    };
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let report = match floor_guard::run(&base, &pathspec, &cwd) {
        Ok(r) => r,
        Err(FloorGuardError::UnknownBase { .. }) => {
            eprintln!("{USAGE}");
            return Ok(ExitCode::from(EXIT_USAGE));
        }
        Err(e) => {
            super::output::warn(&format!("loopwatch floor-guard: {e}"));
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    };
    after_run(&report, globals);
    print_report(&report)?;
    Ok(ExitCode::from(report.exit_code()))
}

/// When a `.pipeline` exists (found upwards, or `--pipeline`), records the
/// result as `floor-guard.finished` for the current iteration, beside the
/// conformity round. Stdout stays the guard's own: a recording problem goes
/// to stderr and never changes the exit code.
pub fn after_run(report: &FloorGuardReport, globals: &Globals) {
    let Some(pipeline) = globals.existing_pipeline() else {
        return;
    };
    let recorded = crate::recorder::Recorder::new(pipeline)
        .admitted(crate::recorder::Caller::Orchestrator)
        .and_then(|rec| rec.floor_guard(report.to_result(0)));
    if let Err(e) = recorded {
        super::output::warn(&format!("loopwatch floor-guard: not recorded: {e}"));
    }
}

/// `<base-ref> [-- <pathspec>...]`, or None on a usage error.
fn parse_args(args: Vec<OsString>) -> Option<(String, Vec<OsString>)> {
    let mut it = args.into_iter();
    let base = it.next()?.into_string().ok()?;
    let rest: Vec<OsString> = it.collect();
    match rest.split_first() {
        None => Some((base, Vec::new())),
        Some((sep, pathspec)) if sep == "--" => Some((base, pathspec.to_vec())),
        Some(_) => None,
    }
}

fn print_report(report: &FloorGuardReport) -> anyhow::Result<()> {
    let stdout = std::io::stdout();
    let terminal = stdout.is_terminal();
    let mut out = stdout.lock();
    for line in report.lines() {
        if terminal {
            writeln!(out, "{}", crate::sanitize::terminal_text(line.as_bytes()))?;
        } else {
            writeln!(out, "{line}")?;
        }
    }
    out.flush()?;
    Ok(())
}
