//! What a key asks the app to do: [`Action`], pure data.
//!
//! Everything about an action is derived from its one declaration: the
//! list of all actions (in the order the help overlay lists them), its
//! kebab-case name in the keymap file, and its help text, so an action, its
//! name and its help can never drift apart. Its default keys are those of
//! `assets/config/default.toml`. An action never writes anything: the app
//! turns it into state changes and, at most, [`super::Effect`]s.

use serde::{Deserialize, Serialize};
use strum::{EnumMessage, EnumString, IntoStaticStr, VariantArray};

/// Every action a key can be bound to.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    IntoStaticStr,
    EnumString,
    EnumMessage,
    VariantArray,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Action {
    /// Show the Criteria tab.
    #[strum(message = "Criteria tab: GATE 0 evidence beside GATE 1 status")]
    TabCriteria,
    /// Show the Findings tab.
    #[strum(message = "Findings tab: verdicts, verify-by-test, triage")]
    TabFindings,
    /// Show the Security tab.
    #[strum(message = "Security tab: BLOCKING and REPORTED rows")]
    TabSecurity,
    /// Show the Gates tab.
    #[strum(message = "Gates tab: human gates waiting and decided")]
    TabGates,
    /// Show the Timeline tab.
    #[strum(message = "Timeline tab: every event, newest last")]
    TabTimeline,
    /// Show the Logs tab.
    #[strum(message = "Logs tab: gate outputs and repro test logs")]
    TabLogs,
    /// Next tab.
    #[strum(message = "next tab")]
    NextTab,
    /// Previous tab.
    #[strum(message = "previous tab")]
    PrevTab,
    /// Select the row below.
    #[strum(message = "move down")]
    Down,
    /// Select the row above.
    #[strum(message = "move up")]
    Up,
    /// Select the first row.
    #[strum(message = "first row")]
    Top,
    /// Select the last row.
    #[strum(message = "last row")]
    Bottom,
    /// One page down.
    #[strum(message = "page down")]
    PageDown,
    /// One page up.
    #[strum(message = "page up")]
    PageUp,
    /// Open the selected row (decision dialog, log, run).
    #[strum(message = "open: decide a human gate, load a log, open a run")]
    Open,
    /// Close an overlay, clear the filter, or go back to the run list.
    #[strum(message = "close, clear the filter, back to the run list")]
    Back,
    /// Start typing a filter.
    #[strum(message = "filter rows by text")]
    Filter,
    /// Jump to the next open human gate.
    #[strum(message = "next human gate waiting on you")]
    NextHumanGate,
    /// Show the previous iteration.
    #[strum(message = "previous iteration")]
    PrevIteration,
    /// Show the next iteration.
    #[strum(message = "next iteration")]
    NextIteration,
    /// Replay: one event back.
    #[strum(message = "replay: one event back")]
    ReplayBack,
    /// Replay: one event forward.
    #[strum(message = "replay: one event forward")]
    ReplayForward,
    /// Replay: the first event.
    #[strum(message = "replay: first event")]
    ReplayFirst,
    /// Replay: back to live.
    #[strum(message = "replay: back to live")]
    ReplayLive,
    /// Show what changed since the previous iteration.
    #[strum(message = "what changed since the previous iteration")]
    Diff,
    /// Show the selected log whole in `$PAGER` (an agent's as a transcript).
    #[strum(message = "the selected log, whole, in $PAGER")]
    OpenInPager,
    /// Copy the selected row to the clipboard, secrets scrubbed.
    #[strum(message = "copy the selected row (OSC 52)")]
    Copy,
    /// Cycle the sort order (Findings tab).
    #[strum(message = "cycle the sort order (Findings)")]
    Sort,
    /// Show or hide the help overlay.
    #[strum(message = "this help")]
    Help,
    /// Quit.
    #[strum(message = "quit")]
    Quit,
}

impl Action {
    /// Every action, in the order the help overlay lists them.
    pub const ALL: &'static [Action] = Action::VARIANTS;

    /// The name used in the config file (`[keys]`).
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// One line of help, as shown in the help overlay.
    pub fn help(self) -> &'static str {
        // Every variant carries a message (checked by the tests).
        self.get_message().unwrap_or_default()
    }

    /// The action of a config-file name.
    pub fn from_name(name: &str) -> Option<Action> {
        name.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_serde_and_round_trip() {
        for &a in Action::ALL {
            assert!(!a.help().is_empty(), "{a:?} has no help text");
            let json = serde_json::to_string(&a).expect("an enum of unit variants serialises");
            assert_eq!(json, format!("\"{}\"", a.name()));
            assert_eq!(Action::from_name(a.name()), Some(a));
            let back: Action = serde_json::from_str(&json).expect("own name parses");
            assert_eq!(back, a);
        }
        assert_eq!(Action::from_name("launch-rockets"), None);
    }
}
