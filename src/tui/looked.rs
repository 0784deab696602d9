//! The seq each pipeline was last looked at, kept between two sessions of
//! the TUI for the next start's digest and run list.

/// Where the seq last seen of a pipeline is kept (loopwatch's state
/// folder, never the pipeline: a read-only copy stays untouched).
fn path(pipeline_dir: &std::path::Path) -> Option<std::path::PathBuf> {
    let key = crate::util::sha256_tagged(pipeline_dir.display().to_string().as_bytes());
    let name = key
        .rsplit(':')
        .next()
        .unwrap_or(&key)
        .chars()
        .take(32)
        .collect::<String>();
    Some(crate::util::state_dir()?.join("looked").join(name))
}

/// The seq a pipeline was last looked at, kept by an earlier session.
pub fn read(pipeline_dir: &std::path::Path) -> Option<u64> {
    let text = std::fs::read_to_string(path(pipeline_dir)?).ok()?;
    text.trim().parse().ok()
}

/// Keeps the seq each run was seen at, for the next start's digest and
/// run list (`None`: nothing new to keep).
pub fn save(dirs: &[std::path::PathBuf], seen: &[Option<u64>]) {
    for (dir, seq) in dirs.iter().zip(seen) {
        let (Some(p), Some(seq)) = (path(dir), seq) else {
            continue;
        };
        let p = &p;
        let saved = p
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| crate::util::replace_atomically(p, seq.to_string().as_bytes()));
        if let Err(e) = saved {
            tracing::warn!(error = %e, path = %p.display(), "cannot keep the last seq seen");
        }
    }
}
