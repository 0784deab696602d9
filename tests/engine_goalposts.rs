//! Hostile scripted agents that try to move the goalposts: edit the
//! contract's judged parts, write the journal, record or decide from inside
//! their dispatch, take the engine's lock, redirect `.pipeline/` through a
//! link, or start a second run in an ended journal. Each attack is put
//! back or refused with a clear record, and the run never ends complete
//! because of it.

mod support;

use std::path::Path;

use serde_json::Value;
use support::engine::*;
use support::{assert_failed, assert_has};

const CONFIG: &str = r#"[run]
test = "true"
grace = "1s"

[agents.developer]
command = "bash @AGENTS@/developer.sh developer"
timeout = "1m"

[agents.verifier]
command = "bash @AGENTS@/agent.sh verifier"
timeout = "1m"

[agents.auditor]
command = "bash @AGENTS@/agent.sh auditor"
timeout = "1m"
"#;

/// A project whose developer runs `body` (after the prologue), then does
/// the real work, unless `$TEST_OUT/honest` exists.
fn project(body: &str) -> Project {
    let p = Project::new(CONFIG);
    p.write_agent(
        "developer.sh",
        &format!(
            "if [ ! -f \"$TEST_OUT/honest\" ]; then\n{body}\nfi\nmkdir -p src; echo 'total: 3.75 cents' > src/total.txt\necho done\n"
        ),
    );
    p
}

fn contract(p: &Project) -> String {
    std::fs::read_to_string(p.root.join(CONTRACT)).unwrap_or_default()
}

/// Every contract attack: the judged parts are put back after the
/// dispatch, the dispatch fails naming what changed, a second one opens
/// the developer's structural gate, and the run never ends complete.
#[test]
fn a_developer_that_edits_the_contracts_judged_parts_is_put_back_and_fails() {
    let attacks: &[(&str, &str, &str)] = &[
        (
            "a CHECK turned into an echo",
            r#"sed -i 's/CHECK: .*/CHECK: echo CENTS_OK/' "$LW_CONTRACT""#,
            "criterion 1: CHECK was `grep -q cents src/total.txt && echo CENTS_OK`, now `echo CENTS_OK`",
        ),
        (
            "a CHECK deleted",
            r#"sed -i '/CHECK:/d; /EXPECT:/d' "$LW_CONTRACT""#,
            "criterion 1: CHECK was",
        ),
        (
            "FILE SCOPE widened",
            r#"printf -- '- src/**\n- Makefile\n' >> "$LW_CONTRACT""#,
            "FILE SCOPE: added `- src/**`",
        ),
        (
            "the REQUEST rewritten",
            r#"sed -i 's/The total shows cents./Nothing to do./' "$LW_CONTRACT""#,
            "REQUEST: changed",
        ),
        (
            "the contract replaced by a link",
            r#"printf '## ACCEPTANCE CRITERIA\n1. ok\n   CHECK: true && echo CENTS_OK\n   EXPECT: CENTS_OK\n   EVIDENCE: pending\n' > "$TEST_OUT/fake.md"; rm "$LW_CONTRACT"; ln -s "$TEST_OUT/fake.md" "$LW_CONTRACT""#,
            "the contract was replaced by a symbolic link",
        ),
        (
            "the contract deleted",
            r#"rm "$LW_CONTRACT""#,
            "the contract was removed",
        ),
        (
            "the contract made a FIFO",
            r#"rm "$LW_CONTRACT"; mkfifo "$LW_CONTRACT""#,
            "the contract cannot be read",
        ),
    ];
    for (what, attack, named) in attacks {
        let p = project(attack);
        let original = contract(&p);
        let run = p.spawn_run(true);
        let gate = p.wait_for_gate(what);
        assert_eq!(gate["id"], "hg-1-developer-1", "{what}: {gate}");
        let finished = p.of_type_where("agent.finished", "role", "developer");
        assert_eq!(finished.len(), 2, "{what}");
        for f in &finished {
            let tampered = f["tampered"].to_string();
            assert!(tampered.contains(named), "{what}: {f}");
            assert!(
                f["error"]
                    .as_str()
                    .unwrap()
                    .starts_with("changed the contract's judged parts (put back)"),
                "{what}: {f}"
            );
        }
        let now = contract(&p);
        assert_eq!(
            loopwatch::contract::judged::Judged::read(now.as_bytes()),
            loopwatch::contract::judged::Judged::read(original.as_bytes()),
            "{what}: the judged parts are back"
        );
        assert!(
            !std::fs::symlink_metadata(p.root.join(CONTRACT))
                .unwrap()
                .file_type()
                .is_symlink(),
            "{what}"
        );
        assert!(
            p.of_type("gate.started").is_empty(),
            "{what}: no gate ran on tampered work"
        );
        p.decide("hg-1-developer-1", "abort");
        let out = run.wait_with_output();
        assert_eq!(out.status.code(), Some(1), "{what}");
        assert_eq!(p.of_type("run.ended")[0]["status"], "aborted", "{what}");
    }
}

/// A person's edit of the judged parts while the run waits is put to a
/// `contract-changed` gate: adopting it re-runs GATE 0 on the new contract.
#[test]
fn a_persons_change_of_the_judged_parts_waits_for_a_decision() {
    let p = project("");
    std::fs::write(p.out.join("honest"), "").unwrap();
    // The verifier flags a file out of scope: the run waits on a person.
    p.write_agent(
        "developer.sh",
        "mkdir -p src; echo 'total: 3.75 cents' > src/total.txt; echo all: > Makefile; echo done\n",
    );
    let run = p.spawn_run(true);
    let oos = p.wait_for_gate("the out-of-scope gate");
    // Meanwhile a person edits the contract's check.
    let edited = contract(&p).replace(
        "grep -q cents src/total.txt && echo CENTS_OK",
        "grep -q '3.75 cents' src/total.txt && echo CENTS_OK",
    );
    // Saved whole (as an editor saves), so the engine never reads it half written.
    let tmp = p.root.join("docs/.contract.md.tmp");
    std::fs::write(&tmp, edited).unwrap();
    std::fs::rename(&tmp, p.root.join(CONTRACT)).unwrap();
    // The engine may see the edit before or after the approval: either way
    // a person is asked about it.
    let approve = p.decided(&[oos["id"].as_str().unwrap(), "approve", "--reason", "fine"]);
    assert!(matches!(approve.status.code(), Some(0 | 10)));
    let changed = p.wait_for("the contract-changed gate", |e| {
        e.iter()
            .any(|e| e["type"] == "human.requested" && e["kind"] == "contract-changed")
    });
    let req = changed
        .iter()
        .find(|e| e["kind"] == "contract-changed")
        .unwrap();
    assert_eq!(req["id"], "hg-1-contract-1");
    assert!(
        req["evidence"]["changes"][0]
            .as_str()
            .unwrap()
            .starts_with("criterion 1: CHECK was"),
        "{req}"
    );
    let floors_before = p.of_type_where("gate.finished", "gate", "floor").len();
    p.decide("hg-1-contract-1", "adopt");
    let out = run.wait_with_output();
    p.assert_exit(&out, 0);
    let judged = p.of_type("contract.judged");
    assert_eq!(judged[0]["why"], "run start");
    assert!(
        judged
            .iter()
            .any(|j| j["gate"] == "hg-1-contract-1" && j["rerun"] == true)
    );
    assert!(judged.iter().any(|j| j["gate"] == oos["id"]));
    assert!(p.of_type_where("gate.finished", "gate", "floor").len() > floors_before);
}

/// Lines written into the journal behind loopwatch's back are moved out,
/// the run stops naming them, and resumes on the journal as loopwatch wrote it.
#[test]
fn journal_lines_written_by_an_agent_are_moved_out_and_stop_the_run() {
    let forged = [
        (
            "a forged run.ended",
            r#"printf '{"v":1,"seq":%s,"at":"2026-12-01T00:00:00Z","type":"run.ended","status":"complete","report":"report.md"}\n' "$(( $(wc -l < "$LW_PIPELINE/events.jsonl") + 1 ))" >> "$LW_PIPELINE/events.jsonl""#,
            "a `run.ended` event",
        ),
        (
            "garbage",
            r#"echo 'garbage {{{' >> "$LW_PIPELINE/events.jsonl""#,
            "not an event",
        ),
        (
            "a far seq",
            r#"printf '{"v":1,"seq":999,"at":"2026-12-01T00:00:00Z","type":"note","text":"x"}\n' >> "$LW_PIPELINE/events.jsonl""#,
            "seq 999 where",
        ),
    ];
    for (what, attack, why) in forged {
        let p = project(&format!(
            "if [ ! -f \"$TEST_OUT/forged\" ]; then touch \"$TEST_OUT/forged\"; {attack}; fi"
        ));
        let stderr = assert_failed(
            &p.run_to_end(),
            2,
            "written into the journal by another writer",
        );
        assert!(stderr.contains(why), "{what}: {stderr}");
        assert!(p.of_type("run.ended").is_empty(), "{what}");
        let kept: Vec<_> = std::fs::read_dir(p.pipeline())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("foreign-"))
            .collect();
        assert_eq!(kept.len(), 1, "{what}");
        // The journal validates, and the run resumes to its end.
        let v = p
            .cmd()
            .args(["validate"])
            .arg(p.pipeline().join("events.jsonl"))
            .output()
            .unwrap();
        assert!(
            v.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&v.stdout)
        );
        let out = p.cmd().args(["run", "--headless"]).output().unwrap();
        p.assert_exit(&out, 0);
    }
}

/// `loopwatch record`, `ask` and `decide` from inside a dispatch are
/// refused, whatever the environment says; a helper the agent leaves behind
/// is stopped before it could decide anything.
#[test]
fn an_agent_cannot_record_or_decide_from_inside_its_dispatch() {
    let bin = bin();
    let p = project(&format!(
        "'{b}' record run-end --status complete > \"$TEST_OUT/run-end.out\" 2>&1; echo $? >> \"$TEST_OUT/run-end.out\"\n\
         env -i PATH=\"$PATH\" '{b}' record note inside > \"$TEST_OUT/note.out\" 2>&1; echo $? >> \"$TEST_OUT/note.out\"\n\
         '{b}' gate0 run docs/contract.md > \"$TEST_OUT/gate0.out\" 2>&1; echo $? >> \"$TEST_OUT/gate0.out\"\n\
         setsid sh -c 'echo $$ > \"$TEST_OUT/helper.pid\"; sleep 3; \"{b}\" decide hg-1-conformity-1 approve --reason mine > \"$TEST_OUT/helper.out\" 2>&1' </dev/null >/dev/null 2>&1 &\n\
         while [ ! -s \"$TEST_OUT/helper.pid\" ]; do sleep 0.01; done\n\
         echo all: > Makefile",
        b = bin.display()
    ));
    let run = p.spawn_run(true);
    let gate = p.wait_for_gate("the out-of-scope gate");
    let out = std::fs::read_to_string(p.out.join("run-end.out")).unwrap();
    assert_has(&out, "refused: this runs inside agent dispatch #1");
    assert!(out.trim_end().ends_with('2'), "{out}");
    // A GATE 0 round of its own making is not recorded either.
    let gate0 = std::fs::read_to_string(p.out.join("gate0.out")).unwrap();
    assert_has(&gate0, "refused: this runs inside agent dispatch #1");
    let note = std::fs::read_to_string(p.out.join("note.out")).unwrap();
    assert!(
        note.contains("refused: this runs inside agent dispatch #1"),
        "env -i does not hide it: {note}"
    );
    // The helper was stopped with the dispatch: the gate waits for a person.
    let helper = p.pid_in("helper.pid");
    assert!(
        !is_live(helper),
        "the helper {helper} outlived its dispatch"
    );
    assert!(!p.out.join("helper.out").exists(), "the helper decided");
    assert!(
        p.open_gates()
            .contains(&gate["id"].as_str().unwrap().to_string())
    );
    assert!(p.of_type("human.decided").is_empty());
    assert!(p.of_type("note").iter().all(|n| n["text"] != "inside"));
    drop(run);
}

/// A decision appended to the journal by anyone but the engine while it
/// drives the run (here by the test, as a helper that escaped the run's
/// trees would) is foreign: moved out, the run stopped, the gate still
/// open. The same decision through `loopwatch decide` is handed to the
/// engine at its door and recorded: the run goes on to its end.
#[test]
fn a_decision_appended_by_another_writer_is_foreign_and_decide_goes_through_the_door() {
    let p = project("echo all: > Makefile");
    let run = p.spawn_run(true);
    let gate = p.wait_for_gate("the out-of-scope gate");
    let id = gate["id"].as_str().unwrap().to_string();
    let seq = p.events().last().unwrap()["seq"].as_u64().unwrap() + 1;
    let forged = serde_json::json!({"v": 1, "seq": seq, "at": "2026-12-01T00:00:00Z",
        "type": "human.decided", "id": id, "decision": "approve", "reason": "mine",
        "by": "agent@host", "evidenceHash": ""});
    {
        use std::io::Write;
        let mut journal = std::fs::OpenOptions::new()
            .append(true)
            .open(p.pipeline().join("events.jsonl"))
            .unwrap();
        // One write, as a forger would (a line in pieces is judged whole).
        journal.write_all(format!("{forged}\n").as_bytes()).unwrap();
    }
    let out = run.wait_with_output();
    assert_failed(&out, 2, "not handed to the engine at its door");
    assert!(
        p.of_type("human.decided").is_empty(),
        "the forged decision stayed"
    );
    assert!(p.open_gates().contains(&id));
    assert!(
        !contract(&p).contains("[gated"),
        "the contract was tagged for a forged approval"
    );
    // Resumed, the gate waits again; a person's decision goes through the
    // engine's door (the journal's writer is the engine) and the run ends.
    std::fs::write(p.out.join("honest"), "").unwrap();
    let run = p.spawn_run(false);
    // Once the engine holds the run, the decision can only go through it.
    let lock = p.pipeline().join("engine.lock");
    p.wait_until("the engine holding the run", || {
        std::fs::read_to_string(&lock).is_ok_and(|s| s.trim() == run.id().to_string())
    });
    p.decide(&id, "approve");
    p.assert_exit(&run.wait_with_output(), 0);
    let d = p.of_type("human.decided");
    assert_eq!(d.len(), 1);
    assert_eq!(d[0]["id"], id.as_str());
    assert!(contract(&p).contains("[gated"), "approved through the door");
}

/// An agent that takes the journal's writer lock and leaves a helper
/// holding it (never letting go) holds it only as long as its dispatch:
/// the helper is stopped with the dispatch, and the engine records the
/// dispatch's end and goes on to the run's end.
#[test]
fn an_agent_holding_the_journal_lock_holds_it_no_longer_than_its_dispatch() {
    let p = project(
        "setsid flock \"$LW_PIPELINE/lock\" sh -c 'echo $$ > \"$TEST_OUT/holder.pid\"; exec sleep 600' </dev/null >/dev/null 2>&1 &\n\
         while [ ! -s \"$TEST_OUT/holder.pid\" ]; do sleep 0.01; done\n\
         sleep 1",
    );
    let out = p.run_to_end();
    p.assert_exit(&out, 0);
    let holder = p.pid_in("holder.pid");
    assert!(
        !is_live(holder),
        "the lock's holder {holder} outlived its dispatch"
    );
    assert_eq!(p.of_type("run.ended")[0]["status"], "complete");
}

/// The engine's lock holds whatever happens to `engine.lock`, and a second
/// run in an ended journal is refused until `--new` archives the first.
#[test]
fn the_engine_lock_holds_and_an_ended_journal_takes_no_second_run() {
    let p = project("sleep 5");
    let first = p.spawn_run(true);
    p.wait_for("the developer's start", |e| {
        e.iter().any(|e| e["type"] == "agent.started")
    });
    std::fs::remove_file(p.pipeline().join("engine.lock")).unwrap();
    let second = p.cmd().args(["run", "--headless"]).output().unwrap();
    assert_failed(&second, 2, "another `loopwatch run` (pid");
    p.assert_exit(&first.wait_with_output(), 0);
    assert_eq!(
        p.of_type("agent.finished")
            .iter()
            .filter(|f| f["role"] == "developer")
            .count(),
        1,
        "no dispatch recorded twice"
    );
    // The run ended: a second run in the same journal is refused.
    let again = p
        .cmd()
        .args(["run", "--headless", CONTRACT])
        .output()
        .unwrap();
    assert_failed(&again, 2, "--new");
    let first_id = p.of_type("run.started")[0]["run"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let fresh = p
        .cmd()
        .args(["run", "--headless", "--new", CONTRACT])
        .output()
        .unwrap();
    p.assert_exit(&fresh, 0);
    let archived = p.pipeline().join("runs").join(&first_id);
    assert!(
        archived.join("events.jsonl").is_file(),
        "{}",
        archived.display()
    );
    assert!(archived.join("agents").is_dir());
    assert_eq!(p.of_type("run.started").len(), 1, "one run per journal");
    let old: Vec<Value> = std::fs::read_to_string(archived.join("events.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(old.iter().any(|e| e["type"] == "run.ended"));
}

/// Nothing is written through a link under `.pipeline/`.
#[test]
fn a_pipeline_folder_replaced_by_a_link_is_never_written_through() {
    // agents/ is written by the next dispatch, gates/ by the next gate round.
    for folder in ["agents", "gates"] {
        let p = project(&format!(
            r#"rm -rf "$LW_PIPELINE/{folder}"; mkdir -p "$TEST_OUT/elsewhere"; ln -s "$TEST_OUT/elsewhere" "$LW_PIPELINE/{folder}""#
        ));
        assert_failed(&p.run_to_end(), 2, "a symbolic link: refused");
        let elsewhere: Vec<_> = std::fs::read_dir(p.out.join("elsewhere"))
            .unwrap()
            .collect();
        assert!(
            elsewhere.is_empty(),
            "{folder}: written through the link: {elsewhere:?}"
        );
        assert!(p.of_type("run.ended").is_empty(), "{folder}");
        assert!(Path::new(&p.pipeline()).is_dir());
    }
}

/// A contract rewritten with CRLF line ends (an editor's doing) keeps its
/// judged parts: nothing is put back, nothing fails, the run ends complete.
#[test]
fn a_contract_rewritten_with_crlf_line_ends_is_not_a_tamper() {
    let p = project(r#"sed -i 's/$/\r/' docs/contract.md"#);
    let out = p.run_to_end();
    p.assert_exit(&out, 0);
    assert!(
        contract(&p).contains("\r\n"),
        "the developer's CRLF was put back"
    );
    assert!(
        p.of_type("agent.finished")
            .iter()
            .all(|f| f.get("tampered").is_none()),
        "{:?}",
        p.of_type("agent.finished")
    );
    assert_eq!(p.of_type("run.ended")[0]["status"], "complete");
}

/// A read-only role that changes files, refs or worktrees anyway: each
/// change is put back and named, and its round is structural.
#[test]
fn what_a_read_only_role_changes_is_put_back_and_named() {
    let p = Project::new(&CONFIG.replace(
        "command = \"bash @AGENTS@/agent.sh verifier\"",
        "command = \"bash @AGENTS@/verifier.sh verifier\"",
    ));
    std::fs::write(p.out.join("honest"), "").unwrap();
    p.write_agent(
        "developer.sh",
        "mkdir -p src; echo 'total: 3.75 cents' > src/total.txt; echo done\n",
    );
    p.write_agent(
        "verifier.sh",
        "echo planted > planted.txt\necho broken >> docs/contract.md.bak\ngit branch lw-elsewhere\ngit worktree add -q ../elsewhere 2>/dev/null\nconforme\n",
    );
    let run = p.spawn_run(true);
    let gate = p.wait_for_gate("the structural gate");
    assert_eq!(gate["kind"], "structural", "{gate}");
    let f = &p.of_type_where("agent.finished", "role", "verifier")[0];
    let v = f["violations"].to_string();
    for named in [
        "planted.txt created (put back)",
        "ref refs/heads/lw-elsewhere created (put back)",
        "added (removed)",
    ] {
        assert!(v.contains(named), "{named}: {f}");
    }
    assert!(!p.root.join("planted.txt").exists());
    assert!(!p.root.parent().unwrap().join("elsewhere").exists());
    assert!(!git(&p.root, &["branch", "--list"]).contains("lw-elsewhere"));
    let round = &p.of_type_where("gate.finished", "gate", "conformity")[0];
    assert!(
        round["structural"]
            .as_str()
            .unwrap()
            .contains("a read-only role changed what it may not"),
        "{round}"
    );
    drop(run);
}

/// A run started after uncommitted work: the out-of-scope gate shows the
/// file's hunks against the run's DIFF base (what the verifier judged),
/// says which of them came before the run started, and the evidence a
/// person decides on shows the recipe's tab and the trailing space as they
/// are.
#[test]
fn an_out_of_scope_file_changed_before_the_run_shows_its_hunks_against_diff() {
    let p = project(":");
    std::fs::write(p.root.join("Makefile"), "all:\n\tcargo build \n").unwrap();
    let run = p.spawn_run(true);
    let gate = p.wait_for_gate("the out-of-scope gate");
    let id = gate["id"].as_str().unwrap().to_string();
    let code: Vec<&str> = gate["evidence"]["code"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        code.iter()
            .any(|l| l.starts_with("Makefile: changed against ")
                && l.ends_with("the run's diff base")),
        "{code:#?}"
    );
    assert!(code.contains(&"+\tcargo build "), "{code:#?}");
    assert!(
        code.iter()
            .any(|l| l.contains("changed before the run started")),
        "{code:#?}"
    );
    let out = p
        .cmd()
        .args(["decide", &id, "deny", "--reason", "not part of this change"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("decision saved"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown =
        std::fs::read_to_string(p.pipeline().join("evidence").join(format!("{id}.txt"))).unwrap();
    assert_has(&shown, "+→   cargo build·");
    assert!(!shown.contains("no change against"), "{shown}");
    drop(run);
}
