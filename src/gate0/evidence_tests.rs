//! Unit tests of the output summary, marker search and splice.

use super::*;

#[test]
fn flattens_squeezes_and_trims() {
    assert_eq!(summarize(b"  a\t\tb\r\n\nc  \n\n"), "a b c");
    assert_eq!(summarize(b"\x0ba  b\x0c"), "a b");
    assert_eq!(summarize("\u{3000}x\u{3000}".as_bytes()), "x");
    assert_eq!(summarize(b"a\0b"), "ab");
    assert_eq!(summarize(b""), "");
}

#[test]
fn squeezes_only_plain_spaces() {
    assert_eq!(summarize(b"a \x0b b"), "a \x0b b");
}

#[test]
fn cuts_at_140_characters_never_inside_one() {
    let exact = "é".repeat(140);
    assert_eq!(summarize(exact.as_bytes()), exact);
    let long = format!("{}ü tail", "a".repeat(139));
    assert_eq!(summarize(long.as_bytes()), format!("{}ü…", "a".repeat(139)));
    let trailing = format!("{}   \n\n   ", "b".repeat(140));
    assert_eq!(summarize(trailing.as_bytes()), "b".repeat(140));
    let spaced = format!("{} {}", "c".repeat(139), "d");
    assert_eq!(
        summarize(spaced.as_bytes()),
        format!("{} …", "c".repeat(139))
    );
}

#[test]
fn invalid_utf8_becomes_replacement_across_chunks() {
    let mut sink = OutputSink::new(b"zz");
    sink.feed(b"a\xe2\x82");
    sink.feed(b"\xacb\xff");
    sink.feed(b"\xe2");
    let r = sink.finish();
    assert_eq!(r.summary, "a€b\u{fffd}\u{fffd}");
    assert!(!r.marker_found);
}

#[test]
fn marker_found_across_chunk_boundaries_and_nuls() {
    let mut sink = OutputSink::new(b"MARK");
    sink.feed(b"xxMA");
    sink.feed(b"\0R");
    sink.feed(b"Kyy");
    assert!(sink.finish().marker_found);
}

#[test]
fn head_is_capped_with_a_flag() {
    let mut sink = OutputSink::new(b"end");
    let block = vec![b'x'; 600 * 1024];
    sink.feed(&block);
    sink.feed(&block);
    sink.feed(b"end");
    let r = sink.finish();
    assert!(r.marker_found);
    assert_eq!(r.head.len(), HEAD_CAP);
    assert!(r.head_truncated);
    assert_eq!(r.summary, format!("{}…", "x".repeat(140)));
}

#[test]
fn evidence_texts() {
    let s = || "out".to_string();
    assert_eq!(
        CheckOutcome::Met { summary: s() }.evidence("9"),
        "MET exit=0 marker-found :: out"
    );
    assert_eq!(
        CheckOutcome::Nonzero {
            code: 137,
            summary: String::new()
        }
        .evidence("9"),
        "NOT-MET exit=137 (nonzero) :: "
    );
    assert_eq!(
        CheckOutcome::MarkerAbsent { summary: s() }.evidence("9"),
        "NOT-MET exit=0 marker-absent :: out"
    );
    assert_eq!(
        CheckOutcome::TimedOut.evidence("1.5m"),
        "NOT-MET timeout=1.5ms"
    );
}

#[test]
fn splice_keeps_everything_else() {
    let out = splice(b"abcdef", &[(1..2, b"XY".to_vec()), (4..4, b"+".to_vec())]);
    assert_eq!(out, b"aXYcd+ef");
}
