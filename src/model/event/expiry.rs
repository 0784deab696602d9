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

/// Parses a duration of the config and the command line in whole seconds
/// ([`crate::util::parse_seconds`]; 0 allowed here).
pub fn parse_duration(s: &str) -> Result<std::time::Duration, ExpiryError> {
    parse_secs(s).map(std::time::Duration::from_secs)
}

fn parse_secs(s: &str) -> Result<u64, ExpiryError> {
    crate::util::parse_seconds(s).map_err(|_| ExpiryError::NotADuration(s.trim().to_string()))
}

/// What is wrong with an `[expiry.<kind>]` table of a config file, by the
/// part at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpiryTableError {
    /// `<kind>` is not a kind of human gate.
    #[error("{0}")]
    Kind(String),
    /// `after` is not a positive duration.
    #[error("{0}")]
    After(ExpiryError),
    /// `action` is not a decision, or not an option of the kind.
    #[error("{0}")]
    Action(String),
}

/// Reads one `[expiry.<kind>]` table, the one reader of the TUI's config
/// file and of `loopwatch.toml`: the kind it names and its rule.
pub fn expiry_table(
    kind: &str,
    after: &str,
    action: &str,
) -> Result<(HumanGateKind, ExpiryRule), ExpiryTableError> {
    let k: HumanGateKind = kind.parse().map_err(ExpiryTableError::Kind)?;
    let action: Decision = action.parse().map_err(ExpiryTableError::Action)?;
    let rule = ExpiryRule::new(after, action, k).map_err(|e| match e {
        ExpiryError::NotAnOption { .. } => ExpiryTableError::Action(e.to_string()),
        _ => ExpiryTableError::After(e),
    })?;
    Ok((k, rule))
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
