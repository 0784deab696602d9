//! The contract as judged: the parts of a contract that decide what the
//! gates check and what the change may touch — its REQUEST, every
//! criterion with its `CHECK:` and `EXPECT:`, and its FILE SCOPE. Other
//! lines (the header, CLARIFICATIONS, `EVIDENCE:` lines GATE 0 writes,
//! `ABANDON:` lines a developer adds) are not judged parts.
//!
//! Pure: bytes in, parts and their differences out. Line ends (CRLF) and
//! trailing blanks are not differences; anything else is.

use sha2::{Digest, Sha256};

use crate::gate0::contract::parse;

/// The judged parts of a contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged {
    /// The REQUEST section's lines, trimmed at their end.
    pub request: Vec<String>,
    /// Every criterion, in the contract's order.
    pub criteria: Vec<JudgedCriterion>,
    /// The FILE SCOPE section's non-blank lines, trimmed at their end.
    pub scope: Vec<String>,
}

/// One criterion as judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgedCriterion {
    /// Its id.
    pub id: String,
    /// Its text.
    pub text: String,
    /// Its `CHECK:` command (empty when it has none).
    pub check: String,
    /// Its `EXPECT:` marker (empty when it has none).
    pub expect: String,
}

impl Judged {
    /// The judged parts of a contract's bytes.
    pub fn read(bytes: &[u8]) -> Judged {
        let contract = parse(bytes);
        let text = |b: &[u8]| String::from_utf8_lossy(b).trim_end().to_string();
        Judged {
            request: section(bytes, "REQUEST", false),
            criteria: contract
                .criteria
                .iter()
                .map(|c| JudgedCriterion {
                    id: c.id.clone(),
                    text: text(&c.text),
                    check: text(&c.check),
                    expect: text(&c.expect),
                })
                .collect(),
            scope: section(bytes, "FILE SCOPE", true),
        }
    }

    /// `sha256:<hex>` of the judged parts (their canonical form).
    pub fn sha256(&self) -> String {
        let mut h = Sha256::new();
        let mut put = |tag: &str, s: &str| {
            h.update(tag.as_bytes());
            h.update((s.len() as u64).to_le_bytes());
            h.update(s.as_bytes());
        };
        for l in &self.request {
            put("R", l);
        }
        for c in &self.criteria {
            put("I", &c.id);
            put("T", &c.text);
            put("C", &c.check);
            put("E", &c.expect);
        }
        for l in &self.scope {
            put("S", l);
        }
        format!("sha256:{:x}", h.finalize())
    }

    /// What differs from `self` in `now`, one line each, naming the part:
    /// `criterion 1: CHECK was \`…\`, now \`…\``, `criterion 2: removed`,
    /// `REQUEST: changed`, `FILE SCOPE: added \`- src/x.rs\``.
    pub fn changes(&self, now: &Judged) -> Vec<String> {
        let mut out = Vec::new();
        if self.request != now.request {
            out.push(format!(
                "REQUEST: changed (was {} line(s), now {})",
                self.request.len(),
                now.request.len()
            ));
        }
        for c in &self.criteria {
            match now.criteria.iter().find(|n| n.id == c.id) {
                None => out.push(format!("criterion {}: removed", c.id)),
                Some(n) => {
                    for (what, was, is) in [
                        ("text", &c.text, &n.text),
                        ("CHECK", &c.check, &n.check),
                        ("EXPECT", &c.expect, &n.expect),
                    ] {
                        if was != is {
                            out.push(format!(
                                "criterion {}: {what} was `{}`, now `{}`",
                                c.id,
                                short(was),
                                short(is)
                            ));
                        }
                    }
                }
            }
        }
        for n in &now.criteria {
            if !self.criteria.iter().any(|c| c.id == n.id) {
                out.push(format!("criterion {}: added", n.id));
            }
        }
        for l in &self.scope {
            if !now.scope.contains(l) {
                out.push(format!("FILE SCOPE: removed `{}`", short(l)));
            }
        }
        for l in &now.scope {
            if !self.scope.contains(l) {
                out.push(format!("FILE SCOPE: added `{}`", short(l)));
            }
        }
        out
    }
}

/// The lines of the `## <name>` section (up to the next `## ` heading),
/// outside code fences, trimmed at their end; blank lines left out when
/// `skip_blank`.
fn section(bytes: &[u8], name: &str, skip_blank: bool) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        let line = line.trim_end();
        if let Some(head) = line.strip_prefix("## ") {
            inside = head.trim().to_ascii_uppercase().starts_with(name);
            continue;
        }
        if inside && !(skip_blank && line.trim().is_empty()) {
            out.push(line.to_string());
        }
    }
    // Blank lines at the section's end are layout, not content.
    while out.last().is_some_and(|l| l.trim().is_empty()) {
        out.pop();
    }
    out
}

/// At most 120 characters of `s`, on one line.
fn short(s: &str) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > 120 {
        let mut t: String = flat.chars().take(120).collect();
        t.push('…');
        t
    } else {
        flat
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const C: &str = "# CONTRACT — x\n- date: 2026-12-01 | flow: feat\n\n## REQUEST (verbatim — IMMUTABLE)\n\"Do it.\"\n\n## ACCEPTANCE CRITERIA\n1. It works.\n   CHECK: make test && echo OK\n   EXPECT: OK\n   EVIDENCE: pending\n2. It reads well.\n\n## FILE SCOPE\n- src/a.rs\n";

    #[test]
    fn the_judged_parts_ignore_evidence_abandons_and_line_ends() {
        let a = Judged::read(C.as_bytes());
        assert_eq!(a.request, ["\"Do it.\""]);
        assert_eq!(a.scope, ["- src/a.rs"]);
        assert_eq!(a.criteria[0].check, "make test && echo OK");
        let b = Judged::read(
            C.replace(
                "EVIDENCE: pending",
                "EVIDENCE: MET exit=0 marker-found :: OK",
            )
            .replace(
                "2. It reads well.\n",
                "2. It reads well.\nABANDON: 2 no reader\n",
            )
            .replace('\n', "\r\n")
            .as_bytes(),
        );
        assert_eq!(a.sha256(), b.sha256());
        assert!(a.changes(&b).is_empty());
    }

    #[test]
    fn every_judged_change_is_named() {
        let a = Judged::read(C.as_bytes());
        let b = Judged::read(
            C.replace("make test && echo OK", "echo OK")
                .replace("2. It reads well.\n", "")
                .replace("\"Do it.\"", "\"Do less.\"")
                .replace("- src/a.rs", "- src/a.rs\n- src/**")
                .as_bytes(),
        );
        assert_ne!(a.sha256(), b.sha256());
        assert_eq!(
            a.changes(&b),
            [
                "REQUEST: changed (was 1 line(s), now 1)",
                "criterion 1: CHECK was `make test && echo OK`, now `echo OK`",
                "criterion 2: removed",
                "FILE SCOPE: added `- src/**`",
            ]
        );
    }
}
