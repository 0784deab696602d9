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
use std::time::Duration;

use serde::Serialize;
use similar::{Algorithm, ChangeTag, TextDiff};

use super::git::Git;
use super::snapshot::toplevel;
use super::{CodeError, TreeId};

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
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
        match self {
            FileStatus::Added => "added",
            FileStatus::Modified => "modified",
            FileStatus::Deleted => "deleted",
            FileStatus::Renamed => "renamed",
            FileStatus::TypeChanged => "type-changed",
        }
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

/// The unified hunks of two texts, with the counts of added and removed lines.
fn hunks(old: &str, new: &str, context: usize) -> (Vec<Hunk>, u32, u32) {
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

/// Type and size of each object, by id (missing ones left out).
fn object_info(top: &Path, ids: &[&str]) -> Result<HashMap<String, (String, u64)>, CodeError> {
    let mut map = HashMap::new();
    if ids.is_empty() {
        return Ok(map);
    }
    let input: String = ids.iter().flat_map(|id| [*id, "\n"]).collect();
    let out = Git::new(
        top,
        &[
            "cat-file",
            "--batch-check=%(objectname) %(objecttype) %(objectsize)",
        ],
    )
    .input(input.into_bytes())
    .run()?;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let mut it = line.split(' ');
        if let (Some(id), Some(kind), Some(size)) = (it.next(), it.next(), it.next())
            && let Ok(size) = size.parse()
        {
            map.insert(id.to_string(), (kind.to_string(), size));
        }
    }
    Ok(map)
}

/// The contents of blobs, by id, read in one `git cat-file --batch`.
pub(crate) fn blobs(top: &Path, ids: &[&str]) -> Result<HashMap<String, Vec<u8>>, CodeError> {
    let mut map = HashMap::new();
    if ids.is_empty() {
        return Ok(map);
    }
    let input: String = ids.iter().flat_map(|id| [*id, "\n"]).collect();
    let out = Git::new(top, &["cat-file", "--batch"])
        .input(input.into_bytes())
        .run()?;
    for (id, body) in parse_batch(&out.stdout) {
        map.insert(id, body);
    }
    Ok(map)
}

/// Splits `cat-file --batch` output into (object name, contents); an entry
/// reported `missing` is left out.
pub(crate) fn parse_batch(mut bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    while let Some(nl) = bytes.iter().position(|b| *b == b'\n') {
        let header = String::from_utf8_lossy(&bytes[..nl]).into_owned();
        bytes = &bytes[nl + 1..];
        let parts: Vec<&str> = header.rsplitn(3, ' ').collect();
        // `<name> <type> <size>` (a name may hold spaces: split from the right).
        let [size, _kind, name] = parts[..] else {
            continue;
        };
        let Ok(size) = size.parse::<usize>() else {
            continue; // `<name> missing` or `ambiguous`
        };
        if bytes.len() < size {
            break;
        }
        out.push((name.to_string(), bytes[..size].to_vec()));
        bytes = bytes.get(size + 1..).unwrap_or(&[]);
    }
    out
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

    #[test]
    fn batch_output_with_missing_objects_and_binary_bodies() {
        let mut out = b"abc blob 3\n\x00\n\x01\ndef missing\nghi blob 0\n\n".to_vec();
        out.extend_from_slice(b"t:a b.txt blob 2\nhi\n");
        let got = parse_batch(&out);
        assert_eq!(
            got,
            vec![
                ("abc".to_string(), b"\x00\n\x01".to_vec()),
                ("ghi".to_string(), Vec::new()),
                ("t:a b.txt".to_string(), b"hi".to_vec()),
            ]
        );
    }
}
