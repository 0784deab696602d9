//! `record run-start` and `record run-end`: the two ends of a run. The
//! contract is checked before a run starts; a report lost after `run.ended`
//! is written by a second `run-end`.

use std::process::ExitCode;

use anyhow::Context;

use super::output::{finish, say, shown};
use super::record::{RunEndArgs, RunStartArgs};
use crate::model::event::RunInfo;

use crate::recorder::{RecordError, Recorder, Refusal};

/// Largest contract read at `run-start`.
const MAX_CONTRACT_BYTES: u64 = 16 * 1024 * 1024;

pub(super) fn run_start(rec: &Recorder, a: RunStartArgs) -> anyhow::Result<ExitCode> {
    // The contract must be there and hold something: a run without one
    // could never pass GATE 0, and a typo would only show up gates later.
    let contract = crate::util::read_regular(&a.contract, MAX_CONTRACT_BYTES)
        .with_context(|| format!("--contract {}", a.contract.display()))?;
    if contract.iter().all(u8::is_ascii_whitespace) {
        anyhow::bail!("--contract {} is empty", a.contract.display());
    }
    let id = match a.id {
        Some(id) => id,
        None => a
            .contract
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .context("--contract has no file name; pass --id")?,
    };
    let worktree = rec.pipeline().worktree().to_path_buf();
    let branch = a.branch.unwrap_or_else(|| {
        crate::code::git_answer(&worktree, &["rev-parse", "--abbrev-ref", "HEAD"])
            .unwrap_or_default()
    });
    let info = RunInfo {
        id,
        flow: a.flow,
        branch,
        contract: relative_to(&a.contract, &worktree),
        diff: a.diff.unwrap_or_default(),
        test: a.test.unwrap_or_default(),
        worktree: worktree.display().to_string(),
        max_rounds: Some(a.max_rounds),
        engine: false,
        review: None,
        budget: None,
        extra: Default::default(),
    };
    let out = rec.run_start(info, a.force)?;
    say(&format!(
        "run started: {}",
        shown(out.state.run.as_ref().map_or("", |r| r.id.as_str()))
    ));
    Ok(finish(&out, false))
}

pub(super) fn run_end(rec: &Recorder, a: RunEndArgs) -> anyhow::Result<ExitCode> {
    let path = rec.pipeline().dir().join(crate::recorder::REPORT);
    let out = match rec.run_end(a.status) {
        Ok(out) => out,
        // `run.ended` is recorded but the report was never written (the
        // writer died between the two): write it now, append nothing.
        Err(RecordError::Refused(Refusal::AlreadyEnded))
            if std::fs::symlink_metadata(&path).is_err() =>
        {
            let Some(snap) = crate::journal::snapshot(rec.pipeline())? else {
                anyhow::bail!("the run has already ended");
            };
            let ended = snap.state.ended.as_ref().map(|e| e.status);
            if ended != Some(a.status) {
                anyhow::bail!(
                    "the run has already ended as {}: its missing report is written by `record run-end --status {}`",
                    ended.map_or("?", |e| e.as_str()),
                    ended.map_or("?", |e| e.as_str())
                );
            }
            rec.write_report(&snap.state)?;
            say(&format!(
                "run already ended: {}; its missing report was written ({})",
                a.status.as_str(),
                shown(&path.display().to_string())
            ));
            return Ok(ExitCode::from(snap.state.next.action().exit_code()));
        }
        Err(e) => return Err(e.into()),
    };
    say(&format!(
        "run ended: {} (report: {})",
        a.status.as_str(),
        shown(&path.display().to_string())
    ));
    Ok(finish(&out, false))
}

/// The contract path as recorded: relative to the worktree when it is inside it.
fn relative_to(path: &std::path::Path, worktree: &std::path::Path) -> String {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    let canon_wt = std::fs::canonicalize(worktree).unwrap_or_else(|_| worktree.to_path_buf());
    let canon = abs
        .parent()
        .and_then(|p| std::fs::canonicalize(p).ok())
        .map(|p| p.join(abs.file_name().unwrap_or_default()));
    match canon
        .as_deref()
        .and_then(|c| c.strip_prefix(&canon_wt).ok())
    {
        Some(rel) => rel.display().to_string(),
        None => path.display().to_string(),
    }
}
