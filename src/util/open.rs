//! Opening files from outside: never blocking (`O_NONBLOCK`: a FIFO opens
//! at once and is refused), regular files only (checked by `fstat` on the
//! opened file, so no swap between a check and the open fools it), bounded
//! reads, and `O_NOFOLLOW` for the files loopwatch writes in `.pipeline/`.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

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
    pub(super) fn into_io(self) -> io::Error {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_within_the_limit_are_read() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f");
        std::fs::write(&f, b"12345").unwrap();
        assert_eq!(read_regular(&f, 5).unwrap(), b"12345");
        let e = read_regular(&f, 4).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::FileTooLarge);
        assert_eq!(e.to_string(), "larger than 4 bytes: refused");
        let fifo = d.path().join("p");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .unwrap();
        let e = read_regular(&fifo, 5).unwrap_err();
        assert_eq!(FileRefusal::of(&e), Some(&FileRefusal::NotRegular("FIFO")));
        let e = read_regular(Path::new("/dev/zero"), 5).unwrap_err();
        assert_eq!(
            FileRefusal::of(&e),
            Some(&FileRefusal::NotRegular("device"))
        );
        let e = read_regular(d.path(), 5).unwrap_err();
        assert_eq!(
            FileRefusal::of(&e),
            Some(&FileRefusal::NotRegular("folder"))
        );
        let link = d.path().join("l");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        assert_eq!(
            read_regular(&link, 5).unwrap(),
            b"12345",
            "reads follow links"
        );
        let e = open_pipeline_file(&link, false, true).unwrap_err();
        assert_eq!(
            FileRefusal::of(&e),
            Some(&FileRefusal::Symlink),
            "writes never do"
        );
    }
}
