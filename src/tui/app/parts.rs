//! The pieces of the app's state: tabs, the runs watched, journal
//! problems, the replay position and the logs read.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::history::Events;
use crate::model::State;

/// The six tabs of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tab {
    /// Contract criteria: GATE 0 evidence beside GATE 1 status.
    Criteria,
    /// Findings with verdicts, verify-by-test and triage.
    Findings,
    /// GATE 2 rows.
    Security,
    /// Human gates.
    Gates,
    /// Every event.
    Timeline,
    /// Gate outputs and repro logs.
    Logs,
}

impl Tab {
    /// Every tab, in order.
    pub const ALL: [Tab; 6] = [
        Tab::Criteria,
        Tab::Findings,
        Tab::Security,
        Tab::Gates,
        Tab::Timeline,
        Tab::Logs,
    ];

    /// The tab's title.
    pub fn title(self) -> &'static str {
        match self {
            Tab::Criteria => "Criteria",
            Tab::Findings => "Findings",
            Tab::Security => "Security",
            Tab::Gates => "Gates",
            Tab::Timeline => "Timeline",
            Tab::Logs => "Logs",
        }
    }

    /// Position in [`Tab::ALL`].
    pub fn index(self) -> usize {
        Tab::ALL.iter().position(|t| *t == self).unwrap_or(0)
    }
}

/// A problem reading the journal, shown as a banner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The file.
    pub file: PathBuf,
    /// 1-based line, when known.
    pub line: Option<u64>,
    /// 1-based column, when known.
    pub column: Option<u64>,
    /// What is wrong.
    pub message: String,
    /// Time (RFC 3339) of the last event read before the damage, when the
    /// journal could only be read in part.
    pub partial_since: Option<String>,
}

/// What the replay bar shows (the replay driver sets it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayBar {
    /// Position (1-based).
    pub event: u64,
    /// Number of events.
    pub total: u64,
    /// Time of the event at the position (RFC 3339).
    pub at: String,
    /// Iteration at the position.
    pub iteration: u32,
}

/// A log the event loop read for us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogView {
    /// Read: the bytes (a tail, for big files).
    Loaded(Vec<u8>),
    /// An agent CLI's log, read as its transcript (a tail, for big files).
    Transcript(Vec<crate::parse::agent_stream::Entry>),
    /// Asked for, not back yet.
    Loading,
    /// Could not be read.
    Failed(String),
}

/// One run being watched.
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// Its `.pipeline` folder.
    pub pipeline: PathBuf,
    /// The folded state shown (the newest, or the replay position's).
    pub state: State,
    /// The events up to the state shown: a handle on the feed's store, not a copy.
    pub events: Events,
    /// A journal problem to show.
    pub problem: Option<Problem>,
    /// Logs read, by path relative to `.pipeline/`.
    pub logs: BTreeMap<String, LogView>,
    /// The running agent's log being read again, if a read is on its way.
    pub(crate) following: Option<String>,
    /// Open gates already announced (bell, hook).
    pub(crate) announced: BTreeSet<String>,
    /// A state has arrived at least once.
    pub(crate) loaded: bool,
    /// Polled instead of watched, and why (shown as a marker in the list).
    pub polled: Option<String>,
    /// Opened by the person since it ended (in this session).
    pub(crate) looked_end: bool,
    /// The seq the person last saw it at, kept from an earlier session.
    pub(crate) looked_mark: Option<u64>,
}

/// Sort orders of the Findings tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindingSort {
    /// blocking, major, minor, nit, then the rest; by id within.
    Severity,
    /// By id.
    Id,
    /// VERIFIED, UNVERIFIABLE, FALSE.
    Verdict,
    /// By path then lines.
    Path,
}

impl FindingSort {
    /// The next order in the cycle.
    pub fn next(self) -> FindingSort {
        match self {
            FindingSort::Severity => FindingSort::Id,
            FindingSort::Id => FindingSort::Verdict,
            FindingSort::Verdict => FindingSort::Path,
            FindingSort::Path => FindingSort::Severity,
        }
    }

    /// Its name on screen.
    pub fn name(self) -> &'static str {
        match self {
            FindingSort::Severity => "severity",
            FindingSort::Id => "id",
            FindingSort::Verdict => "verdict",
            FindingSort::Path => "path",
        }
    }
}
