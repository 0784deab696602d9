//! The finding ledger and the note to the developer, through `loopwatch
//! run --headless` with scripted agents: a review of three rounds whose
//! reviewer raises again, in other words, a finding the finding verifier
//! found FALSE and one a person dismissed. Neither is verified, asked or
//! handed to the developer again; the person's note reaches the next
//! developer dispatch under its own heading, kept as written in the
//! journal and scrubbed in the report.

mod support;

use serde_json::Value;
use support::assert_has;
use support::engine::*;
use support::review::config;

/// Every role in one script: the reviewer prints `$out/findings-<k>.json`
/// at its k-th review, the parse step answers the same list, each lane
/// does what `$out/plan-<k>/<id>` says (verified when absent) and notes
/// `<k> <id>` in `$out/verified`.
const LEDGER_AGENT: &str = r#"case $role in
  developer)
    mkdir -p src
    # Each iteration's work changes the tree (an unchanged one is no progress).
    printf 'total: 3.75 cents\n# iteration %s\n' "$LW_ITERATION" >src/total.txt
    echo done
    ;;
  verifier) conforme ;;
  auditor) pass ;;
  reviewer)
    k=$(( $(cat "$out/reviews" 2>/dev/null || echo 0) + 1 ))
    echo $k >"$out/reviews"
    # A test may hold a round back until it says go (`$out/hold-<k>`).
    while [ -f "$out/hold-$k" ]; do sleep 0.05; done
    echo "REVIEW round $k of $LW_DIFF:"
    cat "$out/findings-$k.json"
    ;;
  finding-verifier)
    k=$(cat "$out/reviews")
    case $LW_STEP in
      parse)
        printf '{"findings_list": %s, "project_dir": "%s"}\n' "$(cat "$out/findings-$k.json")" "$PWD"
        ;;
      verify)
        id=$LW_FINDING_ID
        echo "$k $id" >>"$out/verified"
        plan=$(cat "$out/plan-$k/$id" 2>/dev/null || echo verified)
        case $plan in
          verified) printf '{"id":"%s","verdict":"VERIFIED","evidence":"src/total.txt:1: total: 3.75 cents","note":""}\n' "$id" ;;
          false) printf '{"id":"%s","verdict":"FALSE","evidence":"src/export/csv.rs:22: if rows.is_empty() { return header_only() }","note":""}\n' "$id" ;;
          unverifiable) printf '{"id":"%s","verdict":"UNVERIFIABLE","evidence":"","note":"needs a million invoices to measure"}\n' "$id" ;;
        esac
        ;;
    esac
    ;;
esac
"#;

const FIXTURES: [&str; 3] = [
    include_str!("fixtures/ledger/review-1.json"),
    include_str!("fixtures/ledger/review-2.json"),
    include_str!("fixtures/ledger/review-3.json"),
];

/// Round `k`'s findings as the reviewer wrote them (the ledger fixtures),
/// each with the severity given, saved where the reviewer reads them
/// (`$TEST_OUT/findings-<k>.json`).
fn review(p: &Project, k: usize, severities: &[(&str, &str)]) -> Vec<Value> {
    let v: Value = serde_json::from_str(FIXTURES[k - 1]).unwrap();
    let mut list = v["findings_list"].as_array().unwrap().clone();
    for f in &mut list {
        if let Some((_, s)) = severities.iter().find(|(id, _)| f["id"] == *id) {
            f["severity"] = Value::from(*s);
        }
    }
    let path = p.out.join(format!("findings-{k}.json"));
    std::fs::write(path, Value::from(list.clone()).to_string()).unwrap();
    list
}

fn claim(list: &[Value], id: &str) -> String {
    list.iter().find(|f| f["id"] == id).unwrap()["claim"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The `finding.lane` events of iteration `n`'s finding `id`.
fn lanes(p: &Project, n: u32, id: &str) -> Vec<Value> {
    p.of_type("finding.lane")
        .into_iter()
        .filter(|e| e["iteration"] == n && e["finding"] == id)
        .collect()
}

/// Each developer dispatch's input file, in dispatch order.
fn developer_inputs(p: &Project) -> Vec<(u64, String)> {
    p.of_type_where("agent.started", "role", "developer")
        .iter()
        .map(|e| {
            let rel = e["input"].as_str().expect("an input file");
            let text = std::fs::read_to_string(p.pipeline().join(rel))
                .unwrap_or_else(|err| panic!("{rel}: {err}"));
            (e["iteration"].as_u64().unwrap(), text)
        })
        .collect()
}

const NOTE: &str = "Keep the awk path: a million invoices never reaches this exporter.\u{1b}[31m token=s3cr3t-t0ken-9f8e7d";

#[test]
fn a_dismissed_and_a_false_finding_raised_again_in_three_rounds_never_reach_the_developer() {
    let p = Project::new(&config(4, 3, ""));
    p.write_agent("review.sh", LEDGER_AGENT);
    // Round 1: F1 goes to the developer, F2 is FALSE, F4 UNVERIFIABLE
    // (a person dismisses it, with a note), F3 and F5 are accepted and
    // not sent back.
    let r1 = review(
        &p,
        1,
        &[("F1", "blocking"), ("F2", "blocking"), ("F4", "blocking")],
    );
    // Round 2: F1 is round 1's F2 and F2 round 1's F4, in other words and
    // blocking: verified, either would go to the developer. F4 is new.
    let r2 = review(
        &p,
        2,
        &[
            ("F1", "blocking"),
            ("F2", "blocking"),
            ("F3", "minor"),
            ("F4", "blocking"),
            ("F5", "minor"),
        ],
    );
    // Round 3: F1 and F2 are the dismissed and the FALSE finding once more.
    let r3 = review(
        &p,
        3,
        &[
            ("F1", "blocking"),
            ("F2", "blocking"),
            ("F3", "minor"),
            ("F4", "minor"),
            ("F5", "minor"),
        ],
    );
    std::fs::create_dir_all(p.out.join("plan-1")).unwrap();
    std::fs::write(p.out.join("plan-1/F2"), "false").unwrap();
    std::fs::write(p.out.join("plan-1/F4"), "unverifiable").unwrap();

    let child = p.spawn_run(true);
    let gate = p.wait_for_gate("the UNVERIFIABLE finding's gate");
    assert_eq!(gate["subject"], "F4");
    let id = gate["id"].as_str().unwrap().to_string();
    p.decided(&[
        &id,
        "dismiss",
        "--reason",
        "not a problem here",
        "--note",
        NOTE,
    ]);
    // The run ends on its own (a deadline, not a hang, if it waits on a person).
    p.wait_for("the end of the run", |e| {
        e.iter().any(|e| e["type"] == "run.ended")
    });
    let out = child.wait_with_output();
    p.assert_exit(&out, 0);
    assert_eq!(p.of_type("run.ended")[0]["status"], "complete");

    // Three review rounds: the first two sent work back, the third was clean.
    let fin = p.of_type("review.finished");
    let rounds: Vec<(Value, Value, Value)> = fin
        .iter()
        .map(|f| (f["round"].clone(), f["blocking"].clone(), f["gaps"].clone()))
        .collect();
    assert_eq!(
        rounds,
        [
            (1.into(), serde_json::json!(["F1"]), 1.into()),
            (2.into(), serde_json::json!(["F4"]), 1.into()),
            (3.into(), serde_json::json!([]), 0.into()),
        ]
    );

    // Raised again, with the earlier outcome; no lane dispatched for them.
    for (n, id, outcome, earlier) in [
        (2, "F1", "false", "F2"),
        (2, "F2", "dismissed", "F4"),
        (3, "F1", "dismissed", "F4"),
        (3, "F2", "false", "F2"),
    ] {
        let l = lanes(&p, n, id);
        assert_eq!(l.len(), 1, "{n}:{id}: one lane event, {l:#?}");
        assert_eq!(l[0]["state"], "raised-again", "{n}:{id}");
        assert_eq!(l[0]["raisedAgain"]["outcome"], outcome, "{n}:{id}");
        assert_eq!(l[0]["raisedAgain"]["iteration"], 1, "{n}:{id}");
        assert_eq!(l[0]["raisedAgain"]["finding"], earlier, "{n}:{id}");
        let dispatched = p
            .of_type("agent.started")
            .iter()
            .filter(|e| {
                e["role"] == "finding-verifier" && e["iteration"] == n && e["finding"] == id
            })
            .count();
        assert_eq!(dispatched, 0, "{n}:{id} was verified again");
    }
    let verified = std::fs::read_to_string(p.out.join("verified")).unwrap();
    let mut lines: Vec<&str> = verified.lines().collect();
    lines.sort_unstable();
    assert_eq!(
        lines,
        [
            "1 F1", "1 F2", "1 F3", "1 F4", "1 F5", "2 F3", "2 F4", "2 F5", "3 F3", "3 F4", "3 F5"
        ]
    );
    // The verdicts recorded carry the ledger's word.
    let raised: Vec<(u64, String, String)> = p
        .of_type("findings.verified")
        .iter()
        .flat_map(|e| {
            let n = e["iteration"].as_u64().unwrap();
            e["findings"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|f| f.get("raisedAgain").is_some())
                .map(move |f| {
                    (
                        n,
                        f["id"].as_str().unwrap().to_string(),
                        f["verdict"].as_str().unwrap().to_string(),
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(
        raised,
        [
            (2, "F1".into(), "FALSE".into()),
            (2, "F2".into(), "UNVERIFIABLE".into()),
            (3, "F1".into(), "UNVERIFIABLE".into()),
            (3, "F2".into(), "FALSE".into()),
        ]
    );
    // Never asked again: the one gate is round 1's.
    let gates: Vec<Value> = p.of_type("human.requested");
    assert_eq!(gates.len(), 1, "{gates:#?}");
    // Triaged out by the rules, with the earlier outcome as the reason.
    assert_eq!(p.triage_ids(2, "rejected"), ["F1", "F2"]);
    assert_eq!(p.triage_ids(3, "rejected"), ["F1", "F2"]);
    let t2 = p.triage(2);
    assert!(
        t2["rejected"][0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("raised again: found FALSE in round 1 (iteration 1, F2): the finding verifier found it FALSE"),
        "{t2}"
    );
    assert!(
        t2["rejected"][1]["reason"].as_str().unwrap().starts_with(
            "raised again: dismissed in round 1 (iteration 1, F4): dismiss by tester@"
        ),
        "{t2}"
    );

    // The developer: round 1's F1, then round 2's F4; never the findings
    // raised again, in any of their words.
    let inputs = developer_inputs(&p);
    assert_eq!(
        inputs.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert!(
        inputs[1].1.contains(&format!(
            "F1 [blocking] src/export/csv.rs:80-92 — {}",
            claim(&r1, "F1")
        )),
        "{}",
        inputs[1].1
    );
    assert!(
        inputs[2].1.contains(&format!(
            "F4 [blocking] src/export/csv.rs:86-98 — {}",
            claim(&r2, "F4")
        )),
        "{}",
        inputs[2].1
    );
    for (n, text) in &inputs {
        for c in [
            claim(&r1, "F2"),
            claim(&r1, "F4"),
            claim(&r2, "F1"),
            claim(&r2, "F2"),
            claim(&r3, "F1"),
            claim(&r3, "F2"),
        ] {
            assert!(
                !text.contains(&c),
                "iteration {n}'s developer got {c:?}:\n{text}"
            );
        }
    }
    // The note: under its own heading, in the next developer dispatch
    // only; the escape shown as a stand-in, the text as written.
    let second = &inputs[1].1;
    let heading = "NOTE FROM tester@";
    let at = second
        .find(heading)
        .unwrap_or_else(|| panic!("no note:\n{second}"));
    let note_part = &second[at..];
    assert!(
        note_part.contains(&format!("({id} dismiss):\n")),
        "{note_part}"
    );
    assert!(
        note_part.contains("Keep the awk path: a million invoices never reaches this exporter.␛[31m token=s3cr3t-t0ken-9f8e7d"),
        "{note_part}"
    );
    assert!(
        !second.contains('\u{1b}'),
        "a raw escape in the developer's input"
    );
    assert!(
        !inputs[2].1.contains("NOTE FROM"),
        "the note went to one dispatch only"
    );
    // Kept as written in the journal; scrubbed in the report.
    let decided = &p.of_type("human.decided")[0];
    assert_eq!(decided["note"], NOTE);
    let report = std::fs::read_to_string(p.pipeline().join("report.md")).unwrap();
    assert_has(&report, "note to the developer: Keep the awk path");
    assert!(!report.contains("s3cr3t-t0ken-9f8e7d"), "{report}");
    assert_has(&report, "redacted:");
    assert_has(
        &report,
        "raised again: found FALSE in round 1 (iteration 1, F2)",
    );
    assert_has(&report, "seen in review rounds 1, 2, 3");

    // A person splits a match: recorded once, with the earlier finding.
    let split = |n: &str, id: &str| {
        p.cmd()
            .args(["split", n, id, "--reason", "another defect"])
            .output()
            .expect("split")
    };
    let out = split("3", "F2");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "split: F2 of iteration 3 is not F2 of iteration 1"
    );
    let splits = p.of_type("finding.split");
    assert_eq!(splits.len(), 1);
    assert_eq!(
        (
            &splits[0]["earlierIteration"],
            &splits[0]["earlier"],
            &splits[0]["by"].as_str().map(|b| b.starts_with("tester@"))
        ),
        (&Value::from(1), &Value::from("F2"), &Some(true))
    );
    for (n, id, why) in [
        ("3", "F2", "was already split from F2 of iteration 1"),
        ("3", "F3", "was not raised again"),
    ] {
        let out = split(n, id);
        assert_eq!(out.status.code(), Some(2), "{n} {id}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{n} {id}: {err}");
    }
    assert_eq!(p.of_type("finding.split").len(), 1);
}

#[test]
fn a_split_while_the_run_goes_on_has_the_next_round_verify_the_finding_anew() {
    let p = Project::new(&config(4, 3, ""));
    p.write_agent("review.sh", LEDGER_AGENT);
    review(&p, 1, &[("F2", "blocking"), ("F4", "blocking")]);
    review(
        &p,
        2,
        &[("F1", "blocking"), ("F2", "blocking"), ("F4", "blocking")],
    );
    review(
        &p,
        3,
        &[
            ("F1", "blocking"),
            ("F2", "blocking"),
            ("F3", "minor"),
            ("F4", "minor"),
        ],
    );
    for k in 1..=3 {
        std::fs::create_dir_all(p.out.join(format!("plan-{k}"))).unwrap();
    }
    std::fs::write(p.out.join("plan-1/F2"), "false").unwrap();
    std::fs::write(p.out.join("plan-1/F4"), "unverifiable").unwrap();
    // Verified anew in round 3, round 1's F2 is FALSE again.
    std::fs::write(p.out.join("plan-3/F2"), "false").unwrap();
    std::fs::write(p.out.join("hold-3"), "").unwrap();

    let child = p.spawn_run(true);
    let gate = p.wait_for_gate("the UNVERIFIABLE finding's gate");
    p.decided(&[
        gate["id"].as_str().unwrap(),
        "dismiss",
        "--reason",
        "not here",
    ]);
    p.wait_for("round 2's F1 raised again", |e| {
        e.iter().any(|e| {
            e["type"] == "finding.lane"
                && e["iteration"] == 2
                && e["finding"] == "F1"
                && e["state"] == "raised-again"
        })
    });
    // The engine drives the run: the split is appended beside it, and taken.
    let out = p
        .cmd()
        .args([
            "split",
            "2",
            "F1",
            "--reason",
            "an empty list is not the only panic",
        ])
        .output()
        .expect("split");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_file(p.out.join("hold-3")).unwrap();
    // The run ends on its own (a deadline, not a hang, if it waits on a person).
    p.wait_for("the end of the run", |e| {
        e.iter().any(|e| e["type"] == "run.ended")
    });
    let out = child.wait_with_output();
    p.assert_exit(&out, 0);
    assert_eq!(p.of_type("run.ended")[0]["status"], "complete");
    // Round 3: F2, the same as the split finding, verified anew (FALSE
    // again); F1, round 1's dismissed F4, still raised again.
    let states = |id: &str| -> Vec<String> {
        lanes(&p, 3, id)
            .iter()
            .map(|l| l["state"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(states("F2"), ["queued", "running", "done"]);
    assert_eq!(states("F1"), ["raised-again"]);
    assert!(lanes(&p, 3, "F2")[2].get("raisedAgain").is_none());
    let verified = std::fs::read_to_string(p.out.join("verified")).unwrap();
    assert!(verified.lines().any(|l| l == "3 F2"), "{verified}");
    assert!(!verified.lines().any(|l| l == "3 F1"), "{verified}");
    assert!(
        p.of_type("note")
            .iter()
            .all(|n| !n["text"].as_str().unwrap_or("").contains("foreign"))
    );
}
