//! Pipelines that are only read here: a folder this process may not write,
//! or one with no write bit at all (a synced copy made read-only, which
//! even root respects). The recorder refuses to decide, expire or claim a
//! notification in one, naming why, before any lock is taken.

use crate::journal::Pipeline;

use super::Refusal;

/// True when the pipeline's folder is not to be written from here: this
/// process may not write it, or nobody may (no write bit at all: a synced
/// copy made read-only, respected even by root).
pub fn is_read_only(pipeline: &Pipeline) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let dir = pipeline.dir();
    match std::fs::metadata(dir) {
        Ok(m) => {
            m.permissions().mode() & 0o222 == 0
                || rustix::fs::access(dir, rustix::fs::Access::WRITE_OK).is_err()
        }
        // Not there yet: the parent decides whether it can be made.
        Err(_) => dir
            .parent()
            .is_some_and(|p| rustix::fs::access(p, rustix::fs::Access::WRITE_OK).is_err()),
    }
}

/// The refusal for a read-only pipeline.
pub(super) fn refuse_read_only(pipeline: &Pipeline, what: &'static str) -> Result<(), Refusal> {
    if is_read_only(pipeline) {
        return Err(Refusal::ReadOnly {
            dir: pipeline.dir().display().to_string(),
            what,
        });
    }
    Ok(())
}
