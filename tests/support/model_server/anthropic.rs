//! The Anthropic Messages API as Claude Code uses it: a streamed reply is
//! `message_start`, per block `content_block_start` / `_delta` / `_stop`
//! (text deltas, tool input as `input_json_delta`), then `message_delta`
//! (stop reason, output tokens) and `message_stop`. Errors are
//! `{"type":"error","error":{"type","message"}}`.

use std::net::TcpStream;

use serde_json::{Value, json};

use super::http::{self, EventStream};
use super::{ModelRequest, Reply};

pub fn answer(conn: &TcpStream, req: &ModelRequest, reply: &Reply, usage: (u64, u64), n: usize) {
    let model = req.body["model"].as_str().unwrap_or("claude-scripted");
    let streamed = req.body["stream"].as_bool() == Some(true);
    let (code, message) = match reply {
        Reply::Status { code, message } => (*code, message.as_str()),
        _ => (200, ""),
    };
    if code != 200 {
        let kind = match code {
            401 => "authentication_error",
            403 => "permission_error",
            429 => "rate_limit_error",
            529 => "overloaded_error",
            _ => "api_error",
        };
        let body = json!({"type":"error","error":{"type":kind,"message":message}});
        return http::reply(
            conn,
            code,
            &[],
            "application/json",
            body.to_string().as_bytes(),
        );
    }
    let (text, calls, cut) = match reply {
        Reply::Text(t) => (t.clone(), Vec::new(), false),
        Reply::Tools(t, c) => (t.clone(), c.clone(), false),
        Reply::Cut(t) => (t.clone(), Vec::new(), true),
        Reply::Status { .. } => unreachable!("handled above"),
    };
    let id = format!("msg_scripted_{n}");
    let stop = if calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    let mut blocks: Vec<Value> = Vec::new();
    if !text.is_empty() {
        blocks.push(json!({"type":"text","text":text}));
    }
    for (i, c) in calls.iter().enumerate() {
        blocks.push(
            json!({"type":"tool_use","id":format!("toolu_{n}_{i}"),"name":c.name,"input":c.input}),
        );
    }
    if !streamed {
        let body = json!({"id":id,"type":"message","role":"assistant","model":model,
            "content":blocks,"stop_reason":stop,"stop_sequence":null,
            "usage":{"input_tokens":usage.0,"output_tokens":usage.1}});
        return http::reply(
            conn,
            200,
            &[],
            "application/json",
            body.to_string().as_bytes(),
        );
    }
    let mut s = EventStream::start(conn);
    s.event(
        "message_start",
        &json!({"type":"message_start","message":{"id":id,"type":"message","role":"assistant",
            "model":model,"content":[],"stop_reason":null,"stop_sequence":null,
            "usage":{"input_tokens":usage.0,"output_tokens":1}}}),
    );
    for (i, b) in blocks.iter().enumerate() {
        let start = if b["type"] == "text" {
            json!({"type":"text","text":""})
        } else {
            json!({"type":"tool_use","id":b["id"],"name":b["name"],"input":{}})
        };
        s.event(
            "content_block_start",
            &json!({"type":"content_block_start","index":i,"content_block":start}),
        );
        let delta = if b["type"] == "text" {
            json!({"type":"text_delta","text":b["text"]})
        } else {
            json!({"type":"input_json_delta","partial_json":b["input"].to_string()})
        };
        s.event(
            "content_block_delta",
            &json!({"type":"content_block_delta","index":i,"delta":delta}),
        );
        if cut {
            return s.cut();
        }
        s.event(
            "content_block_stop",
            &json!({"type":"content_block_stop","index":i}),
        );
    }
    if cut {
        return s.cut();
    }
    s.event(
        "message_delta",
        &json!({"type":"message_delta","delta":{"stop_reason":stop,"stop_sequence":null},
            "usage":{"output_tokens":usage.1}}),
    );
    s.event("message_stop", &json!({"type":"message_stop"}));
    s.finish();
}

/// (tool_use_id, text) of every tool result in the conversation.
pub fn tool_results(body: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for m in body["messages"].as_array().into_iter().flatten() {
        for b in m["content"].as_array().into_iter().flatten() {
            if b["type"] == "tool_result" {
                let text = match &b["content"] {
                    Value::String(s) => s.clone(),
                    Value::Array(a) => a
                        .iter()
                        .filter_map(|x| x["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n"),
                    _ => String::new(),
                };
                out.push((b["tool_use_id"].as_str().unwrap_or_default().into(), text));
            }
        }
    }
    out
}

pub fn system_text(body: &Value) -> String {
    let mut out = match &body["system"] {
        Value::String(s) => s.clone(),
        Value::Array(a) => a
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    // Claude Code puts part of its context in system-role messages.
    for m in body["messages"].as_array().into_iter().flatten() {
        if m["role"] == "system" {
            out.push('\n');
            out.push_str(&content_text(&m["content"]));
        }
    }
    out
}

pub fn user_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "user")
        .map(|m| content_text(&m["content"]))
        .collect::<Vec<_>>()
        .join("\n")
}

fn content_text(c: &Value) -> String {
    match c {
        Value::String(s) => s.clone(),
        Value::Array(a) => a
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}
