//! Hostile input: journal lines that are not JSON, not UTF-8, too deep or
//! too long, read by the real binary with its memory watched; the
//! sanitiser's promises under arbitrary text; and the fuzz corpus replayed
//! through the same target functions the fuzzers run.

mod support;

use support::hardening as hardening_support;

#[path = "../fuzz/src/lib.rs"]
mod fuzz_targets;

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Duration;

use hardening_support::{Worktree, note_line};
use loopwatch::sanitize::{sanitize_bytes, sanitize_line, sanitize_lines, width};
use proptest::prelude::*;
use support::assert_has;
use support::headless::Headless;

const NESTING: usize = 200;
const BIG_STRING: usize = 100 * 1024 * 1024;
const FINDINGS: usize = 1_000_000;

/// Writes the hostile journal: one valid line, every kind of bad line,
/// then a valid line that must be folded. Returns the number of lines.
fn hostile_journal(path: &Path) -> u64 {
    let mut f = BufWriter::new(File::create(path).unwrap());
    f.write_all(note_line(1).as_bytes()).unwrap();
    // 2: NaN is not JSON.
    f.write_all(
        b"{\"v\":1,\"seq\":2,\"at\":\"2026-11-02T10:00:00Z\",\"type\":\"note\",\"text\":NaN}\n",
    )
    .unwrap();
    // 3: bytes that are not UTF-8 inside a string.
    f.write_all(b"{\"v\":1,\"seq\":2,\"at\":\"2026-11-02T10:00:00Z\",\"type\":\"note\",\"text\":\"\xff\xfe\xff\"}\n").unwrap();
    // 4: a byte-order mark before an otherwise valid line.
    f.write_all(b"\xef\xbb\xbf").unwrap();
    f.write_all(note_line(2).as_bytes()).unwrap();
    // 5: 200 nested arrays.
    f.write_all(b"{\"v\":1,\"seq\":2,\"at\":\"2026-11-02T10:00:00Z\",\"type\":\"note\",\"text\":")
        .unwrap();
    f.write_all(&[b'['; NESTING]).unwrap();
    f.write_all(&[b']'; NESTING]).unwrap();
    f.write_all(b"}\n").unwrap();
    // 6: a 100 MB string.
    f.write_all(
        b"{\"v\":1,\"seq\":2,\"at\":\"2026-11-02T10:00:00Z\",\"type\":\"note\",\"text\":\"",
    )
    .unwrap();
    let chunk = vec![b'x'; 1024 * 1024];
    for _ in 0..BIG_STRING / chunk.len() {
        f.write_all(&chunk).unwrap();
    }
    f.write_all(b"\"}\n").unwrap();
    // 7: one event with a million findings.
    f.write_all(b"{\"v\":1,\"seq\":2,\"at\":\"2026-11-02T10:00:00Z\",\"type\":\"findings.verified\",\"iteration\":1,\"findings\":[")
        .unwrap();
    for i in 0..FINDINGS {
        if i > 0 {
            f.write_all(b",").unwrap();
        }
        write!(
            f,
            "{{\"id\":\"F{i}\",\"verdict\":\"FALSE\",\"evidence\":\"a.rs:1\"}}"
        )
        .unwrap();
    }
    f.write_all(b"]}\n").unwrap();
    // 8: recovery.
    f.write_all(note_line(2).as_bytes()).unwrap();
    f.flush().unwrap();
    8
}

#[test]
fn hostile_journal_lines_are_reported_with_position_and_reading_recovers() {
    let (w, p) = Worktree::with_pipeline();
    hostile_journal(&p.journal_path());

    let mut h = Headless::start(p.dir());
    h.wait_seq(2, Duration::from_secs(20));
    let peak = h.peak_rss_kib();
    eprintln!(
        "watch --headless over a {} MB hostile journal: peak RSS {} KiB",
        fs::metadata(p.journal_path()).unwrap().len() / 1_000_000,
        peak
    );
    assert!(h.alive());
    // The reader holds at most one line of 16 MiB (in a buffer that may
    // double once while growing: 32 MiB), a 256 KiB read buffer, and the
    // program itself (about 10 MiB): 64 MiB leaves room, and a reader that
    // held the 100 MB line would need well over 100 MiB.
    assert!(peak < 64 * 1024, "peak RSS {peak} KiB");
    drop(h);

    let out = w.output(&["status"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let problems: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("problem:"))
        .collect();
    assert_eq!(
        problems,
        vec![
            "problem: events.jsonl:2:65: expected value",
            "problem: events.jsonl:3:66: invalid unicode code point",
            "problem: events.jsonl:4:1: expected value",
            "problem: events.jsonl:5:191: recursion limit exceeded",
            "problem: events.jsonl:6:16777217: line longer than 16 MiB: skipped",
            "problem: events.jsonl:7:16777217: line longer than 16 MiB: skipped",
        ],
        "{stdout}"
    );
    assert_has(&stdout, "last event 2026-11-02T10:00:00Z");
    let json = w.output(&["status", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["seq"], 2, "the line after the damage is folded");
}

#[test]
fn a_line_under_the_cap_made_of_tiny_values_stays_bounded() {
    let (w, p) = Worktree::with_pipeline();
    let mut f = BufWriter::new(File::create(p.journal_path()).unwrap());
    f.write_all(note_line(1).as_bytes()).unwrap();
    // Just under 16 MiB of `0,`: eight million JSON values in one line.
    f.write_all(b"{\"v\":1,\"seq\":2,\"at\":\"2026-11-02T10:00:00Z\",\"type\":\"note\",\"text\":[")
        .unwrap();
    let values = (16 * 1024 * 1024 - 200) / 2;
    for _ in 0..values {
        f.write_all(b"0,").unwrap();
    }
    f.write_all(b"0]}\n").unwrap();
    f.write_all(note_line(2).as_bytes()).unwrap();
    f.flush().unwrap();
    drop(f);
    let mut h = Headless::start(p.dir());
    h.wait_seq(2, Duration::from_secs(20));
    let peak = h.peak_rss_kib();
    eprintln!("watch --headless over a 16 MiB line of {values} values: peak RSS {peak} KiB");
    // Same budget as above: the line (32 MiB at most while read) and the
    // program; the values are refused before any tree is built.
    assert!(peak < 64 * 1024, "peak RSS {peak} KiB");
    drop(h);
    let out = w.output(&["status"]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let problems: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("problem:"))
        .collect();
    // The scan counts 1 + `{` + four header commas + `[` = 7 values before
    // the zeros; the k-th comma after `[` (column 65) is at 65 + 2k, and the
    // count passes the limit at k = MAX + 1 - 7.
    let column = 65 + 2 * (loopwatch::model::event::MAX_VALUES_PER_LINE + 1 - 7);
    assert_eq!(
        problems,
        vec![format!(
            "problem: events.jsonl:2:{column}: more than 262144 JSON values in one line"
        )]
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn sanitised_text_holds_no_control_and_fits_its_pane(
        text in prop_oneof![
            any::<String>(),
            proptest::collection::vec(prop_oneof![
                Just('\u{1b}'), Just('\u{9b}'), Just('\u{85}'), Just('\u{7f}'), Just('\r'), Just('\n'), Just('\t'),
                Just('\u{202e}'), Just('\u{2066}'), Just('\u{200b}'), Just('\u{feff}'), Just('\u{301}'), Just('\u{fe0f}'),
                Just('界'), Just('😀'), Just('a'), Just('['), Just('m'), any::<char>(),
            ], 0..300).prop_map(|v| v.into_iter().collect()),
        ],
        max in 0usize..200,
    ) {
        let one = sanitize_line(&text, max);
        assert_clean(&one, max)?;
        for line in sanitize_lines(&text, max) {
            assert_clean(&line, max)?;
        }
    }

    #[test]
    fn sanitised_bytes_hold_no_control_and_fit_their_pane(bytes in proptest::collection::vec(any::<u8>(), 0..400), max in 0usize..120) {
        assert_clean(&sanitize_bytes(&bytes, max), max)?;
    }
}

fn assert_clean(out: &str, max: usize) -> Result<(), TestCaseError> {
    for c in out.chars() {
        prop_assert!(c >= ' ', "control {:?} in {:?}", c, out);
        prop_assert!(
            c != '\u{7f}' && !('\u{80}'..='\u{9f}').contains(&c),
            "DEL or C1 {:?} in {:?}",
            c,
            out
        );
        prop_assert!(
            !matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200b}'..='\u{200f}' | '\u{feff}' | '\u{2028}' | '\u{2029}'),
            "invisible {:?} in {:?}",
            c,
            out
        );
    }
    prop_assert!(
        width(out) <= max,
        "width {} > {} for {:?}",
        width(out),
        max,
        out
    );
    Ok(())
}

#[test]
fn the_fuzz_corpus_replays_without_a_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    let mut seen = 0;
    for target in fuzz_targets::TARGETS {
        let dir = root.join(target);
        let mut files: Vec<_> = fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .flatten()
            .map(|e| e.path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{target} has no corpus");
        for f in files {
            let data = fs::read(&f).unwrap();
            assert!(fuzz_targets::run(target, &data), "unknown target {target}");
            seen += 1;
        }
    }
    eprintln!("{seen} corpus inputs replayed");
}
