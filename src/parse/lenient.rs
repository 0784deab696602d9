//! Reading real model output the way the loop's own orchestrator reads it.
//!
//! Models wrap the block they were asked for: a code fence around it, prose
//! before or after it, markdown emphasis on the keys (`**VERIFY — VERDICT:**
//! CONFORME`), CRLF line endings, trailing blanks. Those wrappings are
//! removed here, line by line and with every line keeping its number, and
//! each one is named so `gate.finished.normalized` says what was done. The
//! strict readers then judge what is left: no VERDICT line, two VERDICT
//! lines, CONFORME without PROOF or FLOOR and a count that disagrees with
//! the rows stay structural, because nothing here ever removes a line that
//! looks like a verdict line or a section key.

use std::sync::LazyLock;

use regex::Regex;

use super::GateOutput;
use super::error::{Structural, StructuralKind};
use super::lines;
use super::verdict::gate_word;
use crate::model::GateName;

/// A strict reader of one gate's output.
type Strict = fn(&str, &[u8]) -> Result<GateOutput, Structural>;

static VERDICT_ANY: LazyLock<Regex> = static_regex!(r"^([A-Z]+)[ \t]*(?:—|--)[ \t]*VERDICT:");

static KEY: LazyLock<Regex> =
    static_regex!(r"^[A-Z][A-Z0-9 _()/-]*(?:[ \t]*(?:—|--)[ \t]*VERDICT)?:");

// `**KEY:** rest`, `**KEY**: rest`, `__KEY:__ rest`, `**KEY: rest**`.
static EMPHASIS: LazyLock<Regex> =
    static_regex!(r"^(\*\*|__)([A-Z][^*_]*?)(?:(:)(\*\*|__)|(\*\*|__)(:)|(:.*?)(\*\*|__))(.*)$");

/// Reads `text` with `strict` after removing what models wrap their block
/// in; what was removed is put on the output (or on the failure).
pub fn read(
    input: &str,
    gate: GateName,
    text: &[u8],
    strict: Strict,
) -> Result<GateOutput, Structural> {
    let Ok(decoded) = lines::decode(text) else {
        // Not text: the strict reader names the line and column.
        return strict(input, text);
    };
    let mut notes = Vec::new();
    if decoded.contains("\r\n") {
        notes.push("CRLF line endings read as LF".to_string());
    }
    let raw: Vec<&str> = split_keep(decoded);
    let trailing = raw
        .iter()
        .filter(|l| l.trim_end_matches('\r') != l.trim_end_matches(['\r', ' ', '\t']))
        .count();
    if trailing > 0 {
        notes.push(format!("trailing blanks removed on {trailing} line(s)"));
    }
    let mut work: Vec<String> = raw
        .iter()
        .map(|l| l.trim_end_matches(['\r', ' ', '\t']).to_string())
        .collect();
    let emphasised = strip_emphasis(&mut work);
    if emphasised > 0 {
        notes.push(format!(
            "markdown emphasis removed from keys on {emphasised} line(s)"
        ));
    }
    let word = gate_word(gate);
    let is_verdict = |l: &str| {
        VERDICT_ANY
            .captures(l)
            .and_then(|c| c.get(1))
            .is_some_and(|w| w.as_str() == word)
    };
    if let Some(note) = unfence(&mut work, &is_verdict) {
        notes.push(note);
    }
    let joined = work.join("\n");
    let first = strict(input, joined.as_bytes());
    let result = match first {
        Err(e) if e.kind == StructuralKind::UnknownLine => {
            match drop_trailing_prose(&mut work, e.line, &is_verdict) {
                Some(note) => {
                    notes.push(note);
                    strict(input, work.join("\n").as_bytes())
                }
                None => Err(e),
            }
        }
        other => other,
    };
    match result {
        Ok(mut out) => {
            out.normalized = notes;
            Ok(out)
        }
        Err(mut e) => {
            if let Some(p) = e.partial.as_mut() {
                p.normalized.clone_from(&notes);
            }
            e.normalized = notes;
            Err(e)
        }
    }
}

/// True when some line of `text` is a gate's VERDICT line (`VERIFY —
/// VERDICT: …`, `SECURITY — VERDICT: …`, also with markdown emphasis on
/// the key) or the finding verifier's results marker: an agent's message
/// that answers, as opposed to one that only talks about what it does.
pub fn holds_verdict(text: &str) -> bool {
    text.lines().any(|l| {
        let mut one = vec![l.trim().to_string()];
        strip_emphasis(&mut one);
        let t = one[0].trim_start_matches(['>', '`', ' ', '\t']);
        VERDICT_ANY.is_match(t) || t.starts_with(super::json::MARKER)
    })
}

/// The lines of `text`, a final line ending opening no extra line.
fn split_keep(text: &str) -> Vec<&str> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    if body.is_empty() {
        return Vec::new();
    }
    body.split('\n').collect()
}

/// Removes `**`/`__` around a key at the start of a line; returns how many
/// lines changed.
fn strip_emphasis(work: &mut [String]) -> usize {
    let mut n = 0;
    for line in work.iter_mut() {
        let indent_len = line.len() - line.trim_start().len();
        let (indent, rest) = line.split_at(indent_len);
        let Some(c) = EMPHASIS.captures(rest) else {
            continue;
        };
        let key = c.get(2).map_or("", |m| m.as_str());
        let tail = c.get(9).map_or("", |m| m.as_str());
        let plain = if c.get(3).is_some() || c.get(6).is_some() {
            format!("{key}:{tail}")
        } else {
            // `**KEY: value**rest`: the closing marker ends the value.
            let value = c.get(7).map_or("", |m| m.as_str());
            format!("{key}{value}{tail}")
        };
        if !KEY.is_match(&plain) {
            continue;
        }
        *line = format!("{indent}{}", plain.trim_end());
        n += 1;
    }
    n
}

fn is_fence(l: &str) -> bool {
    let t = l.trim_start();
    t.starts_with("```") || t.starts_with("~~~")
}

/// When the verdict line sits inside a code fence, keeps the fence's
/// content and blanks the fence lines and the prose outside it (never a
/// verdict line: a second one must still be seen).
fn unfence(work: &mut [String], is_verdict: &dyn Fn(&str) -> bool) -> Option<String> {
    let v = work.iter().position(|l| is_verdict(l))?;
    let open = work[..v].iter().rposition(|l| is_fence(l))?;
    let fences_before = work[..v].iter().filter(|l| is_fence(l)).count();
    if fences_before % 2 == 0 {
        return None;
    }
    let close = work[v..].iter().position(|l| is_fence(l)).map(|p| v + p);
    let end = close.unwrap_or(work.len());
    let mut dropped_after = 0;
    for (i, line) in work.iter_mut().enumerate() {
        let inside = i > open && i < end;
        if inside || is_verdict(line) {
            continue;
        }
        if i > end && !line.trim().is_empty() {
            dropped_after += 1;
        }
        line.clear();
    }
    let mut note = format!(
        "code fence removed (lines {}–{})",
        open + 1,
        close.map_or(work.len(), |c| c + 1)
    );
    if dropped_after > 0 {
        note.push_str(&format!(
            "; {dropped_after} line(s) of prose after it ignored"
        ));
    }
    Some(note)
}

/// Prose after the block: from the unknown line `at` (1-based) to the end,
/// when it starts a new paragraph and holds no verdict line and no key.
fn drop_trailing_prose(
    work: &mut [String],
    at: Option<usize>,
    is_verdict: &dyn Fn(&str) -> bool,
) -> Option<String> {
    let start = at?.checked_sub(1)?;
    let paragraph = start > 0 && work.get(start - 1).is_some_and(|l| l.trim().is_empty());
    if !paragraph {
        return None;
    }
    let tail = work.get(start..)?;
    if tail
        .iter()
        .any(|l| is_verdict(l) || KEY.is_match(l) || VERDICT_ANY.is_match(l))
    {
        return None;
    }
    let last = work.len();
    for l in &mut work[start..] {
        l.clear();
    }
    Some(format!(
        "prose after the block ignored (lines {}–{last})",
        start + 1
    ))
}

#[cfg(test)]
mod tests {
    use super::super::{parse_conformity, parse_security};
    use super::*;

    const CONFORME: &str = "VERIFY — VERDICT: CONFORME\nCONTRACT: c.md\nCRITERIA:\n  1. It works — MET — ran it\nSCOPE: in-scope 1 files; out-of-scope: none\nFLOOR: clean\nPROOF: ran the tests\n";

    #[test]
    fn a_clean_block_records_nothing() {
        let out = parse_conformity("o", CONFORME.as_bytes()).unwrap();
        assert!(out.normalized.is_empty(), "{:?}", out.normalized);
    }

    #[test]
    fn fence_prose_and_emphasis_are_read_and_named() {
        let text = format!(
            "Here is my verdict.\r\n\r\n```text\r\n{}```\r\n\r\nLet me know if you need more.  \r\n",
            CONFORME
                .replace("VERIFY — VERDICT:", "**VERIFY — VERDICT:**")
                .replace("PROOF:", "**PROOF:**")
                .replace('\n', "\r\n")
        );
        let out = parse_conformity("o", text.as_bytes()).unwrap();
        assert_eq!(out.proof.as_deref(), Some("ran the tests"));
        let notes = out.normalized.join(" | ");
        assert!(notes.contains("CRLF"), "{notes}");
        assert!(
            notes.contains("trailing blanks removed on 1 line"),
            "{notes}"
        );
        assert!(
            notes.contains("emphasis removed from keys on 2 line"),
            "{notes}"
        );
        assert!(notes.contains("code fence removed (lines 3–11)"), "{notes}");
        assert!(
            notes.contains("1 line(s) of prose after it ignored"),
            "{notes}"
        );
    }

    #[test]
    fn prose_after_an_unfenced_block_is_ignored() {
        let text = format!("{CONFORME}\nI checked everything twice.\nThanks!\n");
        let out = parse_conformity("o", text.as_bytes()).unwrap();
        assert_eq!(
            out.normalized,
            vec!["prose after the block ignored (lines 9–10)"]
        );
    }

    #[test]
    fn the_structural_cases_stay_structural() {
        let none = parse_conformity("o", b"All good, CONFORME!\n").unwrap_err();
        assert_eq!(none.kind, StructuralKind::NoVerdict);
        // A second verdict outside the fence is still seen.
        let two = format!("```\n{CONFORME}```\nVERIFY — VERDICT: ECARTS(1)\n");
        assert_eq!(
            parse_conformity("o", two.as_bytes()).unwrap_err().kind,
            StructuralKind::DuplicateVerdict
        );
        let no_proof = format!(
            "```\n{}```\n",
            CONFORME.replace("PROOF: ran the tests\n", "")
        );
        let e = parse_conformity("o", no_proof.as_bytes()).unwrap_err();
        assert_eq!(e.kind, StructuralKind::ConformeWithoutProof);
        assert!(e.normalized.iter().any(|n| n.starts_with("code fence")));
        let count = CONFORME
            .replace("CONFORME", "ECARTS(2)")
            .replace("— MET —", "— NOT-MET —");
        assert_eq!(
            parse_conformity("o", count.as_bytes()).unwrap_err().kind,
            StructuralKind::CountMismatch
        );
        // Prose followed by a key is not prose: the line stays unknown.
        let mixed = format!("{CONFORME}\nnote this\nTOOL: x\n");
        assert_eq!(
            parse_conformity("o", mixed.as_bytes()).unwrap_err().kind,
            StructuralKind::UnknownLine
        );
        // A stray line inside the block (no paragraph break) stays unknown.
        let stray = CONFORME.replace("FLOOR: clean\n", "FLOOR: clean\nby the way\n");
        assert_eq!(
            parse_conformity("o", stray.as_bytes()).unwrap_err().kind,
            StructuralKind::UnknownLine
        );
    }

    #[test]
    fn security_output_is_read_the_same_way() {
        let text = "```\n__SECURITY — VERDICT:__ PASS\nTOOL: semgrep 1.0\nSCOPE: 2 files\nBLOCKING:\nREPORTED (non-blocking):\nPROOF: 10 rules on 2 files\n```\nDone.\n";
        let out = parse_security("o", text.as_bytes()).unwrap();
        assert_eq!(out.verdict.kind, crate::model::VerdictKind::Pass);
        assert_eq!(out.normalized.len(), 2, "{:?}", out.normalized);
    }

    #[test]
    fn emphasis_forms() {
        let mut w = vec![
            "**CONTRACT:** a.md".to_string(),
            "**FLOOR**: clean".to_string(),
            "**PROOF: read it**".to_string(),
            "**not a key** at all".to_string(),
        ];
        assert_eq!(strip_emphasis(&mut w), 3);
        assert_eq!(w[0], "CONTRACT: a.md");
        assert_eq!(w[1], "FLOOR: clean");
        assert_eq!(w[2], "PROOF: read it");
        assert_eq!(w[3], "**not a key** at all");
    }
}
