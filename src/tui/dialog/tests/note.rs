//! The note to the developer: a field of its own (`ctrl-n`), typed beside
//! the reason, sanitised and bounded, carried by the decision.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::KeyCode;

use super::{ID, opened};
use crate::model::{Decision, HumanGateKind};
use crate::tui::dialog::{Focus, NOTE_MAX};
use crate::tui::effect::Effect;
use crate::tui::testkit::*;

/// The screen of `app` as text, `w` × `h`.
fn screen(app: &crate::tui::App, w: u16, h: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("test backend");
    term.draw(|f| crate::tui::view::render(f, app))
        .expect("draw");
    let buf = term.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..h {
        for x in 0..w {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

#[test]
fn ctrl_n_types_a_note_beside_the_reason_and_the_decision_carries_it() {
    let (mut app, _clock) = opened(HumanGateKind::OutOfScope);
    app.on_key(&ch('x'));
    type_text(&mut app, "no Makefile here");
    // No note yet: the dialog draws no note line.
    assert!(!screen(&app, 100, 30).contains("note to the developer"));
    assert_eq!(app.on_key(&ctrl('n')), vec![]);
    assert_eq!(app.dialog().map(|d| d.focus), Some(Focus::Note));
    assert!(screen(&app, 100, 30).contains("note to the developer: ▏"));
    type_text(&mut app, "use build.sh");
    // A paste lands in the field that has the focus, sanitised.
    app.on_paste(" \u{1b}[2Jinstead\r\nof make");
    app.on_key(&key(KeyCode::Backspace));
    let d = app.dialog().expect("open");
    assert_eq!(d.reason, "no Makefile here");
    assert_eq!(d.note, "use build.sh [2Jinstead  of mak");
    let shown = screen(&app, 100, 30);
    assert!(
        shown.contains("note to the developer: use build.sh [2Jinstead  of mak▏"),
        "{shown}"
    );
    assert!(shown.contains("reason: no Makefile here"), "{shown}");
    // ctrl-n goes back to the reason, tab to the options; the note stays.
    app.on_key(&ctrl('n'));
    assert_eq!(app.dialog().map(|d| d.focus), Some(Focus::Reason));
    type_text(&mut app, "!");
    app.on_key(&ctrl('n'));
    app.on_key(&key(KeyCode::Tab));
    assert_eq!(app.dialog().map(|d| d.focus), Some(Focus::Options));
    let Some(Effect::WriteDecision(req)) = app.on_key(&ctrl('s')).pop() else {
        panic!("no decision written");
    };
    assert_eq!(req.id, ID);
    assert_eq!(req.decision, Decision::Deny);
    assert_eq!(req.reason, "no Makefile here!");
    assert_eq!(req.note.as_deref(), Some("use build.sh [2Jinstead  of mak"));
}

#[test]
fn a_blank_note_is_none_and_a_long_one_is_cut() {
    let (mut app, _clock) = opened(HumanGateKind::Unverifiable);
    app.on_key(&ch('a'));
    type_text(&mut app, "checked by hand");
    app.on_key(&ctrl('n'));
    type_text(&mut app, "   ");
    let Some(Effect::WriteDecision(req)) = app.on_key(&ctrl('s')).pop() else {
        panic!("no decision written");
    };
    assert_eq!(req.note, None);

    let (mut app, _clock) = opened(HumanGateKind::Unverifiable);
    app.on_key(&ch('a'));
    type_text(&mut app, "checked by hand");
    app.on_key(&ctrl('n'));
    app.on_paste(&"n".repeat(NOTE_MAX * 250));
    assert_eq!(app.dialog().map(|d| d.note.chars().count()), Some(NOTE_MAX));
    // A typed note is work closing would lose, like a typed reason.
    assert!(app.dialog().is_some_and(|d| d.has_typed_reason()));
}
