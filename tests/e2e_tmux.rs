//! End-to-end tests of the real binary in a real terminal: each test starts
//! its own tmux server, runs `loopwatch` in a pane, drives it with keys,
//! signals and resizes, and reads the screen back with deadline polling.
//! The tests run one at a time (they share two cores with the build).

mod support;

#[path = "e2e_tmux/decision.rs"]
mod decision;
#[path = "e2e_tmux/dialog.rs"]
mod dialog;
#[path = "e2e_tmux/fleet.rs"]
mod fleet;
#[path = "e2e_tmux/lifecycle.rs"]
mod lifecycle;
#[path = "e2e_tmux/live.rs"]
mod live;
#[path = "e2e_tmux/note.rs"]
mod note;
#[path = "e2e_tmux/pager.rs"]
mod pager;
#[path = "e2e_tmux/run.rs"]
mod run;
#[path = "e2e_tmux/stress.rs"]
mod stress;

use std::path::Path;

use support::tmux::Session;
use support::worktree::Worktree;

/// The tab line with no human gate open.
const TAB_LINE: &str =
    " [1] Criteria  [2] Findings  [3] Security  [4] Gates  [5] Timeline  [6] Logs";

/// Width and height of the pane unless a test says otherwise.
const COLS: u16 = 120;
const ROWS: u16 = 32;

/// Opens the TUI on `w` through the pane's shell (which records the exit
/// status) and waits until its first frame is up.
fn tui(w: &Worktree) -> Session {
    // Not `exec`: the pane's shell records the exit status (see Session::start).
    let s = Session::start(COLS, ROWS, &w.watch_command(), &[]);
    wait_frame(&s);
    s
}

/// `loopwatch run` of the scripted project `p` in a pane, its agents'
/// environment `env` beside the project's (`TEST_OUT`, `LOOPWATCH_USER`).
fn run_session(p: &support::engine::Project, env: &[(&str, &str)]) -> Session {
    let out = p.out.display().to_string();
    let command = format!(
        "cd '{}' && env -u LOOPWATCH_PIPELINE '{}' run {}",
        p.root.display(),
        env!("CARGO_BIN_EXE_loopwatch"),
        support::engine::CONTRACT
    );
    let mut all = vec![("TEST_OUT", out.as_str()), ("LOOPWATCH_USER", "tester")];
    all.extend_from_slice(env);
    Session::start(COLS, ROWS, &command, &all)
}

/// Waits until a whole frame of the run screen is on the alternate screen.
fn wait_frame(s: &Session) -> String {
    s.wait_for("a frame of the run screen", |screen| {
        is_run_frame(screen) && s.alternate_on()
    })
}

/// True when `screen` shows the run screen whole: header, tab line, footer.
fn is_run_frame(screen: &str) -> bool {
    let lines: Vec<&str> = screen.lines().collect();
    lines
        .first()
        .is_some_and(|l| l.starts_with(" loopwatch · feat "))
        && lines
            .get(3)
            .is_some_and(|l| l.starts_with(" [1] Criteria  [2] Findings"))
        && lines.iter().any(|l| l.starts_with(" ? help  / filter"))
}

/// Opens the gate selected on the Gates tab (its dialog showing
/// `subject`) and, once the dialog's keys count, approves it with `reason`.
fn approve_in_dialog(s: &Session, subject: &str, reason: &str) {
    s.send(&["Enter"]);
    // The dialog's own option lines (the Gates tab's detail pane names the
    // options too).
    s.wait_for("the dialog", |sc| {
        sc.contains(subject) && sc.contains("[a] approve — ")
    });
    // Keys in the dialog's first moments are dropped on purpose; the
    // options say when keys count.
    s.wait_for("the options ready", |sc| {
        sc.contains("options:") && !sc.contains("options (a moment)")
    });
    s.send(&["a"]);
    s.type_text(reason);
    s.wait_for("the reason typed", |sc| sc.contains(reason));
    s.send(&["C-s"]);
}

/// Line `n` of a screen, without trailing blanks.
fn line(screen: &str, n: usize) -> &str {
    screen.lines().nth(n).unwrap_or("").trim_end()
}

/// The settings `stty -a` wrote to `path`, one word each.
fn stty_words(path: &Path) -> Vec<String> {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    text.split(|c: char| c.is_whitespace() || c == ';')
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect()
}

/// Fails unless the terminal left behind is in cooked mode with echo.
fn assert_cooked(stty: &Path) {
    let words = stty_words(stty);
    for mode in ["icanon", "echo", "isig", "icrnl", "opost"] {
        assert!(
            words.iter().any(|w| w == mode),
            "{mode} is off after loopwatch exited: {words:?}"
        );
    }
}
