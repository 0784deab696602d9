//! Time to first frame on a long run: in process (read + fold + app + one
//! render on a test backend) and for the real binary on a pty (spawn until
//! the header shows the run), plus the cost of one update on that run.

use std::time::{Duration, Instant};

use anyhow::Context;
use loopwatch::journal::JournalReader;
use loopwatch::model::{Event, EventBody, State};
use loopwatch::tui::config::{Config, ThemeKind};
use loopwatch::tui::{App, SystemClock};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use crate::fixture::{self, Worktree};
use crate::pty::Session;
use crate::report::{Figure, ms, percentile};

/// Iterations and findings per iteration of the long run.
const ITERATIONS: u32 = 50;
const FINDINGS: usize = 200;
/// What the header shows once the journal was read.
const RUN_ID: &str = "2026-11-02-bench-0900";

/// Measures both first-frame figures and the update cost.
pub fn run(bin: &str, rounds: usize) -> anyhow::Result<Vec<Figure>> {
    let wt = Worktree::new()?;
    let events = fixture::long_run(ITERATIONS, FINDINGS);
    let bytes = wt.write_journal(&events)?;
    println!(
        "first frame: journal of {ITERATIONS} iterations x {FINDINGS} findings ({} events, {:.1} MB)",
        events.len(),
        bytes as f64 / 1e6
    );

    let mut stages = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..rounds {
        let s = in_process(&wt)?;
        for (all, d) in stages.iter_mut().zip(s) {
            all.push(d);
        }
    }
    let total = percentile(&mut stages[3], 50.0);
    println!(
        "  in process, median of {rounds}: read+fold {} ms, app {} ms, render 160x48 {} ms",
        ms(percentile(&mut stages[0], 50.0)),
        ms(percentile(&mut stages[1], 50.0)),
        ms(percentile(&mut stages[2], 50.0)),
    );
    let mut figures = vec![Figure::under(
        "first frame, in process (median)",
        total,
        Duration::from_millis(200),
    )];

    let mut spawned = Vec::new();
    let config_home = tempfile::tempdir().context("config home")?;
    for _ in 0..rounds {
        let t = Instant::now();
        let s = Session::watch(bin, wt.root(), config_home.path(), 160, 48)?;
        s.wait_for(RUN_ID, Duration::from_secs(10), Duration::from_micros(500))?;
        spawned.push(t.elapsed());
    }
    let p50 = percentile(&mut spawned, 50.0);
    println!(
        "  real binary on a pty, {rounds} spawns: median {} ms, max {} ms",
        ms(p50),
        ms(percentile(&mut spawned, 100.0))
    );
    let empty = Worktree::new()?;
    let mut bare = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        let s = Session::watch(bin, empty.root(), config_home.path(), 160, 48)?;
        s.wait_for(
            "no run started yet",
            Duration::from_secs(10),
            Duration::from_micros(500),
        )?;
        bare.push(t.elapsed());
    }
    println!(
        "  the same on an empty pipeline (start-up alone): median {} ms",
        ms(percentile(&mut bare, 50.0))
    );
    figures.push(Figure::under(
        "first frame, real binary on a pty (median)",
        p50,
        Duration::from_millis(200),
    ));

    figures.push(update_cost(&wt, &events, rounds)?);
    Ok(figures)
}

/// Read + fold, app, render, total.
fn in_process(wt: &Worktree) -> anyhow::Result<[Duration; 4]> {
    let t = Instant::now();
    let mut reader = JournalReader::new(wt.journal());
    let batch = reader.read_new().context("read the journal")?;
    anyhow::ensure!(
        batch.problems.is_empty(),
        "journal problems: {:?}",
        batch.problems.first()
    );
    if std::env::var_os("LOOPWATCH_BENCH_DETAIL").is_some() {
        println!("    read+parse alone: {} ms", ms(t.elapsed()));
    }
    let mut state = State::default();
    for ev in &batch.events {
        state.apply(ev);
    }
    state.finish();
    let read = t.elapsed();
    let mut app = App::new(
        Config::default(),
        ThemeKind::Light,
        Box::new(SystemClock),
        wt.pipeline_dir(),
    );
    let _ = app.on_state(state, &batch.events);
    let built = t.elapsed();
    let mut term = Terminal::new(TestBackend::new(160, 48)).context("test backend")?;
    term.draw(|f| loopwatch::tui::view::render(f, &app))
        .context("draw")?;
    let total = t.elapsed();
    anyhow::ensure!(
        buffer_contains(term.backend().buffer(), RUN_ID),
        "the header does not show the run"
    );
    Ok([read, built - read, total - built, total])
}

/// One appended event on the long run, as the live loop handles it: the
/// feed applies it, the app takes the new state, one frame is drawn.
fn update_cost(wt: &Worktree, events: &[Event], rounds: usize) -> anyhow::Result<Figure> {
    let mut state = loopwatch::model::fold(events.iter());
    let mut app = App::new(
        Config::default(),
        ThemeKind::Light,
        Box::new(SystemClock),
        wt.pipeline_dir(),
    );
    let _ = app.on_state(state.clone(), events);
    let mut term = Terminal::new(TestBackend::new(160, 48)).context("test backend")?;
    let first = events.len() as u64 + 1;
    let mut times = Vec::new();
    for seq in first..first + rounds.max(1) as u64 * 20 {
        let i = seq - first;
        let ev = Event {
            v: 1,
            seq,
            at: "2026-11-02T12:00:00Z".into(),
            prev: None,
            body: EventBody::Note {
                text: format!("update {i}"),
            },
        };
        let t = Instant::now();
        state.apply(&ev);
        state.finish();
        let _ = app.on_state(state.clone(), std::slice::from_ref(&ev));
        term.draw(|f| loopwatch::tui::view::render(f, &app))
            .context("draw")?;
        times.push(t.elapsed());
    }
    let p50 = percentile(&mut times, 50.0);
    println!(
        "  one update on that run (apply, hand the state to the app, draw): p50 {} ms, p99 {} ms",
        ms(p50),
        ms(percentile(&mut times, 99.0))
    );
    // The TUI's own share of change-to-screen latency: held to the same 20 ms.
    Ok(Figure::under(
        "TUI update → frame on the long run, p99",
        percentile(&mut times, 99.0),
        Duration::from_millis(20),
    ))
}

fn buffer_contains(buf: &ratatui::buffer::Buffer, needle: &str) -> bool {
    let w = usize::from(buf.area.width);
    buf.content().chunks(w.max(1)).any(|row| {
        row.iter()
            .map(|c| c.symbol())
            .collect::<String>()
            .contains(needle)
    })
}
