//! Makes text that came from files safe to draw on a terminal.
//!
//! Every string read from `.pipeline/` (gate outputs, findings, logs, event
//! fields) passes through here before it becomes a span. Control characters
//! and escape sequences are turned into visible stand-ins (`␛[31m` for an
//! ESC sequence, `␍` for a carriage return, `<U+202E>` for a bidi override
//! or an invisible character), tabs are expanded, invalid UTF-8 becomes
//! U+FFFD, and a line can be cut at a display width with a `…` marker.
//! Nothing here ever emits a byte the terminal would interpret: the output
//! holds no character below U+0020, no DEL and no C1 control.

use std::borrow::Cow;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// The marker put at the end of a line cut at its display width.
pub const CUT_MARKER: char = '…';

/// Columns between tab stops when a tab is expanded.
pub const TAB_STOP: usize = 4;

/// Sanitises one line of text with no width limit. A `\n` inside it is
/// shown as `␊` (use [`sanitize_lines`] to split text into lines instead).
pub fn sanitize(text: &str) -> String {
    sanitize_line(text, usize::MAX)
}

/// Sanitises one line of text and cuts it at `max_width` display columns,
/// ending a cut line with [`CUT_MARKER`]. Work is bounded by `max_width`,
/// not by the length of `text`, so a 10 MB line costs no more than a short one.
pub fn sanitize_line(text: &str, max_width: usize) -> String {
    let mut out = LineBuilder::new(max_width);
    for c in text.chars() {
        if !out.push_char(c) {
            break;
        }
    }
    out.finish()
}

/// [`sanitize_line`] for bytes that may not be UTF-8: each invalid sequence
/// becomes U+FFFD.
pub fn sanitize_bytes(bytes: &[u8], max_width: usize) -> String {
    sanitize_line(&lossy(bytes), max_width)
}

/// Splits text into lines (on `\n`; a `\r` right before it is part of the
/// line ending) and sanitises each, cut at `max_width`.
pub fn sanitize_lines(text: &str, max_width: usize) -> Vec<String> {
    text.split('\n')
        .map(|l| sanitize_line(l.strip_suffix('\r').unwrap_or(l), max_width))
        .collect()
}

/// Sanitises text typed or pasted by a person into a single-line field:
/// line breaks and tabs become spaces, every other control is dropped.
pub fn sanitize_input(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() || invisible(c) => {}
            c => out.push(c),
        }
    }
    out
}

/// The display width of an already sanitised string.
pub fn width(text: &str) -> usize {
    UnicodeWidthStr::width(text)
}

/// Bytes as text, invalid sequences replaced by U+FFFD.
pub fn lossy(bytes: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

/// Builds one sanitised line, tracking its display width.
struct LineBuilder {
    max: usize,
    out: String,
    width: usize,
    /// Length of `out` (bytes) and its width at the last point where a
    /// marker would still fit.
    keep: (usize, usize),
    chars: usize,
    cut: bool,
}

/// Zero-width characters are not counted by width, so a flood of them
/// (combining marks) is bounded by count instead.
const MAX_CHARS_PER_COLUMN: usize = 8;

impl LineBuilder {
    fn new(max: usize) -> Self {
        LineBuilder {
            max,
            out: String::new(),
            width: 0,
            keep: (0, 0),
            chars: 0,
            cut: false,
        }
    }

    /// Adds one source character; false once the line is full.
    fn push_char(&mut self, c: char) -> bool {
        match c {
            '\t' => {
                let n = TAB_STOP - self.width % TAB_STOP;
                for _ in 0..n {
                    if !self.push_visible(" ") {
                        return false;
                    }
                }
                true
            }
            '\u{1b}' => self.push_visible("␛"),
            '\u{7f}' => self.push_visible("␡"),
            c if (c as u32) < 0x20 => {
                // Control Pictures block: U+2400 + code (␀ … ␟); `\r` is ␍.
                let pic = char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}');
                self.push_visible(pic.encode_utf8(&mut [0; 4]))
            }
            c if ('\u{80}'..='\u{9f}').contains(&c) || invisible(c) => {
                let s = stand_in(c).unwrap_or_default();
                self.push_visible(&s)
            }
            c => self.push_visible(c.encode_utf8(&mut [0; 4])),
        }
    }

    /// Adds a piece of already safe text; false once the line is full.
    fn push_visible(&mut self, piece: &str) -> bool {
        let w: usize = piece.chars().map(|c| c.width().unwrap_or(0)).sum();
        self.chars += piece.chars().count();
        let char_cap = self
            .max
            .saturating_mul(MAX_CHARS_PER_COLUMN)
            .saturating_add(64);
        if self.width + w > self.max || self.chars > char_cap {
            self.cut = true;
            return false;
        }
        self.out.push_str(piece);
        self.width += w;
        if self.width < self.max {
            self.keep = (self.out.len(), self.width);
        }
        true
    }

    fn finish(mut self) -> String {
        if self.cut {
            if self.max == 0 {
                return String::new();
            }
            self.out.truncate(self.keep.0);
            self.out.push(CUT_MARKER);
        }
        // Per-character widths can undercount a few sequences (a variation
        // selector widening the character before it): trim until the whole
        // string fits, so the width promise holds for the string as drawn.
        if UnicodeWidthStr::width(self.out.as_str()) > self.max {
            while !self.out.is_empty() && UnicodeWidthStr::width(self.out.as_str()) + 1 > self.max {
                self.out.pop();
            }
            if self.max > 0 {
                self.out.push(CUT_MARKER);
            }
        }
        self.out
    }
}

/// Invisible characters that can reorder or hide text: bidi embeddings,
/// overrides and isolates, directional marks, zero-width characters, the
/// BOM, and the line / paragraph separators.
fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{202A}'..='\u{202E}'
            | '\u{2066}'..='\u{2069}'
            | '\u{200E}'
            | '\u{200F}'
            | '\u{061C}'
            | '\u{200B}'..='\u{200D}'
            | '\u{2060}'..='\u{2065}'
            | '\u{FEFF}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// The one escape table of every printed character: `None` when `c` may be
/// written as it is, else its visible stand-in. C0 controls and DEL become
/// their Control Pictures symbols (`␛`, `␉`, `␡`…), C1 controls and the
/// bidirectional / invisible formatting characters become `<U+XXXX>`.
/// `\n` is a control here: callers that keep line breaks handle it first.
pub fn stand_in(c: char) -> Option<String> {
    match c {
        '\0'..='\x1f' => Some(
            char::from_u32(0x2400 + c as u32)
                .unwrap_or('\u{fffd}')
                .to_string(),
        ),
        '\x7f' => Some('\u{2421}'.to_string()),
        c if ('\u{80}'..='\u{9f}').contains(&c) || invisible(c) => {
            Some(format!("<U+{:04X}>", c as u32))
        }
        _ => None,
    }
}

/// True when [`stand_in`] would replace `c`: JSON output escapes exactly
/// these (as `\uXXXX`), so the two never disagree on what is unsafe.
pub fn needs_escape(c: char) -> bool {
    matches!(c, '\0'..='\x1f' | '\x7f' | '\u{80}'..='\u{9f}') || invisible(c)
}

/// One field of a printed line (an id, a summary, a file name): every
/// control, line break included, becomes its visible stand-in, so text from
/// data can never start a line of its own (a forged `NEXT:` line) nor reach
/// the terminal as an escape sequence. Unlike [`sanitize`], tabs are shown
/// (`␉`) rather than expanded, and nothing is cut.
pub fn field(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match stand_in(c) {
            Some(s) => out.push_str(&s),
            None => out.push(c),
        }
    }
    out
}

/// Makes command output safe for a terminal: invalid UTF-8 becomes U+FFFD
/// and every character [`stand_in`] replaces is replaced, except line feeds,
/// which end the output's own lines. Every command but `gate0` (whose piped
/// stdout stays the reference floor's, byte for byte) prints through it.
pub fn terminal_text(report: &[u8]) -> String {
    let mut out = String::with_capacity(report.len());
    for c in String::from_utf8_lossy(report).chars() {
        match c {
            '\n' => out.push('\n'),
            c => match stand_in(c) {
                Some(s) => out.push_str(&s),
                None => out.push(c),
            },
        }
    }
    out
}

pub mod json;

#[cfg(test)]
mod tests;
