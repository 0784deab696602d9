//! Adapters turn (role, instructions, inputs) into a command line, its
//! stdin and its environment, and the agent's stdout (with the end of its
//! stderr) into an answer, its usage, and whether the CLI itself says the
//! session succeeded. The generic adapter is the contract everything else
//! reduces to: the input on stdin, the answer on stdout.
//!
//! Instructions and inputs never go in argv (a prompt file can be larger
//! than the kernel takes in one argument): they go on stdin, or in a file
//! the CLI is given the path of.

mod claude;
mod claude_answer;
mod codex;
mod codex_answer;
mod generic;
pub mod limits;
mod readonly;

use std::ffi::OsString;
use std::path::Path;

pub use readonly::{build_dir, build_env, build_folders};

use super::config::{AdapterKind, AgentConfig};
use crate::model::event::AgentRole;

/// The Claude Code version the adapter was tested with (`.ci/run` installs it).
pub const CLAUDE_TESTED: &str = "2.1.332";
/// The Codex version the adapter was tested with (`.ci/run` installs it).
pub const CODEX_TESTED: &str = "0.171.0";

/// What one dispatch hands an adapter.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The agent's configuration.
    pub agent: &'a AgentConfig,
    /// The agent's own instructions (its prompt file), when it has some.
    pub instructions: Option<&'a str>,
    /// A file holding exactly `instructions` (an absolute path), for the
    /// CLIs that read a system prompt from a file. Without one, the
    /// instructions go on stdin before the inputs.
    pub instructions_file: Option<&'a Path>,
    /// The inputs the loop names for this dispatch.
    pub inputs: &'a str,
    /// The run's test command (the read-only roles may run it).
    pub test: &'a str,
    /// The worktree the agent works in.
    pub worktree: &'a Path,
    /// The writable folder outside the worktree where a read-only role's
    /// test command puts its build output ([`build_dir`]); the dispatch
    /// creates [`build_folders`] before the start.
    pub build_dir: Option<&'a Path>,
    /// The dollars the run's `[budget]` leaves this dispatch, for the CLIs
    /// that take a spending limit of their own (Claude Code's
    /// `--max-budget-usd`).
    pub max_budget_usd: Option<f64>,
}

impl Request<'_> {
    /// Instructions first, then the inputs: what a generic agent reads.
    pub fn full_text(&self) -> String {
        match self.instructions {
            Some(i) if !i.trim().is_empty() => format!("{}\n\n{}", i.trim_end(), self.inputs),
            _ => self.inputs.to_string(),
        }
    }

    /// The instructions, when there are some that are not blank.
    fn instructions(&self) -> Option<&str> {
        self.instructions.filter(|i| !i.trim().is_empty())
    }
}

/// The process to start.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Invocation {
    /// The program.
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// What is written to its stdin (then stdin is closed).
    pub stdin: Vec<u8>,
    /// Environment variables set for it, on top of the dispatch's own
    /// (`LW_*`) and what loopwatch inherited.
    pub env: Vec<(String, String)>,
}

/// What an agent answered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answer {
    /// The answer text (a gate output, the developer's summary).
    pub text: Vec<u8>,
    /// Input tokens, when reported.
    pub tokens_in: Option<u64>,
    /// Output tokens, when reported.
    pub tokens_out: Option<u64>,
    /// Cost in US dollars, when reported.
    pub cost_usd: Option<f64>,
    /// Why no usable answer came, when none did (the CLI's own words when
    /// it gave some).
    pub error: Option<String>,
    /// What the CLI reported that did not stop it (a retried API call, a
    /// reconnect, a refused tool call, a version not tested): recorded as
    /// `note` events, never a failure.
    pub notes: Vec<String>,
    /// What was done to read the answer (an earlier message read because
    /// the final one holds no verdict): recorded on `agent.finished`.
    pub normalized: Vec<String>,
    /// The usage limit the CLI answered with, when it did: the dispatch
    /// is recorded limited (`agent.limited`), not failed.
    pub limited: Option<limits::Limit>,
}

/// The command line of a dispatch.
pub fn invocation(req: &Request<'_>) -> Invocation {
    match req.agent.adapter {
        AdapterKind::Generic => generic::invocation(req),
        AdapterKind::Claude => claude::invocation(req),
        AdapterKind::Codex => codex::invocation(req),
    }
}

/// The answer in an agent's stdout; `stderr` is the end of its stderr,
/// read for the CLI's last words when the stream has none.
pub fn answer(kind: AdapterKind, stdout: &[u8], stderr: &[u8]) -> Answer {
    let mut a = match kind {
        AdapterKind::Generic => generic::answer(stdout),
        AdapterKind::Claude => claude_answer::answer(stdout, stderr),
        AdapterKind::Codex => codex_answer::answer(stdout, stderr),
    };
    a.limited = match kind {
        AdapterKind::Generic => None,
        AdapterKind::Claude => limits::claude(stdout, a.error.as_deref()),
        AdapterKind::Codex => limits::codex(a.error.as_deref(), jiff::Timestamp::now()),
    };
    a
}

/// True for the roles that may change the worktree.
pub fn may_edit(role: AgentRole) -> bool {
    matches!(
        role,
        AgentRole::Developer | AgentRole::VerifyByTest | AgentRole::Triage
    )
}

/// True when a dispatch of `agent` runs read-only under its CLI's own
/// means and so needs a build folder outside the worktree.
pub fn needs_build_dir(agent: &AgentConfig) -> bool {
    agent.adapter != AdapterKind::Generic && !may_edit(agent.role)
}

/// Reads the answer of a session into `a`: its final message, unless that
/// one holds no verdict and an earlier of `messages` (the session's, in
/// order; `session` names it: "session", "thread") does: then that one,
/// and the reading is named in `a.normalized`.
fn read_answer(a: &mut Answer, final_text: &str, messages: &[&str], session: &str) {
    a.text = final_text.as_bytes().to_vec();
    if crate::parse::holds_verdict(final_text) {
        return;
    }
    let n = messages.len();
    let earlier = messages
        .iter()
        .enumerate()
        .rev()
        .find(|(_, t)| crate::parse::holds_verdict(t) && t.trim() != final_text.trim());
    if let Some((i, t)) = earlier {
        a.text = t.as_bytes().to_vec();
        a.normalized.push(format!(
            "the final message holds no verdict: read message {} of {n} of the {session} instead",
            i + 1
        ));
    }
}

/// The last lines of a CLI's stderr that are not part of its stream, at
/// most `n`, each cut to 300 characters: what it said before it stopped.
fn last_words(stderr: &[u8], n: usize) -> Option<String> {
    let lines: Vec<String> = crate::parse::agent_stream::lines(stderr)
        .filter_map(|l| match l {
            // A cut object (the end of a log read from its middle) is no one's words.
            crate::parse::agent_stream::Line::Raw(r) if r.trim_ascii_start().starts_with(b"{") => {
                None
            }
            crate::parse::agent_stream::Line::Raw(r) => {
                let t = crate::sanitize::sanitize_bytes(r, 300);
                (!t.trim().is_empty()).then(|| t.trim().to_string())
            }
            crate::parse::agent_stream::Line::Json(_) => None,
        })
        .collect();
    let start = lines.len().saturating_sub(n);
    let tail = lines[start..].join(" | ");
    (!tail.is_empty()).then_some(tail)
}

/// A one-line note of what a CLI said (sanitised, at most 300 characters).
fn note_text(s: &str) -> String {
    crate::sanitize::sanitize_line(s.trim(), 300)
}

#[cfg(test)]
mod tests;
