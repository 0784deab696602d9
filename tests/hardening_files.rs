//! Files written while `loopwatch watch --headless` runs: a `state.json`
//! or a journal caught half-written, a thousand saves in a second by every
//! way editors and writers replace a file, and the `.pipeline` folder
//! deleted, renamed away and recreated. Each case reads the child's lines
//! with deadlines; pauses only give the watcher a chance to see a
//! half-written file, never decide a result.

mod support;

use support::hardening as hardening_support;

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use hardening_support::{Worktree, foreign_state, note_line, notes};
use loopwatch::model::EventBody;
use support::headless::Headless;

/// Generous deadline for lines that only need to arrive.
const ARRIVE_WITHIN: Duration = Duration::from_secs(5);
/// Time given to the watcher to look at a half-written file.
const LOOK: Duration = Duration::from_millis(60);

fn write_all(path: &Path, bytes: &[u8]) {
    let mut f = File::create(path).unwrap();
    f.write_all(bytes).unwrap();
}

fn append(path: &Path, bytes: &[u8]) {
    OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap()
        .write_all(bytes)
        .unwrap();
}

fn replace(dir: &Path, name: &str, bytes: &[u8]) {
    let tmp = dir.join(format!(".{name}.tmp"));
    write_all(&tmp, bytes);
    fs::rename(&tmp, dir.join(name)).unwrap();
}

/// Asserts that no line arrives for a while, or that any line keeps `seq`.
fn assert_no_regression(h: &mut Headless, seq: u64) {
    if let Some(l) = h.wait_for(LOOK * 2, |l| l.seq < seq) {
        panic!("seq went back to {} (lines: {:?})", l.seq, h.texts());
    }
}

#[test]
fn a_state_json_rewritten_in_two_chunks_keeps_the_last_good_state() {
    let (_w, p) = Worktree::with_pipeline();
    replace(p.dir(), "state.json", foreign_state(5).as_bytes());
    let mut h = Headless::start(p.dir());
    h.wait_seq(5, ARRIVE_WITHIN);
    for seq in 6..=10 {
        let text = foreign_state(seq);
        let (a, b) = text.split_at(text.len() / 2);
        write_all(&p.state_path(), a.as_bytes());
        assert_no_regression(&mut h, seq - 1);
        append(&p.state_path(), b.as_bytes());
        h.wait_seq(seq, ARRIVE_WITHIN);
    }
    assert!(h.seen.iter().all(|l| l.seq >= 5), "{:?}", h.texts());
    assert!(h.alive());
}

#[test]
fn a_journal_truncated_then_rewritten_in_two_chunks_never_goes_back() {
    let (_w, p) = Worktree::with_pipeline();
    fs::write(p.journal_path(), notes(5)).unwrap();
    let mut h = Headless::start(p.dir());
    h.wait_seq(5, ARRIVE_WITHIN);
    for seq in 6..=10 {
        // Truncate in place (same inode, like `cp` or `>`), let the watcher
        // see the empty file, then rewrite it: every earlier line and half
        // of a new one, and at last the rest of that line.
        File::create(p.journal_path()).unwrap();
        assert_no_regression(&mut h, seq - 1);
        let new = note_line(seq);
        let (a, b) = new.split_at(new.len() / 2);
        append(&p.journal_path(), (notes(seq - 1) + a).as_bytes());
        assert_no_regression(&mut h, seq - 1);
        append(&p.journal_path(), b.as_bytes());
        h.wait_seq(seq, ARRIVE_WITHIN);
    }
    assert!(
        h.seen.iter().all(|l| l.seq >= 5),
        "seq went back: {:?}",
        h.texts()
    );
}

/// The ways a `state.json` gets replaced.
#[derive(Debug, Clone, Copy)]
enum Save {
    TempRename,
    TruncateWrite,
    VimStyle,
    MoveIn,
}

fn save(how: Save, root: &Path, dir: &Path, bytes: &[u8]) {
    let state = dir.join("state.json");
    match how {
        Save::TempRename => replace(dir, "state.json", bytes),
        Save::TruncateWrite => write_all(&state, bytes),
        Save::VimStyle => {
            write_all(&dir.join(".state.json.swp"), b"swap");
            fs::rename(&state, dir.join("state.json~")).unwrap();
            write_all(&state, bytes);
            fs::remove_file(dir.join("state.json~")).unwrap();
            fs::remove_file(dir.join(".state.json.swp")).unwrap();
        }
        Save::MoveIn => {
            let outside = root.join("new-state.json");
            write_all(&outside, bytes);
            fs::rename(&outside, &state).unwrap();
        }
    }
}

#[test]
fn a_thousand_saves_at_one_khz_by_every_method_end_on_the_last_seq() {
    let (w, p) = Worktree::with_pipeline();
    replace(p.dir(), "state.json", foreign_state(1).as_bytes());
    let mut h = Headless::start(p.dir());
    h.wait_seq(1, ARRIVE_WITHIN);
    let started = Instant::now();
    let mut seq = 1;
    for how in [
        Save::TempRename,
        Save::TruncateWrite,
        Save::VimStyle,
        Save::MoveIn,
    ] {
        let phase = Instant::now();
        for _ in 0..250 {
            seq += 1;
            save(how, &w.root, p.dir(), foreign_state(seq).as_bytes());
            // ~1 kHz: the next save is due 1 ms after the previous one was due.
            let due = phase + Duration::from_millis(seq % 250 + 1);
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
        let last_save = Instant::now();
        let line = h.wait_seq(seq, ARRIVE_WITHIN);
        eprintln!(
            "{how:?}: 250 saves in {:?}, the last shown {:?} after it",
            last_save - phase,
            line.at.saturating_duration_since(last_save)
        );
        assert!(h.alive(), "watcher died during {how:?}");
    }
    eprintln!(
        "1000 saves in {:?}, {} headless lines",
        started.elapsed(),
        h.seen.len()
    );
    h.drain(Duration::from_millis(300));
    assert_eq!(
        h.seen.last().map(|l| l.seq),
        Some(seq),
        "{:?}",
        &h.texts()[h.seen.len().saturating_sub(5)..]
    );
    assert!(
        h.seen.windows(2).all(|w| w[0].seq <= w[1].seq),
        "seq went back"
    );
    assert!(h.alive());
}

#[test]
fn a_pipeline_deleted_renamed_away_and_recreated_resumes() {
    let w = Worktree::new();
    let p = w.pipeline();
    let rec = w.recorder();
    let note = |t: &str| rec.note(t.into()).unwrap().state.seq;
    note("one");
    let mut h = Headless::start(&w.root);
    h.wait_seq(1, ARRIVE_WITHIN);

    let resumed = |h: &mut Headless, seq: u64| {
        h.wait_seq(seq, ARRIVE_WITHIN);
    };

    fs::remove_dir_all(p.dir()).unwrap();
    h.wait_seq(0, ARRIVE_WITHIN);
    let seq = note("after delete");
    assert_eq!(seq, 1);
    resumed(&mut h, seq);
    let seq = note("two");
    resumed(&mut h, seq);

    fs::rename(p.dir(), w.root.join(".pipeline.old")).unwrap();
    h.wait_seq(0, ARRIVE_WITHIN);
    // Writes into the renamed folder are not this pipeline's.
    loopwatch::journal::append(
        &loopwatch::journal::Pipeline::at(w.root.join(".pipeline.old")),
        &Default::default(),
        vec![EventBody::Note {
            text: "elsewhere".into(),
        }],
    )
    .unwrap();
    let seq = note("recreated");
    assert_eq!(seq, 1);
    resumed(&mut h, seq);

    fs::remove_dir_all(p.dir()).unwrap();
    fs::rename(w.root.join(".pipeline.old"), p.dir()).unwrap();
    resumed(&mut h, 3);
    let seq = note("back");
    assert_eq!(seq, 4);
    resumed(&mut h, seq);
    assert!(h.alive());
}
