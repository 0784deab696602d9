//! Claude Code's `stream-json` events (as printed by Claude Code 2.1):
//! `system` (`init` names the version, model, tools and permission mode;
//! `api_retry` a retried API call), `assistant` (one message's content
//! blocks: text, thinking, tool_use; a synthetic one holds an API error),
//! `user` (tool results), and the final `result` (`subtype`, `is_error`,
//! `result`, usage, cost, the permission denials).

use serde_json::Value;

use super::{str_at, u64_at};

/// One event of the stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// `system`/`init`: the session as it starts.
    Init(Init),
    /// `system`/`api_retry`: Claude Code retries a failed API call.
    Retry {
        /// This attempt (from 1).
        attempt: u64,
        /// Attempts at most.
        max: Option<u64>,
        /// The HTTP status that failed, when there was one.
        status: Option<u64>,
        /// Claude Code's name of the error (`server_error`, `overloaded`).
        error: String,
    },
    /// Another `system` event.
    System {
        /// Its `subtype`.
        subtype: String,
    },
    /// An `assistant` message (or part of one: blocks of one message may
    /// come in several events carrying the same id).
    Assistant(Assistant),
    /// A `user` event: the results of tool calls.
    ToolResults(Vec<ToolResult>),
    /// The final `result` object.
    Result(Box<Outcome>),
    /// An object of another type.
    Other {
        /// Its `type` (empty when it has none).
        kind: String,
    },
}

/// What `system`/`init` says.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Init {
    /// `claude_code_version`.
    pub version: Option<String>,
    /// The model.
    pub model: String,
    /// The tools available to the model.
    pub tools: Vec<String>,
    /// `permissionMode`.
    pub permission_mode: String,
    /// The session.
    pub session_id: String,
}

/// An assistant message's blocks.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Assistant {
    /// The message id (blocks of one message share it).
    pub id: String,
    /// The session.
    pub session_id: String,
    /// Written by a subagent (it has a `parent_tool_use_id`).
    pub subagent: bool,
    /// A message Claude Code made up to report an API error.
    pub api_error: bool,
    /// Its blocks.
    pub blocks: Vec<Block>,
}

impl Assistant {
    /// The message's text blocks, joined.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .blocks
            .iter()
            .filter_map(|b| match b {
                Block::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        texts.join("\n")
    }
}

/// One content block.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// Text for the person (or the answer).
    Text(String),
    /// The model's thinking (its text, when shown).
    Thinking(String),
    /// A tool call.
    ToolUse {
        /// Its id.
        id: String,
        /// The tool.
        name: String,
        /// Its input.
        input: Value,
    },
    /// Another kind of block.
    Other(String),
}

/// The result of one tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// The call it answers.
    pub id: String,
    /// What the tool returned, as text.
    pub text: String,
    /// The tool failed (or was refused).
    pub is_error: bool,
}

/// The final `result` object.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Outcome {
    /// `success`, `error_max_turns`, `error_during_execution`, ...
    pub subtype: String,
    /// `is_error`.
    pub is_error: bool,
    /// `result`: the final answer, or the error's text.
    pub text: String,
    /// `errors`, when the subtype is an error.
    pub errors: Vec<String>,
    /// The session.
    pub session_id: String,
    /// `terminal_reason`, when given.
    pub terminal_reason: String,
    /// `api_error_status`, when given.
    pub api_error_status: Option<u64>,
    /// Input tokens (plain, cache creation and cache read summed).
    pub tokens_in: Option<u64>,
    /// Output tokens.
    pub tokens_out: Option<u64>,
    /// `total_cost_usd`.
    pub cost_usd: Option<f64>,
    /// `num_turns`.
    pub turns: Option<u64>,
    /// `duration_ms`.
    pub duration_ms: Option<u64>,
    /// The tool calls the permission rules refused: (tool, what it was asked).
    pub denials: Vec<(String, String)>,
}

/// Reads one object of the stream.
pub fn event(v: &Value) -> Event {
    match str_at(v, "type") {
        "system" => match str_at(v, "subtype") {
            "init" => Event::Init(Init {
                version: v
                    .get("claude_code_version")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                model: str_at(v, "model").to_string(),
                tools: crate::util::json_strings(v.get("tools")),
                permission_mode: str_at(v, "permissionMode").to_string(),
                session_id: str_at(v, "session_id").to_string(),
            }),
            "api_retry" => Event::Retry {
                attempt: u64_at(v, "attempt").unwrap_or(0),
                max: u64_at(v, "max_retries"),
                status: u64_at(v, "error_status"),
                error: str_at(v, "error").to_string(),
            },
            other => Event::System {
                subtype: other.to_string(),
            },
        },
        "assistant" => {
            let m = v.get("message").unwrap_or(&Value::Null);
            Event::Assistant(Assistant {
                id: str_at(m, "id").to_string(),
                session_id: str_at(v, "session_id").to_string(),
                subagent: v.get("parent_tool_use_id").is_some_and(|p| !p.is_null()),
                api_error: v.get("is_api_error_message").and_then(Value::as_bool) == Some(true),
                blocks: content(m).iter().map(block).collect(),
            })
        }
        "user" => {
            let m = v.get("message").unwrap_or(&Value::Null);
            Event::ToolResults(
                content(m)
                    .iter()
                    .filter(|b| str_at(b, "type") == "tool_result")
                    .map(|b| ToolResult {
                        id: str_at(b, "tool_use_id").to_string(),
                        text: result_text(b.get("content")),
                        is_error: b.get("is_error").and_then(Value::as_bool) == Some(true),
                    })
                    .collect(),
            )
        }
        "result" => Event::Result(Box::new(outcome(v))),
        other => Event::Other {
            kind: other.to_string(),
        },
    }
}

fn outcome(v: &Value) -> Outcome {
    let usage = v.get("usage").unwrap_or(&Value::Null);
    let tokens_in = [
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ]
    .iter()
    .filter_map(|k| u64_at(usage, k))
    .reduce(|a, b| a.saturating_add(b));
    let denials = v
        .get("permission_denials")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|d| {
                    let tool = str_at(d, "tool_name").to_string();
                    let input = d.get("tool_input").unwrap_or(&Value::Null);
                    let asked = tool_target(&tool, input);
                    (tool, asked)
                })
                .collect()
        })
        .unwrap_or_default();
    Outcome {
        subtype: str_at(v, "subtype").to_string(),
        is_error: v.get("is_error").and_then(Value::as_bool) == Some(true),
        text: str_at(v, "result").to_string(),
        errors: crate::util::json_strings(v.get("errors")),
        session_id: str_at(v, "session_id").to_string(),
        terminal_reason: str_at(v, "terminal_reason").to_string(),
        api_error_status: u64_at(v, "api_error_status"),
        tokens_in,
        tokens_out: u64_at(usage, "output_tokens"),
        cost_usd: v.get("total_cost_usd").and_then(Value::as_f64),
        turns: u64_at(v, "num_turns"),
        duration_ms: u64_at(v, "duration_ms"),
        denials,
    }
}

fn content(message: &Value) -> &[Value] {
    message
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn block(b: &Value) -> Block {
    match str_at(b, "type") {
        "text" => Block::Text(str_at(b, "text").to_string()),
        "thinking" => Block::Thinking(str_at(b, "thinking").to_string()),
        "redacted_thinking" => Block::Thinking(String::new()),
        "tool_use" | "server_tool_use" => Block::ToolUse {
            id: str_at(b, "id").to_string(),
            name: str_at(b, "name").to_string(),
            input: b.get("input").cloned().unwrap_or(Value::Null),
        },
        other => Block::Other(other.to_string()),
    }
}

/// A tool result's content as text: a string, or the text blocks of a list.
fn result_text(c: Option<&Value>) -> String {
    match c {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A retried API call in a few words: `2/10 after 529 overloaded`.
pub fn retry_text(attempt: u64, max: Option<u64>, status: Option<u64>, error: &str) -> String {
    let of = max.map(|m| format!("/{m}")).unwrap_or_default();
    let st = status.map(|s| format!("{s} ")).unwrap_or_default();
    format!("{attempt}{of} after {st}{error}")
}

/// What a tool call is about, in a few words: the command of `Bash`, the
/// path of the file tools, the pattern of the search tools, the URL of the
/// web tools; else the input as compact JSON.
pub fn tool_target(name: &str, input: &Value) -> String {
    let key = match name {
        "Bash" | "PowerShell" => "command",
        "Read" | "Write" | "Edit" | "MultiEdit" => "file_path",
        "NotebookEdit" => "notebook_path",
        "Grep" | "Glob" => "pattern",
        "WebFetch" => "url",
        "WebSearch" => "query",
        "Agent" | "Task" => "description",
        _ => "",
    };
    match input.get(key).and_then(Value::as_str) {
        Some(s) if !key.is_empty() => s.to_string(),
        _ => match input {
            Value::Null => String::new(),
            other => other.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_events_loopwatch_reads() {
        let init = json!({"type":"system","subtype":"init","claude_code_version":"2.1.332",
            "model":"m","tools":["Read","Bash"],"permissionMode":"dontAsk","session_id":"s"});
        let Event::Init(i) = event(&init) else {
            panic!("init")
        };
        assert_eq!(i.version.as_deref(), Some("2.1.332"));
        assert_eq!(i.tools, ["Read", "Bash"]);
        assert_eq!(i.permission_mode, "dontAsk");
        let retry = json!({"type":"system","subtype":"api_retry","attempt":2,"max_retries":10,
            "error_status":529,"error":"overloaded"});
        assert_eq!(
            event(&retry),
            Event::Retry {
                attempt: 2,
                max: Some(10),
                status: Some(529),
                error: "overloaded".into()
            }
        );
        let a = json!({"type":"assistant","session_id":"s","parent_tool_use_id":null,
            "message":{"id":"m1","content":[{"type":"text","text":"hi"},
            {"type":"tool_use","id":"t1","name":"Bash","input":{"command":"cargo test"}}]}});
        let Event::Assistant(m) = event(&a) else {
            panic!("assistant")
        };
        assert!(!m.subagent && !m.api_error);
        assert_eq!(m.text(), "hi");
        assert_eq!(
            tool_target("Bash", &json!({"command":"cargo test"})),
            "cargo test"
        );
        let u = json!({"type":"user","message":{"content":[{"type":"tool_result",
            "tool_use_id":"t1","content":[{"type":"text","text":"ok"}],"is_error":true}]}});
        assert_eq!(
            event(&u),
            Event::ToolResults(vec![ToolResult {
                id: "t1".into(),
                text: "ok".into(),
                is_error: true
            }])
        );
        let r = json!({"type":"result","subtype":"success","is_error":true,"result":"API Error: 500",
            "usage":{"input_tokens":1,"cache_read_input_tokens":2,"output_tokens":3},
            "total_cost_usd":0.5,"permission_denials":[{"tool_name":"Bash","tool_input":{"command":"touch x"}}]});
        let Event::Result(o) = event(&r) else {
            panic!("result")
        };
        assert!(o.is_error);
        assert_eq!(
            (o.tokens_in, o.tokens_out, o.cost_usd),
            (Some(3), Some(3), Some(0.5))
        );
        assert_eq!(o.denials, [("Bash".to_string(), "touch x".to_string())]);
        assert_eq!(
            event(&json!({"type":"stream_event"})),
            Event::Other {
                kind: "stream_event".into()
            }
        );
    }
}
