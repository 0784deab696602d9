//! CPU used by the TUI sitting on a quiet pipeline: user + system time from
//! `/proc/<pid>/stat` before and after a window in which nothing happens.

use std::time::Duration;

use anyhow::Context;

use crate::fixture::{self, Worktree};
use crate::pty::{Session, cpu_time};
use crate::report::Figure;

/// Measures over `window` and scales to one minute.
pub fn run(bin: &str, window: Duration) -> anyhow::Result<Vec<Figure>> {
    let wt = Worktree::new()?;
    wt.write_journal(&fixture::quiet_run())?;
    let config_home = tempfile::tempdir().context("config home")?;
    let s = Session::watch(bin, wt.root(), config_home.path(), 120, 36)?;
    s.wait_for(
        "waiting on you",
        Duration::from_secs(10),
        Duration::from_millis(5),
    )?;
    // Let start-up work finish before the window opens.
    std::thread::sleep(Duration::from_millis(500));
    let before = cpu_time(s.pid())?;
    std::thread::sleep(window);
    let after = cpu_time(s.pid())?;
    let used = after.saturating_sub(before);
    let per_minute = used.as_secs_f64() * 60.0 / window.as_secs_f64();
    println!(
        "idle: TUI on a quiet pipeline for {:.0} s: {:.3} s of CPU ({per_minute:.3} s per minute; /proc counts in clock ticks)",
        window.as_secs_f64(),
        used.as_secs_f64()
    );
    Ok(vec![Figure::new(
        "idle CPU of the TUI, per minute",
        format!("{per_minute:.3} s"),
        "< 0.1 s".into(),
        per_minute < 0.1,
    )])
}
