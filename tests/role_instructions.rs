//! The instructions each dispatch of `loopwatch run --headless` is handed:
//! a codex agent without a `prompt_file` gets its role's built-in text
//! before its inputs; a prompt file cut into steps hands the finding
//! verifier's parse and verify dispatches their own part only; a generic
//! command without one gets its inputs alone.

mod support;

use std::os::unix::fs::PermissionsExt;

use loopwatch::engine::roles;
use loopwatch::model::event::AgentRole;
use serde_json::Value;
use support::engine::*;
use support::review::*;

/// A stand-in `codex exec --json … -`: its stdin saved, then a session
/// whose last agent message is a CONFORME or a PASS.
const CODEX: &str = r#"#!/usr/bin/env bash
[ "${1:-}" = exec ] || { echo "error: expected exec" >&2; exit 2; }
cat >"$TEST_OUT/codex-$LW_ROLE.stdin"
case $LW_ROLE in
  verifier) text='VERIFY — VERDICT: CONFORME\nCONTRACT: docs/contract.md\nCRITERIA:\n  1. The total shows cents — MET — src/total.txt:1 says cents\nSCOPE: in-scope 1 files; out-of-scope: none\nFLOOR: clean\nPROOF: read 1 file' ;;
  *) text='SECURITY — VERDICT: PASS\nTOOL: ABSENT (DEGRADED — manual review only)\nSCOPE: 1 files\nBLOCKING:\nREPORTED (non-blocking):\nPROOF: checklist on 1 file' ;;
esac
printf '{"type":"item.completed","item":{"id":"i1","type":"agent_message","text":"%s"}}\n' "$text"
printf '{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":5}}\n'
"#;

/// The saved input of the dispatch `e` (its `agent.started`).
fn input_of(p: &Project, e: &Value) -> String {
    let rel = e["input"].as_str().expect("an input path");
    std::fs::read_to_string(p.pipeline().join(rel)).unwrap()
}

#[test]
fn a_codex_agent_without_a_prompt_file_gets_its_built_in_role() {
    let p = Project::new(
        r#"[run]
test = "true"
grace = "1s"

[agents.developer]
command = "bash @AGENTS@/agent.sh developer"
timeout = "1m"

[agents.verifier]
adapter = "codex"
timeout = "1m"

[agents.auditor]
adapter = "codex"
timeout = "1m"
"#,
    );
    let bin = p.out.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(bin.join("codex"), CODEX).unwrap();
    std::fs::set_permissions(bin.join("codex"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let out = p
        .cmd()
        .env("PATH", path)
        .args(["run", "--headless", CONTRACT])
        .output()
        .unwrap();
    p.assert_exit(&out, 0);
    let head = p.head();
    for (role, inputs) in [
        (
            AgentRole::Verifier,
            format!("CONTRACT: {CONTRACT}\nDIFF: {head}\nTEST: true\n"),
        ),
        (AgentRole::Auditor, format!("MODE: gate\nSCOPE: {head}\n")),
    ] {
        let want = format!("{}\n\n{inputs}", roles::role_file(role).text.trim_end());
        let stdin = std::fs::read_to_string(p.out.join(format!("codex-{role}.stdin"))).unwrap();
        assert_eq!(stdin, want, "{role}");
    }
    // The generic developer: its inputs alone.
    let dev = &p.of_type_where("agent.started", "role", "developer")[0];
    assert_eq!(
        input_of(&p, dev),
        format!("CONTRACT: {CONTRACT}\nREQUEST:\n\"The total shows cents.\"\n")
    );
}

#[test]
fn each_finding_verifier_step_gets_its_own_part_of_the_prompt_file() {
    let text = config(2, 3, "").replace(
        "max_concurrency = 2",
        "max_concurrency = 2\nprompt_file = \"../agents/finding-verifier.md\"",
    );
    let p = project(&text);
    let fv = roles::role_file(AgentRole::FindingVerifier).text;
    std::fs::write(
        p.root.parent().unwrap().join("agents/finding-verifier.md"),
        fv,
    )
    .unwrap();
    findings(&p, &[("F1", "minor", "verified"), ("F2", "minor", "false")]);
    let out = run_deciding(&p, go_on);
    p.assert_exit(&out, 0);

    let parse = p.of_type_where("agent.started", "step", "parse");
    assert_eq!(parse.len(), 1);
    let parse = input_of(&p, &parse[0]);
    let part = roles::for_step(AgentRole::FindingVerifier, fv, Some("parse")).unwrap();
    assert!(parse.starts_with(part.trim_end()), "{parse}");
    assert!(
        parse.contains("\n\nREVIEW:\n") && !parse.contains("## Step: verify"),
        "{parse}"
    );

    let lanes = p.of_type_where("agent.started", "step", "verify");
    assert_eq!(lanes.len(), 2);
    let part = roles::for_step(AgentRole::FindingVerifier, fv, Some("verify")).unwrap();
    for lane in &lanes {
        let input = input_of(&p, lane);
        let (head, json) = input.rsplit_once("\n\n").unwrap();
        assert_eq!(head, part.trim_end());
        let v: Value = serde_json::from_str(json.trim_end()).unwrap();
        assert_eq!(v["finding"]["id"], lane["finding"]);
        assert!(!input.contains("## Step: parse"), "{input}");
    }
    // The reviewer, a generic command without a prompt file: its four lines.
    let reviewer = &p.of_type_where("agent.started", "role", "reviewer")[0];
    assert!(input_of(&p, reviewer).starts_with("MODE: review\nCONTRACT: "));
}
