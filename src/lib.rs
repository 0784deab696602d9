//! loopwatch: supervise an AI coding agent's verify + secure loop.
//!
//! Module map, from the top: each module uses only the modules below it
//! (`tests/layering.rs` checks it, and that no files of `tui` use each other
//! in a loop):
//! - [`cli`]: clap definitions and one small function per subcommand.
//! - [`demo`]: the scripted loop behind `loopwatch demo`.
//! - [`tui`]: the terminal UI: app state and its input modes, actions, keymap, rows and their
//!   cells (no terminal type; they read the app through `rows::Query`), screens, decision
//!   dialog, event loop; `tui::testkit` (feature `testkit`) holds the helpers the tests share.
//! - [`engine`]: `loopwatch run`, the loop itself: it dispatches the agents `model::rules` asks
//!   for (own process groups, timeouts, journaled, resumable), the review stage's
//!   finding-verifier graph and verify-by-test; it decides nothing the rules do not say.
//!   `engine::roles` holds the role files shipped with loopwatch (`assets/agents/`), the
//!   agents' instructions when `loopwatch.toml` names no `prompt_file`.
//! - [`watch`]: filesystem watching; the feed, which reads a pipeline incrementally into its
//!   history and holds the position shown (live = the newest, replay = a seek; truncation
//!   handled there only); the live loop's input batches.
//! - [`notify`]: notifications of waiting gates (hook, webhook, terminal bytes), once per gate.
//! - [`recorder`]: the one writer of the journal: what the orchestrator's calls, the engine's
//!   dispatches and review stage, and a person's decisions write, with the loop's rules applied
//!   under the lock; the evidence a gate carries and the lines a person decides on.
//! - [`audit`]: a run checked offline: the journal's hash chain, the evidence, snapshots and
//!   contract edits it names (`verify`), the run in one archive (`export`), SSH signatures
//!   of decisions and exports (`ssh-keygen -Y`), and the person's decision policy.
//! - [`report`]: the run report (markdown, JSON, self-contained HTML).
//! - [`checks`]: the other deterministic checks (floor-guard, evidence-gate, triage apply).
//! - [`contract`]: edits of the contract made on a person's behalf (`[gated …]` in FILE SCOPE).
//! - [`gate0`]: GATE 0, the deterministic floor (`status` / `run` of a contract).
//! - [`code`]: the code per iteration: git tree snapshots, code diffs, cited lines; and git as
//!   loopwatch runs it (clean environment, a deadline, its own process group).
//! - [`journal`]: the `.pipeline` store: locked append, state snapshot, tail reading, safe file tails.
//! - [`schema`]: JSON Schemas generated from the types.
//! - [`history`]: the one store of a run's events (shared, never copied), the state after any
//!   event (checkpoints), the replay positioning rules, what changed between iterations.
//! - [`parse`]: readers of the agents' text (gate outputs, finding verdicts, review findings).
//! - [`model`]: the domain types, the events, the fold events → state, the loop rules, triage
//!   files, and the questions asked of a finding (triage bucket, verification, severity rank)
//!   and of a run (accepted partial), each answered once.
//! - [`process`]: the one way a child process is run (agents, GATE 0's checks, repro tests, git,
//!   hooks): its folder, environment, stdin, deadline, grace, output limits and stop, under a
//!   supervisor that is the subreaper of its tree and ends it whole; the tree's `/proc` view.
//! - [`redact`]: secret scrubbing for reports and copied text (`[redacted:<kind>]`).
//! - [`sanitize`]: makes text from files safe to draw or print (visible escapes, width cuts,
//!   one-line fields, JSON that escapes what is not printable).
//! - [`util`]: non-blocking bounded reads of regular files, atomic file replacement (no links in
//!   `.pipeline/`, dead writers' temp files removed), hashes, time, `user@host`.
//!
//! Only `tui` (and the `cli` commands that start it) touches the terminal;
//! `tui` depends on the rest, never the reverse.

/// A `LazyLock<Regex>` compiled on first use from a literal pattern.
macro_rules! static_regex {
    ($pattern:literal) => {
        std::sync::LazyLock::new(|| {
            // Invariant: a literal pattern that compiles; the tests of the
            // module holding it exercise every one.
            ::regex::Regex::new($pattern).expect("a literal pattern compiles")
        })
    };
}

pub mod audit;
pub mod checks;
pub mod cli;
pub mod code;
pub mod contract;
pub mod demo;
pub mod engine;
pub mod gate0;
pub mod history;
pub mod journal;
pub mod model;
pub mod notify;
pub mod parse;
pub mod process;
pub mod recorder;
pub mod redact;
pub mod report;
pub mod sanitize;
pub mod schema;
pub mod tui;
pub mod util;
pub mod watch;
