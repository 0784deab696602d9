//! Sending a gate's notification: the webhook against a real HTTP server on
//! 127.0.0.1 (json, slack, ntfy; sent once however many processes watch),
//! the `on_human_gate` JSON on stdin, and the bad cases: a URL that is not
//! http, an unreachable host, a slow server, a redirect loop.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use loopwatch::journal::{Pipeline, read_all};
use loopwatch::model::HumanGateKind;
use loopwatch::model::rules::GateRequest;
use loopwatch::notify::{Announced, Notifier, NotifySettings, Webhook, WebhookFormat};
use loopwatch::recorder::Recorder;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_loopwatch");

/// One request as the server read it.
#[derive(Debug, Clone)]
struct Req {
    line: String,
    headers: Vec<(String, String)>,
    body: String,
}

/// What the test server does with each request.
#[derive(Clone, Copy)]
enum Behaviour {
    Ok,
    /// Reads the request, never answers.
    Silent,
    /// 302 back to itself.
    RedirectLoop,
}

/// A tiny HTTP/1.1 server on 127.0.0.1, one thread per connection.
struct Server {
    url: String,
    got: Arc<Mutex<Vec<Req>>>,
}

impl Server {
    fn start(b: Behaviour) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let got = Arc::new(Mutex::new(Vec::new()));
        let sink = got.clone();
        let target = url.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { break };
                let (sink, target) = (sink.clone(), target.clone());
                std::thread::spawn(move || serve(conn, b, &sink, &target));
            }
        });
        Server { url, got }
    }

    fn requests(&self) -> Vec<Req> {
        self.got.lock().unwrap().clone()
    }

    fn wait_for(&self, n: usize) -> Vec<Req> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let r = self.requests();
            if r.len() >= n {
                return r;
            }
            assert!(
                Instant::now() < deadline,
                "{} requests, wanted {n}",
                r.len()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn serve(conn: TcpStream, b: Behaviour, sink: &Mutex<Vec<Req>>, target: &str) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut headers = Vec::new();
    let mut len = 0;
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).unwrap();
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':').unwrap();
        if k.eq_ignore_ascii_case("content-length") {
            len = v.trim().parse().unwrap();
        }
        headers.push((k.to_ascii_lowercase(), v.trim().to_string()));
    }
    let mut body = vec![0; len];
    reader.read_exact(&mut body).unwrap();
    sink.lock().unwrap().push(Req {
        line: line.trim_end().into(),
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    });
    let mut conn = conn;
    match b {
        Behaviour::Ok => {
            let _ = conn
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        }
        Behaviour::RedirectLoop => {
            let _ = write!(
                conn,
                "HTTP/1.1 302 Found\r\nLocation: {target}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
        }
        Behaviour::Silent => std::thread::sleep(Duration::from_secs(20)),
    }
}

/// A pipeline in a temp worktree with one open out-of-scope gate whose
/// summary holds a secret and whose evidence holds file contents.
fn pipeline_with_gate() -> (tempfile::TempDir, Pipeline, String) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let p = Pipeline::at(root.join(".pipeline"));
    let (id, _) = Recorder::new(p.clone())
        .ask(GateRequest {
            kind: HumanGateKind::OutOfScope,
            gate: None,
            subject: "src/config.rs".into(),
            summary: "adds token ghp_abcdefghijklmnopqrstuvwxyz0123456789 to the config".into(),
            evidence: serde_json::json!({"output": "FILE CONTENTS MUST NOT LEAVE"}),
        })
        .unwrap();
    (tmp, p, id)
}

fn notifier(url: &str, format: WebhookFormat, timeout: Duration) -> Notifier {
    Notifier {
        hook: None,
        settings: NotifySettings {
            webhook: Some(Webhook::new(url, format, timeout).unwrap()),
            ..NotifySettings::default()
        },
    }
}

/// Asserts that the first failure of `a` says `want`.
fn assert_failed(a: &Announced, want: &str) {
    let first = a.failures.first().map_or("", String::as_str);
    assert!(first.contains(want), "{want:?} not in {:?}", a.failures);
}

fn notify_sent(p: &Pipeline) -> usize {
    read_all(&p.journal_path())
        .unwrap()
        .events
        .iter()
        .filter(|e| e.body.type_name() == "notify.sent")
        .count()
}

#[test]
fn the_webhook_gets_the_scrubbed_notice_once_however_many_processes_try() {
    let server = Server::start(Behaviour::Ok);
    let (tmp, p, id) = pipeline_with_gate();
    let n = notifier(&server.url, WebhookFormat::Json, Duration::from_secs(10));
    let barrier = Arc::new(Barrier::new(4));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let (n, p, id, b) = (n.clone(), p.clone(), id.clone(), barrier.clone());
            std::thread::spawn(move || {
                b.wait();
                n.announce(&p, &id, 1).unwrap()
            })
        })
        .collect();
    let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    assert_eq!(results.iter().filter(|a| a.sent).count(), 1);
    assert!(results.iter().all(|a| a.failures.is_empty()), "{results:?}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1, "{reqs:?}");
    assert_eq!(notify_sent(&p), 1);
    let r = &reqs[0];
    assert_eq!(r.line, "POST /hook HTTP/1.1");
    assert!(
        r.headers
            .contains(&("content-type".into(), "application/json".into()))
    );
    let v: Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(v["id"], id.as_str());
    assert_eq!(v["kind"], "out-of-scope");
    assert_eq!(v["subject"], "src/config.rs");
    assert_eq!(v["notice"], 1);
    assert!(v["summary"].as_str().unwrap().contains("[redacted:"), "{v}");
    assert!(
        !r.body.contains("ghp_abcdefghijklmnopqrstuvwxyz"),
        "{}",
        r.body
    );
    assert!(!r.body.contains("FILE CONTENTS"), "{}", r.body);
    assert!(v["waitingSince"].as_str().unwrap().ends_with('Z'));
    assert!(
        v["attach"]
            .as_str()
            .unwrap()
            .starts_with("loopwatch watch '")
    );
    assert_eq!(
        v["worktree"].as_str().unwrap(),
        tmp.path().display().to_string()
    );
    // The next notification is a reminder: claimed as number 2, not 1 again.
    assert!(!n.announce(&p, &id, 1).unwrap().sent);
    assert!(n.announce(&p, &id, 2).unwrap().sent);
    let v: Value = serde_json::from_str(&server.wait_for(2)[1].body).unwrap();
    assert_eq!(v["notice"], 2);
}

#[test]
fn slack_and_ntfy_formats() {
    let server = Server::start(Behaviour::Ok);
    let (_tmp, p, id) = pipeline_with_gate();
    let t = Duration::from_secs(10);
    notifier(&server.url, WebhookFormat::Slack, t)
        .announce(&p, &id, 1)
        .unwrap();
    notifier(&server.url, WebhookFormat::Ntfy, t)
        .announce(&p, &id, 2)
        .unwrap();
    let reqs = server.wait_for(2);
    let slack: Value = serde_json::from_str(&reqs[0].body).unwrap();
    let text = slack["text"].as_str().unwrap();
    assert!(
        text.starts_with(&format!("loopwatch: {id} (out-of-scope) waits on you")),
        "{text}"
    );
    assert!(text.contains("[redacted:"), "{text}");
    let ntfy = &reqs[1];
    assert!(
        ntfy.body.contains("waits on you (reminder)"),
        "{}",
        ntfy.body
    );
    assert!(
        ntfy.headers
            .contains(&("title".into(), format!("loopwatch: {id} waits"))),
        "{:?}",
        ntfy.headers
    );
}

#[test]
fn unreachable_slow_and_looping_servers_fail_within_the_timeout_and_say_why() {
    let (_tmp, p, id) = pipeline_with_gate();
    // Unreachable: a port that was just closed.
    let closed = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/hook", l.local_addr().unwrap())
    };
    let a = notifier(&closed, WebhookFormat::Json, Duration::from_secs(5))
        .announce(&p, &id, 1)
        .unwrap();
    assert!(a.sent);
    assert_eq!(a.failures.len(), 1);
    assert!(
        a.failures[0].starts_with(&format!("POST {closed}: ")),
        "{:?}",
        a.failures
    );

    let slow = Server::start(Behaviour::Silent);
    let a = notifier(&slow.url, WebhookFormat::Json, Duration::from_millis(300))
        .announce(&p, &id, 2)
        .unwrap();
    assert_failed(&a, "no answer within 0.3 s");

    let looping = Server::start(Behaviour::RedirectLoop);
    let a = notifier(&looping.url, WebhookFormat::Json, Duration::from_secs(10))
        .announce(&p, &id, 3)
        .unwrap();
    assert_failed(&a, "more than 3 redirects");
    assert_eq!(
        looping.requests().len(),
        4,
        "the first request and 3 redirects"
    );
    // Nothing lost: the journal is whole, the gate still open.
    let batch = read_all(&p.journal_path()).unwrap();
    assert!(batch.problems.is_empty());
    assert_eq!(notify_sent(&p), 3);
    assert!(
        loopwatch::model::fold(&batch.events)
            .human_gate(&id)
            .unwrap()
            .is_open()
    );
}

#[test]
fn on_human_gate_gets_the_notice_as_json_on_stdin() {
    let (tmp, p, id) = pipeline_with_gate();
    let out = tmp.path().join("hook.out");
    let n = Notifier {
        hook: Some(format!(
            "cat > '{}' && echo \"$LOOPWATCH_GATE\" >> '{}'",
            out.display(),
            out.display()
        )),
        settings: NotifySettings::default(),
    };
    let a = n.announce(&p, &id, 1).unwrap();
    assert!(a.sent && a.failures.is_empty(), "{a:?}");
    let text = std::fs::read_to_string(&out).unwrap();
    let mut lines = text.lines();
    let v: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(lines.next(), Some(id.as_str()));
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "id",
            "kind",
            "run",
            "worktree",
            "subject",
            "summary",
            "waitingSince",
            "attach",
            "notice"
        ]
    );
    assert!(v["summary"].as_str().unwrap().contains("[redacted:"));

    let failing = Notifier {
        hook: Some("exit 3".into()),
        settings: NotifySettings::default(),
    };
    let a = failing.announce(&p, &id, 2).unwrap();
    assert_failed(&a, "`exit 3` exited with status 3");
}

#[test]
fn a_hook_past_its_time_is_stopped_with_its_children() {
    let (tmp, p, id) = pipeline_with_gate();
    let state = loopwatch::journal::snapshot(&p).unwrap().unwrap().state;
    let notice = loopwatch::notify::GateNotice::new(&state, state.human_gate(&id).unwrap(), &p, 1);
    let pidfile = tmp.path().join("child.pid");
    let cmd = format!("sleep 30 & echo $! > '{}'; wait", pidfile.display());
    let err = loopwatch::notify::hook::run(&cmd, &notice, Duration::from_millis(300)).unwrap_err();
    assert!(err.to_string().contains("ran past"), "{err}");
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    let proc_dir = format!("/proc/{}", pid.trim());
    let deadline = Instant::now() + Duration::from_secs(10);
    // The grandchild dies with the group (a zombie has no cmdline).
    while std::fs::read(format!("{proc_dir}/cmdline")).is_ok_and(|c| !c.is_empty()) {
        assert!(Instant::now() < deadline, "the hook's child outlived it");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn two_awaits_with_a_webhook_send_it_once_and_a_bad_url_is_refused() {
    let server = Server::start(Behaviour::Ok);
    let (tmp, p, id) = pipeline_with_gate();
    let config = tmp.path().join("config");
    std::fs::create_dir_all(config.join("loopwatch")).unwrap();
    std::fs::write(
        config.join("loopwatch/config.toml"),
        format!("[notify]\nwebhook = \"{}\"\n", server.url),
    )
    .unwrap();
    let spawn = || {
        Command::new(BIN)
            .args(["await", &id, "--timeout", "60"])
            .current_dir(tmp.path())
            .env("XDG_CONFIG_HOME", &config)
            .env("LOOPWATCH_USER", "dana")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    server.wait_for(1);
    let out = Command::new(BIN)
        .args(["decide", &id, "deny", "--reason", "not now"])
        .current_dir(tmp.path())
        .env("XDG_CONFIG_HOME", &config)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("\"expired\":false"));
    }
    assert_eq!(server.requests().len(), 1);
    assert_eq!(notify_sent(&p), 1);

    for (url, want) in [
        ("ftp://127.0.0.1/x", "is not an http:// or https:// URL"),
        ("https:///no-host", "is not a valid URL"),
    ] {
        std::fs::write(
            config.join("loopwatch/config.toml"),
            format!("bell = true\n[notify]\nwebhook = \"{url}\"\n"),
        )
        .unwrap();
        let out = Command::new(BIN)
            .args(["config"])
            .env("XDG_CONFIG_HOME", &config)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("config.toml:2:1: [notify] webhook:"), "{err}");
        assert!(err.contains(want), "{err}");
    }
}
