//! Tests of the decision flow, driven through the app without a terminal.

use ratatui::crossterm::event::KeyCode;

use super::*;
use crate::model::{Decision, HumanGateKind};
use crate::recorder::Refusal;
use crate::recorder::evidence::lines::{evidence_hash, evidence_lines, evidence_text};
use crate::tui::app::Tab;
use crate::tui::effect::Effect;
use crate::tui::testkit::*;

mod note;
mod refresh;

pub(super) const ID: &str = "hg-1-conformity-1";

/// An app with one open gate of `kind`, its dialog open, the guard passed.
pub(super) fn opened(kind: HumanGateKind) -> (crate::tui::App, crate::tui::ManualClock) {
    let (mut app, clock) = app_with(&events_with_gate(kind));
    assert_eq!(app.on_key(&ch('4')), vec![]);
    assert_eq!(app.tab(), Tab::Gates);
    let effects = app.on_key(&key(KeyCode::Enter));
    // Opening asks at once whether the evidence captured is still current.
    let [Effect::CheckEvidence(check)] = &effects[..] else {
        panic!("opening the dialog asks for no evidence check: {effects:?}");
    };
    assert!(!check.apply);
    assert_eq!(check.request.id, ID);
    assert!(app.dialog().is_some());
    clock.advance(PAST_GUARD);
    (app, clock)
}

fn phase(app: &crate::tui::App) -> Phase {
    app.dialog().expect("dialog open").phase.clone()
}

#[test]
fn every_option_of_every_kind_confirms_with_its_key() {
    for &kind in HumanGateKind::ALL {
        for option in kind.options() {
            let (mut app, _clock) = opened(kind);
            let d = app.dialog().expect("open");
            assert_eq!(d.options, kind.options());
            let (expected_hash, expected_text) = {
                let state = state_of(&events_with_gate(kind));
                let lines = evidence_lines(&state.human_gates[0].request);
                (evidence_hash(&lines), evidence_text(&lines))
            };
            assert_eq!(
                expected_hash,
                crate::util::sha256_tagged(expected_text.as_bytes()),
                "the hash covers exactly the evidence file's bytes"
            );
            assert_eq!(
                app.on_key(&ch(crate::tui::dialog::option_key(kind, option))),
                vec![]
            );
            assert_eq!(
                app.dialog().map(|d| (d.chosen, d.focus)),
                Some((Some(option), Focus::Reason))
            );
            assert_eq!(type_text(&mut app, "checked by hand"), vec![]);
            let effects = app.on_key(&ctrl('s'));
            assert_eq!(
                effects,
                vec![Effect::WriteDecision(crate::tui::DecisionRequest {
                    id: ID.into(),
                    decision: option,
                    reason: "checked by hand".into(),
                    evidence_hash: expected_hash,
                    evidence: expected_text,
                    note: None,
                })],
                "{kind} {option}"
            );
            assert!(matches!(phase(&app), Phase::Saving));
            app.on_write_result(Ok(()));
            assert!(app.dialog().is_none());
            assert_eq!(
                app.status(),
                Some(format!("decision saved ({ID}: {option})").as_str())
            );
        }
    }
}

#[test]
fn option_keys_of_other_kinds_do_nothing() {
    let (mut app, _clock) = opened(HumanGateKind::OutOfScope);
    // `l` lifts an abandonment, not an out-of-scope file.
    assert_eq!(app.on_key(&ch('l')), vec![]);
    assert_eq!(app.dialog().map(|d| d.chosen), Some(None));
    assert_eq!(app.on_key(&ctrl('s')), vec![]);
    assert_eq!(
        app.dialog().and_then(|d| d.message.clone()).as_deref(),
        Some("choose an option first")
    );
}

#[test]
fn empty_reason_is_refused() {
    let (mut app, _clock) = opened(HumanGateKind::CapReached);
    app.on_key(&ch('e'));
    assert_eq!(app.on_key(&ctrl('s')), vec![]);
    assert_eq!(
        app.dialog().and_then(|d| d.message.clone()).as_deref(),
        Some("a reason is required")
    );
    type_text(&mut app, "   ");
    assert_eq!(app.on_key(&ctrl('s')), vec![]);
    assert!(matches!(phase(&app), Phase::Editing));
}

#[test]
fn paste_goes_to_the_reason_and_never_confirms() {
    let (mut app, _clock) = opened(HumanGateKind::OutOfScope);
    app.on_key(&ch('a'));
    app.on_paste("ok\u{13}\r\nshipped\u{1b}[2J");
    let d = app.dialog().expect("still open");
    assert_eq!(d.reason, "ok  shipped[2J");
    assert!(matches!(d.phase, Phase::Editing));
    // Even with the focus on the options, a paste lands in the reason only.
    app.on_key(&key(KeyCode::Tab));
    app.on_paste("a");
    let d = app.dialog().expect("still open");
    assert_eq!(
        (d.reason.as_str(), d.chosen),
        ("ok  shipped[2Ja", Some(Decision::Approve))
    );
}

#[test]
fn keys_within_300ms_of_opening_are_ignored() {
    let (mut app, clock) = app_with(&events_with_gate(HumanGateKind::OutOfScope));
    app.on_key(&ch('4'));
    app.on_key(&key(KeyCode::Enter));
    clock.advance(std::time::Duration::from_millis(100));
    app.on_key(&ch('a'));
    app.on_paste("pasted too early");
    clock.advance(std::time::Duration::from_millis(199));
    app.on_key(&ch('a'));
    let d = app.dialog().expect("open");
    assert_eq!((d.chosen, d.reason.as_str()), (None, ""));
    clock.advance(std::time::Duration::from_millis(1));
    app.on_key(&ch('a'));
    assert_eq!(app.dialog().and_then(|d| d.chosen), Some(Decision::Approve));
}

#[test]
fn gate_decided_elsewhere_shows_that_decision() {
    let mut events = events_with_gate(HumanGateKind::OutOfScope);
    let (mut app, _clock) = opened(HumanGateKind::OutOfScope);
    app.on_key(&ch('x'));
    type_text(&mut app, "not in scope");
    let new = ev(
        4,
        decided(ID, Decision::Approve, "needed for the build", "dana@devbox"),
    );
    events.push(new.clone());
    let _ = app.on_state(state_of(&events), &[new]);
    match phase(&app) {
        Phase::DecidedElsewhere(r) => {
            assert_eq!(
                (r.decision.decision, r.decision.by.as_str()),
                (Decision::Approve, "dana@devbox")
            );
        }
        other => panic!("expected decided elsewhere, got {other:?}"),
    }
    assert_eq!(app.on_key(&ctrl('s')), vec![]);
    assert_eq!(app.on_key(&key(KeyCode::Esc)), vec![]);
    assert!(app.dialog().is_none());
}

#[test]
fn gate_expiring_while_the_dialog_is_open_says_expired_and_saves_nothing() {
    let mut events = events_with_gate(HumanGateKind::OutOfScope);
    let (mut app, _clock) = opened(HumanGateKind::OutOfScope);
    app.on_key(&ch('a'));
    type_text(&mut app, "looks fine");
    let new = ev(
        4,
        crate::model::EventBody::from(crate::model::event::HumanExpired {
            id: ID.into(),
            after: "30m".into(),
            action: Decision::Deny,
            extra: Default::default(),
        }),
    );
    events.push(new.clone());
    let _ = app.on_state(state_of(&events), &[new]);
    match phase(&app) {
        Phase::Expired(x) => assert_eq!((x.action, x.after.as_str()), (Decision::Deny, "30m")),
        other => panic!("expected expired, got {other:?}"),
    }
    assert!(!app.dialog().is_some_and(|d| d.has_typed_reason()));
    assert_eq!(app.on_key(&ctrl('s')), vec![]);
    assert_eq!(app.on_key(&key(KeyCode::Esc)), vec![]);
    assert!(app.dialog().is_none());
    // The Gates tab marks it EXPIRED, not as a decision; enter says so.
    let mark = crate::tui::rows::human_gates::status_mark(&app, 0);
    assert_eq!((mark.symbol, mark.word.as_str()), ("⌛", "EXPIRED deny"));
    assert_eq!(app.on_key(&key(KeyCode::Enter)), vec![]);
    assert!(app.dialog().is_none());
}

#[test]
fn own_decision_seen_before_the_write_result_is_not_someone_elses() {
    let mut events = events_with_gate(HumanGateKind::OutOfScope);
    let (mut app, _clock) = opened(HumanGateKind::OutOfScope);
    app.on_key(&ch('a'));
    type_text(&mut app, "fine");
    let Some(Effect::WriteDecision(req)) = app.on_key(&ctrl('s')).pop() else {
        panic!("no write")
    };
    let mut body = decided(ID, Decision::Approve, "fine", "me@here");
    if let crate::model::EventBody::HumanDecided(d) = &mut body {
        d.evidence_hash = req.evidence_hash.clone();
    }
    events.push(ev(4, body));
    let _ = app.on_state(state_of(&events), &events[3..]);
    assert!(matches!(phase(&app), Phase::Saving));
    app.on_write_result(Ok(()));
    assert!(app.dialog().is_none());
}

#[test]
fn write_failure_keeps_the_reason_and_retry_is_possible() {
    let (mut app, _clock) = opened(HumanGateKind::Structural);
    app.on_key(&ch('r'));
    type_text(&mut app, "flaky verifier");
    assert_eq!(app.on_key(&ctrl('s')).len(), 1);
    app.on_write_result(Err(Refusal::EngineDrives { pid: 4242 }.into()));
    let d = app.dialog().expect("kept open");
    assert!(
        matches!(&d.phase, Phase::Failed(e) if matches!(**e, RecordError::Refused(Refusal::EngineDrives { pid: 4242 }))),
        "{:?}",
        d.phase
    );
    assert_eq!(d.reason, "flaky verifier");
    let retry = app.on_key(&ctrl('s'));
    assert!(
        matches!(&retry[..], [Effect::WriteDecision(r)] if r.reason == "flaky verifier" && r.decision == Decision::Retry)
    );
    app.on_write_result(Ok(()));
    assert_eq!(
        app.status(),
        Some("decision saved (hg-1-conformity-1: retry)")
    );
}

#[test]
fn changed_evidence_is_shown_and_asked_again() {
    let (mut app, clock) = opened(HumanGateKind::OutOfScope);
    app.on_key(&ch('a'));
    type_text(&mut app, "ok");
    let old_hash = app.dialog().map(|d| d.evidence_hash.clone());
    let events = events_with_request(request(
        ID,
        HumanGateKind::OutOfScope,
        serde_json::json!({"paths": ["Cargo.lock", "build.rs"]}),
    ));
    let _ = app.on_state(state_of(&events), &events);
    let d = app.dialog().expect("open");
    assert_ne!(Some(d.evidence_hash.clone()), old_hash);
    assert!(d.evidence.iter().any(|l| l == "path: build.rs"));
    assert_eq!(
        (d.chosen, d.focus, d.reason.as_str()),
        (None, Focus::Options, "ok")
    );
    assert_eq!(
        d.message.as_deref(),
        Some("the evidence changed while this dialog was open: read it again and choose")
    );
    // The guard starts again: an immediate key is dropped.
    app.on_key(&ch('a'));
    assert_eq!(app.dialog().and_then(|d| d.chosen), None);
    clock.advance(PAST_GUARD);
    app.on_key(&ch('a'));
    assert_eq!(app.dialog().and_then(|d| d.chosen), Some(Decision::Approve));
}

#[test]
fn quit_asks_first_while_a_reason_is_typed() {
    let (mut app, _clock) = opened(HumanGateKind::OutOfScope);
    app.on_key(&ch('a'));
    type_text(&mut app, "q is just a letter here");
    assert_eq!(
        app.dialog().map(|d| d.reason.as_str()),
        Some("q is just a letter here")
    );
    app.on_key(&key(KeyCode::Tab));
    assert_eq!(app.on_key(&ch('q')), vec![]);
    assert_eq!(
        app.status(),
        Some("a decision reason is being typed: quit anyway? (y/n)")
    );
    assert_eq!(app.on_key(&ch('n')), vec![]);
    assert!(app.dialog().is_some());
    app.on_key(&ch('q'));
    assert_eq!(app.on_key(&ch('y')), vec![Effect::Quit]);
}

#[test]
fn tab_goes_back_to_the_options_and_esc_cancels_without_writing() {
    let (mut app, _clock) = opened(HumanGateKind::Unverifiable);
    app.on_key(&ch('a'));
    app.on_key(&key(KeyCode::Tab));
    app.on_key(&ch('x'));
    assert_eq!(
        app.dialog().map(|d| (d.chosen, d.focus)),
        Some((Some(Decision::Reject), Focus::Reason))
    );
    assert_eq!(app.on_key(&key(KeyCode::Esc)), vec![]);
    assert!(app.dialog().is_none());
}

#[test]
fn no_decision_in_replay() {
    let (mut app, _clock) = app_with(&events_with_gate(HumanGateKind::OutOfScope));
    app.set_replay(Some(crate::tui::app::ReplayBar {
        event: 3,
        total: 3,
        at: "2026-11-02T10:00:03Z".into(),
        iteration: 1,
    }));
    app.on_key(&ch('4'));
    app.on_key(&key(KeyCode::Enter));
    assert!(app.dialog().is_none());
    assert_eq!(app.status(), Some("decisions cannot be taken in replay"));
}

#[test]
fn help_over_the_dialog_closes_back_to_it_and_ctrl_c_asks_before_losing_a_reason() {
    use crate::tui::app::Mode;
    let (mut app, _clock) = opened(HumanGateKind::OutOfScope);
    let _ = app.update(crate::tui::Action::Help);
    assert!(
        matches!(app.mode(), Mode::Help(Some(_))),
        "{:?}",
        app.mode()
    );
    assert!(app.dialog().is_some(), "the dialog waits under the help");
    assert_eq!(app.on_key(&ch('x')), vec![]);
    assert!(matches!(app.mode(), Mode::Dialog(_)), "{:?}", app.mode());
    app.on_paste("because");
    assert_eq!(app.on_key(&ctrl('c')), vec![]);
    assert!(
        matches!(app.mode(), Mode::ConfirmQuit(_)),
        "{:?}",
        app.mode()
    );
    assert_eq!(app.on_key(&ch('n')), vec![]);
    assert_eq!(app.status(), Some("quit cancelled"));
    assert_eq!(app.dialog().map(|d| d.reason.as_str()), Some("because"));
    assert_eq!(app.on_key(&ctrl('c')), vec![]);
    assert_eq!(app.on_key(&ch('y')), vec![Effect::Quit]);
}

#[test]
fn a_captured_hunk_is_shown_and_read_a_page_at_a_time() {
    let mut code = vec!["--- a/Cargo.lock".to_string(), "+++ b/Cargo.lock".into()];
    code.push("@@ -1,1 +1,60 @@".into());
    code.extend((0..60).map(|i| format!("+line {i}")));
    let events = events_with_request(request(
        ID,
        HumanGateKind::OutOfScope,
        serde_json::json!({"paths": ["Cargo.lock"], "code": code}),
    ));
    let (mut app, clock) = app_with(&events);
    app.on_key(&ch('4'));
    app.on_key(&key(KeyCode::Enter));
    clock.advance(PAST_GUARD);
    let d = app.dialog().expect("open");
    let at = |l: &str| d.evidence.iter().position(|e| e == l);
    let header = at("code (as captured when the gate opened):").expect("code heading");
    assert_eq!(at("  +line 0"), Some(header + 4), "{:#?}", d.evidence);
    assert!(at("  +line 59").is_some());
    let last = d.evidence.len() - 1;
    app.on_key(&key(KeyCode::PageDown));
    assert_eq!(app.dialog().map(|d| d.scroll), Some(EVIDENCE_PAGE));
    for _ in 0..10 {
        app.on_key(&key(KeyCode::PageDown));
    }
    assert_eq!(
        app.dialog().map(|d| d.scroll),
        Some(last),
        "stops at the last line"
    );
    app.on_key(&key(KeyCode::PageUp));
    assert_eq!(app.dialog().map(|d| d.scroll), Some(last - EVIDENCE_PAGE));
    app.on_key(&key(KeyCode::Up));
    assert_eq!(
        app.dialog().map(|d| d.scroll),
        Some(last - EVIDENCE_PAGE - 1)
    );
}

#[test]
fn the_options_say_when_keys_start_to_count() {
    let (mut app, clock) = app_with(&events_with_gate(HumanGateKind::OutOfScope));
    app.on_key(&ch('4'));
    app.on_key(&key(KeyCode::Enter));
    let screen = |app: &crate::tui::App| {
        let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(100, 30)).unwrap();
        term.draw(|f| crate::tui::view::render(f, app)).unwrap();
        let buf = term.backend().buffer().clone();
        (0..buf.area.height)
            .map(|y| {
                (0..buf.area.width)
                    .map(|x| buf[(x, y)].symbol())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    // Just opened: keys are dropped, the options say so, and the event
    // loop is told when to draw them ready.
    let opened = app.dialog().expect("open").armed_at();
    assert_eq!(app.dialog_arms_at(), Some(opened));
    let waiting = screen(&app);
    assert!(waiting.contains("options (a moment):"), "{waiting}");
    assert!(
        waiting.contains("[a] approve — add the file to FILE SCOPE"),
        "{waiting}"
    );
    app.on_key(&ch('a'));
    assert_eq!(app.dialog().and_then(|d| d.chosen), None);
    clock.advance(PAST_GUARD);
    assert_eq!(app.dialog_arms_at(), None);
    let ready = screen(&app);
    assert!(ready.contains("options:"), "{ready}");
    assert!(
        ready.contains("[x] deny — back to the developer as a gap to close"),
        "{ready}"
    );
    assert!(!ready.contains("a moment"));
    app.on_key(&ch('a'));
    assert_eq!(app.dialog().and_then(|d| d.chosen), Some(Decision::Approve));
}

#[test]
fn a_gate_with_an_approval_counted_says_who_approved_so_far() {
    let mut events = events_with_gate(HumanGateKind::OutOfScope);
    let mut approval = crate::model::event::HumanDecision {
        id: ID.into(),
        decision: Decision::Approve,
        reason: "fine".into(),
        by: "ana@desk".into(),
        evidence_hash: String::new(),
        contract_edit: None,
        note: None,
        extra: Default::default(),
    };
    approval
        .extra
        .insert("approver".into(), "signer ana@example.org".into());
    let seq = events.len() as u64 + 1;
    events.push(ev(
        seq,
        crate::model::EventBody::HumanApproved(Box::new(approval)),
    ));
    let state = state_of(&events);
    let gate = &state.human_gates[0];
    assert!(gate.is_open());
    assert_eq!(gate.approvals.len(), 1);
    assert_eq!(
        crate::audit::policy::approvals_line(gate, None).as_deref(),
        Some("approved so far by signer ana@example.org")
    );
    let d = Dialog::open(gate, t0());
    assert!(d.approvals.is_some());
}
