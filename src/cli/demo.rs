//! `loopwatch demo [--speed F] [--no-tui --out DIR]`.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use super::Globals;
use crate::demo::{DemoPaths, driver, prepare};
use crate::journal::Pipeline;

/// `demo`.
#[derive(Debug, Args)]
#[command(after_long_help = "\
A real loop in a throwaway git worktree: the orchestrator include drives the recorder
CLI and GATE 0 with scripted agents. With the TUI, the human gates wait for you (press n,
then Enter); with --no-tui a scripted person decides them and the run is recorded
in --out DIR (replay it with `loopwatch replay DIR`).

Exit codes: 0 the run ended, 1 it ended otherwise (a person stopped it), 2 error.")]
pub struct DemoArgs {
    /// Pace: 2 is twice as fast, 0.5 half as fast.
    #[arg(long, default_value_t = 1.0, value_parser = parse_speed)]
    pub speed: f64,
    /// Record the run without a terminal (a scripted person decides).
    #[arg(long, requires = "out")]
    pub no_tui: bool,
    /// Where to create the worktree (an empty or missing folder; kept afterwards).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

fn parse_speed(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 1000.0 => Ok(v),
        _ => Err(format!(
            "'{}' is not a speed (a number above 0, up to 1000)",
            super::output::shown(s)
        )),
    }
}

/// Runs `demo`.
pub fn run(a: DemoArgs, _globals: &Globals) -> anyhow::Result<ExitCode> {
    let (_tmp, root) = match &a.out {
        Some(dir) => (None, dir.clone()),
        None => {
            let t = tempfile::Builder::new()
                .prefix("loopwatch-demo-")
                .tempdir()
                .context("create a temp folder")?;
            let p = t.path().join("invoice-tools");
            (Some(t), p)
        }
    };
    let paths = prepare(&root)?;
    if a.no_tui {
        let status = driver(&paths, a.speed, true)?
            .status()
            .context("run the demo loop")?;
        super::output::say(&format!(
            "demo run recorded in {}\nreplay it with: loopwatch replay {}",
            super::output::shown(&paths.worktree.join(".pipeline").display().to_string()),
            super::output::shown(&paths.worktree.display().to_string())
        ));
        return Ok(ExitCode::from(match status.code() {
            Some(0) => 0,
            Some(1) => 1,
            _ => 2,
        }));
    }
    with_tui(&paths, a.speed)
}

fn with_tui(paths: &DemoPaths, speed: f64) -> anyhow::Result<ExitCode> {
    let log =
        std::fs::File::create(paths.agents.join("driver.log")).context("create the driver log")?;
    let mut child = driver(paths, speed, false)?
        .stdout(log.try_clone()?)
        .stderr(log)
        .process_group(0)
        .spawn()
        .context("start the demo loop")?;
    let result = crate::tui::run_live(vec![Pipeline::at(paths.worktree.join(".pipeline"))]);
    // Stop the scripted run with the TUI: its whole process group.
    if let Ok(pid) = i32::try_from(child.id())
        && let Some(pid) = rustix::process::Pid::from_raw(pid)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::TERM);
    }
    let _ = child.wait();
    super::output::warn(&format!(
        "the demo worktree was {}",
        super::output::shown(&paths.worktree.display().to_string())
    ));
    result
}
