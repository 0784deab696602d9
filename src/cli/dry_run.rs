//! `loopwatch run --dry-run[=ROLE] [CONTRACT]`: what `loopwatch run` would
//! start and send, per role of `loopwatch.toml`, without starting an
//! agent, taking a lock or writing a file.
//!
//! For each dispatch: the command line as the adapter builds it
//! ([`adapter::invocation`]), where its instructions come from and how they
//! reach the agent, and the inputs of the first dispatch of the run (the
//! run in progress, or a new one on CONTRACT). The steps whose input is
//! made from what the run produces (the review's text, a finding, the
//! verdicts, the repro-test request) are shown as their shape, built by the
//! same code with `<…>` placeholders. Everything printed goes through the
//! sanitiser: a prompt file or a contract cannot reach the terminal raw.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::engine::adapter::{self, Request};
use crate::engine::config::{AgentConfig, Config};
use crate::engine::driver::{new_run_info, relative_contract};
use crate::engine::roles;
use crate::engine::{EngineError, Options, Refusal};
use crate::journal::snapshot;
use crate::model::State;
use crate::model::event::{AgentRole, RunInfo};

mod inputs;

use inputs::{Dispatch, dispatches};

/// The value of `--dry-run` alone: every role.
pub const ALL: &str = "all";

/// Prints the dry run of `opts` for every role, or only `only`'s.
pub fn run(opts: &Options, only: &str) -> anyhow::Result<ExitCode> {
    match plan(opts, only) {
        Ok(text) => {
            super::output::say(&text);
            Ok(ExitCode::SUCCESS)
        }
        Err(msg) => {
            super::output::warn(&format!("loopwatch: {msg}"));
            Ok(ExitCode::from(2))
        }
    }
}

/// The run the dispatches serve.
struct Target {
    /// Its `run`.
    run: RunInfo,
    /// Its state (a new run's: only its `run`).
    state: State,
    /// How it was found, for the header.
    what: String,
}

/// The whole dry run as text; the error is why `loopwatch run` would refuse.
fn plan(opts: &Options, only: &str) -> Result<String, String> {
    let config = &opts.config;
    let roles = chosen_roles(config, only)?;
    let worktree = std::path::absolute(opts.pipeline.worktree())
        .unwrap_or_else(|_| opts.pipeline.worktree().to_path_buf());
    let target = target(opts, &worktree).map_err(|e| e.to_string())?;
    let run = &target.run;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "loopwatch run --dry-run: nothing was started, locked or written."
    );
    let _ = writeln!(o, "configuration: {}", config.path.display());
    let _ = writeln!(o, "worktree: {}", worktree.display());
    let _ = writeln!(o, "run: {}", target.what);
    let _ = writeln!(o, "  CONTRACT: {}", run.contract);
    let _ = writeln!(o, "  DIFF: {}", run.diff);
    let _ = writeln!(o, "  TEST: {}", shown_test(&run.test));
    if let Some(off) = config.verify_by_test_off() {
        let _ = writeln!(o, "note: {off}");
    }
    if let Some(note) = uncommitted(config, &worktree) {
        let _ = writeln!(o, "note: {note}");
    }
    for role in roles {
        let Some(agent) = config.agent(role) else {
            continue;
        };
        for d in dispatches(role, &target, &worktree)? {
            section(&mut o, agent, &d, run, &worktree)?;
        }
    }
    Ok(o)
}

/// The roles to show: every configured one, or the one asked for.
fn chosen_roles(config: &Config, only: &str) -> Result<Vec<AgentRole>, String> {
    if only == ALL {
        return Ok(AgentRole::ALL
            .into_iter()
            .filter(|r| config.agent(*r).is_some())
            .collect());
    }
    let role: AgentRole = only
        .parse()
        .map_err(|e: String| format!("--dry-run: {e}"))?;
    if config.agent(role).is_none() {
        return Err(format!(
            "--dry-run={role}: {} has no [agents.{role}]",
            config.path.display()
        ));
    }
    Ok(vec![role])
}

/// The run `loopwatch run` would drive, refused as it would refuse it.
fn target(opts: &Options, worktree: &Path) -> Result<Target, EngineError> {
    let state = match snapshot(&opts.pipeline) {
        Ok(Some(s)) => s.state,
        Ok(None) => State::default(),
        Err(e) => return Err(EngineError::Journal(e)),
    };
    if let (Some(run), None) = (&state.run, &state.ended) {
        if !run.engine {
            return Err(Refusal::OtherOrchestrator {
                run: run.id.clone(),
            }
            .into());
        }
        if let Some(c) = &opts.contract {
            let given = relative_contract(worktree, c)?;
            if given != run.contract {
                return Err(Refusal::OtherContract {
                    run: run.id.clone(),
                    contract: run.contract.clone(),
                    given,
                }
                .into());
            }
        }
        return Ok(Target {
            run: run.clone(),
            what: format!(
                "run {} in progress (resumed from the journal, iteration {})",
                run.id,
                state.iteration_number().max(1)
            ),
            state,
        });
    }
    let Some(contract) = &opts.contract else {
        return Err(match (&state.run, &state.ended) {
            (Some(run), Some(end)) => Refusal::EndedNoContract {
                run: run.id.clone(),
                status: end.status.as_str(),
            },
            _ => Refusal::NoContract,
        }
        .into());
    };
    let run = new_run_info(&opts.config, worktree, contract)?;
    Ok(Target {
        what: format!("a new run, {} (iteration 1)", run.id),
        state: State {
            run: Some(run.clone()),
            ..State::default()
        },
        run,
    })
}

/// Appends one dispatch's section.
fn section(
    o: &mut String,
    agent: &AgentConfig,
    d: &Dispatch,
    run: &RunInfo,
    worktree: &Path,
) -> Result<(), String> {
    let instructions = roles::instructions(agent, d.step).map_err(|e| {
        let file = agent.prompt_file.clone().unwrap_or_default();
        format!("read the prompt file {}: {e}", file.display())
    })?;
    let text = instructions.as_ref().map(|i| i.text.as_str());
    // Where the dispatch would write the instructions, and the read-only
    // roles' build folder, as the dispatch names them (nothing is created).
    let instructions_file = text.filter(|t| !t.trim().is_empty()).map(|_| {
        worktree
            .join(crate::journal::Pipeline::DIR_NAME)
            .join("agents")
            .join(format!("‹n›-{}.instructions", agent.role))
    });
    let build_dir = adapter::needs_build_dir(agent).then(|| adapter::build_dir(worktree));
    let req = Request {
        agent,
        instructions: text,
        instructions_file: instructions_file.as_deref(),
        inputs: &d.inputs,
        test: &run.test,
        worktree,
        build_dir: build_dir.as_deref(),
        max_budget_usd: None,
    };
    let inv = adapter::invocation(&req);
    let title = match d.step {
        Some(s) if roles::steps(agent.role).len() > 1 => format!("{} · step {s}", agent.role),
        _ => agent.role.to_string(),
    };
    let _ = writeln!(o, "\n== {title} ==");
    let _ = writeln!(
        o,
        "adapter: {} · timeout {} · working directory {}",
        agent.adapter.as_str(),
        duration(agent.timeout),
        worktree.display()
    );
    let _ = writeln!(o, "command: {}", command_line(&inv, text));
    let mut env = vec![format!("LW_ROLE={}", agent.role)];
    env.extend(d.step.map(|s| format!("LW_STEP={s}")));
    env.extend(d.finding.map(|f| format!("LW_FINDING_ID={f}")));
    let _ = writeln!(
        o,
        "environment: {} (and LW_CONTRACT, LW_DIFF, LW_TEST, LW_ITERATION, LW_PIPELINE, LW_INPUT_FILE, LW_DISPATCH)",
        env.join(" ")
    );
    let full = req.full_text();
    match &instructions {
        None => {
            let _ = writeln!(
                o,
                "instructions: none (a generic command without a prompt_file gets only its inputs)"
            );
        }
        Some(i) => {
            let from_file = instructions_file
                .as_ref()
                .is_some_and(|f| inv.args.iter().any(|a| a.as_os_str() == f.as_os_str()));
            let how = if from_file {
                "from a file the dispatch writes beside its input"
            } else if inv
                .args
                .iter()
                .any(|a| Some(a.to_string_lossy().as_ref()) == text)
            {
                "passed on the command line"
            } else if inv.stdin == full.as_bytes() {
                "on stdin, before the inputs"
            } else {
                "not passed by this adapter"
            };
            let part = match d.step {
                Some(s) if roles::steps(agent.role).len() > 1 => {
                    format!("its part for step {s}, ")
                }
                _ => String::new(),
            };
            let _ = writeln!(
                o,
                "instructions: {} ({part}{} lines), {how}",
                i.source,
                i.text.lines().count()
            );
        }
    }
    // Stdin is shown apart only when it is neither of the two texts shown.
    let (stdin, shown) = if inv.stdin == d.inputs.as_bytes() {
        ("the inputs".to_string(), true)
    } else if inv.stdin == full.as_bytes() {
        (
            "the instructions, a blank line, then the inputs".to_string(),
            true,
        )
    } else {
        (format!("{} bytes (shown below)", inv.stdin.len()), false)
    };
    let _ = writeln!(o, "stdin: {stdin}");
    let _ = writeln!(o, "inputs: {}", d.about);
    if let Some(i) = &instructions {
        let _ = writeln!(o, "--- instructions ---");
        push_block(o, &i.text);
    }
    let _ = writeln!(o, "--- inputs ---");
    push_block(o, &d.inputs);
    if !shown {
        let _ = writeln!(o, "--- stdin ---");
        push_block(o, &String::from_utf8_lossy(&inv.stdin));
    }
    let _ = writeln!(o, "--- end of {title} ---");
    Ok(())
}

fn push_block(o: &mut String, text: &str) {
    o.push_str(text);
    if !text.ends_with('\n') {
        o.push('\n');
    }
}

/// The program and its arguments, quoted as a shell would need them; the
/// instructions, when an argument, stand as `<instructions>`.
fn command_line(inv: &adapter::Invocation, instructions: Option<&str>) -> String {
    std::iter::once(&inv.program)
        .chain(&inv.args)
        .map(|a| {
            let a = a.to_string_lossy();
            if instructions.is_some_and(|i| i == a) {
                return "<instructions>".to_string();
            }
            shlex::try_quote(&a).map_or_else(|_| format!("{a:?}"), |q| q.into_owned())
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `20m`, `1h 30m` (jiff's friendly format, as `loopwatch.toml` writes it).
fn duration(d: std::time::Duration) -> String {
    jiff::SignedDuration::try_from(d).map_or_else(|_| format!("{d:?}"), |s| format!("{s:#}"))
}

fn shown_test(test: &str) -> &str {
    if test.trim().is_empty() { "none" } else { test }
}

/// The configuration and prompt files inside the worktree that git does
/// not track (and does not ignore): the verifier would count them as part
/// of the change. Asked with `git ls-files`, which writes nothing.
fn uncommitted(config: &Config, worktree: &Path) -> Option<String> {
    let root = std::fs::canonicalize(worktree).ok()?;
    let mut files: Vec<PathBuf> = vec![config.path.clone()];
    files.extend(config.agents.values().filter_map(|a| a.prompt_file.clone()));
    let rel: Vec<String> = files
        .iter()
        .filter_map(|f| std::fs::canonicalize(f).ok())
        .filter_map(|f| f.strip_prefix(&root).ok().map(|r| r.display().to_string()))
        .collect();
    if rel.is_empty() {
        return None;
    }
    let mut args = vec!["ls-files", "--others", "--exclude-standard", "--"];
    args.extend(rel.iter().map(String::as_str));
    let out = crate::code::git_answer(&root, &args)?;
    let list: Vec<&str> = out.lines().collect();
    Some(format!(
        "not committed: {}: the verifier counts files that differ from the run's base as part of the change (commit or ignore them before the run)",
        list.join(", ")
    ))
}
