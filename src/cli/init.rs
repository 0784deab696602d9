//! `loopwatch init [--preset claude|codex|commands] [--force] [FILE]`:
//! writes a commented `loopwatch.toml` with every key, the chosen preset's
//! agents active and the two other presets ready below, commented out.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, ValueEnum};

/// The agents a new configuration starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Preset {
    /// Claude Code in headless mode (`claude -p`).
    Claude,
    /// Codex CLI (`codex exec --json`).
    Codex,
    /// Your own commands (the generic adapter).
    Commands,
}

/// `init`.
#[derive(Debug, Args)]
#[command(
    after_long_help = "Exit codes: 0 written, 2 the file exists (pass --force) or cannot be written."
)]
pub struct InitArgs {
    /// Where to write (default: loopwatch.toml in the current directory).
    pub file: Option<PathBuf>,
    /// Which agents are active.
    #[arg(long, value_enum, default_value_t = Preset::Claude)]
    pub preset: Preset,
    /// Replace an existing file.
    #[arg(long)]
    pub force: bool,
}

const HEADER: &str = r#"# loopwatch.toml: how `loopwatch run` drives the verify + secure loop.
# Every key is shown; the commented ones have their default value.
# Paths are relative to this file's folder. Durations: 90s, 20m, 1h 30m, 500ms.

[run]
# TEST handed to the verifier (and the only command the read-only agents may run).
test = "cargo test"
# Base of DIFF handed to the verifier and the auditor (default: HEAD when the run starts).
# diff = "main"
# Rounds per gate before a person decides.
# max_rounds = 3
# How long a stopped agent gets between SIGTERM and SIGKILL (its whole process group).
# grace = "5s"
# Bytes kept per agent log in .pipeline/agents/ (the rest is read and dropped).
# log_limit = 67108864

# Every [agents.<role>] table takes:
#   command      generic: a shell command line (input on stdin and in $LW_INPUT_FILE,
#                with LW_ROLE, LW_CONTRACT, LW_DIFF, LW_TEST, LW_ITERATION, LW_PIPELINE set;
#                the answer on stdout). claude / codex: the executable (default claude / codex).
#   adapter      generic (default) | claude | codex
#   prompt_file  the agent's own instructions, put before its inputs (optional)
#   model        passed to the adapters that take one (optional)
#   timeout      one dispatch, default 20m; past it the agent and its children are stopped
# developer, verifier and auditor are required.
"#;

const CLAUDE: &str = r#"# Preset: Claude Code (headless: claude -p --output-format stream-json --verbose).
[agents.developer]
adapter = "claude"
model = "sonnet"
# prompt_file = "agents/developer.md"
timeout = "30m"

[agents.verifier]
adapter = "claude"
model = "sonnet"
# prompt_file = "agents/verifier.md"
timeout = "20m"

[agents.auditor]
adapter = "claude"
model = "sonnet"
# prompt_file = "agents/auditor.md"
timeout = "20m"
"#;

const CODEX: &str = r#"# Preset: Codex CLI (codex exec --json; read-only sandbox for the verifier and auditor).
[agents.developer]
adapter = "codex"
# model = "gpt-5-codex"
# prompt_file = "agents/developer.md"
timeout = "30m"

[agents.verifier]
adapter = "codex"
# prompt_file = "agents/verifier.md"
timeout = "20m"

[agents.auditor]
adapter = "codex"
# prompt_file = "agents/auditor.md"
timeout = "20m"
"#;

const COMMANDS: &str = r#"# Preset: your own commands (the generic adapter).
[agents.developer]
command = "./agents/developer.sh"
timeout = "30m"

[agents.verifier]
command = "./agents/verifier.sh"
timeout = "20m"

[agents.auditor]
command = "./agents/auditor.sh"
timeout = "20m"
"#;

const REVIEW: &str = r#"
# The review stage (after GATE 1, before GATE 2): the reviewer's review,
# each finding checked by the finding verifier (max_concurrency at once),
# triage (derived from the verdicts without [agents.triage]), and, when
# enabled, one repro test per accepted blocking finding, run by loopwatch.
# [agents.reviewer]
# command = "./agents/reviewer.sh"
# [agents.finding-verifier]
# command = "./agents/finding-verifier.sh"
# max_concurrency = 4
# [agents.triage]
# command = "./agents/triage.sh"
# [agents.verify-by-test]
# command = "./agents/verify-by-test.sh"
# [verify_by_test]
# enabled = false
# max_findings = 3
# step_timeout = "600s"

# Reaching the person while a gate waits (sent once per gate, whichever
# loopwatch process notices it first), and gates that expire as their own
# outcome (never recorded as a person's decision).
# [notify]
# webhook = "https://ntfy.sh/my-topic"
# format = "ntfy"          # json | slack | ntfy
# delay = "2m"             # only if still open after this long
# remind = "30m"
# [expiry.out-of-scope]
# after = "30m"
# action = "deny"
"#;

fn commented(block: &str) -> String {
    block
        .lines()
        .map(|l| {
            if l.is_empty() || l.starts_with('#') {
                l.to_string()
            } else {
                format!("# {l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The file `init` writes for a preset.
pub fn template(preset: Preset) -> String {
    let all = [
        (Preset::Claude, CLAUDE),
        (Preset::Codex, CODEX),
        (Preset::Commands, COMMANDS),
    ];
    let mut out = String::from(HEADER);
    for (p, text) in all.iter().filter(|(p, _)| *p == preset) {
        let _ = p;
        out.push('\n');
        out.push_str(text);
    }
    for (_, text) in all.iter().filter(|(p, _)| *p != preset) {
        out.push_str("\n# Other preset, ready to swap in:\n");
        out.push_str(&commented(text));
        out.push('\n');
    }
    out.push_str(REVIEW);
    out
}

/// Runs `init`.
pub fn run(a: InitArgs) -> anyhow::Result<ExitCode> {
    let path = a
        .file
        .unwrap_or_else(|| PathBuf::from(crate::engine::config::FILE_NAME));
    if path.exists() && !a.force {
        super::output::warn(&format!(
            "loopwatch: {} exists; pass --force to replace it",
            path.display()
        ));
        return Ok(ExitCode::from(2));
    }
    crate::util::replace_atomically(&path, template(a.preset).as_bytes())
        .with_context(|| format!("write {}", path.display()))?;
    super::output::say(&format!("wrote {} ({:?} preset)", path.display(), a.preset));
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::config::{AdapterKind, Config};
    use crate::model::event::AgentRole;

    /// Every preset parses, and so does each commented-out one once swapped in.
    #[test]
    fn every_preset_is_a_valid_configuration() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(bin.join("../agents")).unwrap();
        for exe in [
            "bin/claude",
            "bin/codex",
            "agents/developer.sh",
            "agents/verifier.sh",
            "agents/auditor.sh",
        ] {
            let p = dir.path().join(exe);
            std::fs::write(&p, "#!/bin/sh\n").unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let file = dir.path().join("loopwatch.toml");
        for (preset, adapter) in [
            (Preset::Claude, AdapterKind::Claude),
            (Preset::Codex, AdapterKind::Codex),
            (Preset::Commands, AdapterKind::Generic),
        ] {
            let text = template(preset);
            let c = Config::parse(&file, &text, Some(bin.as_os_str()))
                .unwrap_or_else(|e| panic!("{preset:?}: {e}"));
            assert_eq!(c.agent(AgentRole::Verifier).unwrap().adapter, adapter);
            assert_eq!(c.run.test, "cargo test");
            assert!(text.contains("# [agents.finding-verifier]"));
        }
        // The commented review stage, notifications and expiry, switched on.
        for exe in [
            "agents/reviewer.sh",
            "agents/finding-verifier.sh",
            "agents/triage.sh",
            "agents/verify-by-test.sh",
        ] {
            let p = dir.path().join(exe);
            std::fs::write(&p, "#!/bin/sh\n").unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let on: String = REVIEW
            .lines()
            .map(|l| match l.strip_prefix("# ") {
                Some(t) if t.starts_with('[') || t.contains(" = ") => t,
                _ => l,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let text = format!("{}\n{on}\n", template(Preset::Commands))
            .replace("enabled = false", "enabled = true");
        let c =
            Config::parse(&file, &text, Some(bin.as_os_str())).unwrap_or_else(|e| panic!("{e}"));
        assert!(c.agent(AgentRole::Reviewer).is_some());
        assert_eq!(
            c.agent(AgentRole::FindingVerifier).unwrap().max_concurrency,
            4
        );
        assert!(c.verify_by_test.enabled);
        assert!(c.notify.webhook.is_some());
        assert_eq!(c.expiry.len(), 1);
    }
}
