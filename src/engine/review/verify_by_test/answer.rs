//! The verify-by-test agent's answer: a JSON array
//! `[{"finding","file","testRef"}]`, read the lenient way models write it
//! (a code fence around it, prose before or after it, CRLF), each thing
//! removed named, then checked strictly: every entry an object with the
//! three strings, a finding asked for, at most one entry per finding.
//! Whatever is wrong with one entry is that finding's problem only.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::parse::kind_of;

/// One repro test the agent says it wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repro {
    /// The test file, relative to the worktree.
    pub file: String,
    /// The test reference.
    pub test_ref: String,
}

/// The answer as read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answered {
    /// Per finding asked for: its repro test, or why the entry is unusable.
    pub by_finding: BTreeMap<String, Result<Repro, String>>,
    /// What was removed to read the array.
    pub normalized: Vec<String>,
    /// Entries not about a finding asked for, or not readable at all.
    pub ignored: Vec<String>,
}

/// Reads `text` for the findings `asked`; `Err` when no array can be read.
pub fn read(text: &[u8], asked: &[String]) -> Result<Answered, String> {
    let text = std::str::from_utf8(text)
        .map_err(|e| format!("the answer is not UTF-8 (byte {})", e.valid_up_to()))?;
    let mut out = Answered::default();
    let mut work = text.to_string();
    if work.contains("\r\n") {
        work = work.replace("\r\n", "\n");
        out.normalized.push("CRLF line endings read as LF".into());
    }
    let (Some(open), Some(close)) = (work.find('['), work.rfind(']')) else {
        return Err(format!(
            "no JSON array in the answer ({} bytes); expected [{{\"finding\",\"file\",\"testRef\"}}]",
            text.len()
        ));
    };
    if close < open {
        return Err("no JSON array in the answer (a `]` before the first `[`)".into());
    }
    let before = &work[..open];
    let after = &work[close + 1..];
    let fenced = before.lines().any(|l| l.trim_start().starts_with("```"));
    if fenced {
        out.normalized.push("code fence removed".into());
    }
    let prose = |s: &str| {
        s.lines()
            .any(|l| !l.trim().is_empty() && !l.trim_start().starts_with("```"))
    };
    if prose(before) {
        out.normalized.push("prose before the array removed".into());
    }
    if prose(after) {
        out.normalized.push("prose after the array removed".into());
    }
    let json = &work[open..=close];
    let line0 = before.matches('\n').count();
    let items: Vec<Value> = serde_json::from_str(json).map_err(|e| {
        format!(
            "the answer's array is not valid JSON at line {}, column {}: {}",
            e.line() + line0,
            e.column(),
            strip_position(&e.to_string())
        )
    })?;
    for (n, item) in items.iter().enumerate() {
        let n = n + 1;
        let Some(obj) = item.as_object() else {
            out.ignored
                .push(format!("entry {n} is {}, not an object", kind_of(item)));
            continue;
        };
        let field = |k: &str| obj.get(k).and_then(Value::as_str).map(str::trim);
        let Some(finding) = field("finding").filter(|f| !f.is_empty()) else {
            out.ignored
                .push(format!("entry {n} has no \"finding\" string"));
            continue;
        };
        if !asked.iter().any(|a| a == finding) {
            out.ignored.push(format!(
                "entry {n} is about {finding}, which was not asked for"
            ));
            continue;
        }
        let entry = match (field("file"), field("testRef")) {
            (Some(f), Some(t)) if !f.is_empty() && !t.is_empty() => Ok(Repro {
                file: f.to_string(),
                test_ref: t.to_string(),
            }),
            _ => Err(format!(
                "the agent's entry {n} lacks a \"file\" or a \"testRef\" string"
            )),
        };
        let entry = if out.by_finding.contains_key(finding) {
            Err(format!(
                "the agent answered more than one entry for {finding}"
            ))
        } else {
            entry
        };
        out.by_finding.insert(finding.to_string(), entry);
    }
    Ok(out)
}

fn strip_position(msg: &str) -> String {
    msg.rfind(" at line ")
        .map_or(msg.to_string(), |i| msg[..i].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked() -> Vec<String> {
        vec!["F1".into(), "F2".into(), "F3".into()]
    }

    #[test]
    fn a_fenced_answer_with_prose_is_read_and_what_was_removed_named() {
        let text = "Here are the tests:\r\n```json\r\n[{\"finding\":\"F1\",\"file\":\"tests/a.rs\",\"testRef\":\"tests/a.rs::f1\"}]\r\n```\r\nDone.\r\n";
        let a = read(text.as_bytes(), &asked()).unwrap();
        assert_eq!(
            a.by_finding["F1"],
            Ok(Repro {
                file: "tests/a.rs".into(),
                test_ref: "tests/a.rs::f1".into()
            })
        );
        assert_eq!(
            a.normalized,
            [
                "CRLF line endings read as LF",
                "code fence removed",
                "prose before the array removed",
                "prose after the array removed"
            ]
        );
        let bare = read(br#"[{"finding":"F2","file":"a","testRef":"b"}]"#, &asked()).unwrap();
        assert!(bare.normalized.is_empty());
    }

    #[test]
    fn bad_entries_are_their_findings_problem_only() {
        let text = r#"[{"finding":"F1","file":"a.rs"},
          {"finding":"F2","file":"b.rs","testRef":"x"},{"finding":"F2","file":"c.rs","testRef":"y"},
          {"finding":"F9","file":"d.rs","testRef":"z"}, 3, {"file":"e"},
          {"finding":"F3","file":"f.rs","testRef":"f3"}]"#;
        let a = read(text.as_bytes(), &asked()).unwrap();
        assert!(a.by_finding["F1"].as_ref().unwrap_err().contains("lacks"));
        assert!(
            a.by_finding["F2"]
                .as_ref()
                .unwrap_err()
                .contains("more than one")
        );
        assert!(a.by_finding["F3"].is_ok());
        assert_eq!(a.ignored.len(), 3, "{:?}", a.ignored);
    }

    #[test]
    fn no_array_or_broken_json_is_an_error_naming_the_place() {
        assert!(
            read(b"I wrote the tests.", &asked())
                .unwrap_err()
                .starts_with("no JSON array")
        );
        let e = read(b"ok\n[{\"finding\": }]", &asked()).unwrap_err();
        assert!(e.contains("line 2"), "{e}");
        assert!(read(b"\xff[]", &asked()).unwrap_err().contains("UTF-8"));
    }
}
