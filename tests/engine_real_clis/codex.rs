//! Codex (`codex exec --json`) in whole runs.

use std::time::Instant;

use serde_json::{Value, json};

use crate::kit::*;
use crate::support::model_server::{Reply, Script, ToolCall, Turn};

const ROLES: [&str; 3] = ["developer", "verifier", "auditor"];

/// The developer's two turns: Codex's freeform apply_patch, then its summary.
fn developer() -> Script {
    Script::new()
        .then(apply_patch_add(TOTAL, "total: 3.75 cents"))
        .then(
            Turn::text("Implemented the total with cents.").expect(result_holds("A src/total.txt")),
        )
}

#[test]
#[cfg_attr(
    not(loopwatch_clis),
    ignore = "needs the real Codex CLI: .ci/run installs it into target/clis (CI runs this)"
)]
fn a_codex_run_edits_through_its_tools_runs_the_tests_and_passes() {
    let _s = crate::support::serial();
    let r = Real::new(&agents("codex", &ROLES, "3m"), |_| {
        developer()
            // The verifier runs the test command in its read-only sandbox.
            .then(exec(TEST).expect(|req| {
                let web = req.body["tools"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|t| t["type"] == "web_search");
                if web {
                    return Err("a read-only role is offered web search".into());
                }
                Ok(())
            }))
            .then(Turn::text(&conforme()).expect(result_holds("test result: ok")))
            .then(Turn::text(PASS))
    });
    let started = Instant::now();
    let v = r.passes_cleanly();
    assert_eq!(v["costUsd"], Value::Null, "Codex reports no cost");
    eprintln!("codex: a whole run in {:?}", started.elapsed());
    r.keep(1, "developer", "codex-developer");
    r.keep(2, "verifier", "codex-verifier");
    r.keep(3, "auditor", "codex-auditor");
}

#[test]
#[cfg_attr(
    not(loopwatch_clis),
    ignore = "needs the real Codex CLI: .ci/run installs it into target/clis (CI runs this)"
)]
fn a_codex_verifier_cannot_write_or_branch_in_its_sandbox() {
    let _s = crate::support::serial();
    let r = Real::new(&agents("codex", &ROLES, "3m"), |_| {
        let commands = [
            "touch planted.txt",
            "git branch lw-elsewhere",
            "git worktree add ../elsewhere",
            "echo x > src/lib.rs",
            "mkdir -p ../outside && touch ../outside/planted.txt",
        ];
        let mut calls: Vec<ToolCall> = commands
            .iter()
            .map(|c| ToolCall {
                name: "exec_command".into(),
                input: json!({"cmd": c}),
            })
            .collect();
        calls.push(ToolCall {
            name: "apply_patch".into(),
            input: Value::String(
                "*** Begin Patch\n*** Add File: planted-by-patch.txt\n+x\n*** End Patch\n".into(),
            ),
        });
        developer()
            .then(Turn::reply(Reply::Tools(String::new(), calls)))
            .then(Turn::text(&conforme()).expect(|req| {
                let results = req.tool_results();
                let last: Vec<&String> = results.iter().rev().take(6).map(|(_, t)| t).collect();
                let wrote = last
                    .iter()
                    .filter(|t| t.contains("exited with code 0") || t.contains("Success."))
                    .count();
                if results.len() < 6 || wrote > 0 {
                    return Err(format!("{wrote} of the attempts succeeded: {last:#?}"));
                }
                Ok(())
            }))
            .then(Turn::text(PASS))
    });
    r.passes();
    r.assert_untouched();
    assert!(!r.path("../outside").exists());
    r.keep(2, "verifier", "codex-verifier-refused");
}

#[test]
#[cfg_attr(
    not(loopwatch_clis),
    ignore = "needs the real Codex CLI: .ci/run installs it into target/clis (CI runs this)"
)]
fn a_codex_verdict_given_before_the_last_message_is_read_and_recorded() {
    let _s = crate::support::serial();
    let r = Real::new(&agents("codex", &ROLES, "3m"), |_| {
        let call = ToolCall {
            name: "exec_command".into(),
            input: json!({"cmd": TEST}),
        };
        verdict_before_the_last_message(developer(), call)
    });
    r.passes_on_the_earlier_verdict("thread", "codex-verdict-earlier");
}

/// A verifier whose every request fails with `code`: two dispatches of
/// `per_dispatch` requests each (Codex's own retries with the test's
/// provider settings), then the structural gate; the person aborts.
fn a_failing_verifier(code: u16, per_dispatch: usize, said: &str) {
    let r = Real::new(&agents("codex", &ROLES, "3m"), |_| {
        developer().repeat(2 * per_dispatch, Turn::status(code, "the model is down"))
    });
    r.fails_twice_then_aborts(
        "Codex reported the turn failed: ",
        said,
        &format!("codex-{code}"),
    );
}

#[test]
#[cfg_attr(
    not(loopwatch_clis),
    ignore = "needs the real Codex CLI: .ci/run installs it into target/clis (CI runs this)"
)]
fn a_500_from_the_model_fails_the_codex_dispatch_with_codexs_words() {
    let _s = crate::support::serial();
    a_failing_verifier(500, 6, "high demand");
}

#[test]
#[cfg_attr(
    not(loopwatch_clis),
    ignore = "needs the real Codex CLI: .ci/run installs it into target/clis (CI runs this)"
)]
fn a_401_from_the_model_fails_the_codex_dispatch_with_codexs_words() {
    let _s = crate::support::serial();
    a_failing_verifier(401, 3, "401 Unauthorized");
}

#[test]
#[cfg_attr(
    not(loopwatch_clis),
    ignore = "needs the real Codex CLI: .ci/run installs it into target/clis (CI runs this)"
)]
fn a_codex_reconnect_then_a_completed_turn_is_a_success_with_a_note() {
    let _s = crate::support::serial();
    let r = Real::new(&agents("codex", &ROLES, "3m"), |_| {
        developer()
            .then(Turn::cut("VERIFY — VERDICT: CONF"))
            .then(Turn::text(&conforme()))
            .then(Turn::text(PASS))
    });
    r.passes();
    let f = r.finished("verifier");
    assert_eq!(f.len(), 1, "one dispatch: the reconnect was Codex's");
    assert_eq!(f[0]["error"], Value::Null, "{}", f[0]);
    assert!(r.log(2, "verifier").contains("Reconnecting... 1/"));
    let notes = r.notes();
    assert!(
        notes.iter().any(|n| n.starts_with(
            "verifier #2: Codex reconnected to the model API 1 time(s): Reconnecting... 1/"
        )),
        "{notes:#?}"
    );
    r.keep(2, "verifier", "codex-reconnected");
}

/// The session id in Codex's answer to a command still running.
fn session_of(result: &str) -> Option<u64> {
    let at = result.find("session ID ")? + "session ID ".len();
    result[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .ok()
}

#[test]
#[cfg_attr(
    not(loopwatch_clis),
    ignore = "needs the real Codex CLI: .ci/run installs it into target/clis (CI runs this)"
)]
fn a_forty_second_tool_call_of_codex_is_waited_for() {
    let _s = crate::support::serial();
    let r = Real::new(&agents("codex", &ROLES, "3m"), |_| {
        Script::new()
            .then(Turn::tool(
                "exec_command",
                json!({"cmd": LONG, "yield_time_ms": 30000}),
            ))
            // Still running after 30 s: the model polls it, as Codex's do.
            .then(Turn::compute(|req| {
                let last = req.last_tool_result();
                match session_of(&last) {
                    Some(id) => Reply::Tools(
                        String::new(),
                        vec![ToolCall {
                            name: "write_stdin".into(),
                            input: json!({"session_id": id, "chars": "", "yield_time_ms": 60000}),
                        }],
                    ),
                    None => Reply::Text(format!("no session in {last}")),
                }
            }))
            .then(apply_patch_add(TOTAL, "total: 3.75 cents").expect(result_holds("SLEPT")))
            .then(Turn::text("Done after a long build."))
            .then(Turn::text(&conforme()))
            .then(Turn::text(PASS))
    });
    r.passes_after_the_long_call();
}

/// The README's first run with Codex (see [`readme_first_run`]).
#[test]
#[cfg_attr(
    not(loopwatch_clis),
    ignore = "needs the real Codex CLI: .ci/run installs it into target/clis (CI runs this)"
)]
fn the_readme_first_run_from_init_to_pass_with_codex() {
    let _s = crate::support::serial();
    readme_first_run("codex", |_| developer());
}
