//! Replay benchmark: the whole step a person sees, on the demo run followed
//! by notes up to 1,000 and 100,000 events (the targets), and for
//! information on generated 100,000-event journals (every iteration full,
//! so the most iterations; long iterations with notes). A step is a key
//! pressed in replay: the key becomes a move, the feed's store seeks, the
//! state at the new position is handed to the app, and a 160x48 frame is
//! drawn, on the Criteria tab and on the Timeline tab (whose rows are the
//! events). The journal is read by the feed, the reading code of `watch`.
//!
//! Targets (demo run plus notes): p99 of a step under 1 ms at both lengths,
//! the 100k p99 within 2x of the 1k p99. Each step is timed twice: wall
//! time, and the CPU time of the thread (what the step costs, whatever
//! else the machine runs). The targets are judged on the CPU time; the wall
//! p99 is printed beside it with the machine's load average, since a busy
//! machine shows there as preemption. Also printed: the time to read the journal into the
//! store, a bare seek (`History::state_at`), and the wall time of
//! `loopwatch report` (the real binary).
//!
//! Run with `cargo bench --bench replay`; prints its figures and exits 1 when
//! a target is missed.

mod common;
#[path = "../tests/fixtures/replay/journal_gen.rs"]
mod journal_gen;

use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use common::{load_average, ms, p50_p99_max};
use loopwatch::journal::Pipeline;
use loopwatch::tui::app::Tab;
use loopwatch::tui::config::ThemeKind;
use loopwatch::tui::replay::{move_target, show_position};
use loopwatch::tui::testkit::app_on;
use loopwatch::tui::{Action, Effect};
use loopwatch::watch::Feed;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Lengths compared.
const LENGTHS: [usize; 2] = [1_000, 100_000];
/// Steps measured per journal and tab.
const STEPS: usize = 300;
/// The slowest p99 allowed for a step.
const TARGET: Duration = Duration::from_millis(1);

fn main() -> ExitCode {
    println!("replay benchmark (load average {})\n", load_average());
    let demo = demo_lines();
    println!("== the demo run ({} events) then notes", demo.len());
    let mut p99s = Vec::new();
    let mut met = true;
    for n in LENGTHS {
        let (p99, ok) = measure(n, &with_notes(&demo, n));
        met &= ok;
        p99s.push(p99);
    }
    let ratio = p99s[1].as_secs_f64() / p99s[0].as_secs_f64().max(1e-9);
    let within = ratio <= 2.0;
    println!(
        "step p99 at 100k / at 1k (worse tab): {ratio:.2}x  {}\n",
        if within {
            "PASS (<= 2x)"
        } else {
            "MISS (> 2x)"
        }
    );
    met &= within;
    for (shape, chatter) in [
        ("every iteration full (the most iterations)", 0),
        ("200 notes and progress events per iteration", 200),
    ] {
        println!("== for information: {shape}");
        let lines = if chatter == 0 {
            journal_gen::lines(100_000)
        } else {
            journal_gen::lines_with_chatter(100_000, chatter)
        };
        measure(100_000, &lines);
        println!();
    }
    if let Some(peak) = peak_memory() {
        println!("peak memory of this process: {peak}");
    }
    println!("load average at the end: {}", load_average());
    if met {
        println!(
            "targets met: every step p99 under {}, lengths within 2x",
            ms(TARGET)
        );
        ExitCode::SUCCESS
    } else {
        println!("TARGET MISSED");
        ExitCode::from(1)
    }
}

/// The journal of `loopwatch demo --no-tui` (the real binary).
fn demo_lines() -> Vec<String> {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("demo");
    let run = loopwatch::tui::testkit::record_demo(env!("CARGO_BIN_EXE_loopwatch").as_ref(), &out);
    assert!(run.status.success(), "the demo run failed: {run:?}");
    std::fs::read_to_string(out.join(".pipeline/events.jsonl"))
        .expect("read the demo journal")
        .lines()
        .map(str::to_string)
        .collect()
}

/// The demo's lines, then notes up to `n` events.
fn with_notes(demo: &[String], n: usize) -> Vec<String> {
    let mut lines = demo.to_vec();
    for seq in demo.len() + 1..=n {
        lines.push(
            serde_json::json!({"v": 1, "seq": seq, "at": "2026-11-30T10:00:00Z",
                "type": "note", "text": format!("note {seq} of the generated chatter")})
            .to_string(),
        );
    }
    lines
}

/// Prints the figures of one journal; returns the worse p99 of a step and
/// whether every target was met.
fn measure(n: usize, lines: &[String]) -> (Duration, bool) {
    let dir = tempfile::tempdir().expect("temp dir");
    let pipeline = dir.path().join(".pipeline");
    std::fs::create_dir(&pipeline).expect("mkdir");
    std::fs::write(pipeline.join("events.jsonl"), lines.join("\n") + "\n").expect("write journal");

    let t = Instant::now();
    let mut feed = Feed::new(Pipeline::at(&pipeline));
    let up = feed.refresh();
    let read = t.elapsed();
    assert_eq!(up.new_events, n, "every generated line is read");
    assert!(
        up.problems.is_empty(),
        "journal problems: {:?}",
        up.problems
    );
    let history = feed.history();
    println!(
        "-- {n} events: {} iterations; read into the store {}; checkpoints {} (one every {})",
        history.latest().iteration_number(),
        ms(read),
        history.checkpoint_count(),
        history.checkpoint_spacing()
    );

    let mut rng: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut seeks: Vec<Duration> = (0..STEPS)
        .map(|_| {
            let k = next(&mut rng) % (n + 1);
            let t = Instant::now();
            let state = feed.history().state_at(k);
            let took = t.elapsed();
            assert_eq!(state.seq, k as u64, "seek to {k}");
            took
        })
        .collect();
    let (p50, p99, max) = p50_p99_max(&mut seeks);
    println!(
        "   bare seek:      p50 {}  p99 {}  max {}",
        ms(p50),
        ms(p99),
        ms(max)
    );

    let mut worst = Duration::ZERO;
    let mut ok = true;
    for tab in [Tab::Criteria, Tab::Timeline] {
        let (mut wall, mut cpu) = steps(&mut feed, tab, &mut rng);
        let (w50, w99, _) = p50_p99_max(&mut wall);
        let (p50, p99, max) = p50_p99_max(&mut cpu);
        let pass = p99 < TARGET;
        println!(
            "   step ({:8}): CPU p50 {}  p99 {}  max {}  {} · wall p50 {}  p99 {}",
            tab.title(),
            ms(p50),
            ms(p99),
            ms(max),
            if pass { "PASS" } else { "MISS" },
            ms(w50),
            ms(w99),
        );
        ok &= pass;
        worst = worst.max(p99);
    }
    report_wall(dir.path());
    (worst, ok)
}

/// [`STEPS`] replay steps on `tab`: from random positions, runs of ten
/// steps back and forward, each timed from the key to the drawn frame
/// (wall time, CPU time).
fn steps(feed: &mut Feed, tab: Tab, rng: &mut u64) -> (Vec<Duration>, Vec<Duration>) {
    let now = "2026-12-03T12:00:00Z".parse().expect("time");
    let (mut app, _clock) = app_on(ThemeKind::Light, now, "/bench/.pipeline", &[]);
    let mut term = Terminal::new(TestBackend::new(160, 48)).expect("test backend");
    let n = feed.history().len();
    let mut k = feed.seek(Some(n)).unwrap_or(n);
    show_position(&mut app, feed.history(), k);
    let _ = app.update(match tab {
        Tab::Timeline => Action::TabTimeline,
        _ => Action::TabCriteria,
    });
    term.draw(|f| loopwatch::tui::view::render(f, &app))
        .expect("draw");
    let mut out = Vec::with_capacity(STEPS);
    let mut cpu = Vec::with_capacity(STEPS);
    while out.len() < STEPS {
        k = feed.seek(Some(1 + next(rng) % n)).unwrap_or(k);
        show_position(&mut app, feed.history(), k);
        for code in [KeyCode::Left; 5].into_iter().chain([KeyCode::Right; 5]) {
            let t = Instant::now();
            let c = thread_cpu();
            for effect in app.on_key(&KeyEvent::new(code, KeyModifiers::NONE)) {
                if let Effect::Replay(m) = effect
                    && let Some(target) = move_target(feed.history(), k, m)
                {
                    k = feed.seek(Some(target)).unwrap_or(target);
                    show_position(&mut app, feed.history(), k);
                }
            }
            term.draw(|f| loopwatch::tui::view::render(f, &app))
                .expect("draw");
            cpu.push(thread_cpu().saturating_sub(c));
            out.push(t.elapsed());
        }
    }
    assert_eq!(app.tab(), tab, "the tab stayed");
    (out, cpu)
}

/// CPU time of this thread so far.
fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(
        u64::try_from(t.tv_sec).unwrap_or(0),
        u32::try_from(t.tv_nsec).unwrap_or(0),
    )
}

/// Runs `loopwatch report` on the journal and prints its wall time.
fn report_wall(root: &Path) {
    let out = root.join("report.md");
    let t = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_loopwatch"))
        .arg("report")
        .arg(root)
        .arg("-o")
        .arg(&out)
        .env_remove("LOOPWATCH_PIPELINE")
        .stdin(Stdio::null())
        .status()
        .expect("run loopwatch report");
    let took = t.elapsed();
    assert!(status.success(), "loopwatch report failed: {status:?}");
    println!("   loopwatch report (wall): {}", ms(took));
}

fn next(rng: &mut u64) -> usize {
    *rng = rng
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    usize::try_from(*rng >> 33).unwrap_or(0)
}

/// `VmHWM` of `/proc/self/status` (Linux), when readable.
fn peak_memory() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.trim_start_matches("VmHWM:").trim().to_string())
}
