//! `loopwatch evidence-gate --claim test --status passed|failed --log FILE [--test REF]`.

use std::process::ExitCode;

use clap::Args;

use super::Globals;

/// Arguments of `evidence-gate`.
#[derive(Debug, Args)]
pub struct EvidenceGateArgs {
    /// Raw arguments.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub args: Vec<std::ffi::OsString>,
}

/// Runs `evidence-gate`.
pub fn run(_args: EvidenceGateArgs, _globals: &Globals) -> anyhow::Result<ExitCode> {
    anyhow::bail!("evidence-gate is being built")
}
