//! `loopwatch run [CONTRACT] [--config FILE] [--headless]`: the loop engine.
//!
//! With a terminal (and without `--headless`) the TUI opens on the run, the
//! engine driving it from another thread of the same process; leaving the
//! TUI stops the agents and leaves a run that resumes.
//!
//! Headless, it prints one line per journal event (its own and those
//! written by others, such as a decision taken in another terminal) and
//! exits 0 when the run ends complete or partial, 1 when it ends otherwise,
//! 2 on bad input, 128+n when signal n stopped it (the run resumes with
//! the next `loopwatch run`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use tokio::sync::watch;

use super::Globals;
use crate::engine::config::{Config, FILE_NAME};
use crate::engine::{self, Finish, Options};
use crate::journal::{JournalReader, Pipeline};
use crate::model::{EndStatus, Event};
use crate::watch::PipelineWatch;

/// `run`.
#[derive(Debug, Args)]
#[command(after_long_help = "\
Drives the verify + secure loop itself: GATE 0, the verifier, the auditor and the developer
are dispatched as the loop's rules say, every step recorded in the journal. The agents are
described in loopwatch.toml (`loopwatch init` writes one). A run that was stopped, or whose
engine died, resumes from the journal with the next `loopwatch run`.

Exit codes: 0 the run ended complete or partial, 1 it ended otherwise, 2 bad input
(configuration, contract, another engine on the pipeline), 128+n stopped by signal n.")]
pub struct RunArgs {
    /// The contract (needed to start a run; a run in progress names its own).
    pub contract: Option<PathBuf>,
    /// The configuration (default: loopwatch.toml at the worktree root).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// No TUI: one line per event on stdout.
    #[arg(long)]
    pub headless: bool,
    /// The pipeline's run has ended: archive it under `.pipeline/runs/<run-id>/`
    /// and start a new run on CONTRACT (a journal holds one run).
    #[arg(long)]
    pub new: bool,
    /// Print each agent's command line, instructions and first inputs (every
    /// role, or only ROLE's); start, lock and write nothing.
    #[arg(long, value_name = "ROLE", num_args = 0..=1, require_equals = true, default_missing_value = super::dry_run::ALL)]
    pub dry_run: Option<String>,
}

/// What `run` needs before anything runs: the pipeline and the checked config.
pub fn prepare(
    config: Option<PathBuf>,
    contract: Option<PathBuf>,
    globals: &Globals,
) -> anyhow::Result<Result<Options, String>> {
    let pipeline = globals.pipeline_for_writing()?;
    let path = config.unwrap_or_else(|| pipeline.worktree().join(FILE_NAME));
    let config = match Config::load(&path) {
        Ok(c) => c,
        Err(e) => return Ok(Err(e.to_string())),
    };
    Ok(Ok(Options {
        config,
        pipeline,
        contract,
        new: false,
    }))
}

/// Runs `run`.
pub fn run(a: RunArgs, globals: &Globals) -> anyhow::Result<ExitCode> {
    let opts = match prepare(a.config, a.contract, globals)? {
        Ok(o) => Options { new: a.new, ..o },
        Err(msg) => {
            super::output::warn(&format!("loopwatch: {msg}"));
            return Ok(ExitCode::from(2));
        }
    };
    if let Some(only) = &a.dry_run {
        return super::dry_run::run(&opts, only);
    }
    use std::io::IsTerminal;
    if !a.headless && std::io::stdout().is_terminal() && std::io::stdin().is_terminal() {
        return with_tui(opts);
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("start the async runtime")?;
    rt.block_on(headless(opts))
}

/// With a terminal: the engine on its own thread, the TUI on the run in
/// this one (the TUI reads the journal the engine writes, as `watch` does).
/// Leaving the TUI stops the engine: its agents are stopped and recorded
/// interrupted, and the run resumes with the next `loopwatch run`.
fn with_tui(opts: Options) -> anyhow::Result<ExitCode> {
    let pipeline = opts.pipeline.clone();
    let (stop_tx, stop_rx) = watch::channel(None);
    let engine = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        // Notices go to the log: the terminal belongs to the TUI.
        std::io::Result::Ok(rt.block_on(engine::run(opts, stop_rx, &mut |n| tracing::warn!("{n}"))))
    });
    let tui = crate::tui::run_live_engine(pipeline);
    let _ = stop_tx.send(Some(130));
    let result = engine.join();
    let code = match &result {
        Ok(Ok(Ok(Finish::Ended(EndStatus::Complete | EndStatus::Partial)))) => ExitCode::SUCCESS,
        Ok(Ok(Ok(Finish::Ended(_)))) => ExitCode::from(1),
        Ok(Ok(Ok(Finish::Stopped(_)))) => {
            super::output::warn("loopwatch: the run was stopped; `loopwatch run` resumes it");
            ExitCode::from(130)
        }
        Ok(Ok(Err(e))) => super::exit::engine_failed(e),
        Ok(Err(e)) => {
            super::output::warn(&format!("loopwatch: {e}"));
            ExitCode::from(super::exit::USAGE)
        }
        Err(_) => ExitCode::from(super::exit::USAGE),
    };
    tui?;
    Ok(code)
}

async fn headless(opts: Options) -> anyhow::Result<ExitCode> {
    let (stop_tx, stop_rx) = watch::channel(None);
    spawn_signal_watch(stop_tx)?;
    let printer = Printer::start(opts.pipeline.clone());
    let result = engine::run(opts, stop_rx, &mut |n| {
        super::output::warn(&format!("loopwatch: {n}"))
    })
    .await;
    if let Some(p) = printer {
        p.finish();
    }
    Ok(match result {
        Ok(Finish::Ended(EndStatus::Complete | EndStatus::Partial)) => ExitCode::SUCCESS,
        Ok(Finish::Ended(_)) => ExitCode::from(1),
        Ok(Finish::Stopped(code)) => {
            super::output::warn(
                "loopwatch: stopped; the agents were stopped and the run resumes with `loopwatch run`",
            );
            ExitCode::from(u8::try_from(code).unwrap_or(2))
        }
        Err(e) => super::exit::engine_failed(&e),
    })
}

/// SIGINT, SIGTERM and SIGHUP ask the engine to stop (130, 143, 129).
pub fn spawn_signal_watch(tx: watch::Sender<Option<i32>>) -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut int = signal(SignalKind::interrupt()).context("watch SIGINT")?;
    let mut term = signal(SignalKind::terminate()).context("watch SIGTERM")?;
    let mut hup = signal(SignalKind::hangup()).context("watch SIGHUP")?;
    tokio::spawn(async move {
        let code = tokio::select! {
            _ = int.recv() => 130,
            _ = term.recv() => 143,
            _ = hup.recv() => 129,
        };
        let _ = tx.send(Some(code));
    });
    Ok(())
}

/// Follows the journal on a thread of its own (whatever the engine's
/// runtime is busy with) and prints each new event once, as one line
/// written and flushed by itself: a pipe, a file and a terminal see every
/// line as soon as it is in the journal, and a `kill -9` loses none that
/// was printed.
struct Printer {
    wake: std::sync::mpsc::Sender<bool>,
    thread: std::thread::JoinHandle<()>,
}

impl Printer {
    fn start(pipeline: Pipeline) -> Option<Printer> {
        let (tx, rx) = std::sync::mpsc::channel::<bool>();
        let wake = tx.clone();
        let watch = PipelineWatch::start(pipeline.dir(), move |_| {
            let _ = wake.send(false);
        })
        .ok()?;
        let mut reader = JournalReader::new(pipeline.journal_path());
        // What was there before this engine started is history, not news.
        let _ = reader.read_new();
        let thread = std::thread::spawn(move || {
            let _watch = watch;
            loop {
                print_new(&mut reader);
                // `true`: the engine is done; a second (guard) read every
                // 2 s covers an event the watch did not report.
                match rx.recv_timeout(std::time::Duration::from_secs(2)) {
                    Ok(true) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                        print_new(&mut reader);
                        return;
                    }
                    Ok(false) | Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                }
            }
        });
        Some(Printer { wake: tx, thread })
    }

    fn finish(self) {
        let _ = self.wake.send(true);
        let _ = self.thread.join();
    }
}

fn print_new(reader: &mut JournalReader) {
    let Ok(batch) = reader.read_new() else {
        return;
    };
    let mut out = std::io::stdout().lock();
    for ev in &batch.events {
        let mut line = crate::sanitize::terminal_text(line(ev).as_bytes());
        line.push('\n');
        // One write and a flush per event: nothing waits in a buffer.
        if out
            .write_all(line.as_bytes())
            .and_then(|()| out.flush())
            .is_err()
        {
            return;
        }
    }
}

/// One line for an event: `#seq type what`.
pub fn line(ev: &Event) -> String {
    format!("#{} {} {}", ev.seq, ev.body.type_name(), ev.line())
}

#[cfg(test)]
mod tests {
    /// What `run --headless` prints for each event of a whole run, pinned:
    /// a change of these words is a change a user sees.
    #[test]
    fn the_headless_lines_of_a_whole_run() {
        let fixture = include_str!("../../tests/fixtures/tui/full-run.events.jsonl");
        let lines: Vec<String> = fixture
            .lines()
            .map(|l| super::line(&crate::model::Event::parse_line(l.as_bytes()).unwrap()))
            .collect();
        insta::assert_snapshot!("headless_lines_full_run", lines.join("\n"));
    }
}
