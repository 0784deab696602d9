//! `loopwatch demo`: a real loop in a throwaway git worktree, driven by the
//! loop engine (the same code as `loopwatch run`) with a `loopwatch.toml`
//! whose agents are scripted (`assets/demo/agents/`): the developer, the
//! verifier, the auditor, the reviewer and the finding verifier (the
//! triage is derived by the engine) and the verify-by-test agent.
//!
//! The story: GATE 0 UNMET then MET; GATE 1 ECARTS with an out-of-scope
//! Makefile (a human gate); the review: four findings verified in four
//! lanes at once (one VERIFIED and blocking, one FALSE, one whose fenced
//! first answer the verdict gate rejects before the second passes, one
//! UNVERIFIABLE: a human gate), a repro test written for the blocking one
//! and run by loopwatch (confirmed: a red test), the finding and its red
//! test back to the developer, the test rerun green after its work;
//! GATE 1 with a criterion left UNVERIFIABLE (another human gate); a clean
//! review; GATE 2 BLOCK; back to the developer; GATE 1 CONFORME, a clean
//! review, GATE 2 PASS; the end of the run. With the TUI, the person's
//! decisions steer it; with `--no-tui` a scripted person decides.

use std::path::{Path, PathBuf};

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
        "auditor.sh",
        include_str!("../../assets/demo/agents/auditor.sh"),
    ),
    (
        "reviewer.sh",
        include_str!("../../assets/demo/agents/reviewer.sh"),
    ),
    (
        "finding-verifier.sh",
        include_str!("../../assets/demo/agents/finding-verifier.sh"),
    ),
    (
        "verify-by-test.sh",
        include_str!("../../assets/demo/agents/verify-by-test.sh"),
    ),
    (
        "person.sh",
        include_str!("../../assets/demo/agents/person.sh"),
    ),
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
    // The tools are shell; their tests run through cargo, so verify-by-test
    // has a runner whose one-test command it knows.
    for (rel, text) in [
        (
            "Cargo.toml",
            include_str!("../../assets/demo/project/Cargo.toml"),
        ),
        (
            "Cargo.lock",
            include_str!("../../assets/demo/project/Cargo.lock"),
        ),
        (
            "src/lib.rs",
            include_str!("../../assets/demo/project/lib.rs"),
        ),
        (
            ".gitignore",
            include_str!("../../assets/demo/project/gitignore"),
        ),
    ] {
        write(&root.join(rel), text)?;
    }
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

/// The demo's `loopwatch.toml`: the scripted agents, paced by `speed`,
/// with the generic adapter (the agents read what they need from the
/// worktree and `LW_*`).
pub fn config_text(paths: &DemoPaths, speed: f64) -> anyhow::Result<String> {
    let exe = std::env::current_exe().context("locate the loopwatch binary")?;
    let a = &paths.agents;
    let q = |p: &Path| format!("'{}'", p.display().to_string().replace('\'', "'\\''"));
    let env = format!(
        "LOOPWATCH={} DEMO_SPEED={speed} DEMO_AGENTS={} DEMO_STATE={} DEMO_WORKTREE={}",
        q(&exe),
        q(a),
        q(&a.join("state")),
        q(&paths.worktree)
    );
    let agent = |name: &str| format!("{env} bash {}", q(&a.join(name)));
    let toml_str = |s: String| toml::Value::String(s).to_string();
    Ok(format!(
        "# The scripted agents of `loopwatch demo`.\n[run]\ntest = \"cargo test\"\ngrace = \"2s\"\n\n\
         [agents.developer]\ncommand = {}\ntimeout = \"5m\"\n\n\
         [agents.verifier]\ncommand = {}\ntimeout = \"5m\"\n\n\
         [agents.auditor]\ncommand = {}\ntimeout = \"5m\"\n\n\
         [agents.reviewer]\ncommand = {}\ntimeout = \"5m\"\n\n\
         [agents.finding-verifier]\ncommand = {}\ntimeout = \"5m\"\nmax_concurrency = 4\n\n\
         [agents.verify-by-test]\ncommand = {}\ntimeout = \"5m\"\n\n\
         # One repro test per accepted blocking finding, run by loopwatch.\n\
         [verify_by_test]\nenabled = true\nmax_findings = 3\nstep_timeout = \"5m\"\n",
        toml_str(agent("developer.sh")),
        toml_str(agent("verifier.sh")),
        toml_str(agent("auditor.sh")),
        toml_str(agent("reviewer.sh")),
        toml_str(agent("finding-verifier.sh")),
        toml_str(agent("verify-by-test.sh")),
    ))
}

/// Writes the demo's `loopwatch.toml` (beside the agents, outside the
/// diff) and returns what `loopwatch run` would be given.
pub fn engine_options(paths: &DemoPaths, speed: f64) -> anyhow::Result<crate::engine::Options> {
    let file = paths.agents.join("loopwatch.toml");
    write(&file, &config_text(paths, speed)?)?;
    let config = crate::engine::config::Config::load(&file)?;
    Ok(crate::engine::Options {
        config,
        pipeline: crate::journal::Pipeline::at(paths.worktree.join(".pipeline")),
        contract: Some(paths.worktree.join(CONTRACT)),
        new: false,
    })
}

/// The scripted person of `--no-tui`: each human gate that opens is handed
/// to `person.sh`, which waits a moment and takes the decision that lets
/// the run go on. Returns when `done` turns true.
pub fn scripted_person(
    paths: &DemoPaths,
    speed: f64,
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> anyhow::Result<std::thread::JoinHandle<()>> {
    use std::sync::atomic::Ordering;
    let exe = std::env::current_exe().context("locate the loopwatch binary")?;
    let paths = paths.clone();
    let pipeline = crate::journal::Pipeline::at(paths.worktree.join(".pipeline"));
    let (tx, rx) = std::sync::mpsc::channel();
    let watch = crate::watch::PipelineWatch::start(pipeline.dir(), move |_| {
        let _ = tx.send(());
    })
    .context("watch the demo pipeline")?;
    Ok(std::thread::spawn(move || {
        let _watch = watch;
        let mut feed = crate::watch::Feed::new(pipeline);
        let mut handled: Vec<String> = Vec::new();
        while !done.load(Ordering::SeqCst) {
            feed.refresh();
            let open: Vec<String> = feed
                .state()
                .open_human_gates()
                .map(|g| g.request.id.clone())
                .filter(|id| !handled.contains(id))
                .collect();
            for id in open {
                let _ = crate::process::Command::new("bash", &paths.worktree)
                    .arg(paths.agents.join("person.sh"))
                    .arg(&id)
                    .env("LOOPWATCH", &exe)
                    .env("DEMO_SPEED", format!("{speed}"))
                    .env("DEMO_AGENTS", &paths.agents)
                    .env("DEMO_STATE", paths.agents.join("state"))
                    .env_remove("LOOPWATCH_PIPELINE")
                    .deadline(std::time::Duration::from_secs(120))
                    .run();
                handled.push(id);
            }
            // Woken by the watch; the timeout only lets `done` be seen.
            let _ = rx.recv_timeout(std::time::Duration::from_millis(500));
        }
    }))
}

fn git(dir: &Path, args: &[&str]) -> anyhow::Result<()> {
    crate::code::git_stdout(dir, args)
        .context("setting up the demo's worktree (the demo needs git)")?;
    Ok(())
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, text).with_context(|| format!("write {}", path.display()))
}
