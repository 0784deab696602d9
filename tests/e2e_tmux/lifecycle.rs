//! How the TUI ends: `q`, SIGTERM, its pty closed under it, a panic. Each
//! time the terminal must be left as it was found.

use std::path::Path;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process};

use super::support::tmux::{DEADLINE, Session, poll};
use super::support::{assert_has, serial, worktree::Worktree};
use super::{COLS, ROWS, assert_cooked, wait_frame};

/// `BIN watch ROOT`, then the terminal settings saved to `stty`, then the
/// exit status of loopwatch as the pane's.
fn watch_then_stty(w: &Worktree, stty: &Path) -> String {
    format!(
        "{}; rc=$?; stty -a > '{}'; echo \"loopwatch exited $rc\"; exit $rc",
        w.watch_command(),
        stty.display()
    )
}

/// The pid of the only child of `parent`.
fn only_child(parent: u32) -> u32 {
    let path = format!("/proc/{parent}/task/{parent}/children");
    poll(
        "the shell to start loopwatch",
        DEADLINE,
        || {
            let text = std::fs::read_to_string(&path).ok()?;
            let kids: Vec<u32> = text
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect();
            (kids.len() == 1).then(|| kids[0])
        },
        || std::fs::read_to_string(&path).unwrap_or_default(),
    )
}

fn send_signal(pid: u32, sig: Signal) {
    let pid = Pid::from_raw(i32::try_from(pid).expect("pid fits i32")).expect("pid is not 0");
    kill_process(pid, sig).expect("signal loopwatch");
}

fn assert_left_clean(s: &Session, stty: &Path) {
    assert_eq!(s.wait_dead(), 0, "exit status\n{}", s.screen());
    assert!(!s.alternate_on(), "the alternate screen is still on");
    let screen = s.history();
    assert_has(&screen, "loopwatch exited 0");
    assert_cooked(stty);
}

#[test]
fn q_restores_the_terminal() {
    let _serial = serial();
    let w = Worktree::new();
    w.start_run();
    let stty = w.root.join("stty.txt");
    let s = Session::start(COLS, ROWS, &watch_then_stty(&w, &stty), &[]);
    wait_frame(&s);
    s.send(&["q"]);
    assert_left_clean(&s, &stty);
}

/// SIGTERM, SIGHUP and SIGINT each restore the terminal and exit 0.
#[test]
fn termination_signals_restore_the_terminal() {
    for sig in [Signal::TERM, Signal::HUP, Signal::INT] {
        let _serial = serial();
        let w = Worktree::new();
        w.start_run();
        let stty = w.root.join("stty.txt");
        let s = Session::start(COLS, ROWS, &watch_then_stty(&w, &stty), &[]);
        wait_frame(&s);
        send_signal(only_child(s.pane_pid()), sig);
        assert_left_clean(&s, &stty);
    }
}

/// State letter and CPU time (user + system, clock ticks) of a process;
/// `None` once it is gone.
fn proc_stat(pid: u32) -> Option<(char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((state, utime + stime))
}

/// Closes the pty under the TUI whose pid is `pid`: it must be gone within
/// a second, without spinning on the dead terminal meanwhile.
fn assert_ended_without_spinning(s: &Session, pid: u32) {
    let (took, cpu) = close_pty_and_observe(s, pid);
    assert!(
        took < Duration::from_secs(1),
        "loopwatch still ran {took:?} after its pty closed"
    );
    assert!(
        cpu <= 20,
        "loopwatch used {cpu} CPU ticks while its pty was closing"
    );
}

/// Kills the session under the TUI whose pid is `pid` while an observer
/// samples the process; returns (time to exit, CPU ticks used after the kill).
fn close_pty_and_observe(s: &Session, pid: u32) -> (Duration, u64) {
    let (_, cpu_before) = proc_stat(pid).expect("loopwatch is running");
    let observer = std::thread::spawn(move || {
        let start = Instant::now();
        let mut last_cpu = cpu_before;
        while start.elapsed() < Duration::from_secs(3) {
            match proc_stat(pid) {
                Some(('Z' | 'X', _)) | None => return (start.elapsed(), last_cpu - cpu_before),
                Some((_, cpu)) => last_cpu = cpu,
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        (start.elapsed(), last_cpu - cpu_before)
    });
    s.run(&["kill-session", "-t", "S"]);
    observer.join().expect("the observer thread")
}

#[test]
fn a_closed_pty_ends_the_tui_without_spinning() {
    let _serial = serial();
    let w = Worktree::new();
    w.start_run();
    let s = Session::start(COLS, ROWS, &format!("exec {}", w.watch_command()), &[]);
    wait_frame(&s);
    assert_ended_without_spinning(&s, s.pane_pid());
}

#[test]
fn a_closed_pty_ends_the_tui_even_without_a_hangup_signal() {
    // In a session of its own, the kernel sends no SIGHUP: only the
    // closed pty can tell loopwatch its terminal is gone.
    let _serial = serial();
    let w = Worktree::new();
    w.start_run();
    let pidfile = w.root.join("tui.pid");
    let cmd = format!(
        "exec setsid -w sh -c 'echo $$ > {}; exec {}'",
        pidfile.display(),
        w.watch_command()
    );
    let s = Session::start(COLS, ROWS, &cmd, &[]);
    wait_frame(&s);
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .expect("pid file")
        .trim()
        .parse()
        .expect("a pid");
    assert_ended_without_spinning(&s, pid);
}

fn count(haystack: &[u8], needle: &[u8]) -> usize {
    haystack
        .windows(needle.len())
        .filter(|w| *w == needle)
        .count()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[test]
fn a_panic_in_rendering_restores_the_terminal_once_then_reports() {
    let _serial = serial();
    let w = Worktree::new();
    w.start_run();
    let stty = w.root.join("stty.txt");
    let s = Session::start_recorded(
        COLS,
        ROWS,
        &watch_then_stty(&w, &stty),
        &[("LOOPWATCH_TEST_PANIC", "render")],
    );
    assert_eq!(s.wait_dead(), 101, "a panic exits with 101\n{}", s.screen());
    assert!(!s.alternate_on(), "the alternate screen is still on");
    let screen = s.history();
    assert_has(
        &screen,
        "LOOPWATCH_TEST_PANIC=render: a test-only panic inside rendering",
    );
    assert_has(&screen, "loopwatch exited 101");
    assert_cooked(&stty);

    let raw = s.raw_output();
    let message = b"a test-only panic inside rendering";
    assert_eq!(
        count(&raw, b"\x1b[?1049h"),
        1,
        "entered the alternate screen once"
    );
    assert_eq!(
        count(&raw, b"\x1b[?1049l"),
        1,
        "left the alternate screen once"
    );
    assert_eq!(count(&raw, message), 1, "the message is printed once");
    let entered = find(&raw, b"\x1b[?1049h").unwrap_or(usize::MAX);
    let left = find(&raw, b"\x1b[?1049l").unwrap_or(usize::MAX);
    let drawn = find(&raw, b"Criteria").unwrap_or(usize::MAX);
    let printed = find(&raw, message).unwrap_or(usize::MAX);
    assert!(
        entered < drawn && drawn < left,
        "a frame was drawn on the alternate screen first"
    );
    assert!(
        left < printed,
        "the message came before the terminal was restored"
    );
}
