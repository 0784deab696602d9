//! What is kept of a child's output: the head and the tail of each stream
//! in memory (both bounded), a log file both streams may share (capped,
//! with one line saying where it was cut), and an observer that sees every
//! byte as it comes (GATE 0 looks for its marker in all of it). Memory and
//! the log stay bounded however much the child writes; every byte is read,
//! so the child never blocks on a full pipe.

use std::collections::VecDeque;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Sees every chunk of a stream as it is read.
type Observer = Box<dyn FnMut(&[u8]) + Send>;

/// What happens to one stream.
#[derive(Default)]
pub struct Sink {
    pub(super) piped: bool,
    keep: usize,
    tail: usize,
    log: Option<LogFile>,
    observer: Option<Observer>,
}

impl Sink {
    /// Discarded (`/dev/null`).
    pub fn null() -> Self {
        Sink::default()
    }

    /// Its first `keep` bytes kept.
    pub fn capture(keep: usize) -> Self {
        Sink {
            piped: true,
            keep,
            ..Sink::default()
        }
    }

    /// Read, and only what the other settings say kept.
    pub fn read() -> Self {
        Sink::capture(0)
    }

    /// Its last `bytes` bytes kept too.
    pub fn tail(mut self, bytes: usize) -> Self {
        self.piped = true;
        self.tail = bytes;
        self
    }

    /// Written to `log` as it comes (shared with the other stream).
    pub fn log(mut self, log: &LogFile) -> Self {
        self.piped = true;
        self.log = Some(log.clone());
        self
    }

    /// Every chunk read handed to `f`, in order.
    pub fn observe(mut self, f: impl FnMut(&[u8]) + Send + 'static) -> Self {
        self.piped = true;
        self.observer = Some(Box::new(f));
        self
    }

    pub(super) fn reader(self) -> Reader {
        Reader {
            captured: Captured::default(),
            keep: self.keep,
            tail_limit: self.tail,
            tail: VecDeque::new(),
            log: self.log,
            observer: self.observer,
        }
    }
}

/// What was kept of one stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    /// Its first bytes, up to the sink's `keep`.
    pub head: Vec<u8>,
    /// More than `head` was written.
    pub truncated: bool,
    /// Its last bytes, up to the sink's `tail`.
    pub tail: Vec<u8>,
    /// Bytes written in all.
    pub total: u64,
}

impl Captured {
    /// The last non-blank lines of the tail, at most `n`, each trimmed,
    /// lossily decoded: a CLI's last words.
    pub fn last_lines(&self, n: usize) -> Vec<String> {
        let text = String::from_utf8_lossy(&self.tail);
        let mut lines: Vec<String> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect();
        // The tail's first line may be cut in the middle.
        if self.total > self.tail.len() as u64 && lines.len() > 1 {
            lines.remove(0);
        }
        let skip = lines.len().saturating_sub(n);
        lines.split_off(skip)
    }
}

/// Reads one stream into its sink.
pub(super) struct Reader {
    captured: Captured,
    keep: usize,
    tail_limit: usize,
    tail: VecDeque<u8>,
    log: Option<LogFile>,
    observer: Option<Observer>,
}

impl Reader {
    pub(super) fn feed(&mut self, chunk: &[u8]) {
        let c = &mut self.captured;
        c.total += chunk.len() as u64;
        let room = self.keep.saturating_sub(c.head.len());
        c.head.extend_from_slice(&chunk[..chunk.len().min(room)]);
        c.truncated |= chunk.len() > room;
        if self.tail_limit > 0 {
            let take = &chunk[chunk.len().saturating_sub(self.tail_limit)..];
            self.tail.extend(take);
            let over = self.tail.len().saturating_sub(self.tail_limit);
            self.tail.drain(..over);
        }
        if let Some(log) = &self.log {
            log.write(chunk);
        }
        if let Some(f) = &mut self.observer {
            f(chunk);
        }
    }

    pub(super) fn finish(mut self) -> Captured {
        self.captured.tail = self.tail.into_iter().collect();
        self.captured
    }

    /// Reads `pipe` to its end (or a read error) into the sink.
    pub(super) fn drain(mut self, mut pipe: impl std::io::Read) -> Captured {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => self.feed(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        self.finish()
    }
}

/// A log file both streams of a child write to as they come, up to a
/// limit; past it the rest is read and dropped, and one line says so.
#[derive(Clone)]
pub struct LogFile(Arc<Mutex<LogState>>);

struct LogState {
    file: std::fs::File,
    written: u64,
    limit: u64,
    cut: bool,
}

impl LogFile {
    /// Creates (or empties) the log at `path`, never through a symbolic
    /// link and only as a regular file (it is under `.pipeline/`).
    pub fn create(path: &Path, limit: u64) -> std::io::Result<LogFile> {
        if let Some(dir) = path.parent() {
            crate::util::pipeline_dir(dir)?;
        }
        let file = crate::util::open_pipeline_file(path, true, false)?;
        file.set_len(0)?;
        Ok(LogFile(Arc::new(Mutex::new(LogState {
            file,
            written: 0,
            limit,
            cut: false,
        }))))
    }

    /// Appends what fits under the limit.
    pub fn write(&self, chunk: &[u8]) {
        let Ok(mut l) = self.0.lock() else { return };
        let room = l.limit.saturating_sub(l.written);
        let take = chunk.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        // A log that cannot be written must not stop the child: what the
        // caller needs is kept in memory.
        if take > 0 && l.file.write_all(&chunk[..take]).is_ok() {
            l.written += take as u64;
        }
        if take < chunk.len() && !l.cut {
            l.cut = true;
            let limit = l.limit;
            let _ = writeln!(
                l.file,
                "\n[loopwatch: log cut at {limit} bytes; the rest was read and dropped]"
            );
        }
    }

    /// Appends one line of loopwatch's own, on a line of its own, whatever
    /// the limit (how the run ended).
    pub fn note(&self, line: &str) {
        if let Ok(mut l) = self.0.lock() {
            let _ = writeln!(l.file, "\n{line}");
        }
    }

    /// Flushes what was written to disk.
    pub fn sync(&self) {
        if let Ok(l) = self.0.lock() {
            let _ = l.file.sync_data();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_and_tail_stay_bounded() {
        let mut r = Sink::capture(4).tail(5).reader();
        for chunk in [&b"abc"[..], b"defgh", b"ij"] {
            r.feed(chunk);
        }
        let c = r.finish();
        assert_eq!(c.head, b"abcd");
        assert!(c.truncated);
        assert_eq!(c.tail, b"fghij");
        assert_eq!(c.total, 10);
    }

    #[test]
    fn last_lines_skip_blanks_and_a_cut_first_line() {
        let c = Captured {
            tail: b"half line\nerror: one\n\n  error: two  \n".to_vec(),
            total: 1000,
            ..Captured::default()
        };
        assert_eq!(c.last_lines(5), ["error: one", "error: two"]);
        assert_eq!(c.last_lines(1), ["error: two"]);
    }

    #[test]
    fn a_log_is_cut_at_its_limit_and_says_so() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("a.log");
        let log = LogFile::create(&path, 6).unwrap();
        log.write(b"abcd");
        log.write(b"efgh");
        log.write(b"ijkl");
        log.note("[loopwatch: done]");
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "abcdef\n[loopwatch: log cut at 6 bytes; the rest was read and dropped]\n\n[loopwatch: done]\n"
        );
        // Never written through a link.
        std::os::unix::fs::symlink(d.path().join("elsewhere"), d.path().join("link.log")).unwrap();
        assert!(LogFile::create(&d.path().join("link.log"), 10).is_err());
        assert!(!d.path().join("elsewhere").exists());
    }
}
