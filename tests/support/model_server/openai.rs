//! The OpenAI Responses API as Codex uses it: a streamed reply is
//! `response.created`, one `response.output_item.done` per output item (an
//! assistant `message` with `output_text`, a `function_call` whose
//! arguments are a JSON string, or a `custom_tool_call` of a freeform tool
//! such as `apply_patch`), then `response.completed` with the usage.
//! Errors are `{"error":{"message","type","code"}}`.

use std::net::TcpStream;

use serde_json::{Value, json};

use super::http::{self, EventStream};
use super::{ModelRequest, Reply};

pub fn answer(conn: &TcpStream, req: &ModelRequest, reply: &Reply, usage: (u64, u64), n: usize) {
    let _ = req;
    let id = format!("resp_scripted_{n}");
    let (text, calls, cut) = match reply {
        Reply::Status { code, message } => {
            let (kind, code_name) = match code {
                401 => ("invalid_request_error", "invalid_api_key"),
                429 => ("rate_limit_exceeded", "rate_limit_exceeded"),
                _ => ("server_error", "server_error"),
            };
            let body = json!({"error":{"message":message,"type":kind,"code":code_name}});
            return http::reply(
                conn,
                *code,
                &[],
                "application/json",
                body.to_string().as_bytes(),
            );
        }
        Reply::Text(t) => (t.clone(), Vec::new(), false),
        Reply::Tools(t, c) => (t.clone(), c.clone(), false),
        Reply::Cut(t) => (t.clone(), Vec::new(), true),
    };
    let mut s = EventStream::start(conn);
    s.event(
        "response.created",
        &json!({"type":"response.created","response":{"id":id,"status":"in_progress"}}),
    );
    if cut {
        if !text.is_empty() {
            s.event(
                "response.output_text.delta",
                &json!({"type":"response.output_text.delta","item_id":format!("msg_{n}"),"output_index":0,"content_index":0,"delta":text}),
            );
        }
        return s.cut();
    }
    let mut items: Vec<Value> = Vec::new();
    if !text.is_empty() {
        items.push(
            json!({"type":"message","role":"assistant","id":format!("msg_{n}"),
            "status":"completed","content":[{"type":"output_text","text":text,"annotations":[]}]}),
        );
    }
    for (i, c) in calls.iter().enumerate() {
        // A string input is a call of a freeform (custom) tool, such as
        // Codex's `apply_patch`; an object, a function's arguments.
        items.push(match &c.input {
            Value::String(text) => json!({"type":"custom_tool_call","id":format!("ctc_{n}_{i}"),
                "status":"completed","name":c.name,"input":text,"call_id":format!("call_{n}_{i}")}),
            args => json!({"type":"function_call","id":format!("fc_{n}_{i}"),"status":"completed",
                "name":c.name,"arguments":args.to_string(),"call_id":format!("call_{n}_{i}")}),
        });
    }
    for (i, it) in items.iter().enumerate() {
        s.event(
            "response.output_item.done",
            &json!({"type":"response.output_item.done","output_index":i,"item":it}),
        );
    }
    s.event(
        "response.completed",
        &json!({"type":"response.completed","response":{"id":id,"status":"completed",
            "usage":{"input_tokens":usage.0,"input_tokens_details":{"cached_tokens":0},
            "output_tokens":usage.1,"output_tokens_details":{"reasoning_tokens":0},
            "total_tokens":usage.0 + usage.1}}}),
    );
    s.finish();
}

/// (call_id, output) of every function result in the input.
pub fn tool_results(body: &Value) -> Vec<(String, String)> {
    body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["type"] == "function_call_output" || i["type"] == "custom_tool_call_output")
        .map(|i| {
            let out = match &i["output"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (i["call_id"].as_str().unwrap_or_default().to_string(), out)
        })
        .collect()
}

pub fn system_text(body: &Value) -> String {
    let mut out = body["instructions"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    for m in messages(body, "developer").chain(messages(body, "system")) {
        out.push('\n');
        out.push_str(&m);
    }
    out
}

pub fn user_text(body: &Value) -> String {
    messages(body, "user").collect::<Vec<_>>().join("\n")
}

fn messages<'a>(body: &'a Value, role: &'a str) -> impl Iterator<Item = String> + 'a {
    body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(move |i| i["type"] == "message" && i["role"] == role)
        .map(|i| {
            i["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
}
