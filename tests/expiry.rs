//! Expiry of human gates: `ask --expires`, `[expiry.<kind>]`, `await`
//! recording `human.expired` (never a decision), what `status`, `decide`
//! and the report say afterwards, refused expiries, and a decision racing
//! an expiry (exactly one wins).

use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Arc, Barrier};

use loopwatch::journal::{Pipeline, read_all};
use loopwatch::model::event::{EventBody, HumanDecision};
use loopwatch::model::{Decision, GateStatus, fold};
use loopwatch::recorder::{RecordError, Recorder};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_loopwatch");

/// A temp worktree with its own (empty) config folder.
struct Place {
    dir: tempfile::TempDir,
}

impl Place {
    fn new() -> Place {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("wt/.git")).unwrap();
        std::fs::create_dir_all(dir.path().join("config/loopwatch")).unwrap();
        Place { dir }
    }

    fn root(&self) -> std::path::PathBuf {
        self.dir.path().join("wt")
    }

    fn config(&self, text: &str) {
        std::fs::write(self.dir.path().join("config/loopwatch/config.toml"), text).unwrap();
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .args(args)
            .current_dir(self.root())
            .env("LOOPWATCH_USER", "dana")
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env_remove("LOOPWATCH_PIPELINE")
            .output()
            .unwrap()
    }

    fn lw(&self, args: &[&str], code: i32) -> (String, String) {
        let out = self.run(args);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(
            out.status.code(),
            Some(code),
            "{args:?}\nstdout:\n{stdout}\nstderr:\n{stderr}"
        );
        (stdout, stderr)
    }

    fn types(&self) -> Vec<String> {
        let batch = read_all(&self.root().join(".pipeline/events.jsonl")).unwrap();
        batch
            .events
            .iter()
            .map(|e| e.body.type_name().to_string())
            .collect()
    }
}

fn ask_out_of_scope(p: &Place, extra: &[&str]) -> String {
    let mut args = vec![
        "ask",
        "out-of-scope",
        "--subject",
        "Cargo.lock",
        "--summary",
        "touches the lock file",
    ];
    args.extend_from_slice(extra);
    let (out, _) = p.lw(&args, 10);
    out.lines().next().unwrap().to_string()
}

#[test]
fn await_records_the_expiry_and_prints_it_apart_from_decisions() {
    let p = Place::new();
    let id = ask_out_of_scope(&p, &["--expires", "1s", "--on-expiry", "deny"]);
    let (out, _) = p.lw(&["await", &id, "--timeout", "60"], 0);
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["id"], id.as_str());
    assert_eq!(v["expired"], true);
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["after"], "1s");
    assert_eq!(v["by"], "");

    let types = p.types();
    assert_eq!(types.iter().filter(|t| *t == "human.expired").count(), 1);
    assert!(!types.iter().any(|t| t == "human.decided"), "{types:?}");

    // A second await prints the same outcome without writing anything.
    let (again, _) = p.lw(&["await", &id], 0);
    assert_eq!(again, out);
    assert_eq!(p.types(), types);

    // A person deciding afterwards is told it expired.
    let (_, err) = p.lw(&["decide", &id, "approve", "--reason", "late"], 2);
    assert!(err.contains("expired"), "{err}");
    assert!(!p.types().iter().any(|t| t == "human.decided"));

    let (status, _) = p.lw(&["status"], 0);
    assert!(
        status.contains(&format!(
            "EXPIRED {id}: nobody decided within 1s, deny applied"
        )),
        "{status}"
    );
    assert!(!status.contains("decided hg"), "{status}");
    let (json, _) = p.lw(&["status", "--json"], 0);
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["humanGates"][0]["status"], "expired");
    assert_eq!(v["humanGates"][0]["expired"]["action"], "deny");

    let (md, _) = p.lw(&["report"], 0);
    assert!(md.contains("## Expired gates (nobody decided)"), "{md}");
    assert!(md.contains("**EXPIRED** after 1s"), "{md}");
    let decisions = md
        .split("## Human decisions")
        .nth(1)
        .and_then(|s| s.split("## ").next())
        .unwrap();
    assert!(decisions.contains("none"), "{decisions}");
    let (html, _) = p.lw(&["report", "--format", "html"], 0);
    assert!(html.contains("class=\"expired\""), "{html}");
}

#[test]
fn the_config_gives_an_expiry_per_kind() {
    let p = Place::new();
    p.config("[expiry.out-of-scope]\nafter = \"1s\"\naction = \"deny\"\n");
    let id = ask_out_of_scope(&p, &[]);
    let (json, _) = p.lw(&["status", "--json"], 10);
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        v["humanGates"][0]["expires"],
        serde_json::json!({"after": "1s", "action": "deny"})
    );
    let (out, _) = p.lw(&["await", &id, "--timeout", "60"], 0);
    assert!(out.contains("\"expired\":true"), "{out}");

    // A kind without an expiry never expires: await times out.
    let other = {
        let (out, _) = p.lw(
            &["ask", "structural", "--subject", "floor", "--summary", "x"],
            10,
        );
        out.lines().next().unwrap().to_string()
    };
    let (_, err) = p.lw(&["await", &other, "--timeout", "0.2"], 124);
    assert!(err.contains("still open"), "{err}");
}

#[test]
fn zero_negative_and_foreign_expiries_are_refused() {
    let p = Place::new();
    let cases: &[(&[&str], &str)] = &[
        (&["--expires", "0", "--on-expiry", "deny"], "zero"),
        (&["--expires", "0m", "--on-expiry", "deny"], "zero"),
        (
            &["--expires", "-5m", "--on-expiry", "deny"],
            "not a duration",
        ),
        (
            &["--expires", "soon", "--on-expiry", "deny"],
            "not a duration",
        ),
        (&["--expires", "5m", "--on-expiry", "lift"], "not an option"),
    ];
    for (extra, want) in cases {
        let mut args = vec!["ask", "out-of-scope", "--subject", "a", "--summary", "b"];
        args.extend_from_slice(extra);
        let (_, err) = p.lw(&args, 2);
        assert!(err.contains(want), "{extra:?}: {err}");
    }
    // --expires without --on-expiry is a usage error.
    let (_, err) = p.lw(
        &[
            "ask",
            "out-of-scope",
            "--subject",
            "a",
            "--summary",
            "b",
            "--expires",
            "5m",
        ],
        2,
    );
    assert!(err.contains("--on-expiry"), "{err}");
    assert!(!p.root().join(".pipeline/events.jsonl").exists());

    // A config refusing the expiry is reported, and never stops the recording.
    p.config("[expiry.out-of-scope]\nafter = \"0s\"\naction = \"deny\"\n");
    let (out, err) = p.lw(
        &["ask", "out-of-scope", "--subject", "a", "--summary", "b"],
        10,
    );
    assert!(
        err.contains("config.toml:1:1: [expiry.out-of-scope]"),
        "{err}"
    );
    assert!(err.contains("zero"), "{err}");
    assert!(err.contains("(no expiry from the config)"), "{err}");
    let id = out.lines().next().unwrap();
    let (json, _) = p.lw(&["status", "--json"], 10);
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["humanGates"][0]["id"], id);
    assert!(v["humanGates"][0].get("expires").is_none(), "{v}");
}

/// A pipeline whose gate `hg-1-manual-1` was asked long ago with a 1s expiry:
/// due at once, so a decision and an expiry can race.
fn overdue_gate(root: &Path) -> Pipeline {
    let dir = root.join(".pipeline");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("events.jsonl"),
        concat!(
            r#"{"v":1,"seq":1,"at":"2026-01-01T00:00:00Z","type":"human.requested","id":"hg-1-manual-1","kind":"out-of-scope","iteration":1,"subject":"Cargo.lock","summary":"s","options":["approve","deny"],"evidence":null,"expires":{"after":"1s","action":"deny"}}"#,
            "\n"
        ),
    )
    .unwrap();
    Pipeline::at(dir)
}

#[test]
fn a_decision_racing_an_expiry_gives_exactly_one_outcome() {
    for round in 0..12 {
        let tmp = tempfile::tempdir().unwrap();
        let pipeline = overdue_gate(tmp.path());
        let barrier = Arc::new(Barrier::new(2));
        let (b1, p1) = (barrier.clone(), pipeline.clone());
        let expire = std::thread::spawn(move || {
            b1.wait();
            Recorder::new(p1).expire("hg-1-manual-1")
        });
        let (b2, p2) = (barrier, pipeline.clone());
        let decide = std::thread::spawn(move || {
            b2.wait();
            Recorder::new(p2).decide(HumanDecision {
                id: "hg-1-manual-1".into(),
                decision: Decision::Approve,
                reason: "fine".into(),
                by: "dana@host".into(),
                evidence_hash: String::new(),
                contract_edit: None,
                note: None,
                extra: Default::default(),
            })
        });
        let (x, d) = (expire.join().unwrap(), decide.join().unwrap());
        assert!(x.is_ok() != d.is_ok(), "round {round}: {x:?} / {d:?}");
        let batch = read_all(&pipeline.journal_path()).unwrap();
        let outcomes: Vec<&str> = batch
            .events
            .iter()
            .map(|e| e.body.type_name())
            .filter(|t| *t == "human.expired" || *t == "human.decided")
            .collect();
        assert_eq!(outcomes.len(), 1, "round {round}: {outcomes:?}");
        let state = fold(&batch.events);
        let gate = state.human_gate("hg-1-manual-1").unwrap();
        // The loser is told who won.
        match (&x, &d) {
            (Ok(_), Err(RecordError::Refused(r))) => {
                let m = r.to_string();
                assert_eq!(gate.status, GateStatus::Expired);
                assert!(m.contains("expired at"), "{m}");
            }
            (Err(RecordError::Refused(r)), Ok(_)) => {
                let m = r.to_string();
                assert_eq!(gate.status, GateStatus::Decided);
                assert!(
                    m.contains("was decided before it expired: approve by dana@host"),
                    "{m}"
                );
            }
            other => panic!("round {round}: {other:?}"),
        }
    }
}

#[test]
fn an_expiry_is_refused_before_it_is_due_and_on_a_gate_without_one() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = Recorder::new(Pipeline::at(tmp.path().join(".pipeline")));
    let req = |kind| loopwatch::model::rules::GateRequest {
        kind,
        gate: None,
        subject: "s".into(),
        summary: "x".into(),
        evidence: Value::Null,
    };
    let rule = loopwatch::model::event::ExpiryRule::new(
        "1d",
        Decision::Deny,
        loopwatch::model::HumanGateKind::OutOfScope,
    )
    .unwrap();
    let (late, _) = rec
        .ask_expiring(req(loopwatch::model::HumanGateKind::OutOfScope), Some(rule))
        .unwrap();
    let err = rec.expire(&late).unwrap_err().to_string();
    assert!(err.contains("does not expire before"), "{err}");
    let (never, _) = rec
        .ask(req(loopwatch::model::HumanGateKind::Structural))
        .unwrap();
    let err = rec.expire(&never).unwrap_err().to_string();
    assert!(err.contains("has no expiry"), "{err}");
    let err = rec.expire("hg-9-x-1").unwrap_err().to_string();
    assert!(err.contains("no human gate"), "{err}");
}

#[test]
fn an_expiry_applies_its_action_to_the_loop_and_is_never_a_decision() {
    let line = |seq: u64, body: &str| {
        loopwatch::model::event::Event::parse_line(
            format!(r#"{{"v":1,"seq":{seq},"at":"2026-01-01T00:00:0{seq}Z",{body}}}"#).as_bytes(),
        )
        .unwrap()
    };
    let asked = r#""type":"human.requested","id":"hg-1-conformity-1","kind":"cap-reached","gate":"conformity","iteration":1,"options":["extend","take-over","abort"],"expires":{"after":"5m","action":"extend"}"#;
    let expired =
        r#""type":"human.expired","id":"hg-1-conformity-1","after":"5m","action":"extend""#;
    let decided = r#""type":"human.decided","id":"hg-1-conformity-1","decision":"abort","reason":"r","by":"dana@h""#;
    let events = [line(1, asked), line(2, expired), line(3, decided)];
    let s = fold(&events);
    let g = s.human_gate("hg-1-conformity-1").unwrap();
    assert_eq!(g.status, GateStatus::Expired);
    assert!(g.decision.is_none(), "the later decision is ignored");
    assert_eq!(g.outcome(), Some(Decision::Extend));
    assert_eq!(s.caps.conformity, 4, "extend applied by the expiry");
    assert!(matches!(events[1].body, EventBody::HumanExpired(_)));

    // Decided first: the expiry is ignored.
    let s = fold(&[line(1, asked), line(3, decided), line(2, expired)]);
    let g = s.human_gate("hg-1-conformity-1").unwrap();
    assert_eq!(g.status, GateStatus::Decided);
    assert!(g.expired.is_none());
    assert_eq!(s.caps.conformity, 3);
    assert_eq!(s.next.machine_line(), "stop aborted");

    // An expiry with abort stops the run, and says it expired.
    let aborting = expired.replace("extend", "abort");
    let s = fold(&[line(1, asked), line(2, &aborting)]);
    assert!(
        s.next.why().contains("expired with abort"),
        "{}",
        s.next.why()
    );
}
