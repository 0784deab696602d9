//! Line normalisation shared by every reader of agent text.
//!
//! The input is bytes written by an AI agent. This module turns them into
//! numbered lines and nothing else: a leading UTF-8 BOM is dropped, `\n` and
//! `\r\n` both end a line, and trailing spaces, tabs and carriage returns are
//! ignored. Invalid UTF-8 is an error naming the line and byte column, never
//! replaced by U+FFFD: a gate output that is not text is a corrupt output, and
//! a fail-closed reader must not guess what it said.
//!
//! The dash that separates verdict words and row fields is ` — ` (U+2014 with
//! a space either side); agents sometimes type ` -- ` instead. [`SEPARATOR`]
//! accepts both, and only where a separator is expected: free text keeps the
//! characters the agent wrote.

use std::sync::LazyLock;

use regex::Regex;

/// One line of input, without its line ending or trailing blanks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    /// 1-based line number in the input (a BOM does not shift it).
    pub number: usize,
    /// The text, trailing spaces, tabs and `\r` removed.
    pub text: &'a str,
}

impl Line<'_> {
    /// True when the line holds nothing but whitespace.
    pub fn is_blank(&self) -> bool {
        self.text.trim().is_empty()
    }
}

/// Where the input stopped being UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidUtf8 {
    /// 1-based line of the first invalid byte.
    pub line: usize,
    /// 1-based byte column of the first invalid byte in that line.
    pub column: usize,
}

/// A field separator: ` — ` (em dash) or ` -- `, with blanks either side
/// (or the end of the line after it).
pub static SEPARATOR: LazyLock<Regex> = static_regex!(r"[ \t]+(?:—|--)(?:[ \t]+|$)");

/// Checks that `bytes` are UTF-8 and drops a leading BOM.
pub fn decode(bytes: &[u8]) -> Result<&str, InvalidUtf8> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(text.strip_prefix('\u{feff}').unwrap_or(text)),
        Err(e) => {
            let valid = bytes.get(..e.valid_up_to()).unwrap_or_default();
            let line = 1 + valid.iter().filter(|&&b| b == b'\n').count();
            let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
            let mut column = valid.len() - line_start + 1;
            if line == 1 && valid.starts_with("\u{feff}".as_bytes()) {
                column -= 3;
            }
            Err(InvalidUtf8 { line, column })
        }
    }
}

/// Splits decoded text into numbered lines. A final line ending does not
/// open an extra empty line.
pub fn split(text: &str) -> Vec<Line<'_>> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    if body.is_empty() && text.len() <= 1 {
        return Vec::new();
    }
    body.split('\n')
        .enumerate()
        .map(|(i, raw)| Line {
            number: i + 1,
            text: raw.trim_end_matches([' ', '\t', '\r']),
        })
        .collect()
}

/// [`decode`] then [`split`].
pub fn lines(bytes: &[u8]) -> Result<Vec<Line<'_>>, InvalidUtf8> {
    decode(bytes).map(split)
}

/// Splits `text` at its first separator: `(before, after)`.
pub fn split_once_sep(text: &str) -> Option<(&str, &str)> {
    SEPARATOR
        .find(text)
        .map(|m| (&text[..m.start()], &text[m.end()..]))
}

/// Splits `text` at every separator.
pub fn split_sep(text: &str) -> Vec<&str> {
    SEPARATOR.split(text).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bom_crlf_and_trailing_blanks_are_dropped() {
        let got = lines(b"\xEF\xBB\xBFone \t\r\ntwo\r\n\r\nthree\t").unwrap();
        let texts: Vec<_> = got.iter().map(|l| (l.number, l.text)).collect();
        assert_eq!(texts, vec![(1, "one"), (2, "two"), (3, ""), (4, "three")]);
    }

    #[test]
    fn final_newline_opens_no_line_and_empty_input_has_none() {
        assert_eq!(lines(b"a\n").unwrap().len(), 1);
        assert_eq!(lines(b"").unwrap().len(), 0);
        assert_eq!(lines(b"\n").unwrap().len(), 0);
        assert_eq!(lines(b"\n\n").unwrap().len(), 2);
        assert_eq!(lines(b"\xEF\xBB\xBF").unwrap().len(), 0);
    }

    #[test]
    fn invalid_utf8_names_line_and_column() {
        assert_eq!(
            lines(b"ok\nab\xFFc\n"),
            Err(InvalidUtf8 { line: 2, column: 3 })
        );
        assert_eq!(lines(b"\xC3"), Err(InvalidUtf8 { line: 1, column: 1 }));
        assert_eq!(
            lines(b"\xEF\xBB\xBFx\xFF"),
            Err(InvalidUtf8 { line: 1, column: 2 })
        );
    }

    #[test]
    fn separator_accepts_em_dash_and_double_hyphen_only_with_blanks() {
        assert_eq!(split_once_sep("a — b — c"), Some(("a", "b — c")));
        assert_eq!(split_once_sep("a -- b"), Some(("a", "b")));
        assert_eq!(split_once_sep("a —"), Some(("a", "")));
        assert_eq!(split_once_sep("a—b"), None);
        assert_eq!(split_once_sep("--flag a"), None);
        assert_eq!(split_sep("r — f:1 -- why"), vec!["r", "f:1", "why"]);
    }

    #[test]
    fn blank_lines_are_recognised() {
        let l = Line {
            number: 1,
            text: "  \t",
        };
        assert!(l.is_blank());
        assert!(
            !Line {
                number: 1,
                text: " x"
            }
            .is_blank()
        );
    }
}
