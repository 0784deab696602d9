//! `GATES_TIMEOUT`: how long one check may run.
//!
//! Accepts what the reference's `timeout` utility accepts for a duration in
//! plain notation: integer or decimal seconds (`120`, `1.5`, `.5`, `2.`),
//! with an optional `s`, `m`, `h` or `d` suffix; `0` disables the limit.
//! The text is kept as given, because reports print it back verbatim
//! (`timeout 2ms` for `2m`, as the reference does).

use std::time::Duration;

/// The default when `GATES_TIMEOUT` is unset or empty.
pub const DEFAULT_TIMEOUT: &str = "120";

/// A parsed timeout: its text as given and the duration it means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timeout {
    label: String,
    limit: Option<Duration>,
}

/// A `GATES_TIMEOUT` value that is not a duration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("usage: GATES_TIMEOUT must be seconds with an optional s, m, h or d suffix, got '{value}'")]
pub struct TimeoutError {
    /// The value as given.
    pub value: String,
}

impl Timeout {
    /// Parses a value (see the module documentation).
    pub fn parse(value: &str) -> Result<Self, TimeoutError> {
        let err = || TimeoutError {
            value: value.to_owned(),
        };
        let (number, unit) = match value.char_indices().last() {
            Some((i, c @ ('s' | 'm' | 'h' | 'd'))) => (&value[..i], c),
            _ => (value, 's'),
        };
        let (int, frac) = number.split_once('.').unwrap_or((number, ""));
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if int.len() + frac.len() == 0 || !digits(int) || !digits(frac) {
            return Err(err());
        }
        let seconds: f64 = number.parse().map_err(|_| err())?;
        let scale = match unit {
            'm' => 60.0,
            'h' => 3600.0,
            'd' => 86400.0,
            _ => 1.0,
        };
        let total = seconds * scale;
        let limit =
            (total > 0.0).then(|| Duration::try_from_secs_f64(total).unwrap_or(Duration::MAX));
        Ok(Timeout {
            label: value.to_owned(),
            limit,
        })
    }

    /// Reads `GATES_TIMEOUT` from the environment (unset or empty: 120).
    pub fn from_env() -> Result<Self, TimeoutError> {
        match std::env::var("GATES_TIMEOUT") {
            Ok(v) if !v.is_empty() => Self::parse(&v),
            Ok(_) => Self::parse(DEFAULT_TIMEOUT),
            Err(std::env::VarError::NotPresent) => Self::parse(DEFAULT_TIMEOUT),
            Err(std::env::VarError::NotUnicode(v)) => Err(TimeoutError {
                value: v.to_string_lossy().into_owned(),
            }),
        }
    }

    /// The value as given (printed in reports and evidence).
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The limit, or `None` when the value was zero (no limit).
    pub fn limit(&self) -> Option<Duration> {
        self.limit
    }
}

impl Default for Timeout {
    fn default() -> Self {
        Timeout {
            label: DEFAULT_TIMEOUT.to_owned(),
            limit: Some(Duration::from_secs(120)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit(v: &str) -> Option<Duration> {
        Timeout::parse(v).unwrap().limit()
    }

    #[test]
    fn accepts_plain_durations() {
        assert_eq!(limit("120"), Some(Duration::from_secs(120)));
        assert_eq!(limit("1.5"), Some(Duration::from_millis(1500)));
        assert_eq!(limit(".5s"), Some(Duration::from_millis(500)));
        assert_eq!(limit("2."), Some(Duration::from_secs(2)));
        assert_eq!(limit("2m"), Some(Duration::from_secs(120)));
        assert_eq!(limit("1h"), Some(Duration::from_secs(3600)));
        assert_eq!(limit("1d"), Some(Duration::from_secs(86400)));
        assert_eq!(limit("0"), None);
        assert_eq!(Timeout::parse("2m").unwrap().label(), "2m");
    }

    #[test]
    fn rejects_everything_else() {
        for bad in [
            "", "s", ".", "-1", "+1", "1e3", "1 ", " 1", "1ms", "abc", "1.2.3", "0x10", "inf",
        ] {
            assert_eq!(
                Timeout::parse(bad),
                Err(TimeoutError { value: bad.into() }),
                "{bad:?}"
            );
        }
    }
}
