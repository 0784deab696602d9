//! Adapters turn (role, instructions, inputs) into a command line and its
//! stdin, and the agent's stdout into an answer and its usage. The generic
//! adapter is the contract everything else reduces to: the input on stdin,
//! the answer on stdout.

mod claude;
mod codex;
mod generic;

use std::ffi::OsString;

use super::config::{AdapterKind, AgentConfig};
use crate::model::event::AgentRole;

/// What one dispatch hands an adapter.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The agent's configuration.
    pub agent: &'a AgentConfig,
    /// The agent's own instructions (its prompt file), when it has some.
    pub instructions: Option<&'a str>,
    /// The inputs the loop names for this dispatch.
    pub inputs: &'a str,
    /// The run's test command (the read-only roles may run it).
    pub test: &'a str,
    /// The worktree the agent works in.
    pub worktree: &'a std::path::Path,
}

impl Request<'_> {
    /// Instructions first, then the inputs: what a generic agent reads.
    pub fn full_text(&self) -> String {
        match self.instructions {
            Some(i) if !i.trim().is_empty() => format!("{}\n\n{}", i.trim_end(), self.inputs),
            _ => self.inputs.to_string(),
        }
    }
}

/// The process to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The program.
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// What is written to its stdin (then stdin is closed).
    pub stdin: Vec<u8>,
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
    /// Why no usable answer came, when none did.
    pub error: Option<String>,
}

/// The command line of a dispatch.
pub fn invocation(req: &Request<'_>) -> Invocation {
    match req.agent.adapter {
        AdapterKind::Generic => generic::invocation(req),
        AdapterKind::Claude => claude::invocation(req),
        AdapterKind::Codex => codex::invocation(req),
    }
}

/// The answer in an agent's stdout.
pub fn answer(kind: AdapterKind, stdout: &[u8]) -> Answer {
    match kind {
        AdapterKind::Generic => generic::answer(stdout),
        AdapterKind::Claude => claude::answer(stdout),
        AdapterKind::Codex => codex::answer(stdout),
    }
}

/// True for the roles that may change the worktree.
pub fn may_edit(role: AgentRole) -> bool {
    matches!(
        role,
        AgentRole::Developer | AgentRole::VerifyByTest | AgentRole::Triage
    )
}

/// The JSON objects of a JSON-lines stream; other lines are skipped and counted.
fn json_lines(stdout: &[u8]) -> (Vec<serde_json::Value>, usize) {
    let mut out = Vec::new();
    let mut skipped = 0;
    for line in stdout.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<serde_json::Value>(line) {
            Ok(v @ serde_json::Value::Object(_)) => out.push(v),
            _ => skipped += 1,
        }
    }
    (out, skipped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::config::AgentConfig;

    fn agent(role: AgentRole, adapter: AdapterKind) -> AgentConfig {
        AgentConfig {
            role,
            command: adapter.as_str().into(),
            adapter,
            prompt_file: None,
            model: Some("sonnet".into()),
            timeout: std::time::Duration::from_secs(1),
            max_concurrency: 1,
        }
    }

    fn args(inv: &Invocation) -> Vec<String> {
        inv.args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn claude_reads_the_final_result_object() {
        let session = include_bytes!("../../../tests/fixtures/engine/claude-verifier.jsonl");
        let a = answer(AdapterKind::Claude, session);
        assert_eq!(a.error, None);
        assert!(String::from_utf8_lossy(&a.text).contains("**VERIFY — VERDICT:** CONFORME"));
        assert_eq!(a.tokens_in, Some(3500 + 800 + 1200));
        assert_eq!(a.tokens_out, Some(350));
        assert_eq!(a.cost_usd, Some(0.04215));
        let failed = br#"{"type":"result","subtype":"error_max_turns","is_error":true,"result":"","usage":{"input_tokens":5,"output_tokens":1},"total_cost_usd":0.001}"#;
        let a = answer(AdapterKind::Claude, failed);
        assert_eq!(
            a.error.as_deref(),
            Some("Claude Code ended with error_max_turns")
        );
        assert_eq!(a.cost_usd, Some(0.001));
        assert!(answer(AdapterKind::Claude, b"not json\n").error.is_some());
    }

    #[test]
    fn claude_tools_follow_the_role() {
        let v = agent(AgentRole::Verifier, AdapterKind::Claude);
        let req = Request {
            agent: &v,
            instructions: Some("Verify."),
            inputs: "CONTRACT: c\n",
            test: "cargo test",
            worktree: std::path::Path::new("/w"),
        };
        let inv = invocation(&req);
        let a = args(&inv);
        assert_eq!(
            &a[..4],
            ["-p", "--output-format", "stream-json", "--verbose"]
        );
        let after = |k: &str| a[a.iter().position(|x| x == k).unwrap() + 1].clone();
        assert_eq!(after("--model"), "sonnet");
        assert_eq!(after("--append-system-prompt"), "Verify.");
        assert_eq!(after("--allowedTools"), "Read,Grep,Glob,Bash(cargo test:*)");
        assert_eq!(after("--disallowedTools"), "Edit,Write,NotebookEdit");
        assert_eq!(inv.stdin, b"CONTRACT: c\n");
        let d = agent(AgentRole::Developer, AdapterKind::Claude);
        let a = args(&invocation(&Request { agent: &d, ..req }));
        assert!(
            a.windows(2)
                .any(|w| w == ["--permission-mode", "acceptEdits"]),
            "{a:?}"
        );
        assert!(!a.contains(&"--disallowedTools".to_string()));
    }

    #[test]
    fn codex_reads_the_last_agent_message_and_sums_turns() {
        let session = include_bytes!("../../../tests/fixtures/engine/codex-auditor.jsonl");
        let a = answer(AdapterKind::Codex, session);
        assert_eq!(a.error, None);
        assert!(a.text.starts_with(b"SECURITY \xE2\x80\x94 VERDICT: PASS"));
        assert_eq!(a.tokens_in, Some(11100));
        assert_eq!(a.tokens_out, Some(600));
        assert_eq!(a.cost_usd, None);
        let failed = br#"{"type":"turn.failed","error":{"message":"stream disconnected"}}"#;
        assert_eq!(
            answer(AdapterKind::Codex, failed).error.as_deref(),
            Some("Codex reported: stream disconnected")
        );
    }

    #[test]
    fn codex_sandbox_follows_the_role() {
        let v = agent(AgentRole::Auditor, AdapterKind::Codex);
        let req = Request {
            agent: &v,
            instructions: Some("Audit."),
            inputs: "MODE: gate\n",
            test: "",
            worktree: std::path::Path::new("/w"),
        };
        let inv = invocation(&req);
        assert_eq!(
            args(&inv),
            [
                "exec",
                "--json",
                "--sandbox",
                "read-only",
                "-m",
                "sonnet",
                "-C",
                "/w",
                "-"
            ]
        );
        assert_eq!(inv.stdin, b"Audit.\n\nMODE: gate\n");
        let d = agent(AgentRole::Developer, AdapterKind::Codex);
        assert!(
            args(&invocation(&Request { agent: &d, ..req }))
                .contains(&"workspace-write".to_string())
        );
    }
}
