//! The engine honours expiry and notifications while a gate waits on a
//! person: `[expiry.<kind>]` of `loopwatch.toml` expires the gate through
//! `loopwatch run --headless` (recorded as `human.expired`, never as a
//! decision, and the loop goes on with the expiry's action); a decision
//! racing that expiry gives exactly one outcome; `[notify] webhook` is
//! POSTed once although `loopwatch await` watches the same gate with the
//! same webhook.

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::engine::*;

/// The scripted project with extra tables in its `loopwatch.toml`.
fn project(extra: &str) -> Project {
    Project::new(&format!("{SCRIPTED}\n{extra}"))
}

#[test]
fn the_engine_expires_a_gate_of_a_kind_with_an_expiry_and_goes_on_with_its_action() {
    let p = project("[expiry.out-of-scope]\nafter = \"1s\"\naction = \"deny\"\n");
    let _engine = p.spawn_run(true);
    let gate = p.wait_for_gate("the out-of-scope gate");
    assert_eq!(gate["kind"], "out-of-scope");
    // The engine's recorder stamped the config's rule on the gate.
    assert_eq!(gate["expires"]["after"], "1s");
    assert_eq!(gate["expires"]["action"], "deny");
    let id = gate["id"].as_str().unwrap().to_string();
    // Nobody decides: the engine records the expiry, then goes on.
    let evs = p.wait_for("the expiry and the loop going on after it", |e| {
        e.iter()
            .position(|e| e["type"] == "human.expired")
            .is_some_and(|k| e.len() > k + 1)
    });
    let k = evs
        .iter()
        .position(|e| e["type"] == "human.expired")
        .unwrap();
    assert_eq!(evs[k]["id"], id.as_str());
    assert_eq!(evs[k]["action"], "deny");
    assert_eq!(evs[k]["after"], "1s");
    assert!(
        !evs.iter().any(|e| e["type"] == "human.decided"),
        "an expiry is never a decision"
    );
    // Deny sends the change back to the developer: the next step is the hand-off.
    assert_eq!(evs[k + 1]["type"], "dev.dispatched", "{:#?}", &evs[k..]);
}

#[test]
fn a_decision_racing_the_engines_expiry_gives_exactly_one_outcome() {
    let p = project("[expiry.out-of-scope]\nafter = \"2s\"\naction = \"deny\"\n");
    let _engine = p.spawn_run(true);
    let gate = p.wait_for_gate("the out-of-scope gate");
    let id = gate["id"].as_str().unwrap().to_string();
    let opened: jiff::Timestamp = gate["at"].as_str().unwrap().parse().unwrap();
    let due = opened
        .checked_add(jiff::SignedDuration::from_secs(2))
        .unwrap();
    // Decide at the moment the expiry falls due.
    while jiff::Timestamp::now() < due {
        std::thread::sleep(Duration::from_millis(1));
    }
    let d = p
        .cmd()
        .args(["decide", &id, "approve", "--reason", "at the last second"])
        .output()
        .unwrap();
    let evs = p.wait_for("one outcome", |e| {
        e.iter()
            .any(|e| e["type"] == "human.expired" || e["type"] == "human.decided")
    });
    let outcomes: Vec<&Value> = evs
        .iter()
        .filter(|e| e["type"] == "human.expired" || e["type"] == "human.decided")
        .filter(|e| e["id"] == id.as_str())
        .collect();
    assert_eq!(outcomes.len(), 1, "{outcomes:#?}");
    let stderr = String::from_utf8_lossy(&d.stderr);
    if outcomes[0]["type"] == "human.expired" {
        // The person is told the gate expired first.
        assert!(!d.status.success(), "decide succeeded after the expiry");
        assert!(stderr.contains("expired"), "{stderr}");
    } else {
        assert!(d.status.success(), "{stderr}");
        assert_eq!(outcomes[0]["decision"], "approve");
    }
}

/// Requests received by a tiny HTTP server on 127.0.0.1.
fn server() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let got = Arc::new(Mutex::new(Vec::new()));
    let sink = got.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { break };
            let mut reader = BufReader::new(conn.try_clone().unwrap());
            let mut len = 0;
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).unwrap_or(0) == 0 {
                    break;
                }
                let h = h.trim_end();
                if h.is_empty() {
                    break;
                }
                if let Some((k, v)) = h.split_once(':')
                    && k.eq_ignore_ascii_case("content-length")
                {
                    len = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; len];
            let _ = reader.read_exact(&mut body);
            sink.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&body).into_owned());
            let mut conn = conn;
            let _ = conn
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        }
    });
    (url, got)
}

/// Waits (at most a minute) until the server has received a request.
fn wait_for_webhook(got: &Mutex<Vec<String>>) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while got.lock().unwrap().is_empty() {
        assert!(Instant::now() < deadline, "the webhook never came");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn the_webhook_is_sent_once_with_the_engine_and_await_both_watching() {
    let (url, got) = server();
    // Both send 1 s after the gate opens: both are waiting when it falls due.
    let notify = format!("[notify]\nwebhook = \"{url}\"\ndelay = \"1s\"\n");
    let p = project(&notify);
    let config = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(config.path().join("loopwatch")).unwrap();
    std::fs::write(config.path().join("loopwatch/config.toml"), &notify).unwrap();
    let _engine = p.spawn_run(true);
    let id = p.wait_for_gate("the out-of-scope gate")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let waiting = Engine::spawn(
        p.cmd()
            .args(["await", &id, "--timeout", "120"])
            .env("XDG_CONFIG_HOME", config.path()),
    );
    wait_for_webhook(&got);
    // Claimed in the journal before sending: a second sender finds it
    // claimed. Deciding closes the gate: nothing can be sent after it.
    p.decide(&id, "approve");
    let out = waiting.wait_with_output();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(printed["decision"], "approve");
    p.wait_for("the loop going on after the decision", |e| {
        e.iter().any(|e| e["type"] == "human.decided")
            && e.last().is_some_and(|l| l["type"] != "human.decided")
    });
    let bodies = got.lock().unwrap().clone();
    assert_eq!(bodies.len(), 1, "{bodies:#?}");
    let body: Value = serde_json::from_str(&bodies[0]).unwrap();
    assert_eq!(body["id"], id.as_str());
    let sent: Vec<Value> = p.of_type("notify.sent");
    assert_eq!(sent.len(), 1, "{sent:#?}");
}

#[test]
fn the_engine_alone_sends_the_webhook_of_its_config() {
    let (url, got) = server();
    let p = project(&format!("[notify]\nwebhook = \"{url}\"\n"));
    let _engine = p.spawn_run(true);
    let id = p.wait_for_gate("the out-of-scope gate")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let sent = p.wait_for("notify.sent", |e| {
        e.iter().any(|e| e["type"] == "notify.sent")
    });
    let claim = sent.iter().find(|e| e["type"] == "notify.sent").unwrap();
    assert_eq!(claim["id"], id.as_str());
    wait_for_webhook(&got);
    let body: Value = serde_json::from_str(&got.lock().unwrap()[0]).unwrap();
    assert_eq!(body["kind"], "out-of-scope");
    assert_eq!(body["subject"], "Makefile");
}
