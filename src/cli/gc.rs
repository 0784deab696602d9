//! `loopwatch gc`: removes the refs that keep a run's code snapshots
//! reachable, so git can drop their objects.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::Globals;
use super::output::shown;

/// `gc`.
#[derive(Debug, Args)]
#[command(after_long_help = "\
Every GATE 0 round and every run start records a snapshot of the code as a
git tree, kept reachable under refs/loopwatch/<run-id>/ so that git gc does
not drop it. This removes those refs (of one run with --run, else of every
run); the objects go at git's next gc (git gc --prune=now drops them at
once). The same by hand:
  git for-each-ref --format='delete %(refname)' refs/loopwatch/<run-id>/ | git update-ref --stdin
Exit codes: 0 done, 2 not a git worktree or git failed.")]
pub struct GcArgs {
    /// A folder of the git worktree (default: the pipeline's worktree, or here).
    pub path: Option<PathBuf>,
    /// Only the snapshots of this run id.
    #[arg(long, value_name = "ID")]
    pub run: Option<String>,
    /// List what would be removed; remove nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// Runs `gc`.
pub fn run(a: GcArgs, globals: &Globals) -> anyhow::Result<ExitCode> {
    let worktree = match (&a.path, &globals.pipeline) {
        (Some(p), _) => p.clone(),
        (None, Some(p)) => crate::journal::Pipeline::at(p).worktree().to_path_buf(),
        (None, None) => std::env::current_dir()?,
    };
    let run = a.run.as_deref();
    let refs = if a.dry_run {
        crate::code::kept(&worktree, run)
    } else {
        crate::code::remove_kept(&worktree, run)
    };
    let refs = match refs {
        Ok(r) => r,
        Err(e) => {
            eprintln!("loopwatch: {}", shown(&e.to_string()));
            return Ok(ExitCode::from(2));
        }
    };
    let verb = if a.dry_run { "would remove" } else { "removed" };
    for r in &refs {
        println!("{verb} {} (tree {})", shown(&r.name), r.tree);
    }
    let n = refs.len();
    let what = if n == 1 { "snapshot" } else { "snapshots" };
    if n > 0 && !a.dry_run {
        println!("{verb} {n} {what}; `git gc --prune=now` drops their objects now");
    } else {
        println!("{verb} {n} {what}");
    }
    Ok(ExitCode::SUCCESS)
}
