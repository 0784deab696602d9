//! Reading files that events point at (gate outputs, repro test logs):
//! only inside the worktree, only regular files, never blocking on a FIFO,
//! and only their tail, so a 1 GiB log costs what 64 KiB does.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::{PathError, Pipeline};
use crate::util::FileRefusal;

/// How much of the end of a file is read.
pub const TAIL_BYTES: u64 = 64 * 1024;

/// Reads the last `max` bytes of `path`, which must resolve (symlinks
/// followed) inside the pipeline's worktree and be a regular file. The error
/// says why a path was refused.
pub fn read_tail(pipeline: &Pipeline, path: &Path, max: u64) -> Result<Vec<u8>, PathError> {
    let open_error = |cause| PathError::Open {
        path: path.to_path_buf(),
        cause,
    };
    let worktree =
        std::fs::canonicalize(pipeline.worktree()).map_err(PathError::WorktreeUnreadable)?;
    let target = std::fs::canonicalize(path).map_err(open_error)?;
    if !target.starts_with(&worktree) {
        return Err(PathError::ResolvesOutside(path.to_path_buf()));
    }
    // Opened without blocking (a FIFO swapped in since the check must not
    // wait for a writer) and checked by fstat.
    let mut f = crate::util::open_regular(&target).map_err(|e| match FileRefusal::of(&e) {
        Some(FileRefusal::NotRegular(_)) => PathError::NotRegular(path.to_path_buf()),
        _ => open_error(e),
    })?;
    let len = f.metadata().map_err(open_error)?.len();
    f.seek(SeekFrom::Start(len.saturating_sub(max)))
        .map_err(open_error)?;
    let mut buf = Vec::with_capacity(max.min(len) as usize);
    f.take(max).read_to_end(&mut buf).map_err(open_error)?;
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
        let tail = |rel: &str| read_tail(&p, &wt.join(rel), 4).map_err(|e| e.to_string());
        assert_eq!(tail(".pipeline/ok.log").unwrap(), b"6789");
        std::fs::write(d.path().join("secret"), b"x").unwrap();
        std::os::unix::fs::symlink(d.path().join("secret"), wt.join(".pipeline/link.log")).unwrap();
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            wt.join(".pipeline/fifo.log"),
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .unwrap();
        for (rel, why) in [
            (".pipeline/link.log", "outside the worktree"),
            (".pipeline/../../secret", "outside the worktree"),
            (".pipeline", "not a regular file"),
            (".pipeline/fifo.log", "not a regular file"),
        ] {
            let e = tail(rel).unwrap_err();
            assert!(e.contains(why), "{rel}: {e}");
        }
    }
}
