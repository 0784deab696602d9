//! Claude Code's headless mode: `claude -p --output-format stream-json
//! --verbose`, the inputs as the prompt on stdin, the agent's instructions
//! appended to Claude Code's system prompt from a file
//! (`--append-system-prompt-file`: Claude Code keeps its own tool-use
//! instructions). The answer is read by `claude_answer`.
//!
//! What a role may do is the set of tools itself (`--tools`), not only
//! which ones are approved:
//! - read-only roles (verifier, auditor, reviewer, finding verifier):
//!   `Read`, `Grep`, `Glob`, and `Bash` approved for the test command alone
//!   (`--permission-mode dontAsk` refuses every other command rather than
//!   asking); no edit, worktree, web, subagent, skill or scheduling tool
//!   exists in the session; no MCP server (`--strict-mcp-config`); only the
//!   user's settings are read (`--setting-sources user`), so a settings file
//!   the developer wrote in the worktree cannot widen them;
//! - edit roles (developer, triage, verify-by-test): the file tools and
//!   `Bash`, edits accepted (`--permission-mode acceptEdits`); no worktree,
//!   web, subagent, skill or scheduling tool either: the agent works in the
//!   loop's worktree and nowhere else.

use super::{Invocation, Request, build_env, may_edit};

/// The tools of a read-only session (Bash only when there is a test command).
const READ_TOOLS: [&str; 3] = ["Read", "Grep", "Glob"];
/// The tools of an edit session.
const EDIT_TOOLS: [&str; 7] = [
    "Read",
    "Grep",
    "Glob",
    "Bash",
    "Edit",
    "Write",
    "NotebookEdit",
];
/// Refused as well, in case a setting adds them back: editing, worktrees
/// and branches, the web, subagents, skills and workflows, scheduling.
const NEVER_READ_ONLY: &str = "Edit,Write,NotebookEdit,EnterWorktree,ExitWorktree,Agent,Task,WebFetch,WebSearch,Skill,Workflow,CronCreate,CronDelete,ScheduleWakeup";

/// The git commands a read-only role may run (with any arguments).
pub const READ_ONLY_GIT: [&str; 4] = ["git diff", "git status", "git log", "git show"];

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
    // What the budget leaves: Claude Code stops itself there too.
    if let Some(usd) = req.max_budget_usd.filter(|u| u.is_finite() && *u > 0.0) {
        args.extend(["--max-budget-usd".into(), format!("{usd:.4}")]);
    }
    // Instructions in a file are the system prompt's end; without a file
    // they lead the prompt on stdin (never argv: they may be large).
    let stdin = match (req.instructions(), req.instructions_file) {
        (Some(_), Some(file)) => {
            args.extend([
                "--append-system-prompt-file".into(),
                file.display().to_string(),
            ]);
            req.inputs.to_string()
        }
        _ => req.full_text(),
    };
    let mut env = Vec::new();
    if may_edit(req.agent.role) {
        let tools = EDIT_TOOLS.join(",");
        args.extend([
            "--tools".into(),
            tools.clone(),
            "--allowedTools".into(),
            tools,
            "--permission-mode".into(),
            "acceptEdits".into(),
        ]);
    } else {
        let test = req.test.trim();
        let mut tools: Vec<String> = READ_TOOLS.iter().map(|t| t.to_string()).collect();
        let mut allowed = tools.clone();
        // Bash for the test command and the git commands that only read
        // (the role files tell a read-only role to look at the change with
        // them); anything else is refused by `dontAsk`, and what a read-only
        // role changes anyway is found and put back after its dispatch.
        tools.push("Bash".into());
        if !test.is_empty() {
            allowed.push(format!("Bash({test})"));
        }
        allowed.extend(READ_ONLY_GIT.iter().map(|g| format!("Bash({g}:*)")));
        args.extend([
            "--tools".into(),
            tools.join(","),
            "--allowedTools".into(),
            allowed.join(","),
            "--disallowedTools".into(),
            NEVER_READ_ONLY.into(),
            "--permission-mode".into(),
            "dontAsk".into(),
            "--strict-mcp-config".into(),
            "--setting-sources".into(),
            "user".into(),
        ]);
        if let Some(dir) = req.build_dir {
            env = build_env(dir);
        }
    }
    Invocation {
        program: req.agent.command.clone().into(),
        args: args.into_iter().map(Into::into).collect(),
        stdin: stdin.into_bytes(),
        env,
    }
}
