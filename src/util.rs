//! Small filesystem and hashing helpers shared by every reader and writer.
//!
//! Files from outside are hostile until opened: [`open_regular`] and
//! [`read_regular`] open without blocking (a FIFO never hangs a reader),
//! refuse anything but a regular file (a device never feeds gigabytes) and
//! read at most a stated size. [`replace_atomically`] is the one way this
//! program replaces a file that someone else may read at the same time:
//! temp file in the same folder, same permissions, fsync, rename, fsync of
//! the folder; [`replace_in_pipeline`] does the same and refuses a link.
//! Temp files are named `.loopwatch-<pid>-<random>.tmp`, so that the next
//! writer in a folder can remove those of writers that died (kill -9).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

/// Why a file was refused before a byte of it was used. Carried as the
/// cause of an [`io::Error`] (kind `InvalidInput`, or `FileTooLarge`), so
/// every caller's error names the file and the operation, and this reason.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FileRefusal {
    /// Not a regular file (a FIFO, a device, a socket or a folder).
    #[error("not a regular file (a {0}): refused")]
    NotRegular(&'static str),
    /// A symbolic link where loopwatch writes: it is never followed.
    #[error("a symbolic link: refused (loopwatch never writes through a link in .pipeline/)")]
    Symlink,
    /// Larger than the limit for that kind of file.
    #[error("larger than {0}: refused")]
    TooLarge(String),
}

impl FileRefusal {
    fn into_io(self) -> io::Error {
        let kind = match self {
            FileRefusal::TooLarge(_) => io::ErrorKind::FileTooLarge,
            _ => io::ErrorKind::InvalidInput,
        };
        io::Error::new(kind, self)
    }

    /// The refusal inside an I/O error, when it is one.
    pub fn of(e: &io::Error) -> Option<&FileRefusal> {
        e.get_ref().and_then(|r| r.downcast_ref())
    }
}

/// What a file type is called in messages.
fn kind_name(t: fs::FileType) -> &'static str {
    if t.is_dir() {
        "folder"
    } else if t.is_fifo() {
        "FIFO"
    } else if t.is_char_device() || t.is_block_device() {
        "device"
    } else if t.is_socket() {
        "socket"
    } else if t.is_symlink() {
        "symbolic link"
    } else {
        "special file"
    }
}

/// `O_NONBLOCK | O_CLOEXEC`, and `O_NOFOLLOW` when asked.
fn flags(nofollow: bool) -> i32 {
    let mut f = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::CLOEXEC;
    if nofollow {
        f |= rustix::fs::OFlags::NOFOLLOW;
    }
    f.bits() as i32
}

/// Checks an opened file is a regular one (by `fstat`, so no swap between
/// a check and the open can fool it).
fn ensure_regular(file: &File) -> io::Result<()> {
    let t = file.metadata()?.file_type();
    if t.is_file() {
        Ok(())
    } else {
        Err(FileRefusal::NotRegular(kind_name(t)).into_io())
    }
}

/// Maps the `ELOOP` of an `O_NOFOLLOW` open to [`FileRefusal::Symlink`].
fn no_link(e: io::Error) -> io::Error {
    if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) {
        FileRefusal::Symlink.into_io()
    } else {
        e
    }
}

/// Opens a file to read without ever blocking on it (`O_NONBLOCK`: a FIFO
/// opens at once), then refuses it unless it is a regular file. Links are
/// followed (reading through one writes nothing).
pub fn open_regular(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(flags(false))
        .open(path)?;
    ensure_regular(&file)?;
    Ok(file)
}

/// Opens a pipeline file to read and write (created when `create`), never
/// through a symbolic link (`O_NOFOLLOW`) and never blocking; refused unless
/// it is a regular file. `append` opens it in append mode.
pub fn open_pipeline_file(path: &Path, create: bool, append: bool) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .write(!append)
        .append(append)
        .create(create)
        .truncate(false)
        .custom_flags(flags(true))
        .open(path)
        .map_err(no_link)?;
    ensure_regular(&file)?;
    Ok(file)
}

/// Largest text file from outside read whole (a contract, a verification
/// report, an agent's output).
pub const MAX_TEXT_BYTES: u64 = 16 * 1024 * 1024;

/// Human form of a byte limit (`16 MiB`).
pub fn size_text(bytes: u64) -> String {
    if bytes >= 1024 * 1024 && bytes.is_multiple_of(1024 * 1024) {
        format!("{} MiB", bytes / (1024 * 1024))
    } else {
        format!("{bytes} bytes")
    }
}

/// Reads a whole regular file of at most `max` bytes ([`open_regular`],
/// then a read that stops one byte past the limit, so a file that grows
/// while it is read costs no more).
pub fn read_regular(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let file = open_regular(path)?;
    read_bounded(file, max)
}

/// Reads an opened file, refusing more than `max` bytes.
pub fn read_bounded(file: File, max: u64) -> io::Result<Vec<u8>> {
    let len = file.metadata()?.len();
    if len > max {
        return Err(FileRefusal::TooLarge(size_text(max)).into_io());
    }
    let mut buf = Vec::with_capacity(len as usize);
    file.take(max.saturating_add(1)).read_to_end(&mut buf)?;
    if buf.len() as u64 > max {
        return Err(FileRefusal::TooLarge(size_text(max)).into_io());
    }
    Ok(buf)
}

/// `sha256:<hex>` of some bytes (the form used in events).
pub fn sha256_tagged(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(7 + 64);
    s.push_str("sha256:");
    for b in digest {
        use std::fmt::Write as _;
        let _ = write!(s, "{b:02x}");
    }
    s
}

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

/// `user@host` of the person or process writing a decision.
pub fn user_at_host() -> String {
    let user = std::env::var("LOOPWATCH_USER")
        .or_else(|_| std::env::var("USER"))
        .or_else(|_| std::env::var("LOGNAME"))
        .ok()
        .filter(|u| !u.is_empty())
        .or_else(user_from_passwd)
        .unwrap_or_else(|| format!("uid{}", rustix::process::getuid().as_raw()));
    let host = gethostname::gethostname().to_string_lossy().into_owned();
    format!("{user}@{host}")
}

/// The login name of the current uid, from `/etc/passwd`.
fn user_from_passwd() -> Option<String> {
    let uid = rustix::process::getuid().as_raw().to_string();
    let bytes = read_regular(Path::new("/etc/passwd"), 16 * 1024 * 1024).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    text.lines().find_map(|l| {
        let mut f = l.split(':');
        let name = f.next()?;
        (f.nth(1)? == uid).then(|| name.to_string())
    })
}

/// Current UTC time as RFC 3339 with seconds (the `at` of events).
pub fn now_rfc3339() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// loopwatch's own state folder (the TUI's log, observed foreign states):
/// `$XDG_STATE_HOME/loopwatch`, else `~/.local/state/loopwatch`.
pub fn state_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".local/state"))
        })?;
    Some(base.join("loopwatch"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_empty() {
        assert_eq!(
            sha256_tagged(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn replace_keeps_permissions_and_link() {
        use std::os::unix::fs::{PermissionsExt, symlink};
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("real.md");
        fs::write(&real, "old").unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).unwrap();
        let link = d.path().join("link.md");
        symlink(&real, &link).unwrap();
        replace_atomically(&link, b"new").unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&real).unwrap(), "new");
        assert_eq!(
            fs::metadata(&real).unwrap().permissions().mode() & 0o777,
            0o640
        );
    }
}
