//! Where each run of a runner begins in a log that holds several (a re-run
//! appended to the same file, two invocations in one CI step).
//!
//! Each reader classifies its own lines as [`Mark`]s; [`split`] cuts the
//! log into runs: a hard start always opens a run, a soft start opens one
//! only after results, and a result after a run's closing summary belongs to
//! the next run. Every run is read: the judge decides which one proves what
//! (the last run in which a test ran; a failure no later run fixed).

use std::ops::Range;

/// What a line means for the cutting into runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mark {
    /// A line that always opens a run (pytest's session header, `TAP version 13`).
    Start,
    /// A line that opens a run once the current one has results (cargo's
    /// `Compiling`/`Finished`: many of them precede one run's tests).
    SoftStart,
    /// A result of the run (a test line, a file line).
    Content,
    /// The run's closing summary line.
    End,
    /// Anything else (output, the rest of a summary block).
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Nothing of a run yet.
    Empty,
    /// A run opened, no result yet.
    Started,
    /// A run with results, not closed.
    Open,
    /// A run closed by its summary.
    Closed,
}

/// The line ranges of the runs in `lines`, in order, cut with `mark`
/// (called once per line, in order). The first run starts at the log's
/// first line; none when no line is marked.
pub(super) fn split(lines: &[String], mut mark: impl FnMut(&str) -> Mark) -> Vec<Range<usize>> {
    let mut starts: Vec<usize> = Vec::new();
    let mut state = State::Empty;
    for (i, line) in lines.iter().enumerate() {
        match (mark(line), state) {
            (Mark::Start | Mark::SoftStart, State::Empty) => {
                starts.push(0);
                state = State::Started;
            }
            (Mark::Content, State::Empty) => {
                starts.push(0);
                state = State::Open;
            }
            (Mark::End, State::Empty) => {
                starts.push(0);
                state = State::Closed;
            }
            (Mark::Start, _) | (Mark::SoftStart, State::Open | State::Closed) => {
                starts.push(i);
                state = State::Started;
            }
            (Mark::Content, State::Closed) => {
                starts.push(i);
                state = State::Open;
            }
            (Mark::Content, _) => state = State::Open,
            (Mark::End, State::Closed) => starts.push(i),
            (Mark::End, _) => state = State::Closed,
            (Mark::SoftStart, State::Started) | (Mark::Other, _) => {}
        }
    }
    ranges(&starts, lines.len())
}

/// The runs that start at `starts` (in order) in `len` lines.
pub(super) fn ranges(starts: &[usize], len: usize) -> Vec<Range<usize>> {
    let ends = starts.iter().skip(1).copied().chain([len]);
    starts
        .iter()
        .copied()
        .zip(ends)
        .map(|(s, e)| s..e)
        .collect()
}

/// Each run of `runs` read by `read` (its lines and the index of its first
/// line): those it recognises, in order.
pub(super) fn read_each(
    lines: &[String],
    runs: Vec<Range<usize>>,
    read: impl Fn(&[String], usize) -> Option<super::RunnerLog>,
) -> Vec<super::RunnerLog> {
    runs.into_iter()
        .filter_map(|r| read(&lines[r.clone()], r.start))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(marks: &str) -> Vec<Range<usize>> {
        let lines: Vec<String> = marks.chars().map(|c| c.to_string()).collect();
        split(&lines, |l| match l {
            "S" => Mark::Start,
            "s" => Mark::SoftStart,
            "c" => Mark::Content,
            "E" => Mark::End,
            _ => Mark::Other,
        })
    }

    #[test]
    fn runs_are_cut_at_starts_and_after_summaries() {
        assert!(cut("").is_empty());
        assert!(cut("....").is_empty());
        assert_eq!(cut("xScEx"), vec![0..5]);
        assert_eq!(cut("ScE.ScE"), [0..4, 4..7]);
        // A run interrupted before its summary, then a complete one.
        assert_eq!(cut("Scc.ScE"), [0..4, 4..7]);
        // No headers: a result after a summary opens the next run.
        assert_eq!(cut("ccE..ccE.."), [0..5, 5..10]);
        // Soft starts in a row open one run; only after results a new one.
        assert_eq!(cut("sssccsscc"), [0..5, 5..9]);
        // A complete run followed by one cut before any result.
        assert_eq!(cut("ScES.."), [0..3, 3..6]);
    }
}
