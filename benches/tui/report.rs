//! Figures beside their targets, with the shared statistics they need.

use std::time::Duration;

pub use crate::common::{load_average, percentile};

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
        Figure {
            name: name.into(),
            value: format!("{} ms", ms(value)),
            target: format!("< {} ms", ms(limit)),
            pass: value < limit,
        }
    }

    /// Any figure with its own formatting.
    pub fn new(name: &str, value: String, target: String, pass: bool) -> Figure {
        Figure {
            name: name.into(),
            value,
            target,
            pass,
        }
    }

    /// The figure as one aligned line.
    pub fn line(&self) -> String {
        format!(
            "{:<50} {:>14}   target {:<22} {}",
            self.name,
            self.value,
            self.target,
            if self.pass { "PASS" } else { "MISS" }
        )
    }
}

/// Milliseconds with two decimals.
pub fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}
