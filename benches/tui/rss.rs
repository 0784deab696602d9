//! Peak memory of the TUI with a 1 GiB repro log in the pipeline, after the
//! Logs tab has loaded it (keys typed through the pty).

use std::time::Duration;

use anyhow::Context;

use crate::fixture::{self, Worktree};
use crate::pty::{Session, status_bytes};
use crate::report::Figure;

/// Size of the log.
const LOG_BYTES: u64 = 1 << 30;
/// The RSS target.
const TARGET: u64 = 64 << 20;

/// Opens the log in the TUI and reads `VmHWM`.
pub fn run(bin: &str) -> anyhow::Result<Vec<Figure>> {
    let wt = Worktree::new()?;
    fixture::big_log_run(&wt, LOG_BYTES)?;
    let config_home = tempfile::tempdir().context("config home")?;
    let mut s = Session::watch(bin, wt.root(), config_home.path(), 160, 48)?;
    let deadline = Duration::from_secs(10);
    let step = Duration::from_millis(5);
    s.wait_for("2026-11-02-bench-0900", deadline, step)?;
    let at_start = status_bytes(s.pid(), "VmHWM:")?;
    s.send(b"6")?;
    s.wait_for("verify-1.test.log", deadline, step)?;
    s.send(b"\r")?;
    s.wait_for("test result: FAILED", deadline, step)?;
    // A few ticks with the log on screen.
    std::thread::sleep(Duration::from_millis(1500));
    let peak = status_bytes(s.pid(), "VmHWM:")?;
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    println!(
        "memory: 1 GiB verify-1.test.log opened in the Logs tab: VmHWM {:.1} MiB (before opening it: {:.1} MiB)",
        mib(peak),
        mib(at_start)
    );
    Ok(vec![Figure::new(
        "peak RSS of the TUI with a 1 GiB log open",
        format!("{:.1} MiB", mib(peak)),
        format!("< {} MiB", TARGET >> 20),
        peak < TARGET,
    )])
}
