//! Unit tests of the contract parse.

use super::*;

fn errs(src: &str) -> Vec<String> {
    parse(src.as_bytes())
        .errors
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn reads_criteria_attributes_and_evidence_span() {
    let src = "# C\n## ACCEPTANCE CRITERIA\n1. one\n   CHECK: echo hi \n   EXPECT: hi\n  EVIDENCE: pending\r\n2. two\n## FILE SCOPE\n- src/a.rs\n";
    let c = parse(src.as_bytes());
    assert!(c.errors.is_empty());
    assert_eq!(c.criteria.len(), 2);
    let one = &c.criteria[0];
    assert_eq!((one.id.as_str(), one.line), ("1", 3));
    assert_eq!(one.text, b"one");
    assert_eq!(one.check, b"echo hi");
    assert_eq!(one.expect, b"hi");
    let ev = one.evidence.as_ref().unwrap();
    assert_eq!(ev.line, 6);
    assert_eq!(&src.as_bytes()[ev.replace.clone()], b"EVIDENCE: pending");
    assert_eq!(ev.value, b"pending");
    assert!(!c.criteria[1].is_runnable());
    assert_eq!(c.file_scope.len(), 1);
    assert_eq!(&src.as_bytes()[c.file_scope[0].text.clone()], b"- src/a.rs");
}

#[test]
fn fences_hide_lines_and_headings_switch_the_block() {
    let src = "## ACCEPTANCE CRITERIA\n```\n1. hidden\n```\n2. seen\n## OTHER\n3. outside\n## ACCEPTANCE CRITERIA (cont.)\n4. again\n";
    let ids: Vec<_> = parse(src.as_bytes())
        .criteria
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(ids, ["2", "4"]);
}

#[test]
fn crlf_keeps_carriage_return_in_text() {
    let c = parse(b"## ACCEPTANCE CRITERIA\r\n1. one\r\n   EVIDENCE: x\r\n");
    assert_eq!(c.criteria[0].text, b"one\r");
    assert_eq!(c.criteria[0].recorded_evidence(), b"x");
}

#[test]
fn duplicate_orphans_what_follows() {
    let src = "## ACCEPTANCE CRITERIA\n1. a\n1. b\n   CHECK: x\n";
    assert_eq!(
        errs(src),
        [
            "duplicate criterion id: 1",
            "CHECK at line 4 belongs to no criterion"
        ]
    );
}

#[test]
fn validation_messages_in_reference_order() {
    let src = "## ACCEPTANCE CRITERIA\nEXPECT: x\n1. a\n   CHECK: x\n2. b\n   EXPECT: y\n3. c\n   CHECK: z\n   EXPECT: z\nABANDON: 9 gone\nABANDON: 1\n";
    assert_eq!(
        errs(src),
        [
            "unindented EXPECT: at line 2",
            "criterion 1: CHECK without EXPECT (partial oracle)",
            "criterion 2: EXPECT without CHECK (partial oracle)",
            "criterion 3: runnable but has no EVIDENCE: line",
            "ABANDON names unknown criterion: '9'",
            "ABANDON 1: blank reason (a handoff needs one)",
        ]
    );
}

#[test]
fn last_attribute_wins_and_empty_check_is_no_check() {
    let c = parse(b"## ACCEPTANCE CRITERIA\n1. a\n  CHECK: x\n  CHECK:\n");
    assert!(c.errors.is_empty());
    assert!(!c.criteria[0].is_runnable());
}

#[test]
fn nul_bytes_are_invisible_but_offsets_stay_raw() {
    let src = b"## ACCEPTANCE\0 CRITERIA\n1. a\0b\n \0 EVIDENCE: p\n";
    let c = parse(src);
    assert_eq!(c.criteria[0].text, b"ab");
    let ev = c.criteria[0].evidence.as_ref().unwrap();
    assert_eq!(&src[ev.replace.clone()], b"EVIDENCE: p");
}

#[test]
fn lines_like_read_loop() {
    let spans: Vec<_> = lines(b"a\r\n\nb").map(|l| (l.number, l.text)).collect();
    assert_eq!(spans, [(1, 0..1), (2, 3..3), (3, 4..5)]);
    assert_eq!(lines(b"a\n").count(), 1);
}
