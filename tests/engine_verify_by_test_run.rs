//! Verify-by-test inside whole runs of `loopwatch run --headless` on a real
//! cargo crate: the review finds a blocking finding, verify-by-test proves
//! it with a red test, the test is handed to the developer, and loopwatch
//! reruns it after the developer's work — green, or back as a gap when the
//! developer weakened it.

mod support;

use serde_json::Value;
use support::engine::*;

/// Every role. The crate's bug: `total_cents` drops the tip. The reviewer
/// reports it while it is there; the developer fixes it only when
/// `$TEST_OUT/weaken-once` is absent (else it deletes the red test's
/// assertion the first time it is handed one, and removes the flag), and
/// puts a weakened test back when told; handed F1 without a red test, it
/// fixes it too. `$TEST_OUT/limit-once`: the verify-by-test agent's first
/// dispatch writes files, then answers a usage limit. `$TEST_OUT/many`: four blocking findings, and repro tests
/// for three (one fails, one passes, one does not build); `$TEST_OUT/sleep`:
/// the verify-by-test agent sleeps past any step timeout.
///
/// The script follows the shared `AGENT_PROLOGUE`.
const AGENT: &str = r#"buggy() { grep -q 'tip / 100' src/lib.rs; }
findings='[{"id":"F1","severity":"blocking","path":"src/lib.rs","lines":"3","claim":"total_cents drops the tip"}]'
if [ -f "$out/many" ]; then
  findings='[{"id":"F1","severity":"blocking","path":"src/lib.rs","lines":"3","claim":"total_cents drops the tip"},{"id":"F2","severity":"blocking","path":"src/lib.rs","lines":"3","claim":"total_cents of no tip is wrong"},{"id":"F3","severity":"blocking","path":"src/lib.rs","lines":"2","claim":"there is no way to round"},{"id":"F4","severity":"blocking","path":"src/lib.rs","lines":"1","claim":"the doc comment is vague"}]'
fi
case $role in
  developer)
    echo "total: 3.75 cents" >src/total.txt
    case $input in
      *"already exists at"*)
        if [ -f "$out/weaken-once" ]; then
          rm "$out/weaken-once"
          for f in tests/repro_*.rs; do sed -i '/assert/d' "$f"; done
        else
          sed -i 's|price + tip / 100|price + tip|' src/lib.rs
          case $input in *"weakened after your work"*)
            printf '#[test]\nfn f1_total_keeps_the_tip() {\n    assert_eq!(repro::total_cents(100, 50), 150);\n}\n' >tests/repro_f1_i1.rs ;;
          esac
        fi ;;
      *"F1 [blocking]"*)
        # Handed the finding without a red test (verify-by-test timed out).
        sed -i 's|price + tip / 100|price + tip|' src/lib.rs ;;
    esac
    echo done
    ;;
  verifier) conforme ;;
  auditor) pass ;;
  reviewer)
    if buggy; then echo "REVIEW: one blocking finding"; echo "$findings"; else echo "REVIEW: clean"; echo "[]"; fi
    ;;
  finding-verifier)
    case $LW_STEP in
      parse) if buggy; then list=$findings; else list='[]'; fi
        printf '{"findings_list": %s, "project_dir": "%s"}\n' "$list" "$PWD" ;;
      verify) printf '{"id":"%s","verdict":"VERIFIED","evidence":"src/lib.rs:3: price + tip / 100","note":""}\n' "$LW_FINDING_ID" ;;
    esac
    ;;
  verify-by-test)
    if [ -f "$out/sleep" ]; then sleep 60; fi
    file="tests/repro_f1_i$LW_ITERATION.rs"
    mkdir -p tests
    printf '#[test]\nfn f1_total_keeps_the_tip() {\n    assert_eq!(repro::total_cents(100, 50), 150);\n}\n' >"$file"
    if [ -f "$out/limit-once" ]; then
      # A half-written attempt, then a usage limit two seconds ahead.
      rm "$out/limit-once"
      echo "half" >tests/half_written.rs
      until=$(date -u -d '+2 seconds' +%Y-%m-%dT%H:%M:%S.%NZ)
      printf '{"limited":true,"until":"%s","message":"usage limit reached"}' "$until" >"$LW_USAGE_FILE"
      exit 1
    fi
    if [ -f "$out/many" ]; then
      # F2's test passes (not reproduced); F3's does not build (inconclusive).
      printf '#[test]\nfn f2_no_tip() {\n    assert_eq!(repro::total_cents(100, 0), 100);\n}\n' >tests/repro_f2.rs
      printf '#[test]\nfn f3_rounds() {\n    assert_eq!(repro::round_cents(101), 100);\n}\n' >tests/repro_f3.rs
      printf '[{"finding":"F1","file":"%s","testRef":"%s::f1_total_keeps_the_tip"},{"finding":"F2","file":"tests/repro_f2.rs","testRef":"tests/repro_f2.rs::f2_no_tip"},{"finding":"F3","file":"tests/repro_f3.rs","testRef":"tests/repro_f3.rs::f3_rounds"}]\n' "$file" "$file"
    else
      printf '```json\n[{"finding":"F1","file":"%s","testRef":"%s::f1_total_keeps_the_tip"}]\n```\n' "$file" "$file"
    fi
    ;;
esac
"#;

const LIB: &str = "/// A price plus a tip, in cents.\npub fn total_cents(price: u32, tip: u32) -> u32 {\n    price + tip / 100\n}\n";

/// The scripted project with a committed cargo crate beside the contract.
fn project() -> Project {
    let roles = [REVIEW_ROLES.as_slice(), &["verify-by-test"]].concat();
    let config = format!(
        "[run]\ntest = \"cargo test\"\nmax_rounds = 3\ngrace = \"1s\"\n\n\
         [verify_by_test]\nenabled = true\nmax_findings = 3\nstep_timeout = \"5m\"\n\n{}",
        agent_tables("vbt.sh", &roles)
    );
    let p = Project::new(&config);
    p.write_agent("vbt.sh", AGENT);
    write_crate(&p.root, LIB);
    commit_all(&p.root, "crate");
    p
}

/// Adds `line` to the project's `[run]` table.
fn run_key(p: &Project, line: &str) {
    let config = p.root.join("loopwatch.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    let text = text.replacen("[run]\n", &format!("[run]\n{line}\n"), 1);
    std::fs::write(&config, text).unwrap();
}

fn run(p: &Project) -> std::process::Output {
    let out = p.run_to_end();
    p.assert_exit(&out, 0);
    out
}

/// The stdin of every developer dispatch, in order.
fn developer_inputs(p: &Project) -> Vec<String> {
    let mut files: Vec<(u32, String)> = std::fs::read_dir(&p.out)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let n = name.strip_suffix("-developer.stdin")?.parse().ok()?;
            Some((n, std::fs::read_to_string(e.path()).unwrap()))
        })
        .collect();
    files.sort();
    files.into_iter().map(|(_, t)| t).collect()
}

#[test]
fn a_red_test_is_handed_to_the_developer_and_proven_green() {
    let p = project();
    run(&p);
    let results = p.of_type("verify.result");
    assert_eq!(results.len(), 1, "{results:#?}");
    assert_eq!(results[0]["result"], "confirmed");
    let test_ref = "tests/repro_f1_i1.rs::f1_total_keeps_the_tip";
    assert_eq!(results[0]["testRef"], test_ref);
    let summary = &p.of_type("verify.summary")[0];
    assert_eq!(summary["redTests"][0]["testRef"], test_ref);

    // Handed over, word for word, in the developer's next input.
    let handed = format!(
        "a failing repro test already exists at {test_ref}; make it green; do not delete or weaken it"
    );
    let dev = p.of_type("dev.dispatched");
    assert!(
        dev[0]["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l.as_str().unwrap().contains(&handed)),
        "{dev:#?}"
    );
    let inputs = developer_inputs(&p);
    assert_eq!(inputs.len(), 2, "{inputs:#?}");
    assert!(inputs[1].contains(&handed), "{}", inputs[1]);

    // Rerun by loopwatch after that developer: green, from its own log.
    let greens = p.of_type("verify.green");
    assert_eq!(greens.len(), 1, "{greens:#?}");
    assert_eq!(greens[0]["iteration"], 2);
    assert_eq!(greens[0]["result"], "green", "{}", greens[0]);
    let log = std::fs::read_to_string(p.pipeline().join("green-2-F1.test.log")).unwrap();
    assert!(log.contains("test f1_total_keeps_the_tip ... ok"), "{log}");

    // The red test stays in the worktree; the rest is the developer's work
    // and GATE 0's evidence in the contract.
    assert_eq!(git_status(&p.root), LEFT_BEHIND);
    let ended = p.of_type("run.ended");
    assert_eq!(ended[0]["status"], "complete");
}

#[test]
fn a_weakened_red_test_goes_back_to_the_developer_as_a_gap() {
    let p = project();
    // Weakening the red test leaves the cited code as it was, so the review
    // round makes no progress: one such round is let through here
    // (`stagnant_after = 2`), so the developer gets the gap itself.
    run_key(&p, "stagnant_after = 2");
    std::fs::write(p.out.join("weaken-once"), "").unwrap();
    run(&p);
    let greens = p.of_type("verify.green");
    let results: Vec<(&Value, &Value)> = greens
        .iter()
        .map(|g| (&g["iteration"], &g["result"]))
        .collect();
    // Iteration 2: the developer dropped the assertion; iteration 3: both
    // red tests (the weakened one handed over again and put back, and
    // iteration 2's new one) pass against the fixed code.
    assert_eq!(
        results,
        [
            (&Value::from(2), &Value::from("weakened")),
            (&Value::from(3), &Value::from("green")),
            (&Value::from(3), &Value::from("green")),
        ],
        "{greens:#?}"
    );
    assert!(
        greens[0]["note"]
            .as_str()
            .unwrap()
            .contains("ASSERT_DROP tests/repro_f1_i1.rs"),
        "{}",
        greens[0]
    );
    let inputs = developer_inputs(&p);
    assert_eq!(inputs.len(), 3, "{inputs:#?}");
    assert!(
        inputs[2].contains(
            "red test tests/repro_f1_i1.rs::f1_total_keeps_the_tip of finding F1 is weakened after your work"
        ),
        "{}",
        inputs[2]
    );
    assert_eq!(p.of_type("run.ended")[0]["status"], "complete");
}

#[test]
fn a_limited_verify_by_test_agent_is_waited_out_and_its_files_put_back() {
    let p = project();
    run_key(&p, "wait_for_limit = true");
    std::fs::write(p.out.join("limit-once"), "").unwrap();
    run(&p);
    let limited = p.of_type("agent.limited");
    assert_eq!(limited.len(), 1, "{limited:#?}");
    assert_eq!(limited[0]["role"], "verify-by-test");
    // Waited out, not asked, not a failure: dispatched again once, and its
    // one result is the second dispatch's.
    assert!(p.of_type("human.requested").is_empty());
    assert_eq!(
        p.of_type_where("agent.started", "role", "verify-by-test")
            .len(),
        2
    );
    let results = p.of_type("verify.result");
    assert_eq!(results.len(), 1, "{results:#?}");
    assert_eq!(results[0]["result"], "confirmed");
    assert_eq!(p.of_type("verify.summary").len(), 1);
    // What the limited attempt wrote was put back before the next one.
    assert!(!p.root.join("tests/half_written.rs").exists());
    assert_eq!(p.of_type("run.ended")[0]["status"], "complete");
}

/// `git status` of a run whose red test of F1 was proven green.
const LEFT_BEHIND: [&str; 4] = [
    " M docs/contract.md",
    " M src/lib.rs",
    "?? src/total.txt",
    "?? tests/repro_f1_i1.rs",
];

#[test]
fn the_three_outcomes_and_the_cap_leave_only_the_confirmed_test_behind() {
    let p = project();
    std::fs::write(p.out.join("many"), "").unwrap();
    run(&p);
    let results: Vec<(String, String)> = p
        .of_type("verify.result")
        .iter()
        .filter(|r| r["iteration"] == 1)
        .map(|r| {
            (
                r["finding"].as_str().unwrap().to_string(),
                r["result"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        results,
        [
            ("F1".to_string(), "confirmed".to_string()),
            ("F2".to_string(), "not-reproduced".to_string()),
            ("F3".to_string(), "inconclusive".to_string()),
            ("F4".to_string(), "cap-exceeded".to_string()),
        ],
        "{:#?}",
        p.of_type("verify.result")
    );
    let summary = &p.of_type("verify.summary")[0];
    for (k, n) in [
        ("attempted", 3),
        ("confirmed", 1),
        ("downgraded", 1),
        ("inconclusive", 1),
        ("capExceeded", 1),
    ] {
        assert_eq!(summary[k], n, "{k}: {summary}");
    }
    assert_eq!(summary["timedOut"], false);
    // The invariant: of the agent's three files only the confirmed test is
    // left; the triage file says F2 moved to deferred.
    assert!(!p.root.join("tests/repro_f2.rs").exists());
    assert!(!p.root.join("tests/repro_f3.rs").exists());
    assert_eq!(git_status(&p.root), LEFT_BEHIND);
    assert_eq!(p.triage_ids(1, "accepted"), ["F1", "F3", "F4"]);
    assert_eq!(p.triage_ids(1, "deferred"), ["F2"]);
    // What stays accepted goes back to the developer, F1 with its red test.
    let inputs = developer_inputs(&p);
    assert!(inputs.len() >= 2, "{inputs:#?}");
    for needle in [
        "F1 [blocking]",
        "already exists at tests/repro_f1_i1.rs::f1_total_keeps_the_tip",
        "F3 [blocking]",
        "F4 [blocking]",
    ] {
        assert!(inputs[1].contains(needle), "{needle}: {}", inputs[1]);
    }
    assert!(!inputs[1].contains("F2 [blocking]"), "{}", inputs[1]);
    assert_eq!(p.of_type("run.ended")[0]["status"], "complete");
}

#[test]
fn a_step_past_its_timeout_is_stopped_and_the_loop_goes_on() {
    let p = project();
    std::fs::write(p.out.join("sleep"), "").unwrap();
    let file = p.root.join("loopwatch.toml");
    let config = std::fs::read_to_string(&file).unwrap();
    assert!(config.contains("step_timeout = \"5m\""));
    std::fs::write(
        &file,
        config.replace("step_timeout = \"5m\"", "step_timeout = \"2s\""),
    )
    .unwrap();
    run(&p);
    let summary = &p.of_type("verify.summary")[0];
    assert_eq!(summary["timedOut"], true, "{summary}");
    assert_eq!(summary["confirmed"], 0, "{summary}");
    let r = &p.of_type("verify.result");
    assert!(
        r.iter().all(|r| r["result"] != "confirmed"),
        "the finding keeps its judgment: {r:#?}"
    );
    let notes: Vec<String> = p
        .of_type("note")
        .iter()
        .map(|n| n["text"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("verify-by-test-timeout")),
        "{notes:#?}"
    );
    // The agent's process group is gone, and the run went on to its end.
    assert!(p.marked_processes().is_empty());
    assert!(!p.root.join("tests/repro_f1_i1.rs").exists());
    assert!(!p.of_type("run.ended").is_empty());
}
