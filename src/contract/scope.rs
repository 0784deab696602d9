//! [`gate_path`]: the pure edit that records an approved out-of-scope file
//! in a contract's FILE SCOPE.
//!
//! Where the marker goes:
//! - the path already has an entry (a whole token outside commentary and
//!   outside lines that list what is out of scope): ` [gated YYYY-MM-DD]`
//!   is inserted right after the path token (after its closing backtick
//!   when it is quoted), in the first such entry; alignment padding after
//!   the token shrinks to make room, so a comment column stays put. If any
//!   entry for the path is already covered by a marker, nothing changes;
//! - otherwise a new entry, in the section's own style, judged on the lines
//!   that are not exclusions: the first bullet list gets a new bullet after
//!   its last item, `- <path> [gated YYYY-MM-DD] — <reason>`; else the first
//!   ` · ` list gets ` · <path> [gated YYYY-MM-DD]` at the end of its last
//!   line; else the first comma list gets `, <path> [gated YYYY-MM-DD]`;
//!   else the first run of plain lines gets a new line `<path> [gated
//!   YYYY-MM-DD]`; an empty section gets a bullet right under its heading.
//!   An appended item goes before a final `.`, `,` or `;` of the line.
//! - no FILE SCOPE section: `## FILE SCOPE` and a bullet are added at the end.
//!
//! Every other byte is kept: line endings (a new line uses the section's
//! majority ending), a missing final newline, a BOM.

use super::entry::{self, LineView};
use super::error::ScopeError;
use super::text::{Eol, Line, Section, find_file_scope, split_lines};

/// The result of [`gate_path`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScopeEdit {
    /// The path already carries a `[gated …]` marker: the contract stays as it is.
    AlreadyGated,
    /// The whole new contract, which differs from the old one by one line
    /// (two when a missing FILE SCOPE heading had to be added).
    Changed(Vec<u8>),
}

/// Records `path` as approved on `date` (`YYYY-MM-DD`) in the FILE SCOPE of `contract`.
///
/// `reason` (whitespace runs folded to one space) follows a new bullet
/// entry after ` — `; list and plain-line styles carry no reason.
/// Refuses a path that is empty, has surrounding whitespace, holds a
/// control or invisible formatting character, or would read as markdown
/// structure at the start of a line.
pub fn gate_path(
    contract: &[u8],
    path: &str,
    date: &str,
    reason: Option<&str>,
) -> Result<ScopeEdit, ScopeError> {
    check_path(path)?;
    check_date(date)?;
    let reason = clean_reason(reason)?;
    let marker = format!("[gated {date}]");
    let bullet = match &reason {
        Some(r) => format!("- {path} {marker} — {r}"),
        None => format!("- {path} {marker}"),
    };
    let lines = split_lines(contract);
    let Some(section) = find_file_scope(contract, &lines) else {
        return Ok(ScopeEdit::Changed(append_section(
            contract, &lines, &bullet,
        )));
    };
    let items = read_items(contract, &lines, &section)?;

    let mut first_entry: Option<usize> = None;
    for item in items.iter().filter(|i| !i.excluded) {
        for (text, view, line) in item.views() {
            for occ in entry::occurrences(text, view, path) {
                if occ.covered || item.gated_bullet {
                    return Ok(ScopeEdit::AlreadyGated);
                }
                first_entry.get_or_insert(lines[line].start + occ.tag_at);
            }
        }
    }
    if let Some(at) = first_entry {
        return Ok(ScopeEdit::Changed(tag_entry(contract, at, &marker)));
    }

    // A new line takes the section's ending; a section with no terminated
    // line (a heading at the very end) takes the file's.
    let section_lines = &lines[section.heading..section.end];
    let eol = if section_lines.iter().any(Line::terminated) {
        Eol::of(section_lines)
    } else {
        Eol::of(&lines)
    };
    let edited = if let Some(last) = run_end(&items, |i| i.bullet, true) {
        insert_line_after(contract, &lines[last], &bullet, eol)
    } else if let Some(last) = run_end(&items, |i| !i.bullet && i.view().dot_list, false) {
        append_to_line(contract, &lines[last], &format!(" · {path} {marker}"))
    } else if let Some(last) = run_end(&items, |i| !i.bullet && i.view().comma_list, false) {
        append_to_line(contract, &lines[last], &format!(", {path} {marker}"))
    } else if let Some(last) = run_end(&items, |i| !i.bullet, false) {
        insert_line_after(contract, &lines[last], &format!("{path} {marker}"), eol)
    } else {
        insert_line_after(contract, &lines[section.heading], &bullet, eol)
    };
    Ok(ScopeEdit::Changed(edited))
}

/// One bullet (with its indented continuation lines) or one plain line.
struct Item {
    bullet: bool,
    excluded: bool,
    /// A bullet whose text starts with a marker: the marker covers all of it.
    gated_bullet: bool,
    /// A blank line separates it from the previous item.
    gap_before: bool,
    /// Each line's whole text, its view, its index.
    texts: Vec<(String, LineView, usize)>,
}

impl Item {
    fn views(&self) -> impl Iterator<Item = (&str, &LineView, usize)> {
        self.texts.iter().map(|(t, v, l)| (t.as_str(), v, *l))
    }

    fn view(&self) -> &LineView {
        &self.texts[0].1
    }

    fn last_line(&self) -> usize {
        self.texts.last().map_or(0, |t| t.2)
    }
}

/// Groups the section's lines into items and marks the excluded ones.
///
/// A plain line whose label says "out of scope" (or "untouched", …)
/// excludes itself and the unlabelled plain lines that continue it; when
/// the label ends the line, the bullets under it are excluded too, up to
/// the next plain line. A bullet with such a label excludes itself.
fn read_items(bytes: &[u8], lines: &[Line], section: &Section) -> Result<Vec<Item>, ScopeError> {
    let mut items: Vec<Item> = Vec::new();
    let mut gap = false;
    let mut excluding_bullets = false;
    for &idx in &section.body {
        let raw = &bytes[lines[idx].start..lines[idx].end];
        let text = std::str::from_utf8(raw).map_err(|_| ScopeError::NotUtf8 { line: idx + 1 })?;
        if text.trim().is_empty() {
            gap = true;
            continue;
        }
        let line = (text.to_owned(), entry::analyse(text), idx);
        if let Some(prev) = items.last_mut()
            && prev.bullet
            && !gap
            && text.starts_with(char::is_whitespace)
        {
            prev.texts.push(line);
            continue;
        }
        let bullet_body = ["- ", "* ", "+ "].iter().find_map(|m| text.strip_prefix(m));
        let label = entry::label(bullet_body.unwrap_or(text).trim_start());
        let excluded_label = label.is_some_and(entry::is_exclusion);
        let excluded = if bullet_body.is_some() {
            excluded_label || excluding_bullets
        } else {
            let continues_excluded =
                !gap && label.is_none() && items.last().is_some_and(|p| !p.bullet && p.excluded);
            excluding_bullets = excluded_label && text.trim_end().ends_with(':');
            excluded_label || continues_excluded
        };
        items.push(Item {
            bullet: bullet_body.is_some(),
            excluded,
            gated_bullet: bullet_body.is_some_and(entry::opens_with_marker),
            gap_before: gap,
            texts: vec![line],
        });
        gap = false;
    }
    Ok(items)
}

/// The last line of the run of items that starts at the first non-excluded
/// item matching `wanted`. The run goes on over items of the same kind
/// (bullet or plain) and stops at an excluded one; `across_gaps` lets
/// blank lines sit inside it (loose bullet lists).
fn run_end(items: &[Item], wanted: impl Fn(&Item) -> bool, across_gaps: bool) -> Option<usize> {
    let first = items.iter().position(|i| !i.excluded && wanted(i))?;
    let mut last = &items[first];
    for item in &items[first + 1..] {
        if item.excluded || item.bullet != last.bullet || (item.gap_before && !across_gaps) {
            break;
        }
        last = item;
    }
    Some(last.last_line())
}

/// Inserts ` <marker>` at `at`. When a run of two or more spaces follows
/// (padding that aligns a comment column), the marker takes its width from
/// that run, leaving at least one space, so the column stays where it was.
fn tag_entry(bytes: &[u8], at: usize, marker: &str) -> Vec<u8> {
    let insert = format!(" {marker}");
    let padding = bytes[at..].iter().take_while(|&&b| b == b' ').count();
    let absorbed = if padding >= 2 {
        (padding - 1).min(insert.len())
    } else {
        0
    };
    let mut out = Vec::with_capacity(bytes.len() + insert.len());
    out.extend_from_slice(&bytes[..at]);
    out.extend_from_slice(insert.as_bytes());
    out.extend_from_slice(&bytes[at + absorbed..]);
    out
}

/// Appends `addition` to the line's text, before trailing whitespace and a
/// final `.`, `,` or `;`.
fn append_to_line(bytes: &[u8], line: &Line, addition: &str) -> Vec<u8> {
    let text = &bytes[line.start..line.end];
    let mut at = line.start + text.trim_ascii_end().len();
    if at > line.start && matches!(bytes[at - 1], b'.' | b',' | b';') {
        at -= 1;
    }
    splice(bytes, at, addition.as_bytes())
}

/// Inserts `new_line` after `line`; when `line` is the last line and has no
/// terminator, the new line gets none either (the missing final newline stays missing).
fn insert_line_after(bytes: &[u8], line: &Line, new_line: &str, eol: Eol) -> Vec<u8> {
    let mut inserted = Vec::with_capacity(new_line.len() + 2);
    if line.terminated() {
        inserted.extend_from_slice(new_line.as_bytes());
        inserted.extend_from_slice(eol.as_bytes());
    } else {
        inserted.extend_from_slice(eol.as_bytes());
        inserted.extend_from_slice(new_line.as_bytes());
    }
    splice(bytes, line.next, &inserted)
}

/// Adds `## FILE SCOPE` and `bullet` at the end, in the file's own line ending.
fn append_section(bytes: &[u8], lines: &[Line], bullet: &str) -> Vec<u8> {
    let eol = Eol::of(lines).as_bytes();
    let mut out = bytes.to_vec();
    let unterminated = lines.last().is_some_and(|l| !l.terminated());
    if unterminated {
        out.extend_from_slice(eol);
    }
    out.extend_from_slice(b"## FILE SCOPE");
    out.extend_from_slice(eol);
    out.extend_from_slice(bullet.as_bytes());
    if !unterminated {
        out.extend_from_slice(eol);
    }
    out
}

fn splice(bytes: &[u8], at: usize, insert: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + insert.len());
    out.extend_from_slice(&bytes[..at]);
    out.extend_from_slice(insert);
    out.extend_from_slice(&bytes[at..]);
    out
}

fn check_path(path: &str) -> Result<(), ScopeError> {
    let refuse = |problem: String| {
        Err(ScopeError::InvalidPath {
            path: path.to_owned(),
            problem,
        })
    };
    if path.is_empty() {
        return refuse("it is empty".into());
    }
    if let Some(c) = path.chars().find(|&c| c == '\n' || c == '\r') {
        return refuse(format!("it holds a line break (U+{:04X})", u32::from(c)));
    }
    if let Some(c) = path
        .chars()
        .find(|&c| c.is_control() || is_invisible_format(c))
    {
        return refuse(format!(
            "it holds a control or invisible character (U+{:04X})",
            u32::from(c)
        ));
    }
    if path.trim() != path {
        return refuse("it starts or ends with whitespace".into());
    }
    if path.starts_with(['#', '`', '>']) || ["- ", "* ", "+ "].iter().any(|m| path.starts_with(m)) {
        return refuse("it would read as a heading, fence, quote or bullet on its own line".into());
    }
    if path.contains(entry::MARKER) {
        return refuse("it holds a [gated marker".into());
    }
    Ok(())
}

/// True for text written `YYYY-MM-DD` (digits and dashes; not checked as
/// a day of the calendar).
pub fn is_date_shaped(date: &str) -> bool {
    date.len() == 10
        && date.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        })
}

fn check_date(date: &str) -> Result<(), ScopeError> {
    if is_date_shaped(date) && date.parse::<jiff::civil::Date>().is_ok() {
        Ok(())
    } else {
        Err(ScopeError::InvalidDate {
            date: date.to_owned(),
        })
    }
}

/// Folds whitespace runs (line breaks included) to one space; an empty
/// reason is no reason. Other control and invisible characters are refused.
fn clean_reason(reason: Option<&str>) -> Result<Option<String>, ScopeError> {
    let Some(reason) = reason else {
        return Ok(None);
    };
    if let Some(c) = reason
        .chars()
        .find(|&c| (c.is_control() && !c.is_whitespace()) || is_invisible_format(c))
    {
        return Err(ScopeError::InvalidReason {
            problem: format!(
                "it holds a control or invisible character (U+{:04X})",
                u32::from(c)
            ),
        });
    }
    let folded = reason.split_whitespace().collect::<Vec<_>>().join(" ");
    Ok((!folded.is_empty()).then_some(folded))
}

/// Characters that change how text reads without being seen (bidi
/// overrides, zero-width marks, a stray BOM).
fn is_invisible_format(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
}
