//! The engine's costs, measured (not asserted):
//!
//! 1. dispatch overhead: spawn → the agent's first output byte in its log
//!    (what the TUI tails), p50/p99 over 200 dispatches, beside a bare
//!    `Command` spawn → first byte on a pipe;
//! 2. a person's decision → the next `agent.started` in the journal, p99;
//! 3. CPU of an engine waiting on a person, clock ticks over 30 s;
//! 4. a whole scripted run with zero-time agents: `loopwatch run` vs
//!    `loop.sh` (median of 10 each);
//! 5. an agent that leaves 50 descendants behind (half of them in sessions
//!    of their own): from its exit until all 50 are gone, p50/p99 over 30
//!    dispatches.
//!
//! `cargo bench --bench engine` (set `ENGINE_BENCH_WAIT=S` to shorten the
//! 30 s CPU window).

mod common;
#[path = "../tests/support/mod.rs"]
mod support;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{ms, percentile};
use loopwatch::process::{self, LogFile, Sink};
use support::engine::*;

fn dispatch_overhead() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut engine = Vec::new();
    let mut bare = Vec::new();
    for i in 0..200 {
        let log = dir.path().join(format!("{i}.log"));
        let t0 = Instant::now();
        let file = LogFile::create(&log, 1 << 20).unwrap();
        let command = process::Command::new("sh", dir.path())
            .args(["-c", "printf x"])
            .deadline(Duration::from_secs(10))
            .grace(Duration::from_secs(1))
            .stdout(Sink::capture(1 << 20).log(&file))
            .stderr(Sink::read().log(&file))
            .supervisor(bin());
        let first = rt.block_on(async {
            let running = command.spawn().unwrap();
            let (_tx, mut rx) = tokio::sync::watch::channel(None);
            let task = tokio::spawn(async move { running.finish(&mut rx).await });
            let first = loop {
                if std::fs::metadata(&log).is_ok_and(|m| m.len() > 0) {
                    break t0.elapsed();
                }
                tokio::time::sleep(Duration::from_micros(100)).await;
            };
            let _ = task.await;
            first
        });
        engine.push(first);
        let t0 = Instant::now();
        let mut c = Command::new("sh")
            .args(["-c", "printf x"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut b = [0u8; 1];
        let _ = c.stdout.as_mut().unwrap().read(&mut b);
        bare.push(t0.elapsed());
        let _ = c.wait();
    }
    let (e50, e99) = (percentile(&mut engine, 50.0), percentile(&mut engine, 99.0));
    let (b50, b99) = (percentile(&mut bare, 50.0), percentile(&mut bare, 99.0));
    println!(
        "dispatch: spawn → first byte in the log (supervised):  p50 {} p99 {}",
        ms(e50),
        ms(e99)
    );
    println!(
        "          bare Command spawn → first byte on a pipe:   p50 {} p99 {}",
        ms(b50),
        ms(b99)
    );
    println!(
        "          engine overhead p99 ≈ {}",
        ms(e99.saturating_sub(b99))
    );
}

const AGENTS: &str = r#"[run]
test = "true"
grace = "1s"
[agents.developer]
command = "bash @AGENTS@/agent.sh developer"
[agents.verifier]
command = "bash @AGENTS@/agent.sh verifier"
[agents.auditor]
command = "bash @AGENTS@/agent.sh auditor"
"#;

/// Runs to the out-of-scope gate, decides it, and times the next dispatch;
/// the first run also measures the CPU of the waiting engine.
fn decision_and_waiting_cpu() {
    let wait: u64 = std::env::var("ENGINE_BENCH_WAIT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    let mut lat = Vec::new();
    for i in 0..20 {
        let p = Project::new(AGENTS);
        let child = p.spawn_run(true);
        let id = p.wait_for_gate("a gate")["id"]
            .as_str()
            .unwrap()
            .to_string();
        if i == 0 {
            let ticks = |pid: u32| -> u64 {
                let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
                let f: Vec<&str> = s.rsplit(')').next().unwrap().split_whitespace().collect();
                f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
            };
            std::thread::sleep(Duration::from_millis(500));
            let before = ticks(child.id());
            std::thread::sleep(Duration::from_secs(wait));
            let after = ticks(child.id());
            println!(
                "waiting on a person: {} clock ticks of CPU in {wait} s (utime+stime)",
                after - before
            );
        }
        let started = p.of_type("agent.started").len();
        p.decide(&id, "approve");
        let t0 = Instant::now();
        p.wait_for("the next dispatch", |e| {
            e.iter().filter(|e| e["type"] == "agent.started").count() > started
        });
        lat.push(t0.elapsed());
        drop(child);
    }
    println!(
        "decision → next agent.started: p50 {} p99 {} (n={})",
        ms(percentile(&mut lat, 50.0)),
        ms(percentile(&mut lat, 99.0)),
        lat.len()
    );
}

const ZERO: &str = r#"[run]
test = "true"
[agents.developer]
command = "mkdir -p src && echo cents > src/total.txt"
[agents.verifier]
command = "printf 'VERIFY — VERDICT: CONFORME\nCONTRACT: x\nCRITERIA:\n  1. The total shows cents — MET — ok\nSCOPE: in-scope 1 files; out-of-scope: none\nFLOOR: clean\nPROOF: read it\n'"
[agents.auditor]
command = "printf 'SECURITY — VERDICT: PASS\nTOOL: none\nSCOPE: 1 files\nBLOCKING:\nREPORTED (non-blocking):\nPROOF: none\n'"
"#;

fn whole_run_vs_loop_sh() {
    let cfg: toml::Table = toml::from_str(ZERO).unwrap();
    let cmd = |r: &str| cfg["agents"][r]["command"].as_str().unwrap().to_string();
    let loop_sh = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/orchestrator/loop.sh");
    let (mut engine, mut shell) = (Vec::new(), Vec::new());
    for _ in 0..10 {
        let p = Project::new(ZERO);
        let t0 = Instant::now();
        let out = p.run_to_end();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        engine.push(t0.elapsed());
        let q = Project::new(ZERO);
        let t0 = Instant::now();
        let out = Command::new("bash")
            .arg(loop_sh)
            .arg(CONTRACT)
            .current_dir(&q.root)
            .env("LOOPWATCH", bin())
            .env("LW_DEV_CMD", cmd("developer"))
            .env("LW_VERIFY_CMD", cmd("verifier"))
            .env("LW_AUDIT_CMD", cmd("auditor"))
            .env("LOOPWATCH_USER", "bench")
            .env_remove("LOOPWATCH_PIPELINE")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        shell.push(t0.elapsed());
    }
    let (e, s) = (percentile(&mut engine, 50.0), percentile(&mut shell, 50.0));
    println!(
        "whole scripted run, zero-time agents: loopwatch run {} vs loop.sh {} (ratio {:.2})",
        ms(e),
        ms(s),
        e.as_secs_f64() / s.as_secs_f64()
    );
}

/// 50 descendants, 25 of them in sessions of their own; their pids in
/// `pids`, the agent's exit time (ns since the epoch) in `exited`.
const FIFTY: &str = r#"
for i in $(seq 25); do sleep 300 </dev/null >/dev/null 2>&1 & echo $! >> pids; done
for i in $(seq 25); do setsid sh -c 'echo $$ >> pids; exec sleep 300' </dev/null >/dev/null 2>&1 & done
while [ "$(wc -l < pids)" -lt 50 ]; do sleep 0.005; done
date +%s%N > exited
"#;

fn descendants_gone() {
    let mut gone = Vec::new();
    for _ in 0..30 {
        let dir = tempfile::tempdir().unwrap();
        let ended = process::Command::new("sh", dir.path())
            .args(["-c", FIFTY])
            .grace(Duration::from_secs(5))
            .supervisor(bin())
            .run()
            .unwrap();
        let done = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        let exited: u128 = std::fs::read_to_string(dir.path().join("exited"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let pids = std::fs::read_to_string(dir.path().join("pids")).unwrap();
        let alive = pids
            .lines()
            .filter_map(|l| l.trim().parse::<u32>().ok())
            .filter(|&p| loopwatch::process::tree::alive(p))
            .count();
        assert_eq!(alive, 0, "descendants outlived the dispatch");
        assert_eq!(ended.leftovers, 50, "{ended:?}");
        gone.push(Duration::from_nanos(
            u64::try_from(done.as_nanos().saturating_sub(exited)).unwrap_or(u64::MAX),
        ));
    }
    println!(
        "50 descendants (25 setsid) gone after the agent's exit: p50 {} p99 {} (n={})",
        ms(percentile(&mut gone, 50.0)),
        ms(percentile(&mut gone, 99.0)),
        gone.len()
    );
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    dispatch_overhead();
    descendants_gone();
    whole_run_vs_loop_sh();
    decision_and_waiting_cpu();
}
