//! Reading files that events point at (gate outputs, repro test logs):
//! only inside the worktree, only regular files, never blocking on a FIFO,
//! and only their tail, so a 1 GiB log costs what 64 KiB does.

use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::Pipeline;

/// How much of the end of a file is read.
pub const TAIL_BYTES: u64 = 64 * 1024;

/// Reads the last `max` bytes of `path`, which must resolve (symlinks
/// followed) inside the pipeline's worktree and be a regular file. The error
/// says why a path was refused.
pub fn read_tail(pipeline: &Pipeline, path: &Path, max: u64) -> Result<Vec<u8>, String> {
    let worktree = std::fs::canonicalize(pipeline.worktree())
        .map_err(|e| format!("worktree unreadable: {e}"))?;
    let target =
        std::fs::canonicalize(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    if !target.starts_with(&worktree) {
        return Err(format!(
            "refused: {} resolves outside the worktree",
            path.display()
        ));
    }
    let meta =
        std::fs::metadata(&target).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!("refused: {} is not a regular file", path.display()));
    }
    // O_NONBLOCK: if the path was swapped for a FIFO since the check, opening
    // it must not wait for a writer.
    let mut f = OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(&target)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let meta = f.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err(format!("refused: {} is not a regular file", path.display()));
    }
    let len = meta.len();
    f.seek(SeekFrom::Start(len.saturating_sub(max)))
        .map_err(|e| e.to_string())?;
    let mut buf = Vec::with_capacity(max.min(len) as usize);
    f.take(max)
        .read_to_end(&mut buf)
        .map_err(|e| e.to_string())?;
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_leaves_the_worktree_or_is_not_a_file() {
        let d = tempfile::tempdir().unwrap();
        let wt = d.path().join("wt");
        std::fs::create_dir_all(wt.join(".pipeline")).unwrap();
        let p = Pipeline::at(wt.join(".pipeline"));
        std::fs::write(wt.join(".pipeline/ok.log"), b"0123456789").unwrap();
        assert_eq!(
            read_tail(&p, &wt.join(".pipeline/ok.log"), 4).unwrap(),
            b"6789"
        );
        std::fs::write(d.path().join("secret"), b"x").unwrap();
        std::os::unix::fs::symlink(d.path().join("secret"), wt.join(".pipeline/link.log")).unwrap();
        assert!(
            read_tail(&p, &wt.join(".pipeline/link.log"), 4)
                .unwrap_err()
                .contains("outside the worktree")
        );
        assert!(
            read_tail(&p, &wt.join(".pipeline/../../secret"), 4)
                .unwrap_err()
                .contains("outside the worktree")
        );
        assert!(
            read_tail(&p, &wt.join(".pipeline"), 4)
                .unwrap_err()
                .contains("not a regular file")
        );
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            wt.join(".pipeline/fifo.log"),
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .unwrap();
        assert!(
            read_tail(&p, &wt.join(".pipeline/fifo.log"), 4)
                .unwrap_err()
                .contains("not a regular file")
        );
    }
}
