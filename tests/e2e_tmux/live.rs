//! The live view: updates from other processes, tabs and filter, hostile text.

use super::support::tmux::Session;
use super::support::{serial, worktree::Worktree};
use super::{COLS, ROWS, TAB_LINE, is_run_frame, line, tui, wait_frame};

const STRIP_EMPTY: &str =
    " GATE 0 floor ○○○ · - ▸ GATE 1 conformity ○○○ · - ▸ GATE 2 security ○○○ · -";
const STRIP_FLOOR_MET: &str =
    " GATE 0 floor ●○○ ✓ MET ▸ GATE 1 conformity ○○○ · - ▸ GATE 2 security ○○○ · -";
const STRIP_ECARTS: &str =
    " GATE 0 floor ●○○ ✓ MET ▸ GATE 1 conformity ●○○ ✗ ECARTS(1) ▸ GATE 2 security ○○○ · -";

#[test]
fn verdicts_recorded_by_another_process_show_up() {
    let _serial = serial();
    let w = Worktree::new();
    w.start_run();
    let s = tui(&w);
    assert_eq!(line(&s.screen(), 2), STRIP_EMPTY);

    w.gate0();
    let screen = s.wait_for("GATE 0 MET in the gate strip", |sc| {
        line(sc, 2) == STRIP_FLOOR_MET
    });
    assert_eq!(line(&screen, 3), TAB_LINE);

    w.conformity_out_of_scope();
    let screen = s.wait_for("GATE 1 ECARTS and the open gate", |sc| {
        line(sc, 2) == STRIP_ECARTS
    });
    assert_eq!(
        line(&screen, 3),
        " [1] Criteria  [2] Findings  [3] Security  [4] Gates ⚑1  [5] Timeline  [6] Logs"
    );
    assert!(
        line(&screen, 1).starts_with(" ⚑ WAITING ON YOU  iter 1  ·  last event "),
        "{screen}"
    );
    assert!(
        line(&screen, 1).ends_with("·  ⚑ 1 waiting on you (n)"),
        "{screen}"
    );
}

/// The header of each tab's table, by key.
const HEADERS: [(&str, &str); 6] = [
    ("1", " id  GATE 0         GATE 1         GATE 0 evidence"),
    (
        "2",
        " id     severity path:lines              verdict        verify-by-test     seen    triage     claim",
    ),
    (
        "3",
        " kind       severity rule                            location                        why",
    ),
    (
        "4",
        " status             id                   kind         summary                         reason",
    ),
    ("5", " seq  time     type                event"),
    (
        "6",
        " state      path                                                 what",
    ),
];

fn header_of(key: &str) -> &'static str {
    HEADERS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, h)| *h)
        .unwrap_or_default()
}

fn wait_tab(s: &Session, key: &str) -> String {
    let want = header_of(key);
    s.wait_for(&format!("tab {key}"), |sc| line(sc, 4).starts_with(want))
}

#[test]
fn number_keys_and_tab_switch_tabs_and_the_filter_narrows_rows() {
    let _serial = serial();
    let w = Worktree::new();
    w.start_run();
    w.gate0();
    w.conformity_out_of_scope();
    w.lw(
        &[
            "record",
            "findings",
            "--file",
            "verdicts.json",
            "--findings",
            "findings.json",
        ],
        10,
    );
    let s = tui(&w);
    for key in ["2", "3", "4", "5", "6", "1"] {
        s.send(&[key]);
        wait_tab(&s, key);
    }
    // Tab walks forward and wraps; shift-tab walks back.
    for key in ["2", "3", "4", "5", "6", "1"] {
        s.send(&["Tab"]);
        wait_tab(&s, key);
    }
    s.send(&["BTab"]);
    wait_tab(&s, "6");

    s.send(&["2"]);
    let screen = wait_tab(&s, "2");
    assert!(
        line(&screen, 5).starts_with("›F1     major    src/clock.sh:3"),
        "{screen}"
    );
    assert!(
        line(&screen, 6).starts_with(" F2     minor    src/footer.rs:10-12"),
        "{screen}"
    );

    s.send(&["/"]);
    s.type_text("wraps");
    let screen = s.wait_for("the filter being typed", |sc| {
        line(sc, ROWS as usize - 1).starts_with(" / wraps")
    });
    assert!(line(&screen, 5).starts_with("›F2     minor"), "{screen}");
    assert_eq!(line(&screen, 6), "");
    s.send(&["Enter"]);
    s.wait_for("the filter kept", |sc| {
        line(sc, ROWS as usize - 1) == " filter: wraps  (1 rows; esc clears)"
    });
    s.send(&["Escape"]);
    let screen = s.wait_for("the filter cleared", |sc| line(sc, 6).starts_with(" F2 "));
    assert!(line(&screen, 5).starts_with("›F1 "), "{screen}");
    assert_eq!(line(&screen, ROWS as usize - 1), " sorted by severity");
}

#[test]
fn escape_sequences_in_recorded_text_are_shown_not_obeyed() {
    let _serial = serial();
    let w = Worktree::new();
    w.start_run();
    w.gate0();
    w.lw(
        &[
            "record",
            "gate",
            "conformity",
            "--output",
            "conformity-hostile.txt",
        ],
        0,
    );
    w.lw(
        &["record", "note", "note A\u{1b}]0;pwned\u{7}B\u{1b}[2JC"],
        0,
    );
    w.lw(
        &[
            "record",
            "findings",
            "--file",
            "hostile-verdicts.json",
            "--findings",
            "hostile-findings.json",
        ],
        0,
    );
    let s = Session::start_recorded(COLS, ROWS, &format!("exec {}", w.watch_command()), &[]);
    wait_frame(&s);
    let title = s.display("#{pane_title}");
    assert_ne!(title, "pwned");

    let intact = |what: &str, screen: &str| {
        assert!(
            is_run_frame(screen),
            "{what}: the frame is damaged\n{screen}"
        );
        assert_eq!(line(screen, 3), TAB_LINE, "{what}");
        assert_eq!(
            s.display("#{pane_title}"),
            title,
            "{what}: the pane title changed"
        );
    };
    // A note, on the Timeline.
    s.send(&["5", "G"]);
    let screen = s.wait_for("the note", |sc| sc.contains("note A␛]0;pwned␇B␛[2JC"));
    intact("timeline", &screen);
    // A finding's claim, on the Findings tab and in the detail pane.
    s.send(&["2"]);
    let screen = s.wait_for("the claim", |sc| {
        sc.contains("claim: claim X␛]0;pwned␇Y␛[2JZ")
    });
    intact("findings", &screen);
    // A line of a gate's log, on the Logs tab once loaded.
    s.send(&["6", "j", "Enter"]);
    let screen = s.wait_for("the log line", |sc| {
        sc.contains("PROOF: log L␛]0;pwned␇M␛[2JN")
    });
    intact("logs", &screen);

    // Nothing of it reached the terminal as a sequence.
    let raw = s.raw_output();
    assert!(
        !raw.windows(9).any(|w| w == b"\x1b]0;pwned"),
        "an OSC title sequence reached the terminal"
    );
    assert!(
        !raw.windows(4).any(|w| w == b"\x1b[2J"),
        "a clear-screen sequence reached the terminal"
    );
}
