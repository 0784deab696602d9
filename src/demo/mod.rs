//! `loopwatch demo`: a real loop in a throwaway git worktree, driven by the
//! orchestrator include (`assets/orchestrator/loop.sh`) with scripted
//! agents (`assets/demo/agents/`) that play the developer, the verifier,
//! the reviewer and finding verifier, verify-by-test and the auditor.
//! Every step goes through the real recorder CLI and GATE 0.
//!
//! The story: GATE 0 UNMET then MET; GATE 1 ECARTS with an out-of-scope
//! Makefile (a human gate); five findings (VERIFIED, FALSE, UNVERIFIABLE —
//! another human gate); verify-by-test confirmed / not reproduced /
//! inconclusive; GATE 2 BLOCK then PASS; the end of the run. With the TUI,
//! the person's decisions steer it; with `--no-tui` a scripted person decides.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context;

/// The contract's path inside the demo worktree.
pub const CONTRACT: &str = "docs/contracts/2026-11-30-invoice-total-rounding.md";

const AGENTS: [(&str, &str); 8] = [
    (
        "common.sh",
        include_str!("../../assets/demo/agents/common.sh"),
    ),
    (
        "developer.sh",
        include_str!("../../assets/demo/agents/developer.sh"),
    ),
    (
        "verifier.sh",
        include_str!("../../assets/demo/agents/verifier.sh"),
    ),
    (
        "reviewer.sh",
        include_str!("../../assets/demo/agents/reviewer.sh"),
    ),
    (
        "triage.sh",
        include_str!("../../assets/demo/agents/triage.sh"),
    ),
    (
        "auditor.sh",
        include_str!("../../assets/demo/agents/auditor.sh"),
    ),
    (
        "person.sh",
        include_str!("../../assets/demo/agents/person.sh"),
    ),
    ("loop.sh", include_str!("../../assets/orchestrator/loop.sh")),
];

/// Where a demo lives.
#[derive(Debug, Clone)]
pub struct DemoPaths {
    /// The git worktree (holds `.pipeline/`).
    pub worktree: PathBuf,
    /// The scripted agents (inside `.git/`, so they never show in the diff).
    pub agents: PathBuf,
}

/// Creates the demo worktree in `root`: a git repository with the contract
/// and a README committed, and the scripted agents beside it.
pub fn prepare(root: &Path) -> anyhow::Result<DemoPaths> {
    std::fs::create_dir_all(root).with_context(|| format!("create {}", root.display()))?;
    if root.join(".pipeline").exists() || root.join(".git").exists() {
        anyhow::bail!(
            "{} already holds a repository or a pipeline: give an empty folder",
            root.display()
        );
    }
    git(root, &["init", "-q"])?;
    git(root, &["config", "user.email", "demo@loopwatch.invalid"])?;
    git(root, &["config", "user.name", "loopwatch demo"])?;
    write(
        &root.join("README.md"),
        include_str!("../../assets/demo/project/README.md"),
    )?;
    write(
        &root.join(CONTRACT),
        include_str!("../../assets/demo/project/contract.md"),
    )?;
    git(root, &["add", "-A"])?;
    git(
        root,
        &[
            "commit",
            "-q",
            "-m",
            "invoice tools: contract for the total",
        ],
    )?;
    let agents = root.join(".git/loopwatch-demo");
    std::fs::create_dir_all(agents.join("state"))?;
    for (name, text) in AGENTS {
        write(&agents.join(name), text)?;
    }
    Ok(DemoPaths {
        worktree: root.to_path_buf(),
        agents,
    })
}

/// The orchestrator process that plays the run. `scripted_person` makes it
/// decide human gates itself (for `--no-tui`).
pub fn driver(paths: &DemoPaths, speed: f64, scripted_person: bool) -> anyhow::Result<Command> {
    let exe = std::env::current_exe().context("locate the loopwatch binary")?;
    let a = &paths.agents;
    let agent = |name: &str| format!("bash '{}'", a.join(name).display());
    let mut cmd = Command::new("bash");
    cmd.arg(a.join("loop.sh"))
        .arg(CONTRACT)
        .arg("feat")
        .current_dir(&paths.worktree)
        .env("LOOPWATCH", &exe)
        .env_remove("LOOPWATCH_PIPELINE")
        .env("LW_DEV_CMD", agent("developer.sh"))
        .env("LW_VERIFY_CMD", agent("verifier.sh"))
        .env("LW_AUDIT_CMD", agent("auditor.sh"))
        .env("LW_REVIEW_CMD", agent("reviewer.sh"))
        .env("LW_TRIAGE_CMD", agent("triage.sh"))
        .env("DEMO_SPEED", format!("{speed}"))
        .env("DEMO_AGENTS", a)
        .env("DEMO_STATE", a.join("state"))
        .env("DEMO_WORKTREE", &paths.worktree)
        .stdin(Stdio::null());
    if scripted_person {
        cmd.env(
            "LW_AWAIT_CMD",
            format!("bash '{}' \"$1\"", a.join("person.sh").display()),
        );
    }
    Ok(cmd)
}

fn git(dir: &Path, args: &[&str]) -> anyhow::Result<()> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .context("run git (the demo needs git installed)")?;
    if !out.status.success() {
        anyhow::bail!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, text).with_context(|| format!("write {}", path.display()))
}
