//! The one store from outside: peak memory of `watch` and of `replay` on
//! the same journal (the demo run plus 100,000 notes), and the wall time of
//! 150 replay steps back from the last event on it and on the demo run plus
//! 1,000 notes, keys typed through the pty.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::pty::{Session, status_bytes};
use crate::report::Figure;

/// Notes after the demo run in the long journal.
const NOTES: usize = 100_000;
/// Replay steps timed.
const STEPS: usize = 150;
/// The peak RSS target of `watch`.
const WATCH_TARGET: u64 = 64 << 20;

/// Measures both journals.
pub fn run(bin: &str) -> anyhow::Result<Vec<Figure>> {
    let tmp = tempfile::tempdir().context("temp dir")?;
    let long = tmp.path().join("long");
    let short = tmp.path().join("short");
    let last_long = demo_with_notes(bin, &long, NOTES)?;
    let last_short = demo_with_notes(bin, &short, 1_000)?;
    let config_home = tmp.path().join("config");
    std::fs::create_dir_all(&config_home).context("config home")?;

    let watch = peak_of(bin, &["watch"], &long, &config_home, "Criteria")?;
    let (replay, steps_long) = replay_steps(bin, &long, &config_home, last_long)?;
    let (_, steps_short) = replay_steps(bin, &short, &config_home, last_short)?;
    let mib = |b: u64| b as f64 / f64::from(1u32 << 20);
    println!(
        "store: {NOTES} notes after the demo run: watch VmHWM {:.1} MiB, replay VmHWM {:.1} MiB",
        mib(watch),
        mib(replay)
    );
    println!(
        "store: {STEPS} replay steps back from the last event: {:.0} ms at {last_long} events, {:.0} ms at {last_short}",
        steps_long.as_secs_f64() * 1000.0,
        steps_short.as_secs_f64() * 1000.0
    );
    let ratio = steps_long.as_secs_f64() / steps_short.as_secs_f64().max(1e-9);
    Ok(vec![
        Figure::new(
            "peak RSS of watch, demo + 100k notes",
            format!("{:.1} MiB", mib(watch)),
            format!("< {} MiB", WATCH_TARGET >> 20),
            watch < WATCH_TARGET,
        ),
        Figure::new(
            "peak RSS of replay / of watch, same journal",
            format!("{:.2}x", replay as f64 / watch as f64),
            "<= 1.5x".into(),
            replay as f64 <= 1.5 * watch as f64,
        ),
        Figure::new(
            "150 replay steps, 100k events / 1k events",
            format!("{ratio:.2}x"),
            "<= 2x".into(),
            ratio <= 2.0,
        ),
    ])
}

/// Records the demo run into `out` with the real binary, then appends
/// `notes` notes to its journal; returns the last seq.
fn demo_with_notes(bin: &str, out: &Path, notes: usize) -> anyhow::Result<u64> {
    let run = loopwatch::tui::testkit::record_demo(bin.as_ref(), out);
    anyhow::ensure!(run.status.success(), "the demo run failed: {run:?}");
    let journal = out.join(".pipeline/events.jsonl");
    let text = std::fs::read_to_string(&journal).context("read the demo journal")?;
    let mut seq = u64::try_from(text.lines().count()).context("journal length")?;
    let mut f = std::io::BufWriter::new(
        std::fs::OpenOptions::new()
            .append(true)
            .open(&journal)
            .context("open the journal")?,
    );
    for i in 0..notes {
        seq += 1;
        let line = serde_json::json!({"v": 1, "seq": seq, "at": "2026-11-30T10:00:00Z",
            "type": "note", "text": format!("note {i} of the generated chatter")});
        writeln!(f, "{line}").context("append a note")?;
    }
    f.flush().context("flush the journal")?;
    Ok(seq)
}

/// Starts `bin args… dir`, waits for `ready` on screen and a second more,
/// and returns its peak RSS.
fn peak_of(
    bin: &str,
    args: &[&str],
    dir: &Path,
    config_home: &Path,
    ready: &str,
) -> anyhow::Result<u64> {
    let d = dir.to_string_lossy().into_owned();
    let mut all: Vec<&str> = args.to_vec();
    all.push(&d);
    let s = Session::spawn(bin, &all, dir, config_home, 160, 48)?;
    s.wait_for(ready, Duration::from_secs(60), Duration::from_millis(10))?;
    std::thread::sleep(Duration::from_secs(1));
    status_bytes(s.pid(), "VmHWM:")
}

/// Opens `replay --at LAST`, presses ← [`STEPS`] times and waits for the
/// position to arrive; returns the peak RSS and the time the steps took.
fn replay_steps(
    bin: &str,
    dir: &Path,
    config_home: &Path,
    last: u64,
) -> anyhow::Result<(u64, Duration)> {
    let d = dir.to_string_lossy().into_owned();
    let at = last.to_string();
    let mut s = Session::spawn(bin, &["replay", "--at", &at, &d], dir, config_home, 160, 48)?;
    let step = Duration::from_millis(2);
    s.wait_for(&format!("event {last}/"), Duration::from_secs(60), step)?;
    let t = Instant::now();
    for _ in 0..STEPS {
        s.send(b"\x1b[D")?;
    }
    s.wait_for(
        &format!("event {}/", last - STEPS as u64),
        Duration::from_secs(60),
        step,
    )?;
    let took = t.elapsed();
    Ok((status_bytes(s.pid(), "VmHWM:")?, took))
}
