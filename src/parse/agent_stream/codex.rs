//! Codex's `exec --json` events (as printed by Codex 0.171): `thread.started`,
//! `turn.started`, `turn.completed` (usage), `turn.failed` (the error),
//! `item.started` / `item.updated` / `item.completed` (agent messages,
//! reasoning, commands, file changes, MCP calls, web searches, to-do lists,
//! non-fatal errors) and `error` (a notice of the stream: `Reconnecting…
//! n/5` while Codex retries, or the fatal error before a `turn.failed`).

use serde_json::Value;

use super::{str_at, u64_at};

/// One event of the stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// `thread.started`.
    ThreadStarted {
        /// The thread (the session).
        id: String,
    },
    /// `turn.started`.
    TurnStarted,
    /// `turn.completed` with its usage.
    TurnCompleted {
        /// Input tokens.
        tokens_in: Option<u64>,
        /// Of which read from the cache.
        cached: Option<u64>,
        /// Output tokens.
        tokens_out: Option<u64>,
    },
    /// `turn.failed`.
    TurnFailed {
        /// The error's message.
        message: String,
    },
    /// `error`: a notice of the stream.
    Error {
        /// Its message.
        message: String,
    },
    /// `item.started`, `item.updated` or `item.completed`.
    Item {
        /// Which of the three.
        phase: Phase,
        /// The item's id.
        id: String,
        /// The item.
        item: Item,
    },
    /// An object of another type.
    Other {
        /// Its `type`.
        kind: String,
    },
}

/// Where an item is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// `item.started`.
    Started,
    /// `item.updated`.
    Updated,
    /// `item.completed`.
    Completed,
}

/// A thread item.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// The agent's message (the answer is the last one).
    AgentMessage(String),
    /// A reasoning summary.
    Reasoning(String),
    /// A command the agent ran.
    Command {
        /// The command line.
        command: String,
        /// Its output (stdout and stderr).
        output: String,
        /// Its exit status, once it exited.
        exit_code: Option<i64>,
        /// `in_progress`, `completed`, `failed`, `declined`.
        status: String,
    },
    /// Files the agent changed (through `apply_patch`).
    FileChange {
        /// (path, `add` | `delete` | `update`).
        changes: Vec<(String, String)>,
        /// `completed` or `failed`.
        status: String,
    },
    /// A call to an MCP tool.
    McpCall {
        /// `server.tool`.
        tool: String,
        /// Its status.
        status: String,
        /// The error, when it failed.
        error: String,
    },
    /// A web search.
    WebSearch(String),
    /// The agent's to-do list: (items done, items).
    Todo(usize, usize),
    /// A non-fatal error surfaced as an item.
    Error(String),
    /// Another item type.
    Other(String),
}

/// Reads one object of the stream.
pub fn event(v: &Value) -> Event {
    match str_at(v, "type") {
        "thread.started" => Event::ThreadStarted {
            id: str_at(v, "thread_id").to_string(),
        },
        "turn.started" => Event::TurnStarted,
        "turn.completed" => {
            let u = v.get("usage").unwrap_or(&Value::Null);
            Event::TurnCompleted {
                tokens_in: u64_at(u, "input_tokens"),
                cached: u64_at(u, "cached_input_tokens"),
                tokens_out: u64_at(u, "output_tokens"),
            }
        }
        "turn.failed" => Event::TurnFailed {
            message: v
                .pointer("/error/message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        },
        "error" => Event::Error {
            message: str_at(v, "message").to_string(),
        },
        t @ ("item.started" | "item.updated" | "item.completed") => {
            let phase = match t {
                "item.started" => Phase::Started,
                "item.updated" => Phase::Updated,
                _ => Phase::Completed,
            };
            let i = v.get("item").unwrap_or(&Value::Null);
            Event::Item {
                phase,
                id: str_at(i, "id").to_string(),
                item: item(i),
            }
        }
        other => Event::Other {
            kind: other.to_string(),
        },
    }
}

fn item(i: &Value) -> Item {
    match str_at(i, "type") {
        "agent_message" => Item::AgentMessage(str_at(i, "text").to_string()),
        "reasoning" => Item::Reasoning(str_at(i, "text").to_string()),
        "command_execution" => Item::Command {
            command: str_at(i, "command").to_string(),
            output: str_at(i, "aggregated_output").to_string(),
            exit_code: i.get("exit_code").and_then(Value::as_i64),
            status: str_at(i, "status").to_string(),
        },
        "file_change" => Item::FileChange {
            changes: i
                .get("changes")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|c| (str_at(c, "path").to_string(), str_at(c, "kind").to_string()))
                        .collect()
                })
                .unwrap_or_default(),
            status: str_at(i, "status").to_string(),
        },
        "mcp_tool_call" => Item::McpCall {
            tool: format!("{}.{}", str_at(i, "server"), str_at(i, "tool")),
            status: str_at(i, "status").to_string(),
            error: i
                .pointer("/error/message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        },
        "web_search" => Item::WebSearch(str_at(i, "query").to_string()),
        "todo_list" => {
            let items = i
                .get("items")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default();
            let done = items
                .iter()
                .filter(|t| t.get("completed").and_then(Value::as_bool) == Some(true))
                .count();
            Item::Todo(done, items.len())
        }
        "error" => Item::Error(str_at(i, "message").to_string()),
        other => Item::Other(other.to_string()),
    }
}

/// True for the `error` notices Codex prints while it retries the model's
/// stream (`Reconnecting... 1/5 (…)`): a turn that completes after them
/// succeeded.
pub fn is_reconnect(message: &str) -> bool {
    let m = message.trim_start();
    m.starts_with("Reconnecting") || m.starts_with("Re-connecting")
}

/// Shortens Codex's `/bin/bash -lc '<command>'` wrapping to the command.
pub fn bare_command(command: &str) -> &str {
    for shell in [
        "/bin/bash -lc ",
        "bash -lc ",
        "/bin/sh -c ",
        "sh -c ",
        "/bin/zsh -lc ",
    ] {
        if let Some(rest) = command.strip_prefix(shell) {
            let rest = rest.trim();
            if let Some(inner) = rest.strip_prefix('\'').and_then(|r| r.strip_suffix('\''))
                && !inner.contains('\'')
            {
                return inner;
            }
            return rest;
        }
    }
    command
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_events_loopwatch_reads() {
        assert_eq!(
            event(
                &json!({"type":"turn.completed","usage":{"input_tokens":9,"cached_input_tokens":4,"output_tokens":2}})
            ),
            Event::TurnCompleted {
                tokens_in: Some(9),
                cached: Some(4),
                tokens_out: Some(2)
            }
        );
        assert_eq!(
            event(&json!({"type":"turn.failed","error":{"message":"401"}})),
            Event::TurnFailed {
                message: "401".into()
            }
        );
        let cmd = json!({"type":"item.completed","item":{"id":"item_1","type":"command_execution",
            "command":"/bin/bash -lc 'cargo test'","aggregated_output":"ok\n","exit_code":0,"status":"completed"}});
        let Event::Item {
            phase: Phase::Completed,
            item: Item::Command {
                command, exit_code, ..
            },
            ..
        } = event(&cmd)
        else {
            panic!("command")
        };
        assert_eq!(bare_command(&command), "cargo test");
        assert_eq!(exit_code, Some(0));
        let fc = json!({"type":"item.completed","item":{"id":"i","type":"file_change",
            "changes":[{"path":"/w/src/a.rs","kind":"add"}],"status":"completed"}});
        assert!(
            matches!(event(&fc), Event::Item { item: Item::FileChange { changes, .. }, .. }
            if changes == [("/w/src/a.rs".to_string(), "add".to_string())])
        );
        assert!(is_reconnect("Reconnecting... 1/5 (stream closed)"));
        assert!(!is_reconnect("unexpected status 401 Unauthorized"));
        assert_eq!(
            bare_command("/bin/bash -lc 'a '\\''b'\\'''"),
            "'a '\\''b'\\'''"
        );
        assert_eq!(bare_command("ls"), "ls");
    }
}
