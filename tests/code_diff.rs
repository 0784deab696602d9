//! Code diffs between snapshots: every kind of change (modified, added,
//! deleted, renamed, mode, binary, too large), hostile git configuration
//! that must not change a byte, the cited lines of a finding read from a
//! snapshot, and `loopwatch diff` text and `--json` through the real binary.

mod support;

use std::path::Path;

use loopwatch::code::{self, DiffLimits, FileStatus, TreeId};
use serde_json::{Value, json};
use support::assert_has;
use support::code::{git, journal_text, loopwatch, repo, stdout_of, write};

/// Two snapshots of one repository and the repository.
struct TwoTrees {
    dir: tempfile::TempDir,
    a: TreeId,
    b: TreeId,
}

fn two_trees() -> TwoTrees {
    let dir = repo();
    let root = dir.path();
    write(root, "src/gone.rs", "fn gone() {}\n");
    write(
        root,
        "docs/old-name.md",
        "# moved\n\nsame text, long enough to be found as a rename\n",
    );
    write(root, "tools/run.sh", "#!/bin/sh\necho run\n");
    std::fs::write(
        root.join("logo.png"),
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR",
    )
    .unwrap();
    let a = code::snapshot(root).expect("first snapshot");
    write(
        root,
        "src/lib.rs",
        "pub fn one() -> u32 {\n    // the answer\n    2\n}\n",
    );
    write(root, "src/added.rs", "pub fn added() {}\n");
    std::fs::remove_file(root.join("src/gone.rs")).unwrap();
    std::fs::create_dir_all(root.join("docs/guide")).unwrap();
    std::fs::rename(
        root.join("docs/old-name.md"),
        root.join("docs/guide/new-name.md"),
    )
    .unwrap();
    std::fs::set_permissions(
        root.join("tools/run.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::fs::write(
        root.join("logo.png"),
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x01",
    )
    .unwrap();
    let b = code::snapshot(root).expect("second snapshot");
    TwoTrees { dir, a, b }
}

/// Configuration that changes what porcelain `git diff` prints.
fn make_git_hostile(root: &Path) {
    for (k, v) in [
        ("color.ui", "always"),
        ("color.diff", "always"),
        ("diff.mnemonicPrefix", "true"),
        ("diff.noprefix", "true"),
        ("diff.external", "false"),
        ("diff.upper.textconv", "tr a-z A-Z"),
        ("diff.context", "0"),
        ("diff.algorithm", "minimal"),
        ("core.quotePath", "true"),
    ] {
        git(root, &["config", k, v]);
    }
    write(root, ".git/info/attributes", "*.rs diff=upper\n");
}

/// Path, status, old path, added, removed, summary.
type Listed<'a> = (
    &'a str,
    FileStatus,
    Option<&'a str>,
    u32,
    u32,
    Option<&'a str>,
);

#[test]
fn every_kind_of_change_with_hunks_or_a_summary() {
    let t = two_trees();
    let files = code::diff(t.dir.path(), &t.a, &t.b).expect("diff");
    let list: Vec<Listed> = files
        .iter()
        .map(|f| {
            (
                f.path.as_str(),
                f.status,
                f.old_path.as_deref(),
                f.added,
                f.removed,
                f.summary.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        list,
        [
            (
                "docs/guide/new-name.md",
                FileStatus::Renamed,
                Some("docs/old-name.md"),
                0,
                0,
                None
            ),
            (
                "logo.png",
                FileStatus::Modified,
                None,
                0,
                0,
                Some("binary file: 16 → 17 bytes")
            ),
            ("src/added.rs", FileStatus::Added, None, 1, 0, None),
            ("src/gone.rs", FileStatus::Deleted, None, 0, 1, None),
            ("src/lib.rs", FileStatus::Modified, None, 2, 1, None),
            (
                "tools/run.sh",
                FileStatus::Modified,
                None,
                0,
                0,
                Some("mode 100644 → 100755")
            ),
        ]
    );
    let lib = &files[4];
    assert_eq!(lib.hunks.len(), 1);
    assert_eq!(lib.hunks[0].header(), "@@ -1,3 +1,4 @@");
    assert_eq!(
        lib.hunks[0].lines,
        [
            " pub fn one() -> u32 {",
            "-    1",
            "+    // the answer",
            "+    2",
            " }"
        ]
    );
    assert!(
        files
            .iter()
            .filter(|f| f.summary.is_some())
            .all(|f| f.hunks.is_empty())
    );
}

#[test]
fn hostile_git_configuration_changes_nothing() {
    let t = two_trees();
    let plain = code::diff(t.dir.path(), &t.a, &t.b).expect("diff");
    make_git_hostile(t.dir.path());
    let hostile = code::diff(t.dir.path(), &t.a, &t.b).expect("diff");
    assert_eq!(hostile, plain);
    let text = code::diff_text(&hostile);
    assert!(!text.contains('\x1b'), "colour in the text:\n{text}");
    assert_has(
        &text,
        "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,4 @@\n",
    );
    assert!(
        text.contains("+    // the answer"),
        "textconv applied:\n{text}"
    );
}

#[test]
fn a_huge_change_is_summarised_never_dumped() {
    let dir = repo();
    let root = dir.path();
    let a = code::snapshot(root).unwrap();
    let big: String = (0..3000).map(|i| format!("line {i}\n")).collect();
    write(root, "big.txt", &big);
    let b = code::snapshot(root).unwrap();
    let limits = DiffLimits {
        max_changed_lines: 1000,
        ..DiffLimits::default()
    };
    let files = code::diff_with(root, &a, &b, &limits).unwrap();
    assert_eq!(
        files[0].summary.as_deref(),
        Some("3000 lines added, 0 removed: too many to show")
    );
    assert!(files[0].hunks.is_empty());
    let limits = DiffLimits {
        max_file_bytes: 100,
        ..DiffLimits::default()
    };
    let files = code::diff_with(root, &a, &b, &limits).unwrap();
    assert_eq!(
        files[0].summary.as_deref(),
        Some("too large to show: 0 → 28890 bytes")
    );
    assert!(!code::diff_text(&files).contains("line 1"));
    // Within the default limits the whole 3000-line hunk is there.
    let files = code::diff(root, &a, &b).unwrap();
    assert_eq!(files[0].hunks[0].lines.len(), 3000);
}

#[test]
fn a_tree_that_is_not_in_the_repository_is_named() {
    let t = two_trees();
    let ghost = TreeId::parse("0123456789012345678901234567890123456789").unwrap();
    let err = code::diff(t.dir.path(), &t.a, &ghost).unwrap_err();
    assert!(
        err.to_string().starts_with(
            "snapshot 0123456789012345678901234567890123456789 is not in the repository"
        ),
        "{err}"
    );
    let outside = tempfile::tempdir().unwrap();
    let err = code::diff(outside.path(), &t.a, &t.b).unwrap_err();
    assert!(
        err.to_string().ends_with("is not inside a git worktree"),
        "{err}"
    );
}

#[test]
fn cited_lines_come_from_the_snapshot_with_context() {
    let t = two_trees();
    let root = t.dir.path();
    // The file has changed since: the excerpt is the snapshot's.
    let e = code::excerpt(root, &t.a, "./src/lib.rs", 2..=2, 1).expect("excerpt");
    let lines: Vec<(u32, &str, bool)> = e
        .lines
        .iter()
        .map(|l| (l.number, l.text.as_str(), l.cited))
        .collect();
    assert_eq!(
        lines,
        [
            (1, "pub fn one() -> u32 {", false),
            (2, "    1", true),
            (3, "}", false)
        ]
    );
    assert_eq!(e.note, None);
    assert_eq!(e.total_lines, 3);
    // Vanished in the later snapshot, binary, past the end, a folder.
    let gone = code::excerpt(root, &t.b, "src/gone.rs", 1..=1, 2).unwrap();
    assert_eq!(
        gone.note.as_deref(),
        Some("src/gone.rs is not in the snapshot")
    );
    assert!(gone.lines.is_empty());
    let bin = code::excerpt(root, &t.b, "logo.png", 1..=1, 2).unwrap();
    assert_eq!(
        bin.note.as_deref(),
        Some("logo.png is a binary file (17 bytes)")
    );
    let past = code::excerpt(root, &t.a, "src/lib.rs", 9..=12, 2).unwrap();
    assert_eq!(
        past.note.as_deref(),
        Some("src/lib.rs has 3 lines: line 9 is past its end")
    );
    let folder = code::excerpt(root, &t.a, "src", 1..=1, 0).unwrap();
    assert_eq!(
        folder.note.as_deref(),
        Some("src is a folder in the snapshot")
    );
    // Outside the worktree: refused.
    for p in ["/etc/passwd", "../x", "src/../../x"] {
        let err = code::excerpt(root, &t.a, p, 1..=1, 0).unwrap_err();
        assert!(
            err.to_string().starts_with(&format!("path refused: {p}")),
            "{err}"
        );
    }
}

/// A journal of two iterations whose GATE 0 rounds name the two trees,
/// written beside the repository's files.
fn journal(root: &Path, base: &str, a: &str, b: &str) {
    let lines = [
        json!({"type": "run.started", "run": {"id": "r1", "flow": "feat"}, "tree": base}),
        json!({"type": "iteration.started", "iteration": 1, "trigger": "initial"}),
        json!({"type": "gate.started", "gate": "floor", "iteration": 1, "round": 1, "tree": a}),
        json!({"type": "gate.finished", "gate": "floor", "iteration": 1, "round": 1, "verdict": {"kind": "UNMET"}, "rows": []}),
        json!({"type": "iteration.started", "iteration": 2, "trigger": "floor-unmet"}),
        json!({"type": "gate.started", "gate": "floor", "iteration": 2, "round": 1, "tree": b}),
        json!({"type": "gate.finished", "gate": "floor", "iteration": 2, "round": 1, "verdict": {"kind": "MET"}, "rows": []}),
        json!({"type": "iteration.started", "iteration": 3, "trigger": "ecarts"}),
        json!({"type": "gate.started", "gate": "floor", "iteration": 3, "round": 1, "treeMissing": "git failed"}),
    ];
    let text = journal_text(&lines, |i| format!("2026-12-01T08:00:{i:02}Z"));
    write(root, ".pipeline/events.jsonl", &text);
}

fn loopwatch_diff(root: &Path, args: &[&str]) -> String {
    stdout_of(loopwatch(root).arg("diff").args(args))
}

#[test]
fn loopwatch_diff_prints_the_file_list_then_the_hunks() {
    let t = two_trees();
    let root = t.dir.path();
    journal(root, t.a.as_str(), t.a.as_str(), t.b.as_str());
    let text = loopwatch_diff(root, &["1", "2"]);
    let code = text
        .split_once("\ncode changes, iteration 1 → iteration 2\n")
        .expect(&text)
        .1;
    let (list, hunks) = code.split_once("\n\n").expect(code);
    assert_eq!(
        list,
        "R  docs/old-name.md → docs/guide/new-name.md  +0 -0\n\
         M  logo.png  binary file: 16 → 17 bytes\n\
         A  src/added.rs  +1 -0\n\
         D  src/gone.rs  +0 -1\n\
         M  src/lib.rs  +2 -1\n\
         M  tools/run.sh  mode 100644 → 100755"
    );
    assert_has(
        hunks,
        "--- /dev/null\n+++ b/src/added.rs\n@@ -0,0 +1,1 @@\n+pub fn added() {}\n",
    );
    assert_has(
        hunks,
        "--- a/src/gone.rs\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-fn gone() {}\n",
    );
    assert_has(
        hunks,
        "--- a/logo.png\n+++ b/logo.png\n(binary file: 16 → 17 bytes)\n",
    );
    // A side without a snapshot says so instead of guessing.
    let text = loopwatch_diff(root, &["2", "3"]);
    assert!(text.ends_with("code changes, iteration 2 → iteration 3\n  not available: no snapshot of iteration 3: git failed\n"), "{text}");
}

#[test]
fn loopwatch_diff_json_has_a_code_array() {
    let t = two_trees();
    let root = t.dir.path();
    journal(root, t.a.as_str(), t.a.as_str(), t.b.as_str());
    let v: Value = serde_json::from_str(&loopwatch_diff(root, &[".", "1", "2", "--json"])).unwrap();
    let code = v["code"].as_array().expect("code array");
    let paths: Vec<(&str, &str)> = code
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), f["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        paths,
        [
            ("docs/guide/new-name.md", "renamed"),
            ("logo.png", "modified"),
            ("src/added.rs", "added"),
            ("src/gone.rs", "deleted"),
            ("src/lib.rs", "modified"),
            ("tools/run.sh", "modified"),
        ]
    );
    assert_eq!(
        code[4]["hunks"],
        json!([{"oldStart": 1, "oldLines": 3, "newStart": 1, "newLines": 4,
                "lines": [" pub fn one() -> u32 {", "-    1", "+    // the answer", "+    2", " }"]}])
    );
    assert_eq!(code[1]["hunks"], json!([]));
    assert_eq!(code[1]["summary"], "binary file: 16 → 17 bytes");
    assert_eq!(v["codeUnavailable"], Value::Null);
    let v: Value = serde_json::from_str(&loopwatch_diff(root, &["2", "3", "--json"])).unwrap();
    assert_eq!(v["code"], Value::Null);
    assert_eq!(
        v["codeUnavailable"],
        "no snapshot of iteration 3: git failed"
    );
}
