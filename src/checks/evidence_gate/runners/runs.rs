//! Where the last run of a runner begins in a log that holds several (a
//! re-run appended to the same file, two invocations in one CI step).
//!
//! Each reader classifies its own lines as [`Mark`]s; [`last_run`] cuts the
//! log into runs: a hard start always opens a run, a soft start opens one
//! only after results, and a result after a run's closing summary belongs to
//! the next run. Only the last run is read: an earlier failure or pass says
//! nothing about the code as it was last tested.

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

/// Where the last run was seen to begin and how many runs there were.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Runs {
    /// Index of the last run's first line (0 when there is one run).
    pub start: usize,
    /// How many runs the lines hold (0 when none).
    pub count: usize,
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

/// Cuts `lines` into runs with `mark` (called once per line, in order).
pub(super) fn last_run(lines: &[String], mut mark: impl FnMut(&str) -> Mark) -> Runs {
    let (mut start, mut count, mut state) = (0, 0, State::Empty);
    for (i, line) in lines.iter().enumerate() {
        let next = |count: &mut usize, start: &mut usize| {
            *count += 1;
            *start = i;
        };
        match (mark(line), state) {
            (Mark::Start | Mark::SoftStart, State::Empty) => {
                start = i;
                state = State::Started;
            }
            (Mark::Start, _) | (Mark::SoftStart, State::Open | State::Closed) => {
                next(&mut count, &mut start);
                state = State::Started;
            }
            (Mark::Content, State::Closed) => {
                next(&mut count, &mut start);
                state = State::Open;
            }
            (Mark::Content, _) => state = State::Open,
            (Mark::End, State::Closed) => next(&mut count, &mut start),
            (Mark::End, _) => state = State::Closed,
            (Mark::SoftStart, State::Started) | (Mark::Other, _) => {}
        }
    }
    if state != State::Empty {
        count += 1;
    }
    if count <= 1 {
        start = 0;
    }
    Runs { start, count }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(marks: &str) -> Runs {
        let lines: Vec<String> = marks.chars().map(|c| c.to_string()).collect();
        last_run(&lines, |l| match l {
            "S" => Mark::Start,
            "s" => Mark::SoftStart,
            "c" => Mark::Content,
            "E" => Mark::End,
            _ => Mark::Other,
        })
    }

    #[test]
    fn runs_are_cut_at_starts_and_after_summaries() {
        assert_eq!(cut(""), Runs { start: 0, count: 0 });
        assert_eq!(cut("xScEx"), Runs { start: 0, count: 1 });
        assert_eq!(cut("ScE.ScE"), Runs { start: 4, count: 2 });
        // A run interrupted before its summary, then a complete one.
        assert_eq!(cut("Scc.ScE"), Runs { start: 4, count: 2 });
        // No headers: a result after a summary opens the next run.
        assert_eq!(cut("ccE..ccE.."), Runs { start: 5, count: 2 });
        // Soft starts in a row open one run; only after results a new one.
        assert_eq!(cut("sssccsscc"), Runs { start: 5, count: 2 });
        // A complete run followed by one cut before any result.
        assert_eq!(cut("ScES.."), Runs { start: 3, count: 2 });
    }
}
