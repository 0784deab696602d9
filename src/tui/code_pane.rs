//! The code part of the `d` overlay: the files changed between two
//! iterations and their hunks, as lines the view colours by kind and a
//! person scrolls and searches. The diff itself is computed by the event
//! loop ([`crate::tui::Effect::LoadCode`]), never while drawing; the lines
//! are sanitised once, here, when the result arrives.

use std::path::PathBuf;

use crate::code::{CodeSnapshot, FileDiff, FileStatus};
use crate::sanitize::sanitize_line;

/// Longest code line kept, in display columns.
const LINE_MAX: usize = 400;

/// What a line of the pane is, for its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeLineKind {
    /// A heading: `code changes …`, a file's `--- a/…` / `+++ b/…`.
    Heading,
    /// A line of the file list.
    File,
    /// `@@ … @@`.
    Hunk,
    /// An added line (`+`).
    Added,
    /// A removed line (`-`).
    Removed,
    /// Context, summaries, notes.
    Plain,
}

/// One line of the pane, sanitised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeLine {
    /// The text, its `+` / `-` mark kept.
    pub text: String,
    /// Its kind.
    pub kind: CodeLineKind,
}

/// The code changes asked of the event loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeRequest {
    /// The worktree whose repository holds the snapshots.
    pub worktree: PathBuf,
    /// The earlier iteration (0: the run's base).
    pub from: u32,
    /// The later iteration.
    pub to: u32,
    /// The earlier snapshot.
    pub a: crate::code::TreeId,
    /// The later snapshot.
    pub b: crate::code::TreeId,
}

/// Where the pane's content stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeState {
    /// Asked of the event loop.
    Loading,
    /// The lines to show.
    Ready(Vec<CodeLine>),
    /// Why there are none.
    Unavailable(String),
}

/// The code pane of the open `d` overlay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodePane {
    /// The earlier iteration.
    pub from: u32,
    /// The later iteration.
    pub to: u32,
    /// Its content.
    pub state: CodeState,
    /// First line shown.
    pub scroll: usize,
    /// The search being typed after `/`, when it is.
    pub typing: Option<String>,
    /// The last search confirmed (`n` looks for it again).
    pub query: String,
    /// A one-line message (no match...).
    pub message: Option<String>,
}

impl CodePane {
    /// The pane for iterations `from` → `to`, with the snapshots the journal
    /// names; the request to make when both exist.
    pub fn open(
        worktree: PathBuf,
        from: u32,
        to: u32,
        a: Option<&CodeSnapshot>,
        b: Option<&CodeSnapshot>,
    ) -> (CodePane, Option<CodeRequest>) {
        let side = |s: Option<&CodeSnapshot>, n: u32| match s {
            Some(CodeSnapshot::Tree(t)) => Ok(t.clone()),
            Some(CodeSnapshot::Missing(why)) => Err(format!("no snapshot of {}: {why}", name(n))),
            None => Err(format!("no snapshot of {} in the journal", name(n))),
        };
        let mut pane = CodePane {
            from,
            to,
            state: CodeState::Loading,
            scroll: 0,
            typing: None,
            query: String::new(),
            message: None,
        };
        match (side(a, from), side(b, to)) {
            (Ok(a), Ok(b)) => {
                let req = CodeRequest {
                    worktree,
                    from,
                    to,
                    a,
                    b,
                };
                (pane, Some(req))
            }
            (Err(why), _) | (_, Err(why)) => {
                pane.state = CodeState::Unavailable(sanitize_line(&why, LINE_MAX));
                (pane, None)
            }
        }
    }

    /// The diff arrived.
    pub fn on_loaded(&mut self, result: Result<Vec<FileDiff>, String>) {
        self.state = match result {
            Ok(files) => CodeState::Ready(lines_of(&files)),
            Err(e) => CodeState::Unavailable(sanitize_line(&e, LINE_MAX)),
        };
    }

    /// The lines shown (none while loading or unavailable).
    pub fn lines(&self) -> &[CodeLine] {
        match &self.state {
            CodeState::Ready(l) => l,
            _ => &[],
        }
    }

    /// Scrolls by `delta` lines, within the content.
    pub fn scroll_by(&mut self, delta: isize) {
        let last = self.lines().len().saturating_sub(1);
        self.scroll = self.scroll.saturating_add_signed(delta).min(last);
    }

    /// Moves to the next line after the first one shown holding the query
    /// (case-insensitive), wrapping around; says so when there is none.
    pub fn find_next(&mut self, from_current: bool) {
        let q = self.query.to_lowercase();
        if q.is_empty() {
            return;
        }
        let lines = self.lines();
        let n = lines.len();
        let start = if from_current {
            self.scroll
        } else {
            self.scroll + 1
        };
        let hit = (0..n)
            .map(|k| (start + k) % n.max(1))
            .find(|&i| lines[i].text.to_lowercase().contains(&q));
        match hit {
            Some(i) => {
                self.scroll = i;
                self.message = None;
            }
            None => self.message = Some(format!("no line holds {:?}", self.query)),
        }
    }
}

fn name(n: u32) -> String {
    if n == 0 {
        "the run's base".into()
    } else {
        format!("iteration {n}")
    }
}

/// The file list, then each file's headings and hunks, as pane lines.
pub fn lines_of(files: &[FileDiff]) -> Vec<CodeLine> {
    let line = |kind, text: &str| CodeLine {
        text: sanitize_line(text, LINE_MAX),
        kind,
    };
    if files.is_empty() {
        return vec![line(CodeLineKind::Plain, "no file changed")];
    }
    let mut out: Vec<CodeLine> = crate::code::file_list(files)
        .lines()
        .map(|l| line(CodeLineKind::File, l))
        .collect();
    for f in files {
        let (old, new) = match f.status {
            FileStatus::Added => ("/dev/null".to_string(), format!("b/{}", f.path)),
            FileStatus::Deleted => (format!("a/{}", f.path), "/dev/null".to_string()),
            _ => (
                format!("a/{}", f.old_path.as_deref().unwrap_or(&f.path)),
                format!("b/{}", f.path),
            ),
        };
        out.push(line(CodeLineKind::Plain, ""));
        out.push(line(CodeLineKind::Heading, &format!("--- {old}")));
        out.push(line(CodeLineKind::Heading, &format!("+++ {new}")));
        if let Some(s) = &f.summary {
            out.push(line(CodeLineKind::Plain, &format!("({s})")));
        }
        for h in &f.hunks {
            out.push(line(CodeLineKind::Hunk, &h.header()));
            for l in &h.lines {
                let kind = match l.as_bytes().first() {
                    Some(b'+') => CodeLineKind::Added,
                    Some(b'-') => CodeLineKind::Removed,
                    _ => CodeLineKind::Plain,
                };
                out.push(line(kind, l));
            }
        }
    }
    out
}
