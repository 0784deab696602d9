//! The one duration grammar of the config files and the command line.
//!
//! Accepted: a bare number of seconds (`90`); numbers each followed by a
//! unit `s`, `m`, `h` or `d`, written together (`90s`, `1h30m`, `2d`); and
//! jiff's friendly format (`500ms`, `1h 30m`, `2 hours`) or ISO 8601
//! (`PT1H30M`). Where both read a text they agree on its meaning.

use std::time::Duration;

/// Why a text is not a duration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurationError {
    /// Not in the grammar.
    NotADuration,
    /// In the grammar, but below zero (`-5s`, `5s ago`).
    Negative,
    /// Not a whole number of seconds where only those are taken.
    Fraction,
}

/// Parses a duration of the grammar above (0 allowed: callers that need
/// more say so); sub-second values are kept.
pub fn parse_duration(s: &str) -> Result<Duration, DurationError> {
    let t = s.trim();
    if let Some(secs) = short_secs(t) {
        return Ok(Duration::from_secs(secs));
    }
    let d: jiff::SignedDuration = t.parse().map_err(|_| DurationError::NotADuration)?;
    Duration::try_from(d).map_err(|_| DurationError::Negative)
}

/// [`parse_duration`] for settings kept in whole seconds: a value with a
/// part of a second is refused.
pub fn parse_seconds(s: &str) -> Result<u64, DurationError> {
    let d = parse_duration(s)?;
    if d.subsec_nanos() == 0 {
        Ok(d.as_secs())
    } else {
        Err(DurationError::Fraction)
    }
}

/// `90`, `90s`, `30m`, `1h30m`, `2d`: `None` when `t` is not written so
/// (or overflows).
fn short_secs(t: &str) -> Option<u64> {
    if t.is_empty() {
        return None;
    }
    if let Ok(n) = t.parse::<u64>() {
        return Some(n);
    }
    let mut total = 0u64;
    let mut num = String::new();
    for c in t.chars() {
        if c.is_ascii_digit() {
            num.push(c);
            continue;
        }
        let n: u64 = num.parse().ok()?;
        num.clear();
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => return None,
        };
        total = total.checked_add(n.checked_mul(unit)?)?;
    }
    num.is_empty().then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_spellings_and_their_limits() {
        let secs = |n| Ok(Duration::from_secs(n));
        for (text, want) in [
            ("90", secs(90)),
            (" 10 ", secs(10)),
            ("0", secs(0)),
            ("0m", secs(0)),
            ("90s", secs(90)),
            ("10m", secs(600)),
            ("1h30m", secs(5400)),
            ("1d2h", secs(93_600)),
            ("2d", secs(172_800)),
            ("1h 30m", secs(5400)),
            ("2 hours", secs(7200)),
            ("PT1H30M", secs(5400)),
            ("500ms", Ok(Duration::from_millis(500))),
        ] {
            assert_eq!(parse_duration(text), want, "{text:?}");
        }
        for bad in ["", "m", "10x", "5m3", "soon", "5 parsecs", "1h30"] {
            assert_eq!(
                parse_duration(bad),
                Err(DurationError::NotADuration),
                "{bad:?}"
            );
        }
        assert_eq!(parse_duration("-5s"), Err(DurationError::Negative));
        assert_eq!(parse_duration("-5m"), Err(DurationError::Negative));
        assert!(parse_duration("99999999999999999999d").is_err());
        assert_eq!(parse_seconds("1h 30m"), Ok(5400));
        assert_eq!(parse_seconds("500ms"), Err(DurationError::Fraction));
        assert_eq!(parse_seconds("1s 500ms"), Err(DurationError::Fraction));
        assert_eq!(parse_seconds("2s 1000ms"), Ok(3));
    }
}
