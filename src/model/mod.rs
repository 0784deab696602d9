//! The domain: runs, iterations, gates and rounds, verdicts, findings,
//! verify-by-test results, human gates and decisions, and the events of the
//! journal. [`fold()`] turns a sequence of events into the [`State`] of
//! `state.json`; [`rules`] says what the loop does next.
//!
//! Never does I/O and never imports a terminal crate: every headless command
//! and every other program can use it as it is.

pub mod budget;
pub mod event;
pub mod finding;
pub mod fold;
pub mod kinds;
pub mod ledger;
pub mod rules;
pub mod state;
pub mod triage;
pub mod types;

pub use event::{Event, EventBody};
pub use finding::{Bucket, severity_rank};
pub use fold::fold;
pub use kinds::{Choice, Effect};
pub use rules::Next;
pub use state::{GateStatus, HumanGate, Iteration, State};
pub use types::*;

/// Journals for the unit tests, written line by line without `v`, `seq`
/// and `at` (each line a JSON object: `{"type": …, …}`).
#[cfg(test)]
pub(crate) mod test_journal {
    use super::{Event, State, fold};

    /// The events of `lines`, their seq counted from 1, all at one time.
    pub fn events(lines: &[impl AsRef<str>]) -> Vec<Event> {
        lines
            .iter()
            .enumerate()
            .map(|(i, body)| {
                let body = body.as_ref();
                let line = format!(
                    r#"{{"v":1,"seq":{},"at":"2026-12-01T10:00:00Z",{}}}"#,
                    i + 1,
                    body.strip_prefix('{')
                        .and_then(|b| b.strip_suffix('}'))
                        .expect("an object")
                );
                Event::parse_line(line.as_bytes()).expect("valid event")
            })
            .collect()
    }

    /// The state `lines` fold to.
    pub fn state(lines: &[impl AsRef<str>]) -> State {
        fold(events(lines).iter())
    }
}
