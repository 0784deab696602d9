//! `loopwatch triage apply TRIAGE.json --verification FILE`.

use std::process::ExitCode;

use clap::Args;

use super::Globals;

/// Arguments of `triage`.
#[derive(Debug, Args)]
pub struct TriageArgs {
    /// Raw arguments.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub args: Vec<std::ffi::OsString>,
}

/// Runs `triage`.
pub fn run(_args: TriageArgs, _globals: &Globals) -> anyhow::Result<ExitCode> {
    anyhow::bail!("triage is being built")
}
