//! `loopwatch verify` and `loopwatch export`: a run checked offline, and
//! the run in one file to hand to someone without the worktree.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::Globals;
use super::output::{say, shown};
use crate::audit::archive::{ExportOptions, export};

/// `verify`.
#[derive(Debug, Args)]
#[command(after_long_help = "\
Checks, and names every break (where, and what differs): the journal's hash chain
(each line's `prev` is the sha256 of the line before it) and its seq; every decision's
evidenceHash against .pipeline/evidence/<id>.txt; every decision names a gate that was
asked; every snapshot tree an event names is in the repository (the worktree's, or the
archive's code.bundle); every change of the contract's judged parts was decided by a
person. An export archive is checked against its manifest first, with no worktree and
no network. With --allowed-signers, every signature (decisions, the export's manifest)
is checked with `ssh-keygen -Y verify` and an export must be signed.

Exit codes: 0 verified, 1 something is broken (each break printed), 2 usage, 3 no pipeline.")]
pub struct VerifyArgs {
    /// Worktree, .pipeline folder or export archive (default: the pipeline found from here).
    pub path: Option<PathBuf>,
    /// An allowed-signers file (git's format): check the signatures against it.
    #[arg(long, value_name = "FILE")]
    pub allowed_signers: Option<PathBuf>,
}

/// `export`.
#[derive(Debug, Args)]
#[command(after_long_help = "\
Writes one tar archive: loopwatch-export/MANIFEST.json (every file with its size and
sha256), MANIFEST.json.sig with --sign, pipeline/ (the journal, state.json, evidence/,
gates/, triage and verify files, report.md; agents/ with --logs) and code.bundle (the
run's snapshot refs as a git bundle). `loopwatch verify FILE` checks it; `replay FILE`
and `report FILE` open it read-only.

Exit codes: 0 written, 2 usage, unreadable pipeline or signing failed, 3 no pipeline.")]
pub struct ExportArgs {
    /// Worktree or .pipeline folder (default: found from here).
    pub path: Option<PathBuf>,
    /// The archive to write.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Include the agents' inputs, logs and answers (.pipeline/agents/).
    #[arg(long)]
    pub logs: bool,
    /// Sign the manifest with your SSH key (ssh-keygen -Y sign -n loopwatch).
    #[arg(long)]
    pub sign: bool,
    /// The SSH key to sign with (default: LOOPWATCH_SIGNING_KEY, git's user.signingkey,
    /// ~/.ssh/id_ed25519).
    #[arg(long, value_name = "FILE", requires = "sign")]
    pub key: Option<PathBuf>,
}

/// Runs `verify`.
pub fn verify(a: VerifyArgs, globals: &Globals) -> anyhow::Result<ExitCode> {
    let path = match a.path {
        Some(p) => p,
        None => globals.pipeline_for_reading()?.dir().to_path_buf(),
    };
    if !path.exists() {
        anyhow::bail!(
            "{}: no such file or folder",
            shown(&path.display().to_string())
        );
    }
    if path.is_dir() {
        let pipeline = crate::journal::Pipeline::from_user_path(&path);
        if !pipeline.journal_path().exists() {
            return Err(pipeline.missing().into());
        }
    }
    let v = crate::audit::verify_path(&path, a.allowed_signers.as_deref());
    for b in &v.breaks {
        say(&format!("BROKEN {}", shown(&b.to_string())));
    }
    if v.ok() {
        say(&format!("verified: {}", v.summary()));
        Ok(ExitCode::SUCCESS)
    } else {
        say(&format!(
            "not verified: {} ({})",
            crate::util::count(v.breaks.len(), "break"),
            v.summary()
        ));
        Ok(ExitCode::from(1))
    }
}

/// Runs `export`.
pub fn export_run(a: ExportArgs, globals: &Globals) -> anyhow::Result<ExitCode> {
    let pipeline = match &a.path {
        Some(p) => crate::journal::Pipeline::from_user_path(p),
        None => globals.pipeline_for_reading()?,
    };
    if !pipeline.journal_path().exists() {
        return Err(pipeline.missing().into());
    }
    let sign_with = if a.sign {
        Some(crate::audit::sign::signing_key(a.key.as_deref())?)
    } else {
        None
    };
    let done = export(
        &pipeline,
        &a.out,
        &ExportOptions {
            logs: a.logs,
            sign_with,
        },
    )?;
    say(&format!(
        "exported {} files of run {} to {}{}",
        done.manifest.files.len(),
        shown(&done.manifest.run),
        shown(&a.out.display().to_string()),
        if done.signed { " (signed)" } else { "" }
    ));
    if let Some(why) = &done.manifest.bundle_missing {
        say(&format!("no code bundle: {}", shown(why)));
    }
    Ok(ExitCode::SUCCESS)
}
