//! The review stage of `loopwatch run --headless` with scripted agents:
//! every path of the verdict gate, the parse fault, the lanes' concurrency
//! and order, the derived triage, review rounds and their cap, the
//! reviewer's failures, a triage agent, and a clean review going on to
//! GATE 2.

mod support;

use serde_json::Value;
use support::assert_has;
use support::engine::*;
use support::review::*;

fn gate_order(p: &Project) -> Vec<String> {
    p.of_type("gate.finished")
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e["gate"].as_str().unwrap(),
                e["verdict"]["kind"].as_str().unwrap()
            )
        })
        .collect()
}

fn lanes_of(p: &Project, id: &str) -> Vec<Value> {
    p.of_type_where("finding.lane", "finding", id)
}

/// The ids of the `findings.verified` findings, in order.
fn verified_ids(p: &Project) -> Vec<String> {
    verified(p)
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect()
}

/// The findings of the `finding.lane` events in `evs` that reached `state`.
fn lanes_in(evs: &[Value], state: &str) -> Vec<String> {
    evs.iter()
        .filter(|e| e["type"] == "finding.lane" && e["state"] == state)
        .map(|e| e["finding"].as_str().unwrap().to_string())
        .collect()
}

/// The dispatches of the finding verifier's parse step.
fn parses(p: &Project) -> Vec<Value> {
    p.of_type_where("agent.started", "step", "parse")
}

#[test]
fn every_verdict_gate_path_then_a_clean_review_goes_on_to_gate_2() {
    let p = project(&config(4, 3, ""));
    findings(
        &p,
        &[
            ("F1", "minor", "verified"),
            ("F2", "minor", "fenced"),
            ("F3", "minor", "retry-pass"),
            ("F4", "minor", "retry-fail"),
            ("F5", "major", "wrong-id"),
            ("F6", "minor", "crash"),
            ("F7", "🔴", "false"),
            ("F8", "nit", "unverifiable"),
        ],
    );
    let out = run_deciding(&p, go_on);
    p.assert_exit(&out, 0);
    assert_eq!(
        gate_order(&p),
        ["floor MET", "conformity CONFORME", "security PASS"]
    );
    // Results in input order, ids from the findings.
    assert_eq!(
        verified_ids(&p),
        ["F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8"]
    );
    assert_eq!(verdict_of(&p, "F1").0, "VERIFIED");
    // Fenced: accepted, the fence named.
    assert_eq!(verdict_of(&p, "F2").0, "VERIFIED");
    let f2 = lanes_of(&p, "F2");
    assert_eq!(f2.last().unwrap()["normalized"][0], "code fence removed");
    // A retry that then passes: rejected once with its reason, fed back.
    assert_eq!(verdict_of(&p, "F3").0, "VERIFIED");
    assert_eq!(lane_dispatches(&p, "F3"), 2);
    let states: Vec<String> = lanes_of(&p, "F3")
        .iter()
        .map(|e| e["state"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(states, ["queued", "running", "rejected", "running", "done"]);
    assert_eq!(
        lanes_of(&p, "F3")[2]["reason"],
        "no JSON object in the answer"
    );
    assert_eq!(p.violations(), "", "the retry carried the feedback");
    // A retry that fails: UNVERIFIABLE with the exact note.
    assert_eq!(
        verdict_of(&p, "F4"),
        (
            "UNVERIFIABLE".into(),
            "verifier output failed machine validation after retry: VERIFIED without evidence"
                .into()
        )
    );
    assert_eq!(lane_dispatches(&p, "F4"), 2);
    // A wrong echoed id: the finding's id stamped, the echo named.
    assert_eq!(verdict_of(&p, "F5").0, "FALSE");
    assert_eq!(
        lanes_of(&p, "F5").last().unwrap()["normalized"][0],
        "echoed id \"F99\" ignored: the finding's id F5 kept"
    );
    // A crashing lane: two attempts, then the fault note.
    assert_eq!(
        verdict_of(&p, "F6"),
        (
            "UNVERIFIABLE".into(),
            "PIPELINE-FAULT: verifier lane failed after retries — exited with status 7: segfault"
                .into()
        )
    );
    assert_eq!(lane_dispatches(&p, "F6"), 2);
    assert_eq!(lanes_of(&p, "F6").last().unwrap()["state"], "fault");
    assert_eq!(verdict_of(&p, "F8").0, "UNVERIFIABLE");
    // One human gate per UNVERIFIABLE finding, decided before the loop went on.
    let gates: Vec<String> = p
        .of_type("human.requested")
        .iter()
        .map(|g| {
            format!(
                "{} {}",
                g["kind"].as_str().unwrap(),
                g["subject"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        gates,
        [
            "unverifiable-finding F4",
            "unverifiable-finding F6",
            "unverifiable-finding F8"
        ]
    );
    // The derived triage: the findings a person dismissed are rejected,
    // with who dismissed them and why.
    let triage = p.triage(1);
    assert_eq!(triage["schemaVersion"], "3.2.0");
    assert_eq!(p.triage_ids(1, "accepted"), ["F1", "F2", "F3"]);
    assert_eq!(p.triage_ids(1, "rejected"), ["F5", "F7", "F4", "F6", "F8"]);
    assert!(p.triage_ids(1, "deferred").is_empty());
    assert_eq!(triage["accepted"][0]["severity"], "minor");
    assert_eq!(triage["rejected"][1]["severity"], "blocking");
    assert_eq!(triage["rejected"][0]["reason"], "finding verifier: FALSE");
    let dismissed = triage["rejected"][4]["reason"].as_str().unwrap();
    assert!(
        dismissed.starts_with("dismissed by tester")
            && dismissed.ends_with(": decided by the test"),
        "{dismissed}"
    );
    let rec = p.of_type("triage.recorded");
    assert_eq!(rec.len(), 1);
    assert_eq!(rec[0]["counts"]["accepted"], 3);
    // The review ended clean.
    let fin = p.of_type("review.finished");
    assert_eq!(fin.len(), 1);
    assert_eq!(fin[0]["gaps"], 0);
    assert_eq!(fin[0]["results"], "gates/1-finding-verifier.out");
    let results =
        std::fs::read_to_string(p.pipeline().join("gates/1-finding-verifier.out")).unwrap();
    assert!(
        results.starts_with("FINDING_VERIFIER_RESULTS\n"),
        "{results}"
    );
    assert_has(&results, "\"id\":\"F6\",\"verdict\":\"UNVERIFIABLE\"");
    // What each dispatch was given.
    let started = p.of_type("agent.started");
    let parse = started
        .iter()
        .find(|e| e["role"] == "finding-verifier" && e["step"] == "parse")
        .unwrap();
    let env = p.saved(&parse["dispatch"], "finding-verifier", "env");
    assert_has(&env, "LW_STEP=parse\n");
    let lane = started.iter().find(|e| e["finding"] == "F7").unwrap();
    let n = &lane["dispatch"];
    let env = p.saved(n, "finding-verifier", "env");
    assert!(
        env.contains("LW_STEP=verify\n") && env.contains("LW_FINDING_ID=F7\n"),
        "{env}"
    );
    let stdin = p.saved(n, "finding-verifier", "stdin");
    let stdin: Value = serde_json::from_str(stdin.lines().next().unwrap()).unwrap();
    assert_eq!(stdin["finding"]["id"], "F7");
    assert_eq!(stdin["finding"]["claim"], "claim of F7");
    assert!(stdin["project_dir"].as_str().unwrap().ends_with("work"));
    let reviewer = started.iter().find(|e| e["role"] == "reviewer").unwrap();
    let input = p.saved(&reviewer["dispatch"], "reviewer", "stdin");
    assert!(
        input.starts_with("MODE: review\nCONTRACT: docs/contract.md\n"),
        "{input}"
    );
}

#[test]
fn a_parse_that_fails_twice_records_one_fault_verdict_and_goes_to_done() {
    let p = project(&config(4, 3, ""));
    findings(&p, &[("F1", "blocking", "verified")]);
    std::fs::write(p.out.join("parse-bad"), "").unwrap();
    let out = run_deciding(&p, go_on);
    p.assert_exit(&out, 0);
    let parses = parses(&p);
    assert_eq!(parses.len(), 2);
    // The second attempt was told why the first was refused.
    let stdin = p.saved(&parses[1]["dispatch"], "finding-verifier", "stdin");
    assert!(
        stdin.contains(
            "PREVIOUS RESPONSE REJECTED by the verdict gate: no JSON object in the answer."
        ),
        "{stdin}"
    );
    let v = verified(&p);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0]["id"], "pipeline-fault");
    assert_eq!(v[0]["verdict"], "UNVERIFIABLE");
    assert_eq!(
        v[0]["note"],
        "PIPELINE-FAULT: parse failed — findings could not be extracted from the verification request; no finding was verified: attempt 1: no JSON object in the answer; attempt 2: no JSON object in the answer"
    );
    assert!(p.of_type("finding.lane").is_empty(), "no lane ran");
    assert_eq!(lane_dispatches(&p, "F1"), 0);
    assert_eq!(p.of_type("human.requested")[0]["subject"], "pipeline-fault");
    assert_eq!(
        gate_order(&p),
        ["floor MET", "conformity CONFORME", "security PASS"]
    );
}

#[test]
fn lanes_never_exceed_the_limit_and_results_keep_the_input_order() {
    let p = project(&config(3, 3, ""));
    // Earlier findings take longer: lanes finish in reverse.
    let plans: Vec<(String, String)> = (1..=8)
        .map(|i| {
            (
                format!("F{i}"),
                format!("sleep:{:.2}", f64::from(9 - i) * 0.08),
            )
        })
        .collect();
    let list: Vec<(&str, &str, &str)> = plans
        .iter()
        .map(|(id, plan)| (id.as_str(), "minor", plan.as_str()))
        .collect();
    findings(&p, &list);
    let out = run_deciding(&p, go_on);
    p.assert_exit(&out, 0);
    let overlap = max_overlap(&p.out);
    assert!(overlap <= 3, "{overlap} lanes at once, the limit is 3");
    assert!(overlap >= 2, "the lanes ran one at a time");
    let done = lanes_in(&p.events(), "done");
    assert_ne!(
        done.first().map(String::as_str),
        Some("F1"),
        "F1 finished first: {done:?}"
    );
    assert_eq!(
        verified_ids(&p),
        (1..=8).map(|i| format!("F{i}")).collect::<Vec<_>>()
    );
    // Every dispatch number taken once.
    let mut nums: Vec<u64> = p
        .of_type("agent.started")
        .iter()
        .map(|e| e["dispatch"].as_u64().unwrap())
        .collect();
    let len = nums.len();
    nums.sort_unstable();
    nums.dedup();
    assert_eq!(nums.len(), len);
}

#[test]
fn accepted_blocking_findings_go_back_as_review_rounds_until_the_cap() {
    let p = project(&config(4, 2, ""));
    findings(
        &p,
        &[("F1", "blocking", "verified"), ("F2", "minor", "false")],
    );
    let out = run_deciding(&p, |kind| match kind {
        "cap-reached" => "abort",
        k => go_on(k),
    });
    p.assert_exit(&out, 1);
    assert_eq!(
        gate_order(&p),
        [
            "floor MET",
            "conformity CONFORME",
            "floor MET",
            "conformity CONFORME"
        ]
    );
    let fin = p.of_type("review.finished");
    assert_eq!(fin.len(), 2);
    assert_eq!(fin[0]["round"], 1);
    assert_eq!(fin[0]["blocking"][0], "F1");
    assert_eq!(fin[1]["round"], 2);
    // The gaps handed back, under FINDINGS, the new iteration triggered by the review.
    let dev = p.of_type("dev.dispatched");
    assert_eq!(
        dev[0]["inputs"][0],
        "  F1 [blocking] src/total.txt:1 — claim of F1"
    );
    let it2 = p
        .of_type("iteration.started")
        .into_iter()
        .find(|e| e["iteration"] == 2)
        .unwrap();
    assert_eq!(it2["trigger"], "review");
    let inputs = std::fs::read_to_string(p.out.join("developer-inputs")).unwrap();
    assert!(
        inputs.contains(
            "CONTRACT: docs/contract.md\nFINDINGS:\n  F1 [blocking] src/total.txt:1 — claim of F1\n"
        ),
        "{inputs}"
    );
    // The cap gate at the second round.
    let gate = p
        .of_type("human.requested")
        .into_iter()
        .find(|g| g["kind"] == "cap-reached")
        .unwrap();
    assert_eq!(gate["subject"], "review");
    assert_eq!(gate["id"], "hg-2-review-1");
    assert_eq!(p.of_type("run.ended")[0]["status"], "aborted");
}

#[test]
fn a_reviewer_failing_twice_opens_a_structural_gate() {
    let p = project(&config(4, 3, ""));
    findings(&p, &[("F1", "minor", "verified")]);
    std::fs::write(p.out.join("reviewer-fails"), "").unwrap();
    let out = run_deciding(&p, |_| "abort");
    assert_eq!(out.status.code(), Some(1));
    let reviews = p.of_type_where("agent.finished", "role", "reviewer");
    assert_eq!(reviews.len(), 2);
    let gate = &p.of_type("human.requested")[0];
    assert_eq!(gate["kind"], "structural");
    assert_eq!(gate["subject"], "reviewer");
    assert_eq!(gate["id"], "hg-1-reviewer-1");
    assert_eq!(
        gate["summary"],
        "the reviewer dispatch failed twice: exited with status 4: reviewer crashed"
    );
    assert_eq!(
        gate["evidence"]["logLines"],
        serde_json::json!(["  | reviewer crashed"])
    );
}

#[test]
fn a_triage_agent_writes_the_file_and_a_bad_one_falls_back_to_the_derived_triage() {
    let triage_cfg =
        "[agents.triage]\ncommand = \"bash @AGENTS@/review.sh triage\"\ntimeout = \"1m\"\n";
    // A good answer: F1 deferred by the agent's own judgement.
    let p = project(&config(4, 3, triage_cfg));
    findings(&p, &[("F1", "blocking", "verified")]);
    std::fs::write(
        p.out.join("triage-answer.json"),
        r#"```json
{"schemaVersion":"3.2.0","iteration":1,"accepted":[],"deferred":[{"id":"F1","severity":"blocking","reason":"after the release"}],"rejected":[]}
```"#,
    )
    .unwrap();
    p.assert_exit(&run_deciding(&p, go_on), 0);
    let t = p.triage(1);
    assert_eq!(t["deferred"][0]["reason"], "after the release");
    assert_eq!(p.of_type("review.finished")[0]["gaps"], 0);

    // A bad answer (another schema version): derived, with a note saying why.
    let p = project(&config(4, 3, triage_cfg));
    findings(&p, &[("F1", "minor", "verified")]);
    std::fs::write(
        p.out.join("triage-answer.json"),
        r#"{"schemaVersion":"2.0.0","iteration":1,"accepted":[]}"#,
    )
    .unwrap();
    p.assert_exit(&run_deciding(&p, go_on), 0);
    let t = p.triage(1);
    assert_eq!(t["accepted"][0]["id"], "F1");
    let note = p.of_type("note");
    let text = note[0]["text"].as_str().unwrap();
    assert!(
        text.contains("schemaVersion \\\"2.0.0\\\" is not supported")
            || text.contains("schemaVersion \"2.0.0\" is not supported"),
        "{text}"
    );
    assert!(
        text.ends_with("the triage of iteration 1 was derived from the verdicts"),
        "{text}"
    );
}

#[test]
fn a_run_without_a_reviewer_records_no_review() {
    let p = Project::scripted();
    let started = {
        let child = p.spawn_run(true);
        p.wait_for("run.started", |e| {
            e.iter().any(|e| e["type"] == "run.started")
        });
        drop(child);
        p.of_type("run.started")
    };
    assert!(started[0]["run"].get("review").is_none(), "{}", started[0]);
}

#[test]
fn a_kill_9_mid_map_resumes_only_the_unfinished_lanes() {
    let p = project(&config(2, 3, ""));
    let list: Vec<(String, &str)> = (1..=6).map(|i| (format!("F{i}"), "sleep:0.4")).collect();
    let list: Vec<(&str, &str, &str)> = list
        .iter()
        .map(|(id, pl)| (id.as_str(), "minor", *pl))
        .collect();
    findings(&p, &list);
    let child = p.spawn_run(true);
    let evs = p.wait_for("two lanes done and more running", |e| {
        let done = lanes_in(e, "done").len();
        done >= 2 && lanes_in(e, "running").len() > done
    });
    drop(child); // kill -9
    let done_before = lanes_in(&evs, "done");
    assert!(done_before.len() < 6, "every lane finished before the kill");
    let out = run_deciding_resumed(&p);
    p.assert_exit(&out, 0);
    for id in &done_before {
        assert_eq!(lane_dispatches(&p, id), 1, "{id} was verified again");
    }
    for i in 1..=6 {
        let id = format!("F{i}");
        assert!(lane_dispatches(&p, &id) >= 1, "{id} never ran");
    }
    assert_eq!(parses(&p).len(), 1, "the findings were parsed once");
    assert_eq!(
        verified_ids(&p),
        (1..=6).map(|i| format!("F{i}")).collect::<Vec<_>>()
    );
    assert!(
        p.of_type("agent.finished")
            .iter()
            .any(|f| f["interrupted"] == true),
        "a lane was cut by the kill"
    );
    assert_eq!(p.of_type("run.ended")[0]["status"], "complete");
}

/// `loopwatch run --headless` without a contract (the run in progress), to its end.
fn run_deciding_resumed(p: &Project) -> std::process::Output {
    p.cmd().args(["run", "--headless"]).output().expect("run")
}
