//! What the rows read of the app: the run on screen (its state, events and
//! logs), the runs watched, the tab, the filter, the sort, the iteration
//! shown, and the lists computed with them. The rows never see the app
//! itself, so the app may compute them without a loop between the two.

use jiff::Timestamp;

use super::{CriterionLine, LogEntry};
use crate::model::event::GateFinished;
use crate::model::{GateName, Iteration, State};
use crate::tui::app::parts::{FindingSort, Run, Tab};

/// The app as the rows read it.
pub trait Query {
    /// The state of the run on screen.
    fn state(&self) -> &State;
    /// The run on screen (its events and logs).
    fn run(&self) -> &Run;
    /// Every run watched, in the order they were given.
    fn runs(&self) -> &[Run];
    /// The tab on screen.
    fn tab(&self) -> Tab;
    /// The filter typed, empty when none.
    fn filter(&self) -> &str;
    /// The Findings tab's order.
    fn sort(&self) -> FindingSort;
    /// The iteration the per-iteration tabs show.
    fn shown_iteration(&self) -> u32;
    /// The Criteria tab's lines.
    fn criteria(&self) -> &[CriterionLine];
    /// The Logs tab's entries.
    fn log_entries(&self) -> &[LogEntry];
    /// The rounds each finding of the shown iteration was seen in.
    fn finding_rounds(&self) -> &[Vec<u32>];
    /// The folders searched for runs (the run list shows paths from them).
    fn fleet_roots(&self) -> &[std::path::PathBuf];
    /// Now, by the app's clock.
    fn now(&self) -> Timestamp;
}

/// Seconds from `at` to `now` (0 when `at` is in the future; `None` when
/// it is not a time).
pub fn age_secs(now: Timestamp, at: &str) -> Option<u64> {
    let t = at.parse::<Timestamp>().ok()?;
    let secs = now.as_second().saturating_sub(t.as_second());
    Some(u64::try_from(secs).unwrap_or(0))
}

/// The last round of a gate in the iteration shown.
pub fn round(app: &dyn Query, gate: GateName) -> Option<&GateFinished> {
    shown(app).and_then(|it| it.last_gate(gate))
}

/// The iteration shown.
pub fn shown(app: &dyn Query) -> Option<&Iteration> {
    app.state().iteration(app.shown_iteration())
}
