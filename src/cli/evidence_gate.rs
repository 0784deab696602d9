//! `loopwatch evidence-gate --claim test --status passed|failed --log FILE [--test REF]`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::Globals;
use crate::checks::evidence_gate::{self, Claim, ClaimStatus};

/// Arguments of `evidence-gate`.
///
/// Reads the output of cargo test, cargo-nextest, pytest, jest, vitest,
/// go test, gradle or xcodebuild (the last 8 MiB of the log, colour codes
/// removed). The claim holds only when the log shows at least one test
/// run, the status claimed (no failure for `passed`; a failure for
/// `failed`) and, with `--test`, that very test with that status (matched
/// by its full name or its last `::` segment). Anything unrecognised is
/// not proof.
#[derive(Debug, Args)]
pub struct EvidenceGateArgs {
    /// What is claimed (only `test`: a test run).
    #[arg(long, value_enum, value_name = "KIND")]
    pub claim: ClaimKind,
    /// The status claimed.
    #[arg(long, value_enum)]
    pub status: StatusArg,
    /// The test log to check.
    #[arg(long, value_name = "FILE", value_parser = super::output::not_a_folder)]
    pub log: PathBuf,
    /// The test that must appear with that status (`tests/a.rs::name`).
    #[arg(long = "test", value_name = "REF")]
    pub test: Option<String>,
}

/// `--claim`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ClaimKind {
    /// A claim about a test run.
    Test,
}

/// `--status`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum StatusArg {
    /// The run (and the named test) passed.
    Passed,
    /// The named test (or some test) failed.
    Failed,
}

/// Runs `evidence-gate`: 0 proven, 1 not proven (the reason is printed).
pub fn run(args: EvidenceGateArgs, _globals: &Globals) -> anyhow::Result<ExitCode> {
    let ClaimKind::Test = args.claim;
    let claim = Claim {
        status: match args.status {
            StatusArg::Passed => ClaimStatus::Passed,
            StatusArg::Failed => ClaimStatus::Failed,
        },
        test: args.test,
    };
    let (line, proven) = match evidence_gate::read_log(&args.log) {
        Ok(log) => {
            let verdict = evidence_gate::judge(&log, &claim);
            (verdict.to_string(), verdict.is_proven())
        }
        Err(e) => (format!("not proven: {e}"), false),
    };
    let line = if std::io::stdout().is_terminal() {
        crate::sanitize::terminal_text(line.as_bytes())
    } else {
        line
    };
    println!("{line}");
    Ok(ExitCode::from(if proven { 0 } else { 1 }))
}
