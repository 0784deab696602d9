//! [`Tone`]: what a piece of text means (good, bad, waiting on a person...).
//! Rows say it; the theme turns it into a style.

/// What a piece of text means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Plain text.
    Normal,
    /// Passed, met, verified.
    Good,
    /// Failed, blocking.
    Bad,
    /// Needs a look: unverifiable, abandoned, degraded, stale.
    Warn,
    /// Waiting on a person.
    Human,
    /// Secondary text.
    Muted,
    /// Headings, keys.
    Accent,
}
