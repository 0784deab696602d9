//! The finding-verifier graph's map, measured (not asserted): 64 findings,
//! each lane a generic agent that sleeps a fixed time then answers a
//! verdict, at concurrency 1, 4 and 16. For each:
//!
//! - wall time of the map (lanes queued → verdicts recorded) against the
//!   ideal schedule, `ceil(64 / c)` × one lane's time alone (the same
//!   command run by a bare `Command`, median of 20): the ratio should stay
//!   at or under 1.15;
//! - the stage's own overhead per finding, `(wall − ideal) / 64` at
//!   concurrency 1, where nothing overlaps: every journal append, the
//!   verdict gate and the dispatch bookkeeping of one lane (target < 5 ms).
//!
//! Every lane transition is in the journal append of its dispatch's start
//! or finish (fsync of the journal, then `state.json` replaced: fsync,
//! rename, fsync of the folder); the lanes' appends go through one
//! committer, which puts every request pending when it starts into one
//! append, on the blocking pool, as it does the input and answer files and
//! the spawn, so lanes are reaped while others fsync. The figures are printed twice:
//! with the pipeline on the temp folder's disk, and on `/dev/shm` (tmpfs)
//! when there is one, where durability costs nothing and what is left is
//! the stage's own work.
//!
//! Beside the ideal, each concurrency prints the machine's own floor: the
//! same commands run by bare processes in waves of that size, with no
//! loopwatch (on two cores, sixteen processes starting at once already take
//! longer than one alone), and the map's wall time as a ratio of it.
//!
//! `cargo bench --bench review` (`REVIEW_BENCH_SLEEP=0.05` sets the lane
//! time in seconds, `REVIEW_BENCH_RUNS=3` the runs per concurrency).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use loopwatch::engine::config::Config;
use loopwatch::engine::dispatch::Settings;
use loopwatch::engine::review::{Ctx, Dispatches, graph};
use loopwatch::journal::{AppendOptions, JournalError, Pipeline, append_with};
use loopwatch::model::event::{FindingLane, LaneState, ReviewInfo, RunInfo};
use loopwatch::model::{EventBody, FindingVerdict};
use loopwatch::recorder::Recorder;
use loopwatch::watch::Feed;
use serde_json::json;

const FINDINGS: u32 = 64;

fn agent_command(sleep: &str) -> String {
    format!(
        "sleep {sleep}; printf '{{\"verdict\":\"VERIFIED\",\"evidence\":\"src/a.rs:1\",\"note\":\"\"}}\\n'"
    )
}

/// One lane's time alone: the agent command under a bare `Command`.
fn solo(sleep: &str) -> Duration {
    let mut v: Vec<Duration> = (0..20)
        .map(|_| {
            let t0 = Instant::now();
            let out = Command::new("sh")
                .args(["-c", &agent_command(sleep)])
                .stdin(Stdio::null())
                .output()
                .expect("run the agent command");
            assert!(out.status.success());
            t0.elapsed()
        })
        .collect();
    v.sort();
    v[v.len() / 2]
}

/// The machine's own floor at `concurrency`: the same 64 commands run by
/// bare `Command`s, `concurrency` at a time in waves (spawn them all, wait
/// for them all), with no loopwatch at all. On a small machine, starting
/// many processes at once costs more than one alone, so this is what the
/// map can be compared with beside the ideal.
fn floor(concurrency: usize, sleep: &str) -> Duration {
    let t0 = Instant::now();
    let mut left = FINDINGS as usize;
    while left > 0 {
        let n = left.min(concurrency);
        let children: Vec<_> = (0..n)
            .map(|_| {
                Command::new("sh")
                    .args(["-c", &agent_command(sleep)])
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .spawn()
                    .expect("run the agent command")
            })
            .collect();
        for c in children {
            assert!(c.wait_with_output().expect("wait").status.success());
        }
        left -= n;
    }
    t0.elapsed()
}

/// One map of 64 queued lanes at `concurrency`: its wall time.
fn map_once(concurrency: usize, sleep: &str, base: &std::path::Path) -> Duration {
    let dir = tempfile::tempdir_in(base).expect("tempdir");
    let root = dir.path().join("work");
    std::fs::create_dir_all(&root).expect("worktree");
    let cfg_path = root.join("loopwatch.toml");
    let text = format!(
        "[agents.developer]\ncommand = \"true\"\n[agents.verifier]\ncommand = \"true\"\n[agents.auditor]\ncommand = \"true\"\n\
         [agents.reviewer]\ncommand = \"true\"\n[agents.finding-verifier]\ncommand = {}\nmax_concurrency = {concurrency}\ntimeout = \"1m\"\n",
        toml::Value::String(agent_command(sleep))
    );
    std::fs::write(&cfg_path, &text).expect("config");
    let config = Config::load(&cfg_path).expect("valid config");
    let pipeline = Pipeline::at(root.join(".pipeline"));
    let recorder = Recorder::new(pipeline.clone());
    let run = RunInfo {
        id: "bench".into(),
        contract: "contract.md".into(),
        diff: "HEAD".into(),
        worktree: root.display().to_string(),
        engine: true,
        review: Some(ReviewInfo::default()),
        ..RunInfo::default()
    };
    recorder.run_start(run.clone(), false).expect("run started");
    append_with::<_, JournalError>(&pipeline, &AppendOptions::default(), |_| {
        Ok((0..FINDINGS)
            .map(|i| {
                let id = format!("F{}", i + 1);
                let mut l = FindingLane::new(1, &id, i, LaneState::Queued, 0);
                l.item = Some(json!({"id": id, "severity": "minor", "path": "src/a.rs", "lines": "1", "claim": "c"}));
                l.project_dir = Some(root.display().to_string());
                EventBody::from(l)
            })
            .collect())
    })
    .expect("lanes queued");
    let mut feed = Feed::new(pipeline.clone());
    feed.refresh();
    let state = feed.state().clone();
    let settings = Settings {
        pipeline: pipeline.clone(),
        run,
        grace: Duration::from_secs(1),
        log_limit: 1 << 20,
        contract: None,
        left: Default::default(),
    };
    let dispatches = Dispatches::from(1);
    let ctx = Ctx {
        settings: &settings,
        recorder: &recorder,
        config: &config,
        dispatches: &dispatches,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (_tx, mut stop) = tokio::sync::watch::channel(None);
    let t0 = Instant::now();
    let r = rt
        .block_on(graph::run(&ctx, &state, 1, "", &mut stop))
        .expect("the map runs");
    let wall = t0.elapsed();
    assert!(r.is_none(), "not stopped");
    feed.refresh();
    let it = feed.state().iteration(1).expect("iteration 1");
    assert_eq!(it.findings.len(), FINDINGS as usize);
    assert!(
        it.findings
            .iter()
            .all(|f| f.verdict == FindingVerdict::Verified),
        "every lane verified"
    );
    wall
}

fn main() {
    let sleep = std::env::var("REVIEW_BENCH_SLEEP").unwrap_or_else(|_| "0.05".into());
    let sleep = sleep.as_str();
    let runs: usize = std::env::var("REVIEW_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let lane = solo(sleep);
    let mut bases = vec![("temp folder (disk)", std::env::temp_dir())];
    let shm = std::path::PathBuf::from("/dev/shm");
    if shm.is_dir() {
        bases.push(("/dev/shm (tmpfs)", shm));
    }
    for (label, base) in &bases {
        println!(
            "== finding-verifier map on {label}: {FINDINGS} findings, one lane alone {:.1} ms (sleep {sleep} s), median of {runs} runs",
            lane.as_secs_f64() * 1e3
        );
        measure(lane, sleep, runs, base);
    }
}

fn measure(lane: Duration, sleep: &str, runs: usize, base: &std::path::Path) {
    for c in [1usize, 4, 16] {
        let mut v: Vec<Duration> = (0..runs).map(|_| map_once(c, sleep, base)).collect();
        v.sort();
        let wall = v[v.len() / 2];
        let waves = u32::try_from(usize::try_from(FINDINGS).unwrap_or(64).div_ceil(c)).unwrap_or(1);
        let ideal = lane * waves;
        let ratio = wall.as_secs_f64() / ideal.as_secs_f64();
        let per = (wall.as_secs_f64() - ideal.as_secs_f64()) / f64::from(FINDINGS) * 1e3;
        let mut f: Vec<Duration> = (0..runs).map(|_| floor(c, sleep)).collect();
        f.sort();
        let bare = f[f.len() / 2];
        println!(
            "concurrency {c:>2}: wall {:>7.1} ms, ideal {:>7.1} ms ({waves} waves), ratio {ratio:.3} (target <= 1.15), overhead {per:.2} ms per finding; bare processes in waves {:>7.1} ms ({:.3} of ideal), the map {:.3}x of that",
            wall.as_secs_f64() * 1e3,
            ideal.as_secs_f64() * 1e3,
            bare.as_secs_f64() * 1e3,
            bare.as_secs_f64() / ideal.as_secs_f64(),
            wall.as_secs_f64() / bare.as_secs_f64(),
        );
    }
}
