//! `loopwatch floor-guard <base-ref> [-- <pathspec>...]`.

use std::process::ExitCode;

use clap::Args;

use super::Globals;

/// Arguments of `floor-guard`, taken verbatim (usage errors exit 3).
#[derive(Debug, Args)]
pub struct FloorGuardArgs {
    /// `<base-ref> [-- <pathspec>...]`.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub args: Vec<std::ffi::OsString>,
}

/// Runs `floor-guard`.
pub fn run(_args: FloorGuardArgs, _globals: &Globals) -> anyhow::Result<ExitCode> {
    anyhow::bail!("floor-guard is being built")
}
