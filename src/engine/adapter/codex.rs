//! Codex CLI: `codex exec --json`, the instructions then the inputs as the
//! prompt on stdin (`-`), the sandbox by role (read-only for the verifier
//! and auditor, workspace-write for the developer). The answer is the text
//! of the last completed `agent_message` item; usage is the sum over the
//! `turn.completed` events; Codex reports no cost.

use serde_json::Value;

use super::{Answer, Invocation, Request, json_lines, may_edit};

/// The `codex exec` command line of a dispatch.
pub fn invocation(req: &Request<'_>) -> Invocation {
    let mut args: Vec<String> = vec!["exec".into(), "--json".into()];
    args.extend([
        "--sandbox".into(),
        if may_edit(req.agent.role) {
            "workspace-write"
        } else {
            "read-only"
        }
        .into(),
    ]);
    if let Some(m) = &req.agent.model {
        args.extend(["-m".into(), m.clone()]);
    }
    args.extend(["-C".into(), req.worktree.display().to_string(), "-".into()]);
    Invocation {
        program: req.agent.command.clone().into(),
        args: args.into_iter().map(Into::into).collect(),
        stdin: req.full_text().into_bytes(),
    }
}

/// The last agent message and the summed usage of a `--json` session.
pub fn answer(stdout: &[u8]) -> Answer {
    let (objects, _) = json_lines(stdout);
    let mut a = Answer::default();
    let mut text: Option<&str> = None;
    let mut failure: Option<String> = None;
    for o in &objects {
        match o.get("type").and_then(Value::as_str) {
            Some("item.completed") => {
                let item = o.get("item");
                if item.and_then(|i| i.get("type")).and_then(Value::as_str) == Some("agent_message")
                {
                    text = item.and_then(|i| i.get("text")).and_then(Value::as_str);
                }
            }
            Some("turn.completed") => {
                let u = o.get("usage");
                let n = |k: &str| u.and_then(|u| u.get(k)).and_then(Value::as_u64);
                if let Some(i) = n("input_tokens") {
                    a.tokens_in = Some(a.tokens_in.unwrap_or(0) + i);
                }
                if let Some(out) = n("output_tokens") {
                    a.tokens_out = Some(a.tokens_out.unwrap_or(0) + out);
                }
            }
            Some("turn.failed") => {
                failure = Some(
                    o.pointer("/error/message")
                        .and_then(Value::as_str)
                        .unwrap_or("turn failed")
                        .to_string(),
                );
            }
            Some("error") => {
                failure = Some(
                    o.get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("error")
                        .to_string(),
                );
            }
            _ => {}
        }
    }
    match text {
        Some(t) => a.text = t.as_bytes().to_vec(),
        None => a.error = Some("no completed agent_message in the --json output".into()),
    }
    if let Some(f) = failure {
        a.error = Some(format!("Codex reported: {f}"));
    }
    a
}
