//! Running one repro test: under the worktree's build lock, through the
//! process runner (its whole tree stopped at the deadline or a stop: TERM,
//! grace, KILL), its stdout and stderr into its own log, which ends with
//! one line saying how the run ended.
//!
//! The build lock is an exclusive file lock on `loopwatch-build.lock` in
//! the worktree's git folder (`git rev-parse --absolute-git-dir`; the
//! pipeline folder when the worktree is not a git one), so every run of
//! every pipeline of the worktree builds and runs one test at a time. It is
//! waited for without blocking the engine, up to the test's deadline, and
//! released when the test's group is gone.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::runner::Invocation;
use crate::engine::dispatch::Settings;
use crate::process::{self, LogFile, Sink};

/// The lock file's name.
pub const BUILD_LOCK: &str = "loopwatch-build.lock";

/// How one test run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ran {
    /// The runner exited (the status, `None` when a signal killed it).
    Exited(Option<i32>),
    /// Stopped at the deadline (while waiting for the lock when `waiting`).
    TimedOut {
        /// The build lock was never taken.
        waiting: bool,
    },
    /// A stop was asked for (the code asked).
    Stopped(i32),
    /// The runner could not be started.
    NotStarted(String),
}

/// One test to run.
#[derive(Debug, Clone)]
pub struct TestJob<'a> {
    /// The command line.
    pub invocation: &'a Invocation,
    /// The log written (replaced).
    pub log: PathBuf,
    /// When the run must have ended.
    pub deadline: Instant,
    /// The suffix of the process marker (`<pipeline>#<tag>`).
    pub tag: String,
}

/// Runs one test to its end, the deadline or the stop.
pub async fn run_test(
    set: &Settings,
    job: TestJob<'_>,
    stop: &mut watch::Receiver<Option<i32>>,
) -> std::io::Result<Ran> {
    let worktree = set.pipeline.worktree().to_path_buf();
    let started = Instant::now();
    let lock = match acquire(&lock_path(set), job.deadline, stop).await? {
        Lock::Held(f) => f,
        Lock::Deadline => {
            write_log(
                &job.log,
                "",
                &format!(
                    "[loopwatch: the build lock was not free before the deadline; `{}` was not run]",
                    job.invocation.display()
                ),
            )?;
            return Ok(Ran::TimedOut { waiting: true });
        }
        Lock::Stopped(code) => return Ok(Ran::Stopped(code)),
    };
    let inv = job.invocation;
    let program = if inv.program.contains('/') && !inv.program.starts_with('/') {
        worktree.join(&inv.program).into_os_string()
    } else {
        inv.program.clone().into()
    };
    let mut env: Vec<(String, String)> = vec![
        ("NO_COLOR".into(), "1".into()),
        ("CARGO_TERM_COLOR".into(), "never".into()),
    ];
    env.extend(inv.env.iter().cloned());
    let log = LogFile::create(&job.log, set.log_limit)?;
    let running = process::Command::new(program, &worktree)
        .args(&inv.args)
        .envs(env)
        .deadline(job.deadline.saturating_duration_since(Instant::now()))
        .grace(set.grace)
        .stdout(Sink::read().log(&log))
        .merge_stderr()
        .on_behalf_of(process::tree::marker(set.pipeline.dir(), &job.tag))
        .spawn();
    let running = match running {
        Ok(r) => r,
        Err(e) => {
            let why = format!("cannot start `{}`: {e}", inv.display());
            drop(log);
            write_log(&job.log, "", &format!("[loopwatch: {why}]"))?;
            drop(lock);
            return Ok(Ran::NotStarted(why));
        }
    };
    let ended = running.finish(stop).await;
    drop(lock);
    let secs = started.elapsed().as_secs_f64();
    let (ran, end) = if let Some(code) = ended.stopped() {
        (
            Ran::Stopped(code),
            "stopped: the run was asked to stop".to_string(),
        )
    } else if ended.timed_out() {
        (
            Ran::TimedOut { waiting: false },
            format!("stopped at the deadline after {secs:.1} s"),
        )
    } else {
        // `exited with status N`, `killed by SIGSEGV (not sent by loopwatch)`.
        let how = ended.describe();
        (
            Ran::Exited(ended.exit.code()),
            format!("{how} after {secs:.1} s"),
        )
    };
    log.note(&format!("[loopwatch: `{}` {end}]", inv.display()));
    Ok(ran)
}

/// The worktree's build lock file.
fn lock_path(set: &Settings) -> PathBuf {
    let git_dir = crate::code::git_answer(
        set.pipeline.worktree(),
        &["rev-parse", "--absolute-git-dir"],
    );
    git_dir.map_or_else(
        || set.pipeline.dir().join(BUILD_LOCK),
        |d| Path::new(&d).join(BUILD_LOCK),
    )
}

enum Lock {
    Held(File),
    Deadline,
    Stopped(i32),
}

async fn acquire(
    path: &Path,
    deadline: Instant,
    stop: &mut watch::Receiver<Option<i32>>,
) -> std::io::Result<Lock> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    loop {
        if let Some(code) = *stop.borrow() {
            return Ok(Lock::Stopped(code));
        }
        match file.try_lock() {
            Ok(()) => return Ok(Lock::Held(file)),
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(e)) => return Err(e),
        }
        if Instant::now() >= deadline {
            return Ok(Lock::Deadline);
        }
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(20)) => {}
            _ = stop.changed() => {}
        }
    }
}

fn write_log(path: &Path, body: &str, last: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, format!("{body}{last}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn the_lock_is_waited_for_up_to_the_deadline_and_the_stop() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(BUILD_LOCK);
        let (tx, mut rx) = watch::channel(None);
        let held = match acquire(&path, Instant::now(), &mut rx).await.unwrap() {
            Lock::Held(f) => f,
            _ => panic!("a free lock is taken"),
        };
        let soon = Instant::now() + Duration::from_millis(50);
        assert!(matches!(
            acquire(&path, soon, &mut rx).await.unwrap(),
            Lock::Deadline
        ));
        tx.send(Some(143)).unwrap();
        let later = Instant::now() + Duration::from_secs(600);
        assert!(matches!(
            acquire(&path, later, &mut rx).await.unwrap(),
            Lock::Stopped(143)
        ));
        drop(held);
        let (_tx, mut rx) = watch::channel(None);
        assert!(matches!(
            acquire(&path, later, &mut rx).await.unwrap(),
            Lock::Held(_)
        ));
    }
}
