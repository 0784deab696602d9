//! Properties of `gate0` over random contracts (criteria, attributes at
//! random indentation, fences, headings, ABANDON lines, junk, LF or CRLF,
//! with or without a final newline or a byte order mark):
//! `run` changes no byte outside the EVIDENCE lines of the criteria it ran
//! (and nothing at all when the verdict is ERROR), `status` changes no byte
//! and executes nothing.

use std::fs;
use std::path::Path;

use loopwatch::gate0::{self, Timeout};
use loopwatch::model::VerdictKind;
use proptest::prelude::*;

/// Replaced by the case's scratch folder, so checks only touch it.
const DIR: &str = "@DIR@";

fn indent() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => Just("   ".to_string()),
        1 => Just("\t".to_string()),
        1 => Just(" \t ".to_string()),
    ]
}

fn check() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("echo OK".to_string()),
        Just("false".to_string()),
        Just("echo OK; exit 3".to_string()),
        Just(format!("touch {DIR}/ran; echo OK")),
        Just("printf 'a\\tb\\r\\nOK  '".to_string()),
    ]
}

/// A criterion with a complete oracle: CHECK, EXPECT and EVIDENCE lines.
fn runnable_block() -> impl Strategy<Value = Vec<String>> {
    (
        1u8..60,
        "[a-z é—]{0,12}",
        indent(),
        check(),
        prop_oneof![Just("OK"), Just("nope")],
        indent(),
    )
        .prop_map(|(n, t, i, c, e, j)| {
            vec![
                format!("{n}. {t}"),
                format!("{i}CHECK: {c}"),
                format!("{i}EXPECT: {e}"),
                format!("{j}EVIDENCE: pending"),
            ]
        })
}

/// One item of a contract: mostly well-formed criteria, sometimes noise.
fn item() -> impl Strategy<Value = Vec<String>> {
    prop_oneof![
        6 => runnable_block(),
        2 => (60u8..90, "[a-z ]{0,10}").prop_map(|(n, t)| vec![format!("{n}. {t}")]),
        1 => prop::collection::vec(line(), 0..3).prop_map(|mut v| {
            v.insert(0, "```".to_string());
            v.push("```".to_string());
            v
        }),
        2 => line().prop_map(|l| vec![l]),
    ]
}

fn attribute_line() -> impl Strategy<Value = String> {
    let check = prop_oneof![check(), Just(String::new())];
    let expect = prop_oneof![
        Just("OK".to_string()),
        Just("nope".to_string()),
        Just(String::new())
    ];
    let evidence = prop_oneof![
        Just("pending".to_string()),
        Just(String::new()),
        Just("MET exit=0 marker-found :: OK".to_string()),
    ];
    let indent = prop_oneof![indent(), Just(String::new())];
    (
        indent,
        prop_oneof![
            check.prop_map(|v| format!("CHECK: {v}")),
            expect.prop_map(|v| format!("EXPECT: {v}")),
            evidence.prop_map(|v| format!("EVIDENCE: {v}")),
        ],
    )
        .prop_map(|(i, a)| format!("{i}{a}"))
}

fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (1u8..6, "[a-z é—]{0,12}").prop_map(|(n, t)| format!("{n}. {t}")),
        8 => attribute_line(),
        1 => Just("```".to_string()),
        1 => Just("## ACCEPTANCE CRITERIA".to_string()),
        1 => Just("## FILE SCOPE".to_string()),
        1 => (0u8..7, "[a-z ]{0,8}").prop_map(|(n, t)| format!("ABANDON: {n} {t}")),
        2 => "[ -~é\t\r]{0,20}",
    ]
}

fn contract() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec(item(), 1..7),
        any::<bool>(),
        any::<bool>(),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(lines, crlf, final_newline, bom)| {
            let eol = if crlf { "\r\n" } else { "\n" };
            let mut text = format!("# CONTRACT — prop{eol}## ACCEPTANCE CRITERIA{eol}");
            text.push_str(&lines.concat().join(eol));
            if final_newline {
                text.push_str(eol);
            }
            let mut bytes = if bom {
                b"\xef\xbb\xbf".to_vec()
            } else {
                Vec::new()
            };
            bytes.extend_from_slice(text.as_bytes());
            bytes
        })
}

/// Writes the contract with `@DIR@` resolved; returns its path and bytes.
fn place(dir: &Path, template: &[u8]) -> (std::path::PathBuf, Vec<u8>) {
    let text = String::from_utf8_lossy(template).replace(DIR, &dir.display().to_string());
    let path = dir.join("contract.md");
    fs::write(&path, text.as_bytes()).unwrap();
    (path, text.into_bytes())
}

/// Lines split after each `\n` (the last one may lack it).
fn split_lines(bytes: &[u8]) -> Vec<&[u8]> {
    bytes.split_inclusive(|&b| b == b'\n').collect()
}

/// True when `after` is `before` with its text after the indentation
/// replaced by a fresh `EVIDENCE: MET …` / `EVIDENCE: NOT-MET …`, the
/// indentation and the line ending kept.
fn is_evidence_rewrite(before: &[u8], after: &[u8]) -> bool {
    let body_end = |l: &[u8]| {
        l.len()
            - l.iter()
                .rev()
                .take_while(|&&b| b == b'\n' || b == b'\r')
                .count()
    };
    let (b_body, b_end) = before.split_at(body_end(before));
    let (a_body, a_end) = after.split_at(body_end(after));
    let Some(at) = b_body.windows(9).position(|w| w == b"EVIDENCE:") else {
        return false;
    };
    let indent = &b_body[..at];
    !indent.is_empty()
        && indent.iter().all(|b| b" \t".contains(b))
        && b_end == a_end
        && (a_body.starts_with(&[indent, b"EVIDENCE: MET "].concat())
            || a_body.starts_with(&[indent, b"EVIDENCE: NOT-MET "].concat()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn run_changes_only_evidence_lines(template in contract()) {
        let dir = tempfile::tempdir().unwrap();
        let (path, before) = place(dir.path(), &template);
        let at = gate0::exec::Checks::new(dir.path(), &loopwatch::process::Stop::new());
        let outcome = gate0::run(&path, &Timeout::parse("20").unwrap(), &at);
        let after = fs::read(&path).unwrap();
        if outcome.verdict.kind == VerdictKind::Error {
            prop_assert_eq!(&after, &before);
        }
        let (b, a) = (split_lines(&before), split_lines(&after));
        prop_assert_eq!(b.len(), a.len());
        for (x, y) in b.iter().zip(&a) {
            prop_assert!(
                x == y || is_evidence_rewrite(x, y),
                "changed line {:?} -> {:?}",
                String::from_utf8_lossy(x),
                String::from_utf8_lossy(y)
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn status_changes_nothing_and_runs_nothing(template in contract()) {
        let dir = tempfile::tempdir().unwrap();
        let (path, before) = place(dir.path(), &template);
        let outcome = gate0::status(&path, &Timeout::default());
        prop_assert_eq!(fs::read(&path).unwrap(), before);
        prop_assert!(!dir.path().join("ran").exists());
        prop_assert!(outcome.exit_code == 0 || outcome.exit_code == 2 || outcome.exit_code == 3);
    }
}
