//! Replacing a file atomically (temp file in the same folder, same
//! permissions, fsync, rename, fsync of the folder), and removing the temp
//! files of writers that died before their rename.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::FileRefusal;

/// Resolves a symlink chain so that an edit replaces the target and keeps the link.
pub fn resolve_target(path: &Path) -> io::Result<PathBuf> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => fs::canonicalize(path),
        Ok(_) => Ok(path.to_path_buf()),
        Err(e) => Err(e),
    }
}

/// Replaces `path` with `bytes` atomically: a temp file in the same folder
/// with the same permissions as the file it replaces (when it exists),
/// fsync, rename over the target, fsync of the folder. A symlink is
/// followed: its target is replaced, the link stays (a contract kept
/// elsewhere, a report written where a person asked).
pub fn replace_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let target = match resolve_target(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => path.to_path_buf(),
        Err(e) => return Err(e),
    };
    replace_exactly(&target, bytes)
}

/// Creates a folder of `.pipeline/` (`gates/`, `agents/`, `evidence/`)
/// when missing, and refuses one that is a symbolic link: a link there
/// would put every file written into it outside the pipeline.
pub fn pipeline_dir(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    match fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => Err(FileRefusal::Symlink.into_io()),
        Ok(m) if !m.is_dir() => {
            Err(FileRefusal::NotRegular("file where a folder belongs").into_io())
        }
        Ok(_) => Ok(()),
        Err(e) => Err(e),
    }
}

/// [`replace_atomically`] for a file inside `.pipeline/`: a symbolic link
/// there is refused, never followed, so no write lands outside the pipeline.
/// (The rename itself never follows a link either; the refusal makes a
/// planted link an error a person sees instead of a silent replacement.)
pub fn replace_in_pipeline(path: &Path, bytes: &[u8]) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => return Err(FileRefusal::Symlink.into_io()),
        Ok(m) if m.is_dir() => return Err(FileRefusal::NotRegular("folder").into_io()),
        _ => {}
    }
    replace_exactly(path, bytes)
}

fn replace_exactly(target: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    remove_dead_temps(&dir);
    let perms = fs::symlink_metadata(target)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.permissions());
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!("{TEMP_PREFIX}{}-", std::process::id()))
        .suffix(TEMP_SUFFIX)
        .tempfile_in(&dir)?;
    tmp.write_all(bytes)?;
    if let Some(p) = perms {
        fs::set_permissions(tmp.path(), p)?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(target).map_err(|e| e.error)?;
    sync_dir(&dir)
}

/// Start of every temp file name.
pub const TEMP_PREFIX: &str = ".loopwatch-";
/// End of every temp file name.
pub const TEMP_SUFFIX: &str = ".tmp";
/// A temp file without a pid (written by an older version) older than this
/// belongs to a writer that is gone: no write takes an hour.
const UNNAMED_TEMP_AGE: Duration = Duration::from_secs(3600);

/// Removes the temp files in `dir` left by writers that died before their
/// rename: `.loopwatch-<pid>-*.tmp` whose pid is no longer alive (a pid
/// reused since looks alive: its file stays, which is safe), and unnamed
/// ones older than an hour. Best effort: a folder that cannot be listed is
/// left alone.
pub fn remove_dead_temps(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let me = std::process::id();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(middle) = name
            .strip_prefix(TEMP_PREFIX)
            .and_then(|r| r.strip_suffix(TEMP_SUFFIX))
        else {
            continue;
        };
        let dead = match middle
            .split_once('-')
            .and_then(|(p, _)| p.parse::<u32>().ok())
        {
            Some(pid) => pid != me && !process_alive(pid),
            None => entry
                .metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > UNNAMED_TEMP_AGE),
        };
        if dead && entry.file_type().is_ok_and(|t| t.is_file()) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// True when a process with this pid exists (`kill(pid, 0)`; a process of
/// another user answers EPERM, which is alive too).
pub fn process_alive(pid: u32) -> bool {
    let Some(p) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    !matches!(
        rustix::process::test_kill_process(p),
        Err(rustix::io::Errno::SRCH)
    )
}

/// fsync of a folder, so a rename inside it is durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}
