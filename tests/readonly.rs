//! A synced pipeline, read-only here: watched (TUI and headless), replayed,
//! reported, awaited and asked about without a byte written into it, no
//! lock taken, no notification claimed; deciding is refused with the reason.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

mod support;

use support::assert_has;

const BIN: &str = env!("CARGO_BIN_EXE_loopwatch");

/// Every file and folder under `root`: bytes (files), mode and mtime.
fn tree(root: &Path) -> BTreeMap<PathBuf, (Vec<u8>, u32, SystemTime)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(p) = stack.pop() {
        let m = std::fs::symlink_metadata(&p).unwrap();
        let bytes = if m.is_dir() {
            for e in std::fs::read_dir(&p).unwrap() {
                stack.push(e.unwrap().path());
            }
            Vec::new()
        } else {
            std::fs::read(&p).unwrap()
        };
        out.insert(p, (bytes, m.permissions().mode(), m.modified().unwrap()));
    }
    out
}

fn set_read_only(root: &Path, ro: bool) {
    let mut stack = vec![root.to_path_buf()];
    while let Some(p) = stack.pop() {
        let m = std::fs::metadata(&p).unwrap();
        if m.is_dir() {
            for e in std::fs::read_dir(&p).unwrap() {
                stack.push(e.unwrap().path());
            }
        }
        let mode = m.permissions().mode();
        let mode = if ro { mode & !0o222 } else { mode | 0o200 };
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    }
}

struct Synced {
    _dir: tempfile::TempDir,
    root: PathBuf,
    config: PathBuf,
    gate: String,
    hits: Arc<Mutex<usize>>,
}

impl Drop for Synced {
    fn drop(&mut self) {
        // Let the temp folder be removed.
        set_read_only(&self.root, false);
    }
}

impl Synced {
    /// A journal written "on another host" (here, then made read-only):
    /// two gates, one decided, one open with an expiry long past due; a
    /// config with a webhook to a local server that counts requests.
    fn new() -> Synced {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("runs/feature-x");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        let config = dir.path().join("config");
        std::fs::create_dir_all(config.join("loopwatch")).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let hits = Arc::new(Mutex::new(0));
        let h = hits.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { break };
                *h.lock().unwrap() += 1;
                let mut line = String::new();
                let _ = BufReader::new(conn.try_clone().unwrap()).read_line(&mut line);
                let _ = conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
            }
        });
        std::fs::write(
            config.join("loopwatch/config.toml"),
            format!("[notify]\nwebhook = \"{url}\"\n"),
        )
        .unwrap();
        let mut s = Synced {
            _dir: dir,
            root,
            config,
            gate: String::new(),
            hits,
        };
        // Written without the webhook config (the other host's business).
        let plain = |args: &[&str], code: i32| {
            let out = Command::new(BIN)
                .args(args)
                .current_dir(&s.root)
                .env("XDG_CONFIG_HOME", s.root.join("none"))
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(code), "{args:?} {out:?}");
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .next()
                .unwrap_or("")
                .to_string()
        };
        let first = plain(
            &["ask", "structural", "--subject", "floor", "--summary", "a"],
            10,
        );
        plain(&["decide", &first, "retry", "--reason", "flaky"], 0);
        let gate = plain(
            &[
                "ask",
                "out-of-scope",
                "--subject",
                "Cargo.lock",
                "--summary",
                "b",
                "--expires",
                "1s",
                "--on-expiry",
                "deny",
            ],
            10,
        );
        // The lock file stays out of the sync: any lock taken here would create it.
        let _ = std::fs::remove_file(s.root.join(".pipeline/lock"));
        // Due long ago: the request's time is pushed back by a day.
        let journal = s.root.join(".pipeline/events.jsonl");
        let text = std::fs::read_to_string(&journal).unwrap();
        let today = &text[text.rfind("\"at\":\"").unwrap() + 6..][..10];
        let moved = text.replace(&format!("\"at\":\"{today}"), "\"at\":\"2026-01-01");
        std::fs::write(&journal, moved).unwrap();
        let _ = std::fs::remove_file(s.root.join(".pipeline/state.json"));
        set_read_only(&s.root, true);
        s.gate = gate;
        s
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args)
            .current_dir(self.root.parent().unwrap())
            .env("XDG_CONFIG_HOME", &self.config)
            .env("LOOPWATCH_LOCK_TIMEOUT", "0.3");
        c
    }

    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out = self.cmd(args).output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

fn on_pty(s: &Synced, args: &[&str], wait_for: &str) {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .current_dir(s.root.parent().unwrap())
        .env("TERM", "xterm-256color")
        .env("XDG_CONFIG_HOME", &s.config);
    let mut pty = support::pty::Pty::spawn(cmd, 30, 110);
    pty.wait_for(wait_for.as_bytes());
    pty.send(b"q");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !pty.exited() {
        assert!(Instant::now() < deadline, "did not quit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_read_only_synced_pipeline_is_never_written() {
    let s = Synced::new();
    let before = tree(&s.root);
    let dir = s.root.display().to_string();
    let pipeline = s.root.join(".pipeline").display().to_string();

    // The TUI, live (gate shown in the title, webhook not sent), then replayed.
    on_pty(&s, &["watch", &dir], "loopwatch ⚑1");
    on_pty(&s, &["replay", &dir], "REPLAY");

    let (code, out, _) = s.run(&["--pipeline", &pipeline, "status"]);
    assert_eq!(code, 10, "{out}");
    assert_has(&out, &s.gate);
    let (code, out, _) = s.run(&["--pipeline", &pipeline, "report", "--format", "html"]);
    assert_eq!(code, 0);
    assert!(out.contains("<html"));

    // await leaves the expiry to the writing host and says so.
    let (code, _, err) = s.run(&["--pipeline", &pipeline, "await", &s.gate, "--timeout", "1"]);
    assert_eq!(code, 124, "{err}");
    assert_has(&err, "is read-only here: the expiry of");

    // Deciding is refused with the reason.
    let (code, _, err) = s.run(&[
        "--pipeline",
        &pipeline,
        "decide",
        &s.gate,
        "deny",
        "--reason",
        "x",
    ]);
    assert_eq!(code, 2);
    assert_has(
        &err,
        "is read-only here (a synced copy?): decide on the host that writes it",
    );

    // Headless watch: one line, then stopped.
    let mut child = s
        .cmd(&["watch", "--headless", &dir])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_has(&line, "open=1");
    child.kill().unwrap();
    child.wait().unwrap();

    assert_eq!(
        tree(&s.root),
        before,
        "something was written into the read-only copy"
    );
    assert!(!s.root.join(".pipeline/lock").exists(), "a lock was taken");
    assert_eq!(
        *s.hits.lock().unwrap(),
        0,
        "a notification was sent from the copy"
    );
}
