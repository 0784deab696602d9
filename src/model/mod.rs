//! The domain: runs, iterations, gates and rounds, verdicts, findings,
//! verify-by-test results, human gates and decisions, and the events of the
//! journal. [`fold`] turns a sequence of events into the [`State`] of
//! `state.json`; [`rules`] says what the loop does next.
//!
//! Never does I/O and never imports a terminal crate: every headless command
//! and every other program can use it as it is.

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
