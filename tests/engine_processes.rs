//! `loopwatch run` with agents that take as long as real ones and start
//! processes the way real ones do: a developer dispatch of more than 30 s;
//! agents, GATE 0 checks and repro tests that leave a grandchild in a
//! session of its own and a double-forked daemon behind, stopped whole
//! after the dispatch, at a deadline, at a stop and after `kill -9` of
//! `loopwatch run`; the headless output complete on a pipe while a person
//! is awaited; and an agent's end recorded as it happened.

mod support;

use std::io::BufRead;
use std::time::{Duration, Instant};

use rustix::process::Signal;
use support::assert_has;
use support::engine::*;

/// Shell lines that start the two kinds of detached process, write their
/// pids to `$TEST_OUT/<tag>-setsid.pid` and `<tag>-daemon.pid`, and wait
/// until both are written.
fn detach(tag: &str) -> String {
    format!(
        "setsid sh -c 'echo $$ > \"$TEST_OUT/{tag}-setsid.pid\"; exec sleep 300' </dev/null >/dev/null 2>&1 &\n\
         sh -c 'sh -c \"echo \\$\\$ > \\\"\\$TEST_OUT/{tag}-daemon.pid\\\"; exec sleep 300\" </dev/null >/dev/null 2>&1 &'\n\
         while [ ! -s \"$TEST_OUT/{tag}-setsid.pid\" ] || [ ! -s \"$TEST_OUT/{tag}-daemon.pid\" ]; do sleep 0.01; done\n"
    )
}

/// The pids `detach(tag)` wrote (waited for, bounded).
fn detached(p: &Project, tag: &str) -> Vec<u32> {
    ["setsid", "daemon"]
        .iter()
        .map(|k| p.pid_in(&format!("{tag}-{k}.pid")))
        .collect()
}

fn assert_gone(pids: &[u32], what: &str) {
    let alive: Vec<u32> = pids.iter().copied().filter(|&p| is_live(p)).collect();
    assert!(alive.is_empty(), "{what}: still running: {alive:?}");
}

/// Waits up to `within` for every pid to be gone.
fn wait_gone(pids: &[u32], within: Duration, what: &str) {
    assert!(
        poll(within, || !pids.iter().any(|&p| is_live(p))),
        "{what}: still running after {within:?}: {pids:?}"
    );
}

fn config(verifier_timeout: &str) -> String {
    format!(
        r#"[run]
test = "true"
grace = "1s"

[agents.developer]
command = "bash @AGENTS@/developer.sh developer"
timeout = "2m"

[agents.verifier]
command = "bash @AGENTS@/verifier.sh verifier"
timeout = "{verifier_timeout}"

[agents.auditor]
command = "bash @AGENTS@/agent.sh auditor"
timeout = "1m"
"#
    )
}

/// A project whose developer and verifier run `developer` and `verifier`
/// (after the prologue); the auditor passes.
fn project(developer: &str, verifier: &str, verifier_timeout: &str) -> Project {
    let p = Project::new(&config(verifier_timeout));
    p.write_agent("developer.sh", developer);
    p.write_agent("verifier.sh", verifier);
    p
}

const WORK: &str = "mkdir -p src; echo 'total: 3.75 cents' > src/total.txt\necho done\n";

#[test]
fn a_developer_dispatch_of_more_than_30_s_completes() {
    let p = project(&format!("sleep 31\n{WORK}"), "conforme\n", "1m");
    let out = p.run_to_end();
    p.assert_exit(&out, 0);
    let dev = &p.of_type_where("agent.finished", "role", "developer")[0];
    assert_eq!(dev["exitCode"], 0, "{dev}");
    assert!(dev["durationMs"].as_u64().unwrap() >= 31_000, "{dev}");
    assert_eq!(p.of_type("run.ended")[0]["status"], "complete");
}

#[test]
fn what_an_agent_leaves_behind_is_stopped_when_its_dispatch_ends() {
    let p = project(&format!("{}{WORK}", detach("dev")), "conforme\n", "1m");
    let run = p.spawn_run(true);
    p.wait_for("the developer's finish", |e| {
        e.iter()
            .any(|e| e["type"] == "agent.finished" && e["role"] == "developer")
    });
    // The finish is recorded once the tree is gone.
    assert_gone(&detached(&p, "dev"), "after the developer's dispatch");
    let dev = &p.of_type_where("agent.finished", "role", "developer")[0];
    assert!(dev["leftovers"].as_u64().unwrap() >= 2, "{dev}");
    p.assert_exit(&run.wait_with_output(), 0);
}

/// The program supervises its children whatever its file is named (here
/// a copy named `lw`): what the agent leaves behind is stopped with its
/// dispatch all the same.
#[test]
fn a_binary_under_another_name_still_supervises_its_agents() {
    let p = project(&format!("{}{WORK}", detach("renamed")), "conforme\n", "1m");
    let lw = p.out.join("lw");
    std::fs::copy(bin(), &lw).unwrap();
    let out = std::process::Command::new(&lw)
        .current_dir(&p.root)
        .env("TEST_OUT", &p.out)
        .env("LOOPWATCH_USER", "tester")
        .env_remove("LOOPWATCH_PIPELINE")
        .args(["run", "--headless", CONTRACT])
        .output()
        .unwrap();
    p.assert_exit(&out, 0);
    assert_gone(&detached(&p, "renamed"), "after the developer's dispatch");
    let dev = &p.of_type_where("agent.finished", "role", "developer")[0];
    assert!(dev["leftovers"].as_u64().unwrap() >= 2, "{dev}");
}

#[test]
fn what_an_agent_leaves_behind_is_stopped_at_its_deadline() {
    let p = project(WORK, &format!("{}sleep 300\n", detach("ver")), "3s");
    let run = p.spawn_run(true);
    // The round is recorded in the append after the finish: wait for both.
    p.wait_for("the verifier's timed-out finish and its round", |e| {
        e.iter().any(|e| {
            e["type"] == "agent.finished" && e["role"] == "verifier" && e["timedOut"] == true
        }) && e
            .iter()
            .any(|e| e["type"] == "gate.finished" && e["gate"] == "conformity")
    });
    assert_gone(&detached(&p, "ver"), "after the verifier's deadline");
    let f = &p.of_type_where("agent.finished", "role", "verifier")[0];
    assert_eq!(f["signal"], 15, "{f}");
    assert_eq!(f["signalFrom"], "deadline", "{f}");
    let round = &p.of_type_where("gate.finished", "gate", "conformity")[0];
    assert!(
        round["structural"]
            .as_str()
            .unwrap()
            .starts_with("agent-failed: timed out"),
        "{round}"
    );
    drop(run);
}

#[test]
fn what_an_agent_leaves_behind_is_stopped_when_the_run_is_stopped() {
    let p = project(
        &format!("{}sleep 300\n", detach("stop")),
        "conforme\n",
        "1m",
    );
    let run = p.spawn_run(true);
    let pids = detached(&p, "stop");
    signal(run.id(), Signal::TERM).unwrap();
    let out = run.wait_with_output();
    assert_eq!(out.status.code(), Some(143));
    assert_gone(&pids, "after SIGTERM to loopwatch run");
    let f = &p.of_type_where("agent.finished", "role", "developer")[0];
    assert_eq!(f["interrupted"], true, "{f}");
    assert_eq!(f["signalFrom"], "stop", "{f}");
}

#[test]
fn kill_9_of_loopwatch_run_stops_everything_it_started_within_5_s() {
    let p = project(
        &format!(
            "if [ -f \"$TEST_OUT/resumed\" ]; then {WORK}exit 0; fi\n{}echo $$ > \"$TEST_OUT/agent.pid\"\nwhile :; do date >> \"$TEST_OUT/writes\"; sleep 0.1; done\n",
            detach("k9")
        ),
        "conforme\n",
        "1m",
    );
    let run = p.spawn_run(true);
    let mut pids = detached(&p, "k9");
    pids.push(p.pid_in("agent.pid"));
    signal(run.id(), Signal::KILL).unwrap();
    let killed = Instant::now();
    drop(run);
    wait_gone(
        &pids,
        Duration::from_secs(5),
        "after kill -9 of loopwatch run",
    );
    assert!(killed.elapsed() < Duration::from_secs(5));
    // Nothing writes any more.
    let size = std::fs::metadata(p.out.join("writes")).unwrap().len();
    let later = Instant::now() + Duration::from_millis(400);
    while Instant::now() < later {
        std::thread::yield_now();
    }
    assert_eq!(std::fs::metadata(p.out.join("writes")).unwrap().len(), size);
    assert!(
        p.marked_processes().is_empty(),
        "{:?}",
        p.marked_processes()
    );
    // The next `loopwatch run` records the dispatch interrupted and resumes.
    std::fs::write(p.out.join("resumed"), "").unwrap();
    let out = p.cmd().args(["run", "--headless"]).output().unwrap();
    p.assert_exit(&out, 0);
    let f = p.of_type_where("agent.finished", "role", "developer");
    assert_eq!(f[0]["interrupted"], true, "{}", f[0]);
    assert_eq!(f[1]["exitCode"], 0, "{}", f[1]);
}

/// When the supervisors die with loopwatch (the whole group killed at
/// once, as an out-of-memory killer may), what the agent left behind
/// still carries its dispatch's marker: the next `loopwatch run` finds it
/// and stops it before it dispatches anything, and says so.
#[test]
fn the_next_run_stops_what_a_dead_engine_and_its_supervisors_left() {
    let p = project(
        &format!(
            "if [ -f \"$TEST_OUT/resumed\" ]; then {WORK}exit 0; fi\n{}sleep 300\n",
            detach("orphan")
        ),
        "conforme\n",
        "1m",
    );
    let run = p.spawn_run(true);
    let pids = detached(&p, "orphan");
    let supervisors: Vec<u32> = p
        .marked_processes()
        .into_iter()
        .filter(|&pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.split(|&b| b == 0).nth(1) == Some(b"__supervise".as_slice()))
        })
        .collect();
    let of_dispatch: Vec<u32> = {
        let dir = std::fs::canonicalize(p.pipeline()).unwrap();
        live_with_env(&format!("LOOPWATCH_DISPATCH={}#", dir.display()))
    };
    // Held still first, so none of them sees loopwatch go; then all killed.
    let held: Vec<u32> = if supervisors.is_empty() {
        // The supervisor carries no marker: it is the agent's parent.
        of_dispatch
            .iter()
            .filter_map(|&pid| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                let ppid: u32 = stat[stat.rfind(')')? + 2..]
                    .split_whitespace()
                    .nth(1)?
                    .parse()
                    .ok()?;
                std::fs::read(format!("/proc/{ppid}/cmdline"))
                    .is_ok_and(|c| c.split(|&b| b == 0).nth(1) == Some(b"__supervise".as_slice()))
                    .then_some(ppid)
            })
            .collect()
    } else {
        supervisors
    };
    assert!(!held.is_empty(), "no supervisor found");
    for &s in &held {
        let _ = signal(s, Signal::STOP);
    }
    let _ = signal(run.id(), Signal::KILL);
    for &s in &held {
        let _ = signal(s, Signal::KILL);
    }
    drop(run);
    wait_gone(&held, Duration::from_secs(5), "the supervisors");
    assert!(
        pids.iter().all(|&pid| is_live(pid)),
        "nothing was left behind to find: {pids:?}"
    );
    std::fs::write(p.out.join("resumed"), "").unwrap();
    let out = p.cmd().args(["run", "--headless"]).output().unwrap();
    p.assert_exit(&out, 0);
    assert_gone(&pids, "after the next loopwatch run");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_has(&said, "process(es) left running by an earlier engine");
}

/// A project whose contract's CHECK runs `$TEST_OUT/check.sh`, which
/// leaves [`detach`]`(tag)` behind and sleeps.
fn detaching_check(tag: &str) -> Project {
    let p = project(WORK, "conforme\n", "1m");
    let contract = std::fs::read_to_string(p.root.join(CONTRACT))
        .unwrap()
        .replace(
            "CHECK: grep -q cents src/total.txt && echo CENTS_OK",
            "CHECK: sh $TEST_OUT/check.sh && echo CENTS_OK",
        );
    std::fs::write(p.root.join(CONTRACT), contract).unwrap();
    commit_all(&p.root, "a check that detaches");
    let check = format!("{}sleep 300\n", detach(tag));
    std::fs::write(p.out.join("check.sh"), check).unwrap();
    p
}

#[test]
fn a_gate0_check_that_detaches_is_stopped_whole() {
    let p = detaching_check("check");
    let mut c = p.cmd();
    c.args(["run", "--headless", CONTRACT])
        .env("GATES_TIMEOUT", "3");
    let run = Engine::spawn(&mut c);
    p.wait_for("the floor round", |e| {
        e.iter()
            .any(|e| e["type"] == "gate.finished" && e["gate"] == "floor")
    });
    assert_gone(&detached(&p, "check"), "after the check's timeout");
    let round = &p.of_type_where("gate.finished", "gate", "floor")[0];
    assert_eq!(round["rows"][0]["state"], "NOT-MET", "{round}");
    assert!(
        round["rows"][0]["evidence"]
            .as_str()
            .unwrap()
            .contains("timeout=3s"),
        "{round}"
    );
    drop(run);
}

#[test]
fn a_gate0_check_is_stopped_whole_when_the_run_is_stopped() {
    let p = detaching_check("halt");
    let run = p.spawn_run(true);
    let pids = detached(&p, "halt");
    signal(run.id(), Signal::INT).unwrap();
    let out = run.wait_with_output();
    assert_eq!(out.status.code(), Some(130));
    assert_gone(&pids, "after SIGINT during GATE 0");
    assert!(p.of_type_where("gate.finished", "gate", "floor").is_empty());
}

#[test]
fn the_headless_output_on_a_pipe_is_complete_while_a_person_is_awaited() {
    // The verifier flags a file out of scope: the run waits on a person.
    let p = project(
        &format!("{WORK}echo all: > Makefile\n"),
        "printf 'VERIFY — VERDICT: ECARTS(1)\\nCONTRACT: %s\\nCRITERIA:\\n  1. The total shows cents — MET — ran the check\\nSCOPE: in-scope 1 files; out-of-scope: Makefile\\nFLOOR: clean\\nPROOF: read 2 files\\n' \"$LW_CONTRACT\"\n",
        "1m",
    );
    let mut run = p.spawn_run(true);
    let stdout = run.0.as_mut().unwrap().stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            let _ = tx.send(line);
        }
    });
    let gate = p.wait_for_gate("the out-of-scope gate");
    let seq = gate["seq"].as_u64().unwrap();
    // Every event up to the gate is on the pipe while the gate waits.
    let mut seen: Vec<u64> = Vec::new();
    let until = Instant::now() + Duration::from_secs(20);
    while !seen.contains(&seq) {
        let left = until.saturating_duration_since(Instant::now());
        let line = rx
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("printed so far: {seen:?}; the gate is #{seq}"));
        let n: u64 = line
            .strip_prefix('#')
            .and_then(|l| l.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("not an event line: {line}"));
        seen.push(n);
    }
    let first = seen[0];
    let want: Vec<u64> = (first..=seq).collect();
    assert_eq!(seen, want, "one line per event, in order, none missing");
    assert!(
        p.open_gates()
            .contains(&gate["id"].as_str().unwrap().to_string())
    );
    drop(run);
}

#[test]
fn an_agents_end_is_recorded_with_its_last_words() {
    let p = project(
        "echo 'connecting…' >&2\necho 'API Error: 401 Unauthorized · check your key' >&2\nexit 1\n",
        "conforme\n",
        "1m",
    );
    let run = p.spawn_run(true);
    let gate = p.wait_for_gate("the developer's structural gate");
    let f = &p.of_type_where("agent.finished", "role", "developer")[0];
    assert_eq!(f["exitCode"], 1, "{f}");
    assert_eq!(
        f["lastWords"],
        serde_json::json!([
            "connecting…",
            "API Error: 401 Unauthorized · check your key"
        ]),
        "{f}"
    );
    let summary = gate["summary"].as_str().unwrap();
    assert_has(
        summary,
        "exited with status 1: connecting… · API Error: 401 Unauthorized",
    );
    drop(run);
}

/// Repro tests run through the same runner: a test that detaches is
/// stopped whole at its deadline and at a stop.
#[test]
fn a_repro_test_that_detaches_is_stopped_whole() {
    use loopwatch::engine::dispatch::Settings;
    use loopwatch::engine::review::verify_by_test::exec::{Ran, TestJob, run_test};
    use loopwatch::engine::review::verify_by_test::runner::{Invocation, Runner};
    use loopwatch::journal::Pipeline;
    use loopwatch::model::event::RunInfo;

    let p = project(WORK, "conforme\n", "1m");
    let settings = Settings {
        pipeline: Pipeline::at(p.root.join(".pipeline")),
        run: RunInfo::default(),
        grace: Duration::from_millis(500),
        log_limit: 1 << 20,
        contract: None,
        left: Default::default(),
    };
    std::fs::create_dir_all(p.root.join(".pipeline")).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for (tag, stop_it) in [("vbt-deadline", false), ("vbt-stop", true)] {
        let invocation = Invocation {
            runner: Runner::Cargo,
            env: vec![("TEST_OUT".into(), p.out.display().to_string())],
            program: "sh".into(),
            args: vec!["-c".into(), format!("{}sleep 300\n", detach(tag))],
        };
        let log = p.root.join(format!(".pipeline/{tag}.test.log"));
        let (tx, mut rx) = tokio::sync::watch::channel(None);
        let limit = if stop_it { 120 } else { 3 };
        let job = TestJob {
            invocation: &invocation,
            log: log.clone(),
            deadline: Instant::now() + Duration::from_secs(limit),
            tag: tag.to_string(),
        };
        let out = p.out.clone();
        let stopper = std::thread::spawn(move || {
            if stop_it {
                let f = out.join(format!("{tag}-daemon.pid"));
                poll(Duration::from_secs(60), || f.exists());
                let _ = tx.send(Some(143));
            }
            tx
        });
        let ran = rt.block_on(run_test(&settings, job, &mut rx)).unwrap();
        let _tx = stopper.join().unwrap();
        if stop_it {
            assert_eq!(ran, Ran::Stopped(143));
        } else {
            assert_eq!(ran, Ran::TimedOut { waiting: false });
        }
        assert_gone(&detached(&p, tag), tag);
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.trim_end().ends_with(']'), "{text}");
    }
}
