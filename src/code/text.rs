//! The text form of a code diff: the file list, then each file's unified
//! hunks (what `loopwatch diff` prints). The text is raw: whoever prints it
//! sanitises it for the terminal.

use std::fmt::Write;

use super::FileDiff;

/// `M  src/a.rs  +3 -1` per file, then `--- a/…` / `+++ b/…` and the hunks
/// of each, or its one-line summary.
pub fn diff_text(files: &[FileDiff]) -> String {
    let mut o = String::new();
    if files.is_empty() {
        o.push_str("no file changed\n");
        return o;
    }
    o.push_str(&file_list(files));
    for f in files {
        let (old, new) = match f.status {
            super::FileStatus::Added => ("/dev/null".to_string(), format!("b/{}", f.path)),
            super::FileStatus::Deleted => (format!("a/{}", f.path), "/dev/null".to_string()),
            _ => (
                format!("a/{}", f.old_path.as_deref().unwrap_or(&f.path)),
                format!("b/{}", f.path),
            ),
        };
        let _ = writeln!(o, "\n--- {old}\n+++ {new}");
        if let Some(s) = &f.summary {
            let _ = writeln!(o, "({s})");
        }
        for h in &f.hunks {
            let _ = writeln!(o, "{}", h.header());
            for l in &h.lines {
                let _ = writeln!(o, "{l}");
            }
        }
    }
    o
}

/// One line per changed file: status letter, path (`old → new` for a
/// rename), added and removed line counts or the summary.
pub fn file_list(files: &[FileDiff]) -> String {
    let mut o = String::new();
    for f in files {
        let path = match &f.old_path {
            Some(old) => format!("{old} → {}", f.path),
            None => f.path.clone(),
        };
        let counts = match &f.summary {
            Some(s) if f.added + f.removed == 0 => s.clone(),
            _ => format!("+{} -{}", f.added, f.removed),
        };
        let _ = writeln!(o, "{}  {path}  {counts}", f.status.letter());
    }
    o
}
