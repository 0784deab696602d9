//! `loopwatch demo [--speed F] [--no-tui --out DIR]`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;
use clap::Args;
use tokio::sync::watch;

use super::Globals;
use crate::demo::{DemoPaths, engine_options, prepare, scripted_person};
use crate::engine::{self, Finish};
use crate::model::EndStatus;

/// `demo`.
#[derive(Debug, Args)]
#[command(after_long_help = "\
A real loop in a throwaway git worktree: the loop engine (the same code as `loopwatch run`)
dispatches scripted agents written to a loopwatch.toml. With the TUI, the human gates wait
for you (press n, then Enter); with --no-tui a scripted person decides them and the run is
recorded in --out DIR (replay it with `loopwatch replay DIR`).

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
        // Absolute: the scripted agents run in the worktree, not here.
        Some(dir) => (
            None,
            std::path::absolute(dir).with_context(|| format!("the folder {}", dir.display()))?,
        ),
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
        let done = Arc::new(AtomicBool::new(false));
        let person = scripted_person(&paths, a.speed, done.clone())?;
        let result = engine_thread(&paths, a.speed, None)?.join();
        done.store(true, Ordering::SeqCst);
        let _ = person.join();
        super::output::say(&format!(
            "demo run recorded in {}\nreplay it with: loopwatch replay {}",
            super::output::shown(&paths.worktree.join(".pipeline").display().to_string()),
            super::output::shown(&paths.worktree.display().to_string())
        ));
        return Ok(exit_code(result));
    }
    with_tui(&paths, a.speed)
}

type EngineResult = Result<Finish, String>;

/// The engine on its own thread and runtime; `stop` (when given) lets the
/// caller stop it.
fn engine_thread(
    paths: &DemoPaths,
    speed: f64,
    stop: Option<watch::Receiver<Option<i32>>>,
) -> anyhow::Result<std::thread::JoinHandle<EngineResult>> {
    let opts = engine_options(paths, speed)?;
    let log = paths.agents.join("engine.log");
    Ok(std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        rt.block_on(async move {
            let (tx, rx) = watch::channel(None);
            let rx = match stop {
                Some(s) => s,
                None => {
                    // Headless: the process's signals stop the engine.
                    let _ = super::run::spawn_signal_watch(tx);
                    rx
                }
            };
            let mut notes = Vec::new();
            let r = engine::run(opts, rx, &mut |n| notes.push(n)).await;
            let _ = std::fs::write(&log, notes.join("\n"));
            r.map_err(|e| e.to_string())
        })
    }))
}

fn exit_code(r: std::thread::Result<EngineResult>) -> ExitCode {
    match r {
        Ok(Ok(Finish::Ended(EndStatus::Complete | EndStatus::Partial))) => ExitCode::SUCCESS,
        Ok(Ok(Finish::Ended(_))) => ExitCode::from(1),
        Ok(Ok(Finish::Stopped(code))) => ExitCode::from(u8::try_from(code).unwrap_or(2)),
        Ok(Err(e)) => {
            super::output::warn(&format!("loopwatch: the demo run failed: {e}"));
            ExitCode::from(2)
        }
        Err(_) => ExitCode::from(2),
    }
}

fn with_tui(paths: &DemoPaths, speed: f64) -> anyhow::Result<ExitCode> {
    let (tx, rx) = watch::channel(None);
    let engine = engine_thread(paths, speed, Some(rx))?;
    let result = crate::tui::run_live(vec![crate::journal::Pipeline::at(
        paths.worktree.join(".pipeline"),
    )]);
    // Leaving the TUI stops the run: its agents are stopped and recorded.
    let _ = tx.send(Some(130));
    let _ = engine.join();
    super::output::warn(&format!(
        "the demo worktree was {}",
        super::output::shown(&paths.worktree.display().to_string())
    ));
    result
}
