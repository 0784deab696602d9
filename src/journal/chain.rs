//! The journal's hash chain (PROTOCOL §3, `prev`): each line carries the
//! sha256 of the line before it, so a line changed, removed, inserted or
//! moved afterwards breaks the chain at the line after it.
//!
//! The first line of a journal carries no `prev` (nothing precedes it).
//! Lines written before the chain existed carry none either: a journal
//! that starts unchained and is chained from some line on reads as before;
//! once a line carries `prev`, every later one must.

use serde::Deserialize;
use sha2::{Digest, Sha256};

/// The `prev` of the line after `line`: the sha256 of its bytes (without
/// the `\n`) as 64 lowercase hex digits.
pub fn line_hash(line: &[u8]) -> String {
    let digest = Sha256::digest(line);
    let mut s = String::with_capacity(64);
    for b in digest {
        use std::fmt::Write as _;
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Where the chain breaks: the line (1-based) whose `prev` is wrong or
/// missing, what it is, and what differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainBreak {
    /// 1-based line number in the journal.
    pub line: u64,
    /// Its `seq`, when the line says one.
    pub seq: Option<u64>,
    /// Its `type`, when the line says one.
    pub type_name: Option<String>,
    /// What differs.
    pub what: String,
}

impl ChainBreak {
    /// `line <n> (seq <s>, <type>)`.
    pub fn place(&self) -> String {
        let mut s = format!("line {}", self.line);
        match (self.seq, &self.type_name) {
            (Some(seq), Some(t)) => s.push_str(&format!(" (seq {seq}, {t})")),
            (Some(seq), None) => s.push_str(&format!(" (seq {seq})")),
            (None, Some(t)) => s.push_str(&format!(" ({t})")),
            (None, None) => {}
        }
        s
    }
}

impl std::fmt::Display for ChainBreak {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.place(), self.what)
    }
}

/// The chain checked one line at a time (any size of journal).
#[derive(Debug, Default)]
pub struct Chain {
    line: u64,
    /// The hash of the line before, `None` before the first line or after
    /// a line that could not be hashed.
    before: Option<String>,
    /// The previous line could not be read whole (too long): the next
    /// line's `prev` cannot be judged.
    unknown: bool,
    started: bool,
    /// Lines (1-based) without `prev` before the chain began (the first
    /// line excepted: it never has one).
    pub unchained: Vec<u64>,
}

#[derive(Deserialize)]
struct Head {
    #[serde(default)]
    seq: Option<serde_json::Value>,
    #[serde(default, rename = "type")]
    type_name: Option<serde_json::Value>,
    #[serde(default)]
    prev: Option<serde_json::Value>,
}

impl Chain {
    /// A chain before its first line.
    pub fn new() -> Chain {
        Chain::default()
    }

    /// True once a line carried `prev`.
    pub fn started(&self) -> bool {
        self.started
    }

    /// Lines seen so far.
    pub fn lines(&self) -> u64 {
        self.line
    }

    /// A line that could not be read whole (it is reported as such
    /// elsewhere): the next line's `prev` is not judged.
    pub fn skip(&mut self) {
        self.line += 1;
        self.before = None;
        self.unknown = true;
    }

    /// The next line's bytes (without `\n`); the break it shows, if any.
    pub fn next(&mut self, line: &[u8]) -> Option<ChainBreak> {
        self.line += 1;
        let head: Option<Head> = serde_json::from_slice(line).ok();
        let seq = head
            .as_ref()
            .and_then(|h| h.seq.as_ref())
            .and_then(|v| v.as_u64());
        let type_name = head
            .as_ref()
            .and_then(|h| h.type_name.as_ref())
            .and_then(|v| v.as_str())
            .map(crate::sanitize::field);
        let prev = head.as_ref().and_then(|h| h.prev.clone());
        let before = self.before.replace(line_hash(line));
        let unknown = std::mem::take(&mut self.unknown);
        let brk = |what: String| ChainBreak {
            line: self.line,
            seq,
            type_name: type_name.clone(),
            what,
        };
        if head.is_none() {
            return Some(brk(
                "not a JSON object: its `prev` cannot be read (the line was changed or cut)".into(),
            ));
        }
        let prev = match prev {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::String(s)) => Some(s),
            Some(_) => return Some(brk("`prev` is not a string".into())),
        };
        match (prev, before) {
            (None, None) if self.line == 1 => None,
            (None, _) if self.started => Some(brk(
                "no `prev`: the hash chain stops here (a line written by another program, or its `prev` removed)"
                    .into(),
            )),
            (None, _) => {
                if self.line > 1 {
                    self.unchained.push(self.line);
                }
                None
            }
            (Some(_), None) if self.line == 1 => {
                self.started = true;
                Some(brk(
                    "the first line carries `prev`: the lines before it were removed".into(),
                ))
            }
            (Some(_), None) => {
                self.started = true;
                // The line before could not be hashed; it is reported itself.
                let _ = unknown;
                None
            }
            (Some(p), Some(h)) => {
                self.started = true;
                if p == h {
                    None
                } else {
                    Some(brk(format!(
                        "`prev` {} is not the hash of line {} ({}): line {} was changed, or a line was removed, added or moved here",
                        short(&p),
                        self.line - 1,
                        short(&h),
                        self.line - 1
                    )))
                }
            }
        }
    }
}

fn short(h: &str) -> String {
    let s = crate::sanitize::field(h);
    if s.chars().count() > 16 {
        format!("{}…", s.chars().take(16).collect::<String>())
    } else {
        s
    }
}

/// Every break of a whole journal's bytes (lines split at `\n`; a last
/// line without one is left out: a write in progress).
pub fn check_bytes(journal: &[u8]) -> (Chain, Vec<ChainBreak>) {
    let mut chain = Chain::new();
    let mut breaks = Vec::new();
    let mut rest = journal;
    while let Some(i) = rest.iter().position(|&b| b == b'\n') {
        if let Some(b) = chain.next(&rest[..i]) {
            breaks.push(b);
        }
        rest = &rest[i + 1..];
    }
    (chain, breaks)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chained(texts: &[&str]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (i, t) in texts.iter().enumerate() {
            let prev = out
                .last()
                .map(|l| format!(",\"prev\":\"{}\"", line_hash(l.as_bytes())))
                .unwrap_or_default();
            out.push(format!(
                "{{\"v\":1,\"seq\":{},\"at\":\"t\"{prev},\"type\":\"note\",\"text\":\"{t}\"}}",
                i + 1
            ));
        }
        out
    }

    fn breaks(lines: &[String]) -> Vec<ChainBreak> {
        let text = lines.join("\n") + "\n";
        check_bytes(text.as_bytes()).1
    }

    #[test]
    fn an_intact_chain_has_no_break() {
        let lines = chained(&["a", "b", "c", "d"]);
        assert!(breaks(&lines).is_empty());
        let (chain, _) = check_bytes((lines.join("\n") + "\n").as_bytes());
        assert!(chain.started());
        assert!(chain.unchained.is_empty());
    }

    #[test]
    fn one_byte_changed_breaks_the_next_line() {
        let mut lines = chained(&["a", "b", "c", "d"]);
        lines[1] = lines[1].replace("\"b\"", "\"B\"");
        let b = breaks(&lines);
        assert_eq!(b.len(), 1, "{b:?}");
        assert_eq!(b[0].line, 3);
        assert_eq!(b[0].seq, Some(3));
        assert!(b[0].what.contains("line 2 was changed"), "{}", b[0]);
    }

    #[test]
    fn a_line_removed_or_two_swapped_are_named() {
        let mut lines = chained(&["a", "b", "c", "d"]);
        lines.remove(1);
        let b = breaks(&lines);
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].line, 2);
        assert_eq!(b[0].seq, Some(3));

        let mut lines = chained(&["a", "b", "c", "d"]);
        lines.swap(1, 2);
        let b = breaks(&lines);
        assert_eq!(
            b.iter().map(|b| b.line).collect::<Vec<_>>(),
            vec![2, 3, 4],
            "{b:?}"
        );

        let mut lines = chained(&["a", "b", "c"]);
        lines.remove(0);
        let b = breaks(&lines);
        assert!(b[0].what.contains("first line carries `prev`"), "{b:?}");
    }

    #[test]
    fn unchained_lines_before_the_chain_read_and_a_missing_prev_after_it_breaks() {
        let old = [
            r#"{"v":1,"seq":1,"at":"t","type":"note","text":"a"}"#.to_string(),
            r#"{"v":1,"seq":2,"at":"t","type":"note","text":"b"}"#.to_string(),
        ];
        let mut lines = old.to_vec();
        lines.push(format!(
            r#"{{"v":1,"seq":3,"at":"t","prev":"{}","type":"note","text":"c"}}"#,
            line_hash(lines[1].as_bytes())
        ));
        let (chain, b) = check_bytes((lines.join("\n") + "\n").as_bytes());
        assert!(b.is_empty(), "{b:?}");
        assert_eq!(chain.unchained, vec![2]);
        lines.push(r#"{"v":1,"seq":4,"at":"t","type":"note","text":"d"}"#.into());
        let b = breaks(&lines);
        assert_eq!(b.len(), 1);
        assert!(b[0].what.contains("no `prev`"), "{}", b[0]);
        assert_eq!(
            b[0].to_string().split(':').next(),
            Some("line 4 (seq 4, note)")
        );
    }
}
