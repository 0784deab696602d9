//! The command line: clap definitions and one small function per subcommand.
//!
//! Every command prints through [`output`] (one sanitiser for every line)
//! and fails with an error whose exit code is decided in one place,
//! [`exit::code_of`]: 2 bad input, usage or a refusal, 3 no pipeline, 4 the
//! event was recorded but `state.json` is stale. The recording commands'
//! own outcomes are 0 go on, 10 a human gate is open (await it), 11 back to
//! the developer, 12 retry the gate, 13 stop (a person stopped the run).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub mod audit;
pub mod config;
pub mod demo;
pub mod dry_run;
pub mod evidence_gate;
pub mod exit;
pub mod floor_guard;
pub mod gate0;
pub mod gc;
pub mod human;
pub mod init;
pub mod logging;
pub mod misc;
pub mod output;
pub mod record;
pub mod record_run;
pub mod replay;
pub mod run;
pub mod status;
pub mod triage;
pub mod validate;
pub mod watch;

/// Supervise an AI coding agent's verify + secure loop.
#[derive(Debug, Parser)]
#[command(name = "loopwatch", version, about, long_about = None)]
pub struct Cli {
    /// The .pipeline folder to use (default: found by walking up from the current directory).
    #[arg(long, global = true, value_name = "DIR", env = "LOOPWATCH_PIPELINE")]
    pub pipeline: Option<PathBuf>,

    /// The subcommand (default: watch the pipeline found from here).
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Every subcommand.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Open the live view on one or several pipelines (the default command).
    Watch(watch::WatchArgs),
    /// Replay a run event by event (the same screens, fed from the journal).
    Replay(replay::ReplayArgs),
    /// A real loop driven by scripted agents in a temp worktree, with the TUI on it.
    Demo(demo::DemoArgs),
    /// Drive the loop: dispatch the agents of loopwatch.toml as the rules say.
    Run(run::RunArgs),
    /// Write a commented loopwatch.toml (Claude Code, Codex or your own commands).
    Init(init::InitArgs),
    /// One-shot summary of the pipeline.
    Status(status::StatusArgs),
    /// Record what happened in the loop (the orchestrator's calls).
    Record(record::RecordArgs),
    /// Open a human gate by hand; prints its id.
    Ask(human::AskArgs),
    /// Block until a human gate is decided; prints the decision as JSON.
    Await(human::AwaitArgs),
    /// Decide a human gate without the TUI.
    Decide(human::DecideArgs),
    /// Say a finding raised again is not the same as the earlier one it was matched with.
    Split(human::SplitArgs),
    /// What changed between two iterations.
    Diff(replay::DiffArgs),
    /// Write the run's report (markdown, JSON or self-contained HTML).
    Report(replay::ReportArgs),
    /// Remove the refs that keep the runs' code snapshots (refs/loopwatch/).
    Gc(gc::GcArgs),
    /// Check journals, states, triage files and finding verdicts against their schemas.
    Validate(validate::ValidateArgs),
    /// Check a run's record offline: hash chain, evidence, snapshots, decisions, signatures.
    Verify(audit::VerifyArgs),
    /// Write a run to one archive (journal, evidence, gate outputs, report, code bundle).
    Export(audit::ExportArgs),
    /// GATE 0: parse (status) or run (run) the CHECK: oracles of a contract.
    ///
    /// Exit codes: 0 MET, 2 UNMET / PENDING / ERROR, 3 ABANDONED.
    #[command(disable_help_flag = false)]
    Gate0(gate0::Gate0Args),
    /// Detect a quietly weakened quality bar in the diff against BASE.
    ///
    /// Exit codes: 0 clean, 2 findings, 3 usage.
    FloorGuard(floor_guard::FloorGuardArgs),
    /// Check that a repro test log proves the claimed status.
    ///
    /// Exit codes: 0 proven, 1 not proven (the reason is printed), 2 usage.
    EvidenceGate(evidence_gate::EvidenceGateArgs),
    /// Apply verify-by-test results to a triage file.
    Triage(triage::TriageArgs),
    /// Print the default configuration file.
    Config(config::ConfigArgs),
    /// Print a shell completion script.
    Completions(misc::CompletionsArgs),
    /// Print the man page.
    Man,
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return exit::clap_error(e),
    };
    let owns_terminal = match &cli.command {
        None | Some(Command::Replay(_)) => true,
        Some(Command::Watch(w)) => !w.headless,
        Some(Command::Demo(d)) => !d.no_tui,
        Some(Command::Run(r)) => !r.headless && r.dry_run.is_none(),
        _ => false,
    };
    let _log_guard = logging::init(owns_terminal);
    match run(cli) {
        Ok(code) => code,
        Err(e) => exit::fail(&e),
    }
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let globals = Globals {
        pipeline: cli.pipeline,
    };
    match cli.command {
        Some(Command::Watch(a)) => watch::run(a, &globals),
        Some(Command::Replay(a)) => replay::replay(a, &globals),
        Some(Command::Demo(a)) => demo::run(a, &globals),
        Some(Command::Run(a)) => run::run(a, &globals),
        Some(Command::Init(a)) => init::run(a),
        Some(Command::Status(a)) => status::run(a, &globals),
        Some(Command::Record(a)) => record::run(a, &globals),
        Some(Command::Ask(a)) => human::ask(a, &globals),
        Some(Command::Await(a)) => human::await_decision(a, &globals),
        Some(Command::Decide(a)) => human::decide(a, &globals),
        Some(Command::Split(a)) => human::split(a, &globals),
        Some(Command::Diff(a)) => replay::diff(a, &globals),
        Some(Command::Report(a)) => replay::report(a, &globals),
        Some(Command::Gc(a)) => gc::run(a, &globals),
        Some(Command::Validate(a)) => validate::run(a, &globals),
        Some(Command::Verify(a)) => audit::verify(a, &globals),
        Some(Command::Export(a)) => audit::export_run(a, &globals),
        Some(Command::Config(a)) => config::run(a, &globals),
        Some(Command::Completions(a)) => misc::completions(a),
        Some(Command::Man) => misc::man(),
        Some(Command::Gate0(a)) => gate0::run(a, &globals),
        Some(Command::FloorGuard(a)) => floor_guard::run(a, &globals),
        Some(Command::EvidenceGate(a)) => evidence_gate::run(a, &globals),
        Some(Command::Triage(a)) => triage::run(a, &globals),
        None => watch::run(watch::WatchArgs::default(), &globals),
    }
}

/// Options every subcommand may use.
#[derive(Debug, Clone, Default)]
pub struct Globals {
    /// `--pipeline DIR`.
    pub pipeline: Option<PathBuf>,
}
