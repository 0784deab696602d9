//! While `loopwatch run` drives a pipeline, its journal is the engine's to
//! write. The engine's [`Pipeline`](super::Pipeline) carries a guard that knows where the
//! journal ended after the engine's last look: its length, its last line's
//! hash and the file itself (device and inode). Under the writer lock,
//! before each append and each read of the state, whatever was written
//! since is checked:
//!
//! - a journal replaced, shortened or rewritten at its end is refused;
//! - lines another writer appended are read one by one; the ones a person
//!   or another loopwatch may write while the engine runs (a decision on an
//!   open gate, an expiry, a notification's claim, a note) are accepted,
//!   anything else (garbage, a seq out of order, a `run.ended`, a gate
//!   round, an agent event) is foreign: the lines from the first foreign
//!   one on are moved out of the journal into `foreign-<seq>.jsonl` beside
//!   it, the journal and `state.json` are put back as they were, and the
//!   caller is told ([`JournalError::Foreign`]), so the run stops with the
//!   problem named and resumes on a clean journal.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use super::JournalError;
use crate::model::{Event, State, fold};

/// Whether a line another writer appended may stay: `Ok` when it may,
/// else why not. Asked with the state folded up to and including it.
pub type Allowed = Arc<dyn Fn(&Event, &State) -> Result<(), String> + Send + Sync>;

/// A pipeline's guard, shared by every clone of the engine's [`super::Pipeline`].
#[derive(Clone)]
pub struct Guard {
    known: Arc<Mutex<Option<End>>>,
    allowed: Allowed,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard").finish_non_exhaustive()
    }
}

/// Where the journal ended when last looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct End {
    len: u64,
    dev: u64,
    ino: u64,
    last_line: [u8; 32],
}

/// Lines moved out of the journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Foreign {
    /// Where they were moved (beside the journal).
    pub kept: PathBuf,
    /// Their seq as written, when it could be read.
    pub first_seq: Option<u64>,
    /// Why each was refused, the first one first.
    pub why: String,
    /// How many lines were moved.
    pub lines: usize,
}

impl Guard {
    /// A guard that knows nothing yet: its first look takes the journal as
    /// it is (what was there before the engine started is history).
    pub fn new(allowed: Allowed) -> Self {
        Guard {
            known: Arc::new(Mutex::new(None)),
            allowed,
        }
    }

    /// Checks the open journal (under the writer lock) against what was
    /// known, accepting the lines other writers may append. Returns the
    /// foreign lines it moved out, or an error when the journal itself was
    /// replaced or cut.
    pub(super) fn check(
        &self,
        journal: &mut File,
        path: &Path,
    ) -> Result<Option<Foreign>, JournalError> {
        let Ok(mut known) = self.known.lock() else {
            return Ok(None);
        };
        let now = end_of(journal, path)?;
        let Some(was) = *known else {
            *known = Some(now);
            return Ok(None);
        };
        if (was.dev, was.ino) != (now.dev, now.ino) {
            return Err(JournalError::Replaced {
                path: path.to_path_buf(),
                why: "it is another file than the one this engine writes (replaced or moved)"
                    .into(),
            });
        }
        if now.len < was.len {
            return Err(JournalError::Replaced {
                path: path.to_path_buf(),
                why: format!("it shrank from {} to {} bytes", was.len, now.len),
            });
        }
        if last_line_hash(journal, path, was.len)? != was.last_line {
            return Err(JournalError::Replaced {
                path: path.to_path_buf(),
                why: format!("its line ending at byte {} was rewritten", was.len),
            });
        }
        if now.len == was.len {
            return Ok(None);
        }
        let added = read_range(journal, path, was.len, now.len)?;
        let mut cut_at = was.len;
        let mut offset = was.len;
        let mut refused: Option<(Option<u64>, String)> = None;
        // The state after the accepted lines, for the rules' questions.
        let mut state: Option<State> = None;
        for line in added.split_inclusive(|&b| b == b'\n') {
            let verdict = match Event::parse_line(line.strip_suffix(b"\n").unwrap_or(line)) {
                Err(e) => Err((None, format!("not an event: {e}"))),
                Ok(ev) => {
                    let s = state.get_or_insert_with(|| fold_until(path, was.len));
                    if ev.seq != s.seq + 1 {
                        Err((
                            Some(ev.seq),
                            format!("seq {} where {} comes next", ev.seq, s.seq + 1),
                        ))
                    } else {
                        s.apply(&ev);
                        s.finish();
                        (self.allowed)(&ev, s).map_err(|why| (Some(ev.seq), why))
                    }
                }
            };
            match verdict {
                Ok(()) => {
                    offset += line.len() as u64;
                    cut_at = offset;
                }
                Err(r) => {
                    refused = Some(r);
                    break;
                }
            }
        }
        let Some((first_seq, why)) = refused else {
            // What was read, not the file's end now: a line another writer
            // appended meanwhile is looked at next time.
            *known = Some(now);
            return Ok(None);
        };
        // Everything from the first refused line on goes out.
        let moved = &added[usize::try_from(cut_at - was.len).unwrap_or(0)..];
        let kept = path.with_file_name(format!(
            "foreign-{}.jsonl",
            first_seq.map_or_else(|| format!("at-{cut_at}"), |s| s.to_string())
        ));
        crate::util::replace_in_pipeline(&kept, moved)
            .map_err(|e| JournalError::io("keep the foreign lines in", &kept, e))?;
        journal
            .set_len(cut_at)
            .map_err(|e| JournalError::io("truncate", path, e))?;
        journal
            .sync_data()
            .map_err(|e| JournalError::io("fsync", path, e))?;
        *known = Some(end_at(journal, path, cut_at)?);
        Ok(Some(Foreign {
            kept,
            first_seq,
            why,
            lines: moved
                .split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .count(),
        }))
    }

    /// Forgets what it knew: its next look takes the journal as it is (the
    /// engine archived an ended run and starts a journal anew).
    pub fn forget(&self) {
        if let Ok(mut k) = self.known.lock() {
            *k = None;
        }
    }

    /// Records where this engine's own append ended (`end`: its last byte
    /// and one), never the file's end after it: a line another writer
    /// appended right behind it, without the lock, is looked at next time.
    pub(super) fn wrote(
        &self,
        journal: &mut File,
        path: &Path,
        end: u64,
    ) -> Result<(), JournalError> {
        let now = end_at(journal, path, end)?;
        if let Ok(mut k) = self.known.lock() {
            *k = Some(now);
        }
        Ok(())
    }
}

fn end_of(journal: &mut File, path: &Path) -> Result<End, JournalError> {
    let len = journal
        .metadata()
        .map_err(|e| JournalError::io("stat", path, e))?
        .len();
    end_at(journal, path, len)
}

/// The journal's end taken at byte `len`.
fn end_at(journal: &mut File, path: &Path, len: u64) -> Result<End, JournalError> {
    let meta = journal
        .metadata()
        .map_err(|e| JournalError::io("stat", path, e))?;
    Ok(End {
        len,
        dev: meta.dev(),
        ino: meta.ino(),
        last_line: last_line_hash(journal, path, len)?,
    })
}

/// The sha256 of the line that ends at byte `end` (all zeros for none).
fn last_line_hash(journal: &mut File, path: &Path, end: u64) -> Result<[u8; 32], JournalError> {
    if end == 0 {
        return Ok([0; 32]);
    }
    let start = end.saturating_sub(super::MAX_LINE_BYTES as u64 + 1);
    let buf = read_range(journal, path, start, end)?;
    let body = buf.strip_suffix(b"\n").unwrap_or(&buf);
    let line = match body.iter().rposition(|&b| b == b'\n') {
        Some(i) => &body[i + 1..],
        None => body,
    };
    Ok(Sha256::digest(line).into())
}

fn read_range(
    journal: &mut File,
    path: &Path,
    start: u64,
    end: u64,
) -> Result<Vec<u8>, JournalError> {
    journal
        .seek(SeekFrom::Start(start))
        .map_err(|e| JournalError::io("seek", path, e))?;
    let mut buf = Vec::new();
    Read::by_ref(journal)
        .take(end - start)
        .read_to_end(&mut buf)
        .map_err(|e| JournalError::io("read", path, e))?;
    Ok(buf)
}

/// The state of the journal's first `len` bytes.
fn fold_until(path: &Path, len: u64) -> State {
    let Ok(mut f) = crate::util::open_regular(path) else {
        return State::default();
    };
    let mut buf = Vec::new();
    if Read::by_ref(&mut f)
        .take(len)
        .read_to_end(&mut buf)
        .is_err()
    {
        return State::default();
    }
    let events: Vec<Event> = buf
        .split(|&b| b == b'\n')
        .filter_map(|l| Event::parse_line(l).ok())
        .collect();
    fold(&events)
}
