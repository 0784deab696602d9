//! The advisory writer lock on `.pipeline/lock` (PROTOCOL §5 step 1).
//!
//! Uses the standard library's `flock`-style file locks: advisory only (and
//! unreliable on NFS), which is enough because every writer is loopwatch.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use super::JournalError;

/// How long a writer waits for the lock unless `LOOPWATCH_LOCK_TIMEOUT` says otherwise.
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// A held lock; released on drop.
#[derive(Debug)]
pub struct PipelineLock {
    file: File,
}

impl PipelineLock {
    /// Takes the exclusive lock, waiting at most `timeout`. Writes our pid
    /// into the lock file so a waiting writer can name the holder.
    pub fn acquire(path: &Path, timeout: Duration) -> Result<Self, JournalError> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
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
                            holder: read_holder(&mut file),
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

    /// The timeout from `LOOPWATCH_LOCK_TIMEOUT` (seconds, decimals allowed).
    pub fn timeout_from_env() -> Duration {
        std::env::var("LOOPWATCH_LOCK_TIMEOUT")
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map_or(DEFAULT_LOCK_TIMEOUT, Duration::from_secs_f64)
    }
}

impl Drop for PipelineLock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

fn read_holder(file: &mut File) -> Option<u32> {
    let mut s = String::new();
    file.rewind().ok()?;
    file.take(32).read_to_string(&mut s).ok()?;
    s.trim().parse().ok()
}
