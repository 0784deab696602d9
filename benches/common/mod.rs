//! What the benchmarks share: timing a closure over several runs, the
//! percentiles of the times (nearest rank), milliseconds as printed, and
//! the load average that says how quiet the machine was.

// Each benchmark uses its own subset.
#![allow(dead_code)]

use std::time::{Duration, Instant};

/// Milliseconds with three decimals and the unit (`12.345 ms`).
pub fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

/// The `p`th percentile (0 to 100, nearest rank) of `v`, which it sorts;
/// zero when `v` is empty.
pub fn percentile(v: &mut [Duration], p: f64) -> Duration {
    if v.is_empty() {
        return Duration::ZERO;
    }
    v.sort();
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

/// The times of `runs` runs of `f`, after one run that warms the caches.
pub fn times(runs: usize, mut f: impl FnMut()) -> Vec<Duration> {
    f();
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect()
}

/// The median time of `runs` runs of `f` (after a warm-up run).
pub fn median(runs: usize, f: impl FnMut()) -> Duration {
    percentile(&mut times(runs, f), 50.0)
}

/// The 1-minute load average (Linux), or `?`.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// The median, 99th percentile and maximum of `v` (which it sorts).
pub fn p50_p99_max(v: &mut [Duration]) -> (Duration, Duration, Duration) {
    (
        percentile(v, 50.0),
        percentile(v, 99.0),
        percentile(v, 100.0),
    )
}
