//! Verify-by-test on a real cargo crate in a throwaway git repository, with
//! scripted agents that write repro tests: the three outcomes and the
//! files left behind, the cap, the step timeout, a crashing agent, and the
//! red tests rerun after the developer (green, red, missing, weakened).
//! The step is called directly with a recorder on the crate's pipeline.

mod support;

use std::path::PathBuf;
use std::time::Duration;

use loopwatch::engine::config::{AdapterKind, AgentConfig, VerifyByTestConfig};
use loopwatch::engine::dispatch::{self, Settings};
use loopwatch::engine::review::verify_by_test::{self, Job, Recheck};
use loopwatch::journal::Pipeline;
use loopwatch::model::event::{AgentRole, GreenResult, RunInfo};
use loopwatch::model::rules::green;
use loopwatch::model::{EventBody, State, VerifyOutcome};
use loopwatch::recorder::Recorder;
use serde_json::{Value, json};
use support::assert_has;
use support::engine::{commit_all, git, git_init, git_status, is_live, write_crate};
use tokio::sync::watch;

const LIB: &str = "/// A price plus a tip, in cents.\npub fn total_cents(price: u32, tip: u32) -> u32 {\n    price + tip / 100\n}\n\n/// `n items`.\npub fn label(n: u32) -> String {\n    format!(\"{n} items\")\n}\n";

const EXISTING: &str =
    "#[test]\nfn existing_label() {\n    assert_eq!(repro::label(1), \"1 items\");\n}\n";

/// The scripted verify-by-test agent: what it writes follows from `$MODE`.
const AGENT: &str = r#"#!/usr/bin/env bash
set -u
cat >"$TEST_OUT/input-$LW_DISPATCH"
test_file() { mkdir -p tests; printf '#[test]\nfn %s() {\n    %s\n}\n' "$2" "$3" >"tests/$1.rs"; }
case $MODE in
  three)
    test_file repro_f1 f1_total_keeps_the_tip 'assert_eq!(repro::total_cents(100, 50), 150);'
    printf '\n#[test]\nfn f2_label_plural() {\n    assert_eq!(repro::label(2), "2 items");\n}\n' >>tests/existing.rs
    test_file repro_f3 f3_missing_fn 'assert_eq!(repro::nope(), 1);'
    echo scratch >notes.txt
    # A "fix" of the code under test would make every repro test pass.
    sed -i 's|price + tip / 100|price + tip|' src/lib.rs
    printf 'The tests:\n```json\n[{"finding":"F1","file":"tests/repro_f1.rs","testRef":"tests/repro_f1.rs::f1_total_keeps_the_tip"},\n {"finding":"F2","file":"tests/existing.rs","testRef":"tests/existing.rs::f2_label_plural"},\n {"finding":"F3","file":"tests/repro_f3.rs","testRef":"tests/repro_f3.rs::f3_missing_fn"}]\n```\n'
    ;;
  reds)
    test_file repro_f1 f1_total_keeps_the_tip 'assert_eq!(repro::total_cents(100, 50), 150);'
    test_file repro_f2 f2_label_none 'assert_eq!(repro::label(0), "no items");'
    test_file repro_f3 f3_tip_only 'assert_eq!(repro::total_cents(0, 100), 100);'
    test_file repro_f4 f4_singular 'assert_eq!(repro::label(1), "1 item");'
    test_file repro_f5 f5_zero 'assert_eq!(repro::label(0), "none");'
    test_file repro_f6 f6_two 'assert_eq!(repro::label(2), "two items");'
    printf '['
    for n in 1 2 3 4 5 6; do
      name=$(grep -o 'fn f[0-9_a-z]*' "tests/repro_f$n.rs" | cut -c4-)
      [ "$n" -gt 1 ] && printf ','
      printf '{"finding":"F%s","file":"tests/repro_f%s.rs","testRef":"tests/repro_f%s.rs::%s"}' "$n" "$n" "$n" "$name"
    done
    printf ']\n'
    ;;
  hostile)
    test_file repro_f1 f1_total_keeps_the_tip 'assert_eq!(repro::total_cents(100, 50), 150);'
    printf 'ok\n' >>tests/existing.rs
    sed -i 's|1 items|one items|' tests/existing.rs
    printf '[{"finding":"F1","file":"../outside/tests/a.rs","testRef":"a"},{"finding":"F2","file":"tests/existing.rs","testRef":"existing_label"},{"finding":"F9","file":"tests/x.rs","testRef":"x"},"F3"]'
    ;;
  sleep)
    test_file repro_f1 f1_total_keeps_the_tip 'assert_eq!(repro::total_cents(100, 50), 150);'
    (sleep 300) &
    echo $! >"$TEST_OUT/grandchild"
    sleep 300
    ;;
  linked)
    # A "repro test" that is a link to a file outside the worktree.
    printf '#[test]\nfn f1_total_keeps_the_tip() {\n    assert!(false);\n}\n' >"$TEST_OUT/outside.rs"
    mkdir -p tests; ln -s "$TEST_OUT/outside.rs" tests/repro_f1.rs
    printf '[{"finding":"F1","file":"tests/repro_f1.rs","testRef":"tests/repro_f1.rs::f1_total_keeps_the_tip"}]'
    ;;
  crash)
    test_file repro_f1 f1_total_keeps_the_tip 'assert_eq!(repro::total_cents(100, 50), 150);'
    echo "out of tokens" >&2
    exit 3
    ;;
esac
"#;

/// The scripted developer of the recheck: fixes F1, leaves F2, deletes
/// F3's test, drops F4's assertion, renames F5's test, ignores F6's.
const DEVELOPER: &str = r#"#!/usr/bin/env bash
set -u
cat >/dev/null
sed -i 's|price + tip / 100|price + tip|' src/lib.rs
rm tests/repro_f3.rs
sed -i '/assert_eq/d' tests/repro_f4.rs
sed -i 's/fn f5_zero/fn f5_zero_renamed/' tests/repro_f5.rs
sed -i 's/^#\[test\]/#[test]\n#[ignore]/' tests/repro_f6.rs
# F2's test now leaves a file behind when it runs.
sed -i 's|assert_eq!(repro::label(0)|std::fs::write("leftover.txt", "x").unwrap();\n    assert_eq!(repro::label(0)|' tests/repro_f2.rs
echo done
"#;

struct Crate {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    out: PathBuf,
    agents: PathBuf,
    rec: Recorder,
    settings: Settings,
}

/// A generic agent of `role` running `command`.
fn agent(role: AgentRole, command: String, timeout: Duration) -> AgentConfig {
    AgentConfig {
        role,
        command,
        adapter: AdapterKind::Generic,
        prompt_file: None,
        model: None,
        timeout,
        max_concurrency: 1,
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Asserts that the `note` of the event `v` says `want`.
fn assert_note(v: &Value, want: &str) {
    let note = v["note"].as_str().unwrap_or_else(|| panic!("no note: {v}"));
    assert!(note.contains(want), "{want:?} not in the note of {v}");
}

impl Crate {
    /// A committed cargo crate with a run started and a triage of
    /// `findings` (all accepted blocking) recorded for iteration 1.
    fn new(findings: &[&str]) -> Crate {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("work");
        let out = tmp.path().join("out");
        let agents = tmp.path().join("agents");
        for d in [&root.join("tests"), &out, &agents] {
            std::fs::create_dir_all(d).unwrap();
        }
        write_crate(&root, LIB);
        std::fs::write(root.join("tests/existing.rs"), EXISTING).unwrap();
        git_init(&root);
        commit_all(&root, "crate");
        std::fs::write(agents.join("agent.sh"), AGENT).unwrap();
        std::fs::write(agents.join("developer.sh"), DEVELOPER).unwrap();
        let pipeline = Pipeline::at(root.join(".pipeline"));
        let rec = Recorder::new(pipeline.clone());
        let run = RunInfo {
            id: "vbt".into(),
            contract: "docs/contract.md".into(),
            diff: git(&root, &["rev-parse", "HEAD"]).trim().to_string(),
            test: "cargo test".into(),
            worktree: root.display().to_string(),
            engine: true,
            ..RunInfo::default()
        };
        rec.run_start(run.clone(), false).unwrap();
        let accepted: Vec<Value> = findings
            .iter()
            .map(|id| json!({"id": id, "severity": "blocking", "title": format!("{id} is wrong"), "path": "src/lib.rs", "lines": "3", "claim": "the tip is lost", "reviewer": "r"}))
            .collect();
        let triage = json!({"schemaVersion": "3.2.0", "iteration": 1, "accepted": accepted,
            "deferred": [], "rejected": [{"id": "R1", "severity": "minor", "title": "t", "reason": "finding verifier: FALSE"}]});
        std::fs::write(
            pipeline.dir().join("triage-1.json"),
            serde_json::to_vec_pretty(&triage).unwrap(),
        )
        .unwrap();
        let t: loopwatch::model::triage::Triage = serde_json::from_value(triage).unwrap();
        let (counts, buckets) = t.buckets();
        rec.triage(1, "triage-1.json".into(), counts, buckets)
            .unwrap();
        let settings = Settings {
            pipeline,
            run,
            grace: Duration::from_millis(500),
            log_limit: 8 << 20,
            contract: None,
            left: Default::default(),
        };
        Crate {
            _tmp: tmp,
            root,
            out,
            agents,
            rec,
            settings,
        }
    }

    fn agent(&self, mode: &str, timeout: Duration) -> AgentConfig {
        let script = self.agents.join("agent.sh");
        let command = format!(
            "TEST_OUT={} MODE={mode} bash {}",
            self.out.display(),
            script.display()
        );
        agent(AgentRole::VerifyByTest, command, timeout)
    }

    /// Runs the step of iteration 1 to its end.
    fn verify(&self, mode: &str, config: VerifyByTestConfig) -> Option<i32> {
        let agent = self.agent(mode, Duration::from_secs(120));
        let (_tx, mut rx) = watch::channel(None);
        self.verify_until(&agent, &config, &mut rx)
    }

    /// Runs the step of iteration 1 with `agent` until its end or `stop`.
    fn verify_until(
        &self,
        agent: &AgentConfig,
        config: &VerifyByTestConfig,
        stop: &mut watch::Receiver<Option<i32>>,
    ) -> Option<i32> {
        let job = Job {
            settings: &self.settings,
            agent,
            config,
            iteration: 1,
            triage_file: self.file("triage-1.json"),
            dispatch: self.next_dispatch(),
        };
        runtime()
            .block_on(verify_by_test::run(&self.rec, job, stop))
            .expect("the step never fails the loop")
    }

    /// A file of the pipeline.
    fn file(&self, name: &str) -> PathBuf {
        self.settings.pipeline.dir().join(name)
    }

    /// `triage-1.json` as it is now.
    fn triage(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.file("triage-1.json")).unwrap()).unwrap()
    }

    fn state(&self) -> State {
        loopwatch::journal::snapshot(&self.settings.pipeline)
            .unwrap()
            .unwrap()
            .state
    }

    fn next_dispatch(&self) -> u32 {
        self.state()
            .agents
            .iter()
            .map(|a| a.started.dispatch)
            .max()
            .unwrap_or(0)
            + 1
    }

    fn events(&self, t: &str) -> Vec<Value> {
        let text = std::fs::read_to_string(self.settings.pipeline.journal_path()).unwrap();
        text.lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|e| e["type"] == t)
            .collect()
    }

    fn result(&self, finding: &str) -> Value {
        self.events("verify.result")
            .into_iter()
            .rev()
            .find(|e| e["finding"] == finding)
            .unwrap_or_else(|| panic!("no verify.result for {finding}"))
    }

    fn summary(&self) -> Value {
        self.events("verify.summary")
            .pop()
            .expect("a verify.summary")
    }

    fn notes(&self) -> Vec<String> {
        self.events("note")
            .iter()
            .map(|e| e["text"].as_str().unwrap().to_string())
            .collect()
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }
}

fn config(max_findings: u32, step_timeout: Duration) -> VerifyByTestConfig {
    VerifyByTestConfig {
        enabled: true,
        max_findings,
        step_timeout,
    }
}

#[test]
fn three_outcomes_leave_only_the_confirmed_repro_test_behind() {
    let c = Crate::new(&["F1", "F2", "F3"]);
    assert_eq!(c.verify("three", config(3, Duration::from_secs(300))), None);

    let f1 = c.result("F1");
    assert_eq!(f1["result"], "confirmed", "{f1}");
    assert_eq!(f1["log"], "verify-1-F1.test.log");
    let f2 = c.result("F2");
    assert_eq!(f2["result"], "not-reproduced", "{f2}");
    assert_eq!(f2["evidenceGate"], "passed");
    let f3 = c.result("F3");
    assert_eq!(f3["result"], "inconclusive", "{f3}");
    assert_note(&f3, "no test ran");
    // Each log is loopwatch's own run of that test alone.
    let log1 = std::fs::read_to_string(c.file("verify-1-F1.test.log")).unwrap();
    assert_has(&log1, "test f1_total_keeps_the_tip ... FAILED");
    assert_has(&log1, "--test repro_f1 f1_total_keeps_the_tip -- --exact");
    let log3 = std::fs::read_to_string(c.file("verify-1-F3.test.log")).unwrap();
    assert_has(&log3, "error[E0425]");

    let s = c.summary();
    assert_eq!(
        (
            &s["attempted"],
            &s["confirmed"],
            &s["downgraded"],
            &s["inconclusive"],
            &s["capExceeded"],
            &s["timedOut"]
        ),
        (
            &json!(3),
            &json!(1),
            &json!(1),
            &json!(1),
            &json!(0),
            &json!(false)
        ),
        "{s}"
    );
    assert_eq!(
        s["redTests"],
        json!([{"file": "tests/repro_f1.rs", "testRef": "tests/repro_f1.rs::f1_total_keeps_the_tip", "issue": "F1"}])
    );
    assert_eq!(
        s["normalized"],
        json!(["code fence removed", "prose before the array removed"])
    );
    assert!(s.get("cleanupViolations").is_none(), "{s}");
    assert!(s["tree"].is_string(), "{s}");

    // The invariant: the confirmed repro test is the only change left; the
    // edited test file is back to its content, the stray file is gone.
    assert_eq!(git_status(&c.root), ["?? tests/repro_f1.rs"]);
    assert_eq!(c.read("tests/existing.rs"), EXISTING);
    assert_eq!(
        c.read("src/lib.rs"),
        LIB,
        "the code under test was put back before the tests ran"
    );
    assert!(!c.root.join("tests/repro_f3.rs").exists());
    assert!(!c.root.join("notes.txt").exists());
    let notes = c.notes();
    assert!(
        notes.iter().any(
            |n| n.contains("put src/lib.rs back before running the tests (the agent edited it")
        ),
        "{notes:?}"
    );

    // triage apply: F2 moved to deferred, the file recorded again.
    let t = c.triage();
    let ids = |b: &str| -> Vec<String> {
        t[b].as_array()
            .unwrap()
            .iter()
            .map(|f| f["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(ids("accepted"), ["F1", "F3"]);
    assert_eq!(ids("deferred"), ["F2"]);
    assert_eq!(t["accepted"][0]["verification"]["result"], "confirmed");
    let recorded = c.events("triage.recorded");
    assert_eq!(recorded.len(), 2);
    assert_eq!(
        recorded[1]["counts"],
        json!({"accepted": 2, "deferred": 1, "rejected": 1})
    );

    // The agent was handed the findings, the hunks and the conventions.
    let input = std::fs::read_to_string(c.out.join("input-1")).unwrap();
    for want in [
        "FINDING F1 [blocking]",
        "FINDING F3",
        "TEST: cargo test",
        "RUNNER: cargo test",
        "tests/existing.rs",
        "ANSWER with ONLY a JSON array",
    ] {
        assert!(input.contains(want), "{want} not in the input:\n{input}");
    }
    let st = c.state();
    let it = st.iteration(1).unwrap();
    assert_eq!(
        it.verifications
            .iter()
            .find(|v| v.finding == "F2")
            .unwrap()
            .result,
        VerifyOutcome::NotReproduced
    );
}

#[test]
fn findings_past_max_findings_keep_their_judgement() {
    let c = Crate::new(&["F1", "F2", "F3", "F4"]);
    assert_eq!(c.verify("three", config(3, Duration::from_secs(300))), None);
    let f4 = c.result("F4");
    assert_eq!(f4["result"], "cap-exceeded", "{f4}");
    assert_eq!(c.summary()["capExceeded"], 1);
    assert_eq!(c.summary()["attempted"], 3);
    let input = std::fs::read_to_string(c.out.join("input-1")).unwrap();
    assert!(
        input.contains("FINDINGS (3)") && !input.contains("FINDING F4"),
        "{input}"
    );
    let t = c.triage();
    let f4 = t["accepted"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "F4")
        .unwrap();
    assert_eq!(f4["verification"]["result"], "cap-exceeded");
}

#[test]
fn the_step_timeout_stops_the_agent_and_its_children_and_the_loop_goes_on() {
    let c = Crate::new(&["F1", "F2"]);
    assert_eq!(c.verify("sleep", config(3, Duration::from_secs(2))), None);
    let s = c.summary();
    assert_eq!(s["timedOut"], true, "{s}");
    assert_eq!(s["inconclusive"], 2, "{s}");
    for f in ["F1", "F2"] {
        let r = c.result(f);
        assert_eq!(r["result"], "inconclusive");
        assert_note(&r, "ran out");
    }
    assert!(
        c.notes()
            .iter()
            .any(|n| n.starts_with("verify-by-test-timeout:")),
        "{:?}",
        c.notes()
    );
    let finished = c.events("agent.finished");
    assert_eq!(finished[0]["timedOut"], true);
    let grandchild: u32 = std::fs::read_to_string(c.out.join("grandchild"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        !is_live(grandchild),
        "the agent's child {grandchild} outlived the step"
    );
    assert_eq!(
        git_status(&c.root),
        Vec::<String>::new(),
        "the unfinished repro test is removed"
    );
}

#[test]
fn a_crashing_agent_leaves_every_judgement_and_nothing_behind() {
    let c = Crate::new(&["F1"]);
    assert_eq!(c.verify("crash", config(3, Duration::from_secs(300))), None);
    let r = c.result("F1");
    assert_eq!(r["result"], "inconclusive");
    assert_note(&r, "exited with status 3");
    assert_eq!(c.summary()["timedOut"], false);
    assert_eq!(git_status(&c.root), Vec::<String>::new());
    let t = c.triage();
    assert_eq!(
        t["accepted"][0]["id"], "F1",
        "an inconclusive finding stays accepted"
    );
}

#[test]
fn red_tests_are_rerun_after_the_developer_green_red_missing_weakened() {
    let c = Crate::new(&["F1", "F2", "F3", "F4", "F5", "F6"]);
    assert_eq!(c.verify("reds", config(6, Duration::from_secs(300))), None);
    assert_eq!(c.summary()["confirmed"], 6, "{}", c.summary());
    let reds = c
        .state()
        .iteration(1)
        .unwrap()
        .verify_by_test
        .clone()
        .unwrap()
        .red_tests;
    // The hand-off names each red test; the developer of iteration 2 works.
    let lines: Vec<Value> = reds
        .iter()
        .map(|r| {
            Value::from(format!(
                "  {}: {}",
                r.issue,
                green::handoff_line(&r.test_ref)
            ))
        })
        .collect();
    c.rec.dev(lines).unwrap();
    assert_eq!(
        green::pending(&c.state()),
        None,
        "not before the developer's dispatch"
    );
    let script = c.agents.join("developer.sh");
    let command = format!("bash {}", script.display());
    let developer = agent(AgentRole::Developer, command, Duration::from_secs(60));
    let rt = runtime();
    let (_tx, mut rx) = watch::channel(None);
    let d = rt
        .block_on(dispatch::dispatch(
            &c.settings,
            dispatch::Job {
                agent: &developer,
                iteration: 2,
                gate: None,
                inputs: "GAPS".into(),
                dispatch: c.next_dispatch(),
            },
            &mut rx,
        ))
        .unwrap();
    assert!(d.finished.succeeded(), "{:?}", d.finished);
    assert_eq!(green::pending(&c.state()), Some(2));

    let cfg = config(6, Duration::from_secs(300));
    let job = Recheck {
        settings: &c.settings,
        config: &cfg,
        iteration: 2,
    };
    assert_eq!(
        rt.block_on(verify_by_test::recheck(&c.rec, job, &mut rx))
            .unwrap(),
        None
    );
    let greens = c.state().iteration(2).unwrap().greens.clone();
    let by = |f: &str| {
        greens
            .iter()
            .find(|g| g.finding == f)
            .unwrap_or_else(|| panic!("no verify.green for {f}: {greens:?}"))
    };
    // Each red test's result and, where it did not stay as it was, why.
    for (f, result, note) in [
        ("F1", GreenResult::Green, None),
        ("F2", GreenResult::Red, None),
        ("F3", GreenResult::Missing, Some("is gone")),
        (
            "F4",
            GreenResult::Weakened,
            Some("ASSERT_DROP tests/repro_f4.rs"),
        ),
        ("F5", GreenResult::Missing, Some("no test by that name")),
        ("F6", GreenResult::Weakened, Some("skipped")),
    ] {
        let g = by(f);
        assert_eq!(g.result, result, "{f}: {g:?}");
        if let Some(want) = note {
            let got = g.note.as_deref().unwrap_or_default();
            assert!(got.contains(want), "{f}: {want:?} not in {g:?}");
        }
    }
    assert_eq!(by("F1").log, "green-2-F1.test.log");
    // What a rerun left behind is put back and said.
    assert!(!c.root.join("leftover.txt").exists());
    let notes = c.notes();
    assert!(
        notes.iter().any(|n| n.contains(
            "verify-by-test recheck of iteration 2: cleanup invariant violated: leftover.txt created (put back)"
        )),
        "{notes:?}"
    );

    let s = c.state();
    assert_eq!(green::pending(&s), None, "recorded once");
    let gaps = green::gaps(&s);
    assert_eq!(gaps.len(), 5, "{gaps:#?}");
    assert!(
        gaps.iter()
            .any(|g| g.contains("tests/repro_f2.rs::f2_label_none of finding F2 is red")),
        "{gaps:#?}"
    );
    assert!(c.events("verify.green").iter().all(|e| e["iteration"] == 2));
    assert!(matches!(
        loopwatch::journal::snapshot(&c.settings.pipeline)
            .unwrap()
            .unwrap()
            .events
            .last()
            .map(|e| &e.body),
        Some(EventBody::VerifyGreen(_))
    ));
}

#[test]
fn hostile_answers_are_their_findings_problem_and_never_run() {
    let c = Crate::new(&["F1", "F2", "F3"]);
    assert_eq!(
        c.verify("hostile", config(3, Duration::from_secs(300))),
        None
    );
    let f1 = c.result("F1");
    assert_eq!(f1["result"], "inconclusive");
    assert_note(&f1, "must stay inside the worktree");
    // An existing test file whose lines the agent changed is not run.
    let f2 = c.result("F2");
    assert_eq!(f2["result"], "inconclusive");
    assert_note(&f2, "changed 1 existing line(s) of tests/existing.rs");
    assert_note(&c.result("F3"), "wrote no repro test");
    let notes = c.notes();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("F9, which was not asked for")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.contains("entry 4 is a string")),
        "{notes:?}"
    );
    assert_eq!(git_status(&c.root), Vec::<String>::new());
    assert_eq!(c.read("tests/existing.rs"), EXISTING);
    assert!(!c.file("verify-1-F1.test.log").exists(), "nothing ran");
}

#[test]
fn a_repro_test_that_is_a_link_out_of_the_worktree_is_never_run() {
    let c = Crate::new(&["F1"]);
    assert_eq!(
        c.verify("linked", config(3, Duration::from_secs(300))),
        None
    );
    let f1 = c.result("F1");
    assert_eq!(f1["result"], "inconclusive", "{f1}");
    assert_note(&f1, "tests/repro_f1.rs is a symbolic link");
    assert!(!c.file("verify-1-F1.test.log").exists(), "nothing ran");
    // The link is gone with the cleanup; its target is left alone.
    assert!(std::fs::symlink_metadata(c.root.join("tests/repro_f1.rs")).is_err());
    assert!(c.out.join("outside.rs").is_file());
    assert_eq!(git_status(&c.root), Vec::<String>::new());
}

#[test]
fn an_unknown_runner_is_an_inconclusive_naming_the_test_command() {
    let mut c = Crate::new(&["F1"]);
    c.settings.run.test = "make check".into();
    assert_eq!(c.verify("three", config(3, Duration::from_secs(300))), None);
    let f1 = c.result("F1");
    assert_eq!(f1["result"], "inconclusive");
    assert_note(
        &f1,
        "cannot tell the test runner from [run] test `make check`",
    );
    assert_eq!(git_status(&c.root), Vec::<String>::new());
}

#[test]
fn a_stop_puts_the_worktree_back_and_records_no_result() {
    let c = Crate::new(&["F1"]);
    let agent = c.agent("sleep", Duration::from_secs(120));
    let cfg = config(3, Duration::from_secs(300));
    let (tx, mut rx) = watch::channel(None);
    let marker = c.out.join("grandchild");
    let stopper = std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while !marker.exists() {
            assert!(
                std::time::Instant::now() < deadline,
                "the agent never started"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        tx.send(Some(143)).unwrap();
        tx
    });
    let got = c.verify_until(&agent, &cfg, &mut rx);
    let _tx = stopper.join().unwrap();
    assert_eq!(got, Some(143));
    assert!(
        c.events("verify.summary").is_empty(),
        "the step is done again on resume"
    );
    assert_eq!(c.events("agent.finished")[0]["interrupted"], true);
    assert_eq!(
        git_status(&c.root),
        Vec::<String>::new(),
        "the half-written repro test is gone"
    );
    assert!(
        !c.file("verify-1.before").exists(),
        "nothing is left for the resumed step to report"
    );
}

#[test]
fn a_step_resumed_after_a_crash_removes_its_stray_repro_test_and_names_the_rest() {
    let c = Crate::new(&["F1"]);
    // An earlier engine took its snapshot, its agent wrote a repro test (no
    // answer recorded: it was killed first), a person wrote a note, and the
    // engine died.
    let tree = loopwatch::code::snapshot_excluding(&c.root, c.settings.pipeline.dir()).unwrap();
    std::fs::write(c.file("verify-1.before"), tree.as_str()).unwrap();
    std::fs::write(c.root.join("tests/left_behind.rs"), "#[test]\nfn x() {}\n").unwrap();
    std::fs::write(c.root.join("NOTES.txt"), "mine\n").unwrap();
    assert_eq!(c.verify("crash", config(3, Duration::from_secs(300))), None);
    let notes = c.notes();
    assert!(
        notes.iter().any(|n| n.contains("stopped before its cleanup")
            && n.contains("its unconfirmed repro tests were put back from its snapshot: tests/left_behind.rs created")
            && n.contains("left as they are: NOTES.txt created")),
        "{notes:?}"
    );
    // The stray test is gone; the person's file is left for them.
    assert_eq!(git_status(&c.root), ["?? NOTES.txt"]);
    assert!(!c.file("verify-1.before").exists());
}
