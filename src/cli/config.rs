//! `loopwatch config`: where the config file is looked for, and
//! `--default` to print the default file (a starting point to edit).

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use super::Globals;
use crate::tui::config::{Config, DEFAULT_CONFIG};

/// Arguments of `config`.
#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// Print the default config file (every setting, with comments).
    #[arg(long)]
    pub default: bool,
}

/// Runs `config`: prints the default file, or the path in use and the
/// warnings it raises (exit 2 when it cannot be loaded).
pub fn run(args: ConfigArgs, _globals: &Globals) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    if args.default {
        out.write_all(DEFAULT_CONFIG.as_bytes())
            .context("writing to stdout")?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(path) = crate::notify::UserSettings::user_path() else {
        writeln!(
            out,
            "no config path: neither XDG_CONFIG_HOME nor HOME is set (defaults in use)"
        )?;
        return Ok(ExitCode::SUCCESS);
    };
    let exists = path.exists();
    let config = Config::load(&path)?;
    let state = if exists {
        ""
    } else {
        " (absent: defaults in use)"
    };
    writeln!(out, "{}{state}", path.display())?;
    for w in &config.warnings {
        writeln!(out, "warning: {w}")?;
    }
    Ok(ExitCode::SUCCESS)
}
