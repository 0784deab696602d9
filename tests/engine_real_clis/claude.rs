//! Claude Code (`claude -p --output-format stream-json`) in whole runs.

use std::time::Instant;

use serde_json::json;

use crate::kit::*;
use crate::support::engine::git;
use crate::support::model_server::{Reply, Script, ToolCall, Turn};

const ROLES: [&str; 3] = ["developer", "verifier", "auditor"];

/// The developer's two turns: Claude Code's Write tool, then its summary.
fn developer(root: &std::path::Path) -> Script {
    Script::new()
        .then(write_total(root))
        .then(Turn::text("Implemented the total with cents.").expect(result_holds("total.txt")))
}

#[test]
#[cfg_attr(
    not(loopwatch_clis),
    ignore = "needs the real Claude Code CLI: .ci/run installs it into target/clis (CI runs this)"
)]
fn a_claude_run_edits_through_its_tools_runs_the_tests_and_passes() {
    let _s = crate::support::serial();
    let mut agents = agents("claude", &ROLES, "3m");
    // The verifier's instructions: in Claude Code's system prompt.
    agents = agents.replacen(
        "[agents.verifier]\n",
        "[agents.verifier]\nprompt_file = \"../agents/verifier.md\"\n",
        1,
    );
    let r = Real::new(&agents, |root| {
        developer(root)
            // The verifier runs the test command through Bash.
            .then(bash(TEST).expect(|req| {
                let sys = req.system_text();
                let user = req.user_text();
                if !sys.contains("You are the conformity verifier.") {
                    return Err("the instructions are not in the system prompt".into());
                }
                if user.contains("You are the conformity verifier.") || !user.contains("CONTRACT: ")
                {
                    return Err(format!(
                        "the prompt holds the instructions or lacks the inputs: {user}"
                    ));
                }
                let mut tools = req.tool_names();
                tools.sort();
                if tools != ["Bash", "Glob", "Grep", "Read"] {
                    return Err(format!("a read-only role is offered {tools:?}"));
                }
                Ok(())
            }))
            .then(Turn::text(&conforme()).expect(result_holds("test result: ok")))
            .then(Turn::text(PASS))
    });
    let started = Instant::now();
    let v = r.passes_cleanly();
    // Claude Code's own cost is recorded too.
    assert!(v["costUsd"].as_f64().is_some_and(|c| c > 0.0), "{v}");
    eprintln!("claude: a whole run in {:?}", started.elapsed());
    r.keep(1, "developer", "claude-developer");
    r.keep(2, "verifier", "claude-verifier");
}

#[test]
#[cfg_attr(
    not(loopwatch_clis),
    ignore = "needs the real Claude Code CLI: .ci/run installs it into target/clis (CI runs this)"
)]
fn a_claude_verifier_cannot_write_branch_or_leave_its_tools() {
    let _s = crate::support::serial();
    let r = Real::new(&agents("claude", &ROLES, "3m"), |root| {
        let wt = root.display().to_string();
        let attempts = vec![
            (
                "Write",
                json!({"file_path": format!("{wt}/planted.txt"), "content": "x"}),
            ),
            (
                "Edit",
                json!({"file_path": format!("{wt}/src/lib.rs"), "old_string": "100", "new_string": "1"}),
            ),
            ("EnterWorktree", json!({"name": "elsewhere"})),
            (
                "WebFetch",
                json!({"url": "http://127.0.0.1:9/", "prompt": "x"}),
            ),
            (
                "Agent",
                json!({"description": "help", "prompt": "edit", "subagent_type": "general-purpose"}),
            ),
            ("CronCreate", json!({"cron": "* * * * *", "prompt": "x"})),
        ];
        let commands = [
            "touch planted.txt",
            "git branch lw-elsewhere",
            "git worktree add ../elsewhere",
            "echo x > src/lib.rs",
            &format!("{TEST} && touch planted.txt"),
        ];
        let mut calls: Vec<ToolCall> = attempts
            .into_iter()
            .map(|(name, input)| ToolCall {
                name: name.into(),
                input,
            })
            .collect();
        calls.extend(commands.iter().map(|c| ToolCall {
            name: "Bash".into(),
            input: json!({"command": c, "description": "try"}),
        }));
        developer(root)
            .then(Turn::reply(Reply::Tools(
                "Let me try to change things.".into(),
                calls,
            )))
            .then(Turn::text(&conforme()).expect(|req| {
                let results = req.tool_results();
                if results.len() < 11 {
                    return Err(format!("{} tool results", results.len()));
                }
                let last: Vec<&String> = results.iter().rev().take(11).map(|(_, t)| t).collect();
                let refused = last
                    .iter()
                    .filter(|t| {
                        t.contains("No such tool available") || t.contains("has been denied")
                    })
                    .count();
                if refused != 11 {
                    return Err(format!(
                        "only {refused} of 11 attempts were refused: {last:#?}"
                    ));
                }
                Ok(())
            }))
            .then(Turn::text(PASS))
    });
    r.passes();
    r.assert_untouched();
    assert_eq!(git(&r.p.root, &["diff", "--stat", "--", "src"]), "");
    assert!(!r.path("planted.txt").exists());
    let notes = r.notes();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("verifier #2: Claude Code refused 5 tool call(s)")),
        "{notes:#?}"
    );
    r.keep(2, "verifier", "claude-verifier-refused");
}

#[test]
#[cfg_attr(
    not(loopwatch_clis),
    ignore = "needs the real Claude Code CLI: .ci/run installs it into target/clis (CI runs this)"
)]
fn a_verdict_given_before_the_last_message_is_read_and_the_reading_recorded() {
    let _s = crate::support::serial();
    let r = Real::new(&agents("claude", &ROLES, "3m"), |root| {
        let call = ToolCall {
            name: "Bash".into(),
            input: json!({"command": TEST, "description": "check again"}),
        };
        verdict_before_the_last_message(developer(root), call)
    });
    r.passes_on_the_earlier_verdict("session", "claude-verdict-earlier");
}

/// A verifier whose every request fails with `code`: two dispatches
/// (Claude Code tries each request three times with
/// `CLAUDE_CODE_MAX_RETRIES=2`), then the structural gate; the person aborts.
fn a_failing_verifier(code: u16, message: &str, said: &str) {
    let r = Real::new(&agents("claude", &ROLES, "3m"), |root| {
        developer(root).repeat(6, Turn::status(code, message))
    });
    r.fails_twice_then_aborts(
        "Claude Code reported an error: ",
        said,
        &format!("claude-{code}"),
    );
    let f = &r.finished("verifier")[0];
    assert!(
        f["error"].as_str().unwrap_or_default().contains(said),
        "{f}"
    );
    assert!(
        r.notes()
            .iter()
            .any(|n| n.starts_with("verifier #2: Claude Code retried the model API 2 time(s)")),
        "{:?}",
        r.notes()
    );
}

#[test]
#[cfg_attr(
    not(loopwatch_clis),
    ignore = "needs the real Claude Code CLI: .ci/run installs it into target/clis (CI runs this)"
)]
fn a_500_from_the_model_fails_the_claude_dispatch_with_claude_codes_words() {
    let _s = crate::support::serial();
    a_failing_verifier(500, "Internal server error", "API Error: 500");
}

#[test]
#[cfg_attr(
    not(loopwatch_clis),
    ignore = "needs the real Claude Code CLI: .ci/run installs it into target/clis (CI runs this)"
)]
fn a_401_from_the_model_fails_the_claude_dispatch_with_claude_codes_words() {
    let _s = crate::support::serial();
    a_failing_verifier(401, "invalid x-api-key", "Invalid API key");
}

#[test]
#[cfg_attr(
    not(loopwatch_clis),
    ignore = "needs the real Claude Code CLI: .ci/run installs it into target/clis (CI runs this)"
)]
fn a_cut_connection_and_a_429_are_retried_by_claude_code_and_only_noted() {
    let _s = crate::support::serial();
    let r = Real::new(&agents("claude", &ROLES, "3m"), |root| {
        developer(root)
            .then(Turn::cut("VERIFY — VERDICT: CONF"))
            .then(Turn::status(429, "rate limited"))
            .then(Turn::text(&conforme()))
            .then(Turn::text(PASS))
    });
    r.passes();
    let f = r.finished("verifier");
    assert_eq!(f.len(), 1, "one dispatch: the retries were Claude Code's");
    assert_eq!(f[0]["error"], serde_json::Value::Null);
    let notes = r.notes();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("verifier #2: Claude Code retried the model API")),
        "{notes:#?}"
    );
    r.keep(2, "verifier", "claude-retried");
}

#[test]
#[cfg_attr(
    not(loopwatch_clis),
    ignore = "needs the real Claude Code CLI: .ci/run installs it into target/clis (CI runs this)"
)]
fn a_forty_second_tool_call_of_claude_code_is_waited_for() {
    let _s = crate::support::serial();
    let r = Real::new(&agents("claude", &ROLES, "3m"), |root| {
        Script::new()
            // Claude Code refuses a plain `sleep`: a command that blocks 40 s.
            .then(bash(LONG))
            .then(write_total(root).expect(result_holds("SLEPT")))
            .then(Turn::text("Done after a long build."))
            .then(Turn::text(&conforme()))
            .then(Turn::text(PASS))
    });
    r.passes_after_the_long_call();
}

/// The README's first run with Claude Code (see [`readme_first_run`]).
#[test]
#[cfg_attr(
    not(loopwatch_clis),
    ignore = "needs the real Claude Code CLI: .ci/run installs it into target/clis (CI runs this)"
)]
fn the_readme_first_run_from_init_to_pass_with_claude() {
    let _s = crate::support::serial();
    readme_first_run("claude", developer);
}
