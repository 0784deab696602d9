//! The finding verifier's verdicts and the verdict-gate rules.
//!
//! Input: a JSON array of `{id, verdict, evidence, note}`, bare or after a
//! `FINDING_VERIFIER_RESULTS` line (one line of prose may sit between the
//! marker and the array). Invalid JSON is an error with line and column.
//! Each entry then passes the verdict gate: the verdict is VERIFIED, FALSE
//! or UNVERIFIABLE; VERIFIED and FALSE carry non-empty evidence;
//! UNVERIFIABLE carries a non-empty note. An entry that fails is never
//! dropped: it becomes UNVERIFIABLE with a note starting `PIPELINE-FAULT: `
//! that says why (the verifier's own note, if any, follows). Fields other
//! than these four are ignored.

use serde_json::{Map, Value};

use super::json::{JsonInputError, kind_of, read_array};
use crate::model::FindingVerdict;

/// The prefix of a note written by the pipeline rather than the verifier.
pub const FAULT_PREFIX: &str = "PIPELINE-FAULT: ";

/// One verdict of the finding verifier, after the verdict gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerdictEntry {
    /// 0-based position in the array (the matching key).
    pub position: usize,
    /// 1-based line where the entry starts in the input.
    pub line: usize,
    /// 1-based byte column where the entry starts.
    pub column: usize,
    /// The id the model echoed (never trusted when the finding is known).
    pub echo_id: Option<String>,
    /// The verdict, UNVERIFIABLE when the entry failed the gate.
    pub verdict: FindingVerdict,
    /// Decisive lines, as the verifier quoted them.
    pub evidence: String,
    /// The verifier's note, or a `PIPELINE-FAULT: ` note.
    pub note: String,
}

impl VerdictEntry {
    /// True when the note is a pipeline fault (from the gate or the verifier lane).
    pub fn is_fault(&self) -> bool {
        self.note.starts_with(FAULT_PREFIX.trim_end())
    }

    /// Turns this entry into a pipeline fault saying `why`, keeping the
    /// verifier's note after it.
    pub fn fault(&mut self, why: &str) {
        let note = if self.note.trim().is_empty() {
            format!("{FAULT_PREFIX}{why}")
        } else {
            format!("{FAULT_PREFIX}{why} (verifier note: {})", self.note.trim())
        };
        self.verdict = FindingVerdict::Unverifiable;
        self.note = note;
    }
}

/// Reads the finding verifier's output named `input` and applies the
/// verdict gate to every entry.
pub fn parse_verdicts(input: &str, text: &[u8]) -> Result<Vec<VerdictEntry>, JsonInputError> {
    let located = read_array(input, text, true, "{id, verdict, evidence, note}")?;
    Ok(located
        .items
        .iter()
        .enumerate()
        .map(|(position, item)| {
            let (line, column) = located.positions.get(position).copied().unwrap_or((0, 0));
            gate(position, line, column, item)
        })
        .collect())
}

/// Applies the verdict gate to one array element.
fn gate(position: usize, line: usize, column: usize, item: &Value) -> VerdictEntry {
    let mut entry = VerdictEntry {
        position,
        line,
        column,
        echo_id: None,
        verdict: FindingVerdict::Unverifiable,
        evidence: String::new(),
        note: String::new(),
    };
    let Value::Object(obj) = item else {
        entry.fault(&format!("entry is {}, expected an object", kind_of(item)));
        return entry;
    };
    // Kept even when the entry fails: the fault note carries the verifier's own.
    entry.echo_id = echoed_id(obj);
    entry.evidence = text_field(obj, "evidence").unwrap_or_default();
    entry.note = text_field(obj, "note").unwrap_or_default();
    match check(obj) {
        Ok(c) => entry.verdict = c.verdict,
        Err(why) => entry.fault(&why),
    }
    entry
}

/// One verdict that passed the verdict gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// The verdict.
    pub verdict: FindingVerdict,
    /// Decisive lines (non-empty for VERIFIED and FALSE).
    pub evidence: String,
    /// The note (non-empty for UNVERIFIABLE).
    pub note: String,
    /// The id the model echoed, if any (never trusted).
    pub echo_id: Option<String>,
}

/// The verdict-gate rules on one verdict object, the same for `record
/// findings` and the engine's lanes: the verdict is VERIFIED, FALSE or
/// UNVERIFIABLE; evidence and note are strings when present; VERIFIED and
/// FALSE carry evidence, UNVERIFIABLE a note. The error is the reason.
pub fn check(obj: &Map<String, Value>) -> Result<Checked, String> {
    let verdict = match obj.get("verdict") {
        Some(Value::String(s)) => match s.as_str() {
            "VERIFIED" => FindingVerdict::Verified,
            "FALSE" => FindingVerdict::False,
            "UNVERIFIABLE" => FindingVerdict::Unverifiable,
            other => {
                let shown: String = other.chars().take(40).collect();
                let cut = if shown.len() < other.len() { "…" } else { "" };
                return Err(format!(
                    "verdict \"{shown}{cut}\" is not VERIFIED, FALSE or UNVERIFIABLE"
                ));
            }
        },
        None | Some(Value::Null) => {
            return Err("no verdict; expected VERIFIED, FALSE or UNVERIFIABLE".to_owned());
        }
        Some(v) => {
            return Err(format!(
                "verdict is {}, expected VERIFIED, FALSE or UNVERIFIABLE",
                kind_of(v)
            ));
        }
    };
    let evidence = text_field(obj, "evidence")?;
    let note = text_field(obj, "note")?;
    match verdict {
        FindingVerdict::Verified | FindingVerdict::False if evidence.trim().is_empty() => {
            return Err(format!("{} without evidence", verdict.as_str()));
        }
        FindingVerdict::Unverifiable if note.trim().is_empty() => {
            return Err("UNVERIFIABLE without a note".to_owned());
        }
        _ => {}
    }
    Ok(Checked {
        verdict,
        evidence,
        note,
        echo_id: echoed_id(obj),
    })
}

/// The `id` the model wrote, as text.
fn echoed_id(obj: &Map<String, Value>) -> Option<String> {
    match obj.get("id") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    }
}

/// A string field: absent or null is empty; another type is the reason.
fn text_field(obj: &Map<String, Value>, key: &str) -> Result<String, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(v) => Err(format!("{key} is {}, expected a string", kind_of(v))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(json: &str) -> VerdictEntry {
        let mut v = parse_verdicts("f", json.as_bytes()).unwrap();
        assert_eq!(v.len(), 1);
        v.remove(0)
    }

    #[test]
    fn valid_entries_pass_the_gate() {
        let e = one(r#"[{"id":"F1","verdict":"VERIFIED","evidence":"a.rs:3","note":""}]"#);
        assert_eq!(
            (
                e.echo_id.as_deref(),
                e.verdict,
                e.evidence.as_str(),
                e.note.as_str()
            ),
            (Some("F1"), FindingVerdict::Verified, "a.rs:3", "")
        );
        assert!(!e.is_fault());
        let e = one(r#"[{"id":7,"verdict":"UNVERIFIABLE","note":"needs a network"}]"#);
        assert_eq!(
            (e.echo_id.as_deref(), e.verdict),
            (Some("7"), FindingVerdict::Unverifiable)
        );
    }

    #[test]
    fn each_gate_rule_makes_a_pipeline_fault() {
        let cases = [
            (
                r#"{"verdict":"VERIFIED","evidence":" "}"#,
                "PIPELINE-FAULT: VERIFIED without evidence",
            ),
            (
                r#"{"verdict":"FALSE","note":"gone"}"#,
                "PIPELINE-FAULT: FALSE without evidence (verifier note: gone)",
            ),
            (
                r#"{"verdict":"UNVERIFIABLE","evidence":"x"}"#,
                "PIPELINE-FAULT: UNVERIFIABLE without a note",
            ),
            (
                r#"{"verdict":"MAYBE","evidence":"x"}"#,
                "PIPELINE-FAULT: verdict \"MAYBE\" is not VERIFIED, FALSE or UNVERIFIABLE",
            ),
            (
                r#"{"evidence":"x"}"#,
                "PIPELINE-FAULT: no verdict; expected VERIFIED, FALSE or UNVERIFIABLE",
            ),
            (
                r#"{"verdict":true}"#,
                "PIPELINE-FAULT: verdict is a boolean, expected VERIFIED, FALSE or UNVERIFIABLE",
            ),
            (
                r#"{"verdict":"VERIFIED","evidence":["a"]}"#,
                "PIPELINE-FAULT: evidence is an array, expected a string",
            ),
            (
                r#"{"verdict":"UNVERIFIABLE","note":5}"#,
                "PIPELINE-FAULT: note is a number, expected a string",
            ),
            (
                r#""F1""#,
                "PIPELINE-FAULT: entry is a string, expected an object",
            ),
        ];
        for (entry, note) in cases {
            let e = one(&format!("[{entry}]"));
            assert_eq!(
                (e.verdict, e.note.as_str()),
                (FindingVerdict::Unverifiable, note),
                "{entry}"
            );
            assert!(e.is_fault());
        }
    }

    #[test]
    fn entries_know_where_they_start() {
        let v = parse_verdicts(
            "f",
            b"FINDING_VERIFIER_RESULTS\n[\n  {\"verdict\":\"X\"},\n  {}\n]",
        )
        .unwrap();
        let at: Vec<_> = v.iter().map(|e| (e.position, e.line, e.column)).collect();
        assert_eq!(at, vec![(0, 3, 3), (1, 4, 3)]);
    }
}
