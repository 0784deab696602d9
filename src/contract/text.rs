//! Byte-level view of a contract: its lines with their terminators, where
//! the FILE SCOPE section is (fenced lines skipped, as GATE 0 does), and the
//! line ending a new line must use. Nothing here changes a byte.

/// UTF-8 byte order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One line of the file, as byte offsets into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Line {
    /// First byte of the text (past a BOM on the first line).
    pub start: usize,
    /// One past the last byte of the text (before `\r\n` or `\n`).
    pub end: usize,
    /// First byte of the next line (past the terminator).
    pub next: usize,
    /// The terminator is `\r\n`.
    pub crlf: bool,
}

impl Line {
    /// The line ends with a terminator (only the last line may not).
    pub fn terminated(&self) -> bool {
        self.next > self.end
    }
}

/// A line ending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Eol {
    Lf,
    CrLf,
}

impl Eol {
    pub fn as_bytes(self) -> &'static [u8] {
        match self {
            Eol::Lf => b"\n",
            Eol::CrLf => b"\r\n",
        }
    }

    /// The ending most of these lines use (`\n` on a tie or when none is terminated).
    pub fn of<'a>(lines: impl IntoIterator<Item = &'a Line>) -> Eol {
        let (mut crlf, mut lf) = (0usize, 0usize);
        for line in lines.into_iter().filter(|l| l.terminated()) {
            if line.crlf {
                crlf += 1;
            } else {
                lf += 1;
            }
        }
        if crlf > lf { Eol::CrLf } else { Eol::Lf }
    }
}

/// The `## FILE SCOPE` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Section {
    /// Index of the heading line.
    pub heading: usize,
    /// Index one past the section's last line (the next `## ` heading, or the line count).
    pub end: usize,
    /// Indices of the section's lines that count: fence markers and fenced lines left out.
    pub body: Vec<usize>,
}

/// Splits `bytes` into lines. An empty input has no line; a final `\n` does
/// not start an empty line.
pub(crate) fn split_lines(bytes: &[u8]) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut start = if bytes.starts_with(BOM) { BOM.len() } else { 0 };
    while start < bytes.len() {
        let (end, next, crlf) = match bytes[start..].iter().position(|&b| b == b'\n') {
            Some(rel) => {
                let nl = start + rel;
                let crlf = nl > start && bytes[nl - 1] == b'\r';
                (if crlf { nl - 1 } else { nl }, nl + 1, crlf)
            }
            None => (bytes.len(), bytes.len(), false),
        };
        lines.push(Line {
            start,
            end,
            next,
            crlf,
        });
        start = next;
    }
    lines
}

/// Finds the first `## FILE SCOPE` section outside fenced blocks.
///
/// A line starting with three backticks toggles a fence; fenced lines are
/// neither headings nor entries. The section runs to the next `## ` line
/// outside a fence, or to the end of the file.
pub(crate) fn find_file_scope(bytes: &[u8], lines: &[Line]) -> Option<Section> {
    let text = |i: usize| &bytes[lines[i].start..lines[i].end];
    let mut fenced = false;
    let mut section: Option<Section> = None;
    for i in 0..lines.len() {
        let t = text(i);
        if t.starts_with(b"```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        match section.as_mut() {
            None if t.starts_with(b"## FILE SCOPE") => {
                section = Some(Section {
                    heading: i,
                    end: lines.len(),
                    body: Vec::new(),
                });
            }
            None => {}
            Some(s) if t.starts_with(b"## ") => {
                s.end = i;
                break;
            }
            Some(s) => s.body.push(i),
        }
    }
    section
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_keep_terminators_bom_and_missing_final_newline() {
        let bytes = b"\xEF\xBB\xBFa\r\nbc\n\nd";
        let lines = split_lines(bytes);
        let line = |start, end, next, crlf| Line {
            start,
            end,
            next,
            crlf,
        };
        assert_eq!(
            lines,
            [
                line(3, 4, 6, true),
                line(6, 8, 9, false),
                line(9, 9, 10, false),
                line(10, 11, 11, false),
            ]
        );
        assert!(!lines[3].terminated());
        assert!(split_lines(b"").is_empty());
        assert_eq!(split_lines(b"x\n").len(), 1);
    }

    #[test]
    fn eol_follows_the_majority() {
        let lines = split_lines(b"a\r\nb\r\nc\nd");
        assert_eq!(Eol::of(&lines), Eol::CrLf);
        assert_eq!(Eol::of(&split_lines(b"a\r\nb\n")), Eol::Lf);
        assert_eq!(Eol::of(&split_lines(b"a")), Eol::Lf);
    }

    #[test]
    fn section_skips_fences_and_ends_at_next_heading() {
        let bytes =
            b"# C\n```\n## FILE SCOPE\nx\n```\n## FILE SCOPE\na\n```\n## NOT\n```\nb\n## NEXT\nc\n";
        let lines = split_lines(bytes);
        let s = find_file_scope(bytes, &lines).unwrap();
        assert_eq!(
            s,
            Section {
                heading: 5,
                end: 11,
                body: vec![6, 10]
            }
        );
    }

    #[test]
    fn section_may_run_to_the_end_or_be_absent() {
        let bytes = b"## FILE SCOPE\r\n- a\r\n";
        let s = find_file_scope(bytes, &split_lines(bytes)).unwrap();
        assert_eq!(
            s,
            Section {
                heading: 0,
                end: 2,
                body: vec![1]
            }
        );
        assert_eq!(
            find_file_scope(b"## FILE\n", &split_lines(b"## FILE\n")),
            None
        );
    }
}
