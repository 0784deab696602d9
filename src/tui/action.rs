//! What a key asks the app to do: [`Action`], pure data.
//!
//! The keymap file names actions by their kebab-case name, and the help
//! overlay is generated from [`Action::help`], so an action, its name and its
//! help text can never drift apart. An action never writes anything: the app
//! turns it into state changes and, at most, [`super::Effect`]s.

use serde::{Deserialize, Serialize};

/// Every action a key can be bound to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// Show the Criteria tab.
    TabCriteria,
    /// Show the Findings tab.
    TabFindings,
    /// Show the Security tab.
    TabSecurity,
    /// Show the Gates tab.
    TabGates,
    /// Show the Timeline tab.
    TabTimeline,
    /// Show the Logs tab.
    TabLogs,
    /// Next tab.
    NextTab,
    /// Previous tab.
    PrevTab,
    /// Select the row below.
    Down,
    /// Select the row above.
    Up,
    /// Select the first row.
    Top,
    /// Select the last row.
    Bottom,
    /// One page down.
    PageDown,
    /// One page up.
    PageUp,
    /// Open the selected row (decision dialog, log, run).
    Open,
    /// Close an overlay, clear the filter, or go back to the run list.
    Back,
    /// Start typing a filter.
    Filter,
    /// Jump to the next open human gate.
    NextHumanGate,
    /// Show the previous iteration.
    PrevIteration,
    /// Show the next iteration.
    NextIteration,
    /// Replay: one event back.
    ReplayBack,
    /// Replay: one event forward.
    ReplayForward,
    /// Replay: the first event.
    ReplayFirst,
    /// Replay: back to live.
    ReplayLive,
    /// Show what changed since the previous iteration.
    Diff,
    /// Copy the selected row to the clipboard.
    Copy,
    /// Cycle the sort order (Findings tab).
    Sort,
    /// Show or hide the help overlay.
    Help,
    /// Quit.
    Quit,
}

impl Action {
    /// Every action, in the order the help overlay lists them.
    pub const ALL: [Action; 29] = [
        Action::TabCriteria,
        Action::TabFindings,
        Action::TabSecurity,
        Action::TabGates,
        Action::TabTimeline,
        Action::TabLogs,
        Action::NextTab,
        Action::PrevTab,
        Action::Down,
        Action::Up,
        Action::Top,
        Action::Bottom,
        Action::PageDown,
        Action::PageUp,
        Action::Open,
        Action::Back,
        Action::Filter,
        Action::NextHumanGate,
        Action::PrevIteration,
        Action::NextIteration,
        Action::ReplayBack,
        Action::ReplayForward,
        Action::ReplayFirst,
        Action::ReplayLive,
        Action::Diff,
        Action::Copy,
        Action::Sort,
        Action::Help,
        Action::Quit,
    ];

    /// The name used in the config file (`[keys]`).
    pub fn name(self) -> &'static str {
        match self {
            Action::TabCriteria => "tab-criteria",
            Action::TabFindings => "tab-findings",
            Action::TabSecurity => "tab-security",
            Action::TabGates => "tab-gates",
            Action::TabTimeline => "tab-timeline",
            Action::TabLogs => "tab-logs",
            Action::NextTab => "next-tab",
            Action::PrevTab => "prev-tab",
            Action::Down => "down",
            Action::Up => "up",
            Action::Top => "top",
            Action::Bottom => "bottom",
            Action::PageDown => "page-down",
            Action::PageUp => "page-up",
            Action::Open => "open",
            Action::Back => "back",
            Action::Filter => "filter",
            Action::NextHumanGate => "next-human-gate",
            Action::PrevIteration => "prev-iteration",
            Action::NextIteration => "next-iteration",
            Action::ReplayBack => "replay-back",
            Action::ReplayForward => "replay-forward",
            Action::ReplayFirst => "replay-first",
            Action::ReplayLive => "replay-live",
            Action::Diff => "diff",
            Action::Copy => "copy",
            Action::Sort => "sort",
            Action::Help => "help",
            Action::Quit => "quit",
        }
    }

    /// One line of help, as shown in the help overlay.
    pub fn help(self) -> &'static str {
        match self {
            Action::TabCriteria => "Criteria tab: GATE 0 evidence beside GATE 1 status",
            Action::TabFindings => "Findings tab: verdicts, verify-by-test, triage",
            Action::TabSecurity => "Security tab: BLOCKING and REPORTED rows",
            Action::TabGates => "Gates tab: human gates waiting and decided",
            Action::TabTimeline => "Timeline tab: every event, newest last",
            Action::TabLogs => "Logs tab: gate outputs and repro test logs",
            Action::NextTab => "next tab",
            Action::PrevTab => "previous tab",
            Action::Down => "move down",
            Action::Up => "move up",
            Action::Top => "first row",
            Action::Bottom => "last row",
            Action::PageDown => "page down",
            Action::PageUp => "page up",
            Action::Open => "open: decide a human gate, load a log, open a run",
            Action::Back => "close, clear the filter, back to the run list",
            Action::Filter => "filter rows by text",
            Action::NextHumanGate => "next human gate waiting on you",
            Action::PrevIteration => "previous iteration",
            Action::NextIteration => "next iteration",
            Action::ReplayBack => "replay: one event back",
            Action::ReplayForward => "replay: one event forward",
            Action::ReplayFirst => "replay: first event",
            Action::ReplayLive => "replay: back to live",
            Action::Diff => "what changed since the previous iteration",
            Action::Copy => "copy the selected row (OSC 52)",
            Action::Sort => "cycle the sort order (Findings)",
            Action::Help => "this help",
            Action::Quit => "quit",
        }
    }

    /// The action of a config-file name.
    pub fn from_name(name: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_serde_and_round_trip() {
        for a in Action::ALL {
            let json = serde_json::to_string(&a).expect("an enum of unit variants serialises");
            assert_eq!(json, format!("\"{}\"", a.name()));
            assert_eq!(Action::from_name(a.name()), Some(a));
            let back: Action = serde_json::from_str(&json).expect("own name parses");
            assert_eq!(back, a);
        }
        assert_eq!(Action::from_name("launch-rockets"), None);
    }
}
