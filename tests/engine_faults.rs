//! Agents that misbehave: one that hangs with a child process, a developer
//! that fails twice, gate agents that print nothing, binary or 100 MB.

mod support;

use support::engine::*;

/// A developer that always does the work, and a verifier/auditor given by the test.
fn config(verifier: &str, developer: &str) -> String {
    format!(
        r#"[run]
test = "true"
grace = "1s"
log_limit = 65536

[agents.developer]
command = "{developer}"

[agents.verifier]
command = "{verifier}"
timeout = "1s"

[agents.auditor]
command = "true"
"#
    )
}

const GOOD_DEV: &str = "mkdir -p src && echo cents > src/total.txt";

/// Runs until a structural human gate opens; returns its id.
fn until_structural(p: &Project) -> String {
    let evs = p.wait_for("a structural human gate", |e| {
        e.iter()
            .any(|e| e["type"] == "human.requested" && e["kind"] == "structural")
    });
    let g = evs.iter().find(|e| e["type"] == "human.requested").unwrap();
    g["id"].as_str().unwrap().to_string()
}

#[test]
fn a_hanging_agent_and_its_child_are_stopped_then_a_person_decides() {
    let p = Project::new(&config(
        "sleep 987654 & echo started; sleep 987653",
        GOOD_DEV,
    ));
    let child = p.spawn_run(true);
    let id = until_structural(&p);
    assert_eq!(id, "hg-1-conformity-1");
    // Both dispatches timed out; the sleeper it started in the background died too.
    let finished = p.of_type_where("agent.finished", "role", "verifier");
    assert_eq!(finished.len(), 2, "one fresh retry, then a person");
    for f in &finished {
        assert_eq!(f["timedOut"], true, "{f}");
        assert_eq!(f["exitCode"], serde_json::Value::Null);
    }
    let rounds = p.of_type_where("gate.finished", "gate", "conformity");
    assert_eq!(rounds.len(), 2);
    assert!(
        rounds[0]["structural"]
            .as_str()
            .unwrap()
            .starts_with("agent-failed: timed out"),
        "{}",
        rounds[0]
    );
    assert!(p.marked_processes().is_empty(), "the agent's group is gone");
    let log = std::fs::read_to_string(p.pipeline().join("agents/002-verifier.log")).unwrap();
    assert_eq!(log, "started\n");
    p.decide(&id, "take-over");

    let out = child.wait_with_output();
    assert_eq!(
        out.status.code(),
        Some(1),
        "a run that ends stopped exits 1"
    );
    assert_eq!(p.of_type("run.ended")[0]["status"], "stopped");
}

#[test]
fn a_developer_that_fails_twice_waits_for_a_person() {
    let p = Project::new(&config("true", "echo oops >&2; exit 3"));
    let child = p.spawn_run(true);
    let id = until_structural(&p);
    assert_eq!(id, "hg-1-developer-1");
    let f = p.of_type("agent.finished");
    assert_eq!(f.len(), 2);
    assert!(f.iter().all(|f| f["exitCode"] == 3));
    let log = std::fs::read_to_string(p.pipeline().join("agents/001-developer.log")).unwrap();
    assert_eq!(log, "oops\n", "stderr goes to the log");
    let req = &p.of_type("human.requested")[0];
    assert!(
        req["summary"]
            .as_str()
            .unwrap()
            .contains("exited with status 3"),
        "{req}"
    );
    // A person sees how the second dispatch's log ended.
    assert_eq!(req["evidence"]["log"], "agents/002-developer.log");
    assert_eq!(req["evidence"]["logLines"], serde_json::json!(["  | oops"]));
    let request: loopwatch::model::event::HumanRequest =
        serde_json::from_value(req.clone()).expect("a human request");
    let shown = loopwatch::recorder::evidence::lines::evidence_lines(&request);
    assert!(
        shown
            .windows(2)
            .any(|w| w[0] == "the agent's log, as it ended:" && w[1] == "    | oops"),
        "{shown:#?}"
    );
    assert!(
        p.of_type("gate.started").is_empty(),
        "no gate runs on failed work"
    );
    p.decide(&id, "abort");
    let out = child.wait_with_output();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(p.of_type("run.ended")[0]["status"], "aborted");
}

#[test]
fn silent_binary_and_huge_outputs_are_structural_and_bounded() {
    for (verifier, want) in [
        ("true", "no-verdict"),
        (
            "printf 'VERIFY \\\\377\\\\376 garbage\\\\n'",
            "invalid-utf8",
        ),
        (
            "head -c 104857600 /dev/zero | tr '\\\\0' x",
            "agent-failed: the agent printed more than 16 MiB on stdout",
        ),
    ] {
        let p = Project::new(
            &config(verifier, GOOD_DEV).replace("timeout = \"1s\"", "timeout = \"1m\""),
        );
        let child = p.spawn_run(true);
        let id = until_structural(&p);
        let rounds = p.of_type_where("gate.finished", "gate", "conformity");
        assert_eq!(rounds.len(), 2, "{verifier}");
        let st = rounds[0]["structural"].as_str().unwrap();
        assert!(st.starts_with(want), "{verifier}: {st}");
        // The log holds at most its limit and a line saying it was cut.
        let log = std::fs::metadata(p.pipeline().join("agents/002-verifier.log"))
            .unwrap()
            .len();
        assert!(log <= 65536 + 200, "{log}");
        // What the gate shows of the output is bounded too.
        let out = rounds[0]["output"].as_str().unwrap();
        let saved = std::fs::metadata(p.pipeline().join(out)).unwrap().len();
        assert!(saved <= 16 * 1024 * 1024, "{saved}");
        p.decide(&id, "abort");
        assert_eq!(child.wait_with_output().status.code(), Some(1));
    }
}
