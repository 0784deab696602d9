//! Replay benchmark on generated 100,000-event journals (every iteration
//! full, so the most iterations; and long iterations with notes between the
//! gates): the time to build the [`History`], the p50/p99/max of 200 seeks
//! to random events through `History::state_at` (target: every seek under
//! 50 ms), and the wall time of `loopwatch report` (the real binary).
//!
//! Run with `cargo bench --bench replay`; prints its figures and exits 1 when
//! a seek misses the target.

#[path = "../tests/fixtures/replay/journal_gen.rs"]
mod journal_gen;

use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use loopwatch::history::History;
use loopwatch::model::Event;

/// Events in the generated journal.
const EVENTS: usize = 100_000;
/// Random seeks measured.
const SEEKS: usize = 200;
/// The slowest seek allowed.
const TARGET: Duration = Duration::from_millis(50);

fn main() -> ExitCode {
    let shapes = [
        (
            "every iteration full (the most iterations)",
            journal_gen::lines(EVENTS),
        ),
        (
            "200 notes and progress events per iteration",
            journal_gen::lines_with_chatter(EVENTS, 200),
        ),
    ];
    let mut met = true;
    for (name, lines) in shapes {
        println!("== {EVENTS} events, {name}");
        met &= measure(&lines);
    }
    if let Some(peak) = peak_memory() {
        println!("peak memory of this process: {peak}");
    }
    if met {
        println!("target met: every seek under {}", ms(TARGET));
        ExitCode::SUCCESS
    } else {
        println!("TARGET MISSED: a seek took {} or more", ms(TARGET));
        ExitCode::from(1)
    }
}

/// Prints the figures of one journal; true when every seek met the target.
fn measure(lines: &[String]) -> bool {
    let t = Instant::now();
    let events: Vec<Event> = lines
        .iter()
        .map(|l| Event::parse_line(l.as_bytes()).expect("generated line parses"))
        .collect();
    let parse = t.elapsed();

    let t = Instant::now();
    let history = History::new(events);
    let build = t.elapsed();
    println!(
        "{} iterations, {} human gates",
        history.latest().iteration_number(),
        history.latest().human_gates.len()
    );
    println!("parse the journal lines:  {}", ms(parse));
    println!("build the History:        {}", ms(build));
    println!(
        "checkpoints: {} kept, one every {} events",
        history.checkpoint_count(),
        history.checkpoint_spacing()
    );
    let t = Instant::now();
    let last = history.latest().clone();
    println!("clone the final state:    {}", ms(t.elapsed()));
    drop(last);

    let mut rng: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut seeks: Vec<Duration> = (0..SEEKS)
        .map(|_| {
            rng = rng
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let k = usize::try_from(rng >> 33).unwrap_or(0) % (EVENTS + 1);
            let t = Instant::now();
            let state = history.state_at(k);
            let took = t.elapsed();
            assert_eq!(state.seq, k as u64, "seek to {k}");
            took
        })
        .collect();
    seeks.sort();
    let (p50, p99, max) = (seeks[SEEKS / 2], seeks[SEEKS * 99 / 100], seeks[SEEKS - 1]);
    println!(
        "seek ({SEEKS} random events): p50 {}  p99 {}  max {}",
        ms(p50),
        ms(p99),
        ms(max)
    );

    let dir = tempfile::tempdir().expect("temp dir");
    let pipeline = dir.path().join(".pipeline");
    std::fs::create_dir(&pipeline).expect("mkdir");
    std::fs::write(pipeline.join("events.jsonl"), lines.join("\n") + "\n").expect("write journal");
    let out = dir.path().join("report.md");
    let t = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_loopwatch"))
        .arg("report")
        .arg(dir.path())
        .arg("-o")
        .arg(&out)
        .env_remove("LOOPWATCH_PIPELINE")
        .stdin(Stdio::null())
        .status()
        .expect("run loopwatch report");
    let report = t.elapsed();
    assert!(status.success(), "loopwatch report failed: {status:?}");
    println!("loopwatch report (wall):  {}", ms(report));
    max < TARGET
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

/// `VmHWM` of `/proc/self/status` (Linux), when readable.
fn peak_memory() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.trim_start_matches("VmHWM:").trim().to_string())
}
