//! The terminal side of notifications, on a real pty: the window title
//! shows the waiting count and is restored on exit, a new gate brings the
//! bell and an OSC 9 notification (wrapped for tmux inside tmux); coming
//! back to the terminal (focus, or a new start) shows what happened meanwhile.

use std::io::{Read, Write};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

const BIN: &str = env!("CARGO_BIN_EXE_loopwatch");

fn ask(root: &Path, config: &Path, kind: &str, summary: &str) -> String {
    let out = Command::new(BIN)
        .args(["ask", kind, "--subject", "Cargo.lock", "--summary", summary])
        .current_dir(root)
        .env("XDG_CONFIG_HOME", config)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(10), "{out:?}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap()
        .to_string()
}

/// Everything the TUI printed, and a way to type into it.
struct Pty {
    bytes: Arc<Mutex<Vec<u8>>>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    _master: Box<dyn portable_pty::MasterPty + Send>,
}

impl Pty {
    fn spawn(root: &Path, config: &Path, tmux: bool) -> Pty {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 30,
                cols: 100,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut cmd = CommandBuilder::new(BIN);
        cmd.args(["watch", &root.display().to_string()]);
        cmd.cwd(root);
        cmd.env("TERM", "xterm-256color");
        cmd.env("XDG_CONFIG_HOME", config);
        cmd.env("XDG_STATE_HOME", config.join("state"));
        if tmux {
            cmd.env("TMUX", "/tmp/tmux-test/default,1,0");
        } else {
            cmd.env_remove("TMUX");
        }
        let child = pair.slave.spawn_command(cmd).unwrap();
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer = pair.master.take_writer().unwrap();
        let bytes = Arc::new(Mutex::new(Vec::new()));
        let sink = bytes.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Pty {
            bytes,
            writer,
            child,
            _master: pair.master,
        }
    }

    fn has(&self, needle: &[u8]) -> bool {
        let b = self.bytes.lock().unwrap();
        b.windows(needle.len()).any(|w| w == needle)
    }

    fn wait_for(&self, needle: &[u8]) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.has(needle) {
            assert!(
                Instant::now() < deadline,
                "{:?} never printed; got {:?}",
                String::from_utf8_lossy(needle),
                String::from_utf8_lossy(&self.bytes.lock().unwrap())
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).unwrap();
        self.writer.flush().unwrap();
    }

    /// Types `q` until the TUI ends (a first key may only dismiss a digest).
    fn quit(mut self) -> Vec<u8> {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut typed = Instant::now() - Duration::from_secs(1);
        loop {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            assert!(Instant::now() < deadline, "the TUI did not quit");
            if typed.elapsed() >= Duration::from_millis(300) {
                self.send(b"q");
                typed = Instant::now();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // The reader drains what was written before the exit.
        self.wait_for(b"\x1b[23;0t");
        self.bytes.lock().unwrap().clone()
    }
}

fn setup() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("wt");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let config = dir.path().join("config");
    std::fs::create_dir_all(config.join("loopwatch")).unwrap();
    (dir, root, config)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

#[test]
fn title_counts_waiting_gates_is_restored_and_a_new_gate_notifies() {
    let (_dir, root, config) = setup();
    ask(&root, &config, "out-of-scope", "first");
    let pty = Pty::spawn(&root, &config, false);
    pty.wait_for(b"\x1b[22;0t");
    pty.wait_for("\x1b]2;loopwatch ⚑1\x07".as_bytes());
    // The gate that was already open is not announced again.
    assert!(!pty.has(b"\x1b]9;"));
    let id = ask(&root, &config, "structural", "second \x1b]2;evil\x07 gate");
    let osc = format!("\x1b]9;{id} (structural) waits on you: second ␛]2;evil␇ gate\x07");
    pty.wait_for(osc.as_bytes());
    pty.wait_for("\x1b]2;loopwatch ⚑2\x07".as_bytes());
    let all = pty.quit();
    let at_osc = find(&all, osc.as_bytes()).unwrap();
    assert!(
        all[..at_osc].contains(&0x07),
        "the bell rings beside the notification"
    );
    // The title stack is popped after the last title set.
    let last_title = find(&all, b"\x1b]2;").unwrap();
    let pop = find(&all, b"\x1b[23;0t").unwrap();
    assert!(pop > last_title);
}

#[test]
fn inside_tmux_the_notification_is_passed_through() {
    let (_dir, root, config) = setup();
    std::fs::write(
        config.join("loopwatch/config.toml"),
        "[notify]\nterminal = \"osc777\"\n",
    )
    .unwrap();
    ask(&root, &config, "out-of-scope", "first");
    let pty = Pty::spawn(&root, &config, true);
    pty.wait_for("\x1b]2;loopwatch ⚑1\x07".as_bytes());
    let id = ask(&root, &config, "structural", "second");
    let wrapped = format!(
        "\x1bPtmux;\x1b\x1b]777;notify;loopwatch;{id} (structural) waits on you: second\x07\x1b\\"
    );
    pty.wait_for(wrapped.as_bytes());
    let all = pty.quit();
    assert!(find(&all, b"\x1b]777;notify").is_some());
    assert!(find(&all, b"\x1b]9;").is_none());
}

#[test]
fn coming_back_shows_what_happened_while_away() {
    let (_dir, root, config) = setup();
    ask(&root, &config, "out-of-scope", "first");
    let mut pty = Pty::spawn(&root, &config, false);
    pty.wait_for(b"\x1b[?1004h");
    pty.wait_for("\x1b]2;loopwatch ⚑1\x07".as_bytes());
    pty.send(b"\x1b[O");
    let second = ask(&root, &config, "structural", "second");
    pty.wait_for("\x1b]2;loopwatch ⚑2\x07".as_bytes());
    assert!(!pty.has(b"while you were away"));
    pty.send(b"\x1b[I");
    pty.wait_for(
        format!("while you were away: 1 gate opened ({second}; 1 still waiting)").as_bytes(),
    );
    let all = pty.quit();
    assert!(
        find(&all, b"\x1b[?1004l").is_some(),
        "focus events turned off on exit"
    );

    // The next start tells what happened since this one ended.
    let third = ask(&root, &config, "structural", "third");
    let pty = Pty::spawn(&root, &config, false);
    pty.wait_for(
        format!("while you were away: 1 gate opened ({third}; 1 still waiting)").as_bytes(),
    );
    pty.quit();
}
