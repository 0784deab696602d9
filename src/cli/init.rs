//! `loopwatch init [--preset claude|codex|commands] [--force] [--agents-only] [FILE]`:
//! writes the role files (`agents/<role>.md`, loopwatch's built-in
//! instructions of every role, for editing) beside a commented
//! `loopwatch.toml` with every key, the chosen preset's agents active and
//! pointing at them, and the two other presets ready below, commented out.
//! An existing role file is kept unless `--force`; an existing
//! `loopwatch.toml` stops everything unless `--force` (or `--agents-only`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, ValueEnum};

use crate::engine::roles::{self, ROLE_FILES};
use crate::model::event::AgentRole;

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

impl Preset {
    fn name(self) -> &'static str {
        match self {
            Preset::Claude => "claude",
            Preset::Codex => "codex",
            Preset::Commands => "commands",
        }
    }
}

/// `init`.
#[derive(Debug, Args)]
#[command(after_long_help = "\
Writes loopwatch.toml and, in agents/ beside it, one Markdown file per role (developer,
verifier, auditor, reviewer, finding-verifier, triage, verify-by-test): what the role is for,
what it may touch, the inputs loopwatch sends it and the exact answer its gate accepts. The
claude and codex presets point every agent at its file (prompt_file); edit them freely. A role
without a prompt_file gets the same text built into loopwatch (claude and codex adapters).
An existing role file is kept (--force replaces it). `loopwatch run --dry-run` shows what each
agent would be started with and sent.

Exit codes: 0 written, 2 loopwatch.toml exists (pass --force) or a file cannot be written.")]
pub struct InitArgs {
    /// Where to write (default: loopwatch.toml in the current directory).
    pub file: Option<PathBuf>,
    /// Which agents are active.
    #[arg(long, value_enum, default_value_t = Preset::Claude)]
    pub preset: Preset,
    /// Replace an existing loopwatch.toml and existing role files.
    #[arg(long)]
    pub force: bool,
    /// Write only the role files (agents/*.md), not loopwatch.toml.
    #[arg(long)]
    pub agents_only: bool,
}

const HEADER: &str = r#"# loopwatch.toml: how `loopwatch run` drives the verify + secure loop.
# Every key is shown; the commented ones have their default value.
# Paths are relative to this file's folder. Durations: 90s, 20m, 1h 30m, 500ms.
# `loopwatch run --dry-run CONTRACT` shows each agent's command line, instructions and inputs.

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
# An agent CLI answering that a usage limit is reached: wait until it resets, once
# (false: a person is asked). A limit with no reset time, or one more than a day away,
# is always put to a person.
# wait_for_limit = false
# Rounds of a gate in a row without progress (the code unchanged, or the same failing
# rows back on unchanged files) before a person is asked (a stagnant gate).
# stagnant_after = 1

# What the run may spend, summed from the dispatches (an unknown cost is $?, never $0).
# A dispatch that would start at or past a limit opens a budget gate (raise: the limit
# rises by its amount again; stop). A usd limit needs tokens or wall as well when an
# agent reports no cost (codex, generic commands; these may write $LW_USAGE_FILE).
# [budget]
# usd = 5
# tokens = 2000000
# wall = "2h"          # agent time: the dispatches' durations, summed
# hard = false         # true: a dispatch is stopped when its role's agent time runs out
# [budget.developer]   # the same limits for one role
# usd = 2

# Every [agents.<role>] table takes:
#   command      generic: a shell command line (input on stdin and in $LW_INPUT_FILE,
#                with LW_ROLE, LW_CONTRACT, LW_DIFF, LW_TEST, LW_ITERATION, LW_PIPELINE set;
#                the answer on stdout). claude / codex: the executable (default claude / codex).
#   adapter      generic (default) | claude | codex
#   prompt_file  the role's instructions, handed to the agent with its inputs. Without one,
#                claude and codex agents get loopwatch's built-in role (the text of
#                agents/<role>.md as `loopwatch init` wrote it); a generic command gets none.
#   model        passed to the adapters that take one (optional)
#   timeout      one dispatch, default 20m; past it the agent and its children are stopped
# developer, verifier and auditor are required.
"#;

const CLAUDE: &str = r#"# Preset: Claude Code (headless: claude -p --output-format stream-json --verbose).
# Each agent's instructions are its role file in agents/: edit them freely.
[agents.developer]
adapter = "claude"
model = "sonnet"
prompt_file = "agents/developer.md"
timeout = "30m"

[agents.verifier]
adapter = "claude"
model = "sonnet"
prompt_file = "agents/verifier.md"
timeout = "20m"

[agents.auditor]
adapter = "claude"
model = "sonnet"
prompt_file = "agents/auditor.md"
timeout = "20m"
"#;

const CODEX: &str = r#"# Preset: Codex CLI (codex exec --json; read-only sandbox for the verifier and auditor).
# Each agent's instructions are its role file in agents/: edit them freely.
[agents.developer]
adapter = "codex"
# model = "gpt-5-codex"
prompt_file = "agents/developer.md"
timeout = "30m"

[agents.verifier]
adapter = "codex"
prompt_file = "agents/verifier.md"
timeout = "20m"

[agents.auditor]
adapter = "codex"
prompt_file = "agents/auditor.md"
timeout = "20m"
"#;

const COMMANDS: &str = r#"# Preset: your own commands (the generic adapter): the inputs on stdin, the answer on stdout.
# agents/<role>.md says what each role receives and the exact answer its gate accepts.
# A command gets no instructions unless its table says prompt_file = "agents/<role>.md"
# (for a command that hands its stdin to a model; a script reading its inputs does not).
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

const REVIEW_HEAD: &str = r#"
# The review stage (after GATE 1, before GATE 2): the reviewer's review,
# each finding checked by the finding verifier (max_concurrency at once),
# triage (derived from the verdicts without [agents.triage]), and, when
# enabled, one repro test per accepted blocking finding, run by loopwatch.
"#;

const NOTIFY: &str = r#"# [verify_by_test]
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

/// The review stage's roles, in the order their tables are written.
const REVIEW_ROLES: [AgentRole; 4] = [
    AgentRole::Reviewer,
    AgentRole::FindingVerifier,
    AgentRole::Triage,
    AgentRole::VerifyByTest,
];

/// The review stage's tables for `preset`, commented out.
fn review(preset: Preset) -> String {
    let mut out = String::from(REVIEW_HEAD);
    for role in REVIEW_ROLES {
        out.push_str(&format!("# [agents.{role}]\n"));
        match preset {
            Preset::Claude | Preset::Codex => {
                out.push_str(&format!("# adapter = \"{}\"\n", preset.name()));
                if preset == Preset::Claude {
                    out.push_str("# model = \"sonnet\"\n");
                }
                out.push_str(&format!("# prompt_file = \"{}\"\n", roles::init_path(role)));
            }
            Preset::Commands => {
                out.push_str(&format!("# command = \"./agents/{role}.sh\"\n"));
            }
        }
        if role == AgentRole::FindingVerifier {
            out.push_str("# max_concurrency = 4\n");
        }
    }
    out.push_str(NOTIFY);
    out
}

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
    for (_, text) in all.iter().filter(|(p, _)| *p == preset) {
        out.push('\n');
        out.push_str(text);
    }
    for (_, text) in all.iter().filter(|(p, _)| *p != preset) {
        out.push_str("\n# Other preset, ready to swap in:\n");
        out.push_str(&commented(text));
        out.push('\n');
    }
    out.push_str(&review(preset));
    out
}

/// What became of one role file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    /// Written (`true`: an existing file was replaced).
    Wrote(PathBuf, bool),
    /// Left as it was: it exists and `--force` was not given.
    Kept(PathBuf),
}

/// Writes every role file into `dir` (created if needed), keeping the
/// existing ones unless `force`.
pub fn write_role_files(dir: &Path, force: bool) -> anyhow::Result<Vec<Written>> {
    std::fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
    let mut out = Vec::new();
    for f in &ROLE_FILES {
        let path = dir.join(f.file_name);
        // A link counts as there: it is someone's file.
        let exists = path.symlink_metadata().is_ok();
        if exists && !force {
            out.push(Written::Kept(path));
            continue;
        }
        crate::util::replace_atomically(&path, f.text.as_bytes())
            .with_context(|| format!("write {}", path.display()))?;
        out.push(Written::Wrote(path, exists));
    }
    Ok(out)
}

/// Runs `init`.
pub fn run(a: InitArgs) -> anyhow::Result<ExitCode> {
    let path = a
        .file
        .unwrap_or_else(|| PathBuf::from(crate::engine::config::FILE_NAME));
    if !a.agents_only && path.exists() && !a.force {
        super::output::warn(&format!(
            "loopwatch: {} exists; pass --force to replace it (or --agents-only to write only the role files)",
            path.display()
        ));
        return Ok(ExitCode::from(2));
    }
    let base = path.parent().unwrap_or(Path::new(""));
    // The role files first: a configuration is never left pointing at
    // files that are not there.
    let mut kept = 0;
    for w in write_role_files(&base.join("agents"), a.force)? {
        match w {
            Written::Wrote(p, false) => super::output::say(&format!("wrote {}", p.display())),
            Written::Wrote(p, true) => super::output::say(&format!("replaced {}", p.display())),
            Written::Kept(p) => {
                kept += 1;
                super::output::say(&format!("kept {} (it exists)", p.display()));
            }
        }
    }
    if kept > 0 {
        super::output::say("(--force replaces existing role files with loopwatch's)");
    }
    if a.agents_only {
        return Ok(ExitCode::SUCCESS);
    }
    crate::util::replace_atomically(&path, template(a.preset).as_bytes())
        .with_context(|| format!("write {}", path.display()))?;
    super::output::say(&format!(
        "wrote {} ({} preset)",
        path.display(),
        a.preset.name()
    ));
    super::output::say(
        "commit loopwatch.toml and agents/ (or ignore them) before the first run: the verifier counts files that differ from the run's base as part of the change",
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::config::{AdapterKind, Config};

    fn executable(p: &Path) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// `# key = value` lines of `text` switched on.
    fn uncommented(text: &str) -> String {
        text.lines()
            .map(|l| match l.strip_prefix("# ") {
                Some(t) if t.starts_with('[') || t.contains(" = ") => t,
                _ => l,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Every preset parses with the role files `init` writes, and so does
    /// its review stage once switched on; the claude and codex presets point
    /// every agent at its role file.
    #[test]
    fn every_preset_is_a_valid_configuration_pointing_at_its_role_files() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        for exe in ["bin/claude", "bin/codex"] {
            executable(&dir.path().join(exe));
        }
        for role in AgentRole::ALL {
            executable(&dir.path().join(format!("agents/{role}.sh")));
        }
        write_role_files(&dir.path().join("agents"), false).unwrap();
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
            for a in c.agents.values() {
                let want =
                    (preset != Preset::Commands).then(|| dir.path().join(roles::init_path(a.role)));
                assert_eq!(a.prompt_file, want, "{preset:?} {}", a.role);
            }
            // The preset's own tables with its review stage, notifications
            // and expiry switched on (the other presets stay out).
            let own = text
                .split("\n# Other preset, ready to swap in:\n")
                .next()
                .unwrap();
            let full = format!("{own}\n{}\n", uncommented(&review(preset)))
                .replace("enabled = false", "enabled = true");
            let c = Config::parse(&file, &full, Some(bin.as_os_str()))
                .unwrap_or_else(|e| panic!("{preset:?} with its review stage: {e}\n{full}"));
            assert_eq!(c.agents.len(), 7, "{preset:?}");
            assert_eq!(
                c.agent(AgentRole::FindingVerifier).unwrap().max_concurrency,
                4
            );
            assert_eq!(c.agent(AgentRole::Triage).unwrap().adapter, adapter);
            assert!(c.verify_by_test.enabled);
            assert!(c.notify.webhook.is_some());
            assert_eq!(c.expiry.len(), 1);
        }
    }

    #[test]
    fn role_files_are_written_once_and_replaced_only_by_force() {
        let dir = tempfile::tempdir().unwrap();
        let agents = dir.path().join("agents");
        std::fs::create_dir_all(&agents).unwrap();
        std::fs::write(agents.join("verifier.md"), "mine\n").unwrap();
        let w = write_role_files(&agents, false).unwrap();
        assert_eq!(w.len(), 7);
        assert!(w.contains(&Written::Kept(agents.join("verifier.md"))));
        assert!(w.contains(&Written::Wrote(agents.join("auditor.md"), false)));
        assert_eq!(
            std::fs::read_to_string(agents.join("verifier.md")).unwrap(),
            "mine\n"
        );
        assert_eq!(
            std::fs::read_to_string(agents.join("auditor.md")).unwrap(),
            roles::role_file(AgentRole::Auditor).text
        );
        let w = write_role_files(&agents, true).unwrap();
        assert!(w.contains(&Written::Wrote(agents.join("verifier.md"), true)));
        assert_eq!(
            std::fs::read_to_string(agents.join("verifier.md")).unwrap(),
            roles::role_file(AgentRole::Verifier).text
        );
    }
}
