//! Claude Code's headless mode: `claude -p --output-format stream-json
//! --verbose`, the inputs as the prompt on stdin, the agent's instructions
//! appended to Claude Code's system prompt (which keeps its own tool-use
//! instructions), and the tools allowed by role: the verifier and auditor
//! read and may run the tests, the developer may edit. The answer is the
//! `result` of the final `{"type":"result"}` object, with its `usage` and
//! `total_cost_usd`.

use serde_json::Value;

use super::{Answer, Invocation, Request, json_lines, may_edit};

/// The `claude` command line of a dispatch.
pub fn invocation(req: &Request<'_>) -> Invocation {
    let mut args: Vec<String> = vec![
        "-p".into(),
        "--output-format".into(),
        "stream-json".into(),
        "--verbose".into(),
    ];
    if let Some(m) = &req.agent.model {
        args.extend(["--model".into(), m.clone()]);
    }
    if let Some(i) = req.instructions.filter(|i| !i.trim().is_empty()) {
        args.extend(["--append-system-prompt".into(), i.to_string()]);
    }
    if may_edit(req.agent.role) {
        args.extend([
            "--permission-mode".into(),
            "acceptEdits".into(),
            "--allowedTools".into(),
            "Read,Grep,Glob,Edit,Write,Bash".into(),
        ]);
    } else {
        let mut allowed = "Read,Grep,Glob".to_string();
        if !req.test.trim().is_empty() {
            allowed.push_str(&format!(",Bash({}:*)", req.test.trim()));
        }
        args.extend([
            "--allowedTools".into(),
            allowed,
            "--disallowedTools".into(),
            "Edit,Write,NotebookEdit".into(),
        ]);
    }
    Invocation {
        program: req.agent.command.clone().into(),
        args: args.into_iter().map(Into::into).collect(),
        stdin: req.inputs.as_bytes().to_vec(),
    }
}

/// The final result object of a stream-json session.
pub fn answer(stdout: &[u8]) -> Answer {
    let (objects, _) = json_lines(stdout);
    let Some(result) = objects
        .iter()
        .rev()
        .find(|o| o.get("type").and_then(Value::as_str) == Some("result"))
    else {
        return Answer {
            error: Some("no final `result` object in the stream-json output".into()),
            ..Answer::default()
        };
    };
    let usage = result.get("usage");
    let n = |k: &str| usage.and_then(|u| u.get(k)).and_then(Value::as_u64);
    let tokens_in = [
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ]
    .iter()
    .filter_map(|k| n(k))
    .reduce(|a, b| a + b);
    let mut a = Answer {
        text: result
            .get("result")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .as_bytes()
            .to_vec(),
        tokens_in,
        tokens_out: n("output_tokens"),
        cost_usd: result.get("total_cost_usd").and_then(Value::as_f64),
        error: None,
    };
    let is_error = result.get("is_error").and_then(Value::as_bool) == Some(true);
    let subtype = result.get("subtype").and_then(Value::as_str).unwrap_or("");
    if is_error || (subtype != "success" && !subtype.is_empty()) {
        a.error = Some(format!(
            "Claude Code ended with {}",
            if subtype.is_empty() {
                "an error"
            } else {
                subtype
            }
        ));
    }
    a
}
