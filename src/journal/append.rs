//! The one write path (PROTOCOL §5): lock, learn the last seq, append whole
//! lines with a single write, fsync, rewrite `state.json` atomically, unlock.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::time::Duration;

use crate::model::event::EVENT_VERSION;
use crate::model::{Event, EventBody, State, fold};
use crate::util::{
    now_rfc3339, open_pipeline_file, open_regular, read_regular, replace_in_pipeline,
};

use super::{JournalError, Pipeline, PipelineLock, read_all};

/// Largest `state.json` read back (a snapshot bigger than this is ignored
/// and the journal folded instead).
pub const MAX_STATE_BYTES: u64 = 256 * 1024 * 1024;

/// Options of an append.
#[derive(Debug, Clone, Default)]
pub struct AppendOptions {
    /// How long to wait for the lock (`None`: `LOOPWATCH_LOCK_TIMEOUT`,
    /// read at each append, a bad value refused).
    pub lock_timeout: Option<Duration>,
}

/// What an append wrote.
#[derive(Debug, Clone)]
pub struct Appended {
    /// The events written, with their seq and time.
    pub events: Vec<Event>,
    /// The state after them (as written to `state.json`).
    pub state: State,
}

/// Appends events computed from the current state, under the lock.
///
/// `make` sees the state folded from the journal as it is under the lock
/// and returns the payloads to append (or refuses with an error, which
/// leaves everything untouched). This is how rules that depend on the
/// state (ids, counters, "already decided") are applied without a race.
/// The caller's refusals are its own error type `E`.
///
/// Files are opened without following links and refused unless regular;
/// when the append succeeded but `state.json` could not be rewritten, the
/// error is [`JournalError::StateStale`], which carries what was appended.
pub fn append_with<F, E>(pipeline: &Pipeline, opts: &AppendOptions, make: F) -> Result<Appended, E>
where
    F: FnOnce(&State) -> Result<Vec<EventBody>, E>,
    E: From<JournalError>,
{
    let timeout = match opts.lock_timeout {
        Some(t) => t,
        None => PipelineLock::timeout_from_env()?,
    };
    pipeline.ensure_dir()?;
    let _lock = PipelineLock::acquire(&pipeline.lock_path(), timeout)?;

    let journal_path = pipeline.journal_path();
    let mut journal = open_pipeline_file(&journal_path, true, true)
        .map_err(|e| JournalError::io("open", &journal_path, e))?;
    repair_partial_tail(&mut journal, &journal_path)?;
    guarded(pipeline, &mut journal, &journal_path)?;

    let (mut state, stale) = load_state(pipeline, &journal_path)?;
    if stale {
        // A writer killed between its append and its state.json left the
        // snapshot behind the journal: bring it up to date even if this
        // append is refused. Best effort: the journal stays the truth.
        if let Err(e) = write_state(pipeline, &state) {
            tracing::warn!(error = %e, "could not bring state.json up to date");
        }
    }
    let bodies = make(&state)?;
    let journal_error = |e| E::from(e);
    if bodies.is_empty() {
        return Ok(Appended {
            events: Vec::new(),
            state,
        });
    }

    if state.seq.checked_add(bodies.len() as u64).is_none() {
        return Err(journal_error(JournalError::SeqExhausted {
            path: journal_path,
            last: state.seq,
        }));
    }
    let at = now_rfc3339();
    let mut events = Vec::with_capacity(bodies.len());
    let mut buf = Vec::new();
    // The hash chain: each line names the hash of the line before it (the
    // journal's last line under the lock, then the batch's own).
    let mut prev = last_line(&journal_path)?.map(|l| super::line_hash(&l));
    for (i, body) in bodies.into_iter().enumerate() {
        let ev = Event {
            v: EVENT_VERSION,
            seq: state.seq + 1 + i as u64,
            at: at.clone(),
            prev: prev.take(),
            body,
        };
        let start = buf.len();
        serde_json::to_writer(&mut buf, &ev.to_value()).map_err(JournalError::from)?;
        prev = Some(super::line_hash(&buf[start..]));
        buf.push(b'\n');
        events.push(ev);
    }
    let before = journal
        .metadata()
        .map_err(|e| JournalError::io("stat", &journal_path, e))?
        .len();
    // One write for the whole batch: readers see complete lines or a partial
    // tail they ignore; a short write is rolled back so no half line stays.
    match journal.write(&buf) {
        Ok(n) if n == buf.len() => {}
        Ok(n) => {
            let _ = journal.set_len(before);
            return Err(journal_error(JournalError::io(
                "append to",
                &journal_path,
                std::io::Error::new(
                    std::io::ErrorKind::WriteZero,
                    format!("short write ({n} of {} bytes)", buf.len()),
                ),
            )));
        }
        Err(e) => {
            let _ = journal.set_len(before);
            return Err(journal_error(JournalError::io(
                "append to",
                &journal_path,
                e,
            )));
        }
    }
    journal
        .sync_data()
        .map_err(|e| JournalError::io("fsync", &journal_path, e))?;
    if let Some(g) = pipeline.guard() {
        // Where this write ended (an O_APPEND write leaves the position at
        // its end). Should another writer have slipped a line in before it
        // (without the lock), the guard goes on from where it last looked,
        // so that line is judged at its next look, not taken as ours.
        let end = std::io::Seek::stream_position(&mut journal)
            .map_err(|e| JournalError::io("seek", &journal_path, e))?;
        let ours = if end == before + buf.len() as u64 {
            end
        } else {
            before
        };
        g.wrote(&mut journal, &journal_path, ours)?;
    }

    for ev in &events {
        state.apply(ev);
    }
    state.finish();
    let path = pipeline.state_path();
    if let Err(cause) = write_state_file(&path, &state) {
        // The journal has the events: saying "nothing was written" would
        // make the caller retry and record them twice.
        return Err(journal_error(JournalError::StateStale {
            path,
            cause,
            appended: Box::new(Appended { events, state }),
        }));
    }
    Ok(Appended { events, state })
}

/// Under the lock, what other writers appended since the guarded
/// pipeline's last look (see [`super::Guard`]): nothing for an unguarded
/// pipeline; the lines it may not keep are moved out and `state.json` put
/// back as the journal now is, then refused with [`JournalError::Foreign`].
pub fn check_guard(pipeline: &Pipeline) -> Result<(), JournalError> {
    if pipeline.guard().is_none() || !pipeline.journal_path().exists() {
        return Ok(());
    }
    let _lock = PipelineLock::acquire(&pipeline.lock_path(), PipelineLock::timeout_from_env()?)?;
    let path = pipeline.journal_path();
    let mut journal =
        open_pipeline_file(&path, false, true).map_err(|e| JournalError::io("open", &path, e))?;
    repair_partial_tail(&mut journal, &path)?;
    guarded(pipeline, &mut journal, &path)
}

fn guarded(pipeline: &Pipeline, journal: &mut File, path: &Path) -> Result<(), JournalError> {
    let Some(g) = pipeline.guard() else {
        return Ok(());
    };
    let Some(foreign) = g.check(journal, path)? else {
        return Ok(());
    };
    // The snapshot may hold the foreign lines: it is the journal's again.
    let batch = read_all(path).map_err(|e| JournalError::io("read", path, e))?;
    write_state(pipeline, &fold(&batch.events))?;
    Err(JournalError::Foreign(foreign))
}

/// Appends fixed payloads.
pub fn append(
    pipeline: &Pipeline,
    opts: &AppendOptions,
    bodies: Vec<EventBody>,
) -> Result<Appended, JournalError> {
    append_with(pipeline, opts, |_| Ok(bodies))
}

/// Writes `state.json` (temp + fsync + rename + fsync of the folder).
/// A symbolic link in its place is refused, never followed.
pub fn write_state(pipeline: &Pipeline, state: &State) -> Result<(), JournalError> {
    let path = pipeline.state_path();
    write_state_file(&path, state).map_err(|e| JournalError::io("write", path, e))
}

fn write_state_file(path: &Path, state: &State) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec_pretty(state)?;
    bytes.push(b'\n');
    replace_in_pipeline(path, &bytes)
}

/// A crashed writer may have left a last line without `\n`: cut it off.
fn repair_partial_tail(journal: &mut File, path: &Path) -> Result<(), JournalError> {
    let len = journal
        .metadata()
        .map_err(|e| JournalError::io("stat", path, e))?
        .len();
    if len == 0 {
        return Ok(());
    }
    let mut pos = len;
    let mut buf = vec![0u8; 64 * 1024];
    let mut last_byte_checked = false;
    while pos > 0 {
        let n = buf.len().min(pos as usize);
        pos -= n as u64;
        journal
            .seek(SeekFrom::Start(pos))
            .map_err(|e| JournalError::io("seek", path, e))?;
        journal
            .read_exact(&mut buf[..n])
            .map_err(|e| JournalError::io("read", path, e))?;
        if !last_byte_checked {
            if buf[n - 1] == b'\n' {
                return Ok(());
            }
            last_byte_checked = true;
        }
        if let Some(i) = buf[..n].iter().rposition(|&b| b == b'\n') {
            let keep = pos + i as u64 + 1;
            tracing::warn!(path = %path.display(), cut = len - keep, "repairing a partial last line left by a crashed writer");
            return journal
                .set_len(keep)
                .map_err(|e| JournalError::io("truncate", path, e));
        }
    }
    journal
        .set_len(0)
        .map_err(|e| JournalError::io("truncate", path, e))
}

/// The state of the journal: `state.json` when it is ours and up to date
/// with the journal's last seq, else a fold of the whole journal (and
/// `true` when the journal has events: the snapshot on disk is stale).
fn load_state(pipeline: &Pipeline, journal_path: &Path) -> Result<(State, bool), JournalError> {
    let last_seq = last_seq(journal_path)?;
    if let Ok(bytes) = read_regular(&pipeline.state_path(), MAX_STATE_BYTES)
        && let Ok(state) = serde_json::from_slice::<State>(&bytes)
        && state.v == crate::model::state::STATE_VERSION
        && state.seq == last_seq
    {
        return Ok((state, false));
    }
    let batch = read_all(journal_path).map_err(|e| JournalError::io("read", journal_path, e))?;
    Ok((fold(&batch.events), last_seq > 0))
}

/// The bytes of the journal's last line (without its `\n`), `None` for an
/// empty journal. Called after [`repair_partial_tail`]: the journal ends
/// with a `\n`.
fn last_line(journal_path: &Path) -> Result<Option<Vec<u8>>, JournalError> {
    let io = |op, e| JournalError::io(op, journal_path, e);
    let mut f = open_regular(journal_path).map_err(|e| io("open", e))?;
    let len = f.metadata().map_err(|e| io("stat", e))?.len();
    if len == 0 {
        return Ok(None);
    }
    let end = len - 1; // the last line's `\n`
    let mut window = 4096u64;
    loop {
        let start = end.saturating_sub(window);
        f.seek(SeekFrom::Start(start)).map_err(|e| io("seek", e))?;
        let mut buf = Vec::new();
        Read::by_ref(&mut f)
            .take(end - start)
            .read_to_end(&mut buf)
            .map_err(|e| io("read", e))?;
        if let Some(i) = buf.iter().rposition(|&b| b == b'\n') {
            return Ok(Some(buf[i + 1..].to_vec()));
        }
        if start == 0 {
            return Ok(Some(buf));
        }
        window = window.saturating_mul(4);
    }
}

/// Seq of the last complete, parsable line (0 for an empty journal).
fn last_seq(journal_path: &Path) -> Result<u64, JournalError> {
    let mut f =
        open_regular(journal_path).map_err(|e| JournalError::io("open", journal_path, e))?;
    let len = f
        .metadata()
        .map_err(|e| JournalError::io("stat", journal_path, e))?
        .len();
    let mut window = 4096u64;
    loop {
        let start = len.saturating_sub(window);
        f.seek(SeekFrom::Start(start))
            .map_err(|e| JournalError::io("seek", journal_path, e))?;
        let mut buf = Vec::new();
        Read::by_ref(&mut f)
            .take(len - start)
            .read_to_end(&mut buf)
            .map_err(|e| JournalError::io("read", journal_path, e))?;
        let mut lines: Vec<&[u8]> = buf.split(|&b| b == b'\n').collect();
        if start > 0 {
            lines.remove(0); // may be cut
        }
        for line in lines.iter().rev() {
            if let Ok(ev) = Event::parse_line(line) {
                return Ok(ev.seq);
            }
        }
        if start == 0 {
            return Ok(0);
        }
        window = window.saturating_mul(4);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EventBody;
    use std::fs::{self, OpenOptions};

    fn note(t: &str) -> EventBody {
        EventBody::Note { text: t.into() }
    }

    #[test]
    fn appends_numbered_lines_and_writes_state() {
        let d = tempfile::tempdir().unwrap();
        let p = Pipeline::at(d.path().join(".pipeline"));
        let o = AppendOptions::default();
        append(&p, &o, vec![note("a"), note("b")]).unwrap();
        let out = append(&p, &o, vec![note("c")]).unwrap();
        assert_eq!(out.events[0].seq, 3);
        let batch = read_all(&p.journal_path()).unwrap();
        assert_eq!(batch.events.len(), 3);
        let state: State = serde_json::from_slice(&fs::read(p.state_path()).unwrap()).unwrap();
        assert_eq!(state, fold(&batch.events));
    }

    #[test]
    fn a_partial_tail_is_repaired_before_appending() {
        let d = tempfile::tempdir().unwrap();
        let p = Pipeline::at(d.path().join(".pipeline"));
        let o = AppendOptions::default();
        append(&p, &o, vec![note("a")]).unwrap();
        OpenOptions::new()
            .append(true)
            .open(p.journal_path())
            .unwrap()
            .write_all(b"{\"v\":1,\"seq\":2,\"at")
            .unwrap();
        append(&p, &o, vec![note("b")]).unwrap();
        let text = fs::read_to_string(p.journal_path()).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(text.ends_with("\"text\":\"b\"}\n"));
        let batch = read_all(&p.journal_path()).unwrap();
        assert!(batch.problems.is_empty());
        assert_eq!(batch.events[1].seq, 2);
    }

    #[test]
    fn a_stale_state_json_is_rebuilt_from_the_journal() {
        let d = tempfile::tempdir().unwrap();
        let p = Pipeline::at(d.path().join(".pipeline"));
        let o = AppendOptions::default();
        append(&p, &o, vec![note("a")]).unwrap();
        fs::write(p.state_path(), b"{\"v\":1,\"seq\":99}").unwrap();
        let out = append(&p, &o, vec![note("b")]).unwrap();
        assert_eq!(out.state.seq, 2);
    }

    #[test]
    fn a_refusal_writes_nothing() {
        let d = tempfile::tempdir().unwrap();
        let p = Pipeline::at(d.path().join(".pipeline"));
        let o = AppendOptions::default();
        append(&p, &o, vec![note("a")]).unwrap();
        let before = fs::read(p.journal_path()).unwrap();
        #[derive(Debug)]
        struct No;
        impl From<JournalError> for No {
            fn from(_: JournalError) -> No {
                No
            }
        }
        let err = append_with(&p, &o, |_| Err::<Vec<EventBody>, No>(No));
        assert!(matches!(err, Err(No)));
        assert_eq!(fs::read(p.journal_path()).unwrap(), before);
    }

    #[test]
    fn every_appended_line_carries_the_hash_of_the_line_before_it() {
        let d = tempfile::tempdir().unwrap();
        let p = Pipeline::at(d.path().join(".pipeline"));
        let o = AppendOptions::default();
        let first = append(&p, &o, vec![note("a"), note("b")]).unwrap();
        assert_eq!(first.events[0].prev, None);
        append(&p, &o, vec![note("c")]).unwrap();
        let bytes = fs::read(p.journal_path()).unwrap();
        let lines: Vec<&[u8]> = bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        assert_eq!(lines.len(), 3);
        for w in lines.windows(2) {
            let ev = Event::parse_line(w[1]).unwrap();
            assert_eq!(
                ev.prev.as_deref(),
                Some(crate::journal::line_hash(w[0]).as_str())
            );
        }
        let (chain, breaks) = crate::journal::check_chain(&bytes);
        assert!(breaks.is_empty() && chain.started(), "{breaks:?}");
        // A journal written before the chain goes on chained from its last line.
        let d2 = tempfile::tempdir().unwrap();
        let p2 = Pipeline::at(d2.path().join(".pipeline"));
        p2.ensure_dir().unwrap();
        let old = "{\"v\":1,\"seq\":1,\"at\":\"t\",\"type\":\"note\",\"text\":\"old\"}";
        fs::write(p2.journal_path(), format!("{old}\n")).unwrap();
        let out = append(&p2, &o, vec![note("new")]).unwrap();
        assert_eq!(
            out.events[0].prev.as_deref(),
            Some(crate::journal::line_hash(old.as_bytes()).as_str())
        );
    }
}
