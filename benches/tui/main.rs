//! TUI benchmark: time to first frame on a long run, change-to-update
//! latency against the bare inotify floor, idle CPU and peak memory of the
//! real binary on a pty, and the one store seen from outside (memory of
//! `watch` and `replay`, replay steps). Prints each figure beside its target with PASS or
//! MISS; asserts nothing about time.
//!
//! `cargo bench --features pty-bench --bench tui` runs everything (about 75 s: the idle window
//! is 60 s). `-- --quick` (or `LOOPWATCH_BENCH_QUICK=1`) shortens the idle
//! window to 5 s and the appends to 100 for a smoke run; any other word
//! (`frame`, `latency`, `idle`, `memory`, `store`) picks sections; `store`
//! is the peak memory of `watch` and `replay` on a 100k-event journal and
//! the time of 150 replay steps.

#[path = "../common/mod.rs"]
mod common;
mod fixture;
mod frame;
mod idle;
mod latency;
mod pty;
mod report;
mod rss;
mod store;

use std::process::ExitCode;
use std::time::Duration;

use report::Figure;

/// The sections, by the word that picks them.
const SECTIONS: [&str; 5] = ["frame", "latency", "idle", "memory", "store"];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick")
        || std::env::var_os("LOOPWATCH_BENCH_QUICK").is_some_and(|v| v != "0");
    let picked: Vec<&str> = SECTIONS
        .iter()
        .copied()
        .filter(|s| args.iter().any(|a| a == s))
        .collect();
    let wanted = |s: &str| picked.is_empty() || picked.contains(&s);
    let bin = env!("CARGO_BIN_EXE_loopwatch");
    println!(
        "loopwatch TUI benchmark{} (load average {} at start)\n",
        if quick { ", quick" } else { "" },
        report::load_average()
    );

    let mut figures: Vec<Figure> = Vec::new();
    let mut failed = false;
    let mut section = |name: &str, f: &dyn Fn() -> anyhow::Result<Vec<Figure>>| {
        if !wanted(name) {
            return;
        }
        match f() {
            Ok(fs) => figures.extend(fs),
            Err(e) => {
                eprintln!("{name}: could not measure: {e:#}");
                failed = true;
            }
        }
        println!();
    };
    section("frame", &|| frame::run(bin, if quick { 3 } else { 9 }));
    section("latency", &|| {
        latency::run(bin, if quick { 100 } else { 500 })
    });
    section("idle", &|| {
        idle::run(bin, Duration::from_secs(if quick { 5 } else { 60 }))
    });
    section("memory", &|| rss::run(bin));
    section("store", &|| store::run(bin));

    println!(
        "summary (load average {} at the end)",
        report::load_average()
    );
    for f in &figures {
        println!("  {}", f.line());
    }
    // A missed target is a figure, not a failure; a section that could not run is.
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
