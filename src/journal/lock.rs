//! The advisory writer lock on `.pipeline/lock` (PROTOCOL §5 step 1).
//!
//! Uses the standard library's `flock`-style file locks: advisory only (and
//! unreliable on NFS), which is enough because every writer is loopwatch.

use std::fs::{File, TryLockError};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, Instant};

use super::{JournalError, LockHolder};

/// How long a writer waits for the lock unless `LOOPWATCH_LOCK_TIMEOUT` says otherwise.
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest `LOOPWATCH_LOCK_TIMEOUT` accepted (a day): beyond that a
/// value is a mistake, and a huge one would overflow the clock.
pub const MAX_LOCK_TIMEOUT_SECS: u64 = 86_400;

/// A held lock; released on drop.
#[derive(Debug)]
pub struct PipelineLock {
    file: File,
}

impl PipelineLock {
    /// Takes the exclusive lock, waiting at most `timeout`. Writes our pid
    /// into the lock file so a waiting writer can name the holder. The lock
    /// file is never opened through a symbolic link (one planted there
    /// would have its target overwritten with a pid) and must be a regular file.
    pub fn acquire(path: &Path, timeout: Duration) -> Result<Self, JournalError> {
        let mut file = crate::util::open_pipeline_file(path, true, false)
            .map_err(|e| JournalError::io("open lock", path, e))?;
        let start = Instant::now();
        let mut pause = Duration::from_millis(1);
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) => {
                    if start.elapsed() >= timeout {
                        return Err(JournalError::LockTimeout {
                            path: path.to_path_buf(),
                            waited: start.elapsed(),
                            holder: holder(&mut file),
                        });
                    }
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(4));
                }
                Err(TryLockError::Error(e)) => return Err(JournalError::io("lock", path, e)),
            }
        }
        // The pid is only a hint for error messages: failing to write it is harmless.
        let _ = file.set_len(0).and_then(|()| {
            file.rewind()?;
            writeln!(file, "{}", std::process::id())
        });
        Ok(PipelineLock { file })
    }

    /// The timeout from `LOOPWATCH_LOCK_TIMEOUT` (seconds, decimals
    /// allowed; unset or empty: [`DEFAULT_LOCK_TIMEOUT`]). Anything else —
    /// not a number, negative, infinite, over [`MAX_LOCK_TIMEOUT_SECS`] — is
    /// refused rather than silently replaced by the default.
    pub fn timeout_from_env() -> Result<Duration, JournalError> {
        match std::env::var("LOOPWATCH_LOCK_TIMEOUT") {
            Err(std::env::VarError::NotPresent) => Ok(DEFAULT_LOCK_TIMEOUT),
            Err(std::env::VarError::NotUnicode(v)) => Err(JournalError::BadLockTimeout {
                value: crate::sanitize::field(&v.to_string_lossy()),
                max: MAX_LOCK_TIMEOUT_SECS,
            }),
            Ok(v) => parse_timeout(&v),
        }
    }
}

/// Parses a lock timeout in seconds (see [`PipelineLock::timeout_from_env`]).
pub fn parse_timeout(v: &str) -> Result<Duration, JournalError> {
    if v.trim().is_empty() {
        return Ok(DEFAULT_LOCK_TIMEOUT);
    }
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0 && *s <= MAX_LOCK_TIMEOUT_SECS as f64)
        .map(Duration::from_secs_f64)
        .ok_or_else(|| JournalError::BadLockTimeout {
            value: v.to_string(),
            max: MAX_LOCK_TIMEOUT_SECS,
        })
}

impl Drop for PipelineLock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

/// Who holds the lock: the kernel's answer (`/proc/locks`) first, else the
/// pid written in the file if that process is alive, else unknown. The pid
/// in the file alone can be stale: a holder killed before writing its own
/// leaves the previous one's.
fn holder(file: &mut File) -> LockHolder {
    if let Some(pid) = file.metadata().ok().and_then(|m| kernel_holder(&m)) {
        return LockHolder::Pid(pid);
    }
    match read_pid(file) {
        Some(pid) if crate::util::process_alive(pid) => LockHolder::Pid(pid),
        _ => LockHolder::Unknown,
    }
}

/// The pid `/proc/locks` gives for a lock on this file (Linux; `None`
/// elsewhere or when it cannot be read).
fn kernel_holder(meta: &std::fs::Metadata) -> Option<u32> {
    let bytes = crate::util::read_regular(Path::new("/proc/locks"), 4 * 1024 * 1024).ok();
    // /proc files report a size of 0 but are regular: read_regular reads them whole.
    let text = String::from_utf8_lossy(bytes.as_deref()?).into_owned();
    let (major, minor) = (rustix::fs::major(meta.dev()), rustix::fs::minor(meta.dev()));
    text.lines().find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        // `1: FLOCK ADVISORY WRITE <pid> <maj>:<min>:<inode> 0 EOF`; a
        // waiter's line has `->` after the number: not the holder.
        if f.get(1) == Some(&"->") || f.len() < 6 {
            return None;
        }
        let mut id = f[5].split(':');
        let maj = u32::from_str_radix(id.next()?, 16).ok()?;
        let min = u32::from_str_radix(id.next()?, 16).ok()?;
        let ino: u64 = id.next()?.parse().ok()?;
        (maj == major && min == minor && ino == meta.ino())
            .then(|| f[4].parse().ok())
            .flatten()
    })
}

/// The pid written at the start of a lock file, when one is.
pub(crate) fn read_pid(file: &mut File) -> Option<u32> {
    let mut s = String::new();
    file.rewind().ok()?;
    file.take(32).read_to_string(&mut s).ok()?;
    s.trim().parse().ok()
}
