//! A reader of `git diff --unified=0` text: one [`FileDiff`] per file with
//! its added and removed lines and their line numbers.
//!
//! Hunk bodies are consumed by the counts of their `@@` header, so a removed
//! line whose text starts with `-- ` or an added one starting with `++ ` is
//! content, never mistaken for a file header. Paths are read from the
//! `---`/`+++` headers: C-quoted names are unquoted and the tab git appends
//! to a name containing a space is dropped.

use std::sync::LazyLock;

use regex::Regex;

/// One file of a diff.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct FileDiff {
    /// Path on the `---` side, without its `a/` prefix (`/dev/null` kept).
    pub old_path: Option<String>,
    /// Path on the `+++` side, without its `b/` prefix (`/dev/null` kept).
    pub new_path: Option<String>,
    /// Added lines: (line in the new file, text).
    pub adds: Vec<(u32, String)>,
    /// Removed lines: (line in the old file, text).
    pub dels: Vec<(u32, String)>,
    /// New-side start of the first hunk.
    pub first_new: Option<u32>,
}

impl FileDiff {
    /// The path findings are reported on: the new side unless the file was deleted.
    pub fn path(&self) -> Option<&str> {
        match (&self.new_path, &self.old_path) {
            (Some(p), _) if p != DEV_NULL => Some(p),
            (_, Some(p)) if p != DEV_NULL => Some(p),
            _ => None,
        }
    }
}

const DEV_NULL: &str = "/dev/null";

static HUNK: LazyLock<Regex> = static_regex!(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@");

/// Splits diff text into files.
pub(super) fn parse(diff_text: &str) -> Vec<FileDiff> {
    let mut files: Vec<FileDiff> = Vec::new();
    let mut hunk = Hunk::default();
    for line in diff_text.split('\n') {
        if hunk.is_open() && hunk.take(line, files.last_mut()) {
            continue;
        }
        hunk = Hunk::default();
        if line.starts_with("diff --git ") {
            files.push(FileDiff::default());
        } else if let Some(rest) = line.strip_prefix("--- ") {
            if files
                .last()
                .is_none_or(|f| f.first_new.is_some() || f.old_path.is_some())
            {
                files.push(FileDiff::default());
            }
            if let Some(f) = files.last_mut() {
                f.old_path = Some(header_path(rest));
            }
        } else if let Some(rest) = line.strip_prefix("+++ ") {
            if let Some(f) = files.last_mut() {
                f.new_path = Some(header_path(rest));
            }
        } else if line.starts_with("@@ ")
            && let (Some(h), Some(f)) = (Hunk::parse(line), files.last_mut())
        {
            f.first_new.get_or_insert(h.new_no);
            hunk = h;
        }
    }
    files
}

/// The body of the hunk being read.
#[derive(Debug, Default)]
struct Hunk {
    old_no: u32,
    new_no: u32,
    old_left: u32,
    new_left: u32,
}

impl Hunk {
    fn parse(line: &str) -> Option<Hunk> {
        let caps = HUNK.captures(line)?;
        let num = |i: usize, default: u32| -> Option<u32> {
            match caps.get(i) {
                Some(m) => m.as_str().parse().ok(),
                None => Some(default),
            }
        };
        Some(Hunk {
            old_no: num(1, 0)?,
            old_left: num(2, 1)?,
            new_no: num(3, 0)?,
            new_left: num(4, 1)?,
        })
    }

    fn is_open(&self) -> bool {
        self.old_left > 0 || self.new_left > 0
    }

    /// Takes one body line; false when the line is not part of the hunk.
    fn take(&mut self, line: &str, file: Option<&mut FileDiff>) -> bool {
        let Some(file) = file else { return false };
        if let Some(text) = line.strip_prefix('+').filter(|_| self.new_left > 0) {
            file.adds.push((self.new_no, text.to_string()));
            self.new_no = self.new_no.saturating_add(1);
            self.new_left -= 1;
        } else if let Some(text) = line.strip_prefix('-').filter(|_| self.old_left > 0) {
            file.dels.push((self.old_no, text.to_string()));
            self.old_no = self.old_no.saturating_add(1);
            self.old_left -= 1;
        } else if line.starts_with(' ') && self.old_left > 0 && self.new_left > 0 {
            self.old_no = self.old_no.saturating_add(1);
            self.new_no = self.new_no.saturating_add(1);
            self.old_left -= 1;
            self.new_left -= 1;
        } else {
            // `\ No newline at end of file` belongs to the hunk; anything else ends it.
            return line.starts_with('\\');
        }
        true
    }
}

/// The path of a `---`/`+++` header, without quoting, tab or `a/`/`b/` prefix.
fn header_path(raw: &str) -> String {
    let name = if raw.starts_with('"') {
        unquote_c(raw)
    } else {
        raw.strip_suffix('\t').unwrap_or(raw).to_string()
    };
    if name == DEV_NULL {
        return name;
    }
    match name.get(..2) {
        Some("a/" | "b/") => name[2..].to_string(),
        _ => name,
    }
}

/// Undoes git's C-style quoting of a path (`"a/q\"x\303\251"`).
fn unquote_c(raw: &str) -> String {
    let inner = raw.trim_end_matches('\t');
    let inner = inner
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(inner);
    let bytes = inner.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' || i + 1 == bytes.len() {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        let c = bytes[i + 1];
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|b| (b'0'..=b'7').contains(b)));
        if let Some(d) = octal {
            out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
            i += 4;
            continue;
        }
        out.push(match c {
            b'n' => b'\n',
            b't' => b'\t',
            b'r' => b'\r',
            b'a' => 0x07,
            b'b' => 0x08,
            b'f' => 0x0c,
            b'v' => 0x0b,
            other => other,
        });
        i += 2;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_lookalikes_inside_a_hunk_are_content() {
        let text = "diff --git a/q.sql b/q.sql\n--- a/q.sql\n+++ b/q.sql\n@@ -3,2 +3,2 @@ ctx\n--- old comment\n-x\n+++ new\n+y\n\\ No newline at end of file\n";
        let files = parse(text);
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].path(), Some("q.sql"));
        assert_eq!(
            files[0].dels,
            [(3, "-- old comment".to_string()), (4, "x".to_string())]
        );
        assert_eq!(
            files[0].adds,
            [(3, "++ new".to_string()), (4, "y".to_string())]
        );
        assert_eq!(files[0].first_new, Some(3));
    }

    #[test]
    fn quoted_and_spaced_paths_are_read_back() {
        assert_eq!(header_path("\"b/q\\\"uote \\303\\251.js\""), "q\"uote é.js");
        assert_eq!(header_path("b/sp ace.js\t"), "sp ace.js");
        assert_eq!(header_path("/dev/null"), "/dev/null");
    }

    #[test]
    fn a_deleted_file_reports_its_old_path() {
        let files = parse(
            "diff --git a/t.test.js b/t.test.js\n--- a/t.test.js\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n",
        );
        assert_eq!(files[0].path(), Some("t.test.js"));
        assert_eq!(files[0].dels, [(1, "x".to_string())]);
    }
}
