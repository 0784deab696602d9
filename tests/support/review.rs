//! Scripted agents for the review stage of `loopwatch run --headless`: one
//! script plays every role. The developer writes the total with cents,
//! the verifier says CONFORME, the auditor PASS; the reviewer prints a
//! review; the finding verifier's parse step answers the findings list in
//! `$TEST_OUT/findings.json`, and each lane does what `$TEST_OUT/plan/<id>`
//! says (see `PLAN_WORDS`). Every lane notes its start and end time.

#![allow(dead_code)]

use std::path::Path;

use super::engine::{Project, REVIEW_ROLES, agent_tables, poll};
use serde_json::{Value, json};

/// The review script, after the shared `AGENT_PROLOGUE`.
pub const REVIEW_AGENT: &str = r#"case $role in
  developer)
    mkdir -p src
    echo "total: 3.75 cents" >src/total.txt
    printf '%s\n' "$input" >>"$out/developer-inputs"
    echo done
    ;;
  verifier) conforme ;;
  auditor) pass ;;
  reviewer)
    if [ -f "$out/reviewer-fails" ]; then echo "reviewer crashed" >&2; exit 4; fi
    echo "REVIEW of $LW_DIFF: see the findings below."
    cat "$out/findings.json"
    ;;
  finding-verifier)
    case $LW_STEP in
      parse)
        if [ -f "$out/parse-bad" ]; then echo "I could not find any findings, sorry."; exit 0; fi
        printf 'Here are the findings:\n```json\n{"findings_list": %s, "project_dir": "%s"}\n```\n' "$(cat "$out/findings.json")" "$PWD"
        ;;
      verify)
        id=$LW_FINDING_ID
        k=$(( $(cat "$out/count-$id" 2>/dev/null || echo 0) + 1 ))
        echo $k >"$out/count-$id"
        echo "start $id $(date +%s%N)" >>"$out/times"
        plan=$(cat "$out/plan/$id" 2>/dev/null || echo verified)
        case $plan in sleep:*) sleep "${plan#sleep:}"; plan=verified ;; esac
        [ -n "${LANE_PAUSE:-}" ] && sleep "$LANE_PAUSE"
        echo "end $id $(date +%s%N)" >>"$out/times"
        case $plan in
          verified) printf '{"id":"%s","verdict":"VERIFIED","evidence":"src/total.txt:1: total: 3.75 cents","note":""}\n' "$id" ;;
          false) printf '{"id":"%s","verdict":"FALSE","evidence":"src/total.txt has no such line","note":""}\n' "$id" ;;
          unverifiable) printf '{"id":"%s","verdict":"UNVERIFIABLE","evidence":"","note":"needs a running server"}\n' "$id" ;;
          fenced) printf 'My verdict:\n```json\n{"id":"%s","verdict":"VERIFIED","evidence":"src/total.txt:1","note":""}\n```\nThat is all.\n' "$id" ;;
          retry-pass)
            if [ "$k" = 1 ]; then echo "It is verified, trust me."; else
              case $input in *"PREVIOUS RESPONSE REJECTED by the verdict gate"*) ;; *) echo "no feedback" >>"$out/violations" ;; esac
              printf '{"id":"%s","verdict":"VERIFIED","evidence":"src/total.txt:1","note":""}\n' "$id"
            fi ;;
          retry-fail) printf '{"id":"%s","verdict":"VERIFIED","note":""}\n' "$id" ;;
          wrong-id) printf '{"id":"F99","verdict":"FALSE","evidence":"nothing there","note":""}\n' ;;
          crash) echo "segfault" >&2; exit 7 ;;
          crash-once) if [ "$k" = 1 ]; then exit 7; fi
            printf '{"id":"%s","verdict":"FALSE","evidence":"nothing there","note":""}\n' "$id" ;;
        esac
        ;;
    esac
    ;;
  triage)
    cat "$out/triage-answer.json"
    ;;
esac
"#;

/// The words a lane's plan file may hold.
pub const PLAN_WORDS: [&str; 10] = [
    "verified",
    "false",
    "unverifiable",
    "fenced",
    "retry-pass",
    "retry-fail",
    "wrong-id",
    "crash",
    "crash-once",
    "sleep:<seconds>",
];

/// A `loopwatch.toml` with every role played by the review script.
pub fn config(concurrency: usize, max_rounds: u32, extra: &str) -> String {
    format!(
        "[run]\ntest = \"true\"\nmax_rounds = {max_rounds}\ngrace = \"1s\"\n\n{}max_concurrency = {concurrency}\n\n{extra}",
        agent_tables("review.sh", &REVIEW_ROLES)
    )
}

/// A project whose agents are the review script.
pub fn project(config_text: &str) -> Project {
    let p = Project::new(config_text);
    p.write_agent("review.sh", REVIEW_AGENT);
    std::fs::create_dir_all(p.out.join("plan")).unwrap();
    p
}

/// Writes the review's findings: `(id, severity, plan)`.
pub fn findings(p: &Project, list: &[(&str, &str, &str)]) {
    let items: Vec<Value> = list
        .iter()
        .enumerate()
        .map(|(i, (id, sev, _))| {
            json!({"id": id, "severity": sev, "path": "src/total.txt", "lines": format!("{}", i + 1), "claim": format!("claim of {id}")})
        })
        .collect();
    std::fs::write(p.out.join("findings.json"), Value::from(items).to_string()).unwrap();
    for (id, _, plan) in list {
        std::fs::write(p.out.join("plan").join(id), plan).unwrap();
    }
}

/// The `findings.verified` findings of the run, in order.
pub fn verified(p: &Project) -> Vec<Value> {
    p.of_type("findings.verified")
        .into_iter()
        .flat_map(|e| e["findings"].as_array().cloned().unwrap_or_default())
        .collect()
}

/// The verdict and note of finding `id`.
pub fn verdict_of(p: &Project, id: &str) -> (String, String) {
    let f = verified(p)
        .into_iter()
        .find(|f| f["id"] == id)
        .unwrap_or_else(|| panic!("no verdict for {id}"));
    (
        f["verdict"].as_str().unwrap_or_default().to_string(),
        f["note"].as_str().unwrap_or_default().to_string(),
    )
}

/// Dispatches of the finding verifier for finding `id`.
pub fn lane_dispatches(p: &Project, id: &str) -> usize {
    p.of_type("agent.started")
        .iter()
        .filter(|e| e["role"] == "finding-verifier" && e["finding"] == id)
        .count()
}

/// The option that lets the loop go on at a gate of `kind` where one does
/// (`dismiss` for a finding, `accept` for a criterion).
pub fn go_on(kind: &str) -> &'static str {
    match kind {
        "unverifiable-finding" => "dismiss",
        _ => "accept",
    }
}

/// Runs to the end, deciding every human gate with `decide(kind)`.
pub fn run_deciding(p: &Project, decide: impl Fn(&str) -> &'static str) -> std::process::Output {
    let child = p.spawn_run(true);
    let mut evs = Vec::new();
    let ended = poll(std::time::Duration::from_secs(120), || {
        // The open gates first, then the journal: every gate listed has its
        // request in what is read next (the other order races a new gate).
        let open = p.open_gates();
        evs = p.events();
        if evs.iter().any(|e| e["type"] == "run.ended") {
            return true;
        }
        for id in open {
            let kind = evs
                .iter()
                .find(|e| e["type"] == "human.requested" && e["id"] == id.as_str())
                .map(|e| e["kind"].as_str().unwrap_or_default().to_string())
                .unwrap_or_default();
            p.decided(&[&id, decide(&kind), "--reason", "decided by the test"]);
        }
        false
    });
    assert!(ended, "the run did not end: {evs:#?}");
    child.wait_with_output()
}

/// Max number of lanes running at once, from the agents' time notes.
pub fn max_overlap(out: &Path) -> usize {
    let text = std::fs::read_to_string(out.join("times")).unwrap_or_default();
    let mut marks: Vec<(u128, i32)> = text
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let kind = w.next()?;
            let _id = w.next()?;
            let t: u128 = w.next()?.parse().ok()?;
            Some((t, if kind == "start" { 1 } else { -1 }))
        })
        .collect();
    // An end sorts before a start at the same instant.
    marks.sort();
    let (mut cur, mut max) = (0i32, 0i32);
    for (_, d) in marks {
        cur += d;
        max = max.max(cur);
    }
    max as usize
}
