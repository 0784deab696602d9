//! The verdict gate: loopwatch's own judgement of one finding-verifier
//! answer, before anything is recorded. The answer is unwrapped the way
//! models wrap JSON (code fences, prose before or after it: the first `{`
//! through the last `}` is read, and what was removed is named), then the
//! verdict must be VERIFIED, FALSE or UNVERIFIABLE, VERIFIED and FALSE
//! must quote evidence, UNVERIFIABLE must carry a note. The finding's id is
//! stamped by the caller: an echoed id is only ever compared, never used.

use serde_json::{Map, Value};

use crate::model::FindingVerdict;
use crate::parse::FAULT_PREFIX;

/// Most characters of a detail put into a pipeline-fault note.
pub const DETAIL_LIMIT: usize = 500;

/// An answer that passed the gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged {
    /// The verdict.
    pub verdict: FindingVerdict,
    /// Decisive lines, as quoted.
    pub evidence: String,
    /// The verifier's note.
    pub note: String,
    /// What was normalised to read the answer.
    pub normalized: Vec<String>,
}

/// The JSON object of an answer: code fence lines dropped, then the first
/// `{` through the last `}`; the error says why there is none.
pub fn extract_object(text: &[u8]) -> Result<(Map<String, Value>, Vec<String>), String> {
    let text = std::str::from_utf8(text).map_err(|e| {
        format!(
            "the answer is not UTF-8 text (invalid byte at offset {})",
            e.valid_up_to()
        )
    })?;
    let mut normalized = Vec::new();
    let mut fenced = 0;
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| {
            let fence = l.trim_start().starts_with("```") || l.trim_start().starts_with("~~~");
            fenced += usize::from(fence);
            !fence
        })
        .collect();
    let body = kept.join("\n");
    if fenced > 0 {
        normalized.push("code fence removed".to_string());
    }
    let (Some(start), Some(end)) = (body.find('{'), body.rfind('}')) else {
        return Err(if body.trim().is_empty() {
            "the answer is empty".to_string()
        } else {
            "no JSON object in the answer".to_string()
        });
    };
    if end < start {
        return Err("no JSON object in the answer".to_string());
    }
    if !body[..start].trim().is_empty() {
        normalized.push("prose before the JSON removed".to_string());
    }
    if !body[end + 1..].trim().is_empty() {
        normalized.push("prose after the JSON removed".to_string());
    }
    let json = &body[start..=end];
    match serde_json::from_str::<Value>(json) {
        Ok(Value::Object(m)) => Ok((m, normalized)),
        Ok(_) => Err("the answer is not a JSON object".to_string()),
        Err(e) => Err(format!(
            "invalid JSON at line {} column {}: {}",
            e.line(),
            e.column(),
            crate::util::json_message(&e)
        )),
    }
}

/// Judges one answer for the finding `id`.
pub fn judge(text: &[u8], id: &str) -> Result<Judged, String> {
    let (obj, mut normalized) = extract_object(text)?;
    // The rules themselves are `record findings`' own.
    let c = crate::parse::check_verdict(&obj)?;
    if let Some(e) = c.echo_id.filter(|e| e != id) {
        normalized.push(format!(
            "echoed id \"{}\" ignored: the finding's id {id} kept",
            short(&e, 40)
        ));
    }
    Ok(Judged {
        verdict: c.verdict,
        evidence: c.evidence,
        note: c.note,
        normalized,
    })
}

/// The feedback a lane is dispatched again with after a first rejection.
pub fn feedback(reason: &str) -> String {
    format!(
        "PREVIOUS RESPONSE REJECTED by the verdict gate: {reason}. Respond with ONLY the JSON object described under 'Output format' — no prose, no code fences."
    )
}

/// The note of a lane whose second answer was rejected too.
pub fn retry_failed_note(reason: &str) -> String {
    format!("verifier output failed machine validation after retry: {reason}")
}

/// The note of a lane whose agent failed twice (crash, timeout).
pub fn lane_fault_note(detail: &str) -> String {
    format!(
        "{FAULT_PREFIX}verifier lane failed after retries — {}",
        short(detail, DETAIL_LIMIT)
    )
}

/// The note of the single verdict recorded when the parse failed twice.
pub fn parse_fault_note(detail: &str) -> String {
    format!(
        "{FAULT_PREFIX}parse failed — findings could not be extracted from the verification request; no finding was verified: {}",
        short(detail, DETAIL_LIMIT)
    )
}

/// At most `n` characters of `s` on one line (`…` when cut).
pub fn short(s: &str, n: usize) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= n {
        return flat;
    }
    let mut t: String = flat.chars().take(n.saturating_sub(1)).collect();
    t.push('…');
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_valid_answer_passes_with_nothing_normalised() {
        let j = judge(
            br#"{"id":"F1","verdict":"VERIFIED","evidence":"src/a.rs:3: x","note":""}"#,
            "F1",
        )
        .unwrap();
        assert_eq!(j.verdict, FindingVerdict::Verified);
        assert_eq!(j.evidence, "src/a.rs:3: x");
        assert!(j.normalized.is_empty(), "{:?}", j.normalized);
    }

    #[test]
    fn fences_and_prose_are_stripped_and_named() {
        let j = judge(
            b"Here is my verdict:\n```json\n{\"id\":\"F2\",\"verdict\":\"FALSE\",\"evidence\":\"no such line\"}\n```\nHope this helps.",
            "F2",
        )
        .unwrap();
        assert_eq!(j.verdict, FindingVerdict::False);
        assert_eq!(
            j.normalized,
            [
                "code fence removed",
                "prose before the JSON removed",
                "prose after the JSON removed"
            ]
        );
    }

    #[test]
    fn an_echoed_id_is_never_used() {
        let j = judge(
            br#"{"id":"F9","verdict":"UNVERIFIABLE","note":"needs a network"}"#,
            "F3",
        )
        .unwrap();
        assert_eq!(
            j.normalized,
            ["echoed id \"F9\" ignored: the finding's id F3 kept"]
        );
    }

    #[test]
    fn each_rule_rejects_with_its_reason() {
        let cases: [(&[u8], &str); 9] = [
            (b"", "the answer is empty"),
            (b"I think it is fine.", "no JSON object in the answer"),
            (b"} oops {", "no JSON object in the answer"),
            (
                br#"{"verdict":"MAYBE","evidence":"x"}"#,
                "verdict \"MAYBE\" is not VERIFIED, FALSE or UNVERIFIABLE",
            ),
            (
                br#"{"evidence":"x"}"#,
                "no verdict; expected VERIFIED, FALSE or UNVERIFIABLE",
            ),
            (
                br#"{"verdict":1}"#,
                "verdict is a number, expected VERIFIED, FALSE or UNVERIFIABLE",
            ),
            (
                br#"{"verdict":"VERIFIED","evidence":"  "}"#,
                "VERIFIED without evidence",
            ),
            (
                br#"{"verdict":"UNVERIFIABLE","note":""}"#,
                "UNVERIFIABLE without a note",
            ),
            (
                br#"{"verdict":"FALSE","evidence":["a"]}"#,
                "evidence is an array, expected a string",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(
                judge(text, "F1").unwrap_err(),
                want,
                "{}",
                String::from_utf8_lossy(text)
            );
        }
        let bad = judge(b"{\"verdict\": \"VERIFIED\",}", "F1").unwrap_err();
        assert!(bad.starts_with("invalid JSON at line 1 column "), "{bad}");
        let bin = judge(b"{\"verdict\":\"\xff\"}", "F1").unwrap_err();
        assert!(bin.starts_with("the answer is not UTF-8 text"), "{bin}");
    }

    #[test]
    fn notes_and_feedback_have_their_exact_words() {
        assert_eq!(
            feedback("VERIFIED without evidence"),
            "PREVIOUS RESPONSE REJECTED by the verdict gate: VERIFIED without evidence. Respond with ONLY the JSON object described under 'Output format' — no prose, no code fences."
        );
        assert_eq!(
            retry_failed_note("no verdict"),
            "verifier output failed machine validation after retry: no verdict"
        );
        assert_eq!(
            lane_fault_note("exited with status 3"),
            "PIPELINE-FAULT: verifier lane failed after retries — exited with status 3"
        );
        let long = "x".repeat(900);
        let note = parse_fault_note(&long);
        assert!(note.starts_with("PIPELINE-FAULT: parse failed — findings could not be extracted from the verification request; no finding was verified: "));
        assert_eq!(
            note.rsplit(": ").next().unwrap().chars().count(),
            DETAIL_LIMIT
        );
    }
}
