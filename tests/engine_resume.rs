//! `kill -9` of the engine after every event of a scripted run, then
//! `loopwatch run` again: the run continues from the journal, with one
//! `run.started`, no gate round recorded twice, every interrupted dispatch
//! recorded and redone fresh, and never two agents alive at once.

mod support;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use support::engine::*;

/// Events of the run's final history: a dispatch cut by a kill (its start
/// and its interrupted finish) is not progress, its fresh redo is.
fn progress(evs: &[serde_json::Value]) -> usize {
    let cut: BTreeSet<String> = evs
        .iter()
        .filter(|e| e["type"] == "agent.finished" && e["interrupted"] == true)
        .map(|e| e["dispatch"].to_string())
        .collect();
    evs.iter()
        .filter(|e| {
            let d = e["dispatch"].to_string();
            let cut_finish = e["type"] == "agent.finished" && e["interrupted"] == true;
            let cut_start = e["type"] == "agent.started" && cut.contains(&d);
            !(cut_finish || cut_start)
        })
        .count()
}

#[test]
fn kill_9_after_every_event_then_resume() {
    let p = Project::scripted();
    let mut kills = 0;
    let mut last_len = 0;
    let deadline = Instant::now() + Duration::from_secs(400);
    loop {
        assert!(
            Instant::now() < deadline,
            "the run did not finish; {kills} kills"
        );
        for id in p.open_gates() {
            p.decide(&id, "approve");
        }
        let mut cmd = p.cmd();
        cmd.env("AGENT_PAUSE", "0.05").args(["run", "--headless"]);
        if p.of_type("run.started").is_empty() {
            cmd.arg(CONTRACT);
        }
        let mut child = cmd
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Kill the engine as soon as it appended one event, or let it end.
        let step_deadline = std::time::Instant::now() + Duration::from_secs(60);
        let ended = loop {
            assert!(
                std::time::Instant::now() < step_deadline,
                "the engine neither appended nor ended within a minute"
            );
            if let Some(st) = child.try_wait().unwrap() {
                break Some(st);
            }
            let n = progress(&p.events());
            if n > last_len {
                break None;
            }
            if !p.open_gates().is_empty() {
                break None;
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        match ended {
            Some(st) => {
                assert_eq!(st.code(), Some(0), "the resumed run ends complete");
                break;
            }
            None => {
                let _ = child.kill();
                let _ = child.wait();
                kills += 1;
            }
        }
        last_len = progress(&p.events());
    }
    assert!(kills >= 10, "killed at only {kills} steps");
    let evs = p.events();
    assert_eq!(p.of_type("run.started").len(), 1);
    assert_eq!(p.of_type("run.ended").len(), 1);
    assert_eq!(p.of_type("run.ended")[0]["status"], "complete");
    // No round recorded twice.
    let mut rounds = BTreeSet::new();
    for g in evs.iter().filter(|e| e["type"] == "gate.finished") {
        let key = (
            g["gate"].to_string(),
            g["iteration"].to_string(),
            g["round"].to_string(),
        );
        assert!(rounds.insert(key.clone()), "round {key:?} recorded twice");
    }
    // Every dispatch has exactly one finish; the killed ones are interrupted.
    let started = p.of_type("agent.started");
    let finished = p.of_type("agent.finished");
    assert_eq!(started.len(), finished.len());
    for s in &started {
        let f: Vec<_> = finished
            .iter()
            .filter(|f| f["dispatch"] == s["dispatch"])
            .collect();
        assert_eq!(f.len(), 1, "{s}");
    }
    assert!(
        finished.iter().any(|f| f["interrupted"] == true),
        "some dispatch was cut by a kill"
    );
    // One kill after every append of the final history: the events written
    // together (run.started + iteration.started, dev.dispatched +
    // iteration.started twice, gate.finished + human.requested), the
    // person's decision and the end are the only steps without their own.
    let mut kinds = std::collections::BTreeMap::<String, usize>::new();
    for e in &evs {
        *kinds
            .entry(e["type"].as_str().unwrap_or("").to_string())
            .or_default() += 1;
    }
    assert!(
        kills + 6 >= progress(&evs),
        "{kills} kills for {} steps: {kinds:?}",
        progress(&evs)
    );
}
