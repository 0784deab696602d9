//! Unit tests of findings matching.

use super::*;
use crate::parse::parse_verdicts;

const FINDINGS: &str = r#"[
  {"id": "R1", "severity": "blocking", "path": "a.rs", "lines": 12, "claim": "overflows", "reviewer": "x"},
  {"id": "R2", "severity": "minor", "path": "b.rs", "lines": "3-9", "claim": "slow"}
]"#;

fn findings() -> Vec<ReviewFinding> {
    parse_findings("f.json", FINDINGS.as_bytes()).unwrap()
}

fn verdicts(json: &str) -> Vec<VerdictEntry> {
    parse_verdicts("v.json", json.as_bytes()).unwrap()
}

fn summary(f: &[Finding]) -> Vec<(String, FindingVerdict, String)> {
    f.iter()
        .map(|f| (f.id.clone(), f.verdict, f.note.clone()))
        .collect()
}

#[test]
fn findings_keep_their_fields() {
    let f = findings();
    assert_eq!(f[0].lines, "12");
    assert_eq!(f[1].lines, "3-9");
    assert_eq!(f[0].extra.get("reviewer"), Some(&Value::String("x".into())));
    assert!(f[1].extra.is_empty());
}

#[test]
fn ids_come_from_findings_by_position() {
    let v = verdicts(
        r#"[{"id":"R2","verdict":"VERIFIED","evidence":"a.rs:12"},{"id":"R1","verdict":"FALSE","evidence":"no such code"}]"#,
    );
    let m = match_findings(&findings(), &v);
    assert_eq!(
        summary(&m.findings),
        vec![
            ("R1".into(), FindingVerdict::Verified, String::new()),
            ("R2".into(), FindingVerdict::False, String::new()),
        ]
    );
    assert_eq!(m.findings[0].claim, "overflows");
    assert_eq!(m.findings[0].evidence, "a.rs:12");
    assert_eq!(
        m.echo_mismatches,
        vec![(0, "R1".into(), "R2".into()), (1, "R2".into(), "R1".into())]
    );
    assert!(m.extra_verdicts.is_empty());
}

#[test]
fn fewer_verdicts_than_findings() {
    let v = verdicts(r#"[{"verdict":"VERIFIED","evidence":"a.rs:12"}]"#);
    let got = verify_findings(&findings(), &v);
    assert_eq!(
        summary(&got),
        vec![
            ("R1".into(), FindingVerdict::Verified, String::new()),
            (
                "R2".into(),
                FindingVerdict::Unverifiable,
                "PIPELINE-FAULT: no verdict returned".into()
            ),
        ]
    );
}

#[test]
fn more_verdicts_than_findings() {
    let v = verdicts(
        r#"[{"verdict":"VERIFIED","evidence":"e"},{"verdict":"FALSE","evidence":"e"},{"id":"R9","verdict":"VERIFIED","evidence":"z"}]"#,
    );
    let m = match_findings(&findings(), &v);
    assert_eq!(m.findings.len(), 2);
    assert_eq!(m.extra_verdicts.len(), 1);
    assert_eq!(m.extra_verdicts[0].echo_id.as_deref(), Some("R9"));
    assert_eq!(m.extra_verdicts[0].position, 2);
}

#[test]
fn echo_ids_without_findings() {
    let v = verdicts(
        r#"[{"id":"A","verdict":"VERIFIED","evidence":"e"},{"verdict":"FALSE","evidence":"e"},{"id":"A","verdict":"FALSE","evidence":"e"}]"#,
    );
    assert_eq!(
        summary(&findings_from_verdicts(&v)),
        vec![
            ("A".into(), FindingVerdict::Verified, String::new()),
            (
                "#2".into(),
                FindingVerdict::Unverifiable,
                "PIPELINE-FAULT: no id echoed".into()
            ),
            (
                "A".into(),
                FindingVerdict::Unverifiable,
                "PIPELINE-FAULT: id A echoed more than once".into()
            ),
        ]
    );
}

#[test]
fn malformed_findings_are_errors_with_position() {
    let e =
        parse_findings("f.json", b"[\n  {\"id\": \"R1\"},\n  {\"claim\": \"x\"}\n]").unwrap_err();
    assert_eq!(
        e.to_string(),
        "f.json:3:3: finding 2: no id; expected a non-empty string"
    );
    let e = parse_findings("f.json", b"[{\"id\": \"R1\", \"path\": 3}]").unwrap_err();
    assert_eq!(
        e.to_string(),
        "f.json:1:2: finding 1: path is a number; expected a string"
    );
    let e = parse_findings("f.json", b"[\"R1\"]").unwrap_err();
    assert_eq!(
        e.to_string(),
        "f.json:1:2: finding 1: found a string; expected an object"
    );
}
