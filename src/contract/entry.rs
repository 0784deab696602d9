//! Reading one FILE SCOPE line the way a person does: which words are
//! entries, which are commentary, and which `[gated …]` marker covers which
//! entry.
//!
//! A line is cut into *segments* at top-level separators (` · `, `, `, a
//! final `,`, `; `); brackets and parentheses protect what they hold. Text in
//! top-level parentheses and everything after a top-level ` — ` is
//! commentary: a path mentioned there is not an entry. A `[gated …]` marker
//! covers the entries of its own segment (wherever it sits in it, even
//! inside the commentary); a marker that opens a bullet covers the whole
//! bullet.

use std::ops::Range;

/// Separators between entries, in the order they are tried.
const DOT: &str = " · ";
const SEPARATORS: [&str; 3] = [DOT, ", ", "; "];
/// Starts commentary that runs to the end of the line.
const DASH: &str = " — ";
/// How every marker starts.
pub(crate) const MARKER: &str = "[gated";

/// Label words that say the paths after them are *not* in scope.
const EXCLUSION_WORDS: [&str; 8] = [
    "out of scope",
    "out-of-scope",
    "not in scope",
    "untouched",
    "excluded",
    "do not touch",
    "don't touch",
    "never touch",
];

/// The structure of one line's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineView {
    /// Byte ranges of the segments.
    pub segments: Vec<Range<usize>>,
    /// Byte ranges of commentary.
    pub commentary: Vec<Range<usize>>,
    /// Byte ranges of `[gated …]` markers.
    pub markers: Vec<Range<usize>>,
    /// A top-level ` · ` separates entries.
    pub dot_list: bool,
    /// A top-level comma separates entries.
    pub comma_list: bool,
}

/// One whole-token occurrence of a path outside commentary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Occurrence {
    /// Where a marker for this path goes: after the path (and its closing backtick).
    pub tag_at: usize,
    /// A marker in the same segment already covers it.
    pub covered: bool,
}

/// Cuts `text` into segments, commentary and markers.
pub(crate) fn analyse(text: &str) -> LineView {
    let mut view = LineView {
        segments: Vec::new(),
        commentary: Vec::new(),
        markers: Vec::new(),
        dot_list: false,
        comma_list: false,
    };
    let mut stack: Vec<char> = Vec::new();
    let mut paren_from: Option<usize> = None;
    let mut segment_from = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let rest = &text[i..];
        if stack.is_empty() {
            if rest.starts_with(DASH) {
                view.commentary.push(i..text.len());
                break;
            }
            if let Some(sep) = SEPARATORS.iter().find(|s| rest.starts_with(**s)) {
                view.dot_list |= *sep == DOT;
                view.comma_list |= *sep == ", ";
                view.segments.push(segment_from..i);
                segment_from = i + sep.len();
                // Skip the rest of the separator; its first char is `c`.
                for _ in 1..sep.chars().count() {
                    chars.next();
                }
                continue;
            }
            if c == ',' && rest[1..].trim().is_empty() {
                view.comma_list = true;
            }
        }
        match c {
            '(' | '[' | '{' => {
                if stack.is_empty() && c == '(' {
                    paren_from = Some(i);
                }
                stack.push(c);
            }
            ')' | ']' | '}' => {
                let opener = match c {
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                if stack.last() == Some(&opener) {
                    stack.pop();
                    if stack.is_empty()
                        && c == ')'
                        && let Some(from) = paren_from.take()
                    {
                        view.commentary.push(from..i + 1);
                    }
                }
            }
            _ => {}
        }
    }
    if let Some(from) = paren_from {
        view.commentary.push(from..text.len());
    }
    view.segments.push(segment_from..text.len());
    view.markers = text
        .match_indices(MARKER)
        .map(|(at, _)| at..text[at..].find(']').map_or(text.len(), |e| at + e + 1))
        .collect();
    view
}

/// Whole-token occurrences of `path` in `text` that are entries (not commentary).
pub(crate) fn occurrences(text: &str, view: &LineView, path: &str) -> Vec<Occurrence> {
    text.match_indices(path)
        .filter(|&(at, _)| is_whole_token(text, at, at + path.len()))
        .filter(|&(at, _)| !view.commentary.iter().any(|r| r.contains(&at)))
        .map(|(at, _)| {
            let end = at + path.len();
            let backticked = text[..at].ends_with('`') && text[end..].starts_with('`');
            let segment = view.segments.iter().find(|s| s.contains(&at));
            let covered =
                segment.is_some_and(|s| view.markers.iter().any(|m| s.contains(&m.start)));
            Occurrence {
                tag_at: if backticked { end + 1 } else { end },
                covered,
            }
        })
        .collect()
}

/// The bullet's text (after `- `) starts with a marker covering the whole bullet.
pub(crate) fn opens_with_marker(body: &str) -> bool {
    body.trim_start().starts_with(MARKER)
}

/// A short `Label:` at the start of `body`, if there is one.
///
/// A label starts with a letter, holds no path characters (`/`, `.`, a
/// backtick) and is followed by `:` and a space or the end of the line.
pub(crate) fn label(body: &str) -> Option<&str> {
    let colon = body.find(':')?;
    let (label, after) = (&body[..colon], &body[colon + 1..]);
    let starts_with_letter = label.chars().next().is_some_and(char::is_alphabetic);
    let plain = !label.contains(['/', '.', '`']) && label.chars().count() <= 60;
    let ends = after.is_empty() || after.starts_with(char::is_whitespace);
    (starts_with_letter && plain && ends).then_some(label)
}

/// The label says the paths listed under or after it are out of scope.
pub(crate) fn is_exclusion(label: &str) -> bool {
    let label = label.to_lowercase();
    EXCLUSION_WORDS.iter().any(|w| label.contains(w))
}

/// A character that can be part of a path token; anything else ends one.
fn is_path_char(c: char) -> bool {
    c.is_alphanumeric() || "_-./~+@%=*#$!&?{}".contains(c)
}

/// `text[at..end]` is a whole token: not glued to path characters on
/// either side, except a sentence's final `.` after it.
fn is_whole_token(text: &str, at: usize, end: usize) -> bool {
    let before_ok = text[..at]
        .chars()
        .next_back()
        .is_none_or(|c| !is_path_char(c));
    let mut after = text[end..].chars();
    let after_ok = match after.next() {
        None => true,
        Some('.') => after.next().is_none_or(|c| !is_path_char(c)),
        Some(c) => !is_path_char(c),
    };
    before_ok && after_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_respect_brackets_and_dash_commentary() {
        let t = "a.sh (x, y), b/{c,d}.md; e [gated 2026-01-02] — why, because";
        let v = analyse(t);
        assert_eq!(v.segments, vec![0..11, 13..23, 25..t.len()]);
        assert_eq!(v.commentary, vec![5..11, 45..t.len()]);
        assert_eq!(v.markers, vec![27..45]);
        assert!(v.comma_list);
        assert!(!v.dot_list);
    }

    #[test]
    fn dot_lists_are_seen() {
        let v = analyse("a · b · c");
        assert!(v.dot_list);
        assert_eq!(v.segments, vec![0..1, 5..6, 10..11]);
    }

    fn uncovered(tag_at: usize) -> Occurrence {
        Occurrence {
            tag_at,
            covered: false,
        }
    }

    #[test]
    fn whole_tokens_only() {
        let t = "xa/b.rs, a/b.rs.bak, `a/b.rs`, a/b.rs.";
        let v = analyse(t);
        let occ = occurrences(t, &v, "a/b.rs");
        assert_eq!(occ, [uncovered(29), uncovered(37)]);
    }

    #[test]
    fn commentary_is_not_an_entry_and_markers_cover_their_segment() {
        let t = "a (needs b), b [gated 2026-01-01], c ([gated 2026-01-01] why) — d";
        let v = analyse(t);
        assert!(occurrences(t, &v, "a").iter().all(|o| !o.covered));
        assert_eq!(
            occurrences(t, &v, "b"),
            vec![Occurrence {
                tag_at: 14,
                covered: true
            }]
        );
        assert_eq!(occurrences(t, &v, "c").len(), 1);
        assert!(occurrences(t, &v, "c")[0].covered);
        assert!(occurrences(t, &v, "d").is_empty());
    }

    #[test]
    fn labels_and_exclusions() {
        assert_eq!(label("Out of scope: the rest"), Some("Out of scope"));
        assert_eq!(label("Tests:"), Some("Tests"));
        assert_eq!(label("a/b.sh · generated: x"), None);
        assert_eq!(label("see http://x"), None);
        assert!(is_exclusion("Untouched on purpose"));
        assert!(!is_exclusion("Orchestrator-only"));
    }
}
