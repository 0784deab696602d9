//! The line grammar of the acceptance-criteria block, over raw bytes.
//!
//! Each function mirrors one pattern of the reference floor as it behaves in
//! a UTF-8 locale: "whitespace" is the POSIX `[:space:]` class of that locale
//! (ASCII tab, LF, VT, FF, CR, space, plus the Unicode space separators
//! U+1680, U+2000–U+2006, U+2008–U+200A, U+2028, U+2029, U+205F, U+3000;
//! never U+00A0, U+2007 or U+202F). Repetitions are greedy, as they are there.
//! Bytes that are not valid UTF-8 are ordinary characters here (the
//! reference would silently skip such a line in a UTF-8 locale; we never
//! demote a line that way).

/// The attribute keywords an indented line can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr, strum::Display)]
#[strum(serialize_all = "UPPERCASE")]
pub enum Attr {
    /// `CHECK:` — the shell command.
    Check,
    /// `EXPECT:` — the success marker.
    Expect,
    /// `EVIDENCE:` — the recorded result.
    Evidence,
}

impl Attr {
    /// The keyword as written in a contract (without the colon).
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Recognises `KEYWORD:` at the start of `bytes`; returns the attribute
    /// and the length of the keyword plus its colon.
    fn at_start(bytes: &[u8]) -> Option<(Attr, usize)> {
        [Attr::Check, Attr::Expect, Attr::Evidence]
            .into_iter()
            .find_map(|a| {
                let k = a.as_str().as_bytes();
                (bytes.starts_with(k) && bytes.get(k.len()) == Some(&b':'))
                    .then_some((a, k.len() + 1))
            })
    }
}

/// What one line inside the criteria block is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineKind<'a> {
    /// `N.<ws>text` at column 0.
    Criterion {
        /// The digits.
        id: &'a [u8],
        /// Everything after the whitespace that follows the dot.
        text: &'a [u8],
    },
    /// `ABANDON:<ws>[N]<ws>reason` at column 0.
    Abandon {
        /// The digits (possibly empty).
        id: &'a [u8],
        /// The rest of the line, untrimmed.
        reason: &'a [u8],
    },
    /// `CHECK:` / `EXPECT:` / `EVIDENCE:` at column 0 (an error).
    Unindented(Attr),
    /// An indented attribute.
    Attribute {
        /// Which one.
        attr: Attr,
        /// Length of the leading whitespace.
        indent: usize,
        /// The value, trimmed of whitespace at both ends.
        value: &'a [u8],
    },
    /// Anything else (ignored).
    Other,
}

/// Classifies one line (without its line ending and without NUL bytes),
/// trying the patterns in the reference order.
pub fn classify(line: &[u8]) -> LineKind<'_> {
    if let Some(k) = criterion(line) {
        return k;
    }
    if let Some(rest) = line.strip_prefix(b"ABANDON:") {
        let rest = trim_start(rest);
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        let (id, reason) = rest.split_at(digits);
        return LineKind::Abandon {
            id,
            reason: trim_start(reason),
        };
    }
    if let Some((attr, _)) = Attr::at_start(line) {
        return LineKind::Unindented(attr);
    }
    let indent = line.len() - trim_start(line).len();
    if indent > 0
        && let Some((attr, klen)) = Attr::at_start(&line[indent..])
    {
        let value = trim(&line[indent + klen..]);
        return LineKind::Attribute {
            attr,
            indent,
            value,
        };
    }
    LineKind::Other
}

/// `^([0-9]+)\.[[:space:]]+(.*)$`.
fn criterion(line: &[u8]) -> Option<LineKind<'_>> {
    let digits = line.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || line.get(digits) != Some(&b'.') {
        return None;
    }
    let after = &line[digits + 1..];
    let text = trim_start(after);
    (text.len() < after.len()).then_some(LineKind::Criterion {
        id: &line[..digits],
        text,
    })
}

/// Length of the whitespace character starting at `bytes[0]`, if it is one.
pub fn space_at(bytes: &[u8]) -> Option<usize> {
    match bytes {
        [b'\t'..=b'\r' | b' ', ..] => Some(1),
        [0xE1, 0x9A, 0x80, ..]
        | [0xE2, 0x80, 0x80..=0x86 | 0x88..=0x8A | 0xA8 | 0xA9, ..]
        | [0xE2, 0x81, 0x9F, ..]
        | [0xE3, 0x80, 0x80, ..] => Some(3),
        _ => None,
    }
}

/// Length of the whitespace character ending at the end of `bytes`, if any.
fn space_before_end(bytes: &[u8]) -> Option<usize> {
    match bytes {
        [.., b'\t'..=b'\r' | b' '] => Some(1),
        [.., a, b, c] if space_at(&[*a, *b, *c]) == Some(3) => Some(3),
        _ => None,
    }
}

/// `bytes` without its leading whitespace.
pub fn trim_start(mut bytes: &[u8]) -> &[u8] {
    while let Some(n) = space_at(bytes) {
        bytes = &bytes[n..];
    }
    bytes
}

/// `bytes` without its trailing whitespace.
pub fn trim_end(mut bytes: &[u8]) -> &[u8] {
    while let Some(n) = space_before_end(bytes) {
        bytes = &bytes[..bytes.len() - n];
    }
    bytes
}

/// `bytes` without whitespace at either end.
pub fn trim(bytes: &[u8]) -> &[u8] {
    trim_end(trim_start(bytes))
}

/// True when the character is whitespace in the sense of this module.
pub fn is_space_char(c: char) -> bool {
    let mut buf = [0u8; 4];
    space_at(c.encode_utf8(&mut buf).as_bytes()).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn criterion_needs_digits_dot_and_space() {
        let c = |id: &'static [u8], text: &'static [u8]| LineKind::Criterion { id, text };
        assert_eq!(classify(b"12.\t  text  "), c(b"12", b"text  "));
        assert_eq!(classify(b"1. "), c(b"1", b""));
        assert_eq!(classify(b"1.x"), LineKind::Other);
        assert_eq!(classify(b" 1. x"), LineKind::Other);
        assert_eq!(classify("1.\u{2003}x".as_bytes()), c(b"1", b"x"));
        assert_eq!(classify("1.\u{a0}x".as_bytes()), LineKind::Other);
    }

    #[test]
    fn abandon_is_greedy_like_the_reference() {
        let a = |id: &'static [u8], reason: &'static [u8]| LineKind::Abandon { id, reason };
        assert_eq!(classify(b"ABANDON:  2  why "), a(b"2", b"why "));
        assert_eq!(classify(b"ABANDON:why"), a(b"", b"why"));
        assert_eq!(classify(b"ABANDON: 12abc"), a(b"12", b"abc"));
        assert_eq!(classify(b"ABANDON: 2\r"), a(b"2", b""));
        assert_eq!(classify(b"ABANDON:2 3 x"), a(b"2", b"3 x"));
    }

    #[test]
    fn attributes_indented_or_not() {
        assert_eq!(classify(b"CHECK: x"), LineKind::Unindented(Attr::Check));
        assert_eq!(classify(b"EVIDENCE:"), LineKind::Unindented(Attr::Evidence));
        assert_eq!(
            classify(b" \tEXPECT:  ok \r"),
            LineKind::Attribute {
                attr: Attr::Expect,
                indent: 2,
                value: b"ok"
            }
        );
        assert_eq!(classify(b"  CHECKS: x"), LineKind::Other);
        assert_eq!(classify(b"  CHECK : x"), LineKind::Other);
    }

    #[test]
    fn trims_unicode_spaces_but_not_nbsp() {
        assert_eq!(trim("\u{3000} a \u{2029}".as_bytes()), b"a");
        assert_eq!(trim("\u{a0}a".as_bytes()), "\u{a0}a".as_bytes());
        assert!(is_space_char('\u{205f}'));
        assert!(!is_space_char('\u{2007}'));
    }
}
