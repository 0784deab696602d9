//! Success and failure as Codex means them, read from its `exec --json`
//! events:
//! - the turn's own end decides: `turn.completed` is a success whose answer
//!   is the last `agent_message`; `turn.failed` (or an `error` event that
//!   no completed turn follows) is a failure carrying Codex's message;
//! - `error` events saying `Reconnecting… n/5` are Codex retrying the
//!   model's stream: notes, and a turn that completes after them
//!   succeeded; `error` items (non-fatal) are notes too;
//! - the answer is the final message; when it holds no verdict and an
//!   earlier message of the thread does, that one is read and the
//!   normalisation recorded;
//! - usage is summed over the `turn.completed` events; Codex reports no cost;
//! - no turn end (the CLI was killed, the stream cut): a failure naming the
//!   last complete event, never an answer; no event Codex prints: a failure
//!   naming the CLI and what was expected, with its last words from stderr.

use crate::parse::agent_stream::codex::{Event, Item, Phase, bare_command, is_reconnect};
use crate::parse::agent_stream::{Line, first_line, lines};

use super::{Answer, CODEX_TESTED, last_words, note_text, read_answer};

/// What is expected, in the errors.
const EXPECTED: &str = "`codex exec --json` events";

/// How the last turn ended, as far as the stream says.
enum End {
    /// No turn ended.
    Open,
    /// `turn.completed`.
    Completed,
    /// `turn.failed`, or a fatal `error` after the last completion.
    Failed(String),
}

/// The answer of an `exec --json` session.
pub fn answer(stdout: &[u8], stderr: &[u8]) -> Answer {
    let mut a = Answer::default();
    let mut known = 0usize;
    let mut others: Vec<String> = Vec::new();
    let mut last_kind: Option<String> = None;
    let mut messages: Vec<String> = Vec::new();
    let mut reconnects: Vec<String> = Vec::new();
    let mut end = End::Open;
    for line in lines(stdout) {
        let Line::Json(v) = line else { continue };
        let ev = crate::parse::agent_stream::codex::event(&v);
        last_kind = Some(describe(&ev));
        match ev {
            Event::Other { kind } => {
                if !others.contains(&kind) && others.len() < 5 {
                    others.push(kind);
                }
                continue;
            }
            Event::ThreadStarted { .. } | Event::TurnStarted => {}
            Event::TurnCompleted {
                tokens_in,
                tokens_out,
                ..
            } => {
                if let Some(i) = tokens_in {
                    a.tokens_in = Some(a.tokens_in.unwrap_or(0).saturating_add(i));
                }
                if let Some(o) = tokens_out {
                    a.tokens_out = Some(a.tokens_out.unwrap_or(0).saturating_add(o));
                }
                end = End::Completed;
            }
            Event::TurnFailed { message } => end = End::Failed(message),
            Event::Error { message } if is_reconnect(&message) => {
                reconnects.push(first_line(&message, 200));
            }
            Event::Error { message } => end = End::Failed(message),
            Event::Item {
                phase: Phase::Completed,
                item,
                ..
            } => match item {
                Item::AgentMessage(t) => messages.push(t),
                Item::Error(m) => {
                    let n = note_text(&format!("Codex: {m}"));
                    if !a.notes.contains(&n) {
                        a.notes.push(n);
                    }
                }
                _ => {}
            },
            Event::Item { .. } => {}
        }
        known += 1;
    }
    if !reconnects.is_empty() {
        a.notes.push(note_text(&format!(
            "Codex reconnected to the model API {} time(s): {}",
            reconnects.len(),
            reconnects.join("; ")
        )));
    }
    match end {
        End::Failed(m) => {
            let said = if m.trim().is_empty() {
                last_words(stderr, 3).unwrap_or_default()
            } else {
                m
            };
            a.error = Some(if said.trim().is_empty() {
                "Codex reported the turn failed".to_string()
            } else {
                format!("Codex reported the turn failed: {}", note_text(&said))
            });
        }
        End::Open => {
            let words = last_words(stderr, 3)
                .map(|w| format!("; it said: {w}"))
                .unwrap_or_default();
            a.error = Some(match (known, last_kind) {
                (0, None) => format!(
                    "Codex printed no --json event (expected {EXPECTED} of Codex {CODEX_TESTED}){words}"
                ),
                (0, Some(_)) => format!(
                    "Codex's output is not a stream it knows: no event of type thread.*, turn.*, item.* or error (saw {}; expected {EXPECTED} of Codex {CODEX_TESTED}){words}",
                    others.join(", ")
                ),
                (_, last) => format!(
                    "Codex stopped before its turn ended: the stream was cut after {}{words}",
                    last.unwrap_or_default()
                ),
            });
        }
        End::Completed => match messages.last() {
            None => {
                a.error = Some("Codex completed its turn without an agent message".into());
            }
            Some(last) => {
                let all: Vec<&str> = messages.iter().map(String::as_str).collect();
                read_answer(&mut a, last, &all, "thread");
            }
        },
    }
    a
}

/// The event, named for a person: `item.completed (command_execution `cargo test`)`.
fn describe(ev: &Event) -> String {
    match ev {
        Event::ThreadStarted { .. } => "thread.started".into(),
        Event::TurnStarted => "turn.started".into(),
        Event::TurnCompleted { .. } => "turn.completed".into(),
        Event::TurnFailed { .. } => "turn.failed".into(),
        Event::Error { message } => format!("error `{}`", first_line(message, 60)),
        Event::Item { phase, item, .. } => {
            let phase = match phase {
                Phase::Started => "item.started",
                Phase::Updated => "item.updated",
                Phase::Completed => "item.completed",
            };
            let what = match item {
                Item::AgentMessage(_) => "agent_message".to_string(),
                Item::Reasoning(_) => "reasoning".to_string(),
                Item::Command { command, .. } => format!(
                    "command_execution `{}`",
                    first_line(bare_command(command), 60)
                ),
                Item::FileChange { .. } => "file_change".to_string(),
                Item::McpCall { tool, .. } => format!("mcp_tool_call {tool}"),
                Item::WebSearch(_) => "web_search".to_string(),
                Item::Todo(..) => "todo_list".to_string(),
                Item::Error(_) => "error".to_string(),
                Item::Other(k) => k.clone(),
            };
            note_text(&format!("{phase} ({what})"))
        }
        Event::Other { kind } => note_text(kind),
    }
}
