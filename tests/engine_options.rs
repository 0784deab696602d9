//! Every option of every kind of human gate, decided on a real
//! `loopwatch run --headless` with scripted agents: the run does what the
//! option's words say (`model::kinds`), checked on the journal, the files
//! and the run's end.

mod support;

use serde_json::Value;
use support::engine::*;
use support::{assert_failed, assert_has};

/// The scripted agents of these tests, after the shared prologue. The
/// developer writes the total with cents (and, with `$out/touch-makefile`,
/// a Makefile outside FILE SCOPE on its first dispatch; it removes it when
/// a person denied it); it fails while `$out/developer-fails` exists. The
/// verifier flags an ungated Makefile, else answers `$out/verifier-plan`
/// for its first `$out/verifier-times` dispatches, else CONFORME.
const OPTIONS_AGENT: &str = r#"case $role in
  developer)
    printf '%s\n=====\n' "$input" >>"$out/developer-inputs"
    if [ -f "$out/developer-fails" ]; then echo "developer crashed" >&2; exit 4; fi
    mkdir -p src
    echo "total: 3.75 cents" >src/total.txt
    case $input in
      *REQUEST*) if [ -f "$out/touch-makefile" ]; then echo "all:" >Makefile; fi ;;
      *"out-of-scope: Makefile"*) rm -f Makefile ;;
    esac
    echo done
    ;;
  verifier)
    k=$(( $(cat "$out/count-verifier" 2>/dev/null || echo 0) + 1 ))
    echo $k >"$out/count-verifier"
    plan=$(cat "$out/verifier-plan" 2>/dev/null || echo conforme)
    times=$(cat "$out/verifier-times" 2>/dev/null || echo 0)
    top() { printf 'VERIFY — VERDICT: %s\nCONTRACT: %s\nCRITERIA:\n' "$1" "$LW_CONTRACT"; }
    end() { printf 'SCOPE: in-scope 1 files; out-of-scope: %s\nFLOOR: clean\nPROOF: read 1 files\n' "$1"; }
    if [ -f Makefile ] && ! grep -q 'Makefile \[gated' "$LW_CONTRACT"; then
      top 'ECARTS(1)'; echo '  1. The total shows cents — MET — ran the check'; end Makefile
    elif [ "$k" -le "$times" ]; then
      case $plan in
        abandoned) top 'ABANDONED(1)'; echo '  1. The total shows cents — ABANDONED — no fixture for cents'; end none ;;
        unverifiable) top 'ECARTS(1)'; echo '  1. The total shows cents — UNVERIFIABLE — needs a printer to see the cents'; end none ;;
        not-met) top 'ECARTS(1)'; echo '  1. The total shows cents — NOT-MET — no cents printed'; end none ;;
        garbage) echo "I could not make sense of this change." ;;
      esac
    else
      conforme
    fi
    ;;
  auditor) pass ;;
esac
"#;

/// A project of the options agent, `max_rounds` rounds per gate; `files`
/// are written into `$TEST_OUT` (name, content).
fn project(max_rounds: u32, files: &[(&str, &str)]) -> Project {
    let config = format!(
        "[run]\ntest = \"true\"\nmax_rounds = {max_rounds}\ngrace = \"1s\"\n\n{}",
        agent_tables("options.sh", &["developer", "verifier", "auditor"])
    );
    let p = Project::new(&config);
    p.write_agent("options.sh", OPTIONS_AGENT);
    for (name, content) in files {
        std::fs::write(p.out.join(name), content).unwrap();
    }
    p
}

/// Starts the run and waits for the first gate of `kind`; its request.
fn until_gate(p: &Project, kind: &str) -> (Engine, Value) {
    let run = p.spawn_run(true);
    let evs = p.wait_for(&format!("a {kind} gate"), |e| {
        e.iter()
            .any(|e| e["type"] == "human.requested" && e["kind"] == kind)
            || e.iter().any(|e| e["type"] == "run.ended")
    });
    let req = evs
        .into_iter()
        .find(|e| e["type"] == "human.requested" && e["kind"] == kind)
        .unwrap_or_else(|| panic!("the run ended without a {kind} gate: {:#?}", p.events()));
    (run, req)
}

/// Decides `option` on the gate `req` opened, then lets the run end (no
/// other gate expected); the run's end status and exit code.
fn decide_to_end(p: &Project, run: Engine, req: &Value, option: &str) -> (String, Option<i32>) {
    let id = req["id"].as_str().unwrap();
    let out = p.decided(&[id, option, "--reason", "decided by the test"]);
    // What the rules said comes next is printed on the NEXT line.
    assert_has(&String::from_utf8_lossy(&out.stdout), "NEXT: ");
    p.wait_for("the run's end or another gate", |e| {
        e.iter().any(|e| e["type"] == "run.ended") || !p.open_gates().is_empty()
    });
    let open = p.open_gates();
    assert!(open.is_empty(), "no other gate was expected, got {open:?}");
    let out = run.wait_with_output();
    let end = p.of_type("run.ended")[0]["status"]
        .as_str()
        .unwrap()
        .to_string();
    (end, out.status.code())
}

/// Runs `p` to its first gate of `kind`, decides `option` and asserts that
/// the run then ends `end` with exit code `code`; the gate's request.
fn decided(p: &Project, kind: &str, option: &str, end: &str, code: i32) -> Value {
    let (run, req) = until_gate(p, kind);
    let got = decide_to_end(p, run, &req, option);
    assert_eq!(got, (end.to_string(), Some(code)));
    req
}

/// A project whose verifier answers `plan` in its first round.
fn planned(plan: &str) -> Project {
    project(3, &[("verifier-plan", plan), ("verifier-times", "1")])
}

fn developer_inputs(p: &Project) -> String {
    std::fs::read_to_string(p.out.join("developer-inputs")).unwrap_or_default()
}

fn contract(p: &Project) -> String {
    std::fs::read_to_string(p.root.join(CONTRACT)).unwrap()
}

/// The state as `status --json` prints it.
fn status(p: &Project) -> Value {
    let out = p.cmd().args(["status", "--json"]).output().unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

fn rounds(p: &Project, gate: &str) -> usize {
    p.of_type_where("gate.finished", "gate", gate).len()
}

// abandoned

#[test]
fn abandoned_lift_goes_back_to_the_developer_as_a_gap() {
    let p = planned("abandoned");
    decided(&p, "abandoned", "lift", "complete", 0);
    let dev = p.of_type("dev.dispatched");
    assert_eq!(
        dev[0]["inputs"][0],
        "  1. The total shows cents — ABANDONED — no fixture for cents — lifted by a person: implement it"
    );
    assert!(developer_inputs(&p).contains("lifted by a person: implement it"));
    assert_eq!(rounds(&p, "conformity"), 2);
}

#[test]
fn abandoned_accept_partial_finishes_reported_partial() {
    let p = planned("abandoned");
    decided(&p, "abandoned", "accept-partial", "partial", 0);
    assert!(p.of_type("dev.dispatched").is_empty(), "nothing went back");
    let report = std::fs::read_to_string(p.pipeline().join("report.md")).unwrap();
    assert!(report.contains("final status: **partial**"), "{report}");
}

// unverifiable (a criterion)

#[test]
fn unverifiable_accept_is_checked_by_hand_and_the_loop_goes_on() {
    let p = planned("unverifiable");
    let req = decided(&p, "unverifiable", "accept", "complete", 0);
    assert_eq!(req["gate"], "conformity");
    assert!(p.of_type("dev.dispatched").is_empty());
    assert_eq!(rounds(&p, "security"), 1, "on to GATE 2");
}

#[test]
fn unverifiable_reject_stops_the_run_not_conformant() {
    let p = planned("unverifiable");
    decided(&p, "unverifiable", "reject", "not-conformant", 1);
    assert_eq!(rounds(&p, "security"), 0);
}

// out-of-scope

#[test]
fn out_of_scope_approve_adds_the_file_to_file_scope() {
    let p = project(3, &[("touch-makefile", "")]);
    let req = decided(&p, "out-of-scope", "approve", "complete", 0);
    assert_eq!(req["subject"], "Makefile");
    assert_has(&contract(&p), "- Makefile [gated ");
    assert!(p.root.join("Makefile").exists());
}

#[test]
fn out_of_scope_deny_sends_the_developer_to_remove_the_change() {
    let p = project(3, &[("touch-makefile", "")]);
    decided(&p, "out-of-scope", "deny", "complete", 0);
    assert_eq!(
        p.of_type("dev.dispatched")[0]["inputs"][0],
        "  out-of-scope: Makefile — denied by a person: remove the change"
    );
    assert!(!p.root.join("Makefile").exists());
    assert!(!contract(&p).contains("Makefile"));
}

// cap-reached

fn cap_project() -> Project {
    project(1, &[("verifier-plan", "not-met"), ("verifier-times", "1")])
}

#[test]
fn cap_reached_extend_gives_the_gate_one_more_round() {
    let p = cap_project();
    let req = decided(&p, "cap-reached", "extend", "complete", 0);
    assert_eq!(req["gate"], "conformity");
    assert_eq!(rounds(&p, "conformity"), 2);
    assert_eq!(status(&p)["caps"]["conformity"], 2);
}

#[test]
fn cap_reached_take_over_stops_the_loop() {
    let p = cap_project();
    decided(&p, "cap-reached", "take-over", "stopped", 1);
    assert!(p.of_type("dev.dispatched").is_empty());
}

#[test]
fn cap_reached_abort_aborts_the_run() {
    let p = cap_project();
    decided(&p, "cap-reached", "abort", "aborted", 1);
    assert_eq!(rounds(&p, "conformity"), 1);
}

// structural

fn structural_project() -> Project {
    project(3, &[("verifier-plan", "garbage"), ("verifier-times", "2")])
}

#[test]
fn structural_retry_runs_the_gate_again() {
    let p = structural_project();
    let req = decided(&p, "structural", "retry", "complete", 0);
    assert_eq!(req["gate"], "conformity");
    assert_eq!(rounds(&p, "conformity"), 3);
    assert_eq!(status(&p)["caps"]["conformity"], 3, "no round added");
}

#[test]
fn structural_extend_gives_the_gate_one_more_round() {
    let p = structural_project();
    decided(&p, "structural", "extend", "complete", 0);
    assert_eq!(rounds(&p, "conformity"), 3);
    assert_eq!(status(&p)["caps"]["conformity"], 4);
}

#[test]
fn structural_take_over_stops_the_loop() {
    let p = structural_project();
    decided(&p, "structural", "take-over", "stopped", 1);
    assert_eq!(rounds(&p, "conformity"), 2);
}

#[test]
fn structural_abort_aborts_the_run() {
    let p = structural_project();
    decided(&p, "structural", "abort", "aborted", 1);
    assert_eq!(rounds(&p, "security"), 0);
}

// contract-changed

/// A person edits the contract's check while an out-of-scope gate waits;
/// the out-of-scope gate approved, the contract-changed gate's request.
fn contract_changed(p: &Project) -> (Engine, Value) {
    let (run, oos) = until_gate(p, "out-of-scope");
    let edited = contract(p).replace(
        "grep -q cents src/total.txt && echo CENTS_OK",
        "grep -q '3.75 cents' src/total.txt && echo CENTS_OK",
    );
    // Written whole at once, as an editor saves: the engine never reads
    // half of it.
    let tmp = p.out.join("contract.edited");
    std::fs::write(&tmp, edited).unwrap();
    std::fs::rename(&tmp, p.root.join(CONTRACT)).unwrap();
    let out = p.decided(&[oos["id"].as_str().unwrap(), "approve", "--reason", "fine"]);
    assert!(matches!(out.status.code(), Some(0 | 10)));
    let evs = p.wait_for("the contract-changed gate", |e| {
        e.iter()
            .any(|e| e["type"] == "human.requested" && e["kind"] == "contract-changed")
    });
    let req = evs
        .into_iter()
        .find(|e| e["kind"] == "contract-changed")
        .unwrap();
    (run, req)
}

#[test]
fn contract_changed_adopt_judges_the_contract_as_it_is_now() {
    let p = project(3, &[("touch-makefile", "")]);
    let (run, req) = contract_changed(&p);
    let floors = rounds(&p, "floor");
    let end = decide_to_end(&p, run, &req, "adopt");
    assert_eq!(end, ("complete".into(), Some(0)));
    assert!(contract(&p).contains("grep -q '3.75 cents'"));
    assert!(rounds(&p, "floor") > floors, "GATE 0 ran again");
    assert!(
        p.of_type("contract.judged")
            .iter()
            .any(|j| j["gate"] == req["id"] && j["rerun"] == true)
    );
}

#[test]
fn contract_changed_revert_puts_the_contract_back_as_judged() {
    let p = project(3, &[("touch-makefile", "")]);
    let (run, req) = contract_changed(&p);
    let end = decide_to_end(&p, run, &req, "revert");
    assert_eq!(end, ("complete".into(), Some(0)));
    let c = contract(&p);
    assert!(
        c.contains("grep -q cents src/total.txt && echo CENTS_OK") && !c.contains("3.75 cents"),
        "{c}"
    );
    assert!(
        p.of_type("contract.judged")
            .iter()
            .any(|j| j["gate"] == req["id"] && j["rerun"] != true)
    );
}

// unverifiable-finding (a review finding)

mod findings {
    use super::support::review::{config, findings, project};
    use super::*;

    /// A run with a review whose one finding F1 is UNVERIFIABLE; its gate.
    fn finding_gate() -> (Project, Engine, Value) {
        let p = project(&config(2, 3, ""));
        findings(&p, &[("F1", "minor", "unverifiable")]);
        let (run, req) = until_gate(&p, "unverifiable-finding");
        assert_eq!(req["subject"], "F1");
        assert_eq!(req["id"], "hg-1-findings-1");
        assert!(req.get("gate").is_none());
        (p, run, req)
    }

    #[test]
    fn dismiss_goes_on_and_the_report_lists_it_dismissed_with_the_reason() {
        let (p, run, req) = finding_gate();
        let end = decide_to_end(&p, run, &req, "dismiss");
        assert_eq!(end, ("complete".into(), Some(0)));
        assert_eq!(p.of_type("review.finished")[0]["gaps"], 0);
        assert!(
            p.of_type("dev.dispatched").is_empty(),
            "never to the developer"
        );
        let inputs = std::fs::read_to_string(p.out.join("developer-inputs")).unwrap();
        assert!(!inputs.contains("F1"), "{inputs}");
        assert_eq!(p.triage_ids(1, "rejected"), ["F1"]);
        let reason = p.triage(1)["rejected"][0]["reason"].clone();
        let reason = reason.as_str().unwrap();
        assert!(
            reason.starts_with("dismissed by tester") && reason.ends_with(": decided by the test"),
            "{reason}"
        );
        let report = std::fs::read_to_string(p.pipeline().join("report.md")).unwrap();
        assert!(report.contains("dismissed by tester"), "{report}");
    }

    #[test]
    fn fix_goes_to_the_developer_as_a_gap_with_the_reason() {
        let (p, run, req) = finding_gate();
        // Once fixed, the finding verifier finds it FALSE.
        std::fs::write(p.out.join("plan/F1"), "false").unwrap();
        let end = decide_to_end(&p, run, &req, "fix");
        assert_eq!(end, ("complete".into(), Some(0)));
        let fin = p.of_type("review.finished");
        assert_eq!(fin[0]["fixed"], serde_json::json!(["F1"]));
        assert_eq!(fin[0]["gaps"], 1);
        let line = p.of_type("dev.dispatched")[0]["inputs"][0]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            line.starts_with("  F1 [minor] src/total.txt:1 — claim of F1 — the finding verifier could not check it; fix asked by tester")
                && line.ends_with(": decided by the test"),
            "{line}"
        );
        let inputs = std::fs::read_to_string(p.out.join("developer-inputs")).unwrap();
        assert!(inputs.contains(&format!("FINDINGS:\n{line}\n")), "{inputs}");
        assert_eq!(p.triage_ids(1, "accepted"), ["F1"]);
        assert_eq!(p.of_type("review.finished")[1]["gaps"], 0);
    }

    #[test]
    fn stop_ends_the_run_not_conformant() {
        let (p, run, req) = finding_gate();
        // The options of earlier versions are refused through the engine's
        // door, naming this kind's options with what each does.
        let before = p.events().len();
        let out = p
            .cmd()
            .args(["decide", "hg-1-findings-1", "accept", "--reason", "x"])
            .output()
            .unwrap();
        let err = assert_failed(
            &out,
            2,
            "accept is not an option of hg-1-findings-1 (unverifiable-finding)",
        );
        for line in [
            "dismiss — not a problem here: the loop goes on",
            "fix — treat it as real: to the developer as a gap, with your reason",
            "stop — stop the run: NOT-CONFORMANT",
        ] {
            assert!(err.contains(line), "{line:?} not in {err}");
        }
        assert_eq!(p.events().len(), before, "nothing written");
        let end = decide_to_end(&p, run, &req, "stop");
        assert_eq!(end, ("not-conformant".into(), Some(1)));
        assert!(p.of_type("triage.recorded").is_empty());
        assert!(p.of_type("dev.dispatched").is_empty());
    }
}
