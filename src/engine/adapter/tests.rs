//! The adapters' command lines, and their answers read from sessions
//! recorded from the real CLIs (`tests/fixtures/engine/`, see its README).

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
