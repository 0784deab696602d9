//! How this module runs git: through the process runner, with a clean
//! environment, fixed configuration overrides and a deadline, so a hung
//! git (or a filter it started) is stopped whole.
//!
//! Only plumbing commands are used and every result is parsed from
//! NUL-separated or fixed-format output, so user configuration such as
//! `color.ui=always`, `diff.mnemonicPrefix`, an external diff driver or a
//! textconv filter cannot change what is read.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::CodeError;
use crate::process::{self, Exit, Sink};

/// How long one git command may take before it is killed.
pub const GIT_TIMEOUT: Duration = Duration::from_secs(120);

/// Environment variables that would point git at another repository, index
/// or object store than the one this module names explicitly.
const INHERITED_GIT_ENV: [&str; 12] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_EXTERNAL_DIFF",
    "GIT_QUARANTINE_PATH",
];

/// Configuration forced on every command: no colour, no hooks (update-ref
/// runs `reference-transaction`), no signing, no automatic gc or
/// maintenance, no split index or fsmonitor that would write beside the
/// user's index, unquoted paths, and no `safecrlf` refusal: a snapshot
/// records files as they are (line endings converted as a commit would)
/// rather than fail on them.
const CONFIG: [&str; 11] = [
    "color.ui=never",
    "core.quotePath=false",
    "core.hooksPath=/dev/null",
    "commit.gpgSign=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "core.splitIndex=false",
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "core.safecrlf=false",
    "advice.addEmbeddedRepo=false",
];

/// The trimmed standard output of `git <args>` run in `dir` as this module
/// runs git (clean environment, deadline), when it succeeded and printed
/// something: for the small questions whose answer may be missing (the
/// branch, the head, the git folder).
pub fn answer(dir: &Path, args: &[&str]) -> Option<String> {
    let out = stdout(dir, args).ok()?;
    let s = String::from_utf8_lossy(&out).trim().to_string();
    (!s.is_empty()).then_some(s)
}

/// The standard output of `git <args>` run in `dir` as this module runs
/// git; an error naming the command and folder when git cannot start,
/// runs past its deadline or fails.
pub fn stdout(dir: &Path, args: &[&str]) -> Result<Vec<u8>, CodeError> {
    Git::new(dir, args).run().map(|o| o.stdout)
}

/// One git invocation being prepared.
pub(crate) struct Git {
    cwd: PathBuf,
    args: Vec<String>,
    envs: Vec<(String, String)>,
    input: Option<Vec<u8>>,
    timeout: Duration,
}

/// What a finished git command printed.
#[derive(Debug)]
pub(crate) struct GitOutput {
    /// Standard output.
    pub stdout: Vec<u8>,
    /// How it ended.
    pub status: Exit,
    /// Standard error, for messages.
    pub stderr: Vec<u8>,
}

impl Git {
    /// `git <args>` run in `cwd`.
    pub fn new<S: AsRef<str>>(cwd: &Path, args: &[S]) -> Self {
        Git {
            cwd: cwd.to_path_buf(),
            args: args.iter().map(|a| a.as_ref().to_string()).collect(),
            envs: Vec::new(),
            input: None,
            timeout: GIT_TIMEOUT,
        }
    }

    /// Appends arguments.
    pub fn args<S: AsRef<str>>(mut self, args: &[S]) -> Self {
        self.args
            .extend(args.iter().map(|a| a.as_ref().to_string()));
        self
    }

    /// Sets an environment variable for this command.
    pub fn env(mut self, key: &str, value: impl Into<String>) -> Self {
        self.envs.push((key.to_string(), value.into()));
        self
    }

    /// Bytes written to standard input.
    pub fn input(mut self, bytes: Vec<u8>) -> Self {
        self.input = Some(bytes);
        self
    }

    /// Runs it; an error when it cannot start, times out or exits non-zero.
    pub fn run(self) -> Result<GitOutput, CodeError> {
        let describe = self.args.join(" ");
        let cwd = self.cwd.clone();
        let out = self.run_any()?;
        if out.status.success() {
            return Ok(out);
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        Err(CodeError::Git {
            command: describe,
            cwd,
            message: match stderr.trim() {
                "" => format!("exit status {}", out.status.shell_code()),
                s => s.lines().take(5).collect::<Vec<_>>().join("; "),
            },
        })
    }

    /// Runs it and returns whatever it exited with.
    pub fn run_any(self) -> Result<GitOutput, CodeError> {
        let mut cmd = process::Command::new("git", &self.cwd);
        for kv in CONFIG {
            cmd = cmd.args(["-c", kv]);
        }
        cmd = cmd
            .args(&self.args)
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("LC_ALL", "C");
        for k in INHERITED_GIT_ENV {
            cmd = cmd.env_remove(k);
        }
        cmd = cmd.envs(self.envs.iter().map(|(k, v)| (k, v)));
        if let Some(bytes) = self.input {
            cmd = cmd.stdin(bytes);
        }
        let ended = cmd
            .deadline(self.timeout)
            .grace(Duration::from_millis(200))
            .stdout(Sink::capture(usize::MAX))
            .stderr(Sink::capture(STDERR_KEPT))
            .run()
            .map_err(|e| CodeError::Git {
                command: self.args.join(" "),
                cwd: self.cwd.clone(),
                message: e.to_string(),
            })?;
        if ended.timed_out() {
            return Err(CodeError::Timeout {
                command: self.args.join(" "),
                cwd: self.cwd.clone(),
                after: self.timeout,
            });
        }
        Ok(GitOutput {
            stdout: ended.stdout.head,
            status: ended.exit,
            stderr: ended.stderr.head,
        })
    }
}

/// Bytes of git's stderr kept for messages.
const STDERR_KEPT: usize = 64 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_the_trimmed_output_of_a_git_command_that_succeeded() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert_eq!(answer(root, &["rev-parse", "--abbrev-ref", "HEAD"]), None);
        Git::new(root, &["init", "-q", "-b", "trunk"])
            .run()
            .unwrap();
        // Before the first commit, HEAD names no commit: git fails.
        assert_eq!(answer(root, &["rev-parse", "--verify", "-q", "HEAD"]), None);
        assert_eq!(
            answer(root, &["symbolic-ref", "--short", "HEAD"]).as_deref(),
            Some("trunk")
        );
        // Succeeded, printed nothing.
        assert_eq!(answer(root, &["ls-files"]), None);
        assert_eq!(answer(&root.join("missing"), &["status"]), None);
    }

    #[test]
    fn a_git_past_its_deadline_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        Git::new(dir.path(), &["init", "-q"]).run().unwrap();
        // git reading a FIFO nobody writes hangs; its deadline stops it.
        let fifo = dir.path().join("fifo");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .unwrap();
        let mut g = Git::new(dir.path(), &["hash-object", fifo.to_str().unwrap()]);
        g.timeout = Duration::from_millis(300);
        let err = g.run().unwrap_err();
        assert!(matches!(err, CodeError::Timeout { .. }), "{err}");
        assert!(err.to_string().contains("hash-object"), "{err}");
    }

    #[test]
    fn input_and_large_output_do_not_deadlock() {
        let dir = tempfile::tempdir().unwrap();
        Git::new(dir.path(), &["init", "-q"]).run().unwrap();
        let input = vec![b'x'; 4 << 20];
        let sha = Git::new(dir.path(), &["hash-object", "-w", "--stdin"])
            .input(input.clone())
            .run()
            .unwrap();
        let sha = String::from_utf8(sha.stdout).unwrap();
        let out = Git::new(dir.path(), &["cat-file", "blob", sha.trim()])
            .run()
            .unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout, input);
    }
}
