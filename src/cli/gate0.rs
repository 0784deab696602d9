//! `loopwatch gate0 status|run CONTRACT`.

use std::process::ExitCode;

use clap::Args;

use super::Globals;

/// Arguments of `gate0`, taken verbatim so usage errors print the
/// reference floor's one-line verdict.
#[derive(Debug, Args)]
pub struct Gate0Args {
    /// `status` or `run`, then the contract path.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub args: Vec<std::ffi::OsString>,
}

/// Runs `gate0`.
pub fn run(_args: Gate0Args, _globals: &Globals) -> anyhow::Result<ExitCode> {
    anyhow::bail!("gate0 is being built")
}
