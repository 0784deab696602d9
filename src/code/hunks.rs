//! Unified hunks of two texts, computed here (Myers, with a deadline) so
//! that no git setting changes them: lines marked ` `, `-`, `+`, numbered
//! like git's.

use std::time::Duration;

use similar::{Algorithm, ChangeTag, TextDiff};

use super::Hunk;

/// The unified hunks of two texts, with the counts of added and removed lines.
pub(super) fn hunks(old: &str, new: &str, context: usize) -> (Vec<Hunk>, u32, u32) {
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        // A pathological pair of files still finishes: past the deadline
        // the diff is correct but may be less minimal.
        .timeout(Duration::from_secs(2))
        .diff_lines(old, new);
    let (mut added, mut removed) = (0u32, 0u32);
    let mut delta: i64 = 0;
    let mut out = Vec::new();
    for group in diff.grouped_ops(context) {
        if group.is_empty() {
            continue;
        }
        let mut hunk = Hunk {
            old_start: 0,
            old_lines: 0,
            new_start: 0,
            new_lines: 0,
            lines: Vec::new(),
        };
        let (mut first_old, mut first_new) = (None, None);
        for op in &group {
            for change in diff.iter_changes(op) {
                let mark = match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => {
                        removed += 1;
                        '-'
                    }
                    ChangeTag::Insert => {
                        added += 1;
                        '+'
                    }
                };
                if let Some(i) = change.old_index() {
                    first_old.get_or_insert(i);
                    hunk.old_lines += 1;
                }
                if let Some(i) = change.new_index() {
                    first_new.get_or_insert(i);
                    hunk.new_lines += 1;
                }
                let value = change.value();
                let body = value.strip_suffix('\n').unwrap_or(value);
                let body = body.strip_suffix('\r').map_or(body, |b| b);
                let mut line = String::with_capacity(body.len() + 1);
                line.push(mark);
                line.push_str(body);
                hunk.lines.push(line);
                if change.missing_newline() {
                    hunk.lines.push("\\ No newline at end of file".into());
                }
            }
        }
        // Outside the hunks both sides are equal, so a side with no line in
        // this hunk sits where the other side's lines are, shifted by the
        // lines added so far; git numbers an empty side by the line before.
        let to_u32 = |n: i64| u32::try_from(n.max(0)).unwrap_or(u32::MAX);
        match (first_old, first_new) {
            (Some(o), Some(n)) => {
                hunk.old_start = to_u32(o as i64 + 1);
                hunk.new_start = to_u32(n as i64 + 1);
            }
            (Some(o), None) => {
                hunk.old_start = to_u32(o as i64 + 1);
                hunk.new_start = to_u32(o as i64 + delta);
            }
            (None, Some(n)) => {
                hunk.old_start = to_u32(n as i64 - delta);
                hunk.new_start = to_u32(n as i64 + 1);
            }
            (None, None) => continue,
        }
        delta += i64::from(hunk.new_lines) - i64::from(hunk.old_lines);
        out.push(hunk);
    }
    (out, added, removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks_number_lines_like_git() {
        let (h, added, removed) = hunks("a\nb\nc\n", "a\nB\nc\nd", 3);
        assert_eq!((added, removed), (2, 1));
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].header(), "@@ -1,3 +1,4 @@");
        assert_eq!(
            h[0].lines,
            [" a", "-b", "+B", " c", "+d", "\\ No newline at end of file"]
        );
        let (h, ..) = hunks("", "x\n", 3);
        assert_eq!(h[0].header(), "@@ -0,0 +1,1 @@");
    }

    /// Applies hunks to the old lines: what a patch tool would do.
    fn apply(old: &[&str], hunks: &[Hunk]) -> Vec<String> {
        let mut out = Vec::new();
        let mut next = 0usize; // index into old
        for h in hunks {
            let start = if h.old_lines == 0 {
                h.old_start
            } else {
                h.old_start - 1
            } as usize;
            out.extend(old[next..start].iter().map(|s| s.to_string()));
            next = start;
            let new_at = if h.new_lines == 0 {
                h.new_start
            } else {
                h.new_start - 1
            };
            assert_eq!(
                out.len(),
                new_at as usize,
                "new-side start of {}",
                h.header()
            );
            for l in &h.lines {
                match l.as_bytes().first() {
                    Some(b' ') => {
                        assert_eq!(&l[1..], old[next], "context line");
                        out.push(l[1..].to_string());
                        next += 1;
                    }
                    Some(b'-') => {
                        assert_eq!(&l[1..], old[next], "removed line");
                        next += 1;
                    }
                    Some(b'+') => out.push(l[1..].to_string()),
                    _ => {}
                }
            }
        }
        out.extend(old[next..].iter().map(|s| s.to_string()));
        out
    }

    proptest::proptest! {
        #[test]
        fn hunks_turn_the_old_text_into_the_new(
            old in proptest::collection::vec("[abc]{0,2}", 0..40),
            new in proptest::collection::vec("[abc]{0,2}", 0..40),
            context in 0usize..4,
        ) {
            let text = |v: &[String]| v.iter().map(|l| format!("{l}\n")).collect::<String>();
            let (h, added, removed) = hunks(&text(&old), &text(&new), context);
            let old_refs: Vec<&str> = old.iter().map(String::as_str).collect();
            proptest::prop_assert_eq!(apply(&old_refs, &h), new.clone());
            let marked = |c: char| h.iter().flat_map(|h| &h.lines).filter(|l| l.starts_with(c)).count();
            proptest::prop_assert_eq!(marked('+'), added as usize);
            proptest::prop_assert_eq!(marked('-'), removed as usize);
            for x in &h {
                let count = |c: &[char]| x.lines.iter().filter(|l| l.starts_with(c)).count() as u32;
                proptest::prop_assert_eq!(count(&[' ', '-']), x.old_lines);
                proptest::prop_assert_eq!(count(&[' ', '+']), x.new_lines);
            }
        }
    }
}
