//! loopwatch: supervise an AI coding agent's verify + secure loop.
//!
//! Module map (data flows top to bottom):
//! - [`model`]: the domain types, the events, the fold events → state, the loop rules.
//! - [`parse`]: readers of foreign text (gate outputs, finding verdicts, triage files).
//! - [`journal`]: the `.pipeline` store: locked append, snapshot, tail reading.
//! - [`gate0`]: GATE 0, the deterministic floor (`status` / `run` of a contract).
//! - [`contract`]: edits of the contract made on a person's behalf (`[gated …]` in FILE SCOPE).
//! - [`checks`]: the other deterministic checks (floor-guard, evidence-gate, triage apply).
//! - [`util`]: atomic file replacement, hashes, time, `user@host`.
//! - [`recorder`]: what the orchestrator's calls write, with the loop's rules applied under the lock.
//! - [`sanitize`]: makes text from files safe to draw (visible escapes, width cuts).
//! - [`tui`]: the terminal UI: app state, actions, keymap, screens, decision dialog.
//! - [`cli`]: clap definitions and one small function per subcommand.
//!
//! `model`, `parse`, `journal`, `gate0` and `checks` never touch the terminal.

pub mod checks;
pub mod cli;
pub mod contract;
pub mod demo;
pub mod gate0;
pub mod history;
pub mod journal;
pub mod model;
pub mod parse;
pub mod recorder;
pub mod sanitize;
pub mod report;
pub mod schema;
pub mod tui;
pub mod util;
pub mod watch;
