//! `loopwatch [watch] [PATH...] [--depth N] [--headless]`: the live view
//! (one run, or the run list when several are watched or folders are
//! searched for them), or one line per applied update for scripts and
//! measurement.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;
use clap::Args;

use super::Globals;
use crate::journal::Pipeline;
use crate::watch::Live;
use crate::watch::discover::{DEFAULT_DEPTH, Discovery, Target};

/// `watch`.
#[derive(Debug, Args)]
#[command(after_long_help = "\
With no PATH, the pipeline is found by walking up from the current directory (or
--pipeline). A PATH that is a .pipeline folder or a worktree (it holds .git or
.pipeline) is one run. Any other folder is searched for .pipeline folders, --depth
levels down (4 unless told; .git, node_modules and target are never entered), and
searched again every 3 s for runs that appear. With several runs, or a folder
searched, the list of runs comes first: waiting on you (the oldest wait on top),
then running, then ended and not opened since, then the rest; `n` goes to the gate
that has waited longest in any run. Each run's folder is watched; past the system's
inotify watch limit the rest are polled every 0.5 s, marked `~` in the list. A run
that cannot be read is listed and marked `!`, never fatal.

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
    /// How many levels below a searched folder `.pipeline` folders are looked for.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_DEPTH, value_parser = parse_depth)]
    pub depth: usize,
}

impl Default for WatchArgs {
    fn default() -> Self {
        WatchArgs {
            paths: Vec::new(),
            headless: false,
            depth: DEFAULT_DEPTH,
        }
    }
}

fn parse_depth(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n <= 32 => Ok(n),
        _ => Err("expected a number of levels from 0 to 32".into()),
    }
}

/// The pipelines named on the command line (or found from here).
pub fn pipelines(paths: &[PathBuf], globals: &Globals) -> anyhow::Result<Vec<Pipeline>> {
    Ok(targets(paths, globals, DEFAULT_DEPTH)?.0)
}

/// The pipelines named, and the search of the folders named (if any).
fn targets(
    paths: &[PathBuf],
    globals: &Globals,
    depth: usize,
) -> anyhow::Result<(Vec<Pipeline>, Option<Discovery>)> {
    if !paths.is_empty() {
        let mut named = Vec::new();
        let mut roots = Vec::new();
        for p in paths {
            match Target::of(p) {
                Target::Pipeline(p) => named.push(p),
                Target::Search(d) => roots.push(d),
            }
        }
        let search = (!roots.is_empty()).then(|| Discovery::new(roots, depth));
        return Ok((named, search));
    }
    if let Some(p) = &globals.pipeline {
        return Ok((vec![Pipeline::from_user_path(p)], None));
    }
    let cwd = std::env::current_dir().context("current directory")?;
    Ok((vec![Pipeline::discover_or_new(&cwd)], None))
}

/// Runs `watch`.
pub fn run(a: WatchArgs, globals: &Globals) -> anyhow::Result<ExitCode> {
    let (pipelines, search) = targets(&a.paths, globals, a.depth)?;
    if a.headless {
        return headless(pipelines, search);
    }
    match search {
        Some(search) => crate::tui::run_fleet(pipelines, search),
        None => crate::tui::run_live(pipelines),
    }
}

/// Headless mode: one line per applied update until SIGINT/SIGTERM or a
/// closed stdout; with a search, the pipelines it finds later too.
pub fn headless(pipelines: Vec<Pipeline>, search: Option<Discovery>) -> anyhow::Result<ExitCode> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let several = pipelines.len() > 1 || search.is_some();
        let mut live: Live<()> = Live::start(pipelines);
        let mut problems_told = 0;
        if let Some(s) = search {
            live.start_search(s);
            tell_search_problems(&live, &mut problems_told);
        }
        let mut polled_told = 0;
        tell_polled(&live, &mut polled_told);
        let mut out = std::io::stdout().lock();
        let mut sigterm = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        let initial = live.refresh_all();
        let mut unreadable_told = std::collections::HashSet::new();
        tell_unreadable(&live, &mut unreadable_told);
        for (i, up) in initial {
            if up.new_events > 0 || up.reset {
                print_line(&mut out, &live, i, several)?;
            }
        }
        loop {
            tokio::select! {
                batch = live.next_batch() => {
                    let Some(batch) = batch else { break };
                    tell_polled(&live, &mut polled_told);
                    tell_search_problems(&live, &mut problems_told);
                    tell_unreadable(&live, &mut unreadable_told);
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

/// Says on stderr, once each, the folders the search cannot list.
fn tell_search_problems(live: &Live<()>, told: &mut usize) {
    for p in live.search_problems().iter().skip(*told) {
        crate::cli::output::warn(&format!(
            "loopwatch: cannot search {}: {}",
            crate::sanitize::field(&p.dir.display().to_string()),
            p.message
        ));
    }
    *told = live.search_problems().len();
}

/// Says on stderr, once each, what a run's journal could not be read for
/// (damaged lines, a journal that is not a regular file): a run watched in a
/// folder is never silently left out.
fn tell_unreadable(live: &Live<()>, told: &mut std::collections::HashSet<String>) {
    for feed in live.feeds() {
        for p in feed.problems() {
            // Line 0: the journal as a whole (not a regular file, unreadable).
            let at = if p.line == 0 {
                String::new()
            } else {
                format!("line {}: ", p.line)
            };
            let line = format!(
                "loopwatch: cannot read all of {}: {at}{}",
                crate::sanitize::field(&p.path.display().to_string()),
                crate::sanitize::field(&p.message)
            );
            if told.insert(line.clone()) {
                crate::cli::output::warn(&line);
            }
        }
    }
}

/// Says on stderr, once each, which pipelines are polled instead of watched.
fn tell_polled(live: &Live<()>, told: &mut usize) {
    for (i, feed) in live.feeds().iter().enumerate().skip(*told) {
        if let Some(crate::watch::hub::How::Polled(why)) = live.how(i) {
            crate::cli::output::warn(&format!(
                "loopwatch: polling {} every {} ms: {why}",
                crate::sanitize::field(&feed.pipeline().dir().display().to_string()),
                crate::watch::hub::POLL_EVERY.as_millis()
            ));
        }
    }
    *told = live.feeds().len();
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
