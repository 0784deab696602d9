//! Taking a snapshot: the worktree written as a tree object through a
//! temporary index.
//!
//! The temporary index starts as a copy of the user's (so git only hashes
//! files whose stat data changed, which keeps a large worktree fast), then
//! `git add -A` brings it to the working files (untracked included, ignored
//! excluded by the user's own ignore rules), the pipeline folder is taken
//! out, and `git write-tree` writes the tree. Only new objects are written
//! to the repository; the user's index, HEAD, refs, stash and files are
//! never touched.

use std::path::{Path, PathBuf};

use super::git::Git;
use super::{CodeError, TreeId};

/// Set to `0`, `off` or `false` to record no snapshot (the events then say
/// so); anything else, or unset, takes them.
pub const SNAPSHOTS_ENV: &str = "LOOPWATCH_SNAPSHOTS";

/// What an event records of the code: a tree, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeSnapshot {
    /// The tree written.
    Tree(TreeId),
    /// No snapshot, and why (not a git worktree, git failed, turned off).
    Missing(String),
}

impl CodeSnapshot {
    /// The tree, when there is one.
    pub fn tree(&self) -> Option<&TreeId> {
        match self {
            CodeSnapshot::Tree(t) => Some(t),
            CodeSnapshot::Missing(_) => None,
        }
    }

    /// Why there is no tree, when there is none.
    pub fn missing(&self) -> Option<&str> {
        match self {
            CodeSnapshot::Tree(_) => None,
            CodeSnapshot::Missing(why) => Some(why),
        }
    }

    /// Reads the `tree` / `treeMissing` pair of an event; `None` when the
    /// event carries neither (written before snapshots existed, or by
    /// another program), a `Missing` when the tree id is malformed.
    pub fn from_fields(tree: Option<&str>, missing: Option<&str>) -> Option<CodeSnapshot> {
        match (tree, missing) {
            (Some(t), _) => Some(match TreeId::parse(t) {
                Some(id) => CodeSnapshot::Tree(id),
                None => CodeSnapshot::Missing(format!("recorded tree id {t:?} is malformed")),
            }),
            (None, Some(why)) => Some(CodeSnapshot::Missing(why.to_string())),
            (None, None) => None,
        }
    }
}

/// Takes the snapshot of `worktree` with `pipeline_dir` left out, never
/// failing: every error becomes [`CodeSnapshot::Missing`] with its message,
/// so the run goes on without it.
pub fn take(worktree: &Path, pipeline_dir: &Path) -> CodeSnapshot {
    if let Ok(v) = std::env::var(SNAPSHOTS_ENV)
        && matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "0" | "off" | "false"
        )
    {
        return CodeSnapshot::Missing(format!("snapshots turned off ({SNAPSHOTS_ENV}={v})"));
    }
    match snapshot_excluding(worktree, pipeline_dir) {
        Ok(t) => CodeSnapshot::Tree(t),
        Err(e) => {
            tracing::warn!("no snapshot of {}: {e}", worktree.display());
            CodeSnapshot::Missing(e.to_string())
        }
    }
}

/// The tree of `worktree` as it is now, `worktree/.pipeline` left out.
pub fn snapshot(worktree: &Path) -> Result<TreeId, CodeError> {
    snapshot_excluding(worktree, &worktree.join(".pipeline"))
}

/// The tree of a committed revision (`HEAD`, a branch, a commit id), for a
/// diff against what a run names as its base. The revision, which may come
/// from a journal, is never read as an option.
pub fn revision_tree(worktree: &Path, rev: &str) -> Result<TreeId, CodeError> {
    let top = toplevel(worktree)?;
    let spec = format!("{rev}^{{tree}}");
    let out = Git::new(
        &top,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &spec,
        ],
    )
    .run()?;
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    TreeId::parse(&id).ok_or_else(|| CodeError::Unexpected {
        command: "rev-parse".into(),
        detail: format!("{id:?} is not a tree id"),
    })
}

/// The tree of the git worktree holding `worktree` as it is now (the whole
/// worktree, from its top), with the folder `exclude` left out.
pub fn snapshot_excluding(worktree: &Path, exclude: &Path) -> Result<TreeId, CodeError> {
    let top = toplevel(worktree)?;
    let user_index = git_path(&top, "index")?;
    let tmp = tempfile::Builder::new()
        .prefix("loopwatch-index-")
        .tempdir()
        .map_err(|e| CodeError::Io {
            operation: "create a temporary folder",
            path: std::env::temp_dir(),
            source: e,
        })?;
    let index = tmp.path().join("index");
    if user_index.is_file() {
        copy_index(&user_index, &index)?;
    }
    let index_env = index.to_string_lossy().into_owned();
    let left_out = relative_inside(&top, exclude);
    let mut add = Git::new(&top, &["add", "-A", "--", "."]);
    if let Some(rel) = &left_out {
        add = add.args(&[format!(":(exclude,literal){rel}")]);
    }
    add.env("GIT_INDEX_FILE", index_env.clone()).run()?;
    if let Some(rel) = &left_out {
        // A pipeline folder the user once committed is in the copied index.
        Git::new(
            &top,
            &[
                "rm",
                "--cached",
                "-r",
                "-q",
                "--ignore-unmatch",
                "--",
                &format!(":(literal){rel}"),
            ],
        )
        .env("GIT_INDEX_FILE", index_env.clone())
        .run()?;
    }
    let out = Git::new(&top, &["write-tree"])
        .env("GIT_INDEX_FILE", index_env)
        .run()?;
    let text = String::from_utf8_lossy(&out.stdout);
    TreeId::parse(text.trim()).ok_or_else(|| CodeError::Unexpected {
        command: "write-tree".into(),
        detail: format!("{:?} is not a tree id", text.trim()),
    })
}

/// Copies the user's index with its modification time: git trusts an
/// entry's stat data only when the file is older than the index that
/// recorded it ("racy git"), so a fresh mtime on the copy would let a file
/// rewritten in the same second as a `git add`, with the same size, pass
/// as unchanged and the staged content be snapshotted instead of the file.
fn copy_index(from: &Path, to: &Path) -> Result<(), CodeError> {
    let io = |operation, path: &Path| {
        let path = path.to_path_buf();
        move |source| CodeError::Io {
            operation,
            path,
            source,
        }
    };
    std::fs::copy(from, to).map_err(io("copy the index", from))?;
    let mtime = std::fs::metadata(from)
        .and_then(|m| m.modified())
        .map_err(io("read the time of", from))?;
    std::fs::File::options()
        .write(true)
        .open(to)
        .and_then(|f| f.set_modified(mtime))
        .map_err(io("set the time of", to))
}

/// The top folder of the git worktree holding `path`.
pub(crate) fn toplevel(path: &Path) -> Result<PathBuf, CodeError> {
    if !path.is_dir() {
        return Err(CodeError::NotARepository {
            path: path.to_path_buf(),
        });
    }
    let out = Git::new(path, &["rev-parse", "--show-toplevel"]).run_any()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let top = text.trim_end_matches('\n');
    if !out.status.success() || top.is_empty() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        if stderr.contains("not a git repository") || stderr.contains("must be run in a work tree")
        {
            return Err(CodeError::NotARepository {
                path: path.to_path_buf(),
            });
        }
        return Err(CodeError::Git {
            command: "rev-parse --show-toplevel".into(),
            cwd: path.to_path_buf(),
            message: stderr.trim().to_string(),
        });
    }
    Ok(PathBuf::from(top))
}

/// An absolute path inside the repository's git folder.
fn git_path(top: &Path, name: &str) -> Result<PathBuf, CodeError> {
    let out = Git::new(
        top,
        &["rev-parse", "--path-format=absolute", "--git-path", name],
    )
    .run()?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(PathBuf::from(text.trim_end_matches('\n')))
}

/// `path` relative to `top`, when it is inside it (both resolved, so a
/// symlinked temp folder still matches).
fn relative_inside(top: &Path, path: &Path) -> Option<String> {
    let top = std::fs::canonicalize(top).ok()?;
    let path = std::fs::canonicalize(path).ok()?;
    let rel = path.strip_prefix(&top).ok()?;
    let rel = rel.to_string_lossy();
    (!rel.is_empty()).then(|| rel.into_owned())
}
