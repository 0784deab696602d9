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

/// A session recorded from the real CLIs (`tests/fixtures/engine/<name>.jsonl`).
macro_rules! session {
    ($name:literal) => {
        include_bytes!(concat!("../../../tests/fixtures/engine/", $name, ".jsonl")).as_slice()
    };
}

fn request<'a>(agent: &'a AgentConfig, build: Option<&'a std::path::Path>) -> Request<'a> {
    Request {
        agent,
        instructions: Some("Verify."),
        instructions_file: Some(std::path::Path::new(
            "/p/.pipeline/agents/002-verifier.instructions",
        )),
        inputs: "CONTRACT: c\n",
        test: "cargo test",
        worktree: std::path::Path::new("/w"),
        build_dir: build,
        max_budget_usd: None,
    }
}

#[test]
fn claude_is_handed_what_the_budget_leaves() {
    let d = agent(AgentRole::Developer, AdapterKind::Claude);
    let mut req = request(&d, None);
    req.max_budget_usd = Some(1.25);
    assert_eq!(
        after(&args(&invocation(&req)), "--max-budget-usd"),
        "1.2500"
    );
    req.max_budget_usd = None;
    assert!(
        !args(&invocation(&req))
            .iter()
            .any(|a| a == "--max-budget-usd")
    );
}

#[test]
fn a_usage_limit_in_a_claude_or_codex_stream_is_read_as_limited() {
    let claude = concat!(
        r#"{"type":"system","subtype":"init","session_id":"s1","cwd":"/w","tools":[],"claude_code_version":"2.1.332"}"#,
        "\n",
        r#"{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1796227200,"rateLimitType":"five_hour"},"session_id":"s1"}"#,
        "\n",
        r#"{"type":"result","subtype":"success","is_error":true,"result":"You've hit your limit · resets 2pm (Europe/Berlin)","session_id":"s1","total_cost_usd":0,"usage":{"input_tokens":0,"output_tokens":0}}"#,
        "\n",
    );
    let a = answer(AdapterKind::Claude, claude.as_bytes(), b"");
    let l = a.limited.expect("limited");
    assert_eq!(
        l.until,
        Some(jiff::Timestamp::from_second(1_796_227_200).unwrap())
    );
    let codex = concat!(
        r#"{"type":"thread.started","thread_id":"t1"}"#,
        "\n",
        r#"{"type":"turn.started"}"#,
        "\n",
        r#"{"type":"error","message":"You've hit your usage limit. Try again later."}"#,
        "\n",
        r#"{"type":"turn.failed","error":{"message":"You've hit your usage limit. Try again later."}}"#,
        "\n",
    );
    let a = answer(AdapterKind::Codex, codex.as_bytes(), b"");
    let l = a.limited.expect("limited");
    assert_eq!(l.until, None);
    assert!(
        l.message.contains("You've hit your usage limit"),
        "{}",
        l.message
    );
    // A failure that is no limit stays a failure.
    let a = answer(AdapterKind::Claude, session!("claude-500"), b"");
    assert!(a.limited.is_none() && a.error.is_some());
}

fn after(a: &[String], k: &str) -> String {
    a[a.iter()
        .position(|x| x == k)
        .unwrap_or_else(|| panic!("{k} in {a:?}"))
        + 1]
    .clone()
}

#[test]
fn a_read_only_claude_session_has_only_the_read_tools_and_the_test_command() {
    let v = agent(AgentRole::Verifier, AdapterKind::Claude);
    let build = std::path::Path::new("/home/u/.cache/loopwatch/build/w-1");
    let inv = invocation(&request(&v, Some(build)));
    let a = args(&inv);
    assert_eq!(
        &a[..4],
        ["-p", "--output-format", "stream-json", "--verbose"]
    );
    assert_eq!(after(&a, "--model"), "sonnet");
    assert_eq!(
        after(&a, "--append-system-prompt-file"),
        "/p/.pipeline/agents/002-verifier.instructions"
    );
    assert_eq!(after(&a, "--tools"), "Read,Grep,Glob,Bash");
    assert_eq!(
        after(&a, "--allowedTools"),
        "Read,Grep,Glob,Bash(cargo test),Bash(git diff:*),Bash(git status:*),Bash(git log:*),Bash(git show:*)"
    );
    assert_eq!(after(&a, "--permission-mode"), "dontAsk");
    assert_eq!(after(&a, "--setting-sources"), "user");
    assert!(a.contains(&"--strict-mcp-config".to_string()));
    for never in [
        "Edit",
        "Write",
        "EnterWorktree",
        "Agent",
        "WebFetch",
        "CronCreate",
    ] {
        assert!(
            after(&a, "--disallowedTools")
                .split(',')
                .any(|t| t == never),
            "{never}"
        );
    }
    // Never argv: the instructions are in their file, the inputs on stdin.
    assert!(
        !a.iter()
            .any(|x| x.contains("Verify.") || x.contains("CONTRACT"))
    );
    assert_eq!(inv.stdin, b"CONTRACT: c\n");
    assert!(inv.env.contains(&(
        "CARGO_TARGET_DIR".into(),
        "/home/u/.cache/loopwatch/build/w-1/cargo-target".into()
    )));
    // No test command: Bash for the read-only git commands alone.
    let mut r = request(&v, Some(build));
    r.test = " ";
    let a = args(&invocation(&r));
    assert_eq!(after(&a, "--tools"), "Read,Grep,Glob,Bash");
    assert_eq!(
        after(&a, "--allowedTools"),
        "Read,Grep,Glob,Bash(git diff:*),Bash(git status:*),Bash(git log:*),Bash(git show:*)"
    );
}

#[test]
fn a_claude_developer_edits_with_the_file_tools_and_bash_only() {
    let d = agent(AgentRole::Developer, AdapterKind::Claude);
    let mut r = request(&d, None);
    r.instructions_file = None;
    let inv = invocation(&r);
    let a = args(&inv);
    let tools = "Read,Grep,Glob,Bash,Edit,Write,NotebookEdit";
    assert_eq!(after(&a, "--tools"), tools);
    assert_eq!(after(&a, "--allowedTools"), tools);
    assert_eq!(after(&a, "--permission-mode"), "acceptEdits");
    assert!(!a.contains(&"--disallowedTools".to_string()));
    // Without a file the instructions lead the prompt on stdin.
    assert_eq!(inv.stdin, b"Verify.\n\nCONTRACT: c\n");
    assert!(inv.env.is_empty());
}

#[test]
fn codex_read_only_is_a_permission_profile_with_one_writable_folder() {
    let v = agent(AgentRole::Auditor, AdapterKind::Codex);
    let build = std::path::Path::new("/c/build \"x\"");
    let inv = invocation(&request(&v, Some(build)));
    assert_eq!(
        args(&inv),
        [
            "exec",
            "--json",
            "-c",
            "approval_policy=\"never\"",
            "-c",
            "default_permissions=\"loopwatch-read-only\"",
            "-c",
            "permissions.loopwatch-read-only.extends=\":read-only\"",
            "-c",
            "web_search=\"disabled\"",
            "-c",
            "permissions.loopwatch-read-only.filesystem={'/c/build \"x\"'=\"write\"}",
            "-m",
            "sonnet",
            "-C",
            "/w",
            "-"
        ]
    );
    assert_eq!(inv.stdin, b"Verify.\n\nCONTRACT: c\n");
    assert!(
        inv.env
            .contains(&("TMPDIR".into(), "/c/build \"x\"/tmp".into()))
    );
    let d = agent(AgentRole::Developer, AdapterKind::Codex);
    let a = args(&invocation(&request(&d, None)));
    assert_eq!(after(&a, "--sandbox"), "workspace-write");
    assert!(!a.iter().any(|x| x.contains("permissions")));
}

#[test]
fn claude_success_is_the_final_result_with_usage_and_cost() {
    let a = answer(AdapterKind::Claude, session!("claude-verifier"), b"");
    assert_eq!(a.error, None);
    assert!(String::from_utf8_lossy(&a.text).starts_with("VERIFY — VERDICT: CONFORME\n"));
    assert_eq!((a.tokens_in, a.tokens_out), (Some(200), Some(40)));
    assert!(a.cost_usd.is_some_and(|c| c > 0.0));
    assert!(a.notes.is_empty() && a.normalized.is_empty(), "{a:?}");
}

#[test]
fn claude_api_errors_are_failures_in_claude_codes_words() {
    let a = answer(AdapterKind::Claude, session!("claude-500"), b"");
    let e = a.error.unwrap_or_default();
    assert!(
        e.starts_with("Claude Code reported an error: API Error: 500 Internal server error."),
        "{e}"
    );
    assert!(a.text.is_empty());
    assert_eq!(
        a.notes,
        [
            "Claude Code retried the model API 2 time(s): 1/2 after 500 server_error, 2/2 after 500 server_error"
        ]
    );
    let a = answer(AdapterKind::Claude, session!("claude-401"), b"");
    assert_eq!(
        a.error.as_deref(),
        Some("Claude Code reported an error: Invalid API key · Fix external API key")
    );
}

#[test]
fn claude_retries_and_refusals_are_notes_of_a_success() {
    let a = answer(AdapterKind::Claude, session!("claude-retried"), b"");
    assert_eq!(a.error, None);
    assert_eq!(a.notes.len(), 1, "{:?}", a.notes);
    assert!(a.notes[0].starts_with("Claude Code retried the model API 2 time(s): 1/2 after "));
    let a = answer(
        AdapterKind::Claude,
        session!("claude-verifier-refused"),
        b"",
    );
    assert_eq!(a.error, None);
    assert_eq!(
        a.notes,
        [
            "Claude Code refused 5 tool call(s) its permissions do not allow: Bash `touch planted.txt`, Bash `git branch lw-elsewhere`, Bash `git worktree add ../elsewhere`, Bash `echo x > src/lib.rs`, Bash `cargo test --offline -q && touch planted.txt`"
        ]
    );
}

#[test]
fn an_earlier_verdict_is_read_when_the_final_message_has_none() {
    let a = answer(AdapterKind::Claude, session!("claude-verdict-earlier"), b"");
    assert_eq!(a.error, None);
    assert!(a.text.starts_with("VERIFY — VERDICT: CONFORME".as_bytes()));
    assert_eq!(
        a.normalized,
        ["the final message holds no verdict: read message 1 of 2 of the session instead"]
    );
    let a = answer(AdapterKind::Codex, session!("codex-verdict-earlier"), b"");
    assert!(a.text.starts_with("VERIFY — VERDICT: CONFORME".as_bytes()));
    assert_eq!(
        a.normalized,
        ["the final message holds no verdict: read message 1 of 2 of the thread instead"]
    );
    // A final message that answers is the answer, whatever came before.
    let a = answer(AdapterKind::Claude, session!("claude-developer"), b"");
    assert_eq!(a.text, b"Implemented the total with cents.");
    assert!(a.normalized.is_empty());
}

#[test]
fn a_claude_stream_cut_is_a_failure_naming_the_last_complete_event() {
    let a = answer(AdapterKind::Claude, session!("claude-killed"), b"");
    assert_eq!(
        a.error.as_deref(),
        Some(
            "Claude Code 2.1.332 stopped before its final result object: the stream was cut after system init"
        )
    );
    assert!(a.text.is_empty());
    // Cut in the middle of the result line: the partial object is not read.
    let whole = session!("claude-verifier");
    let at = whole
        .windows(17)
        .position(|w| w == b"\"type\":\"result\"".as_slice())
        .unwrap_or(whole.len() - 40);
    let cut = &whole[..at.max(1) + 30];
    let a = answer(AdapterKind::Claude, cut, b"");
    let e = a.error.unwrap_or_default();
    assert!(
        e.starts_with("Claude Code 2.1.332 stopped before its final result object: the stream was cut after assistant (text)"),
        "{e}"
    );
    assert!(a.text.is_empty(), "never a verdict from a cut stream");
}

#[test]
fn a_claude_that_prints_no_stream_is_named_with_what_was_expected() {
    let a = answer(
        AdapterKind::Claude,
        b"",
        b"error: unknown option '--tools'\n(Did you mean --tool?)\n",
    );
    assert_eq!(
        a.error.as_deref(),
        Some(
            "Claude Code printed no stream-json event (expected `claude -p --output-format stream-json --verbose` events of Claude Code 2.1.332); it said: error: unknown option '--tools' | (Did you mean --tool?)"
        )
    );
    let a = answer(
        AdapterKind::Claude,
        b"{\"event\":\"start\"}\n{\"type\":\"hello\"}\n",
        b"",
    );
    assert!(
        a.error.unwrap_or_default().starts_with(
            "Claude Code's output is not a stream it knows: no event of type system, assistant, user or result (saw , hello;"
        )
    );
    // Another version is noted, and read the same way.
    let other =
        String::from_utf8_lossy(session!("claude-verifier")).replace("\"2.1.332\"", "\"3.0.1\"");
    let a = answer(AdapterKind::Claude, other.as_bytes(), b"");
    assert_eq!(a.error, None);
    assert_eq!(
        a.notes,
        ["Claude Code 3.0.1 is not the version loopwatch was tested with (2.1.332)"]
    );
}

#[test]
fn codex_success_is_the_completed_turn_and_its_last_message() {
    let a = answer(AdapterKind::Codex, session!("codex-verifier"), b"");
    assert_eq!(a.error, None);
    assert!(a.text.starts_with("VERIFY — VERDICT: CONFORME".as_bytes()));
    assert_eq!(
        (a.tokens_in, a.tokens_out, a.cost_usd),
        (Some(200), Some(40), None)
    );
    let a = answer(AdapterKind::Codex, session!("codex-developer"), b"");
    assert_eq!(a.text, b"Implemented the total with cents.");
    // Stderr lines in the log and failed commands do not fail a completed turn.
    let a = answer(AdapterKind::Codex, session!("codex-verifier-refused"), b"");
    assert_eq!(a.error, None);
}

#[test]
fn a_codex_reconnect_before_a_completed_turn_is_a_note_not_a_failure() {
    let a = answer(AdapterKind::Codex, session!("codex-reconnected"), b"");
    assert_eq!(a.error, None);
    assert!(a.text.starts_with("VERIFY — VERDICT: CONFORME".as_bytes()));
    assert_eq!(
        a.notes,
        [
            "Codex reconnected to the model API 1 time(s): Reconnecting... 1/2 (stream disconnected before completion: Transport error: network error: error decoding response body)"
        ]
    );
    // A non-fatal error item (Codex 0.171.0 with a model not in its catalog).
    let meta = br#"{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `gpt-5-codex` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."}}"#;
    let mut s = meta.to_vec();
    s.push(b'\n');
    s.extend_from_slice(session!("codex-auditor"));
    let a = answer(AdapterKind::Codex, &s, b"");
    assert_eq!(a.error, None);
    assert_eq!(a.notes.len(), 1);
    assert!(a.notes[0].starts_with("Codex: Model metadata for `gpt-5-codex` not found."));
}

#[test]
fn codex_failed_turns_are_failures_in_codexs_words() {
    let a = answer(AdapterKind::Codex, session!("codex-500"), b"");
    assert_eq!(
        a.error.as_deref(),
        Some(
            "Codex reported the turn failed: We’re currently experiencing high demand, which may cause temporary errors."
        )
    );
    assert_eq!(a.notes.len(), 1, "the reconnects are noted: {:?}", a.notes);
    let a = answer(AdapterKind::Codex, session!("codex-401"), b"");
    assert!(
        a.error
            .unwrap_or_default()
            .starts_with("Codex reported the turn failed: unexpected status 401 Unauthorized")
    );
}

#[test]
fn a_codex_stream_cut_or_missing_is_a_failure_naming_what_was_expected() {
    let a = answer(AdapterKind::Codex, session!("codex-killed"), b"");
    assert_eq!(
        a.error.as_deref(),
        Some("Codex stopped before its turn ended: the stream was cut after turn.started")
    );
    let a = answer(
        AdapterKind::Codex,
        b"",
        b"error: unexpected argument '--json' found\n",
    );
    assert_eq!(
        a.error.as_deref(),
        Some(
            "Codex printed no --json event (expected `codex exec --json` events of Codex 0.171.0); it said: error: unexpected argument '--json' found"
        )
    );
    let a = answer(AdapterKind::Codex, b"{\"type\":\"session.begin\"}\n", b"");
    assert!(
        a.error
            .unwrap_or_default()
            .starts_with("Codex's output is not a stream it knows")
    );
}

#[test]
fn the_tested_versions_are_the_ones_ci_installs() {
    let run = include_str!("../../../.ci/run");
    assert!(run.contains(&format!("CLAUDE_CODE_VERSION={CLAUDE_TESTED}\n")));
    assert!(run.contains(&format!("CODEX_VERSION={CODEX_TESTED}\n")));
}
