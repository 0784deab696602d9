//! Snapshots of the code: the tree holds the working files (staged,
//! unstaged and untracked, not ignored, not the pipeline), the user's
//! status, HEAD, index, stash, branches and files stay exactly as they
//! were, the tree is kept under `refs/loopwatch/<run>/` until
//! `loopwatch gc`, and outside git the run goes on with the snapshot
//! marked missing.

mod support;

use loopwatch::code::{self, CodeError, CodeSnapshot};
use loopwatch::model::{EventBody, GateName};
use support::assert_has;
use support::code::{fingerprint, git, loopwatch, repo, start_run, tree_paths, write};

/// A repository in the middle of work: a stash entry, a second branch, a
/// staged new file, a staged edit edited again, a deletion, untracked and
/// ignored files, and a pipeline folder.
fn busy_repo() -> tempfile::TempDir {
    let dir = repo();
    let root = dir.path();
    write(root, "README.md", "# demo, stashed\n");
    git(root, &["stash", "push", "-q", "-m", "wip"]);
    git(root, &["branch", "feature/x"]);
    write(root, "src/new.rs", "pub fn new() {}\n");
    write(root, "src/lib.rs", "pub fn one() -> u32 {\n    2\n}\n");
    git(root, &["add", "src/new.rs", "src/lib.rs"]);
    write(root, "src/lib.rs", "pub fn one() -> u32 {\n    3\n}\n");
    std::fs::remove_file(root.join("README.md")).unwrap();
    write(root, "notes/todo.txt", "untracked\n");
    write(root, "target/debug/out.bin", "ignored\n");
    write(root, "run.log", "ignored too\n");
    write(root, ".pipeline/events.jsonl", "");
    dir
}

#[test]
fn a_snapshot_holds_the_working_files_and_leaves_git_as_it_was() {
    let dir = busy_repo();
    let root = dir.path();
    let before = fingerprint(root);
    let tree = code::snapshot(root).expect("snapshot");
    assert_eq!(
        fingerprint(root),
        before,
        "the snapshot changed the user's git"
    );
    assert_eq!(tree.as_str().len(), 40);
    assert_eq!(
        tree_paths(root, tree.as_str()),
        [".gitignore", "notes/todo.txt", "src/lib.rs", "src/new.rs"]
    );
    // The working file, not the staged version.
    assert_eq!(
        git(root, &["show", &format!("{tree}:src/lib.rs")]),
        "pub fn one() -> u32 {\n    3\n}\n"
    );
    // The same files give the same tree.
    let again = code::snapshot(root).expect("again");
    assert_eq!(
        again,
        tree,
        "{}",
        git(
            root,
            &["diff-tree", "-r", "-p", tree.as_str(), again.as_str()]
        )
    );
    assert_eq!(fingerprint(root), before);
}

#[test]
fn a_committed_pipeline_folder_is_still_left_out() {
    let dir = repo();
    let root = dir.path();
    write(root, ".pipeline/state.json", "{}");
    git(root, &["add", "-f", ".pipeline"]);
    git(
        root,
        &["commit", "-q", "-m", "pipeline committed by mistake"],
    );
    let before = fingerprint(root);
    let tree = code::snapshot(root).expect("snapshot");
    assert!(
        !tree_paths(root, tree.as_str())
            .iter()
            .any(|p| p.starts_with(".pipeline"))
    );
    assert_eq!(fingerprint(root), before);
}

#[test]
fn a_repository_without_commits_or_index_is_snapshotted() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "-q"]);
    write(root, "a.txt", "a\n");
    let before = fingerprint(root);
    let tree = code::snapshot(root).expect("snapshot");
    assert_eq!(tree_paths(root, tree.as_str()), ["a.txt"]);
    assert_eq!(fingerprint(root), before);
    assert!(!root.join(".git/index").exists(), "no index was created");
}

#[test]
fn from_a_subfolder_the_whole_worktree_is_snapshotted() {
    let dir = busy_repo();
    let sub = dir.path().join("src");
    let tree = code::snapshot(&sub).expect("snapshot");
    assert!(tree_paths(dir.path(), tree.as_str()).contains(&"notes/todo.txt".to_string()));
}

#[test]
fn outside_git_the_snapshot_is_missing_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "a\n");
    let before = fingerprint(dir.path());
    let err = code::snapshot(dir.path()).unwrap_err();
    assert!(matches!(err, CodeError::NotARepository { .. }), "{err}");
    let taken = code::take(dir.path(), &dir.path().join(".pipeline"));
    let why = taken.missing().expect("missing");
    assert!(why.ends_with("is not inside a git worktree"), "{why}");
    assert_eq!(fingerprint(dir.path()), before);
    assert!(!dir.path().join(".git").exists());
}

#[test]
fn the_run_records_its_base_and_each_floor_round_and_keeps_them() {
    let dir = busy_repo();
    let root = dir.path();
    let before = fingerprint(root);
    let (rec, started) = start_run(root, "2026-12-01-demo", "");
    let base = match &started.events[0].body {
        EventBody::RunStarted {
            tree, tree_missing, ..
        } => {
            assert_eq!(tree_missing, &None);
            tree.clone().expect("base tree")
        }
        other => panic!("{other:?}"),
    };
    write(root, "src/lib.rs", "pub fn one() -> u32 {\n    4\n}\n");
    let round = rec.start_round(GateName::Floor, false).expect("gate 0");
    let floor = round
        .events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::GateStarted { tree, .. } => tree.clone(),
            _ => None,
        })
        .expect("floor tree");
    assert_ne!(floor, base);
    assert_eq!(floor, code::snapshot(root).unwrap().to_string());
    let kept = code::kept(root, Some("2026-12-01-demo")).expect("kept");
    let names: Vec<(&str, &str)> = kept
        .iter()
        .map(|k| (k.name.as_str(), k.tree.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("refs/loopwatch/2026-12-01-demo/base", base.as_str()),
            (
                "refs/loopwatch/2026-12-01-demo/iteration-1-floor-1",
                floor.as_str()
            ),
        ]
    );
    // The user's HEAD, index, stash and branches are untouched.
    let after = fingerprint(root);
    assert_eq!(after.head, before.head);
    assert_eq!(after.index, before.index);
    assert_eq!(after.stash, before.stash);
    assert_eq!(after.refs, before.refs);
    // gc removes them; a second gc finds nothing.
    let removed = code::remove_kept(root, Some("2026-12-01-demo")).expect("gc");
    assert_eq!(removed.len(), 2);
    assert!(code::kept(root, None).expect("kept").is_empty());
    assert!(code::remove_kept(root, None).expect("gc again").is_empty());
}

#[test]
fn outside_git_the_run_goes_on_with_the_snapshot_marked_missing() {
    let dir = tempfile::tempdir().unwrap();
    let (rec, started) = start_run(dir.path(), "r", "");
    let line = started.events[0].to_line();
    assert!(!line.contains("\"tree\":"), "{line}");
    assert_has(&line, "\"treeMissing\":\"");
    assert_has(&line, "is not inside a git worktree");
    let round = rec.start_round(GateName::Floor, false).unwrap();
    let snap = round.events.iter().find_map(|e| match &e.body {
        EventBody::GateStarted {
            tree, tree_missing, ..
        } => CodeSnapshot::from_fields(tree.as_deref(), tree_missing.as_deref()),
        _ => None,
    });
    assert!(matches!(snap, Some(CodeSnapshot::Missing(_))), "{snap:?}");
}

#[test]
fn snapshots_can_be_turned_off() {
    let dir = repo();
    write(dir.path(), "c.md", "# CONTRACT — c\n");
    let out = loopwatch(dir.path())
        .env(code::SNAPSHOTS_ENV, "off")
        .args([
            "record",
            "run-start",
            "--flow",
            "feat",
            "--contract",
            "c.md",
        ])
        .assert()
        .code(0)
        .get_output()
        .clone();
    assert!(String::from_utf8_lossy(&out.stdout).contains("run started: c"));
    let journal = std::fs::read_to_string(dir.path().join(".pipeline/events.jsonl")).unwrap();
    let first = journal.lines().next().expect("run.started");
    assert_has(
        first,
        r#""treeMissing":"snapshots turned off (LOOPWATCH_SNAPSHOTS=off)""#,
    );
    assert!(code::kept(dir.path(), None).unwrap().is_empty());
}

#[test]
fn loopwatch_gc_removes_one_run_or_every_run() {
    let dir = repo();
    let root = dir.path();
    let tree = code::snapshot(root).unwrap();
    for (run, label) in [
        ("r1", "base"),
        ("r1", "iteration-1-floor-1"),
        ("r2", "base"),
    ] {
        code::keep(root, run, label, &tree).unwrap();
    }
    let before = fingerprint(root);
    loopwatch(root)
        .args(["gc", "--run", "r1", "--dry-run"])
        .assert()
        .code(0)
        .stdout(format!(
            "would remove refs/loopwatch/r1/base (tree {tree})\n\
             would remove refs/loopwatch/r1/iteration-1-floor-1 (tree {tree})\n\
             would remove 2 snapshots\n"
        ));
    assert_eq!(code::kept(root, None).unwrap().len(), 3);
    loopwatch(root)
        .args(["gc", "--run", "r1"])
        .assert()
        .code(0)
        .stdout(format!(
            "removed refs/loopwatch/r1/base (tree {tree})\n\
             removed refs/loopwatch/r1/iteration-1-floor-1 (tree {tree})\n\
             removed 2 snapshots; `git gc --prune=now` drops their objects now\n"
        ));
    let left: Vec<String> = code::kept(root, None)
        .unwrap()
        .into_iter()
        .map(|k| k.name)
        .collect();
    assert_eq!(left, ["refs/loopwatch/r2/base"]);
    loopwatch(root).arg("gc").assert().code(0);
    assert!(code::kept(root, None).unwrap().is_empty());
    assert_eq!(
        fingerprint(root),
        before,
        "gc touched the user's refs or files"
    );
    let outside = tempfile::tempdir().unwrap();
    let out = loopwatch(outside.path())
        .arg("gc")
        .assert()
        .code(2)
        .stdout("")
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.ends_with("is not inside a git worktree\n"),
        "{stderr}"
    );
}

#[test]
fn a_racily_clean_file_is_snapshotted_as_it_is_now() {
    // The user's index records the staged file with the same size and
    // mtime as the file rewritten since (ctime not trusted), and the index
    // itself is no newer than that mtime: git must look at the content. A
    // copy of the index that did not keep its time would make the entry
    // look clean and the staged content be snapshotted.
    let dir = repo();
    let root = dir.path();
    let file = root.join("src/lib.rs");
    let then = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let set_mtime = |p: &std::path::Path| {
        let f = std::fs::File::options().write(true).open(p).unwrap();
        f.set_modified(then).unwrap();
    };
    git(root, &["config", "core.trustctime", "false"]);
    write(root, "src/lib.rs", "pub fn one() -> u32 {\n    2\n}\n");
    set_mtime(&file);
    git(root, &["add", "src/lib.rs"]);
    write(root, "src/lib.rs", "pub fn one() -> u32 {\n    3\n}\n");
    set_mtime(&file);
    set_mtime(&root.join(".git/index"));
    assert!(git(root, &["status", "--porcelain"]).contains("MM src/lib.rs"));
    let tree = code::snapshot(root).expect("snapshot");
    assert_eq!(
        git(root, &["show", &format!("{tree}:src/lib.rs")]),
        "pub fn one() -> u32 {\n    3\n}\n"
    );
}

#[test]
fn a_floor_round_recorded_in_one_call_gets_one_snapshot() {
    use loopwatch::model::{Verdict, VerdictKind};
    use loopwatch::recorder::floor_round;
    let dir = repo();
    let root = dir.path();
    let (rec, _) = start_run(root, "one-call", "");
    // Recorded without its start: the round's own gate.started has the tree.
    let out = rec
        .round(
            GateName::Floor,
            floor_round(Vec::new(), Verdict::bare(VerdictKind::Unmet)),
            b"",
            false,
        )
        .unwrap();
    let trees: Vec<Option<String>> = out
        .events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::GateStarted { tree, .. } => Some(tree.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(trees, [Some(code::snapshot(root).unwrap().to_string())]);
    // Started first, then recorded: one gate.started, one snapshot kept.
    rec.dev(Vec::new()).unwrap();
    write(root, "src/lib.rs", "pub fn one() -> u32 {\n    5\n}\n");
    rec.start_round(GateName::Floor, false).unwrap();
    let out = rec
        .round(
            GateName::Floor,
            floor_round(Vec::new(), Verdict::bare(VerdictKind::Met)),
            b"",
            false,
        )
        .unwrap();
    assert!(
        !out.events
            .iter()
            .any(|e| matches!(e.body, EventBody::GateStarted { .. }))
    );
    let names: Vec<String> = code::kept(root, Some("one-call"))
        .unwrap()
        .into_iter()
        .map(|k| k.name)
        .collect();
    assert_eq!(
        names,
        [
            "refs/loopwatch/one-call/base",
            "refs/loopwatch/one-call/iteration-1-floor-1",
            "refs/loopwatch/one-call/iteration-2-floor-2",
        ]
    );
}

#[test]
fn when_git_fails_the_snapshot_is_missing_with_gits_message() {
    let dir = repo();
    let root = dir.path();
    let config = root.join(".git/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("[core\n");
    std::fs::write(&config, text).unwrap();
    let err = code::snapshot(root).unwrap_err();
    assert!(matches!(err, CodeError::Git { .. }), "{err:?}");
    let taken = code::take(root, &root.join(".pipeline"));
    let why = taken.missing().expect("missing");
    assert_has(why, "bad config line");
    // The run goes on: the event says why.
    let (_, started) = start_run(root, "r", "");
    let line = started.events[0].to_line();
    assert_has(&line, "\"treeMissing\":\"git rev-parse --show-toplevel");
}

#[test]
fn a_crlf_refusal_in_the_users_config_does_not_stop_the_snapshot() {
    let dir = repo();
    let root = dir.path();
    git(root, &["config", "core.autocrlf", "input"]);
    git(root, &["config", "core.safecrlf", "true"]);
    write(root, "dos.txt", "one\r\ntwo\n");
    let tree = code::snapshot(root).expect("snapshot");
    let (ok, _, err) = support::code::git_any(root, &["add", "dos.txt"]);
    assert!(!ok && err.contains("CRLF"), "git itself refuses: {err}");
    assert!(tree_paths(root, tree.as_str()).contains(&"dos.txt".to_string()));
}
