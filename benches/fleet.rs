//! Many runs in one view: `loopwatch watch DIR` on a folder of 100
//! worktrees, each figure beside the same figure for a folder of ONE, as a
//! ratio. The real binary on a pseudo-terminal (the figures are those of
//! its event loop, its terminal output and its search for new runs, which
//! an in-process drawing would leave out):
//!
//! - first frame: from spawn to the run list with every run on screen;
//! - idle: CPU clock ticks (utime + stime of `/proc/<pid>/stat`) per 30 s
//!   with nothing happening (the 1 s tick, the search every 3 s);
//! - an append on screen: a gate opened (then decided) in a run through the
//!   locked append, until the list's "N waiting on you" shows it;
//! - peak memory (`VmHWM`) after all of it.
//!
//! `cargo bench --features pty-bench --bench fleet` (about 75 s);
//! `-- --quick` shortens the idle windows to 5 s (scaled to 30 s).
//! Prints figures beside their targets; asserts nothing about time.

#[path = "common/mod.rs"]
mod common;
#[allow(dead_code)]
#[path = "tui/pty.rs"]
mod pty;
#[allow(dead_code)]
#[path = "tui/report.rs"]
mod report;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;
use loopwatch::journal::{AppendOptions, Pipeline, append};
use loopwatch::model::event::{HumanDecision, HumanRequest, RunInfo};
use loopwatch::model::{Decision, EventBody, HumanGateKind};

use pty::{Session, cpu_time, status_bytes};
use report::{Figure, ms, percentile};

/// Notes per run, beside its start: a journal of a run well under way.
const NOTES: usize = 300;
const COLS: u16 = 160;
const ROWS: u16 = 48;

/// A folder of `n` worktrees, each with a started run, a source tree, and
/// the folders the search skips.
struct Folder {
    dir: tempfile::TempDir,
    pipelines: Vec<Pipeline>,
}

impl Folder {
    fn new(n: usize) -> anyhow::Result<Folder> {
        let dir = tempfile::tempdir().context("temp folder")?;
        let mut pipelines = Vec::new();
        for k in 0..n {
            let wt = dir.path().join(format!("team-{}/wt-{k:03}", k % 10));
            for sub in [
                ".git/objects",
                "src/ui/widgets",
                "src/core",
                "tests",
                "target/debug/deps",
                "node_modules/pkg",
            ] {
                std::fs::create_dir_all(wt.join(sub)).context("worktree folders")?;
            }
            let p = Pipeline::at(wt.join(".pipeline"));
            let mut evs = vec![EventBody::RunStarted {
                run: Box::new(RunInfo {
                    id: format!("run-{k:03}"),
                    flow: "feat".into(),
                    contract: "contract.md".into(),
                    ..RunInfo::default()
                }),
                tree: None,
                tree_missing: None,
            }];
            evs.extend((0..NOTES).map(|i| EventBody::Note {
                text: format!("step {i} of the run"),
            }));
            append(&p, &AppendOptions::default(), evs).context("write a journal")?;
            pipelines.push(p);
        }
        Ok(Folder { dir, pipelines })
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }
}

fn request(id: &str) -> EventBody {
    EventBody::from(HumanRequest {
        id: id.into(),
        kind: HumanGateKind::OutOfScope,
        gate: None,
        iteration: 1,
        subject: "Makefile".into(),
        summary: "changed outside FILE SCOPE".into(),
        options: HumanGateKind::OutOfScope.options().to_vec(),
        evidence: serde_json::Value::Null,
        expires: None,
        extra: Default::default(),
    })
}

fn decision(id: &str) -> EventBody {
    EventBody::from(HumanDecision {
        id: id.into(),
        decision: Decision::Approve,
        reason: "bench".into(),
        by: "bench@host".into(),
        evidence_hash: String::new(),
        contract_edit: None,
        note: None,
        extra: Default::default(),
    })
}

/// What one folder measured.
struct Measured {
    first_frame: Duration,
    idle_ticks_per_30s: f64,
    p50: Duration,
    p99: Duration,
    samples: usize,
    /// From the journal's change as a bare watcher sees it, to the screen.
    floor_p50: Duration,
    floor_p99: Duration,
    floor_samples: usize,
    peak_rss: u64,
}

fn measure(bin: &str, n: usize, idle: Duration) -> anyhow::Result<Measured> {
    let folder = Folder::new(n)?;
    let config_home = tempfile::tempdir().context("config home")?;
    let state_home = config_home.path().join("state");
    let root = folder.root().to_string_lossy().into_owned();
    // The looked-at marks go to the config home's state folder, not the user's.
    let t = Instant::now();
    let s = Session::spawn(
        "/usr/bin/env",
        &[
            &format!("XDG_STATE_HOME={}", state_home.display()),
            bin,
            "watch",
            &root,
        ],
        folder.root(),
        config_home.path(),
        COLS,
        ROWS,
    )?;
    let step = Duration::from_micros(500);
    // The whole list (every run is read before the first frame), up to the footer.
    let title = format!(" loopwatch · {n} runs · 0 waiting on you");
    loop {
        let text = s.text();
        if text.contains(&title) && text.contains("run-000") && text.contains(" ? help") {
            break;
        }
        anyhow::ensure!(
            t.elapsed() < Duration::from_secs(20),
            "no first frame; screen:\n{text}"
        );
        std::thread::sleep(step);
    }
    let first_frame = t.elapsed();

    // Idle: let start-up settle, then count ticks over the window.
    std::thread::sleep(Duration::from_secs(1));
    let before = cpu_time(s.pid())?;
    std::thread::sleep(idle);
    let used = cpu_time(s.pid())?.saturating_sub(before);
    let idle_ticks_per_30s = used.as_secs_f64() * 100.0 * 30.0 / idle.as_secs_f64();

    // Appends: open a gate in each run in turn (the waiting count goes up),
    // then decide them (it goes down); with one run, open and decide in turn.
    let opts = AppendOptions::default();
    // The floor: a bare inotify watcher in this process on every journal,
    // timestamping the first change after each append starts.
    let (ftx, frx) = std::sync::mpsc::channel::<(PathBuf, Instant)>();
    let mut floor = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        let now = Instant::now();
        if let Ok(ev) = res
            && matches!(ev.kind, notify::EventKind::Modify(_))
        {
            for p in ev.paths {
                let _ = ftx.send((p, now));
            }
        }
    })
    .context("the floor watcher")?;
    for p in &folder.pipelines {
        notify::Watcher::watch(&mut floor, p.dir(), notify::RecursiveMode::NonRecursive)
            .context("watch a journal")?;
    }
    let mut lat = Vec::new();
    let mut after_floor = Vec::new();
    let rounds = if n == 1 { 100 } else { 1 };
    let mut waiting = 0usize;
    for round in 0..rounds {
        for (phase, up) in [(0, true), (1, false)] {
            for (k, p) in folder.pipelines.iter().enumerate() {
                let id = format!("hg-1-manual-{}", round + 1);
                let body = if up { request(&id) } else { decision(&id) };
                waiting = if up { waiting + 1 } else { waiting - 1 };
                let want = format!(" loopwatch · {n} runs · {waiting} waiting on you");
                while frx.try_recv().is_ok() {}
                let t0 = Instant::now();
                append(p, &opts, vec![body]).with_context(|| format!("append {k}/{phase}"))?;
                loop {
                    if s.text().contains(&want) {
                        break;
                    }
                    anyhow::ensure!(
                        t0.elapsed() < Duration::from_secs(5),
                        "'{want}' never on screen:\n{}",
                        s.text()
                    );
                    std::thread::sleep(Duration::from_micros(250));
                }
                let shown = Instant::now();
                lat.push(shown - t0);
                let journal = p.journal_path();
                if let Some((_, seen)) = frx
                    .try_iter()
                    .find(|(path, t)| *path == journal && *t >= t0)
                {
                    after_floor.push(shown.saturating_duration_since(seen));
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
    drop(floor);
    let peak_rss = status_bytes(s.pid(), "VmHWM:")?;
    let samples = lat.len();
    Ok(Measured {
        first_frame,
        idle_ticks_per_30s,
        p50: percentile(&mut lat, 50.0),
        p99: percentile(&mut lat, 99.0),
        samples,
        floor_p50: percentile(&mut after_floor, 50.0),
        floor_p99: percentile(&mut after_floor, 99.0),
        floor_samples: after_floor.len(),
        peak_rss,
    })
}

fn ratio(a: f64, b: f64) -> String {
    if b == 0.0 {
        "n/a".into()
    } else {
        format!("{:.2}x", a / b)
    }
}

fn main() -> ExitCode {
    let quick = std::env::args().any(|a| a == "--quick")
        || std::env::var_os("LOOPWATCH_BENCH_QUICK").is_some_and(|v| v != "0");
    let idle = Duration::from_secs(if quick { 5 } else { 30 });
    let bin = env!("CARGO_BIN_EXE_loopwatch");
    println!(
        "loopwatch fleet benchmark{} (load average {} at start)\n",
        if quick { ", quick" } else { "" },
        report::load_average()
    );
    let run = |n: usize| -> anyhow::Result<Measured> {
        let m = measure(bin, n, idle)?;
        println!(
            "{n:>3} run(s): first frame {} ms · idle {:.1} ticks/30 s · append on screen p50 {} ms, p99 {} ms ({} appends; from the journal's inotify event: p50 {} ms, p99 {} ms, {} seen) · peak RSS {:.1} MiB",
            ms(m.first_frame),
            m.idle_ticks_per_30s,
            ms(m.p50),
            ms(m.p99),
            m.samples,
            ms(m.floor_p50),
            ms(m.floor_p99),
            m.floor_samples,
            m.peak_rss as f64 / f64::from(1 << 20)
        );
        Ok(m)
    };
    let (one, many) = match (run(1), run(100)) {
        (Ok(a), Ok(b)) => (a, b),
        (a, b) => {
            for e in [a.err(), b.err()].into_iter().flatten() {
                eprintln!("could not measure: {e:#}");
            }
            return ExitCode::FAILURE;
        }
    };
    let mib = |b: u64| b as f64 / f64::from(1 << 20);
    let figures = [
        Figure::under(
            "100 runs: first frame",
            many.first_frame,
            Duration::from_millis(300),
        ),
        Figure::new(
            "100 runs: idle clock ticks per 30 s",
            format!("{:.1}", many.idle_ticks_per_30s),
            "<= 5".into(),
            many.idle_ticks_per_30s <= 5.0,
        ),
        Figure::new(
            "100 runs: peak RSS",
            format!("{:.1} MiB", mib(many.peak_rss)),
            "< 64 MiB".into(),
            many.peak_rss < 64 << 20,
        ),
        Figure::under(
            "100 runs: an append on screen, p99",
            many.p99,
            Duration::from_millis(20),
        ),
        Figure::under(
            "100 runs: journal's inotify event → screen, p99",
            many.floor_p99,
            Duration::from_millis(20),
        ),
    ];
    println!(
        "\nsummary (load average {} at the end)",
        report::load_average()
    );
    for f in &figures {
        println!("  {}", f.line());
    }
    println!("\n100 runs / 1 run:");
    println!(
        "  first frame {} ms / {} ms = {}",
        ms(many.first_frame),
        ms(one.first_frame),
        ratio(
            many.first_frame.as_secs_f64(),
            one.first_frame.as_secs_f64()
        )
    );
    println!(
        "  idle ticks per 30 s {:.1} / {:.1} = {}",
        many.idle_ticks_per_30s,
        one.idle_ticks_per_30s,
        ratio(many.idle_ticks_per_30s, one.idle_ticks_per_30s)
    );
    println!(
        "  peak RSS {:.1} MiB / {:.1} MiB = {}",
        mib(many.peak_rss),
        mib(one.peak_rss),
        ratio(many.peak_rss as f64, one.peak_rss as f64)
    );
    println!(
        "  journal event → screen p99 {} ms / {} ms = {}",
        ms(many.floor_p99),
        ms(one.floor_p99),
        ratio(many.floor_p99.as_secs_f64(), one.floor_p99.as_secs_f64())
    );
    println!(
        "  append on screen p99 {} ms / {} ms = {} (p50 {} / {} ms)",
        ms(many.p99),
        ms(one.p99),
        ratio(many.p99.as_secs_f64(), one.p99.as_secs_f64()),
        ms(many.p50),
        ms(one.p50)
    );
    ExitCode::SUCCESS
}
