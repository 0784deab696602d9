//! The code a gate's evidence shows: an out-of-scope file's change from a
//! snapshot to another, and the lines a claim cites (`path:lines`) with
//! their context. Every failure to read the code is said in the lines
//! returned instead of hidden: the person always sees why code is missing.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use crate::code::{CodeSnapshot, DiffLimits, Excerpt, FileStatus, TreeId};

/// Most changed lines shown for one file; a larger change is summarised.
pub const MAX_EVIDENCE_CHANGED_LINES: u32 = 5_000;

/// Lines of context shown around a claim's cited lines.
pub const EXCERPT_CONTEXT: u32 = 3;

/// Most locations of one verifier row shown as code.
pub const MAX_CITATIONS: usize = 3;

/// Longest line kept in captured evidence, in bytes: a minified file or a
/// runaway output line would otherwise fill the journal (the dialog shows
/// even less of it).
pub const MAX_CAPTURED_LINE: usize = 2048;

/// `line` cut to [`MAX_CAPTURED_LINE`] bytes (at a character boundary),
/// saying how much was left out.
pub fn bounded(line: String) -> String {
    if line.len() <= MAX_CAPTURED_LINE {
        return line;
    }
    let mut end = MAX_CAPTURED_LINE;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{} … [{} more bytes]", &line[..end], line.len() - end)
}

/// A location a claim cites: a path inside the worktree and its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Citation {
    /// The path as written.
    pub path: String,
    /// The lines as written (`12`, `12-18`, `L12-L18`).
    pub lines: String,
}

static LOCATION: LazyLock<Regex> = LazyLock::new(|| {
    // `path:12`, `path:12-18`, `path:L12-L18`; the path holds a `/` or a
    // `.` (a file, not a word followed by a colon). An absolute path or one
    // with `..` is a location too: reading it is refused, visibly.
    // Invariant: a literal pattern, exercised by the tests.
    Regex::new(r"(?:^|[\s(\[‹«`'])(/?(?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_-][A-Za-z0-9_.-]*):(L?[0-9]+(?:[-–]L?[0-9]+)?)\b")
        .expect("location pattern")
});

/// The `path:lines` locations `text` cites, in order, each once; a URL's
/// `host:port` and a bare word before a colon are not locations.
pub fn citations(text: &str) -> Vec<Citation> {
    let mut out: Vec<Citation> = Vec::new();
    for c in LOCATION.captures_iter(text) {
        let (Some(path), Some(lines)) = (c.get(1), c.get(2)) else {
            continue;
        };
        let before = &text[..path.start()];
        let p = path.as_str();
        if before.ends_with("//") || !(p.contains('/') || p.contains('.')) {
            continue;
        }
        let cite = Citation {
            path: p.to_string(),
            lines: lines.as_str().to_string(),
        };
        if !out.contains(&cite) {
            out.push(cite);
        }
    }
    out
}

/// The hunks of `path` against the run's diff base revision (`DIFF`, what
/// the verifier judged) to `now`, as lines; when the run-start snapshot
/// already differed from that revision for `path`, those earlier changes
/// follow under their own heading (made before the run started). Without
/// a diff base (or one git cannot read), against the run-start snapshot.
pub fn file_hunks(
    worktree: &Path,
    base: Option<&CodeSnapshot>,
    diff_base: Option<&str>,
    now: &CodeSnapshot,
    path: &str,
) -> Vec<String> {
    hunks_of(worktree, base, diff_base, now, path)
        .into_iter()
        .map(bounded)
        .collect()
}

fn hunks_of(
    worktree: &Path,
    base: Option<&CodeSnapshot>,
    diff_base: Option<&str>,
    now: &CodeSnapshot,
    path: &str,
) -> Vec<String> {
    let b = match tree_of(Some(now), "the worktree") {
        Ok(b) => b,
        Err(why) => return vec![format!("code not available: {why}")],
    };
    let judged = diff_base.and_then(|rev| {
        crate::code::revision_tree(worktree, rev)
            .ok()
            .map(|tree| (rev, tree))
    });
    if let Some((rev, against)) = judged {
        let mut lines = match file_diff(worktree, &against, b, path) {
            Ok(Some(lines)) => lines,
            Ok(None) => {
                return vec![format!(
                    "{path}: no change against {rev}, the run's diff base"
                )];
            }
            Err(why) => return vec![format!("code not available: {why}")],
        };
        lines.insert(
            0,
            format!("{path}: changed against {rev}, the run's diff base"),
        );
        // What of it was there before the run started (the run-start
        // snapshot against the same revision).
        // (None when the run started on the revision itself: no diff to take.)
        if let Ok(start) = tree_of(base, "the run's base")
            && *start != against
            && let Ok(Some(before)) = file_diff(worktree, &against, start, path)
        {
            lines.push(format!(
                "{path}: of these, changed before the run started (the run-start snapshot against {rev}):"
            ));
            lines.extend(before);
        }
        return lines;
    }
    match tree_of(base, "the run's base").and_then(|a| file_diff(worktree, a, b, path)) {
        Ok(Some(lines)) => lines,
        Ok(None) => vec![format!("{path}: no change against the run's base")],
        Err(why) => vec![format!("code not available: {why}")],
    }
}

/// The text of `path`'s change from `a` to `b`; `None` when it did not change.
fn file_diff(
    worktree: &Path,
    a: &TreeId,
    b: &TreeId,
    path: &str,
) -> Result<Option<Vec<String>>, String> {
    let limits = DiffLimits {
        max_changed_lines: MAX_EVIDENCE_CHANGED_LINES,
        ..DiffLimits::default()
    };
    let files = crate::code::diff_with(worktree, a, b, &limits).map_err(|e| e.to_string())?;
    let Some(file) = files
        .into_iter()
        .find(|f| f.path == path || f.old_path.as_deref() == Some(path))
    else {
        return Ok(None);
    };
    let mut out = Vec::new();
    if file.status == FileStatus::Deleted {
        out.push(format!("{path}: deleted since the run's base"));
    }
    out.extend(
        crate::code::diff_text(std::slice::from_ref(&file))
            .lines()
            .map(str::to_string),
    );
    Ok(Some(out))
}

/// The lines a claim cites with their context, `  12 | text`, the cited
/// ones marked `>`, read from `snapshot`.
pub fn cited_lines(
    worktree: &Path,
    snapshot: Option<&CodeSnapshot>,
    path: &str,
    lines: &str,
) -> Vec<String> {
    cited_block(worktree, snapshot, path, lines).0
}

/// [`cited_lines`], and the text of the cited lines alone (each
/// [`bounded`]; empty when they cannot be read).
pub fn cited_block(
    worktree: &Path,
    snapshot: Option<&CodeSnapshot>,
    path: &str,
    lines: &str,
) -> (Vec<String>, Vec<String>) {
    let tree = match tree_of(snapshot, "the iteration") {
        Ok(t) => t,
        Err(why) => return (vec![format!("code not available: {why}")], Vec::new()),
    };
    let Some(range) = parse_lines(lines) else {
        return (
            vec![format!(
                "code not shown: {path}:{lines} names no line range"
            )],
            Vec::new(),
        );
    };
    match crate::code::excerpt(worktree, tree, path, range, EXCERPT_CONTEXT) {
        Ok(x) => (
            excerpt_lines(&x, &format!("{}:{lines}", x.path)),
            cited_text(&x.lines),
        ),
        Err(e) => (vec![format!("code not available: {e}")], Vec::new()),
    }
}

/// The text of the cited lines of an excerpt, each [`bounded`].
pub fn cited_text(lines: &[crate::code::ExcerptLine]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l.cited)
        .map(|l| bounded(l.text.clone()))
        .collect()
}

/// An excerpt as lines under a heading: `>   12 | text` for a cited line,
/// `    11 | text` for context, then the excerpt's note in parentheses.
pub fn excerpt_lines(x: &Excerpt, heading: &str) -> Vec<String> {
    let mut out = vec![bounded(heading.to_string())];
    out.extend(x.lines.iter().map(|l| {
        let mark = if l.cited { '>' } else { ' ' };
        bounded(format!("{mark}{:>5} | {}", l.number, l.text))
    }));
    if let Some(note) = &x.note {
        out.push(format!("({note})"));
    }
    out
}

/// `12`, `12-18` or `L12-L18` as a range of lines (1-based).
pub fn parse_lines(s: &str) -> Option<std::ops::RangeInclusive<u32>> {
    let num = |t: &str| t.trim().trim_start_matches(['L', 'l']).parse::<u32>().ok();
    let (a, b) = match s.split_once(['-', '–']) {
        Some((a, b)) => (num(a)?, num(b)?),
        None => {
            let n = num(s)?;
            (n, n)
        }
    };
    (a >= 1 && a <= b).then_some(a..=b)
}

/// The tree of a snapshot, or why there is none (`what` names it).
pub fn tree_of<'a>(snap: Option<&'a CodeSnapshot>, what: &str) -> Result<&'a TreeId, String> {
    match snap {
        Some(CodeSnapshot::Tree(t)) => Ok(t),
        Some(CodeSnapshot::Missing(why)) => Err(format!("no snapshot of {what}: {why}")),
        None => Err(format!("no snapshot of {what} in the journal")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_ranges_are_parsed_or_refused() {
        assert_eq!(parse_lines("12"), Some(12..=12));
        assert_eq!(parse_lines("12-18"), Some(12..=18));
        assert_eq!(parse_lines("L3-L4"), Some(3..=4));
        assert_eq!(parse_lines("0"), None);
        assert_eq!(parse_lines("9-3"), None);
        assert_eq!(parse_lines("all"), None);
    }

    fn cite(path: &str, lines: &str) -> Citation {
        Citation {
            path: path.into(),
            lines: lines.into(),
        }
    }

    #[test]
    fn locations_are_found_in_a_verifiers_row() {
        assert_eq!(
            citations("expected ‹42› / actual ‹41› — src/export/csv.rs:88"),
            [cite("src/export/csv.rs", "88")]
        );
        assert_eq!(
            citations(
                "read src/cli/help.rs:12-30 and (Makefile.am:L3-L4), again src/cli/help.rs:12-30"
            ),
            [
                cite("src/cli/help.rs", "12-30"),
                cite("Makefile.am", "L3-L4")
            ]
        );
        // A URL's port, a bare word and a time of day are not locations.
        assert_eq!(bounded("ab".into()), "ab");
        let long = "é".repeat(MAX_CAPTURED_LINE);
        let cut = bounded(long.clone());
        assert!(cut.ends_with(&format!(
            " … [{} more bytes]",
            long.len() - MAX_CAPTURED_LINE
        )));
        assert!(cut.len() < MAX_CAPTURED_LINE + 40);
        assert_eq!(citations("see https://example.org:8443/x"), []);
        assert_eq!(citations("EVIDENCE: MET exit=0 :: OK"), []);
        assert_eq!(citations("needs a runtime; ran at 12:30"), []);
        // Outside the worktree: cited, so that the refusal to read it is seen.
        assert_eq!(
            citations("see /etc/passwd:1 and ../secret.txt:2"),
            [cite("/etc/passwd", "1"), cite("../secret.txt", "2")]
        );
    }
}
