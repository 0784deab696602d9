//! How this module runs git: a clean environment, fixed configuration
//! overrides, a deadline, and its own process group so a hung git (or a
//! filter it started) is killed whole.
//!
//! Only plumbing commands are used and every result is parsed from
//! NUL-separated or fixed-format output, so user configuration such as
//! `color.ui=always`, `diff.mnemonicPrefix`, an external diff driver or a
//! textconv filter cannot change what is read.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::CodeError;

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
    /// Exit status.
    pub status: ExitStatus,
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
                "" => format!("exit status {}", out.status),
                s => s.lines().take(5).collect::<Vec<_>>().join("; "),
            },
        })
    }

    /// Runs it and returns whatever it exited with.
    pub fn run_any(self) -> Result<GitOutput, CodeError> {
        let mut cmd = Command::new("git");
        for kv in CONFIG {
            cmd.args(["-c", kv]);
        }
        cmd.args(&self.args)
            .current_dir(&self.cwd)
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("LC_ALL", "C");
        for k in INHERITED_GIT_ENV {
            cmd.env_remove(k);
        }
        for (k, v) in &self.envs {
            cmd.env(k, v);
        }
        run_with_deadline(cmd, self.input, self.timeout).map_err(|e| match e {
            Failure::Spawn(message) | Failure::Io(message) => CodeError::Git {
                command: self.args.join(" "),
                cwd: self.cwd.clone(),
                message,
            },
            Failure::Timeout(after) => CodeError::Timeout {
                command: self.args.join(" "),
                cwd: self.cwd.clone(),
                after,
            },
        })
    }
}

/// Why a child produced no output.
#[derive(Debug)]
pub(crate) enum Failure {
    /// It could not be started.
    Spawn(String),
    /// Reading or writing its pipes failed.
    Io(String),
    /// It ran past its deadline and was killed.
    Timeout(Duration),
}

/// Runs `cmd` in a process group of its own, feeding `input`, and kills the
/// whole group when it is still running after `timeout`.
pub(crate) fn run_with_deadline(
    mut cmd: Command,
    input: Option<Vec<u8>>,
    timeout: Duration,
) -> Result<GitOutput, Failure> {
    cmd.stdin(if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .process_group(0);
    let mut child = cmd.spawn().map_err(|e| Failure::Spawn(e.to_string()))?;
    let writer = match (input, child.stdin.take()) {
        (Some(bytes), Some(mut stdin)) => Some(std::thread::spawn(move || {
            // A child that exits early closes the pipe: its status says why.
            let _ = stdin.write_all(&bytes);
        })),
        _ => None,
    };
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_micros(200);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                kill_group(child.id());
                let _ = child.wait();
                return Err(Failure::Timeout(timeout));
            }
            Ok(None) => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            Err(e) => return Err(Failure::Io(e.to_string())),
        }
    };
    if let Some(w) = writer {
        let _ = w.join();
    }
    let join = |h: std::thread::JoinHandle<std::io::Result<Vec<u8>>>| {
        h.join()
            .map_err(|_| Failure::Io("reader thread panicked".into()))?
            .map_err(|e| Failure::Io(e.to_string()))
    };
    Ok(GitOutput {
        stdout: join(stdout)?,
        status,
        stderr: join(stderr)?,
    })
}

fn drain<R: Read + Send + 'static>(
    pipe: Option<R>,
) -> std::thread::JoinHandle<std::io::Result<Vec<u8>>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut p) = pipe {
            p.read_to_end(&mut buf)?;
        }
        Ok(buf)
    })
}

fn kill_group(pid: u32) {
    let pid = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw);
    if let Some(pid) = pid {
        // The group may already be gone: nothing left to kill.
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Alive and not a zombie.
    fn running(pid: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|r| !r.trim_start().starts_with('Z'))
        })
    }

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
    fn a_child_past_its_deadline_is_killed_with_its_group() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("grandchild.pid");
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!("sleep 60 & echo $! > {}; wait", pidfile.display()));
        let run = std::thread::spawn(move || run_with_deadline(cmd, None, Duration::from_secs(2)));
        let err = run.join().unwrap().unwrap_err();
        assert!(matches!(err, Failure::Timeout(_)), "{err:?}");
        let pid = std::fs::read_to_string(&pidfile).unwrap();
        let pid = pid.trim();
        let deadline = Instant::now() + Duration::from_secs(20);
        while running(pid) {
            assert!(
                Instant::now() < deadline,
                "the grandchild {pid} outlived the kill"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn input_and_large_output_do_not_deadlock() {
        let mut cmd = Command::new("cat");
        cmd.arg("-");
        let input = vec![b'x'; 4 << 20];
        let out = run_with_deadline(cmd, Some(input.clone()), Duration::from_secs(60)).unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout, input);
    }
}
