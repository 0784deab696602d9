//! Readers of the event streams the agent CLIs print: Claude Code's
//! `--output-format stream-json` and Codex's `exec --json`, one JSON object
//! per line. Each line is read into a typed event ([`claude::Event`],
//! [`codex::Event`]) that keeps only what loopwatch uses, so the engine's
//! adapters (the answer, usage, success or failure) and the TUI's Logs tab
//! (a transcript) read a stream the same way.
//!
//! A stream is hostile input: a line that is not JSON, a JSON value that is
//! not an object, or an object of a type this version does not know is
//! kept as such ([`Line::Raw`], `Other`), never an error and never a panic.
//! An agent's log holds its stderr too, interleaved with the stream: those
//! lines are [`Line::Raw`] as well.

pub mod claude;
pub mod codex;
mod transcript;

pub use transcript::{Entry, EntryKind, render, transcript};

use serde_json::Value;

/// Which CLI printed a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `claude -p --output-format stream-json --verbose`.
    ClaudeStreamJson,
    /// `codex exec --json`.
    CodexJson,
}

impl Format {
    /// The format of an adapter named in `agent.started` (`claude`,
    /// `codex`); `None` for the generic adapter and unknown names.
    pub fn of_adapter(adapter: &str) -> Option<Format> {
        match adapter {
            "claude" => Some(Format::ClaudeStreamJson),
            "codex" => Some(Format::CodexJson),
            _ => None,
        }
    }
}

/// One line of a stream (or of a log holding one).
#[derive(Debug, Clone, PartialEq)]
pub enum Line<'a> {
    /// A JSON object, read whole.
    Json(Value),
    /// Anything else: stderr, a line cut by the end of the bytes, not an
    /// object. Without its line ending.
    Raw(&'a [u8]),
}

/// The lines of `bytes`. The last line counts as complete only when a
/// line ending follows it (a stream cut in the middle of a line leaves a
/// partial object, which is [`Line::Raw`] and flagged by [`last_is_cut`]).
pub fn lines(bytes: &[u8]) -> impl Iterator<Item = Line<'_>> {
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let cut = !bytes.is_empty() && !bytes.ends_with(b"\n");
    let count = body.split(|&b| b == b'\n').count();
    body.split(|&b| b == b'\n')
        .enumerate()
        .filter(|(_, l)| !l.iter().all(u8::is_ascii_whitespace))
        .map(move |(i, l)| {
            let l = l.strip_suffix(b"\r").unwrap_or(l);
            if cut && i + 1 == count {
                return Line::Raw(l);
            }
            match serde_json::from_slice::<Value>(l) {
                Ok(v @ Value::Object(_)) => Line::Json(v),
                _ => Line::Raw(l),
            }
        })
}

/// True when the bytes end in the middle of a line (no final line ending).
pub fn last_is_cut(bytes: &[u8]) -> bool {
    !bytes.is_empty() && !bytes.ends_with(b"\n")
}

/// The string at `key` of `v` (empty when absent or not a string).
fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The number at `key` of `v`, when it is a non-negative integer.
fn u64_at(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

/// The first line of `text`, at most `max` characters, with `…` when
/// something was left out (more characters or more lines).
pub fn first_line(text: &str, max: usize) -> String {
    let trimmed = text.trim();
    let line = trimmed.lines().next().unwrap_or_default();
    let mut out: String = line.chars().take(max).collect();
    if out.chars().count() < line.chars().count() || line.len() < trimmed.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_objects_or_raw_and_a_cut_last_line_is_raw() {
        let bytes = b"{\"type\":\"a\"}\r\nnot json\n[1]\n\n{\"type\":\"b\"";
        let got: Vec<Line<'_>> = lines(bytes).collect();
        assert_eq!(got.len(), 4);
        assert!(matches!(&got[0], Line::Json(v) if v["type"] == "a"));
        assert_eq!(got[1], Line::Raw(b"not json"));
        assert_eq!(got[2], Line::Raw(b"[1]"));
        assert_eq!(got[3], Line::Raw(b"{\"type\":\"b\""));
        assert!(last_is_cut(bytes));
        // Complete: the same object with its line ending is read.
        let whole: Vec<Line<'_>> = lines(b"{\"type\":\"b\"}\n").collect();
        assert!(matches!(&whole[0], Line::Json(_)));
        assert!(!last_is_cut(b"{}\n"));
        assert_eq!(lines(b"").count(), 0);
    }

    #[test]
    fn first_line_marks_what_it_leaves_out() {
        assert_eq!(first_line("  ok  ", 10), "ok");
        assert_eq!(first_line("one\ntwo", 10), "one…");
        assert_eq!(first_line("abcdef", 3), "abc…");
        assert_eq!(first_line("", 3), "");
    }

    #[test]
    fn formats_follow_the_adapter_names() {
        assert_eq!(Format::of_adapter("claude"), Some(Format::ClaudeStreamJson));
        assert_eq!(Format::of_adapter("codex"), Some(Format::CodexJson));
        assert_eq!(Format::of_adapter("generic"), None);
    }
}
