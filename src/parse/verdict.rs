//! The VERDICT line of each gate: finding it (exactly once) and reading its
//! token.
//!
//! A verdict line starts at column 0 with the gate's word (`GATES`, `VERIFY`,
//! `SECURITY`), a separator (` — ` or ` -- `), `VERDICT:` and one token. Each
//! gate prints its own set of tokens (PROTOCOL §1); anything else is an
//! unknown verdict, never a guess.

use std::sync::LazyLock;

use regex::Regex;

use super::error::{Structural, StructuralKind};
use super::lines::Line;
use crate::model::{GateName, Verdict, VerdictKind};

/// The VERDICT line of a gate output, once found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VerdictLine<'a> {
    /// Index of the line in the line list.
    pub index: usize,
    /// 1-based line number.
    pub number: usize,
    /// The token after `VERDICT:`, e.g. `ECARTS(2)`.
    pub token: &'a str,
}

/// The word that opens the gate's lines.
pub fn gate_word(gate: GateName) -> &'static str {
    match gate {
        GateName::Floor => "GATES",
        GateName::Conformity => "VERIFY",
        GateName::Security => "SECURITY",
    }
}

/// The tokens a gate may print, for messages.
pub fn expected_tokens(gate: GateName) -> &'static str {
    match gate {
        GateName::Floor => "MET, UNMET(n), PENDING(n), ABANDONED(n), ERROR(n) or ERROR(<reason>)",
        GateName::Conformity => "CONFORME, ECARTS(n), ABANDONED(n) or ERROR(<reason>)",
        GateName::Security => "PASS, BLOCK(n), ERROR(<reason>) or DEGRADED",
    }
}

/// Finds the single VERDICT line of `gate` in `lines`.
pub fn find<'a>(
    input: &str,
    gate: GateName,
    lines: &[Line<'a>],
) -> Result<VerdictLine<'a>, Structural> {
    let word = gate_word(gate);
    let mut found: Option<VerdictLine<'a>> = None;
    for (index, line) in lines.iter().enumerate() {
        let Some(token) = verdict_token(word, line.text) else {
            continue;
        };
        if let Some(first) = found {
            return Err(Structural::new(
                input,
                StructuralKind::DuplicateVerdict,
                Some(line.number),
                format!(
                    "second `{word} — VERDICT:` line (the first is line {}); expected exactly one",
                    first.number
                ),
            ));
        }
        found = Some(VerdictLine {
            index,
            number: line.number,
            token,
        });
    }
    found.ok_or_else(|| {
        Structural::new(
            input,
            StructuralKind::NoVerdict,
            None,
            format!(
                "no `{word} — VERDICT:` line; expected one with {}",
                expected_tokens(gate)
            ),
        )
    })
}

/// Reads the token of a verdict line of `gate`.
pub fn parse_token(
    input: &str,
    gate: GateName,
    line: &VerdictLine<'_>,
) -> Result<Verdict, Structural> {
    read_token(gate, line.token).ok_or_else(|| {
        Structural::new(
            input,
            StructuralKind::UnknownVerdict,
            Some(line.number),
            format!(
                "unknown verdict `{}`; expected {}",
                line.token,
                expected_tokens(gate)
            ),
        )
    })
}

static VERDICT_LINE: LazyLock<Regex> =
    static_regex!(r"^([A-Z]+)[ \t]*(?:—|--)[ \t]*VERDICT:[ \t]*(.*)$");

static TOKEN: LazyLock<Regex> = static_regex!(r"^([A-Z]+)(?:\((.*)\))?$");

/// The token of `text` when it is a verdict line opened by `word`.
fn verdict_token<'a>(word: &str, text: &'a str) -> Option<&'a str> {
    let caps = VERDICT_LINE.captures(text)?;
    if caps.get(1)?.as_str() != word {
        return None;
    }
    Some(caps.get(2)?.as_str())
}

/// The verdict of a token, or `None` when `gate` does not print it.
fn read_token(gate: GateName, token: &str) -> Option<Verdict> {
    let caps = TOKEN.captures(token)?;
    let word = caps.get(1)?.as_str();
    let arg = caps.get(2).map(|m| m.as_str());
    let count = |kind| Some(Verdict::counted(kind, arg?.parse().ok()?));
    let reason = |kind| {
        let r = arg?.trim();
        (!r.is_empty()).then(|| Verdict {
            kind,
            n: None,
            reason: Some(r.to_owned()),
        })
    };
    let bare = |kind| arg.is_none().then(|| Verdict::bare(kind));
    use VerdictKind as K;
    match (gate, word) {
        (GateName::Floor, "MET") => bare(K::Met),
        (GateName::Floor, "UNMET") => count(K::Unmet),
        (GateName::Floor, "PENDING") => count(K::Pending),
        (GateName::Floor, "ERROR") => count(K::Error).or_else(|| reason(K::Error)),
        (GateName::Floor | GateName::Conformity, "ABANDONED") => count(K::Abandoned),
        (GateName::Conformity, "CONFORME") => bare(K::Conforme),
        (GateName::Conformity, "ECARTS") => count(K::Ecarts),
        (GateName::Security, "PASS") => bare(K::Pass),
        (GateName::Security, "BLOCK") => count(K::Block),
        (GateName::Security, "DEGRADED") => bare(K::Degraded),
        (GateName::Conformity | GateName::Security, "ERROR") => reason(K::Error),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::lines::split;

    fn tok(gate: GateName, t: &str) -> Option<String> {
        read_token(gate, t).map(|v| format!("{v}"))
    }

    #[test]
    fn tokens_of_each_gate() {
        use GateName::*;
        assert_eq!(tok(Conformity, "CONFORME").as_deref(), Some("CONFORME"));
        assert_eq!(tok(Conformity, "ECARTS(3)").as_deref(), Some("ECARTS(3)"));
        assert_eq!(
            tok(Conformity, "ABANDONED(1)").as_deref(),
            Some("ABANDONED(1)")
        );
        assert_eq!(
            tok(Conformity, "ERROR(cargo died (101))").as_deref(),
            Some("ERROR(cargo died (101))")
        );
        assert_eq!(tok(Conformity, "ECARTS"), None);
        assert_eq!(tok(Conformity, "ECARTS(x)"), None);
        assert_eq!(tok(Conformity, "CONFORME(1)"), None);
        assert_eq!(tok(Conformity, "ERROR()"), None);
        assert_eq!(tok(Conformity, "PASS"), None);
        assert_eq!(tok(Security, "DEGRADED").as_deref(), Some("DEGRADED"));
        assert_eq!(tok(Security, "BLOCK(2)").as_deref(), Some("BLOCK(2)"));
        assert_eq!(tok(Security, "ABANDONED(2)"), None);
        assert_eq!(tok(Floor, "ERROR(2)"), Some("ERROR(2)".into()));
        assert_eq!(read_token(Floor, "ERROR(2)").and_then(|v| v.n), Some(2));
        assert_eq!(
            read_token(Floor, "ERROR(no contract)").and_then(|v| v.reason),
            Some("no contract".into())
        );
        assert_eq!(tok(Floor, "UNMET(99999999999)"), None);
        assert_eq!(tok(Floor, "conforme"), None);
    }

    #[test]
    fn finds_exactly_one_verdict_line() {
        let lines = split("preamble VERIFY — VERDICT: X\nVERIFY -- VERDICT: CONFORME\nPROOF: p");
        let v = find("o", GateName::Conformity, &lines).unwrap();
        assert_eq!((v.index, v.number, v.token), (1, 2, "CONFORME"));
        assert_eq!(
            find("o", GateName::Security, &lines).unwrap_err().kind,
            StructuralKind::NoVerdict
        );

        let two = split("VERIFY — VERDICT: CONFORME\n\nVERIFY — VERDICT: ECARTS(1)");
        let e = find("o", GateName::Conformity, &two).unwrap_err();
        assert_eq!(
            (e.kind, e.line),
            (StructuralKind::DuplicateVerdict, Some(3))
        );
        assert_eq!(
            e.message,
            "second `VERIFY — VERDICT:` line (the first is line 1); expected exactly one"
        );
    }
}
