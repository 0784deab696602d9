//! A run checked offline: `loopwatch verify` on a worktree and on an export
//! archive copied elsewhere (no worktree, no network), `replay`/`report` on
//! the archive, and every tampering named.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::code::{git, hermetic};
use support::ssh::{allowed_signers, keygen};
use support::worktree::{RUN_START, record_gate};
use support::{assert_failed, assert_has};

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
        let r = Run::started();
        let why = "the Makefile target is part of the change";
        expect(r.decide("approve", why, &[]), &["decide"], 11);
        r.finish();
        r
    }

    /// Back to the developer, GATE 0 again, the run ended.
    fn finish(&self) {
        self.ok(&["record", "dev", "--input", "criterion 2: NOT-MET"], 0);
        self.ok(&["gate0", "run", "contract.md"], 0);
        self.ok(&["record", "run-end", "--status", "stopped"], 0);
    }

    /// The run up to its open out-of-scope gate `hg-1-conformity-1`.
    fn started() -> Run {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("config")).unwrap();
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
        r.ok(&RUN_START, 0);
        r.ok(&["gate0", "run", "contract.md"], 0);
        r.ok(&record_gate("conformity", "conformity-ecarts.txt"), 10);
        r
    }

    /// The person's config folder (`XDG_CONFIG_HOME`) every command here sees.
    fn config(&self) -> PathBuf {
        self.root.parent().unwrap().join("config")
    }

    fn run_in(dir: &Path, args: &[&str]) -> Output {
        Run::run_env(dir, args, &[])
    }

    fn run_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
        // The person's config is the test's (an empty folder unless it writes one).
        let config = dir
            .ancestors()
            .map(|a| a.join("config"))
            .find(|c| c.is_dir())
            .unwrap_or_else(|| dir.join("no-config"));
        hermetic(&mut Command::new(BIN))
            .args(args)
            .current_dir(dir)
            .env("XDG_CONFIG_HOME", config)
            .env("LOOPWATCH_USER", "dana")
            .env("LOOPWATCH_LOCK_TIMEOUT", "2")
            .env_remove("LOOPWATCH_PIPELINE")
            .env_remove("LOOPWATCH_DISPATCH")
            .envs(env.iter().copied())
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

    /// `decide hg-1-conformity-1 <decision> --reason <reason>`, with `extra`
    /// arguments.
    fn decide(&self, decision: &str, reason: &str, extra: &[&str]) -> Output {
        let args = ["decide", "hg-1-conformity-1", decision, "--reason", reason];
        Run::run_in(&self.root, &[&args[..], extra].concat())
    }

    /// Writes the person's `loopwatch/policy.toml`; returns its path.
    fn policy(&self, text: &str) -> PathBuf {
        let path = self.config().join("loopwatch/policy.toml");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
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
    assert_has(&text, "not verified");
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
    assert_has(&text, "1 decisions, 1 evidence files, 3 snapshots");
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
    assert_has(&out, "events.jsonl:5: hash chain broken");

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

    // The last line, which no later `prev` names, against the state.json
    // written with it: changed, or removed.
    let mut lines = original.clone();
    let last = lines.len() - 1;
    lines[last] = lines[last].replacen("\"stopped\"", "\"complete\"", 1);
    assert_ne!(lines[last], original[last], "the run ends stopped");
    r.set_journal(&lines);
    let place = format!("BROKEN events.jsonl line {}: ", last + 1);
    broken(
        r.verify(&[]),
        &[&place, "does not fold to the state.json written with it"],
    );
    let mut lines = original.clone();
    lines.pop();
    r.set_journal(&lines);
    broken(
        r.verify(&[]),
        &[
            "BROKEN state.json: written after seq",
            "lines were removed from its end",
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
    assert_has(&out, "3 snapshots");
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
    assert_failed(&out, 2, "--at 999 is out of range");
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
    assert_failed(&out, 2, "symbolic link");
}

fn decide_signed(r: &Run, key: &Path, reason: &str) -> Output {
    r.decide(
        "approve",
        reason,
        &["--sign", "--key", key.to_str().unwrap()],
    )
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn signed_decisions_verify_against_an_allowed_signers_file_made_here() {
    let r = Run::started();
    let keys = r.config();
    let ana = keygen(&keys, "ana");
    let bo = keygen(&keys, "bo");
    let out = decide_signed(&r, &ana, "approved, signed");
    assert_eq!(out.status.code(), Some(11), "{}", stderr(&out));
    r.finish();
    let line = r
        .journal()
        .into_iter()
        .find(|l| l.contains("\"human.decided\""))
        .unwrap();
    assert_has(&line, "\"signature\":\"-----BEGIN SSH SIGNATURE-----");

    let allowed = keys.join("allowed_signers");
    allowed_signers(&allowed, &[("ana@example.org", &ana)]);
    let (code, text) = r.verify(&["--allowed-signers", allowed.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}");
    assert_has(&text, "1 signatures");

    // A signature from a key the file does not allow is named.
    allowed_signers(&allowed, &[("bo@example.org", &bo)]);
    broken(
        r.verify(&["--allowed-signers", allowed.to_str().unwrap()]),
        &["human.decided): signature of hg-1-conformity-1: signed by a key that is not allowed"],
    );

    // The signed export: its manifest's signature checked too.
    allowed_signers(&allowed, &[("ana@example.org", &ana)]);
    let archive = r.config().join("run.tar");
    r.ok(
        &[
            "export",
            "--out",
            archive.to_str().unwrap(),
            "--sign",
            "--key",
            ana.to_str().unwrap(),
        ],
        0,
    );
    let verify_archive = || {
        let args = ["verify", archive.to_str().unwrap(), "--allowed-signers"];
        let out = Run::run_in(
            &r.config(),
            &[&args[..], &[allowed.to_str().unwrap()]].concat(),
        );
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, text) = verify_archive();
    assert_eq!(code, Some(0), "{text}");
    assert_has(&text, "2 signatures");
    allowed_signers(&allowed, &[("bo@example.org", &bo)]);
    let (code, text) = verify_archive();
    assert_eq!(code, Some(1), "{text}");
    assert_has(
        &text,
        "BROKEN archive MANIFEST.json.sig: signed by a key that is not allowed",
    );
}

#[test]
fn a_two_person_gate_needs_two_different_signers_and_names_every_refusal() {
    let r = Run::started();
    let dir = r.config();
    let ana = keygen(&dir, "ana");
    let bo = keygen(&dir, "bo");
    let carl = keygen(&dir, "carl");
    let allowed = dir.join("allowed_signers");
    allowed_signers(
        &allowed,
        &[
            ("ana@example.org", &ana),
            ("bo@example.org", &bo),
            ("carl@example.org", &carl),
        ],
    );
    r.policy(&format!(
        "allowed_signers = \"{}\"\n\n[gate.out-of-scope]\ndeciders = [\"ana@example.org\", \"bo@example.org\"]\nrequired = 2\nsignature = true\n",
        allowed.display()
    ));
    let journal_len = || r.journal().len();
    let before = journal_len();

    // Unsigned: the rule that refused is named; nothing written.
    assert_failed(
        &r.decide("approve", "fine", &[]),
        2,
        "policy.toml [gate.out-of-scope] signature = true",
    );
    // Signed by someone the rule does not list.
    assert_failed(
        &decide_signed(&r, &carl, "fine by me"),
        2,
        "[gate.out-of-scope] deciders: carl@example.org may not decide this gate",
    );
    assert_eq!(journal_len(), before);

    // The first approval is counted; the gate stays open.
    let out = decide_signed(&r, &ana, "the Makefile target belongs here");
    assert_eq!(out.status.code(), Some(10), "{}", stderr(&out));
    assert!(
        r.journal()
            .last()
            .unwrap()
            .contains("\"type\":\"human.approved\"")
    );
    let status = r.ok(&["status"], 10);
    assert!(
        status.contains(
            "1 of 2 approvals (by signer ana@example.org); 1 more awaited from bo@example.org"
        ),
        "{status}"
    );
    // The same person again is refused, whatever they sign with.
    assert_failed(
        &decide_signed(&r, &ana, "really"),
        2,
        "required = 2: hg-1-conformity-1 was already approved by signer ana@example.org",
    );
    // The second person decides it.
    let out = decide_signed(&r, &bo, "agreed");
    assert_eq!(out.status.code(), Some(11), "{}", stderr(&out));
    let last = r.journal().last().unwrap().clone();
    assert_has(&last, "\"type\":\"human.decided\"");
    assert_has(&last, "\"approvedBy\":[\"signer ana@example.org\"]");
    r.finish();
    let (code, text) = r.verify(&["--allowed-signers", allowed.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}");
    assert_has(&text, "2 decisions, 2 evidence files");
    assert_has(&text, "2 signatures");
}

#[test]
fn one_deny_decides_a_two_person_gate() {
    let r = Run::started();
    r.policy("[gate.out-of-scope]\nrequired = 2\n");
    expect(r.decide("deny", "remove it", &[]), &["decide"], 11);
    assert!(
        r.journal()
            .last()
            .unwrap()
            .contains("\"type\":\"human.decided\"")
    );
}

#[test]
fn a_bad_policy_file_is_an_error_naming_file_line_and_key() {
    let r = Run::started();
    let policy = r.policy("# who decides\n\n[gate.out-of-skope]\nrequired = 2\n");
    let want = format!(
        "{}:3: [gate.out-of-skope]: unknown human gate kind",
        policy.display()
    );
    assert_failed(&r.decide("approve", "ok", &[]), 2, &want);
    r.policy("[gate.out-of-scope]\nrequired = -1\n");
    let out = r.decide("approve", "ok", &[]);
    assert!(
        stderr(&out)
            .contains("policy.toml:2: [gate.out-of-scope] required: -1 is not a count of people"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_decision_from_inside_an_agent_dispatch_is_refused() {
    let r = Run::started();
    let pipeline = std::fs::canonicalize(r.pipeline()).unwrap();
    let marker = format!("{}#3", pipeline.display());
    let before = r.journal();
    let args = [
        "decide",
        "hg-1-conformity-1",
        "approve",
        "--reason",
        "agent says ok",
    ];
    let out = Run::run_env(&r.root, &args, &[("LOOPWATCH_DISPATCH", &marker)]);
    assert_failed(
        &out,
        2,
        "refused: this runs inside agent dispatch #3 of the run",
    );
    assert_eq!(r.journal(), before);
}

#[test]
fn verify_where_there_is_no_run_is_no_pipeline() {
    let d = tempfile::tempdir().unwrap();
    let out = Run::run_in(d.path(), &["verify", d.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let out = Run::run_in(d.path(), &["verify", "missing.tar"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn decide_sign_takes_the_key_the_persons_config_names() {
    let r = Run::started();
    let ana = keygen(&r.config(), "ana");
    r.policy(&format!("signing_key = \"{}\"\n", ana.display()));
    let out = r.decide("approve", "signed with the configured key", &["--sign"]);
    expect(out, &["decide", "--sign"], 11);
    let allowed = r.config().join("allowed_signers");
    allowed_signers(&allowed, &[("ana@example.org", &ana)]);
    let (code, text) = r.verify(&["--allowed-signers", allowed.to_str().unwrap()]);
    // The run is not ended: the chain, evidence and signature still verify.
    assert_eq!(code, 0, "{text}");
    assert_has(&text, "1 signatures");
}
