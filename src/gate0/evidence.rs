//! The evidence a check leaves: the one-line summary of its output, the
//! marker search, the `EVIDENCE:` text, and the splice that writes it back.
//!
//! Output is consumed as a stream so that a check printing gigabytes costs
//! constant memory: [`OutputSink`] drops NUL bytes (as the reference's
//! command substitution does), searches the marker incrementally over the
//! whole stream, keeps the first [`HEAD_CAP`] bytes for display, and builds
//! the summary on the fly: invalid UTF-8 as U+FFFD, tab/CR/LF as spaces,
//! runs of spaces squeezed, whitespace trimmed at both ends, cut at
//! [`SUMMARY_CAP`] characters plus `…`.

use std::ops::Range;

use super::line::is_space_char;

/// Characters of output kept in an `EVIDENCE:` line.
pub const SUMMARY_CAP: usize = 140;

/// Bytes of raw output kept for display.
pub const HEAD_CAP: usize = 1 << 20;

/// How a check ended, as written into the contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckOutcome {
    /// Exit 0 and the marker was in the output.
    Met {
        /// The output summary.
        summary: String,
    },
    /// A nonzero exit (128+signal when killed by a signal).
    Nonzero {
        /// The exit code.
        code: i32,
        /// The output summary.
        summary: String,
    },
    /// Exit 0 but the marker never appeared.
    MarkerAbsent {
        /// The output summary.
        summary: String,
    },
    /// The clock ran out; the check's process group was killed.
    TimedOut,
}

impl CheckOutcome {
    /// True for [`CheckOutcome::Met`].
    pub fn is_met(&self) -> bool {
        matches!(self, CheckOutcome::Met { .. })
    }

    /// The `EVIDENCE:` value; `timeout_label` is the timeout as given.
    pub fn evidence(&self, timeout_label: &str) -> String {
        match self {
            CheckOutcome::Met { summary } => format!("MET exit=0 marker-found :: {summary}"),
            CheckOutcome::Nonzero { code, summary } => {
                format!("NOT-MET exit={code} (nonzero) :: {summary}")
            }
            CheckOutcome::MarkerAbsent { summary } => {
                format!("NOT-MET exit=0 marker-absent :: {summary}")
            }
            CheckOutcome::TimedOut => format!("NOT-MET timeout={timeout_label}s"),
        }
    }
}

/// Consumes a check's combined output, chunk by chunk.
#[derive(Debug)]
pub struct OutputSink {
    marker: Vec<u8>,
    /// The last `marker.len() - 1` bytes, for matches across chunks.
    tail: Vec<u8>,
    found: bool,
    head: Vec<u8>,
    head_truncated: bool,
    summary: Summary,
    /// An incomplete UTF-8 sequence at the end of the last chunk.
    pending: Vec<u8>,
}

impl OutputSink {
    /// A sink looking for `marker` (an empty marker is always found).
    pub fn new(marker: &[u8]) -> Self {
        OutputSink {
            marker: marker.to_vec(),
            tail: Vec::new(),
            found: marker.is_empty(),
            head: Vec::new(),
            head_truncated: false,
            summary: Summary::default(),
            pending: Vec::new(),
        }
    }

    /// Feeds the next bytes of output.
    pub fn feed(&mut self, chunk: &[u8]) {
        let clean: Vec<u8> = chunk.iter().copied().filter(|&b| b != 0).collect();
        self.search(&clean);
        let room = HEAD_CAP - self.head.len();
        self.head.extend_from_slice(&clean[..room.min(clean.len())]);
        self.head_truncated |= clean.len() > room;
        let mut bytes = std::mem::take(&mut self.pending);
        bytes.extend_from_slice(&clean);
        self.decode(&bytes, false);
    }

    /// Ends the stream: `(marker found, summary, head, head truncated)`.
    pub fn finish(mut self) -> SinkResult {
        let pending = std::mem::take(&mut self.pending);
        self.decode(&pending, true);
        SinkResult {
            marker_found: self.found,
            summary: self.summary.finish(),
            head: self.head,
            head_truncated: self.head_truncated,
        }
    }

    fn search(&mut self, clean: &[u8]) {
        if self.found {
            return;
        }
        let keep = self.marker.len() - 1;
        let mut window = std::mem::take(&mut self.tail);
        window.extend_from_slice(clean);
        self.found = contains(&window, &self.marker);
        let from = window.len().saturating_sub(keep);
        self.tail = window.split_off(from);
    }

    /// Decodes `bytes` into the summary; without `last`, an incomplete
    /// sequence at the end waits for the next chunk.
    fn decode(&mut self, mut bytes: &[u8], last: bool) {
        while !bytes.is_empty() {
            match std::str::from_utf8(bytes) {
                Ok(s) => return s.chars().for_each(|c| self.summary.push(c)),
                Err(e) => {
                    let (valid, rest) = bytes.split_at(e.valid_up_to());
                    // Invariant: from_utf8 validated exactly this prefix.
                    let valid = std::str::from_utf8(valid).unwrap_or_default();
                    valid.chars().for_each(|c| self.summary.push(c));
                    match e.error_len() {
                        Some(n) => {
                            self.summary.push(char::REPLACEMENT_CHARACTER);
                            bytes = &rest[n..];
                        }
                        None if last => {
                            self.summary.push(char::REPLACEMENT_CHARACTER);
                            return;
                        }
                        None => {
                            self.pending = rest.to_vec();
                            return;
                        }
                    }
                }
            }
        }
    }
}

/// What an [`OutputSink`] learnt from a whole stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SinkResult {
    /// The marker occurred somewhere in the output.
    pub marker_found: bool,
    /// The one-line summary for the evidence.
    pub summary: String,
    /// The first [`HEAD_CAP`] bytes of output (NUL bytes dropped).
    pub head: Vec<u8>,
    /// More output followed the head.
    pub head_truncated: bool,
}

/// The incremental flatten / squeeze / trim / cut of the output.
#[derive(Debug, Default)]
struct Summary {
    kept: String,
    kept_chars: usize,
    /// Whitespace seen after the last kept character (count, first few).
    held: Vec<char>,
    held_count: usize,
    last_was_space: bool,
    overflow: bool,
}

impl Summary {
    fn push(&mut self, c: char) {
        let c = if matches!(c, '\t' | '\r' | '\n') {
            ' '
        } else {
            c
        };
        if c == ' ' && self.last_was_space {
            return;
        }
        self.last_was_space = c == ' ';
        if self.overflow {
            return;
        }
        if is_space_char(c) {
            if self.kept_chars > 0 {
                if self.held.len() <= SUMMARY_CAP {
                    self.held.push(c);
                }
                self.held_count += 1;
            }
            return;
        }
        if self.kept_chars + self.held_count + 1 > SUMMARY_CAP {
            let room = SUMMARY_CAP - self.kept_chars;
            self.kept.extend(self.held.iter().take(room));
            self.kept_chars += room.min(self.held_count);
            if self.kept_chars < SUMMARY_CAP {
                self.kept.push(c);
            }
            self.overflow = true;
            return;
        }
        self.kept.extend(self.held.drain(..));
        self.kept_chars += self.held_count + 1;
        self.held_count = 0;
        self.kept.push(c);
    }

    fn finish(self) -> String {
        if self.overflow {
            self.kept + "…"
        } else {
            self.kept
        }
    }
}

/// True when `needle` occurs in `haystack`.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}

/// The summary of a whole output at once (the same rules as the stream).
pub fn summarize(output: &[u8]) -> String {
    let mut sink = OutputSink::new(b"");
    sink.feed(output);
    sink.finish().summary
}

/// Returns `original` with each range replaced by its bytes; ranges must
/// be sorted and disjoint. Every other byte is copied through.
pub fn splice(original: &[u8], edits: &[(Range<usize>, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(original.len() + edits.len() * 64);
    let mut at = 0;
    for (range, bytes) in edits {
        out.extend_from_slice(&original[at..range.start]);
        out.extend_from_slice(bytes);
        at = range.end;
    }
    out.extend_from_slice(&original[at..]);
    out
}

#[cfg(test)]
#[path = "evidence_tests.rs"]
mod tests;
