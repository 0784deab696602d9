//! The code diff between two snapshots: the changed files from
//! `git diff-tree` (plumbing, NUL-separated, renames found), their blobs
//! from `git cat-file`, and the unified hunks computed here, so that no
//! diff driver, textconv filter, colour or prefix setting changes them.
//!
//! A binary file, a file over [`DiffLimits::max_file_bytes`], a change of
//! more than [`DiffLimits::max_changed_lines`] lines or a submodule is
//! summarised in one line, never dumped.

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;

use super::git::Git;
use super::hunks::hunks;
use super::objects::{blobs, object_info};
use super::snapshot::toplevel;
use super::{CodeError, TreeId};

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[derive(strum::IntoStaticStr)]
#[strum(serialize_all = "kebab-case")]
pub enum FileStatus {
    /// New in the later tree.
    Added,
    /// Changed content or mode.
    Modified,
    /// Gone from the later tree.
    Deleted,
    /// Moved (and maybe changed); `oldPath` names where from.
    Renamed,
    /// Became a symlink, a file or a submodule from another kind.
    TypeChanged,
}

impl FileStatus {
    /// The one-letter mark of the file list (A, M, D, R, T).
    pub fn letter(self) -> char {
        match self {
            FileStatus::Added => 'A',
            FileStatus::Modified => 'M',
            FileStatus::Deleted => 'D',
            FileStatus::Renamed => 'R',
            FileStatus::TypeChanged => 'T',
        }
    }

    /// The word used in JSON and reports.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileDiff {
    /// Path in the later tree (in the earlier one for a deleted file).
    pub path: String,
    /// How it changed.
    pub status: FileStatus,
    /// Where a renamed file was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    /// Lines added (0 when summarised).
    pub added: u32,
    /// Lines removed (0 when summarised).
    pub removed: u32,
    /// Why there are no hunks, when the change is summarised (binary,
    /// too large, submodule, mode only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The unified hunks.
    pub hunks: Vec<Hunk>,
}

/// One unified hunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hunk {
    /// First line in the earlier file (1-based; the line before when empty).
    pub old_start: u32,
    /// Lines of the earlier file covered.
    pub old_lines: u32,
    /// First line in the later file.
    pub new_start: u32,
    /// Lines of the later file covered.
    pub new_lines: u32,
    /// Lines, each marked by its first character: ` ` context, `-`
    /// removed, `+` added, `\` "no newline at end of file".
    pub lines: Vec<String>,
}

impl Hunk {
    /// `@@ -a,b +c,d @@`.
    pub fn header(&self) -> String {
        format!(
            "@@ -{},{} +{},{} @@",
            self.old_start, self.old_lines, self.new_start, self.new_lines
        )
    }
}

/// Bounds on what a diff shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiffLimits {
    /// A side larger than this is summarised.
    pub max_file_bytes: u64,
    /// A file with more changed lines than this is summarised.
    pub max_changed_lines: u32,
    /// Context lines around each change.
    pub context: usize,
}

impl Default for DiffLimits {
    fn default() -> Self {
        DiffLimits {
            max_file_bytes: 2 << 20,
            max_changed_lines: 20_000,
            context: 3,
        }
    }
}

/// The files changed from tree `a` to tree `b`, sorted by path, with hunks.
pub fn diff(worktree: &Path, a: &TreeId, b: &TreeId) -> Result<Vec<FileDiff>, CodeError> {
    diff_with(worktree, a, b, &DiffLimits::default())
}

/// [`diff`] with explicit limits.
pub fn diff_with(
    worktree: &Path,
    a: &TreeId,
    b: &TreeId,
    limits: &DiffLimits,
) -> Result<Vec<FileDiff>, CodeError> {
    let top = toplevel(worktree)?;
    let kinds = object_info(&top, &[a.as_str(), b.as_str()])?;
    for t in [a, b] {
        if kinds.get(t.as_str()).is_none_or(|(kind, _)| kind != "tree") {
            return Err(CodeError::MissingTree {
                tree: t.clone(),
                repo: top.clone(),
            });
        }
    }
    let out = Git::new(
        &top,
        &[
            "diff-tree",
            "-r",
            "-z",
            "-M",
            "--raw",
            "--no-abbrev",
            a.as_str(),
            b.as_str(),
        ],
    )
    .run()?;
    let entries = parse_raw(&out.stdout)?;
    let blob_ids: Vec<&str> = entries
        .iter()
        .flat_map(|e| [e.old.as_ref(), e.new.as_ref()])
        .flatten()
        .filter(|s| !s.is_gitlink())
        .map(|s| s.oid.as_str())
        .collect();
    let sizes = object_info(&top, &blob_ids)?;
    let wanted: Vec<&str> = blob_ids
        .iter()
        .copied()
        .filter(|id| {
            sizes
                .get(*id)
                .is_some_and(|(_, n)| *n <= limits.max_file_bytes)
        })
        .collect();
    let contents = blobs(&top, &wanted)?;
    Ok(entries
        .into_iter()
        .map(|e| e.into_file(&sizes, &contents, limits))
        .collect())
}

/// One side of a raw diff entry.
struct Side {
    mode: String,
    oid: String,
}

impl Side {
    fn is_gitlink(&self) -> bool {
        self.mode == "160000"
    }
}

/// One record of `diff-tree --raw -z`.
struct RawEntry {
    status: FileStatus,
    path: String,
    old_path: Option<String>,
    old: Option<Side>,
    new: Option<Side>,
}

const ZERO_MODE: &str = "000000";

fn parse_raw(bytes: &[u8]) -> Result<Vec<RawEntry>, CodeError> {
    let bad = |detail: String| CodeError::Unexpected {
        command: "diff-tree".into(),
        detail,
    };
    let mut fields = bytes
        .split(|b| *b == 0)
        .map(|f| String::from_utf8_lossy(f).into_owned());
    let mut out = Vec::new();
    while let Some(head) = fields.next() {
        if head.is_empty() {
            continue;
        }
        let parts: Vec<&str> = head.trim_start_matches(':').split(' ').collect();
        let [old_mode, new_mode, old_oid, new_oid, status] = parts[..] else {
            return Err(bad(format!("{head:?} is not a raw diff record")));
        };
        let mut path = fields
            .next()
            .ok_or_else(|| bad(format!("no path after {head:?}")))?;
        let mut old_path = None;
        let letter = status.chars().next().unwrap_or('?');
        if matches!(letter, 'R' | 'C') {
            let to = fields
                .next()
                .ok_or_else(|| bad(format!("no destination after {head:?}")))?;
            old_path = Some(std::mem::replace(&mut path, to));
        }
        let side = |mode: &str, oid: &str| {
            (mode != ZERO_MODE).then(|| Side {
                mode: mode.to_string(),
                oid: oid.to_string(),
            })
        };
        let status = match letter {
            'A' | 'C' => FileStatus::Added,
            'D' => FileStatus::Deleted,
            'R' => FileStatus::Renamed,
            'T' => FileStatus::TypeChanged,
            _ => FileStatus::Modified,
        };
        // A copy is shown as an added file: its source did not change.
        if letter == 'C' {
            old_path = None;
        }
        let old = if letter == 'C' {
            None
        } else {
            side(old_mode, old_oid)
        };
        out.push(RawEntry {
            status,
            path,
            old_path,
            old,
            new: side(new_mode, new_oid),
        });
    }
    Ok(out)
}

impl RawEntry {
    fn into_file(
        self,
        sizes: &HashMap<String, (String, u64)>,
        contents: &HashMap<String, Vec<u8>>,
        limits: &DiffLimits,
    ) -> FileDiff {
        let mut file = FileDiff {
            path: self.path,
            status: self.status,
            old_path: self.old_path,
            added: 0,
            removed: 0,
            summary: None,
            hunks: Vec::new(),
        };
        let sides = [self.old.as_ref(), self.new.as_ref()];
        if sides.iter().flatten().any(|s| s.is_gitlink()) {
            let ids: Vec<String> = sides
                .iter()
                .map(|s| s.map_or("none".to_string(), |s| short(&s.oid)))
                .collect();
            file.summary = Some(format!("submodule {} → {}", ids[0], ids[1]));
            return file;
        }
        let size = |s: Option<&Side>| s.and_then(|s| sizes.get(&s.oid)).map_or(0, |(_, n)| *n);
        let (old_size, new_size) = (size(sides[0]), size(sides[1]));
        if old_size.max(new_size) > limits.max_file_bytes {
            file.summary = Some(format!(
                "too large to show: {} → {} bytes",
                old_size, new_size
            ));
            return file;
        }
        let text = |s: Option<&Side>| -> Option<&[u8]> {
            match s {
                None => Some(&[]),
                Some(s) => contents.get(&s.oid).map(Vec::as_slice),
            }
        };
        let (Some(old), Some(new)) = (text(sides[0]), text(sides[1])) else {
            file.summary = Some("content not in the repository".into());
            return file;
        };
        if is_binary(old) || is_binary(new) {
            file.summary = Some(format!("binary file: {old_size} → {new_size} bytes"));
            return file;
        }
        let (old, new) = (String::from_utf8_lossy(old), String::from_utf8_lossy(new));
        let (hunks, added, removed) = hunks(&old, &new, limits.context);
        file.added = added;
        file.removed = removed;
        if added + removed > limits.max_changed_lines {
            file.summary = Some(format!(
                "{added} lines added, {removed} removed: too many to show"
            ));
        } else if hunks.is_empty() {
            let modes: Vec<&str> = sides.iter().flatten().map(|s| s.mode.as_str()).collect();
            if let [a, b] = modes[..]
                && a != b
            {
                file.summary = Some(format!("mode {a} → {b}"));
            }
        } else {
            file.hunks = hunks;
        }
        file
    }
}

/// Like git: a NUL in the first 8000 bytes makes a file binary.
fn is_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(8000)].contains(&0)
}

fn short(oid: &str) -> String {
    oid.chars().take(12).collect()
}
