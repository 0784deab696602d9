//! `loopwatch [watch] [PATH...] [--headless]`: the live view, or one line
//! per applied update for scripts and measurement.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;
use clap::Args;

use super::Globals;
use crate::journal::Pipeline;
use crate::watch::Live;

/// `watch`.
#[derive(Debug, Args, Default)]
#[command(after_long_help = "\
With no PATH, the pipeline is found by walking up from the current directory (or
--pipeline). Each PATH is a worktree or a .pipeline folder; with several, a list of
runs comes first (runs waiting on a person on top).

--headless never touches the terminal: it prints one line per applied update,
`<unix time with microseconds> seq=<n> iter=<i> open=<k>` (followed by
` pipeline=<dir>` when several are watched), through the same watch/read/fold
path as the TUI. Folder names in those lines are escaped (a control or a line break in
a name shows as a visible stand-in), so every line keeps that format.

A journal or state.json that is not a regular file (a FIFO, a device) is refused, never
waited on: the view stays responsive and SIGINT / SIGTERM / q always end it.

Exit codes: 0 ended (q, SIGINT, SIGTERM, or a closed stdout), 2 no terminal for the TUI
or bad input.")]
pub struct WatchArgs {
    /// Worktrees or .pipeline folders to watch.
    pub paths: Vec<PathBuf>,
    /// Print update lines instead of opening the TUI.
    #[arg(long)]
    pub headless: bool,
}

/// The pipelines named on the command line (or found from here).
pub fn pipelines(paths: &[PathBuf], globals: &Globals) -> anyhow::Result<Vec<Pipeline>> {
    if !paths.is_empty() {
        return Ok(paths.iter().map(|p| Pipeline::from_user_path(p)).collect());
    }
    if let Some(p) = &globals.pipeline {
        return Ok(vec![Pipeline::from_user_path(p)]);
    }
    let cwd = std::env::current_dir().context("current directory")?;
    Ok(vec![Pipeline::discover_or_new(&cwd)])
}

/// Runs `watch`.
pub fn run(a: WatchArgs, globals: &Globals) -> anyhow::Result<ExitCode> {
    let pipelines = pipelines(&a.paths, globals)?;
    if a.headless {
        return headless(pipelines);
    }
    crate::tui::run_live(pipelines)
}

/// Headless mode: one line per applied update until SIGINT/SIGTERM or a closed stdout.
pub fn headless(pipelines: Vec<Pipeline>) -> anyhow::Result<ExitCode> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let several = pipelines.len() > 1;
        let mut live: Live<()> = Live::start(pipelines);
        let mut out = std::io::stdout().lock();
        let mut sigterm = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        let initial = live.refresh_all();
        for (i, up) in initial {
            if up.new_events > 0 || up.reset {
                print_line(&mut out, &live, i, several)?;
            }
        }
        loop {
            tokio::select! {
                batch = live.next_batch() => {
                    let Some(batch) = batch else { break };
                    for (i, up) in batch.updates {
                        if (up.new_events > 0 || up.reset) && print_line(&mut out, &live, i, several).is_err() {
                            return Ok(ExitCode::SUCCESS);
                        }
                    }
                }
                _ = tokio::signal::ctrl_c() => break,
                _ = sigterm.recv() => break,
            }
        }
        Ok(ExitCode::SUCCESS)
    })
}

fn print_line(
    out: &mut impl Write,
    live: &Live<()>,
    i: usize,
    several: bool,
) -> std::io::Result<()> {
    let feed = &live.feeds()[i];
    let s = feed.state();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let open = s.open_human_gates().count();
    write!(
        out,
        "{}.{:06} seq={} iter={} open={open}",
        now.as_secs(),
        now.subsec_micros(),
        s.seq,
        s.iteration_number()
    )?;
    if several {
        // A folder name is data: escaped, it cannot break the line format.
        write!(
            out,
            " pipeline={}",
            crate::sanitize::field(&feed.pipeline().dir().display().to_string())
        )?;
    }
    writeln!(out)?;
    out.flush()
}
