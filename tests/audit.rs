//! A run checked offline: `loopwatch verify` on a worktree and on an export
//! archive copied elsewhere (no worktree, no network), `replay`/`report` on
//! the archive, and every tampering named.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "code_support/mod.rs"]
mod code_support;

use code_support::{git, hermetic};

const BIN: &str = env!("CARGO_BIN_EXE_loopwatch");

/// A real git worktree holding the loop fixtures, a run recorded in it
/// through the binary: GATE 0 (a snapshot), GATE 1 with an out-of-scope
/// file approved by a person (evidence, a contract edit), back to the
/// developer, GATE 0 again, the run ended (its report).
struct Run {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Run {
    fn new() -> Run {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("wt");
        std::fs::create_dir(&root).unwrap();
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/loop");
        for e in std::fs::read_dir(&fixtures).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), root.join(e.file_name())).unwrap();
        }
        git(&root, &["init", "-q"]);
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-q", "-m", "fixtures"]);
        let r = Run { _dir: dir, root };
        r.ok(
            &[
                "record",
                "run-start",
                "--flow",
                "feat",
                "--contract",
                "contract.md",
            ],
            0,
        );
        r.ok(&["gate0", "run", "contract.md"], 0);
        r.ok(
            &[
                "record",
                "gate",
                "conformity",
                "--output",
                "conformity-ecarts.txt",
            ],
            10,
        );
        r.ok(
            &[
                "decide",
                "hg-1-conformity-1",
                "approve",
                "--reason",
                "the Makefile target is part of the change",
            ],
            11,
        );
        r.ok(&["record", "dev", "--input", "criterion 2: NOT-MET"], 0);
        r.ok(&["gate0", "run", "contract.md"], 0);
        r.ok(&["record", "run-end", "--status", "stopped"], 0);
        r
    }

    fn run_in(dir: &Path, args: &[&str]) -> Output {
        hermetic(&mut Command::new(BIN))
            .args(args)
            .current_dir(dir)
            .env("LOOPWATCH_USER", "dana")
            .env("LOOPWATCH_LOCK_TIMEOUT", "2")
            .env_remove("LOOPWATCH_PIPELINE")
            .env_remove("LOOPWATCH_DISPATCH")
            .output()
            .unwrap()
    }

    fn ok(&self, args: &[&str], code: i32) -> String {
        expect(Run::run_in(&self.root, args), args, code)
    }

    fn pipeline(&self) -> PathBuf {
        self.root.join(".pipeline")
    }

    fn journal(&self) -> Vec<String> {
        std::fs::read_to_string(self.pipeline().join("events.jsonl"))
            .unwrap()
            .lines()
            .map(String::from)
            .collect()
    }

    fn set_journal(&self, lines: &[String]) {
        std::fs::write(
            self.pipeline().join("events.jsonl"),
            lines.join("\n") + "\n",
        )
        .unwrap();
    }

    /// `verify` here: its exit code and stdout.
    fn verify(&self, extra: &[&str]) -> (i32, String) {
        let mut args = vec!["verify", "."];
        args.extend(extra);
        let out = Run::run_in(&self.root, &args);
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr),
        )
    }
}

fn expect(out: Output, args: &[&str], code: i32) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(code),
        "loopwatch {args:?}\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[track_caller]
fn broken(verdict: (i32, String), needles: &[&str]) {
    let (code, text) = verdict;
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("not verified"), "{text}");
    assert!(!text.contains("\nverified"), "{text}");
    for n in needles {
        assert!(text.contains(n), "{n:?} is not in:\n{text}");
    }
}

#[test]
fn a_recorded_run_verifies_and_every_line_is_chained() {
    let r = Run::new();
    let (code, text) = r.verify(&[]);
    assert_eq!(code, 0, "{text}");
    assert!(text.starts_with("verified: "), "{text}");
    assert!(
        text.contains("1 decisions, 1 evidence files, 3 snapshots"),
        "{text}"
    );
    let lines = r.journal();
    assert!(!lines[0].contains("\"prev\""));
    assert!(lines[1..].iter().all(|l| l.contains("\"prev\":\"")));
    // validate reads the chained journal as valid.
    r.ok(&["validate", ".pipeline/events.jsonl"], 0);
}

#[test]
fn one_byte_changed_a_line_removed_or_two_swapped_are_named() {
    let r = Run::new();
    let original = r.journal();

    let mut lines = original.clone();
    lines[3] = lines[3].replacen("\"v\":1", "\"v\":1 ", 1);
    r.set_journal(&lines);
    broken(
        r.verify(&[]),
        &["BROKEN events.jsonl line 5 (seq 5, ", "line 4 was changed"],
    );
    // validate says where the chain breaks too.
    let out = r.ok(&["validate", ".pipeline/events.jsonl"], 1);
    assert!(out.contains("events.jsonl:5: hash chain broken"), "{out}");

    let mut lines = original.clone();
    lines.remove(2);
    r.set_journal(&lines);
    broken(
        r.verify(&[]),
        &["events.jsonl line 3 (seq 4, ", "seq 4 follows seq 2"],
    );

    let mut lines = original.clone();
    lines.swap(2, 3);
    r.set_journal(&lines);
    broken(
        r.verify(&[]),
        &[
            "events.jsonl line 3 (seq 4, ",
            "events.jsonl line 4 (seq 3, ",
        ],
    );

    r.set_journal(&original);
    assert_eq!(r.verify(&[]).0, 0);
}

#[test]
fn an_evidence_file_edited_or_missing_and_a_pruned_snapshot_are_named() {
    let r = Run::new();
    let evidence = r.pipeline().join("evidence/hg-1-conformity-1.txt");
    let text = std::fs::read_to_string(&evidence).unwrap();
    std::fs::write(&evidence, text.replacen('a', "b", 1)).unwrap();
    broken(
        r.verify(&[]),
        &["evidence/hg-1-conformity-1.txt was edited", "human.decided"],
    );
    std::fs::remove_file(&evidence).unwrap();
    broken(
        r.verify(&[]),
        &["evidence/hg-1-conformity-1.txt is missing"],
    );
    std::fs::write(&evidence, text).unwrap();
    assert_eq!(r.verify(&[]).0, 0);

    // The snapshots' refs deleted and the objects pruned (the base's tree
    // is the commit's, still reachable; the later one is gone).
    r.ok(&["gc"], 0);
    git(&r.root, &["reflog", "expire", "--expire=now", "--all"]);
    git(&r.root, &["gc", "-q", "--prune=now"]);
    broken(
        r.verify(&[]),
        &["gate.started): snapshot tree", "is not in the repository"],
    );
}

#[test]
fn an_export_copied_elsewhere_verifies_replays_and_reports_without_the_worktree() {
    let r = Run::new();
    let away = tempfile::tempdir().unwrap();
    let archive = away.path().join("run.tar");
    let out = r.ok(
        &["export", ".", "--out", archive.to_str().unwrap(), "--logs"],
        0,
    );
    assert!(out.starts_with("exported "), "{out}");
    let expected_report = std::fs::read_to_string(r.pipeline().join("report.md")).unwrap();
    drop(r); // the worktree is gone

    let elsewhere = tempfile::tempdir().unwrap();
    let out = expect(
        Run::run_in(elsewhere.path(), &["verify", archive.to_str().unwrap()]),
        &["verify"],
        0,
    );
    assert!(out.contains("3 snapshots"), "{out}");
    let report = expect(
        Run::run_in(
            elsewhere.path(),
            &["report", archive.to_str().unwrap(), "--format", "json"],
        ),
        &["report"],
        0,
    );
    let v: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert!(v.is_object());
    let md = expect(
        Run::run_in(elsewhere.path(), &["report", archive.to_str().unwrap()]),
        &["report"],
        0,
    );
    assert!(
        md.lines().next() == expected_report.lines().next(),
        "{md}\n---\n{expected_report}"
    );
    // replay opens it (no terminal here: it stops at the terminal, after
    // the archive was opened and its range checked).
    let out = Run::run_in(
        elsewhere.path(),
        &["replay", archive.to_str().unwrap(), "--at", "999"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--at 999 is out of range"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Nothing was left behind in the temp folder's place: the archive is unchanged.
    assert!(archive.is_file());
}

fn tar_entries(archive: &Path) -> Vec<(String, Vec<u8>)> {
    let mut a = tar::Archive::new(std::fs::File::open(archive).unwrap());
    a.entries()
        .unwrap()
        .map(|e| {
            let mut e = e.unwrap();
            let name = e.path().unwrap().to_string_lossy().into_owned();
            let mut b = Vec::new();
            std::io::Read::read_to_end(&mut e, &mut b).unwrap();
            (name, b)
        })
        .collect()
}

fn write_tar(path: &Path, entries: &[(String, Vec<u8>)], link: Option<(&str, &str)>) {
    let mut b = tar::Builder::new(std::fs::File::create(path).unwrap());
    for (name, bytes) in entries {
        let mut h = tar::Header::new_gnu();
        h.set_size(bytes.len() as u64);
        h.set_mode(0o644);
        h.set_entry_type(tar::EntryType::Regular);
        // Written raw: the builder itself refuses `..`.
        let raw = name.as_bytes();
        h.as_gnu_mut().unwrap().name[..raw.len()].copy_from_slice(raw);
        h.set_cksum();
        b.append(&h, &bytes[..]).unwrap();
    }
    if let Some((name, target)) = link {
        let mut h = tar::Header::new_gnu();
        h.set_size(0);
        h.set_entry_type(tar::EntryType::Symlink);
        b.append_link(&mut h, name, target).unwrap();
    }
    b.finish().unwrap();
}

#[test]
fn a_tampered_archive_is_named_never_verified() {
    let r = Run::new();
    let away = tempfile::tempdir().unwrap();
    let archive = away.path().join("run.tar");
    r.ok(&["export", "--out", archive.to_str().unwrap()], 0);
    let entries = tar_entries(&archive);
    let verify = |p: &Path| {
        let out = Run::run_in(away.path(), &["verify", p.to_str().unwrap()]);
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };

    // Truncated: cut in the middle of a file, and cut at an entry's end.
    let bytes = std::fs::read(&archive).unwrap();
    let cut = away.path().join("cut.tar");
    std::fs::write(&cut, &bytes[..bytes.len() / 2 + 100]).unwrap();
    broken(verify(&cut), &["BROKEN archive"]);
    let mut fewer = entries.clone();
    fewer.truncate(entries.len() - 1);
    write_tar(&cut, &fewer, None);
    broken(
        verify(&cut),
        &["listed in the manifest but not in the archive"],
    );

    // A path leaving its folder, an absolute one, a link.
    let bad = away.path().join("bad.tar");
    let mut with = entries.clone();
    with.push(("loopwatch-export/../../escaped.txt".into(), b"x".to_vec()));
    write_tar(&bad, &with, None);
    broken(
        verify(&bad),
        &["leaves the archive's folder (a `..` component)"],
    );
    assert!(!away.path().join("escaped.txt").exists());
    let mut with = entries.clone();
    with.push(("/tmp/loopwatch-absolute.txt".into(), b"x".to_vec()));
    write_tar(&bad, &with, None);
    broken(verify(&bad), &["leaves the archive's folder"]);
    write_tar(
        &bad,
        &entries,
        Some(("loopwatch-export/pipeline/evidence/link.txt", "/etc/passwd")),
    );
    broken(
        verify(&bad),
        &["is a symbolic link, not a file or folder: refused"],
    );

    // A journal line changed inside the archive: the manifest and the chain say so.
    let mut changed = entries.clone();
    let j = changed
        .iter_mut()
        .find(|(n, _)| n.ends_with("pipeline/events.jsonl"))
        .unwrap();
    let text = String::from_utf8(j.1.clone()).unwrap();
    j.1 = text.replacen("\"feat\"", "\"hotfix\"", 1).into_bytes();
    write_tar(&bad, &changed, None);
    broken(
        verify(&bad),
        &[
            "archive pipeline/events.jsonl: changed",
            "events.jsonl line 2",
        ],
    );

    // Replay and report refuse a hostile archive with the named error.
    let out = Run::run_in(away.path(), &["report", cut.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "a cut-at-entry archive still opens"
    );
    let out = Run::run_in(away.path(), &["report", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    write_tar(
        &bad,
        &entries,
        Some(("loopwatch-export/pipeline/x", "/etc/passwd")),
    );
    let out = Run::run_in(away.path(), &["report", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("symbolic link"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
