//! The terminal side of notifications, on a real pty: the window title
//! shows the waiting count and is restored on exit, a new gate brings the
//! bell and an OSC 9 notification (wrapped for tmux inside tmux); coming
//! back to the terminal (focus, or a new start) shows what happened meanwhile.

mod support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

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

/// The TUI watching `root` on a 30 × 100 pty.
fn spawn(root: &Path, config: &Path, tmux: bool) -> support::pty::Pty {
    let mut cmd = Command::new(BIN);
    cmd.args(["watch", &root.display().to_string()])
        .current_dir(root)
        .env("TERM", "xterm-256color")
        .env("XDG_CONFIG_HOME", config)
        .env("XDG_STATE_HOME", config.join("state"));
    if tmux {
        cmd.env("TMUX", "/tmp/tmux-test/default,1,0");
    } else {
        cmd.env_remove("TMUX");
    }
    support::pty::Pty::spawn(cmd, 30, 100)
}

/// Types `q` until the TUI ends (a first key may only dismiss a digest),
/// then returns everything it printed.
fn quit(mut pty: support::pty::Pty) -> Vec<u8> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut typed = Instant::now() - Duration::from_secs(1);
    while !pty.exited() {
        assert!(Instant::now() < deadline, "the TUI did not quit");
        if typed.elapsed() >= Duration::from_millis(300) {
            pty.send(b"q");
            typed = Instant::now();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // The reader drains what was written before the exit.
    pty.wait_for(b"\x1b[23;0t");
    pty.bytes()
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
    let pty = spawn(&root, &config, false);
    pty.wait_for(b"\x1b[22;0t");
    pty.wait_for("\x1b]2;loopwatch ⚑1\x07".as_bytes());
    // The gate that was already open is not announced again.
    assert!(!pty.has(b"\x1b]9;"));
    let id = ask(&root, &config, "structural", "second \x1b]2;evil\x07 gate");
    let osc = format!("\x1b]9;{id} (structural) waits on you: second ␛]2;evil␇ gate\x07");
    pty.wait_for(osc.as_bytes());
    pty.wait_for("\x1b]2;loopwatch ⚑2\x07".as_bytes());
    let all = quit(pty);
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
    let pty = spawn(&root, &config, true);
    pty.wait_for("\x1b]2;loopwatch ⚑1\x07".as_bytes());
    let id = ask(&root, &config, "structural", "second");
    let wrapped = format!(
        "\x1bPtmux;\x1b\x1b]777;notify;loopwatch;{id} (structural) waits on you: second\x07\x1b\\"
    );
    pty.wait_for(wrapped.as_bytes());
    let all = quit(pty);
    assert!(find(&all, b"\x1b]777;notify").is_some());
    assert!(find(&all, b"\x1b]9;").is_none());
}

#[test]
fn coming_back_shows_what_happened_while_away() {
    let (_dir, root, config) = setup();
    ask(&root, &config, "out-of-scope", "first");
    let mut pty = spawn(&root, &config, false);
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
    let all = quit(pty);
    assert!(
        find(&all, b"\x1b[?1004l").is_some(),
        "focus events turned off on exit"
    );

    // The next start tells what happened since this one ended.
    let third = ask(&root, &config, "structural", "third");
    let pty = spawn(&root, &config, false);
    pty.wait_for(
        format!("while you were away: 1 gate opened ({third}; 1 still waiting)").as_bytes(),
    );
    quit(pty);
}
