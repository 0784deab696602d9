//! The lines a claim cites (`path:lines`), read from a snapshot with a few
//! lines of context, so a person sees the code the verifier saw even after
//! the file changed or vanished.

use std::ops::RangeInclusive;
use std::path::{Component, Path};

use serde::Serialize;

use super::git::Git;
use super::objects::parse_batch;
use super::snapshot::toplevel;
use super::{CodeError, TreeId};

/// Files larger than this are not read for an excerpt.
const MAX_EXCERPT_FILE: usize = 8 << 20;

/// Cited lines from one file of a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Excerpt {
    /// The path, as normalised.
    pub path: String,
    /// The snapshot read.
    pub tree: TreeId,
    /// The lines shown (cited ones and their context), in order.
    pub lines: Vec<ExcerptLine>,
    /// Lines in the file.
    pub total_lines: u32,
    /// Why fewer lines than asked are shown: the file is not in the
    /// snapshot, is binary or too large, or ends before the cited lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One line of an excerpt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExcerptLine {
    /// 1-based line number.
    pub number: u32,
    /// The text, without its line ending (raw: sanitise before showing).
    pub text: String,
    /// One of the cited lines (the rest is context).
    pub cited: bool,
}

/// Lines `lines` of `path` in `tree`, with `context` lines either side.
/// A path that is absolute, leaves the worktree or holds a line break is
/// refused; a file missing from the snapshot, binary or too short is an
/// excerpt whose `note` says so.
pub fn excerpt(
    worktree: &Path,
    tree: &TreeId,
    path: &str,
    lines: RangeInclusive<u32>,
    context: u32,
) -> Result<Excerpt, CodeError> {
    let rel = normalise(path)?;
    let top = toplevel(worktree)?;
    let mut out = Excerpt {
        path: rel.clone(),
        tree: tree.clone(),
        lines: Vec::new(),
        total_lines: 0,
        note: None,
    };
    let spec = format!("{tree}:{rel}");
    let check = Git::new(
        &top,
        &["cat-file", "--batch-check=%(objecttype) %(objectsize)"],
    )
    .input(format!("{tree}\n{spec}\n").into_bytes())
    .run()?;
    let answer = String::from_utf8_lossy(&check.stdout);
    let mut answers = answer.lines();
    if answers.next().is_none_or(|l| !l.starts_with("tree ")) {
        return Err(CodeError::MissingTree {
            tree: tree.clone(),
            repo: top,
        });
    }
    let info = answers.next().unwrap_or("");
    let mut info = info.split(' ');
    let (kind, size) = (info.next().unwrap_or(""), info.next().unwrap_or(""));
    if kind != "blob" {
        out.note = Some(match kind {
            "tree" => format!("{rel} is a folder in the snapshot"),
            _ => format!("{rel} is not in the snapshot"),
        });
        return Ok(out);
    }
    if size.parse::<usize>().is_ok_and(|n| n > MAX_EXCERPT_FILE) {
        out.note = Some(format!("{rel} is too large to show ({size} bytes)"));
        return Ok(out);
    }
    let body = Git::new(&top, &["cat-file", "--batch"])
        .input(format!("{spec}\n").into_bytes())
        .run()?;
    let Some((_, bytes)) = parse_batch(&body.stdout).into_iter().next() else {
        out.note = Some(format!("{rel} is not in the snapshot"));
        return Ok(out);
    };
    if bytes[..bytes.len().min(8000)].contains(&0) {
        out.note = Some(format!("{rel} is a binary file ({} bytes)", bytes.len()));
        return Ok(out);
    }
    let text = String::from_utf8_lossy(&bytes);
    let all: Vec<&str> = text.lines().collect();
    out.total_lines = u32::try_from(all.len()).unwrap_or(u32::MAX);
    let (first, last) = (*lines.start().max(&1), *lines.end().max(lines.start()));
    if first > out.total_lines {
        out.note = Some(format!(
            "{rel} has {} lines: line {first} is past its end",
            out.total_lines
        ));
        return Ok(out);
    }
    if last > out.total_lines {
        out.note = Some(format!(
            "{rel} has {} lines: shown up to its end",
            out.total_lines
        ));
    }
    let from = first.saturating_sub(context).max(1);
    let to = last.saturating_add(context).min(out.total_lines);
    for n in from..=to {
        out.lines.push(ExcerptLine {
            number: n,
            text: all[(n - 1) as usize].to_string(),
            cited: (first..=last).contains(&n),
        });
    }
    Ok(out)
}

/// A relative path inside the worktree, `./` and empty parts dropped.
fn normalise(path: &str) -> Result<String, CodeError> {
    let refuse = |why| CodeError::Path {
        path: path.to_string(),
        why,
    };
    if path.contains(['\n', '\r', '\0']) {
        return Err(refuse("it holds a line break or NUL"));
    }
    let mut parts = Vec::new();
    for c in Path::new(path).components() {
        match c {
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            Component::CurDir => {}
            Component::ParentDir => return Err(refuse("it leaves the worktree")),
            Component::RootDir | Component::Prefix(_) => {
                return Err(refuse("it is absolute"));
            }
        }
    }
    if parts.is_empty() {
        return Err(refuse("it names no file"));
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_normalised_or_refused() {
        assert_eq!(normalise("./src//a.rs").unwrap(), "src/a.rs");
        assert!(normalise("/etc/passwd").is_err());
        assert!(normalise("src/../../x").is_err());
        assert!(normalise("a\nb").is_err());
        assert!(normalise(".").is_err());
    }
}
