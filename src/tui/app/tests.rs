//! Tests of the app outside the dialog: announcements, navigation, filter,
//! copy, logs, stale age.

use ratatui::crossterm::event::KeyCode;

use super::*;
use crate::model::{Decision, HumanGateKind};
use crate::tui::testkit::*;

/// An app on `config` in the dark theme, on a clock at [`t0`], watching
/// `/p/.pipeline`, fed no state yet.
fn bare_app(config: Config) -> App {
    let clock = crate::tui::ManualClock::new(t0());
    App::new(
        config,
        ThemeKind::Dark,
        Box::new(clock),
        "/p/.pipeline".into(),
    )
}

#[test]
fn a_new_gate_rings_once_and_notifies_the_terminal_but_not_on_first_load() {
    let mut config = Config::default();
    config.shared.on_human_gate = Some("notify".into());
    let mut app = bare_app(config);
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
            Effect::TerminalNotice {
                gate: "hg-1-conformity-2".into(),
                text: "hg-1-conformity-2 (cap-reached) waits on you: cap-reached gate for a test"
                    .into()
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
    // With the terminal notification off, only the bell.
    let mut off = Config::default();
    off.shared.notify.terminal = crate::notify::TerminalNotice::Off;
    let mut app = bare_app(off);
    let mut events = events_with_gate(HumanGateKind::OutOfScope);
    app.on_state(state_of(&events), &events);
    let new = ev(
        5,
        request("hg-1-conformity-3", HumanGateKind::CapReached, evidence()),
    );
    events.push(new.clone());
    assert_eq!(
        app.on_state(state_of(&events), std::slice::from_ref(&new)),
        vec![Effect::Bell]
    );
    assert_eq!(app.title(), "loopwatch ⚑2 · 2026-11-02-demo-1000");
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
fn copy_scrubs_secrets_and_says_so() {
    let key = "AKIAIOSFODNN7EXAMPLE";
    let mut events = events_with_gate(HumanGateKind::OutOfScope);
    if let crate::model::EventBody::HumanRequested(r) = &mut events[2].body {
        r.summary = format!("leaked {key} in Cargo.lock");
    }
    let (mut app, _clock) = app_with(&events);
    app.on_key(&ch('4'));
    let effects = app.on_key(&ch('y'));
    let [Effect::CopyToClipboard(text)] = &effects[..] else {
        panic!("{effects:?}");
    };
    assert!(!text.contains(key), "{text}");
    assert!(
        text.contains("leaked [redacted:aws-access-key] in Cargo.lock"),
        "{text}"
    );
    assert_eq!(
        app.status(),
        Some("row copied to the clipboard, secrets redacted")
    );
}

#[test]
fn logs_load_once_and_never_outside_the_pipeline() {
    use crate::model::VerifyOutcome;
    let result = |seq, finding: &str, result, log: &str| {
        let r = crate::model::event::VerifyResult {
            iteration: 1,
            finding: finding.into(),
            result,
            test_ref: "t".into(),
            file: "t.rs".into(),
            log: log.into(),
            note: String::new(),
            evidence_gate: None,
            extra: Default::default(),
        };
        ev(seq, crate::model::EventBody::from(r))
    };
    let events = vec![
        ev(1, run_started()),
        result(2, "F1", VerifyOutcome::Confirmed, "../../etc/passwd"),
        result(3, "F2", VerifyOutcome::Inconclusive, "verify-2.test.log"),
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
        ev(2, iteration_started(1, "initial")),
        ev(3, iteration_started(2, "ecarts")),
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

#[test]
fn the_digest_after_focus_comes_back_lists_what_happened_and_any_key_dismisses_it() {
    let mut events = events_with_gate(HumanGateKind::OutOfScope);
    let (mut app, _clock) = app_with(&events);
    // Focus back without anything new: no digest.
    app.on_focus_lost();
    app.on_focus_gained();
    assert_eq!(app.digest(), None);
    app.on_focus_lost();
    let new = [
        ev(
            4,
            request("hg-1-conformity-2", HumanGateKind::CapReached, evidence()),
        ),
        ev(
            5,
            decided("hg-1-conformity-2", Decision::Extend, "one more", "a@b"),
        ),
        ev(
            6,
            request("hg-1-conformity-3", HumanGateKind::Structural, evidence()),
        ),
        ev(
            7,
            crate::model::EventBody::from(crate::model::event::RunEnded {
                status: crate::model::EndStatus::Aborted,
                report: None,
            }),
        ),
    ];
    events.extend(new.iter().cloned());
    app.on_state(state_of(&events), &new);
    // Still away: nothing shown yet.
    assert_eq!(app.digest(), None);
    app.on_focus_gained();
    assert_eq!(
        app.digest(),
        Some(
            "while you were away: 2 gates opened (hg-1-conformity-2, hg-1-conformity-3; 1 still waiting), \
             1 run ended (2026-11-02-demo-1000 aborted) · any key dismisses"
        )
    );
    // The key that dismisses it does nothing else.
    let tab = app.tab();
    assert_eq!(app.on_key(&ch('5')), vec![]);
    assert_eq!(app.digest(), None);
    assert_eq!(app.tab(), tab);
    app.on_key(&ch('5'));
    assert_eq!(app.tab(), Tab::Timeline);
}

#[test]
fn the_digest_on_start_counts_from_the_seq_last_seen() {
    let mut events = events_with_gate(HumanGateKind::OutOfScope);
    events.push(ev(
        4,
        request("hg-1-conformity-2", HumanGateKind::CapReached, evidence()),
    ));
    let (mut app, _clock) = app_with(&events);
    app.digest_since_last_look(&[Some(3)]);
    assert_eq!(
        app.digest(),
        Some(
            "while you were away: 1 gate opened (hg-1-conformity-2; 1 still waiting) · any key dismisses"
        )
    );
    // Never seen before, or a journal shorter than what was seen: nothing.
    app.digest_since_last_look(&[None]);
    assert_eq!(app.digest(), None);
    app.digest_since_last_look(&[Some(99)]);
    assert_eq!(app.digest(), None);
    assert_eq!(app.seen(), vec![4]);
}

/// Two iterations, each with a GATE 0 snapshot.
fn two_iterations() -> Vec<crate::model::Event> {
    use crate::model::EventBody;
    let floor = |seq, iteration, tree: &str| {
        ev(
            seq,
            EventBody::GateStarted {
                gate: crate::model::GateName::Floor,
                iteration,
                round: 1,
                tree: Some(tree.into()),
                tree_missing: None,
            },
        )
    };
    vec![
        ev(1, run_started()),
        ev(2, iteration_started(1, "initial")),
        floor(3, 1, &"a".repeat(40)),
        ev(4, iteration_started(2, "initial")),
        floor(5, 2, &"b".repeat(40)),
    ]
}

fn hunk_file(n: usize) -> crate::code::FileDiff {
    let mut lines = vec![" context".to_string(), "-old line".into()];
    lines.extend((0..n).map(|i| format!("+new line {i}")));
    lines.push("+the needle".into());
    crate::code::FileDiff {
        path: "src/lib.rs".into(),
        status: crate::code::FileStatus::Modified,
        old_path: None,
        added: u32::try_from(n + 1).unwrap(),
        removed: 1,
        summary: None,
        hunks: vec![crate::code::Hunk {
            old_start: 1,
            old_lines: 2,
            new_start: 1,
            new_lines: u32::try_from(n + 2).unwrap(),
            lines,
        }],
    }
}

fn pane(app: &App) -> &crate::tui::code_pane::CodePane {
    match &app.mode {
        Mode::Diff(p) => p,
        _ => panic!("the d overlay is not open"),
    }
}

#[test]
fn the_diff_overlay_asks_for_the_code_off_the_render_path_and_shows_it() {
    use crate::tui::code_pane::{CodeLineKind, CodeState};
    let (mut app, _clock) = app_with(&two_iterations());
    let effects = app.on_key(&ch('d'));
    let [Effect::LoadCode(req)] = &effects[..] else {
        panic!("{effects:?}");
    };
    assert_eq!((req.from, req.to), (1, 2));
    assert_eq!(req.a.as_str(), "a".repeat(40));
    assert_eq!(req.b.as_str(), "b".repeat(40));
    assert_eq!(pane(&app).state, CodeState::Loading);
    // A late answer for other iterations is ignored.
    app.on_code_loaded(0, 2, Ok(vec![]));
    assert_eq!(pane(&app).state, CodeState::Loading);
    app.on_code_loaded(1, 2, Ok(vec![hunk_file(60)]));
    let lines = pane(&app).lines();
    assert_eq!(lines[0].text, "M  src/lib.rs  +61 -1");
    let kind_of = |t: &str| lines.iter().find(|l| l.text == t).map(|l| l.kind);
    assert_eq!(kind_of("-old line"), Some(CodeLineKind::Removed));
    assert_eq!(kind_of("+new line 0"), Some(CodeLineKind::Added));
    assert_eq!(kind_of("@@ -1,2 +1,62 @@"), Some(CodeLineKind::Hunk));
    // Scrolling and search.
    app.on_key(&key(KeyCode::PageDown));
    assert_eq!(pane(&app).scroll, app.page);
    app.on_key(&key(KeyCode::Home));
    for c in "/NEEDLE".chars() {
        app.on_key(&ch(c));
    }
    assert_eq!(pane(&app).typing.as_deref(), Some("NEEDLE"));
    app.on_key(&key(KeyCode::Enter));
    let p = pane(&app);
    assert_eq!(p.lines()[p.scroll].text, "+the needle");
    app.on_key(&ch('n'));
    assert_eq!(
        pane(&app).lines()[pane(&app).scroll].text,
        "+the needle",
        "wraps to itself"
    );
    for c in "/absent".chars() {
        app.on_key(&ch(c));
    }
    app.on_key(&key(KeyCode::Enter));
    assert_eq!(
        pane(&app).message.as_deref(),
        Some("no line holds \"absent\"")
    );
    app.on_key(&key(KeyCode::Esc));
    assert!(matches!(app.mode, Mode::Browse));
}

#[test]
fn the_diff_overlay_says_why_when_a_snapshot_is_missing() {
    use crate::tui::code_pane::CodeState;
    let mut events = two_iterations();
    events.truncate(4);
    let (mut app, _clock) = app_with(&events);
    assert_eq!(app.on_key(&ch('d')), vec![], "nothing to compute");
    assert_eq!(
        pane(&app).state,
        CodeState::Unavailable("no snapshot of iteration 2 in the journal".into())
    );
}

/// An app on a run still going, owning its engine or not.
fn engine_app(owns: bool, ended: bool) -> App {
    let mut app = bare_app(Config::default());
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
fn added_and_removed_lines_are_coloured_and_marked() {
    let (mut app, _clock) = app_on(
        crate::tui::config::ThemeKind::Light,
        t0(),
        "/p/.pipeline",
        &two_iterations(),
    );
    app.on_key(&ch('d'));
    app.on_code_loaded(1, 2, Ok(vec![hunk_file(3)]));
    let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 40)).unwrap();
    term.draw(|f| crate::tui::view::render(f, &app)).unwrap();
    let buf = term.backend().buffer().clone();
    let find = |needle: &str| {
        (0..buf.area.height).find_map(|y| {
            let row: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
            row.find(needle).map(|i| {
                let x = u16::try_from(row[..i].chars().count()).unwrap();
                buf[(x, y)].fg
            })
        })
    };
    let good = app.theme.tone(crate::tui::theme::Tone::Good).fg;
    let bad = app.theme.tone(crate::tui::theme::Tone::Bad).fg;
    assert_ne!(good, bad);
    assert_eq!(find("+new line 0"), good);
    assert_eq!(find("-old line"), bad);
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
