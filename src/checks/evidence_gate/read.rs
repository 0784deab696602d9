//! Reading a test log: its tail only, lossily, and only from a regular file.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Most bytes of a log that are read (its tail).
pub const MAX_LOG_BYTES: u64 = 8 * 1024 * 1024;

/// Why a log could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// Open, seek or read failed.
    #[error("cannot read test log {}: {source}", path.display())]
    Io {
        /// The log.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Not a regular file (a folder, a pipe, a device).
    #[error("test log {} is not a regular file", path.display())]
    NotAFile {
        /// The log.
        path: PathBuf,
    },
}

/// Reads the last [`MAX_LOG_BYTES`] of a log as lossy UTF-8; a cut first
/// line is dropped. Only a regular file is read: a folder, a FIFO or a
/// device is refused without blocking (opened non-blocking, then checked).
pub fn read_log(path: &Path) -> Result<String, LogError> {
    let io = |source| LogError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = crate::util::open_regular(path).map_err(|e| {
        if matches!(
            crate::util::FileRefusal::of(&e),
            Some(crate::util::FileRefusal::NotRegular(_))
        ) {
            LogError::NotAFile {
                path: path.to_path_buf(),
            }
        } else {
            io(e)
        }
    })?;
    let meta = file.metadata().map_err(io)?;
    let cut = meta.len() > MAX_LOG_BYTES;
    if cut {
        file.seek(SeekFrom::Start(meta.len() - MAX_LOG_BYTES))
            .map_err(io)?;
    }
    let mut bytes = Vec::new();
    file.take(MAX_LOG_BYTES)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if cut && let Some(i) = text.find('\n') {
        text.drain(..=i);
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::evidence_gate::{Claim, ClaimStatus, judge};

    #[test]
    fn only_the_tail_of_a_huge_log_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.log");
        let mut text = "test early ... FAILED\n".repeat(500_000);
        text.push_str("running 1 test\ntest late ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n");
        std::fs::write(&path, &text).unwrap();
        let log = read_log(&path).unwrap();
        assert!(log.len() as u64 <= MAX_LOG_BYTES);
        assert!(
            log.starts_with("test early ... FAILED\n"),
            "the cut first line is dropped"
        );
        let claim = Claim {
            status: ClaimStatus::Passed,
            test: Some("late".into()),
        };
        // The early failures still in the tail are seen: fail-closed.
        assert!(!judge(&log, &claim).is_proven());
    }

    #[test]
    fn a_fifo_or_a_folder_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.log");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        // No writer ever opens the FIFO: a blocking open would never return.
        assert!(matches!(read_log(&fifo), Err(LogError::NotAFile { .. })));
        assert!(matches!(
            read_log(dir.path()),
            Err(LogError::NotAFile { .. })
        ));
        assert!(matches!(
            read_log(Path::new("/dev/zero")),
            Err(LogError::NotAFile { .. })
        ));
    }
}
