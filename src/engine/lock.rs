//! One engine per pipeline: an exclusive file lock on the `.pipeline`
//! folder itself, held for the engine's whole life (beside the journal's
//! writer lock, which is only held for one append), and
//! `.pipeline/engine.lock` naming the holder's pid. The lock is on the
//! folder, not on a file in it, so deleting or replacing `engine.lock`
//! cannot free it: it dies with its process only. A pid file whose lock is
//! free is stale: it is reported and taken over.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};

/// The lock file's name inside `.pipeline/`.
pub const FILE_NAME: &str = crate::journal::ENGINE_LOCK;

/// Why the engine lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum EngineLockError {
    /// A live engine holds it.
    #[error("another `loopwatch run` (pid {}) drives this pipeline ({}); stop it first or `loopwatch watch` it", holder.map_or("unknown".to_string(), |p| p.to_string()), path.display())]
    Held {
        /// The lock file.
        path: PathBuf,
        /// The holder's pid, as it wrote it.
        holder: Option<u32>,
    },
    /// The lock file could not be opened or locked.
    #[error("{op} {}: {source}", path.display())]
    Io {
        /// What was being done.
        op: &'static str,
        /// The lock file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// A held engine lock; released when dropped (or when the process dies).
#[derive(Debug)]
pub struct EngineLock {
    file: File,
    _dir: File,
    /// The pid named by a stale lock that was taken over.
    pub stale: Option<u32>,
}

impl EngineLock {
    /// Takes the lock of the pipeline in `dir` without waiting.
    pub fn acquire(dir: &Path) -> Result<EngineLock, EngineLockError> {
        let path = dir.join(FILE_NAME);
        let io = |op, source| EngineLockError::Io {
            op,
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(|e| io("create", e))?;
        let folder = File::open(dir).map_err(|e| io("open the folder of", e))?;
        match folder.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(EngineLockError::Held {
                    holder: crate::journal::engine_holder(dir),
                    path,
                });
            }
            Err(TryLockError::Error(e)) => return Err(io("lock the folder of", e)),
        }
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| io("open", e))?;
        let stale = crate::journal::read_pid(&mut file).filter(|&p| p != std::process::id());
        file.set_len(0).map_err(|e| io("truncate", e))?;
        file.rewind().map_err(|e| io("rewind", e))?;
        writeln!(file, "{}", std::process::id()).map_err(|e| io("write", e))?;
        file.flush().map_err(|e| io("write", e))?;
        Ok(EngineLock {
            file,
            _dir: folder,
            stale,
        })
    }
}

impl Drop for EngineLock {
    fn drop(&mut self) {
        // The pid goes first so a reader never names a holder that left.
        let _ = self.file.set_len(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_engine_is_refused_and_a_stale_lock_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE_NAME), "999999\n").unwrap();
        let first = EngineLock::acquire(dir.path()).unwrap();
        assert_eq!(first.stale, Some(999_999));
        // flock is per open file: a second open in this process conflicts too.
        match EngineLock::acquire(dir.path()) {
            Err(EngineLockError::Held { holder, .. }) => {
                assert_eq!(holder, Some(std::process::id()))
            }
            other => panic!("{other:?}"),
        }
        // Deleting the pid file does not free the lock.
        std::fs::remove_file(dir.path().join(FILE_NAME)).unwrap();
        assert!(matches!(
            EngineLock::acquire(dir.path()),
            Err(EngineLockError::Held { .. })
        ));
        assert_eq!(
            crate::journal::running_engine(dir.path()),
            Some(std::process::id())
        );
        drop(first);
        assert_eq!(crate::journal::running_engine(dir.path()), None);
        let again = EngineLock::acquire(dir.path()).unwrap();
        assert_eq!(again.stale, None);
    }
}
