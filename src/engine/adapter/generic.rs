//! The generic adapter: `sh -c <command>`, the whole input (instructions,
//! then inputs) on stdin and in `$LW_INPUT_FILE`, the answer on stdout.

use super::{Answer, Invocation, Request};

/// `sh -c <command>` with the full text on stdin.
pub fn invocation(req: &Request<'_>) -> Invocation {
    Invocation {
        program: "sh".into(),
        args: vec!["-c".into(), req.agent.command.clone().into()],
        stdin: req.full_text().into_bytes(),
        env: Vec::new(),
    }
}

/// Stdout as it is; a generic agent reports no usage.
pub fn answer(stdout: &[u8]) -> Answer {
    Answer {
        text: stdout.to_vec(),
        ..Answer::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::config::{AdapterKind, AgentConfig};
    use crate::model::event::AgentRole;

    #[test]
    fn the_command_runs_under_sh_with_instructions_then_inputs() {
        let agent = AgentConfig {
            role: AgentRole::Verifier,
            command: "my-verifier --strict".into(),
            adapter: AdapterKind::Generic,
            prompt_file: None,
            model: None,
            timeout: std::time::Duration::from_secs(1),
            max_concurrency: 1,
        };
        let req = Request {
            agent: &agent,
            instructions: Some("You verify.\n"),
            instructions_file: None,
            inputs: "CONTRACT: c.md\n",
            test: "",
            worktree: std::path::Path::new("/w"),
            build_dir: None,
            max_budget_usd: None,
        };
        let inv = invocation(&req);
        assert_eq!(inv.program, "sh");
        assert_eq!(inv.args, vec!["-c", "my-verifier --strict"]);
        assert_eq!(inv.stdin, b"You verify.\n\nCONTRACT: c.md\n");
        assert_eq!(answer(b"VERIFY").text, b"VERIFY");
        assert_eq!(answer(b"x").tokens_in, None);
    }
}
