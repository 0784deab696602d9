//! Success and failure as Claude Code means them, read from its
//! `stream-json` session:
//! - the final `result` object decides: `is_error` (an API error such as
//!   "API Error: 500 …" or an invalid key is reported there, with
//!   `subtype` still `success`) or a `subtype` other than `success`
//!   (`error_max_turns`, `error_during_execution`) is a failure carrying
//!   Claude Code's own text; otherwise `result` is the answer, with the
//!   session's usage and `total_cost_usd`;
//! - the answer is the final message; when it holds no verdict and an
//!   earlier message of the same session does (not a subagent's), that one
//!   is read and the normalisation recorded;
//! - retried API calls and refused tool calls are notes;
//! - no `result` (the CLI was killed, the stream cut): a failure naming the
//!   last complete event, never an answer;
//! - no event at all, or none of a type Claude Code prints: a failure
//!   naming the CLI and what was expected, with the CLI's last words from
//!   stderr.

use crate::parse::agent_stream::claude::{Event, Outcome, retry_text, tool_target};
use crate::parse::agent_stream::{Line, first_line, lines};

use super::{Answer, CLAUDE_TESTED, last_words, note_text, read_answer};

/// What is expected, in the errors.
const EXPECTED: &str = "`claude -p --output-format stream-json --verbose` events";

/// The answer of a `stream-json` session.
pub fn answer(stdout: &[u8], stderr: &[u8]) -> Answer {
    let mut a = Answer::default();
    let mut version: Option<String> = None;
    let mut last_kind: Option<String> = None;
    let mut known = 0usize;
    let mut others: Vec<String> = Vec::new();
    let mut retries: Vec<String> = Vec::new();
    // (message id, session, text) of the main agent's messages, in order.
    let mut messages: Vec<(String, String, String)> = Vec::new();
    let mut result: Option<Box<Outcome>> = None;
    for line in lines(stdout) {
        let Line::Json(v) = line else { continue };
        let ev = crate::parse::agent_stream::claude::event(&v);
        last_kind = Some(describe(&ev));
        match ev {
            Event::Init(i) => {
                known += 1;
                version = i.version;
            }
            Event::Retry {
                attempt,
                max,
                status,
                error,
            } => {
                known += 1;
                retries.push(retry_text(attempt, max, status, &error));
            }
            Event::System { .. } | Event::ToolResults(_) => known += 1,
            Event::Assistant(m) => {
                known += 1;
                if m.subagent || m.api_error {
                    continue;
                }
                let text = m.text();
                match messages.last_mut() {
                    Some((id, _, t)) if *id == m.id && !m.id.is_empty() => {
                        if !text.is_empty() {
                            if !t.is_empty() {
                                t.push('\n');
                            }
                            t.push_str(&text);
                        }
                    }
                    _ => messages.push((m.id, m.session_id, text)),
                }
            }
            Event::Result(o) => {
                known += 1;
                result = Some(o);
            }
            Event::Other { kind } => {
                if !others.contains(&kind) && others.len() < 5 {
                    others.push(kind);
                }
            }
        }
    }
    if let Some(v) = &version
        && !tested_line(v)
    {
        a.notes.push(format!(
            "Claude Code {} is not the version loopwatch was tested with ({CLAUDE_TESTED})",
            note_text(v)
        ));
    }
    if !retries.is_empty() {
        a.notes.push(note_text(&format!(
            "Claude Code retried the model API {} time(s): {}",
            retries.len(),
            retries.join(", ")
        )));
    }
    let Some(r) = result else {
        a.error = Some(no_result(
            known,
            &others,
            last_kind,
            stderr,
            version.as_deref(),
        ));
        return a;
    };
    a.tokens_in = r.tokens_in;
    a.tokens_out = r.tokens_out;
    a.cost_usd = r.cost_usd;
    if !r.denials.is_empty() {
        let asked: Vec<String> = r
            .denials
            .iter()
            .map(|(tool, what)| {
                if what.is_empty() {
                    tool.clone()
                } else {
                    format!("{tool} `{}`", first_line(what, 60))
                }
            })
            .collect();
        a.notes.push(note_text(&format!(
            "Claude Code refused {} tool call(s) its permissions do not allow: {}",
            asked.len(),
            asked.join(", ")
        )));
    }
    if r.is_error || (r.subtype != "success" && !r.subtype.is_empty()) {
        a.error = Some(failure(&r, stderr));
        return a;
    }
    let same: Vec<&str> = messages
        .iter()
        .filter(|(_, s, _)| r.session_id.is_empty() || s.is_empty() || *s == r.session_id)
        .map(|(_, _, t)| t.as_str())
        .collect();
    read_answer(&mut a, &r.text, &same, "session");
    a
}

/// True for a version of the line the adapter was tested with (2.1.x).
fn tested_line(v: &str) -> bool {
    let line = |s: &str| s.split('.').take(2).collect::<Vec<_>>().join(".");
    line(v) == line(CLAUDE_TESTED)
}

/// The failure a `result` reports, in Claude Code's words.
fn failure(r: &Outcome, stderr: &[u8]) -> String {
    let said = if !r.text.trim().is_empty() {
        r.text.trim().to_string()
    } else if !r.errors.is_empty() {
        r.errors.join("; ")
    } else {
        last_words(stderr, 3).unwrap_or_default()
    };
    let how = if r.subtype == "success" || r.subtype.is_empty() {
        "Claude Code reported an error".to_string()
    } else {
        format!("Claude Code ended with {}", r.subtype)
    };
    if said.is_empty() {
        how
    } else {
        format!("{how}: {}", note_text(&said))
    }
}

/// Why a session without a `result` has no answer.
fn no_result(
    known: usize,
    others: &[String],
    last: Option<String>,
    stderr: &[u8],
    version: Option<&str>,
) -> String {
    let words = last_words(stderr, 3)
        .map(|w| format!("; it said: {w}"))
        .unwrap_or_default();
    let tested = version
        .map(|v| format!("Claude Code {}", note_text(v)))
        .unwrap_or_else(|| "Claude Code".to_string());
    match (known, last) {
        (0, None) => format!(
            "Claude Code printed no stream-json event (expected {EXPECTED} of Claude Code {CLAUDE_TESTED}){words}"
        ),
        (0, Some(_)) => format!(
            "Claude Code's output is not a stream it knows: no event of type system, assistant, user or result (saw {}; expected {EXPECTED} of Claude Code {CLAUDE_TESTED}){words}",
            others.join(", ")
        ),
        (_, last) => format!(
            "{tested} stopped before its final result object: the stream was cut after {}{words}",
            last.unwrap_or_default()
        ),
    }
}

/// The event, named for a person: `assistant (tool_use Bash)`.
fn describe(ev: &Event) -> String {
    use crate::parse::agent_stream::claude::Block;
    match ev {
        Event::Init(_) => "system init".into(),
        Event::Retry { attempt, .. } => format!("system api_retry (attempt {attempt})"),
        Event::System { subtype } => format!("system {}", note_text(subtype)),
        Event::Assistant(m) => {
            let what: Vec<String> = m
                .blocks
                .iter()
                .map(|b| match b {
                    Block::Text(_) => "text".to_string(),
                    Block::Thinking(_) => "thinking".to_string(),
                    Block::ToolUse { name, input, .. } => format!(
                        "tool_use {} `{}`",
                        note_text(name),
                        first_line(&tool_target(name, input), 40)
                    ),
                    Block::Other(k) => note_text(k),
                })
                .collect();
            format!("assistant ({})", what.join(", "))
        }
        Event::ToolResults(r) => format!("user ({} tool result(s))", r.len()),
        Event::Result(_) => "result".into(),
        Event::Other { kind } => note_text(kind),
    }
}
