//! The command line: clap definitions and one small function per subcommand.
//!
//! Exit codes shared by the recording commands: 0 go on, 10 a human gate is
//! open (await it), 11 back to the developer, 12 retry the gate, 13 stop (a
//! person stopped the run), 2 bad input or usage, 3 no pipeline.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

pub mod config;
pub mod evidence_gate;
pub mod floor_guard;
pub mod gate0;
pub mod triage;

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
    /// Show where the config file is looked for; `--default` prints the default file.
    Config(config::ConfigArgs),
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("loopwatch: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let globals = Globals {
        pipeline: cli.pipeline,
    };
    match cli.command {
        Some(Command::Gate0(a)) => gate0::run(a, &globals),
        Some(Command::FloorGuard(a)) => floor_guard::run(a, &globals),
        Some(Command::EvidenceGate(a)) => evidence_gate::run(a, &globals),
        Some(Command::Triage(a)) => triage::run(a, &globals),
        Some(Command::Config(a)) => config::run(a, &globals),
        None => {
            Cli::command().print_help()?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Options every subcommand may use.
#[derive(Debug, Clone, Default)]
pub struct Globals {
    /// `--pipeline DIR`.
    pub pipeline: Option<PathBuf>,
}
