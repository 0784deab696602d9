//! `loopwatch init` and `loopwatch run --dry-run` on the real binary: the
//! role files written beside `loopwatch.toml`, then, per role, the command
//! line, the instructions and the first inputs of each agent, printed
//! sanitised, with nothing started, locked or written. The `claude` and
//! `codex` on PATH are stand-ins that record being started: a dry run must
//! never start them.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use loopwatch::engine::roles;
use loopwatch::model::event::AgentRole;
use support::assert_has;

const CONTRACT: &str = "\
# CONTRACT — invoice cents
- date: 2026-11-02 | flow: feat | branch: main

## REQUEST (verbatim — IMMUTABLE)
\"The invoice total shows cents.\"

## ACCEPTANCE CRITERIA
1. The total shows cents.
   CHECK: grep -q cents src/total.txt && echo TOTAL_OK
   EXPECT: TOTAL_OK
   EVIDENCE: pending

## FILE SCOPE
- src/total.txt
";

/// A committed git worktree with a contract, and stand-in CLIs.
struct Project {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    bin: PathBuf,
    state: PathBuf,
}

impl Project {
    fn new() -> Project {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("w");
        let bin = tmp.path().join("bin");
        let state = tmp.path().join("state");
        for d in [&root, &bin, &state] {
            std::fs::create_dir_all(d).unwrap();
        }
        for cli in ["claude", "codex"] {
            let p = bin.join(cli);
            std::fs::write(
                &p,
                format!(
                    "#!/bin/sh\ntouch '{}/{cli}-was-started'\n",
                    tmp.path().display()
                ),
            )
            .unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::write(root.join("docs/contract.md"), CONTRACT).unwrap();
        let p = Project {
            _tmp: tmp,
            root,
            bin,
            state,
        };
        support::git::git_init(&p.root);
        p.git(&["add", "-A"]);
        p.git(&["commit", "-qm", "contract"]);
        p
    }

    fn git(&self, args: &[&str]) -> String {
        support::git::git(&self.root, args).trim().to_string()
    }

    fn cmd(&self) -> Command {
        let mut c = Command::cargo_bin("loopwatch").unwrap();
        let path = format!("{}:{}", self.bin.display(), std::env::var("PATH").unwrap());
        c.current_dir(&self.root)
            .env("PATH", path)
            .env("XDG_STATE_HOME", &self.state)
            .env("HOME", &self.state)
            .env_remove("LOOPWATCH_PIPELINE")
            .env_remove("LOOPWATCH_LOG");
        c
    }

    /// Runs `args`; its exit code, stdout and stderr.
    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let o = self.cmd().args(args).output().unwrap();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }

    /// Every file under the worktree but `.git`, and under the state folder.
    fn files(&self) -> Vec<PathBuf> {
        fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                let p = e.path();
                if p.file_name().is_some_and(|n| n == ".git") {
                    continue;
                }
                out.push(p.clone());
                if p.is_dir() {
                    walk(&p, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.root, &mut out);
        walk(&self.state, &mut out);
        walk(self.bin.parent().unwrap(), &mut out);
        out.sort();
        out
    }

    /// Rewrites `loopwatch.toml` with `edit`.
    fn edit_config(&self, edit: impl Fn(String) -> String) {
        let path = self.root.join("loopwatch.toml");
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, edit(text)).unwrap();
    }
}

/// The section of one dispatch in a dry run's output.
fn section<'a>(out: &'a str, title: &str) -> &'a str {
    let head = format!("\n== {title} ==\n");
    let start = out
        .find(&head)
        .unwrap_or_else(|| panic!("no `{title}` in\n{out}"));
    let end_mark = format!("--- end of {title} ---");
    let end = out[start..].find(&end_mark).unwrap() + start;
    &out[start..end]
}

/// The lines of `text` between `from` and the next `--- ` line.
fn block<'a>(text: &'a str, from: &str) -> &'a str {
    let start = text.find(from).unwrap_or_else(|| panic!("no {from}")) + from.len() + 1;
    let end = text[start..]
        .find("\n--- ")
        .map_or(text.len(), |e| start + e + 1);
    &text[start..end]
}

#[test]
fn init_writes_the_role_files_and_keeps_what_exists() {
    let p = Project::new();
    let (code, out, err) = p.run(&["init", "--preset", "claude"]);
    assert_eq!(code, 0, "{out}{err}");
    for role in AgentRole::ALL {
        let f = roles::role_file(role);
        let path = p.root.join("agents").join(f.file_name);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), f.text, "{role}");
        assert_has(&out, &format!("wrote agents/{}\n", f.file_name));
    }
    assert_has(&out, "wrote loopwatch.toml (claude preset)");
    assert_has(&out, "commit loopwatch.toml and agents/");

    // Again: loopwatch.toml exists, nothing is written.
    std::fs::write(p.root.join("agents/verifier.md"), "my verifier\n").unwrap();
    let (code, _, err) = p.run(&["init", "--preset", "codex"]);
    assert_eq!(code, 2);
    assert_has(&err, "loopwatch.toml exists; pass --force");
    assert!(
        std::fs::read_to_string(p.root.join("loopwatch.toml"))
            .unwrap()
            .contains("adapter = \"claude\"")
    );
    // --agents-only writes the missing role files and keeps the edited one.
    std::fs::remove_file(p.root.join("agents/triage.md")).unwrap();
    let (code, out, _) = p.run(&["init", "--agents-only"]);
    assert_eq!(code, 0);
    assert_has(&out, "kept agents/verifier.md (it exists)");
    assert_has(&out, "wrote agents/triage.md");
    assert!(!out.contains("loopwatch.toml"), "{out}");
    assert_eq!(
        std::fs::read_to_string(p.root.join("agents/verifier.md")).unwrap(),
        "my verifier\n"
    );
    // --force replaces both.
    let (code, out, _) = p.run(&["init", "--preset", "codex", "--force"]);
    assert_eq!(code, 0);
    assert_has(&out, "replaced agents/verifier.md");
    assert_eq!(
        std::fs::read_to_string(p.root.join("agents/verifier.md")).unwrap(),
        roles::role_file(AgentRole::Verifier).text
    );
    // Beside a configuration written elsewhere.
    let (code, out, _) = p.run(&["init", "conf/lw.toml"]);
    assert_eq!(code, 0);
    assert_has(&out, "wrote conf/agents/developer.md");
    assert!(p.root.join("conf/lw.toml").is_file());
}

#[test]
fn a_dry_run_shows_each_agent_and_starts_locks_and_writes_nothing() {
    let p = Project::new();
    assert_eq!(p.run(&["init", "--preset", "claude"]).0, 0);
    p.git(&["add", "-A"]);
    p.git(&["commit", "-qm", "loopwatch"]);
    let head = p.git(&["rev-parse", "HEAD"]);
    let before = p.files();
    let (code, out, err) = p.run(&["run", "--dry-run", "docs/contract.md"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(p.files(), before, "a dry run writes nothing");
    assert!(!p.root.join(".pipeline").exists());
    assert!(
        out.starts_with("loopwatch run --dry-run: nothing was started, locked or written.\n"),
        "{out}"
    );
    assert_has(&out, &format!("  DIFF: {head}\n"));
    assert!(!out.contains("not committed"), "{out}");

    // The verifier: its command line, its role file, its three lines.
    let v = section(&out, "verifier");
    assert!(
        v.contains("\ncommand: claude -p --output-format stream-json --verbose --model sonnet --append-system-prompt-file '"),
        "{v}"
    );
    assert_has(v, ".pipeline/agents/‹n›-verifier.instructions'");
    assert!(v.contains("--allowedTools 'Read,Grep,Glob,Bash(cargo test),Bash(git diff:*),Bash(git status:*),Bash(git log:*),Bash(git show:*)'"), "{v}");
    assert_has(v, "from a file the dispatch writes beside its input");
    assert_eq!(
        block(v, "--- instructions ---"),
        roles::role_file(AgentRole::Verifier).text
    );
    assert_eq!(
        block(v, "--- inputs ---"),
        format!("CONTRACT: docs/contract.md\nDIFF: {head}\nTEST: cargo test\n")
    );
    assert_has(v, "\nstdin: the inputs\n");
    // The developer: the contract's request.
    let d = section(&out, "developer");
    assert_eq!(
        block(d, "--- inputs ---"),
        "CONTRACT: docs/contract.md\nREQUEST:\n\"The invoice total shows cents.\"\n"
    );
    assert_has(d, "--permission-mode acceptEdits");
    let a = section(&out, "auditor");
    assert_eq!(
        block(a, "--- inputs ---"),
        format!("MODE: gate\nSCOPE: {head}\n")
    );

    // One role only.
    let (code, only, _) = p.run(&["run", "--dry-run=auditor", "docs/contract.md"]);
    assert_eq!(code, 0);
    assert!(
        only.contains("\n== auditor ==\n") && !only.contains("== verifier =="),
        "{only}"
    );
    let (code, _, err) = p.run(&["run", "--dry-run=triage", "docs/contract.md"]);
    assert_eq!(code, 2);
    assert_has(&err, "has no [agents.triage]");
    let (code, _, err) = p.run(&["run", "--dry-run=tester", "docs/contract.md"]);
    assert_eq!(code, 2);
    assert_has(&err, "unknown agent role 'tester'");
    let (code, _, err) = p.run(&["run", "--dry-run"]);
    assert_eq!(code, 2);
    assert_has(&err, "give the CONTRACT to start one");
    assert_eq!(p.files(), before);
    for cli in ["claude", "codex"] {
        assert!(
            !p.bin
                .parent()
                .unwrap()
                .join(format!("{cli}-was-started"))
                .exists()
        );
    }
}

#[test]
fn codex_and_commands_hand_the_instructions_their_own_way() {
    let p = Project::new();
    assert_eq!(p.run(&["init", "--preset", "codex"]).0, 0);
    let (code, out, err) = p.run(&["run", "--dry-run", "docs/contract.md"]);
    assert_eq!(code, 0, "{err}");
    // Not committed yet: said, since the verifier would see them.
    assert!(out.contains("note: not committed: agents/auditor.md, agents/developer.md, agents/verifier.md, loopwatch.toml"), "{out}");
    let v = section(&out, "verifier");
    assert_has(v, "exec --json -c 'approval_policy=\"never\"'");
    assert_has(v, "default_permissions=\"loopwatch-read-only\"");
    assert_has(v, "on stdin, before the inputs");
    assert_has(
        v,
        "\nstdin: the instructions, a blank line, then the inputs\n",
    );

    // A generic command without a prompt_file gets its inputs only; the
    // review stage shows each step with its own part of the role file.
    let agents = p.root.join("agents");
    for s in [
        "developer",
        "verifier",
        "auditor",
        "reviewer",
        "finding-verifier",
    ] {
        let f = agents.join(format!("{s}.sh"));
        std::fs::write(&f, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    assert_eq!(p.run(&["init", "--preset", "commands", "--force"]).0, 0);
    p.edit_config(|t| {
        format!(
            "{t}\n[agents.reviewer]\ncommand = \"./agents/reviewer.sh\"\n[agents.finding-verifier]\ncommand = \"./agents/finding-verifier.sh\"\nprompt_file = \"agents/finding-verifier.md\"\n"
        )
    });
    let (code, out, err) = p.run(&["run", "--dry-run", "docs/contract.md"]);
    assert_eq!(code, 0, "{err}");
    let v = section(&out, "verifier");
    assert_has(v, "\ncommand: sh -c ./agents/verifier.sh\n");
    assert!(
        v.contains(
            "instructions: none (a generic command without a prompt_file gets only its inputs)"
        ),
        "{v}"
    );
    assert!(!v.contains("--- instructions ---"), "{v}");
    let parse = section(&out, "finding-verifier · step parse");
    let verify = section(&out, "finding-verifier · step verify");
    assert!(
        parse.contains("LW_STEP=parse") && verify.contains("LW_STEP=verify LW_FINDING_ID=<id>")
    );
    assert!(
        parse.contains("## Step: parse") && !parse.contains("## Step: verify"),
        "{parse}"
    );
    assert!(
        verify.contains("## Step: verify") && !verify.contains("## Step: parse"),
        "{verify}"
    );
    assert_eq!(
        block(verify, "--- inputs ---"),
        "{\"finding\":{\"id\":\"<id>\",\"severity\":\"<severity>\",\"path\":\"<path>\",\"lines\":\"<lines>\",\"claim\":\"<claim>\"},\"project_dir\":\"<project_dir>\"}\n"
    );
    assert_has(verify, "the <…> parts are filled in by the run");
    assert!(section(&out, "reviewer").contains("LW_STEP=review"));
}

#[test]
fn what_a_dry_run_prints_from_files_is_sanitised() {
    let p = Project::new();
    assert_eq!(p.run(&["init", "--preset", "claude"]).0, 0);
    std::fs::write(
        p.root.join("agents/verifier.md"),
        "You verify.\x1b[2J\x1b]0;pwned\x07 \u{202e}evil\nNEXT: done\n",
    )
    .unwrap();
    let (code, out, err) = p.run(&["run", "--dry-run=verifier", "docs/contract.md"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        !out.contains('\x1b') && !out.contains('\x07') && !out.contains('\u{202e}'),
        "{out:?}"
    );
    assert_has(&out, "You verify.␛[2J␛]0;pwned␇ <U+202E>evil\nNEXT: done\n");
}

#[test]
fn a_run_the_engine_would_refuse_is_refused_by_the_dry_run_too() {
    let p = Project::new();
    assert_eq!(p.run(&["init", "--preset", "claude"]).0, 0);
    let (code, _, err) = p.run(&[
        "record",
        "run-start",
        "--flow",
        "feat",
        "--contract",
        "docs/contract.md",
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = p.run(&["run", "--dry-run"]);
    assert_eq!(code, 2);
    assert_has(&err, "is driven by another orchestrator");
    // A configuration problem is the engine's own message.
    p.edit_config(|t| t.replace("timeout = \"20m\"", "timeout = \"soon\""));
    let (code, _, err) = p.run(&["run", "--dry-run", "docs/contract.md"]);
    assert_eq!(code, 2);
    assert_has(&err, "agents.verifier.timeout: 'soon' is not a duration");
}
