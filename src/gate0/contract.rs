//! The contract parse: a pure function from the file's bytes to its
//! criteria, abandonments, ledger errors and the places a writer may edit.
//!
//! It walks the file line by line exactly as the reference floor does: a
//! line starting with three backticks toggles a fence and fenced lines are
//! skipped; `## ACCEPTANCE CRITERIA…` opens the criteria block and any other
//! `## ` line closes it; inside the block each line is classified by
//! [`super::line::classify`]. NUL bytes are invisible to the grammar (the
//! reference drops them while reading) but every byte keeps its offset, so a
//! writer can splice the original file without disturbing anything else.

use std::borrow::Cow;
use std::ops::Range;

use super::line::{Attr, LineKind, classify};

/// Everything GATE 0 knows about a contract file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Contract {
    /// The numbered criteria, in file order (duplicates are not here).
    pub criteria: Vec<Criterion>,
    /// The `ABANDON:` lines of the block, in file order.
    pub abandons: Vec<Abandon>,
    /// Ledger errors, in the order the reference reports them.
    pub errors: Vec<LedgerError>,
    /// The lines of the `## FILE SCOPE` section (outside fences), in order.
    pub file_scope: Vec<LineSpan>,
}

/// One numbered criterion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Criterion {
    /// The digits before the dot, as written (`01` and `1` differ).
    pub id: String,
    /// 1-based line number of the criterion line.
    pub line: usize,
    /// The criterion text (the rest of its line, raw bytes).
    pub text: Vec<u8>,
    /// The last `CHECK:` value (empty: no check).
    pub check: Vec<u8>,
    /// The last `EXPECT:` value (empty: no marker).
    pub expect: Vec<u8>,
    /// The last `EVIDENCE:` line, if any.
    pub evidence: Option<EvidenceLine>,
}

impl Criterion {
    /// True when the criterion has a non-empty CHECK (it runs in `run`).
    pub fn is_runnable(&self) -> bool {
        !self.check.is_empty()
    }

    /// The criterion text for display (invalid UTF-8 as U+FFFD).
    pub fn text_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.text)
    }

    /// The recorded evidence value (empty when there is no EVIDENCE line).
    pub fn recorded_evidence(&self) -> &[u8] {
        self.evidence.as_ref().map_or(&[], |e| e.value.as_slice())
    }
}

/// Where a criterion's `EVIDENCE:` line is, so `run` can rewrite it alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvidenceLine {
    /// 1-based line number.
    pub line: usize,
    /// Byte range from the `EVIDENCE:` keyword to the end of the line's
    /// text (before `\r\n`, `\n` or the end of the file): what a writer
    /// replaces, keeping the indentation and the line ending.
    pub replace: Range<usize>,
    /// The recorded value, trimmed.
    pub value: Vec<u8>,
}

/// One `ABANDON:` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Abandon {
    /// 1-based line number.
    pub line: usize,
    /// The criterion id it names (may be empty).
    pub id: String,
    /// The reason, untrimmed at its end (as the reference prints it).
    pub reason: Vec<u8>,
}

/// One line of the file: its number and the byte range of its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineSpan {
    /// 1-based line number.
    pub number: usize,
    /// Byte range of the text, without the line ending (`\r\n` or `\n`).
    pub text: Range<usize>,
}

/// A malformed ledger: any one of these and nothing runs, nothing is written.
/// The `Display` text is the reference floor's message, byte for byte.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LedgerError {
    /// A criterion id used twice; what follows is orphaned.
    #[error("duplicate criterion id: {id}")]
    DuplicateId {
        /// The id.
        id: String,
        /// Line of the second use.
        line: usize,
    },
    /// An attribute with no criterion to belong to.
    #[error("{attr} at line {line} belongs to no criterion")]
    Orphan {
        /// Which attribute.
        attr: Attr,
        /// Its line.
        line: usize,
    },
    /// An attribute at column 0 (it must be indented).
    #[error("unindented {attr}: at line {line}")]
    Unindented {
        /// Which attribute.
        attr: Attr,
        /// Its line.
        line: usize,
    },
    /// A CHECK with no EXPECT marker.
    #[error("criterion {id}: CHECK without EXPECT (partial oracle)")]
    CheckWithoutExpect {
        /// The criterion id.
        id: String,
    },
    /// An EXPECT marker with no CHECK.
    #[error("criterion {id}: EXPECT without CHECK (partial oracle)")]
    ExpectWithoutCheck {
        /// The criterion id.
        id: String,
    },
    /// A runnable criterion with nowhere to write its evidence.
    #[error("criterion {id}: runnable but has no EVIDENCE: line")]
    NoEvidenceLine {
        /// The criterion id.
        id: String,
    },
    /// An ABANDON naming no criterion of the block.
    #[error("ABANDON names unknown criterion: '{id}'")]
    AbandonUnknown {
        /// The id as written (may be empty).
        id: String,
        /// The ABANDON line.
        line: usize,
    },
    /// An ABANDON without a reason.
    #[error("ABANDON {id}: blank reason (a handoff needs one)")]
    AbandonBlank {
        /// The id as written (may be empty).
        id: String,
        /// The ABANDON line.
        line: usize,
    },
}

/// Parses a contract. Never fails: problems are [`Contract::errors`]; a
/// contract without criteria is reported by the caller.
pub fn parse(bytes: &[u8]) -> Contract {
    let mut p = Parser::default();
    for line in lines(bytes) {
        p.line(bytes, &line);
    }
    p.finish()
}

/// Splits `bytes` into lines like a `read -r` loop: on `\n`, with a last
/// line without newline kept when it is not empty.
pub fn lines(bytes: &[u8]) -> impl Iterator<Item = LineSpan> + '_ {
    let mut start = 0;
    let mut number = 0;
    std::iter::from_fn(move || {
        if start >= bytes.len() {
            return None;
        }
        let end = bytes[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |p| start + p);
        let text_end = if end > start && bytes[end - 1] == b'\r' {
            end - 1
        } else {
            end
        };
        number += 1;
        let span = LineSpan {
            number,
            text: start..text_end,
        };
        start = end + 1;
        Some(span)
    })
}

/// The walk's state between lines.
#[derive(Default)]
struct Parser {
    contract: Contract,
    in_fence: bool,
    in_block: bool,
    in_scope: bool,
    /// Index of the criterion attributes attach to (`None` after a duplicate).
    current: Option<usize>,
}

impl Parser {
    fn line(&mut self, bytes: &[u8], span: &LineSpan) {
        // The text up to the `\n`: a `\r` before it is part of what the
        // reference sees, only the writer keeps it apart.
        let full_end = bytes[span.text.end..].first().map_or(span.text.end, |&b| {
            if b == b'\r' {
                span.text.end + 1
            } else {
                span.text.end
            }
        });
        let raw = &bytes[span.text.start..full_end];
        let clean: Cow<'_, [u8]> = if raw.contains(&0) {
            Cow::Owned(raw.iter().copied().filter(|&b| b != 0).collect())
        } else {
            Cow::Borrowed(raw)
        };
        if clean.starts_with(b"```") {
            self.in_fence = !self.in_fence;
            return;
        }
        if self.in_fence {
            return;
        }
        if clean.starts_with(b"## ") {
            self.in_block = clean.starts_with(b"## ACCEPTANCE CRITERIA");
            self.in_scope = clean.starts_with(b"## FILE SCOPE");
            return;
        }
        if self.in_scope {
            self.contract.file_scope.push(span.clone());
        }
        if self.in_block {
            self.absorb(&clean, raw, span);
        }
    }

    fn absorb(&mut self, clean: &[u8], raw: &[u8], span: &LineSpan) {
        let n = span.number;
        match classify(clean) {
            LineKind::Criterion { id, text } => {
                let id = String::from_utf8_lossy(id).into_owned();
                if self.contract.criteria.iter().any(|c| c.id == id) {
                    self.contract
                        .errors
                        .push(LedgerError::DuplicateId { id, line: n });
                    self.current = None;
                    return;
                }
                self.contract.criteria.push(Criterion {
                    id,
                    line: n,
                    text: text.to_vec(),
                    check: Vec::new(),
                    expect: Vec::new(),
                    evidence: None,
                });
                self.current = Some(self.contract.criteria.len() - 1);
            }
            LineKind::Abandon { id, reason } => self.contract.abandons.push(Abandon {
                line: n,
                id: String::from_utf8_lossy(id).into_owned(),
                reason: reason.to_vec(),
            }),
            LineKind::Unindented(attr) => {
                self.contract
                    .errors
                    .push(LedgerError::Unindented { attr, line: n });
            }
            LineKind::Attribute {
                attr,
                indent,
                value,
            } => {
                let Some(c) = self.current.and_then(|i| self.contract.criteria.get_mut(i)) else {
                    self.contract
                        .errors
                        .push(LedgerError::Orphan { attr, line: n });
                    return;
                };
                match attr {
                    Attr::Check => c.check = value.to_vec(),
                    Attr::Expect => c.expect = value.to_vec(),
                    Attr::Evidence => {
                        let start = span.text.start + raw_offset(raw, indent);
                        c.evidence = Some(EvidenceLine {
                            line: n,
                            replace: start.min(span.text.end)..span.text.end,
                            value: value.to_vec(),
                        });
                    }
                }
            }
            LineKind::Other => {}
        }
    }

    fn finish(mut self) -> Contract {
        let c = &mut self.contract;
        for crit in &c.criteria {
            let id = crit.id.clone();
            match (crit.check.is_empty(), crit.expect.is_empty()) {
                (false, true) => c.errors.push(LedgerError::CheckWithoutExpect { id }),
                (true, false) => c.errors.push(LedgerError::ExpectWithoutCheck { id }),
                (false, false) if crit.evidence.is_none() => {
                    c.errors.push(LedgerError::NoEvidenceLine { id });
                }
                _ => {}
            }
        }
        for a in &c.abandons {
            if !c.criteria.iter().any(|crit| crit.id == a.id) {
                c.errors.push(LedgerError::AbandonUnknown {
                    id: a.id.clone(),
                    line: a.line,
                });
            }
            if super::line::trim(&a.reason).is_empty() {
                c.errors.push(LedgerError::AbandonBlank {
                    id: a.id.clone(),
                    line: a.line,
                });
            }
        }
        self.contract
    }
}

/// Offset in `raw` of the `clean_offset`-th non-NUL byte.
fn raw_offset(raw: &[u8], clean_offset: usize) -> usize {
    let mut seen = 0;
    for (i, &b) in raw.iter().enumerate() {
        if b != 0 {
            if seen == clean_offset {
                return i;
            }
            seen += 1;
        }
    }
    raw.len()
}

#[cfg(test)]
#[path = "contract_tests.rs"]
mod tests;
