//! git as the tests run it: hermetic (no global or system configuration
//! read, a fixed author and committer), failing with git's own message.

use std::path::Path;
use std::process::{Command, Stdio};

/// The environment that makes git (and a program that runs git) see no
/// configuration of the machine, with a fixed identity.
pub const ENV: [(&str, &str); 6] = [
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_AUTHOR_NAME", "Ana"),
    ("GIT_AUTHOR_EMAIL", "ana@example.org"),
    ("GIT_COMMITTER_NAME", "Ana"),
    ("GIT_COMMITTER_EMAIL", "ana@example.org"),
];

/// Gives `cmd` (git, or a program that runs git) [`ENV`].
pub fn hermetic(cmd: &mut Command) -> &mut Command {
    cmd.envs(ENV)
}

/// Runs git in `dir`: whether it succeeded, its stdout and stderr.
pub fn git_any(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let out = hermetic(&mut Command::new("git"))
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        // Reading the status must not refresh the index it is compared by.
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .expect("git runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs git in `dir`, which must succeed; its stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let (ok, out, err) = git_any(dir, args);
    assert!(ok, "git {args:?}: {err}");
    out
}

/// A git repository in `root` (created), whose own configuration names a
/// committer (for the programs a test starts there without [`ENV`]).
pub fn git_init(root: &Path) {
    std::fs::create_dir_all(root).expect("create the repository's folder");
    git(root, &["init", "-q"]);
    git(root, &["config", "user.email", "ana@example.org"]);
    git(root, &["config", "user.name", "Ana"]);
}

/// Commits everything in the worktree `root`.
pub fn commit_all(root: &Path, message: &str) {
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", message]);
}

/// `git status --porcelain --untracked-files=all` of `root`, sorted.
pub fn git_status(root: &Path) -> Vec<String> {
    let mut lines: Vec<String> = git(root, &["status", "--porcelain", "--untracked-files=all"])
        .lines()
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}
