//! `loopwatch run` in a real terminal: the header names the agent running,
//! `q` asks before stopping the run, and an out-of-scope gate decided in
//! the TUI lets the run go on to its end.

use super::support::engine::Project;
use super::support::serial;
use super::{ROWS, approve_in_dialog, line, run_session};

#[test]
fn a_decision_in_the_tui_of_loopwatch_run_lets_the_run_finish() {
    let _serial = serial();
    let p = Project::scripted();
    // Every scripted agent takes a second: long enough to be seen running.
    let s = run_session(&p, &[("AGENT_PAUSE", "1")]);
    s.wait_for("the developer running in the header", |sc| {
        line(sc, 1).contains("▶ developer · iter 1 · #1 · ")
    });

    s.wait_for("the out-of-scope gate", |sc| {
        line(sc, 1).starts_with(" ⚑ WAITING ON YOU")
    });
    // While the run waits, q asks first; n keeps it going.
    s.send(&["q"]);
    s.wait_for("the stop question", |sc| {
        line(sc, ROWS as usize - 1).starts_with(" stop the run? agents are stopped")
    });
    s.send(&["n"]);
    s.wait_for("the run going on", |sc| {
        line(sc, ROWS as usize - 1) == " the run goes on"
    });

    s.send(&["n"]);
    s.wait_for("the gate selected on the Gates tab", |sc| {
        sc.lines().any(|l| l.starts_with("›⚑ WAITING ON YOU   hg-"))
    });
    approve_in_dialog(&s, "Makefile", "the build needs a Makefile");

    let evs = p.wait_for("the run to end", |e| {
        e.iter().any(|e| e["type"] == "run.ended")
    });
    let ended = evs.iter().find(|e| e["type"] == "run.ended").unwrap();
    assert_eq!(ended["status"], "complete", "{ended}");
    let decided = evs.iter().find(|e| e["type"] == "human.decided").unwrap();
    assert_eq!(decided["decision"], "approve");
    assert_eq!(decided["reason"], "the build needs a Makefile");
    s.wait_for("no agent running once the run ended", |sc| {
        !line(sc, 1).contains('▶') && line(sc, 1).starts_with(" ✓ ENDED COMPLETE")
    });
    // The run is over: q leaves at once, with the run's status.
    s.send(&["q"]);
    assert_eq!(s.wait_dead(), 0, "{}", s.screen());
}
