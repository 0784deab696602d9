//! Expiry of a human gate: the rule a request carries (`expires`) and the
//! `human.expired` event recorded when it passes with nobody deciding.
//!
//! An expiry is never a decision: it has no person, no reason typed by
//! one, and it is shown apart from decisions everywhere.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::types::{Decision, Extra, HumanGateKind};

/// What applies when a gate is still open after a while.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ExpiryRule {
    /// How long after the request, as written (`90s`, `30m`, `1h30m`, `2d`).
    pub after: String,
    /// The option that applies (one of the request's options).
    pub action: Decision,
}

/// Why an expiry rule is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpiryError {
    /// Not a duration (negative ones included).
    #[error("'{0}' is not a duration (expected e.g. \"90s\", \"30m\", \"1h30m\", \"2d\")")]
    NotADuration(String),
    /// Zero: the gate would expire before anyone could see it.
    #[error("'{0}' is zero: an expiry must be longer than 0")]
    Zero(String),
    /// The action is not an option of this kind of gate.
    #[error("{action} is not an option of a {kind} gate: its options are {options}")]
    NotAnOption {
        /// The action asked for.
        action: Decision,
        /// The kind of gate.
        kind: HumanGateKind,
        /// Its options, each with what it does, `; ` between them.
        options: String,
    },
}

impl ExpiryRule {
    /// A rule for a gate of `kind`: `after` must be a positive duration and
    /// `action` one of the kind's options.
    pub fn new(after: &str, action: Decision, kind: HumanGateKind) -> Result<Self, ExpiryError> {
        let secs = parse_secs(after)?;
        if secs == 0 {
            return Err(ExpiryError::Zero(after.trim().to_string()));
        }
        if !kind.options().contains(&action) {
            return Err(ExpiryError::NotAnOption {
                action,
                kind,
                options: kind.option_lines(None).join("; "),
            });
        }
        Ok(ExpiryRule {
            after: after.trim().to_string(),
            action,
        })
    }

    /// The delay in seconds; `None` for a rule read from a journal whose
    /// `after` is not a positive duration (such a gate never expires).
    pub fn seconds(&self) -> Option<u64> {
        parse_secs(&self.after).ok().filter(|s| *s > 0)
    }
}

/// Parses a duration as the config and the command line write it: `90s`,
/// `30m`, `1h30m`, `2d` or a bare number of seconds (0 allowed here).
pub fn parse_duration(s: &str) -> Result<std::time::Duration, ExpiryError> {
    parse_secs(s).map(std::time::Duration::from_secs)
}

/// Parses `90s`, `30m`, `1h30m`, `2d` or a bare number of seconds.
fn parse_secs(s: &str) -> Result<u64, ExpiryError> {
    let bad = || ExpiryError::NotADuration(s.trim().to_string());
    let t = s.trim();
    if t.is_empty() {
        return Err(bad());
    }
    if let Ok(n) = t.parse::<u64>() {
        return Ok(n);
    }
    let mut total = 0u64;
    let mut num = String::new();
    for c in t.chars() {
        if c.is_ascii_digit() {
            num.push(c);
            continue;
        }
        let n: u64 = num.parse().map_err(|_| bad())?;
        num.clear();
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => return Err(bad()),
        };
        total = n
            .checked_mul(unit)
            .and_then(|x| total.checked_add(x))
            .ok_or_else(bad)?;
    }
    if num.is_empty() {
        Ok(total)
    } else {
        Err(bad())
    }
}

/// Payload of `human.expired`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HumanExpired {
    /// The gate that expired.
    pub id: String,
    /// The request's `expires.after`.
    pub after: String,
    /// The option that applies.
    pub action: Decision,
    /// Unknown fields, kept.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_zero_negative_and_options() {
        let k = HumanGateKind::OutOfScope;
        let r = ExpiryRule::new("1h30m", Decision::Deny, k).unwrap();
        assert_eq!(r.seconds(), Some(5400));
        assert_eq!(
            ExpiryRule::new("0", Decision::Deny, k),
            Err(ExpiryError::Zero("0".into()))
        );
        assert_eq!(
            ExpiryRule::new("0m", Decision::Deny, k),
            Err(ExpiryError::Zero("0m".into()))
        );
        assert!(matches!(
            ExpiryRule::new("-5m", Decision::Deny, k),
            Err(ExpiryError::NotADuration(_))
        ));
        assert!(matches!(
            ExpiryRule::new("5x", Decision::Deny, k),
            Err(ExpiryError::NotADuration(_))
        ));
        assert!(matches!(
            ExpiryRule::new("30m", Decision::Lift, k),
            Err(ExpiryError::NotAnOption { .. })
        ));
        let garbled = ExpiryRule {
            after: "soon".into(),
            action: Decision::Deny,
        };
        assert_eq!(garbled.seconds(), None);
    }
}
