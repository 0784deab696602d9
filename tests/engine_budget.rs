//! Budgets, usage limits and progress per round, with scripted agents that
//! report their cost (and a usage limit) in their usage file
//! (`$LW_USAGE_FILE`), driven by `loopwatch run --headless`:
//! - the `budget` gate opens before the dispatch that would start at or
//!   past the limit; `raise` goes on, `stop` ends the run stopped;
//! - a usage limit two seconds ahead is waited out once, then dispatched
//!   again; without `wait_for_limit`, or with no reset time, a person is
//!   asked;
//! - a developer that changes nothing opens `stagnant` after one round,
//!   with both rounds' trees in its evidence;
//! - the report of a three-round run has the convergence line.

mod support;

use serde_json::Value;
use support::engine::*;

/// The simple agents: the developer writes `$DEV_WRITES` (default: the
/// cents), the verifier says CONFORME, the auditor PASS; each reports
/// `$COST` dollars and 100 + 10 tokens. The verifier's first dispatch
/// reports a usage limit when `$LIMIT` is set (`in2s`: reset two seconds
/// ahead; `none`: no reset time). The developer first sleeps
/// `$AGENT_PAUSE` seconds when it is set.
const PRICED: &str = r#"printf '{"costUsd":%s,"tokensIn":100,"tokensOut":10}' "${COST:-0.3}" >"$LW_USAGE_FILE"
[ -n "${AGENT_PAUSE:-}" ] && [ "$role" = developer ] && sleep "$AGENT_PAUSE"
case $role in
  developer)
    mkdir -p src
    if [ -n "${DEV_BY_ITERATION:-}" ]; then
      case $LW_ITERATION in
        1) echo "total: 3" >src/total.txt ;;
        2) echo "total: 3 dollars" >src/total.txt ;;
        *) echo "total: 3.75 cents" >src/total.txt ;;
      esac
    else
      echo "${DEV_WRITES:-total: 3.75 cents}" >src/total.txt
    fi
    echo done
    ;;
  verifier)
    if [ -n "${LIMIT:-}" ] && [ ! -f "$out/limited-once" ]; then
      touch "$out/limited-once"
      case $LIMIT in
        in2s) until=$(date -u -d '+2 seconds' +%Y-%m-%dT%H:%M:%S.%NZ)
              printf '{"limited":true,"until":"%s","message":"usage limit reached, resets soon"}' "$until" >"$LW_USAGE_FILE" ;;
        none) printf '{"limited":true,"message":"usage limit reached"}' >"$LW_USAGE_FILE" ;;
      esac
      echo "usage limit reached" >&2
      exit 1
    fi
    conforme
    ;;
  auditor) pass ;;
esac
"#;

fn config(extra_run: &str, budget: &str) -> String {
    format!(
        "[run]\ntest = \"true\"\nmax_rounds = 3\ngrace = \"1s\"\n{extra_run}\n{}\n{budget}",
        agent_tables("priced.sh", &["developer", "verifier", "auditor"])
    )
}

fn project(extra_run: &str, budget: &str) -> Project {
    let p = Project::new(&config(extra_run, budget));
    p.write_agent("priced.sh", PRICED);
    p
}

fn seq(e: &Value) -> u64 {
    e["seq"].as_u64().unwrap_or(0)
}

/// The seq of `agent.started` of dispatch `n`, when there is one.
fn started(evs: &[Value], n: u64) -> Option<u64> {
    evs.iter()
        .find(|e| e["type"] == "agent.started" && e["dispatch"] == n)
        .map(seq)
}

const BUDGET: &str = "[budget]\nusd = 0.5\nwall = \"1h\"\n";

#[test]
fn the_budget_gate_opens_before_the_dispatch_that_would_cross_it_and_raise_goes_on() {
    let p = project("", BUDGET);
    let engine = p.spawn_run(true);
    let gate = p.wait_for_gate("the budget gate");
    assert_eq!(gate["kind"], "budget", "{gate:#}");
    assert_eq!(gate["subject"], "usd");
    // $0.3 + $0.3 spent by the developer and the verifier: the auditor's
    // dispatch waits; it never started.
    let evs = p.events();
    assert_eq!(started(&evs, 3), None, "{evs:#?}");
    assert!(started(&evs, 2).is_some_and(|s| s < seq(&gate)));
    assert_eq!(gate["evidence"]["spent"], "$0.6000");
    assert_eq!(gate["evidence"]["limit"], "$0.5000");
    assert_eq!(gate["evidence"]["raiseBy"], "$0.5000");
    assert!(
        gate["summary"]
            .as_str()
            .unwrap()
            .starts_with("budget usd: spent $0.6000 of $0.5000: the next dispatch (auditor)"),
        "{gate:#}"
    );
    p.decide(gate["id"].as_str().unwrap(), "raise");
    let out = engine.wait_with_output();
    p.assert_exit(&out, 0);
    let ended = p.of_type("run.ended");
    assert_eq!(ended[0]["status"], "complete");
    // The auditor ran once the limit was $1.00.
    let evs = p.events();
    assert!(started(&evs, 3).is_some());
    let report = std::fs::read_to_string(p.pipeline().join("report.md")).unwrap();
    assert!(
        report.contains("Budget (spent / limit): usd $0.9000 / $1.0000"),
        "{report}"
    );
}

#[test]
fn stop_on_the_budget_gate_ends_the_run_stopped() {
    let p = project("", BUDGET);
    let engine = p.spawn_run(true);
    let gate = p.wait_for_gate("the budget gate");
    p.decide(gate["id"].as_str().unwrap(), "stop");
    let out = engine.wait_with_output();
    p.assert_exit(&out, 1);
    assert_eq!(p.of_type("run.ended")[0]["status"], "stopped");
    assert_eq!(started(&p.events(), 3), None);
}

#[test]
fn a_per_role_limit_holds_only_that_roles_dispatches() {
    // The developer's limit is reached after its first dispatch; the
    // verifier and auditor run; the run completes without a second one.
    let p = project(
        "",
        "[budget]\nwall = \"1h\"\n\n[budget.developer]\nusd = 0.2\n",
    );
    let out = p.run_to_end();
    p.assert_exit(&out, 0);
    assert!(p.of_type("human.requested").is_empty());
    assert_eq!(p.of_type("agent.finished").len(), 3);
}

#[test]
fn a_usage_limit_two_seconds_ahead_is_waited_out_once() {
    let p = project("wait_for_limit = true", "");
    let mut c = p.cmd();
    c.env("LIMIT", "in2s").args(["run", "--headless", CONTRACT]);
    let out = c.output().expect("run");
    p.assert_exit(&out, 0);
    let limited = p.of_type("agent.limited");
    assert_eq!(limited.len(), 1, "{limited:#?}");
    assert_eq!(limited[0]["role"], "verifier");
    let until: jiff::Timestamp = limited[0]["until"].as_str().unwrap().parse().unwrap();
    // Waiting is said, with the time, in the journal and on the headless line.
    let notes = p.of_type("note");
    let kinds: Vec<String> = p.events().iter().map(|e| e.to_string()).collect();
    assert!(
        notes.iter().any(|n| n["text"]
            .as_str()
            .unwrap()
            .starts_with("waiting for the usage limit of verifier #2 to reset at ")),
        "{kinds:#?}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("waiting for the usage limit"), "{stdout}");
    // Dispatched again once, after the reset; no person was asked, and
    // the limited dispatch is no failure.
    let again = p.of_type_where("agent.started", "role", "verifier");
    assert_eq!(again.len(), 2);
    let at: jiff::Timestamp = again[1]["at"].as_str().unwrap().parse().unwrap();
    // The journal's times are to the second.
    assert!(at.as_second() >= until.as_second(), "{at} before {until}");
    assert!(p.of_type("human.requested").is_empty());
    let rounds = p.of_type_where("gate.finished", "gate", "conformity");
    assert_eq!(rounds.len(), 1, "{rounds:#?}");
    assert!(rounds[0].get("structural").is_none_or(Value::is_null));
}

#[test]
fn an_engine_started_again_after_the_reset_passed_dispatches_at_once() {
    let p = project("wait_for_limit = true", "");
    let first = Engine::spawn(
        p.cmd()
            .env("LIMIT", "in2s")
            .args(["run", "--headless", CONTRACT]),
    );
    p.wait_for("the engine waiting out the limit", |e| {
        e.iter().any(|e| {
            e["type"] == "note"
                && e["text"]
                    .as_str()
                    .is_some_and(|t| t.starts_with("waiting for the usage limit"))
        })
    });
    let pid = rustix::process::Pid::from_raw(first.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    assert_eq!(first.wait().code(), Some(143));
    let limited = p.of_type("agent.limited");
    let until: jiff::Timestamp = limited[0]["until"].as_str().unwrap().parse().unwrap();
    p.wait_until("the reset time to pass", || jiff::Timestamp::now() > until);
    // No engine waited when the limit reset: the next one dispatches
    // again at once, says so, and asks nobody.
    let again = Engine::spawn(p.cmd().env("LIMIT", "in2s").args(["run", "--headless"]));
    p.wait_for("the run's end, or a person asked", |e| {
        e.iter()
            .any(|e| e["type"] == "run.ended" || e["type"] == "human.requested")
    });
    assert!(p.of_type("human.requested").is_empty());
    p.assert_exit(&again.wait_with_output(), 0);
    assert_eq!(
        p.of_type_where("agent.started", "role", "verifier").len(),
        2
    );
    assert!(
        p.of_type("note")
            .iter()
            .any(|n| n["text"].as_str().unwrap().contains("reset at ")
                && n["text"]
                    .as_str()
                    .unwrap()
                    .contains("while no engine waited")),
        "{:#?}",
        p.of_type("note")
    );
}

#[test]
fn a_limit_without_wait_or_without_a_reset_time_asks_a_person() {
    for (run, limit) in [("", "in2s"), ("wait_for_limit = true", "none")] {
        let p = project(run, "");
        let mut c = p.cmd();
        c.env("LIMIT", limit).args(["run", "--headless", CONTRACT]);
        let engine = Engine::spawn(&mut c);
        let gate = p.wait_for_gate("the usage-limit gate");
        assert_eq!(gate["kind"], "structural", "{gate:#}");
        assert_eq!(gate["gate"], "conformity");
        let summary = gate["summary"].as_str().unwrap();
        let why = if run.is_empty() {
            "[run] wait_for_limit is off"
        } else {
            "the CLI gave no reset time"
        };
        assert!(
            summary.contains("verifier #2 hit a usage limit") && summary.contains(why),
            "{summary}"
        );
        assert_eq!(
            p.of_type("note")
                .iter()
                .filter(|n| n["text"].as_str().unwrap().starts_with("waiting"))
                .count(),
            0
        );
        // Retry dispatches it again; the run completes.
        p.decide(gate["id"].as_str().unwrap(), "retry");
        let out = engine.wait_with_output();
        p.assert_exit(&out, 0);
        assert_eq!(
            p.of_type_where("agent.started", "role", "verifier").len(),
            2
        );
    }
}

#[test]
fn a_developer_that_changes_nothing_opens_stagnant_after_one_round() {
    let p = project("", "");
    let mut c = p.cmd();
    c.env("DEV_WRITES", "total: 3")
        .args(["run", "--headless", CONTRACT]);
    let engine = Engine::spawn(&mut c);
    let gate = p.wait_for_gate("the stagnant gate");
    assert_eq!(
        gate["kind"],
        "stagnant",
        "{gate:#}\n{:#?}",
        p.of_type("gate.started")
    );
    assert_eq!(gate["gate"], "floor");
    let (a, _) = assert_stagnant_unchanged(&gate);
    assert_eq!(a["rows"][0]["key"], "criterion 1");
    // The third round is not spent: two developer dispatches only.
    assert_eq!(
        p.of_type_where("agent.started", "role", "developer").len(),
        2
    );
    p.decide(gate["id"].as_str().unwrap(), "abort");
    let out = engine.wait_with_output();
    p.assert_exit(&out, 1);
    assert_eq!(p.of_type("run.ended")[0]["status"], "aborted");
    assert_eq!(
        p.of_type_where("agent.started", "role", "developer").len(),
        2
    );
}

#[test]
fn the_report_of_a_three_round_run_has_the_convergence_line() {
    let p = project("", "");
    let mut c = p.cmd();
    c.env("DEV_BY_ITERATION", "1")
        .env("COST", "0.25")
        .args(["run", "--headless", CONTRACT]);
    let out = c.output().expect("run");
    p.assert_exit(&out, 0);
    let report = std::fs::read_to_string(p.pipeline().join("report.md")).unwrap();
    assert!(report.contains("## Convergence"), "{report}");
    assert!(report.contains("- **GATE 0: 1 → 1 → 0 MET**"), "{report}");
    assert!(
        report.contains("  - round 3 (iter 3): 0 failing · fixed criterion 1 · $0.2500"),
        "{report}"
    );
    assert!(report.contains("- **GATE 1: 0 CONFORME**"), "{report}");
    let report = |format: &str| {
        let out = p
            .cmd()
            .args(["report", "--format", format])
            .output()
            .expect("report");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8")
    };
    let json: Value = serde_json::from_str(&report("json")).expect("JSON");
    let floor = &json["convergence"][0];
    assert_eq!(floor["gate"], "floor");
    let failing: Vec<usize> = floor["rounds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["failing"].as_array().unwrap().len())
        .collect();
    assert_eq!(failing, [1, 1, 0]);
    assert_eq!(floor["rounds"][2]["fixed"][0], "criterion 1");
    assert!(report("html").contains("<b>GATE 0: 1 → 1 → 0 MET</b>"));
}

#[test]
fn a_hard_budget_stops_the_dispatch_under_way_at_its_agent_time() {
    // Two seconds of agent time, hard: the developer, which would run for
    // a minute, is stopped at its deadline; the next dispatch waits for a
    // person.
    let p = project("", "[budget]\nwall = \"2s\"\nhard = true\n");
    let mut c = p.cmd();
    c.env("AGENT_PAUSE", "60")
        .args(["run", "--headless", CONTRACT]);
    let engine = Engine::spawn(&mut c);
    let gate = p.wait_for_gate("the budget gate");
    assert_eq!(gate["kind"], "budget", "{gate:#}");
    assert_eq!(gate["subject"], "wall");
    let finished = p.of_type("agent.finished");
    assert_eq!(finished.len(), 1, "{finished:#?}");
    assert_eq!(finished[0]["timedOut"], true, "{finished:#?}");
    let ms = finished[0]["durationMs"].as_u64().unwrap();
    assert!((2000..30_000).contains(&ms), "{ms}");
    p.decide(gate["id"].as_str().unwrap(), "stop");
    let out = engine.wait_with_output();
    p.assert_exit(&out, 1);
}
