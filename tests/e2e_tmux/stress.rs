//! Ctrl-Z / fg many times over, and storms of resizes.

use super::support::tmux::Session;
use super::support::{serial, worktree::Worktree};
use super::{COLS, ROWS, line, tui, wait_frame};

/// The screen without its age line (`last event 3s ago` moves on its own).
fn without_age(screen: &str) -> Vec<&str> {
    screen
        .lines()
        .enumerate()
        .filter(|(i, _)| *i != 1)
        .map(|(_, l)| l.trim_end())
        .collect()
}

fn last_text_line(screen: &str) -> &str {
    screen
        .lines()
        .rev()
        .map(str::trim_end)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

#[test]
fn ctrl_z_and_fg_fifty_times_redraw_fully_and_keep_deciding() {
    let _serial = serial();
    let w = Worktree::new();
    w.start_run();
    w.gate0();
    w.conformity_out_of_scope();
    let rc = w.root.join("bashrc");
    std::fs::write(&rc, "PS1='lw$ '\n").expect("write bashrc");
    let s = Session::start(
        COLS,
        ROWS,
        &format!("exec bash --noprofile --rcfile '{}' -i", rc.display()),
        &[],
    );
    s.wait_for("the shell prompt", |sc| last_text_line(sc) == "lw$");
    s.type_text(&w.watch_command());
    s.send(&["Enter"]);
    let reference = wait_frame(&s);
    for round in 0..50 {
        s.send(&["C-z"]);
        s.wait_for(&format!("the shell back (round {round})"), |sc| {
            let mut lines = sc
                .lines()
                .rev()
                .map(str::trim_end)
                .filter(|l| !l.is_empty());
            lines.next() == Some("lw$")
                && lines.next().is_some_and(|l| l.contains("Stopped"))
                && !s.alternate_on()
        });
        s.type_text("fg");
        s.send(&["Enter"]);
        s.wait_for(&format!("a full redraw (round {round})"), |sc| {
            without_age(sc) == without_age(&reference) && s.alternate_on()
        });
    }
    s.send(&["n", "Enter"]);
    s.wait_for("the dialog after fifty suspends", |sc| {
        sc.contains("hg-1-conformity-1") && sc.contains("approve")
    });
    assert_eq!(s.display("#{pane_dead}"), "0");
}

#[test]
fn resize_storms_never_panic_and_end_in_a_full_redraw() {
    let _serial = serial();
    let w = Worktree::new();
    w.start_run();
    w.gate0();
    let s = tui(&w);
    let mut sizes = vec![
        (1, 1),
        (20, 5),
        (1, 40),
        (250, 1),
        (2, 2),
        (20, 5),
        (1, 1),
        (300, 90),
        (3, 7),
    ];
    // A deterministic walk through odd sizes.
    let (mut c, mut r) = (7u16, 3u16);
    for _ in 0..40 {
        c = (c * 37 + 11) % 211 + 1;
        r = (r * 17 + 5) % 61 + 1;
        sizes.push((c, r));
    }
    for (c, r) in sizes {
        s.resize(c, r);
    }
    s.resize(1, 1);
    s.resize(20, 5);
    assert_eq!(
        s.display("#{pane_dead}"),
        "0",
        "loopwatch died in the storm"
    );

    // Back at a normal size, the screen is what a TUI started at that size shows.
    s.resize(100, 30);
    let fresh = Session::start(100, 30, &format!("exec {}", w.watch_command()), &[]);
    let want = wait_frame(&fresh);
    let got = s.wait_for("a full redraw at 100x30", |sc| {
        without_age(sc) == without_age(&want)
    });
    assert_eq!(got.lines().count(), 30);
    assert_eq!(
        line(&got, 2),
        " GATE 0 floor ●○○ ✓ MET ▸ GATE 1 conformity ○○○ · - ▸ GATE 2 security ○○○ · -"
    );
    s.send(&["q"]);
    assert_eq!(s.wait_dead(), 0, "exit status after the storm");
}
