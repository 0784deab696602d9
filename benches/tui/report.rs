//! Figures beside their targets, and the small statistics they need.

use std::time::Duration;

/// One measured figure and its target.
pub struct Figure {
    /// What was measured.
    pub name: String,
    /// The value, formatted.
    pub value: String,
    /// The target, formatted.
    pub target: String,
    /// Whether the target was met.
    pub pass: bool,
}

impl Figure {
    /// A duration that must stay under `limit`.
    pub fn under(name: &str, value: Duration, limit: Duration) -> Figure {
        Figure { name: name.into(), value: format!("{} ms", ms(value)), target: format!("< {} ms", ms(limit)), pass: value < limit }
    }

    /// Any figure with its own formatting.
    pub fn new(name: &str, value: String, target: String, pass: bool) -> Figure {
        Figure { name: name.into(), value, target, pass }
    }

    /// The figure as one aligned line.
    pub fn line(&self) -> String {
        format!("{:<50} {:>14}   target {:<22} {}", self.name, self.value, self.target, if self.pass { "PASS" } else { "MISS" })
    }
}

/// Milliseconds with two decimals.
pub fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}

/// The `p`th percentile (nearest rank) of `v`, which it sorts; zero when empty.
pub fn percentile(v: &mut [Duration], p: f64) -> Duration {
    if v.is_empty() {
        return Duration::ZERO;
    }
    v.sort();
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

/// The 1-minute load average, to judge how quiet the machine was.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}
