//! Whole runs of `loopwatch run --headless` with scripted agents:
//! GATE 0 UNMET → GATE 1 ECARTS with an out-of-scope file a person approves
//! (from this test, with `loopwatch decide`) → GATE 2 BLOCK → PASS.

mod support;

use serde_json::Value;
use support::engine::*;
use support::{assert_failed, assert_has};

fn gate_order(evs: &[Value]) -> Vec<String> {
    evs.iter()
        .filter(|e| e["type"] == "gate.finished")
        .map(|e| {
            let v = &e["verdict"];
            let mut s = format!(
                "{} {}",
                e["gate"].as_str().unwrap(),
                v["kind"].as_str().unwrap()
            );
            if let Some(n) = v["n"].as_u64() {
                s.push_str(&format!("({n})"));
            }
            s
        })
        .collect()
}

#[test]
fn a_whole_run_dispatches_exactly_the_named_inputs() {
    let p = Project::scripted();
    let child = p.spawn_run(true);
    let gate = p.wait_for_gate("the out-of-scope gate");
    assert_eq!(gate["kind"], "out-of-scope");
    assert_eq!(gate["subject"], "Makefile");
    let id = gate["id"].as_str().unwrap().to_string();
    let d = p.decide(&id, "approve");
    assert!(d.status.success(), "{}", String::from_utf8_lossy(&d.stderr));
    let out = child.wait_with_output();
    p.assert_exit(&out, 0);
    let stdout = String::from_utf8_lossy(&out.stdout);

    let evs = p.events();
    // The gate order, after BLOCK replayed from GATE 0.
    assert_eq!(
        gate_order(&evs),
        [
            "floor UNMET(1)",
            "floor MET",
            "conformity ECARTS(1)",
            "security BLOCK(1)",
            "floor MET",
            "conformity CONFORME",
            "security PASS"
        ]
    );
    // One line per event on stdout, the human gate and the decision among them.
    assert_eq!(stdout.lines().count(), evs.len(), "{stdout}");
    assert_has(&stdout, &format!("human.decided {id} approve by tester"));

    // Exactly the inputs the loop names, in dispatch order.
    let head = p.head();
    let dev1 = "CONTRACT: docs/contract.md\nREQUEST:\n\"The total shows cents.\"\n";
    let dev2 = "CONTRACT: docs/contract.md\nNOT-MET:\n  1   NOT-MET       The total shows cents.\n";
    let verifier = format!(
        "You are the conformity verifier.\n\nCONTRACT: docs/contract.md\nDIFF: {head}\nTEST: true\n"
    );
    let auditor = format!("MODE: gate\nSCOPE: {head}\n");
    let dev3 = "BLOCKING:\n  1. [HIGH] eval-injection — src/total.txt:1 — eval of input — hint: remove it\nCONTRACT: docs/contract.md\n";
    let expected = [
        ("001-developer", dev1.to_string()),
        ("002-developer", dev2.to_string()),
        ("003-verifier", verifier.clone()),
        ("004-auditor", auditor.clone()),
        ("005-developer", dev3.to_string()),
        ("006-verifier", verifier),
        ("007-auditor", auditor),
    ];
    for (name, want) in &expected {
        assert_eq!(&p.input(name), want, "{name}");
        // The generic adapter hands the same text on stdin.
        let n = name[..3].trim_start_matches('0');
        let stdin =
            std::fs::read_to_string(p.out.join(format!("{n}-{}.stdin", &name[4..]))).unwrap();
        assert_eq!(stdin.trim_end(), want.trim_end(), "{name} stdin");
    }
    let env = std::fs::read_to_string(p.out.join("3-verifier.env")).unwrap();
    for want in [
        "LW_CONTRACT=docs/contract.md",
        "LW_ITERATION=2",
        "LW_ROLE=verifier",
        "LW_TEST=true",
        &format!("LW_DIFF={head}"),
    ] {
        assert!(env.lines().any(|l| l == want), "{want} in {env}");
    }
    assert!(
        env.contains("LW_PIPELINE=") && env.contains("LW_INPUT_FILE="),
        "{env}"
    );

    // The journal: one run, every dispatch bracketed, the decision, the end.
    assert_eq!(p.of_type("run.started").len(), 1);
    let started = p.of_type("agent.started");
    let finished = p.of_type("agent.finished");
    assert_eq!(started.len(), 7);
    assert_eq!(finished.len(), 7);
    for (s, f) in started.iter().zip(&finished) {
        assert_eq!(s["dispatch"], f["dispatch"]);
        assert_eq!(f["exitCode"], 0);
        assert_eq!(f["timedOut"], false);
        assert_eq!(f["costUsd"], Value::Null);
        assert!(s["inputSha256"].as_str().unwrap().starts_with("sha256:"));
        assert!(p.pipeline().join(s["log"].as_str().unwrap()).is_file());
        assert_eq!(s["adapter"], "generic");
    }
    let roles: Vec<&str> = started
        .iter()
        .map(|s| s["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "developer",
            "developer",
            "verifier",
            "auditor",
            "developer",
            "verifier",
            "auditor"
        ]
    );
    assert_eq!(started[2]["gate"], "conformity");
    assert_eq!(started[2]["iteration"], 2);
    let ended = p.of_type("run.ended");
    assert_eq!(ended.len(), 1);
    assert_eq!(ended[0]["status"], "complete");
    // The fenced, emphasised CONFORME was read and what was normalised recorded.
    let conforme = evs
        .iter()
        .rfind(|e| e["type"] == "gate.finished" && e["gate"] == "conformity")
        .unwrap();
    let notes = conforme["normalized"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("code fence removed")),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("emphasis")),
        "{notes:?}"
    );

    // The approval tagged the file in the contract's FILE SCOPE.
    let contract = std::fs::read_to_string(p.root.join(CONTRACT)).unwrap();
    let today = loopwatch::contract::today_local();
    assert_has(&contract, &format!("- Makefile [gated {today}]"));
    let decided = p.of_type("human.decided");
    assert_eq!(decided[0]["contractEdit"]["path"], CONTRACT);

    // status --json shows the run's usage and nothing is left running.
    let st = p.cmd().args(["status", "--json"]).output().unwrap();
    let state: Value = serde_json::from_slice(&st.stdout).unwrap();
    assert_eq!(state["usage"]["total"]["dispatches"], 7);
    assert_eq!(state["usage"]["developer"]["dispatches"], 3);
    assert_eq!(state["reviewIterations"][1]["usage"]["dispatches"], 3);
    assert!(p.marked_processes().is_empty());
    assert_eq!(p.violations(), "");
    // Every report format shows each dispatch, with its tokens and cost
    // (unknown for the generic adapter: never shown as zero).
    let report = |format: &str| {
        let r = p
            .cmd()
            .args(["report", "--format", format])
            .output()
            .unwrap();
        String::from_utf8_lossy(&r.stdout).into_owned()
    };
    let md = report("md");
    assert_has(&md, "| 5 | developer | 3 | — | — | — |");
    assert_has(&md, "| 7 | auditor | 3 | — | — | — |");
    assert_has(&md, "cost unknown for 7 dispatches");
    let json: serde_json::Value = serde_json::from_str(&report("json")).unwrap();
    let agents = json["usage"]["agents"].as_array().expect("usage.agents");
    assert_eq!(agents.len(), 7, "{json}");
    assert_eq!(json["usage"]["costUnknown"], 7, "{json}");
    let html = report("html");
    assert_has(&html, "cost unknown for 7 dispatches");
    // The journal still validates against the schemas.
    let v = p
        .cmd()
        .args(["validate"])
        .arg(p.pipeline().join("events.jsonl"))
        .output()
        .unwrap();
    assert!(
        v.status.success(),
        "{}{}",
        String::from_utf8_lossy(&v.stdout),
        String::from_utf8_lossy(&v.stderr)
    );
}

#[test]
fn a_second_engine_is_refused_naming_the_holder() {
    let p = Project::scripted();
    let first =
        Engine::spawn(
            p.cmd()
                .env("AGENT_PAUSE", "30")
                .args(["run", "--headless", CONTRACT]),
        );
    p.wait_for("the first dispatch", |e| {
        e.iter().any(|e| e["type"] == "agent.started")
    });
    let second = p.cmd().args(["run", "--headless"]).output().unwrap();
    assert_failed(&second, 2, &format!("pid {}", first.id()));
    // SIGTERM stops the agents, records them interrupted, and the run resumes.
    signal(first.id(), rustix::process::Signal::TERM).unwrap();
    let st = first.wait();
    assert_eq!(st.code(), Some(143));
    let f = p.of_type("agent.finished");
    assert_eq!(f.len(), 1);
    assert_eq!(f[0]["interrupted"], true);
    assert!(p.marked_processes().is_empty());
    assert!(p.of_type("run.ended").is_empty());
    // The next run resumes: the lock is free (released on exit, not stale),
    // the interrupted dispatch is redone fresh as dispatch 2.
    let again = Engine::spawn(p.cmd().env("AGENT_PAUSE", "30").args(["run", "--headless"]));
    p.wait_for("the fresh dispatch", |e| {
        e.iter().filter(|e| e["type"] == "agent.started").count() == 2
    });
    signal(again.id(), rustix::process::Signal::INT).unwrap();
    let out = again.wait_with_output();
    assert_eq!(out.status.code(), Some(130));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_has(&err, "resuming run contract");
    assert!(!err.contains("stale"), "{err}");
    // Only what this engine appended is printed.
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        printed
            .lines()
            .next()
            .is_some_and(|l| l.contains("agent.started developer #2")),
        "{printed}"
    );
    assert_eq!(p.of_type("run.started").len(), 1);
}

#[test]
fn bad_input_is_refused_before_anything_runs() {
    for (config, want) in [
        (
            SCRIPTED.replace(
                "timeout = \"1m\"\n\n[agents.verifier]",
                "timeout = \"soon\"\n\n[agents.verifier]",
            ),
            "loopwatch.toml:8: agents.developer.timeout: 'soon' is not a duration",
        ),
        (
            SCRIPTED.replace("grace = \"1s\"", "grace = \"1s\"\ncolour = \"red\""),
            "loopwatch.toml:5: run.colour: unknown field `colour`",
        ),
        (
            SCRIPTED.replace("bash @AGENTS@/agent.sh auditor", "no-such-auditor-bin"),
            "agents.auditor.command: command not found: 'no-such-auditor-bin'",
        ),
        (
            SCRIPTED
                .split("[agents.auditor]")
                .next()
                .unwrap()
                .to_string(),
            "agents.auditor: missing required agent",
        ),
    ] {
        let p = Project::new(&config);
        assert_failed(&p.run_to_end(), 2, want);
        assert!(
            !p.pipeline().join("events.jsonl").exists(),
            "nothing may run"
        );
    }
    // No contract and no run in progress.
    let p = Project::scripted();
    let out = p.cmd().args(["run", "--headless"]).output().unwrap();
    assert_failed(&out, 2, "give the CONTRACT");
}
