//! The dispatch events of `loopwatch run`: `agent.started` is written once
//! the agent's process exists (it names the pid and process group) and
//! `agent.finished` once it was reaped. A started dispatch without its
//! finish, found when an engine starts, belongs to an engine that died: it
//! is recorded interrupted and dispatched fresh.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::types::{Extra, GateName};

/// The part an agent plays in the loop.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
#[derive(strum::IntoStaticStr, strum::Display)]
#[strum(serialize_all = "kebab-case")]
pub enum AgentRole {
    /// Implements the contract and closes the gaps handed back.
    Developer,
    /// GATE 1: the conformity verifier.
    Verifier,
    /// GATE 2: the security auditor.
    Auditor,
    /// The review stage's reviewer.
    Reviewer,
    /// The review stage's finding verifier.
    FindingVerifier,
    /// The review stage's triage.
    Triage,
    /// The review stage's repro-test writer.
    VerifyByTest,
}

impl AgentRole {
    /// Every role, in loop order.
    pub const ALL: [AgentRole; 7] = [
        AgentRole::Developer,
        AgentRole::Verifier,
        AgentRole::Auditor,
        AgentRole::Reviewer,
        AgentRole::FindingVerifier,
        AgentRole::Triage,
        AgentRole::VerifyByTest,
    ];

    /// The name used in files, logs and `loopwatch.toml`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl std::str::FromStr for AgentRole {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        AgentRole::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown agent role '{s}' (expected developer, verifier, auditor, reviewer, finding-verifier, triage or verify-by-test)"
                )
            })
    }
}

/// Payload of `agent.started`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentStarted {
    /// Dispatch number in the run, from 1.
    pub dispatch: u32,
    /// The agent's part.
    pub role: AgentRole,
    /// Iteration served.
    pub iteration: u32,
    /// The gate served, when the agent judges one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateName>,
    /// Round of that gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    /// generic, claude or codex.
    pub adapter: String,
    /// Process id of the agent.
    pub pid: u32,
    /// Its process group (every process it starts is in it).
    pub pgid: u32,
    /// `sha256:<hex>` of the whole input handed over (instructions + inputs).
    pub input_sha256: String,
    /// The agent's log, relative to `.pipeline/`.
    pub log: String,
    /// The input handed over, relative to `.pipeline/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// Payload of `agent.finished`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentFinished {
    /// The dispatch this finishes.
    pub dispatch: u32,
    /// The agent's part.
    pub role: AgentRole,
    /// Exit status (null when it was killed by a signal or never ran).
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// Wall time from spawn to reap.
    #[serde(default)]
    pub duration_ms: u64,
    /// Stopped because it ran past its timeout.
    #[serde(default)]
    pub timed_out: bool,
    /// Stopped because the engine was stopped (or died).
    #[serde(default)]
    pub interrupted: bool,
    /// The signal that ended the agent, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// Who sent that signal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal_from: Option<SignalFrom>,
    /// The agent's own last words: the last lines of its stderr (at most 5).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub last_words: Vec<String>,
    /// Processes of its tree still running once it had ended, stopped then.
    #[serde(default, skip_serializing_if = "crate::model::types::is_zero")]
    pub leftovers: u32,
    /// What it changed in the contract's judged parts, put back by
    /// loopwatch: the dispatch failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tampered: Vec<String>,
    /// What a read-only role changed in the worktree or the repository,
    /// put back by loopwatch: the dispatch failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub violations: Vec<String>,
    /// Input tokens, when the adapter reports them.
    #[serde(default)]
    pub tokens_in: Option<u64>,
    /// Output tokens, when the adapter reports them.
    #[serde(default)]
    pub tokens_out: Option<u64>,
    /// Cost in US dollars, null when unknown.
    #[serde(default)]
    pub cost_usd: Option<f64>,
    /// Why the dispatch failed, when it did (spawn error, no answer, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The answer the adapter read, saved relative to `.pipeline/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// What the adapter did to read the answer (an earlier message of the
    /// session read because the final one holds no verdict); absent when
    /// nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub normalized: Vec<String>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// Payload of `agent.limited`: the agent's CLI answered that a usage or
/// rate limit is reached. Written just before the dispatch's
/// `agent.finished`, in the same append: the dispatch is limited, not
/// failed (no failure is counted against its role).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentLimited {
    /// The dispatch the limit stopped.
    pub dispatch: u32,
    /// The agent's part.
    pub role: AgentRole,
    /// RFC 3339 UTC time the limit resets, when the CLI said (null: it
    /// did not, and a person is asked).
    #[serde(default)]
    pub until: Option<String>,
    /// The CLI's own words (one line).
    #[serde(default)]
    pub message: String,
    /// Unknown fields, kept.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

impl AgentLimited {
    /// `verifier #4 hit a usage limit (resets 2026-12-02T10:00:00Z): …`.
    pub fn summary(&self) -> String {
        let until = self.until.as_deref().map_or_else(
            || "no reset time given".to_string(),
            |u| format!("resets {u}"),
        );
        format!(
            "{} #{} hit a usage limit ({until}): {}",
            self.role, self.dispatch, self.message
        )
    }
}

/// Who sent the signal that ended an agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SignalFrom {
    /// loopwatch, at the dispatch's timeout.
    Deadline,
    /// loopwatch, asked to stop (a signal to it, the TUI left).
    Stop,
    /// Not loopwatch (another process, the kernel's OOM killer, the agent itself).
    Outside,
}

impl AgentFinished {
    /// The finish of dispatch `dispatch` of `role` with nothing known yet:
    /// no exit code, no time, no usage, no error; the caller sets what it knows.
    pub fn new(dispatch: u32, role: AgentRole) -> Self {
        AgentFinished {
            dispatch,
            role,
            exit_code: None,
            duration_ms: 0,
            timed_out: false,
            interrupted: false,
            signal: None,
            signal_from: None,
            last_words: Vec::new(),
            leftovers: 0,
            tampered: Vec::new(),
            violations: Vec::new(),
            tokens_in: None,
            tokens_out: None,
            cost_usd: None,
            error: None,
            answer: None,
            normalized: Vec::new(),
            extra: Default::default(),
        }
    }

    /// The finish of a dispatch that did not run, or ran and was never
    /// reaped by this engine: nothing but `error` is known.
    pub fn unanswered(started: &AgentStarted, interrupted: bool, error: String) -> Self {
        AgentFinished {
            interrupted,
            error: Some(error),
            ..AgentFinished::new(started.dispatch, started.role)
        }
    }

    /// True when the agent exited 0 on its own, in time, with no error.
    pub fn succeeded(&self) -> bool {
        self.exit_code == Some(0)
            && !self.timed_out
            && !self.interrupted
            && self.error.is_none()
            && self.tampered.is_empty()
            && self.violations.is_empty()
    }

    /// Why the dispatch did not succeed, in one line (`None` when it did),
    /// with the agent's last words when it left some: `exited with status
    /// 1: error: 401 Unauthorized`, `killed by SIGKILL (not sent by
    /// loopwatch)`, `timed out after 1200000 ms`.
    pub fn failure(&self) -> Option<String> {
        if self.succeeded() {
            return None;
        }
        let how = if !self.tampered.is_empty() {
            // The loop's promise is at stake: that says more than a status.
            format!(
                "changed the contract's judged parts (put back): {}",
                self.tampered.join("; ")
            )
        } else if !self.violations.is_empty() {
            format!(
                "a read-only role changed what it may not (put back): {}",
                self.violations.join("; ")
            )
        } else if self.interrupted {
            "interrupted".to_string()
        } else if self.timed_out {
            format!("timed out after {} ms", self.duration_ms)
        } else {
            // The status first, then what the CLI said of it, when the
            // adapter read something.
            match (self.exit_code, &self.error, self.signal) {
                (Some(c), Some(e), _) if c != 0 => format!("exited with status {c}: {e}"),
                (Some(c), _, _) if c != 0 => format!("exited with status {c}"),
                (_, Some(e), _) => e.clone(),
                (Some(c), None, _) => format!("exited with status {c}"),
                (None, None, Some(sig)) => format!(
                    "killed by {}{}",
                    crate::util::signal_name(sig),
                    match self.signal_from {
                        Some(SignalFrom::Outside) | None => " (not sent by loopwatch)",
                        Some(_) => "",
                    }
                ),
                (None, None, None) => "killed by a signal".to_string(),
            }
        };
        let words = self.last_words.join(" · ");
        Some(
            if self.interrupted || words.is_empty() || how.contains(&words) {
                how
            } else {
                format!("{how}: {words}")
            },
        )
    }
}

impl AgentStarted {
    /// One line: `developer #3 started (iteration 2, claude, pid 123)`.
    pub fn summary(&self) -> String {
        let gate = self
            .gate
            .map(|g| format!(", GATE {} round {}", g.number(), self.round.unwrap_or(1)))
            .unwrap_or_default();
        format!(
            "{} #{} started (iteration {}{gate}, {}, pid {})",
            self.role, self.dispatch, self.iteration, self.adapter, self.pid
        )
    }
}

impl AgentFinished {
    /// One line: `verifier #4 finished in 12.3 s, 1.2k in / 300 out · $0.0100`.
    pub fn summary(&self) -> String {
        let how = match self.failure() {
            None => "finished".to_string(),
            Some(f) => format!("failed ({f})"),
        };
        let mut s = format!(
            "{} #{} {how} in {:.1} s",
            self.role,
            self.dispatch,
            self.duration_ms as f64 / 1000.0
        );
        if self.tokens_in.is_some() || self.tokens_out.is_some() {
            s.push_str(&format!(
                ", {} in / {} out",
                self.tokens_in.unwrap_or(0),
                self.tokens_out.unwrap_or(0)
            ));
        }
        if let Some(c) = self.cost_usd {
            s.push_str(&format!(" · ${c:.4}"));
        }
        s
    }
}
