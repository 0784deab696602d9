//! The git side of floor-guard: resolve the base, then collect the diff of
//! tracked files, the deleted files and every untracked file git does not
//! ignore (each diffed against /dev/null, so all its lines are added).
//!
//! git always runs with `core.quotepath=off`, no colour, no external diff
//! driver and explicit `a/`/`b/` prefixes, so that user configuration
//! cannot change the text the parser reads. Lists are read NUL-separated.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::process::{self, Exit, Sink};

use super::FloorGuardError;

/// What the diff covers.
pub(super) struct Scope {
    /// Tracked diff followed by one diff per untracked file.
    pub diff_text: String,
    /// Deleted paths, relative to the repository root.
    pub deleted: Vec<String>,
}

/// The commit `base` names, or None when it names none.
pub(super) fn resolve_commit(cwd: &Path, base: &str) -> Result<Option<String>, FloorGuardError> {
    if base.is_empty() || base.starts_with('-') {
        return Ok(None);
    }
    let spec = format!("{base}^{{commit}}");
    let out = git(cwd, &["rev-parse", "--verify", "-q", &spec], None)?;
    let sha = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Ok((out.status.success() && !sha.is_empty()).then_some(sha))
}

/// The diff of the working tree against `commit`, restricted to `pathspec`.
pub(super) fn collect(
    cwd: &Path,
    commit: &str,
    pathspec: &[OsString],
) -> Result<Scope, FloorGuardError> {
    let mut diff = checked(
        cwd,
        &[DIFF, DIFF_FLAGS, &["--unified=0", commit]].concat(),
        Some(pathspec),
    )?
    .stdout;
    let deleted = checked(
        cwd,
        &[
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--diff-filter=D",
            "--name-only",
            "-z",
            commit,
        ],
        Some(pathspec),
    )?;
    let top = toplevel(cwd)?;
    // With no pathspec, untracked files of the whole work tree, like the diff.
    let everywhere = [OsString::from(":/")];
    let untracked_scope = if pathspec.is_empty() {
        &everywhere[..]
    } else {
        pathspec
    };
    let untracked = checked(
        cwd,
        &[
            "ls-files",
            "--others",
            "--exclude-standard",
            "--full-name",
            "-z",
        ],
        Some(untracked_scope),
    )?;
    for path in nul_separated(&untracked.stdout) {
        if path.ends_with('/') || top.join(&path).is_dir() {
            continue; // a nested repository: git lists it, but has no lines for it
        }
        diff.extend(untracked_diff(&top, &path)?);
    }
    Ok(Scope {
        diff_text: String::from_utf8_lossy(&diff).into_owned(),
        deleted: nul_separated(&deleted.stdout),
    })
}

const DIFF: &[&str] = &["diff"];
const DIFF_FLAGS: &[&str] = &[
    "--no-color",
    "--no-ext-diff",
    "--src-prefix=a/",
    "--dst-prefix=b/",
];

fn untracked_diff(top: &Path, path: &str) -> Result<Vec<u8>, FloorGuardError> {
    let args = [
        DIFF,
        &["--no-index"],
        DIFF_FLAGS,
        &["--unified=0", "--", "/dev/null", path],
    ]
    .concat();
    let out = git(top, &args, None)?;
    // --no-index exits 1 when the files differ, which they always do here.
    match out.status.code() {
        Some(0 | 1) => Ok(out.stdout),
        _ => Err(failure(top, &args, None, &out)),
    }
}

fn toplevel(cwd: &Path) -> Result<PathBuf, FloorGuardError> {
    let out = checked(cwd, &["rev-parse", "--show-toplevel"], None)?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(PathBuf::from(text.trim_end_matches('\n')))
}

fn nul_separated(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect()
}

/// Runs git and fails unless it exits 0.
fn checked(
    cwd: &Path,
    args: &[&str],
    pathspec: Option<&[OsString]>,
) -> Result<Output, FloorGuardError> {
    let out = git(cwd, args, pathspec)?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(failure(cwd, args, pathspec, &out))
    }
}

/// What a git command printed and how it ended.
pub(super) struct Output {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub status: Exit,
}

/// Runs `git -c core.quotepath=off <args> [-- <pathspec>...]` in `cwd`
/// (`--` is always given with a pathspec, even an empty one, so a ref can
/// never be read as a path), in the caller's environment as the reference
/// does, through the process runner with the code module's git deadline.
fn git(
    cwd: &Path,
    args: &[&str],
    pathspec: Option<&[OsString]>,
) -> Result<Output, FloorGuardError> {
    let mut cmd = process::Command::new("git", cwd)
        .args(["-c", "core.quotepath=off"])
        .args(args);
    if let Some(pathspec) = pathspec {
        cmd = cmd.arg("--").args(pathspec);
    }
    let failed = |message: String| FloorGuardError::Git {
        command: describe(args, pathspec),
        cwd: cwd.to_path_buf(),
        message,
    };
    let ended = cmd
        .deadline(crate::code::GIT_TIMEOUT)
        .stdout(Sink::capture(usize::MAX))
        .stderr(Sink::capture(64 * 1024))
        .run()
        .map_err(|e| failed(e.to_string()))?;
    if ended.timed_out() {
        return Err(failed(format!(
            "still running after {} s: stopped",
            crate::code::GIT_TIMEOUT.as_secs()
        )));
    }
    Ok(Output {
        stdout: ended.stdout.head,
        stderr: ended.stderr.head,
        status: ended.exit,
    })
}

fn failure(
    cwd: &Path,
    args: &[&str],
    pathspec: Option<&[OsString]>,
    out: &Output,
) -> FloorGuardError {
    let stderr = String::from_utf8_lossy(&out.stderr);
    FloorGuardError::Git {
        command: describe(args, pathspec),
        cwd: cwd.to_path_buf(),
        message: match stderr.trim() {
            "" => format!("exit status: {}", out.status.shell_code()),
            s => s.to_string(),
        },
    }
}

fn describe(args: &[&str], pathspec: Option<&[OsString]>) -> String {
    let mut s = args.join(" ");
    if let Some(pathspec) = pathspec {
        s.push_str(" --");
        for p in pathspec {
            s.push(' ');
            s.push_str(&OsStr::to_string_lossy(p));
        }
    }
    s
}
