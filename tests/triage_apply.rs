//! `loopwatch triage apply`: each row of the verdict table, the cap, an
//! evidence gate that refuses the downgrade, and the refused inputs. The
//! triage file's JSON after apply is asserted whole.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use tempfile::TempDir;

mod support;

fn fixture(name: &str) -> PathBuf {
    support::fixture_path(&format!("checks/triage/{name}"))
}

/// A folder holding a copy of the fixture triage file and its logs.
struct Case {
    dir: TempDir,
}

impl Case {
    fn new() -> Case {
        let dir = tempfile::tempdir().unwrap();
        for f in [
            "triage-2.json",
            "verify-3.test.log",
            "verify-3-red.test.log",
        ] {
            fs::copy(fixture(f), dir.path().join(f)).unwrap();
        }
        Case { dir }
    }

    fn triage(&self) -> PathBuf {
        self.dir.path().join("triage-2.json")
    }

    /// Runs apply with this verification report; returns (code, stdout, stderr).
    fn apply(&self, verification: Value, extra_args: &[&str]) -> (i32, String, String) {
        let vpath = self.dir.path().join("verification.json");
        fs::write(&vpath, verification.to_string()).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_loopwatch"))
            .current_dir(self.dir.path())
            .env_remove("LOOPWATCH_PIPELINE")
            .args(extra_args)
            .arg("triage")
            .arg("apply")
            .arg(self.triage())
            .arg("--verification")
            .arg(&vpath)
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&fs::read(self.triage()).unwrap()).unwrap()
    }
}

fn original() -> Value {
    serde_json::from_slice(&fs::read(fixture("triage-2.json")).unwrap()).unwrap()
}

fn finding(v: &Value, bucket: &str, id: &str) -> Value {
    v[bucket]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == id)
        .cloned()
        .unwrap_or(Value::Null)
}

fn ids(v: &Value, bucket: &str) -> Vec<String> {
    v[bucket]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect()
}

fn entry(finding: &str, result: &str, log: &str, note: &str) -> Value {
    json!({"finding": finding, "result": result, "testRef": "tests/ledger.rs::empty_ledger_returns_none",
           "file": "tests/ledger.rs", "log": log, "note": note})
}

#[test]
fn every_verdict_row_and_the_cap() {
    let case = Case::new();
    let report = json!({
        "results": [
            {"finding": "F1", "result": "confirmed", "testRef": "tests/fees.rs::grace_day_is_free",
             "file": "tests/fees.rs", "log": "verify-1.test.log", "note": ""},
            entry("F3", "not-reproduced", "verify-3.test.log", ""),
            entry("F4", "inconclusive", "verify-4.test.log", "compile error: Split::new is private"),
            entry("F6", "not-reproduced", "verify-3.test.log", ""),
        ],
        "durationMs": 84000, "tokensIn": 1200, "tokensOut": 300
    });
    let (code, out, err) = case.apply(report, &[]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(
        out,
        format!(
            "{}: 3 attempted: 1 confirmed, 1 downgraded to deferred, 1 inconclusive, 1 past the cap\n\
             \x20 F1 confirmed: red test tests/fees.rs::grace_day_is_free\n\
             \x20 F3 not-reproduced: repro test tests/ledger.rs::empty_ledger_returns_none passed, moved to deferred\n\
             \x20 F4 inconclusive: compile error: Split::new is private\n\
             \x20 F6 cap-exceeded: past maxFindings (3): judgement only\n",
            case.triage().display()
        )
    );

    let mut want = original();
    let verification = |result: &str,
                        test_ref: &str,
                        file: &str,
                        log: &str,
                        note: &str,
                        gate: &str| {
        json!({"result": result, "testRef": test_ref, "file": file, "log": log, "note": note, "evidenceGate": gate})
    };
    let accepted = want["accepted"].as_array_mut().unwrap();
    accepted[0]["verification"] = verification(
        "confirmed",
        "tests/fees.rs::grace_day_is_free",
        "tests/fees.rs",
        "verify-1.test.log",
        "",
        "skipped",
    );
    let ledger = "tests/ledger.rs::empty_ledger_returns_none";
    let mut f3 = accepted.remove(2);
    accepted[2]["verification"] = verification(
        "inconclusive",
        ledger,
        "tests/ledger.rs",
        "verify-4.test.log",
        "compile error: Split::new is private",
        "skipped",
    );
    accepted[3]["verification"] = verification(
        "cap-exceeded",
        ledger,
        "tests/ledger.rs",
        "verify-3.test.log",
        "past maxFindings (3): judgement only",
        "skipped",
    );
    f3["reason"] = json!(format!(
        "verify-by-test: not reproduced - repro test {ledger} passed"
    ));
    f3["verification"] = verification(
        "not-reproduced",
        ledger,
        "tests/ledger.rs",
        "verify-3.test.log",
        "",
        "passed",
    );
    want["deferred"].as_array_mut().unwrap().push(f3);
    assert_eq!(case.json(), want);
    assert_eq!(
        ids(&case.json(), "rejected"),
        ["F2"],
        "downgrades never go to rejected"
    );
}

#[test]
fn a_failing_log_refuses_the_downgrade() {
    let case = Case::new();
    let (code, _, _) = case.apply(
        json!({"results": [entry("F3", "not-reproduced", "verify-3-red.test.log", "")]}),
        &[],
    );
    assert_eq!(code, 0);
    let v = case.json();
    assert_eq!(ids(&v, "accepted"), ["F1", "F7", "F3", "F4", "F6"]);
    assert_eq!(ids(&v, "deferred"), ["F8"]);
    assert_eq!(
        finding(&v, "accepted", "F3")["verification"],
        json!({"result": "inconclusive", "testRef": "tests/ledger.rs::empty_ledger_returns_none",
               "file": "tests/ledger.rs", "log": "verify-3-red.test.log",
               "note": "evidence gate: the run has failures (cargo test: 0 passed, 1 failed, 0 skipped)",
               "evidenceGate": "failed"})
    );
}

#[test]
fn a_log_that_does_not_name_the_test_refuses_the_downgrade() {
    let case = Case::new();
    let mut e = entry("F3", "not-reproduced", "verify-3.test.log", "");
    e["testRef"] = json!("tests/ledger.rs::other_test");
    let (code, out, _) = case.apply(json!({"results": [e]}), &[]);
    assert_eq!(code, 0);
    assert!(
        out.contains(
            "\n  F3 inconclusive: evidence gate: test tests/ledger.rs::other_test is not in the log"
        ),
        "{out}"
    );
    assert_eq!(
        finding(&case.json(), "accepted", "F3")["verification"]["evidenceGate"],
        "failed"
    );
}

#[test]
fn log_paths_outside_the_folders_are_refused() {
    let case = Case::new();
    let outside = case
        .dir
        .path()
        .parent()
        .unwrap()
        .join("loopwatch-outside.test.log");
    let cases = [
        (
            "../verify-3.test.log",
            "evidence gate: log path ../verify-3.test.log must be relative and stay inside its folder",
        ),
        (outside.to_str().unwrap(), ""),
        (
            "missing.test.log",
            "evidence gate: log missing.test.log not found",
        ),
    ];
    for (log, note) in cases {
        let case = Case::new();
        let (code, _, _) = case.apply(
            json!({"results": [entry("F3", "not-reproduced", log, "")]}),
            &[],
        );
        assert_eq!(code, 0);
        let v = finding(&case.json(), "accepted", "F3")["verification"].clone();
        assert_eq!(
            (v["result"].as_str(), v["evidenceGate"].as_str()),
            (Some("inconclusive"), Some("failed")),
            "{log}"
        );
        let want = if note.is_empty() {
            format!("evidence gate: log path {log} must be relative and stay inside its folder")
        } else {
            note.to_string()
        };
        assert_eq!(v["note"], want.as_str());
    }
    // A symlink inside the folder that leads out of it.
    std::os::unix::fs::symlink("/etc/hostname", case.dir.path().join("link.test.log")).unwrap();
    case.apply(
        json!({"results": [entry("F3", "not-reproduced", "link.test.log", "")]}),
        &[],
    );
    let note = finding(&case.json(), "accepted", "F3")["verification"]["note"].clone();
    assert!(
        note.as_str()
            .unwrap()
            .starts_with("evidence gate: log link.test.log leads outside "),
        "{note}"
    );
}

#[test]
fn logs_are_also_found_in_the_pipeline_folder() {
    let case = Case::new();
    let pipeline = case.dir.path().join(".pipeline");
    fs::create_dir(&pipeline).unwrap();
    fs::rename(
        case.dir.path().join("verify-3.test.log"),
        pipeline.join("verify-9.test.log"),
    )
    .unwrap();
    let report = json!({"results": [entry("F3", "not-reproduced", "verify-9.test.log", "")]});
    // Found by walking up from the current directory...
    assert_eq!(case.apply(report.clone(), &[]).0, 0);
    assert_eq!(ids(&case.json(), "deferred"), ["F8", "F3"]);
    // ...or named with --pipeline.
    let other = Case::new();
    fs::remove_file(other.dir.path().join("verify-3.test.log")).unwrap();
    let p = pipeline.to_str().unwrap();
    assert_eq!(other.apply(report, &["--pipeline", p]).0, 0);
    assert_eq!(ids(&other.json(), "deferred"), ["F8", "F3"]);
}

#[test]
fn a_smaller_cap_leaves_the_rest_judgement_only() {
    let case = Case::new();
    let report = json!({"maxFindings": 1, "results": [
        entry("F3", "confirmed", "verify-3-red.test.log", ""),
        entry("F1", "confirmed", "verify-3-red.test.log", ""),
    ]});
    let (code, out, _) = case.apply(report, &[]);
    assert_eq!(code, 0);
    assert!(
        out.contains(
            ": 1 attempted: 1 confirmed, 0 downgraded to deferred, 0 inconclusive, 3 past the cap\n"
        ),
        "{out}"
    );
    let v = case.json();
    let results: Vec<(String, Value)> = v["accepted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["id"].as_str().unwrap().to_string(),
                f["verification"]["result"].clone(),
            )
        })
        .collect();
    assert_eq!(
        results,
        [
            ("F1".into(), json!("confirmed")),
            ("F7".into(), Value::Null),
            ("F3".into(), json!("cap-exceeded")),
            ("F4".into(), json!("cap-exceeded")),
            ("F6".into(), json!("cap-exceeded")),
        ]
    );
}

#[test]
fn bad_inputs_exit_2_and_leave_the_file_untouched() {
    let cases = [
        (
            json!({"results": [entry("F2", "confirmed", "x", "")]}),
            "finding F2 is not in accepted (it is rejected)",
        ),
        (
            json!({"results": [entry("F8", "confirmed", "x", "")]}),
            "finding F8 is not in accepted (it is deferred)",
        ),
        (
            json!({"results": [entry("F99", "confirmed", "x", "")]}),
            "finding F99 is not in accepted",
        ),
        (
            json!({"results": [entry("F1", "confirmed", "x", ""), entry("F1", "inconclusive", "x", "n")]}),
            "finding F1 has more than one result",
        ),
        (
            json!({"results": [], "maxfindings": 2}),
            "verification.json:1:27: unknown field `maxfindings`",
        ),
        (
            json!({"results": [entry("F1", "cap-exceeded", "x", "")]}),
            "verification.json:1:",
        ),
    ];
    for (report, message) in cases {
        let case = Case::new();
        let before = fs::read(case.triage()).unwrap();
        let (code, out, err) = case.apply(report, &[]);
        assert_eq!((code, out.as_str()), (2, ""), "{message}");
        assert!(err.contains(message), "{message}: {err}");
        assert_eq!(fs::read(case.triage()).unwrap(), before);
    }
}

#[test]
fn a_wrong_schema_version_is_refused() {
    let case = Case::new();
    let text = fs::read_to_string(case.triage())
        .unwrap()
        .replace("\"3.2.0\"", "\"3.1.0\"");
    fs::write(case.triage(), &text).unwrap();
    let (code, _, err) = case.apply(json!({"results": []}), &[]);
    assert_eq!(code, 2);
    assert!(
        err.contains(
            "triage-2.json:2:26: schemaVersion \"3.1.0\" is not supported (expected \"3.2.0\")"
        ),
        "{err}"
    );
    assert_eq!(fs::read_to_string(case.triage()).unwrap(), text);
    assert!(Path::new(&case.triage()).exists());
}
