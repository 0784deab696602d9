//! Tests of the app outside the dialog: announcements, navigation, filter,
//! copy, logs, stale age.

use ratatui::crossterm::event::KeyCode;

use super::*;
use crate::model::{Decision, HumanGateKind};
use crate::tui::testkit::*;

#[test]
fn a_new_gate_rings_once_and_runs_the_hook_but_not_on_first_load() {
    let clock = crate::tui::ManualClock::new(t0());
    let config = Config {
        on_human_gate: Some("notify".into()),
        ..Config::default()
    };
    let mut app = App::new(
        config,
        ThemeKind::Dark,
        Box::new(clock),
        "/p/.pipeline".into(),
    );
    let mut events = events_with_gate(HumanGateKind::OutOfScope);
    assert_eq!(app.on_state(state_of(&events), &events), vec![]);
    let new = ev(
        4,
        request("hg-1-conformity-2", HumanGateKind::CapReached, evidence()),
    );
    events.push(new.clone());
    assert_eq!(
        app.on_state(state_of(&events), std::slice::from_ref(&new)),
        vec![
            Effect::Bell,
            Effect::RunHook {
                command: "notify".into(),
                gate: "hg-1-conformity-2".into()
            }
        ]
    );
    // The same state again, then the gate decided: no second ring.
    assert_eq!(app.on_state(state_of(&events), &[]), vec![]);
    let d = ev(
        5,
        decided("hg-1-conformity-2", Decision::Extend, "one more", "a@b"),
    );
    events.push(d.clone());
    assert_eq!(app.on_state(state_of(&events), &[d]), vec![]);
}

#[test]
fn next_gate_jumps_from_any_tab_and_cycles() {
    let mut events = events_with_gate(HumanGateKind::OutOfScope);
    events.push(ev(
        4,
        request("hg-1-conformity-2", HumanGateKind::Unverifiable, evidence()),
    ));
    let (mut app, _clock) = app_with(&events);
    app.on_key(&ch('5'));
    assert_eq!(app.tab(), Tab::Timeline);
    app.on_key(&ch('n'));
    assert_eq!(
        (app.tab(), app.selected_row()),
        (Tab::Gates, Some(RowKey::Gate(0)))
    );
    app.on_key(&ch('n'));
    assert_eq!(app.selected_row(), Some(RowKey::Gate(1)));
    app.on_key(&ch('n'));
    assert_eq!(app.selected_row(), Some(RowKey::Gate(0)));
}

#[test]
fn filter_narrows_rows_and_esc_clears() {
    let events = events_with_gate(HumanGateKind::OutOfScope);
    let (mut app, _clock) = app_with(&events);
    app.on_key(&ch('5'));
    assert_eq!(app.rows.len(), 3);
    app.on_key(&ch('/'));
    type_text(&mut app, "human");
    assert_eq!(app.rows, vec![RowKey::Event(2)]);
    app.on_key(&key(KeyCode::Enter));
    assert_eq!(app.rows.len(), 1);
    app.on_key(&key(KeyCode::Esc));
    assert_eq!(app.rows.len(), 3);
}

#[test]
fn copy_yields_the_row_text() {
    let (mut app, _clock) = app_with(&events_with_gate(HumanGateKind::OutOfScope));
    app.on_key(&ch('4'));
    assert_eq!(
        app.on_key(&ch('y')),
        vec![Effect::CopyToClipboard(
            "⚑ WAITING ON YOU  hg-1-conformity-1  out-of-scope  out-of-scope gate for a test      10:00:03".into()
        )]
    );
}

#[test]
fn logs_load_once_and_never_outside_the_pipeline() {
    let events = vec![
        ev(1, run_started()),
        ev(
            2,
            crate::model::EventBody::VerifyResult(crate::model::event::VerifyResult {
                iteration: 1,
                finding: "F1".into(),
                result: crate::model::VerifyOutcome::Confirmed,
                test_ref: "t".into(),
                file: "t.rs".into(),
                log: "../../etc/passwd".into(),
                note: String::new(),
                evidence_gate: None,
                extra: Default::default(),
            }),
        ),
        ev(
            3,
            crate::model::EventBody::VerifyResult(crate::model::event::VerifyResult {
                iteration: 1,
                finding: "F2".into(),
                result: crate::model::VerifyOutcome::Inconclusive,
                test_ref: "t".into(),
                file: "t.rs".into(),
                log: "verify-2.test.log".into(),
                note: String::new(),
                evidence_gate: None,
                extra: Default::default(),
            }),
        ),
    ];
    let (mut app, _clock) = app_with(&events);
    app.on_key(&ch('6'));
    assert_eq!(app.on_key(&key(KeyCode::Enter)), vec![]);
    assert_eq!(
        app.status(),
        Some("not loading '../../etc/passwd': the path leaves .pipeline")
    );
    app.on_key(&ch('j'));
    assert_eq!(
        app.on_key(&key(KeyCode::Enter)),
        vec![Effect::LoadLog("/p/.pipeline/verify-2.test.log".into())]
    );
    assert_eq!(app.on_key(&key(KeyCode::Enter)), vec![]);
    app.on_log_loaded(
        Path::new("/p/.pipeline/verify-2.test.log"),
        Ok(b"line 1\nline 2\n".to_vec()),
    );
    assert_eq!(
        app.run().logs.get("verify-2.test.log"),
        Some(&LogView::Loaded(b"line 1\nline 2\n".to_vec()))
    );
}

#[test]
fn the_timeline_shows_exactly_the_events_handed_over() {
    let events = events_with_gate(HumanGateKind::OutOfScope);
    let (mut app, _clock) = app_with(&events);
    // A replay position before the last event: the store hands its prefix.
    let _ = app.on_state(state_of(&events[..2]), &events[..2]);
    assert_eq!(
        app.run().events.iter().map(|e| e.seq).collect::<Vec<_>>(),
        vec![1, 2]
    );
    app.update(Action::TabTimeline);
    assert_eq!(app.rows.len(), 2);
    let _ = app.on_state(state_of(&events), &events);
    assert_eq!(
        app.run().events.iter().map(|e| e.seq).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    assert_eq!(app.rows.len(), 3);
}

#[test]
fn iteration_keys_move_between_iterations() {
    let events = vec![
        ev(1, run_started()),
        ev(
            2,
            crate::model::EventBody::IterationStarted {
                iteration: 1,
                trigger: "initial".into(),
            },
        ),
        ev(
            3,
            crate::model::EventBody::IterationStarted {
                iteration: 2,
                trigger: "ecarts".into(),
            },
        ),
    ];
    let (mut app, _clock) = app_with(&events);
    assert_eq!(app.shown_iteration(), 2);
    app.on_key(&ch('['));
    assert_eq!(
        (app.shown_iteration(), app.status()),
        (1, Some("iteration 1 of 2"))
    );
    app.on_key(&ch('['));
    assert_eq!(app.shown_iteration(), 1);
    app.on_key(&ch(']'));
    assert_eq!((app.shown_iteration(), app.iteration), (2, None));
}

#[test]
fn ctrl_c_quits_while_typing_a_filter_and_esc_leaves_it() {
    let (mut app, _clock) = app_with(&events_with_gate(HumanGateKind::OutOfScope));
    app.on_key(&ch('/'));
    assert!(matches!(app.mode(), Mode::Filter));
    type_text(&mut app, "q?");
    assert_eq!(app.filter, "q?", "keys are text while filtering");
    app.on_key(&key(KeyCode::Esc));
    assert!(matches!(app.mode(), Mode::Browse));
    assert_eq!(app.filter, "");
    app.on_key(&ch('/'));
    assert_eq!(app.on_key(&ctrl('c')), vec![Effect::Quit]);
}

/// An app on a run still going, owning its engine or not.
fn engine_app(owns: bool, ended: bool) -> App {
    let mut app = App::new(
        Config::default(),
        ThemeKind::Dark,
        Box::new(crate::tui::ManualClock::new(t0())),
        "/p/.pipeline".into(),
    );
    app.set_owns_engine(owns);
    let mut events = events_with_gate(HumanGateKind::OutOfScope);
    if ended {
        let line =
            r#"{"v":1,"seq":9,"at":"2026-12-01T08:10:00Z","type":"run.ended","status":"stopped"}"#;
        events.push(crate::model::Event::parse_line(line.as_bytes()).expect("run.ended"));
    }
    let _ = app.on_state(state_of(&events), &events);
    assert_eq!(app.state().ended.is_some(), ended);
    app
}

#[test]
fn quitting_a_run_whose_engine_the_app_owns_asks_first() {
    let mut app = engine_app(true, false);
    assert_eq!(type_text(&mut app, "q"), vec![]);
    assert!(matches!(app.mode(), Mode::ConfirmStop(None)));
    assert_eq!(app.status(), Some(STOP_QUESTION));
    // Anything but yes keeps the run going.
    assert_eq!(type_text(&mut app, "n"), vec![]);
    assert!(matches!(app.mode(), Mode::Browse));
    assert_eq!(app.status(), Some("the run goes on"));
    assert_eq!(type_text(&mut app, "q"), vec![]);
    assert_eq!(type_text(&mut app, "y"), vec![Effect::Quit]);
    // Ctrl-C asks too, and a second one leaves.
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(app.on_key(&ctrl_c), vec![]);
    assert!(matches!(app.mode(), Mode::ConfirmStop(None)));
    assert_eq!(app.on_key(&ctrl_c), vec![Effect::Quit]);
}

#[test]
fn watching_or_an_ended_run_quits_plainly() {
    assert_eq!(
        type_text(&mut engine_app(false, false), "q"),
        vec![Effect::Quit]
    );
    assert_eq!(
        type_text(&mut engine_app(true, true), "q"),
        vec![Effect::Quit]
    );
}

#[test]
fn the_stop_question_keeps_the_dialog_under_it() {
    let mut app = engine_app(true, false);
    let _ = app.update(Action::NextHumanGate);
    let _ = app.on_key(&KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert!(matches!(app.mode(), Mode::Dialog(_)), "{:?}", app.mode());
    let _ = app.update(Action::Quit);
    assert!(matches!(app.mode(), Mode::ConfirmStop(Some(_))));
    assert!(app.dialog().is_some());
    assert_eq!(type_text(&mut app, "n"), vec![]);
    assert!(matches!(app.mode(), Mode::Dialog(_)), "{:?}", app.mode());
}
