//! Change-to-update latency: the bench appends notes through the library's
//! locked append while `loopwatch watch --headless` prints one timestamped
//! line per applied update; beside it a bare inotify watcher in this
//! process timestamps the first journal event after each write (the floor).
//! Both clocks are this machine's realtime clock.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use loopwatch::journal::{AppendOptions, Pipeline, append};
use loopwatch::model::EventBody;
use notify::{EventKind, RecursiveMode, Watcher};

use crate::fixture::Worktree;
use crate::report::{Figure, ms, percentile};

/// Spacing of the appends.
const SPACING: Duration = Duration::from_millis(10);

/// Runs `appends` appends and returns the figures.
pub fn run(bin: &str, appends: usize) -> anyhow::Result<Vec<Figure>> {
    let wt = Worktree::new()?;
    let pipeline = Pipeline::at(wt.pipeline_dir());
    let opts = AppendOptions::default();
    append(&pipeline, &opts, vec![EventBody::Note { text: "start".into() }]).context("first append")?;

    // The floor: a bare watcher on the same folder.
    let (ftx, frx) = mpsc::channel::<SystemTime>();
    let journal = wt.journal();
    let mut floor = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        let now = SystemTime::now();
        if let Ok(ev) = res
            && matches!(ev.kind, EventKind::Modify(_))
            && ev.paths.iter().any(|p| p == &journal)
        {
            let _ = ftx.send(now);
        }
    })
    .context("start the floor watcher")?;
    floor.watch(&wt.pipeline_dir(), RecursiveMode::NonRecursive).context("watch .pipeline")?;

    // The measured path: the real binary, headless.
    let mut child = Command::new(bin)
        .args(["watch", "--headless"])
        .arg(wt.pipeline_dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("spawn loopwatch watch --headless")?;
    let stdout = child.stdout.take().context("headless stdout")?;
    let (htx, hrx) = mpsc::channel::<(u64, SystemTime)>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(parsed) = parse_line(&line) {
                let _ = htx.send(parsed);
            }
        }
    });
    // Wait for the headless watcher's first line (the journal as it is).
    hrx.recv_timeout(Duration::from_secs(10)).context("no first line from the headless watcher")?;
    while frx.try_recv().is_ok() {}

    let mut writes: Vec<(u64, SystemTime)> = Vec::with_capacity(appends);
    let start = Instant::now();
    for i in 0..appends {
        let due = start + SPACING * i as u32;
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let t0 = SystemTime::now();
        let done = append(&pipeline, &opts, vec![EventBody::Note { text: format!("note {i}") }]).context("append")?;
        let seq = done.events.first().map(|e| e.seq).context("append wrote nothing")?;
        writes.push((seq, t0));
    }
    std::thread::sleep(Duration::from_millis(500));
    let _ = child.kill();
    let _ = child.wait();
    drop(floor);

    let lines: BTreeMap<u64, SystemTime> = hrx.try_iter().collect();
    let floor_events: Vec<SystemTime> = frx.try_iter().collect();
    let mut measured = Vec::new();
    let mut missed = 0usize;
    for (seq, t0) in &writes {
        match lines.get(seq).and_then(|t| t.duration_since(*t0).ok()) {
            Some(d) => measured.push(d),
            None => {
                missed += 1;
                if missed <= 3 {
                    let next = lines.range(seq..).next();
                    let shown = next.map(|(s, t)| format!("first shown by the line of seq {s}, {} ms after", ms(t.duration_since(*t0).unwrap_or_default())));
                    println!("  seq {seq} has no line of its own; {}", shown.unwrap_or_else(|| "never shown".into()));
                }
            }
        }
    }
    let mut floors = Vec::new();
    for (k, (_, t0)) in writes.iter().enumerate() {
        let next = writes.get(k + 1).map(|w| w.1);
        let first = floor_events.iter().find(|t| **t >= *t0 && next.is_none_or(|n| **t < n));
        if let Some(d) = first.and_then(|t| t.duration_since(*t0).ok()) {
            floors.push(d);
        }
    }
    let (p50, p99) = (percentile(&mut measured, 50.0), percentile(&mut measured, 99.0));
    let (f50, f99) = (percentile(&mut floors, 50.0), percentile(&mut floors, 99.0));
    println!(
        "latency: {appends} appends {} ms apart; headless lines for {} (missed {missed}); floor events for {}",
        SPACING.as_millis(),
        measured.len(),
        floors.len()
    );
    println!("  append → headless line: p50 {} ms, p99 {} ms, max {} ms", ms(p50), ms(p99), ms(percentile(&mut measured, 100.0)));
    println!("  append → first inotify event (floor): p50 {} ms, p99 {} ms", ms(f50), ms(f99));
    let ratio = if f99.is_zero() { f64::INFINITY } else { p99.as_secs_f64() / f99.as_secs_f64() };
    Ok(vec![
        Figure::under("append → headless update, p99", p99, Duration::from_millis(20)),
        Figure::new("headless p99 / floor p99", format!("{ratio:.2}x"), "<= 3x".into(), ratio <= 3.0),
        Figure::new("appends without their own update line", missed.to_string(), "0".into(), missed == 0),
    ])
}

/// `<secs>.<micros> seq=<n> ...` → (n, time).
fn parse_line(line: &str) -> Option<(u64, SystemTime)> {
    let mut words = line.split_whitespace();
    let (secs, micros) = words.next()?.split_once('.')?;
    let at = UNIX_EPOCH + Duration::from_secs(secs.parse().ok()?) + Duration::from_micros(micros.parse().ok()?);
    let seq = words.find_map(|w| w.strip_prefix("seq="))?.parse().ok()?;
    Some((seq, at))
}
