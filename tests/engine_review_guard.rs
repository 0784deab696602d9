//! The look before each dispatch of the review stage: usage limits, with
//! the review script of `support::review` answering a usage limit once
//! where a marker file says so (`$TEST_OUT/limit/<key>`, removed when
//! used), and progress over review rounds:
//! - a finding-verifier lane limited with a reset two seconds ahead is
//!   waited out once under `[run] wait_for_limit`, and gets its verdict
//!   (no fault, no UNVERIFIABLE); the lanes under way finish theirs;
//! - without `wait_for_limit` a person is asked (a `structural` gate);
//!   `retry` dispatches only the lanes without a verdict;
//! - a limited reviewer is asked about, not counted as a failure; a
//!   limited triage agent is waited out and its file kept (nothing is
//!   derived from the verdicts);
//! - a developer that changes nothing while the same blocking finding
//!   comes back opens `stagnant` for the review after one review round,
//!   with both rounds' trees.

mod support;

use serde_json::Value;
use support::engine::*;
use support::review::*;

/// Answers a usage limit once when `$out/limit/<key>` exists (`key`: the
/// role, `finding-verifier-<finding>` for a lane): `in2s` resets two
/// seconds ahead. Then the review script.
const LIMITED_ONCE: &str = r#"key=$role
[ "$role" = finding-verifier ] && [ "${LW_STEP:-}" = verify ] && key="$role-$LW_FINDING_ID"
if [ -f "$out/limit/$key" ]; then
  rm -f "$out/limit/$key"
  until=$(date -u -d '+2 seconds' +%Y-%m-%dT%H:%M:%S.%NZ)
  printf '{"limited":true,"until":"%s","message":"usage limit reached, resets soon"}' "$until" >"$LW_USAGE_FILE"
  echo "usage limit reached" >&2
  exit 1
fi
"#;

/// A review project whose agents answer a usage limit once for each key
/// in `limited`.
fn limited_project(wait: bool, concurrency: usize, limited: &[&str]) -> Project {
    let mut text = config(concurrency, 3, "");
    if wait {
        text = text.replacen("[run]\n", "[run]\nwait_for_limit = true\n", 1);
    }
    let p = project(&text);
    p.write_agent("review.sh", &format!("{LIMITED_ONCE}{REVIEW_AGENT}"));
    std::fs::create_dir_all(p.out.join("limit")).unwrap();
    for key in limited {
        std::fs::write(p.out.join("limit").join(key), "in2s").unwrap();
    }
    p
}

/// `loopwatch decide <id> retry`, taken.
fn retry(p: &Project, id: &str) {
    p.decided(&[id, "retry", "--reason", "the limit is over"]);
}

/// The states a finding's lane went through, in order.
fn lane_states(p: &Project, id: &str) -> Vec<String> {
    p.of_type("finding.lane")
        .iter()
        .filter(|e| e["finding"] == id)
        .map(|e| e["state"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Three minor findings: F1 takes a second (under way when F2's limit is
/// answered, with two lanes at once), F2 is limited once, F3 waits.
fn three_findings(p: &Project) {
    findings(
        p,
        &[
            ("F1", "minor", "sleep:1"),
            ("F2", "minor", "verified"),
            ("F3", "minor", "verified"),
        ],
    );
}

/// Every finding VERIFIED, each lane dispatched once but F2 (twice), no
/// fault.
fn assert_verified_after_the_limit(p: &Project) {
    for id in ["F1", "F2", "F3"] {
        let (verdict, note) = verdict_of(p, id);
        assert_eq!(verdict, "VERIFIED", "{id}: {note}");
        assert!(!note.contains("PIPELINE-FAULT"), "{id}: {note}");
    }
    assert_eq!(lane_dispatches(p, "F1"), 1);
    assert_eq!(lane_dispatches(p, "F2"), 2);
    assert_eq!(lane_dispatches(p, "F3"), 1);
    assert_eq!(
        lane_states(p, "F2"),
        ["queued", "running", "limited", "running", "done"]
    );
    let limited: Vec<Value> = p
        .of_type("finding.lane")
        .into_iter()
        .filter(|e| e["state"] == "limited")
        .collect();
    assert_eq!(limited.len(), 1, "{limited:#?}");
    assert!(
        limited[0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("attempt 1 hit a usage limit (resets "),
        "{limited:#?}"
    );
    // The attempt after the limit is numbered on, and says why.
    let again = p
        .of_type("finding.lane")
        .into_iter()
        .filter(|e| e["finding"] == "F2" && e["state"] == "running")
        .nth(1)
        .unwrap();
    assert_eq!(again["attempt"], 2);
    assert_eq!(again["reason"], "dispatched again after a usage limit");
    assert!(
        p.of_type("human.requested")
            .iter()
            .all(|g| g["kind"] != "unverifiable-finding"),
        "{:#?}",
        p.of_type("human.requested")
    );
    assert_eq!(p.of_type("run.ended")[0]["status"], "complete");
}

#[test]
fn a_lane_limited_two_seconds_ahead_is_waited_out_once_and_gets_its_verdict() {
    let p = limited_project(true, 2, &["finding-verifier-F2"]);
    three_findings(&p);
    let out = p.run_to_end();
    p.assert_exit(&out, 0);
    let limited = p.of_type("agent.limited");
    assert_eq!(limited.len(), 1, "{limited:#?}");
    assert_eq!(limited[0]["role"], "finding-verifier");
    let until: jiff::Timestamp = limited[0]["until"].as_str().unwrap().parse().unwrap();
    assert!(p.of_type("human.requested").is_empty());
    assert!(
        p.of_type("note").iter().any(|n| n["text"]
            .as_str()
            .unwrap()
            .starts_with("waiting for the usage limit of finding-verifier #")),
        "{:#?}",
        p.of_type("note")
    );
    // F1 was under way: it finished with its verdict before the wait; F3
    // never started before the reset.
    let f3 = p
        .of_type("agent.started")
        .into_iter()
        .find(|e| e["finding"] == "F3")
        .unwrap();
    let at: jiff::Timestamp = f3["at"].as_str().unwrap().parse().unwrap();
    assert!(at.as_second() >= until.as_second(), "{at} before {until}");
    assert_verified_after_the_limit(&p);
}

#[test]
fn without_wait_a_person_is_asked_and_retry_dispatches_only_the_unfinished_lanes() {
    let p = limited_project(false, 2, &["finding-verifier-F2"]);
    three_findings(&p);
    let engine = p.spawn_run(true);
    let gate = p.wait_for_gate("the usage-limit gate");
    assert_eq!(gate["kind"], "structural", "{gate:#}");
    assert_eq!(gate["subject"], "finding-verifier");
    assert!(gate["gate"].is_null(), "{gate:#}");
    let summary = gate["summary"].as_str().unwrap();
    assert!(
        summary.contains("hit a usage limit") && summary.contains("[run] wait_for_limit is off"),
        "{summary}"
    );
    // Asked only once the lane under way finished with its verdict.
    let evs = p.events();
    let f1_done = evs
        .iter()
        .position(|e| e["type"] == "finding.lane" && e["finding"] == "F1" && e["state"] == "done");
    let asked = evs
        .iter()
        .position(|e| e["type"] == "human.requested")
        .unwrap();
    assert!(f1_done.is_some_and(|d| d < asked), "{evs:#?}");
    assert_eq!(lane_dispatches(&p, "F3"), 0);
    assert!(p.of_type("findings.verified").is_empty());
    retry(&p, gate["id"].as_str().unwrap());
    let out = engine.wait_with_output();
    p.assert_exit(&out, 0);
    assert_verified_after_the_limit(&p);
}

#[test]
fn a_limited_reviewer_is_asked_about_and_not_counted_as_a_failure() {
    let p = limited_project(false, 2, &["reviewer"]);
    findings(&p, &[("F1", "minor", "verified")]);
    let engine = p.spawn_run(true);
    let gate = p.wait_for_gate("the usage-limit gate");
    assert_eq!(gate["kind"], "structural", "{gate:#}");
    assert_eq!(gate["subject"], "reviewer");
    assert!(
        gate["summary"]
            .as_str()
            .unwrap()
            .contains("reviewer #3 hit a usage limit"),
        "{gate:#}"
    );
    retry(&p, gate["id"].as_str().unwrap());
    let out = engine.wait_with_output();
    p.assert_exit(&out, 0);
    // One gate only: the limited dispatch was no failure (no second one
    // in a row), the retry reviewed.
    assert_eq!(p.of_type("human.requested").len(), 1);
    assert_eq!(
        p.of_type_where("agent.started", "role", "reviewer").len(),
        2
    );
    assert_eq!(verdict_of(&p, "F1").0, "VERIFIED");
    assert_eq!(p.of_type("run.ended")[0]["status"], "complete");
}

#[test]
fn the_same_blocking_finding_on_an_unchanged_tree_opens_stagnant_for_the_review() {
    // The developer writes the same file every time: the review's blocking
    // finding comes back on the same tree.
    let p = limited_project(false, 2, &[]);
    findings(&p, &[("F1", "blocking", "verified")]);
    let engine = p.spawn_run(true);
    let gate = p.wait_for_gate("the stagnant gate");
    assert_eq!(gate["subject"], "review");
    assert!(gate["gate"].is_null(), "{gate:#}");
    let (a, b) = assert_stagnant_unchanged(&gate);
    assert_eq!(
        (a["round"].as_u64(), b["round"].as_u64()),
        (Some(1), Some(2))
    );
    assert_eq!(a["rows"][0]["key"], "claim of F1 src/total.txt");
    assert!(
        gate["summary"]
            .as_str()
            .unwrap()
            .starts_with("the review: 1 round(s) without progress"),
        "{gate:#}"
    );
    // The third review round is not spent: two developer dispatches only.
    assert_eq!(
        p.of_type_where("agent.started", "role", "developer").len(),
        2
    );
    let out = p
        .cmd()
        .args([
            "decide",
            gate["id"].as_str().unwrap(),
            "abort",
            "--reason",
            "stuck",
        ])
        .output()
        .expect("decide");
    assert!(out.status.code().is_some(), "{out:?}");
    let out = engine.wait_with_output();
    p.assert_exit(&out, 1);
    assert_eq!(p.of_type("run.ended")[0]["status"], "aborted");
    // The review rounds on the report's convergence line, after GATE 1.
    let report = std::fs::read_to_string(p.pipeline().join("report.md")).unwrap();
    let review = report
        .find("- **REVIEW: 1 → 1 1 gap(s)**")
        .unwrap_or_else(|| panic!("{report}"));
    assert!(
        report.find("- **GATE 1: ").is_some_and(|g| g < review),
        "{report}"
    );
    assert!(
        report.contains("  - round 2 (iter 2): 1 failing · no agent")
            || report.contains("  - round 2 (iter 2): 1 failing · $?"),
        "{report}"
    );
}

#[test]
fn a_limited_triage_agent_is_waited_out_and_its_file_kept_not_derived() {
    let mut text = config(
        2,
        3,
        "[agents.triage]\ncommand = \"bash @AGENTS@/review.sh triage\"\ntimeout = \"1m\"\n",
    );
    text = text.replacen("[run]\n", "[run]\nwait_for_limit = true\n", 1);
    let p = project(&text);
    p.write_agent("review.sh", &format!("{LIMITED_ONCE}{REVIEW_AGENT}"));
    std::fs::create_dir_all(p.out.join("limit")).unwrap();
    std::fs::write(p.out.join("limit").join("triage"), "in2s").unwrap();
    findings(&p, &[("F1", "blocking", "verified")]);
    std::fs::write(
        p.out.join("triage-answer.json"),
        r#"{"schemaVersion":"3.2.0","iteration":1,"accepted":[],"deferred":[{"id":"F1","severity":"blocking","reason":"after the release"}],"rejected":[]}"#,
    )
    .unwrap();
    let out = p.run_to_end();
    p.assert_exit(&out, 0);
    let limited = p.of_type("agent.limited");
    assert_eq!(limited.len(), 1, "{limited:#?}");
    assert_eq!(limited[0]["role"], "triage");
    assert!(p.of_type("human.requested").is_empty());
    assert_eq!(p.of_type_where("agent.started", "role", "triage").len(), 2);
    // The agent's file, once: nothing derived from the verdicts.
    assert_eq!(p.of_type("triage.recorded").len(), 1);
    assert_eq!(p.triage(1)["deferred"][0]["reason"], "after the release");
    assert!(
        p.of_type("note")
            .iter()
            .all(|n| !n["text"].as_str().unwrap().contains("derived")),
        "{:#?}",
        p.of_type("note")
    );
}
