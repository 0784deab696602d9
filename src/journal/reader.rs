//! Reading `events.jsonl` incrementally: from a byte offset, tolerating a
//! partial last line (a write in progress), reporting seq gaps and repeats,
//! bad lines with line and column, and files that were truncated or replaced.
//!
//! Memory stays bounded: a line longer than [`MAX_LINE_BYTES`] is skipped
//! (and reported) without being held whole.

use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::model::Event;

/// Longest journal line accepted (a longer one is reported and skipped).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// A journal line that was not used, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineProblem {
    /// The journal file.
    pub path: PathBuf,
    /// 1-based line number.
    pub line: u64,
    /// 1-based column, when known.
    pub column: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for LineProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = self.path.file_name().map_or_else(
            || self.path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        match self.column {
            Some(c) => write!(f, "{name}:{}:{c}: {}", self.line, self.message),
            None => write!(f, "{name}:{}: {}", self.line, self.message),
        }
    }
}

/// What one [`JournalReader::read_new`] call found.
#[derive(Debug, Default)]
pub struct ReadBatch {
    /// New events, in order, seq repeats removed.
    pub events: Vec<Event>,
    /// Lines that were not used.
    pub problems: Vec<LineProblem>,
    /// The file was truncated or replaced: earlier events are void, refold
    /// from `events` (which start from the beginning of the new file).
    pub reset: bool,
    /// Bytes of an incomplete last line are waiting for their `\n`.
    pub partial: bool,
    /// The journal does not exist (yet).
    pub missing: bool,
}

/// Incremental reader of one journal file.
#[derive(Debug)]
pub struct JournalReader {
    path: PathBuf,
    offset: u64,
    identity: Option<(u64, u64)>,
    line_no: u64,
    last_seq: u64,
    pending: Vec<u8>,
    skipping_long_line: bool,
}

impl JournalReader {
    /// A reader at the start of `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        JournalReader {
            path: path.into(),
            offset: 0,
            identity: None,
            line_no: 0,
            last_seq: 0,
            pending: Vec::new(),
            skipping_long_line: false,
        }
    }

    /// The journal file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes consumed so far (complete lines and the pending partial one).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Last seq accepted.
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// Reads whatever was appended since the last call.
    pub fn read_new(&mut self) -> io::Result<ReadBatch> {
        let mut batch = ReadBatch::default();
        // Never blocks (a FIFO planted as the journal opens at once and is
        // refused) and never reads a device: regular files only.
        let mut file = match crate::util::open_regular(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if self.identity.is_some() {
                    self.restart();
                    batch.reset = true;
                }
                batch.missing = true;
                return Ok(batch);
            }
            Err(e) if crate::util::FileRefusal::of(&e).is_some() => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "the journal is not a regular file",
                ));
            }
            Err(e) => return Err(e),
        };
        let meta = file.metadata()?;
        let identity = (meta.dev(), meta.ino());
        if self.identity.is_some_and(|id| id != identity) || meta.len() < self.offset {
            self.restart();
            batch.reset = true;
        }
        self.identity = Some(identity);
        if meta.len() == self.offset {
            batch.partial = !self.pending.is_empty() || self.skipping_long_line;
            return Ok(batch);
        }
        file.seek(SeekFrom::Start(self.offset))?;
        let mut buf = vec![0u8; 256 * 1024];
        loop {
            let n = file.read(&mut buf)?;
            if n == 0 {
                break;
            }
            self.offset += n as u64;
            self.consume(&buf[..n], &mut batch);
        }
        batch.partial = !self.pending.is_empty() || self.skipping_long_line;
        Ok(batch)
    }

    fn restart(&mut self) {
        self.offset = 0;
        self.identity = None;
        self.line_no = 0;
        self.last_seq = 0;
        self.pending.clear();
        self.skipping_long_line = false;
    }

    fn consume(&mut self, mut chunk: &[u8], batch: &mut ReadBatch) {
        while !chunk.is_empty() {
            match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    let (head, rest) = chunk.split_at(i);
                    chunk = &rest[1..];
                    self.line_no += 1;
                    if self.skipping_long_line {
                        self.skipping_long_line = false;
                        continue;
                    }
                    if self.pending.is_empty() {
                        self.line(head, batch);
                    } else {
                        let mut line = std::mem::take(&mut self.pending);
                        line.extend_from_slice(head);
                        self.line(&line, batch);
                    }
                }
                None => {
                    if !self.skipping_long_line {
                        if self.pending.len() + chunk.len() > MAX_LINE_BYTES {
                            batch.problems.push(self.too_long(self.line_no + 1));
                            self.pending = Vec::new();
                            self.skipping_long_line = true;
                        } else {
                            self.pending.extend_from_slice(chunk);
                        }
                    }
                    chunk = &[];
                }
            }
        }
    }

    fn line(&mut self, raw: &[u8], batch: &mut ReadBatch) {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if raw.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        if raw.len() > MAX_LINE_BYTES {
            batch.problems.push(self.too_long(self.line_no));
            return;
        }
        match Event::parse_line(raw) {
            Ok(ev) if ev.v != crate::model::event::EVENT_VERSION => {
                batch
                    .problems
                    .push(self.problem(self.line_no, None, version_problem(ev.v)));
            }
            Ok(ev) => {
                if ev.seq <= self.last_seq {
                    batch.problems.push(self.problem(
                        self.line_no,
                        None,
                        format!(
                            "seq {} repeats or goes back (last was {}): kept the first",
                            ev.seq, self.last_seq
                        ),
                    ));
                    return;
                }
                if ev.seq != self.last_seq + 1 {
                    batch.problems.push(self.problem(
                        self.line_no,
                        None,
                        format!("seq gap: {} follows {}", ev.seq, self.last_seq),
                    ));
                }
                self.last_seq = ev.seq;
                batch.events.push(ev);
            }
            Err(crate::model::event::EventError::Json { column, message }) => {
                batch
                    .problems
                    .push(self.problem(self.line_no, Some(column), message));
            }
            Err(e) => batch
                .problems
                .push(self.problem(self.line_no, None, e.to_string())),
        }
    }

    /// Line `line` is longer than a line may be; the column is where
    /// reading gave up on it.
    fn too_long(&self, line: u64) -> LineProblem {
        let mib = MAX_LINE_BYTES / (1024 * 1024);
        let message = format!("line longer than {mib} MiB: skipped");
        self.problem(line, Some(MAX_LINE_BYTES + 1), message)
    }

    fn problem(&self, line: u64, column: Option<usize>, message: String) -> LineProblem {
        LineProblem {
            path: self.path.clone(),
            line,
            column,
            message,
        }
    }
}

/// Why a line of another format version is skipped (readers and
/// `validate` say the same).
pub fn version_problem(v: u32) -> String {
    format!(
        "format version {v} is not {} (the version this loopwatch reads): skipped",
        crate::model::event::EVENT_VERSION
    )
}

/// Reads a whole journal: its events, the problems, and whether a partial
/// last line was left out.
pub fn read_all(path: &Path) -> io::Result<ReadBatch> {
    JournalReader::new(path).read_new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;
    use std::io::Write;

    fn line(seq: u64) -> String {
        format!(
            "{{\"v\":1,\"seq\":{seq},\"at\":\"2026-01-01T00:00:00Z\",\"type\":\"note\",\"text\":\"n{seq}\"}}\n"
        )
    }

    #[test]
    fn partial_line_waits_for_its_newline() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("events.jsonl");
        let full = line(1) + &line(2);
        let (a, b) = full.split_at(full.len() - 10);
        std::fs::write(&p, a).unwrap();
        let mut r = JournalReader::new(&p);
        let batch = r.read_new().unwrap();
        assert_eq!(batch.events.len(), 1);
        assert!(batch.partial);
        std::fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .unwrap()
            .write_all(b.as_bytes())
            .unwrap();
        let batch = r.read_new().unwrap();
        assert_eq!(
            batch.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
            vec![2]
        );
        assert!(!batch.partial);
        assert!(batch.problems.is_empty());
    }

    #[test]
    fn gaps_repeats_and_bad_lines_are_reported() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("events.jsonl");
        let text = line(1) + &line(3) + &line(3) + "{\"v\":1,\"seq\":\n" + &line(4);
        std::fs::write(&p, text).unwrap();
        let batch = read_all(&p).unwrap();
        assert_eq!(
            batch.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
            vec![1, 3, 4]
        );
        let msgs: Vec<String> = batch.problems.iter().map(ToString::to_string).collect();
        assert_eq!(
            msgs,
            vec![
                "events.jsonl:2: seq gap: 3 follows 1",
                "events.jsonl:3: seq 3 repeats or goes back (last was 3): kept the first",
                "events.jsonl:4:13: EOF while parsing a value",
            ]
        );
    }

    #[test]
    fn truncation_and_replacement_restart() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("events.jsonl");
        std::fs::write(&p, line(1) + &line(2)).unwrap();
        let mut r = JournalReader::new(&p);
        assert_eq!(r.read_new().unwrap().events.len(), 2);
        std::fs::write(&p, line(1)).unwrap();
        let b = r.read_new().unwrap();
        assert!(b.reset);
        assert_eq!(b.events.len(), 1);
        let tmp = d.path().join("new");
        std::fs::write(&tmp, line(1) + &line(2) + &line(3)).unwrap();
        std::fs::rename(&tmp, &p).unwrap();
        let b = r.read_new().unwrap();
        assert!(b.reset);
        assert_eq!(b.events.len(), 3);
    }

    #[test]
    fn an_overlong_line_is_skipped_with_bounded_memory() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("events.jsonl");
        let mut f = File::create(&p).unwrap();
        f.write_all(line(1).as_bytes()).unwrap();
        f.write_all(b"{\"v\":1,\"x\":\"").unwrap();
        let chunk = vec![b'a'; 1024 * 1024];
        for _ in 0..20 {
            f.write_all(&chunk).unwrap();
        }
        f.write_all(b"\"}\n").unwrap();
        f.write_all(line(2).as_bytes()).unwrap();
        drop(f);
        let mut r = JournalReader::new(&p);
        let b = r.read_new().unwrap();
        assert_eq!(
            b.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
            vec![1, 2]
        );
        assert_eq!(b.problems.len(), 1);
        assert_eq!(b.problems[0].line, 2);
        assert!(r.pending.capacity() <= MAX_LINE_BYTES + 256 * 1024);
    }
}
