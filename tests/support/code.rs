//! A scratch git repository for the code tests, a fingerprint of
//! everything of the user's that a snapshot must leave as it was, a run
//! started in it, a journal written from JSON bodies, and the real binary
//! run in a folder.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use loopwatch::journal::{Appended, Pipeline};
use loopwatch::model::event::RunInfo;
use loopwatch::recorder::Recorder;
use serde_json::{Value, json};

// Each test crate uses its own subset.
#[allow(unused_imports)]
pub use super::git::{git, git_any, hermetic};

/// Writes a file, creating its folders.
pub fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}

/// A repository with one commit (`src/lib.rs`, `README.md`, `.gitignore`
/// ignoring `target/` and `*.log`).
pub fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    git(root, &["init", "-q", "-b", "main"]);
    write(root, "src/lib.rs", "pub fn one() -> u32 {\n    1\n}\n");
    write(root, "README.md", "# demo\n");
    write(root, ".gitignore", "target/\n*.log\n");
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "first"]);
    dir
}

/// A recorder on `root/.pipeline` that has started run `id` on `contract`
/// (empty: none); returns it and what the start appended.
pub fn start_run(root: &Path, id: &str, contract: &str) -> (Recorder, Appended) {
    let rec = Recorder::new(Pipeline::at(root.join(".pipeline")));
    let run = RunInfo {
        id: id.into(),
        contract: contract.into(),
        ..RunInfo::default()
    };
    let started = rec.run_start(run, false).expect("run start");
    (rec, started)
}

/// A journal's text: each of `bodies` (JSON objects) numbered from 1 and
/// stamped `at(i)` (`i` counting from 0), one line each.
pub fn journal_text(bodies: &[Value], at: impl Fn(usize) -> String) -> String {
    let mut text = String::new();
    for (i, body) in bodies.iter().enumerate() {
        let mut line = json!({"v": 1, "seq": i + 1, "at": at(i)});
        let fields = body.as_object().expect("an event body is an object");
        line.as_object_mut()
            .expect("an object")
            .extend(fields.clone());
        text.push_str(&line.to_string());
        text.push('\n');
    }
    text
}

/// The real binary run in `dir`, with no pipeline named by the environment
/// and no colour.
pub fn loopwatch(dir: &Path) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("loopwatch").expect("binary");
    c.current_dir(dir)
        .env_remove("LOOPWATCH_PIPELINE")
        .env("NO_COLOR", "1");
    c
}

/// Runs `cmd`, which must exit 0 with nothing on stderr; returns its stdout.
pub fn stdout_of(cmd: &mut assert_cmd::Command) -> String {
    let out = cmd.assert().code(0).stderr("").get_output().clone();
    String::from_utf8(out.stdout).expect("utf-8 stdout")
}

/// Everything of the user's a snapshot must not change.
#[derive(Debug, PartialEq, Eq)]
pub struct Fingerprint {
    /// Part of the fingerprint.
    pub status: String,
    /// Part of the fingerprint.
    pub head: String,
    /// Part of the fingerprint.
    pub index: Option<Vec<u8>>,
    /// Part of the fingerprint.
    pub stash: String,
    /// Part of the fingerprint.
    pub refs: String,
    /// Part of the fingerprint.
    pub files: Vec<(PathBuf, Vec<u8>)>,
}

/// Takes the fingerprint of a repository (or of a plain folder).
pub fn fingerprint(root: &Path) -> Fingerprint {
    let in_git = root.join(".git").exists();
    let g = |args: &[&str]| {
        if in_git {
            git(root, args)
        } else {
            String::new()
        }
    };
    Fingerprint {
        status: g(&[
            "status",
            "--porcelain=v2",
            "--branch",
            "--untracked-files=all",
            "--ignored",
        ]),
        // What HEAD names and what it points at (nothing yet on an unborn branch).
        head: if in_git {
            let (_, name, _) = git_any(root, &["symbolic-ref", "-q", "HEAD"]);
            let (_, id, _) = git_any(root, &["rev-parse", "--verify", "-q", "HEAD"]);
            name + &id
        } else {
            String::new()
        },
        index: std::fs::read(root.join(".git/index")).ok(),
        stash: g(&["stash", "list", "--format=%H %gs"]),
        refs: g(&[
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            "refs/heads",
            "refs/tags",
            "refs/stash",
        ]),
        files: files(root),
    }
}

/// Every file under `root` outside `.git`, with its bytes, sorted.
fn files(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).expect("read dir") {
            let p = e.expect("entry").path();
            if p.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            if p.is_dir() {
                todo.push(p);
            } else {
                let bytes = std::fs::read(&p).expect("read");
                out.push((p.strip_prefix(root).expect("inside").to_path_buf(), bytes));
            }
        }
    }
    out.sort();
    out
}

/// The paths of a tree, recursively.
pub fn tree_paths(root: &Path, tree: &str) -> Vec<String> {
    git(root, &["ls-tree", "-r", "-z", "--name-only", tree])
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(String::from)
        .collect()
}
