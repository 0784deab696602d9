//! The Claude Code and Codex adapters against stand-in `claude` and `codex`
//! executables on PATH. Each stand-in checks its argv the way the real CLI
//! does (print mode and its output format, `stream-json` needing
//! `--verbose`, known flags only, `exec` with a sandbox, `-C` a folder, the
//! prompt from stdin) and prints a recorded session.

mod engine_support;

use std::os::unix::fs::PermissionsExt;

use engine_support::*;

const CLAUDE: &str = r#"#!/usr/bin/env bash
# Stand-in for `claude`: argv checked as Claude Code checks it.
print=0 format=text verbose=0 allowed="" disallowed="" mode=default
while [ $# -gt 0 ]; do
  case $1 in
    -p|--print) print=1 ;;
    --output-format) format=$2; shift ;;
    --verbose) verbose=1 ;;
    --model|--append-system-prompt|--system-prompt|--max-turns|--add-dir) [ $# -ge 2 ] || { echo "error: option '$1' argument missing" >&2; exit 1; }; shift ;;
    --allowedTools) allowed=$2; shift ;;
    --disallowedTools) disallowed=$2; shift ;;
    --permission-mode) mode=$2; case $mode in default|acceptEdits|bypassPermissions|dontAsk|plan) ;; *) echo "error: invalid permission mode $mode" >&2; exit 1 ;; esac; shift ;;
    -*) echo "error: unknown option '$1'" >&2; exit 1 ;;
    *) echo "error: the prompt is read from stdin in these tests" >&2; exit 1 ;;
  esac
  shift
done
[ $print = 1 ] || { echo "error: not in print mode" >&2; exit 1; }
if [ "$format" = stream-json ] && [ $verbose = 0 ]; then
  echo "Error: When using --print, --output-format=stream-json requires --verbose" >&2; exit 1
fi
prompt=$(cat)
[ -n "$prompt" ] || { echo "Error: Input must be provided either through stdin or as a prompt argument when using --print" >&2; exit 1; }
echo "$mode|$allowed|$disallowed" >"$TEST_OUT/claude-$LW_ROLE.argv"
sed "s#@@CONTRACT@@#$LW_CONTRACT#" "$SESSIONS/claude-verifier.jsonl"
"#;

const CODEX: &str = r#"#!/usr/bin/env bash
# Stand-in for `codex`: argv checked as Codex CLI checks it.
[ "${1:-}" = exec ] || { echo "error: expected the exec subcommand" >&2; exit 2; }
shift
json=0 sandbox=read-only dir="" prompt=""
while [ $# -gt 0 ]; do
  case $1 in
    --json) json=1 ;;
    --sandbox|-s) sandbox=$2; case $sandbox in read-only|workspace-write|danger-full-access) ;; *) echo "error: invalid value '$sandbox' for '--sandbox'" >&2; exit 2 ;; esac; shift ;;
    -m|--model) shift ;;
    -C|--cd) dir=$2; [ -d "$dir" ] || { echo "error: no such directory $dir" >&2; exit 2; }; shift ;;
    --skip-git-repo-check|--full-auto|--ephemeral) ;;
    -) prompt=- ;;
    -*) echo "error: unexpected argument '$1' found" >&2; exit 2 ;;
    *) prompt=$1 ;;
  esac
  shift
done
[ "$prompt" = - ] || { echo "error: the tests hand the prompt on stdin (-)" >&2; exit 2; }
input=$(cat)
[ $json = 1 ] || { echo "error: expected --json" >&2; exit 2; }
echo "$sandbox|$dir" >"$TEST_OUT/codex-$LW_ROLE.argv"
if [ "$sandbox" = workspace-write ]; then
  # The developer: does the work and reports in a short session.
  cd "$dir" && mkdir -p src && echo "total: 3.75 cents" >src/total.txt
  printf '%s\n' '{"type":"thread.started","thread_id":"t-1"}' '{"type":"turn.started"}' \
    '{"type":"item.completed","item":{"id":"item_0","type":"file_change","changes":[{"path":"src/total.txt","kind":"add"}],"status":"completed"}}' \
    '{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"Implemented the total with cents."}}' \
    '{"type":"turn.completed","usage":{"input_tokens":500,"cached_input_tokens":0,"output_tokens":50}}'
else
  cat "$SESSIONS/codex-auditor.jsonl"
fi
"#;

/// Installs the stand-in CLIs `(name, script)` in the project's
/// `out/bin`; the `PATH` that finds them first.
fn stand_ins(p: &Project, scripts: &[(&str, &str)]) -> String {
    let bin = p.out.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for (name, text) in scripts {
        let path = bin.join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap())
}

#[test]
fn claude_and_codex_drive_a_whole_run_through_stand_ins() {
    let p = Project::new(
        r#"[run]
test = "cargo test"

[agents.developer]
adapter = "codex"

[agents.verifier]
adapter = "claude"
model = "sonnet"
prompt_file = "../agents/verifier.md"

[agents.auditor]
adapter = "codex"
"#,
    );
    let path = stand_ins(&p, &[("claude", CLAUDE), ("codex", CODEX)]);
    let sessions = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/engine");
    let out = p
        .cmd()
        .env("PATH", path)
        .env("SESSIONS", sessions)
        .args(["run", "--headless", CONTRACT])
        .output()
        .unwrap();
    p.assert_exit(&out, 0);

    // The roles got the permissions they should.
    let claude = std::fs::read_to_string(p.out.join("claude-verifier.argv")).unwrap();
    assert_eq!(
        claude.trim(),
        "default|Read,Grep,Glob,Bash(cargo test:*)|Edit,Write,NotebookEdit"
    );
    let dev = std::fs::read_to_string(p.out.join("codex-developer.argv")).unwrap();
    assert!(dev.starts_with("workspace-write|"), "{dev}");
    let aud = std::fs::read_to_string(p.out.join("codex-auditor.argv")).unwrap();
    assert!(aud.starts_with("read-only|"), "{aud}");

    // The answers were taken from the sessions, usage and cost recorded.
    let f = p.of_type("agent.finished");
    let by_role = |r: &str| f.iter().find(|x| x["role"] == r).unwrap().clone();
    let v = by_role("verifier");
    assert_eq!(v["tokensIn"], 5500);
    assert_eq!(v["tokensOut"], 350);
    assert_eq!(v["costUsd"], 0.04215);
    let a = by_role("auditor");
    assert_eq!(a["tokensIn"], 11100);
    assert_eq!(a["costUsd"], serde_json::Value::Null);
    let verdicts: Vec<String> = p
        .of_type("gate.finished")
        .iter()
        .map(|g| g["verdict"]["kind"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(verdicts, ["MET", "CONFORME", "PASS"]);
    let st = p.cmd().args(["status", "--json"]).output().unwrap();
    let state: serde_json::Value = serde_json::from_slice(&st.stdout).unwrap();
    assert_eq!(state["usage"]["total"]["dispatches"], 3);
    assert_eq!(state["usage"]["total"]["tokensIn"], 5500 + 11100 + 500);
    assert_eq!(state["usage"]["conformity"]["costUsd"], 0.04215);
    assert_eq!(state["usage"]["total"]["unpriced"], 2);
    // Claude's instructions went to the system prompt, not the input file's head.
    let input = p.input("002-verifier");
    assert!(
        input.starts_with("You are the conformity verifier."),
        "{input}"
    );
}

#[test]
fn a_stand_in_that_refuses_its_argv_is_a_failed_dispatch() {
    // stream-json without --verbose is refused by Claude Code: a stand-in
    // that insists on an unknown flag plays a CLI of another version.
    let p = Project::new(
        r#"[agents.developer]
command = "mkdir -p src && echo cents > src/total.txt"
[agents.verifier]
adapter = "claude"
[agents.auditor]
command = "true"
"#,
    );
    let strict = CLAUDE.replace(
        "--verbose) verbose=1 ;;",
        "--verbose) echo \"error: unknown option '--verbose'\" >&2; exit 1 ;;",
    );
    let path = stand_ins(&p, &[("claude", &strict)]);
    let child = Engine::spawn(
        p.cmd()
            .env("PATH", path)
            .args(["run", "--headless", CONTRACT]),
    );
    let gate = p.wait_for_gate("the structural gate");
    let round = &p.of_type_where("gate.finished", "gate", "conformity")[0];
    assert!(
        round["structural"]
            .as_str()
            .unwrap()
            .starts_with("agent-failed: exited with status 1"),
        "{round}"
    );
    let log = std::fs::read_to_string(p.pipeline().join("agents/002-verifier.log")).unwrap();
    assert!(log.contains("unknown option '--verbose'"), "{log}");
    p.decide(gate["id"].as_str().unwrap(), "abort");
    assert_eq!(child.wait_with_output().status.code(), Some(1));
}
