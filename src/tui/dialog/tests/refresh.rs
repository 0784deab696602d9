//! The evidence of an open dialog checked against what is there now: a
//! change is said, `ctrl-r` shows the recomputed evidence, and the decision
//! carries that text and its hash.

use ratatui::crossterm::event::KeyCode;

use super::{ID, opened};
use crate::model::HumanGateKind;
use crate::recorder::evidence::lines::{evidence_hash, evidence_text};
use crate::tui::dialog::Freshness;
use crate::tui::effect::Effect;
use crate::tui::testkit::*;

/// The evidence check `effects` ask for.
fn check_of(effects: &[Effect]) -> crate::tui::effect::EvidenceCheck {
    match effects {
        [Effect::CheckEvidence(c)] => c.clone(),
        other => panic!("no evidence check asked: {other:?}"),
    }
}

/// What a refresh would find: the request's evidence with `code` replaced
/// and `refreshed` saying why.
fn changed(
    check: &crate::tui::effect::EvidenceCheck,
    why: &str,
) -> crate::recorder::evidence::Refreshed {
    let mut evidence = check.request.evidence.clone();
    evidence["code"] = serde_json::json!(["+++ b/Makefile", "+deploy: all"]);
    evidence["refreshed"] = serde_json::json!([why]);
    crate::recorder::evidence::Refreshed {
        evidence,
        changes: vec![why.to_string()],
    }
}

#[test]
fn evidence_that_changed_since_the_gate_opened_is_said_and_refreshed_on_ctrl_r() {
    let (mut app, clock) = app_with(&events_with_gate(HumanGateKind::OutOfScope));
    app.on_key(&ch('4'));
    let first = check_of(&app.on_key(&key(KeyCode::Enter)));
    clock.advance(PAST_GUARD);
    let captured = app
        .dialog()
        .map(|d| (d.evidence.clone(), d.evidence_hash.clone()));
    assert_eq!(
        app.dialog().map(|d| d.freshness.clone()),
        Some(Freshness::Checking { apply: false })
    );
    assert_eq!(
        first.against,
        captured.as_ref().map(|c| c.1.clone()).unwrap()
    );
    // The check finds the file edited: said, nothing replaced yet.
    let why = "Makefile: edited since the gate opened";
    app.on_evidence_checked(ID, &first.against, false, changed(&first, why));
    let d = app.dialog().expect("open");
    assert_eq!(d.freshness, Freshness::Changed(vec![why.into()]));
    assert_eq!(
        Some((d.evidence.clone(), d.evidence_hash.clone())),
        captured
    );
    // A choice and a reason typed, then ctrl-r: the evidence is recomputed and shown.
    app.on_key(&ch('a'));
    type_text(&mut app, "fine");
    let again = check_of(&app.on_key(&ctrl('r')));
    assert!(again.apply);
    let fresh = changed(&again, why);
    // A result computed for other evidence than the one shown is dropped.
    app.on_evidence_checked(ID, "sha256:other", true, fresh.clone());
    assert_eq!(app.dialog().map(|d| d.refreshed), Some(false));
    app.on_evidence_checked("hg-9-other-1", &again.against, true, fresh.clone());
    assert_eq!(app.dialog().map(|d| d.refreshed), Some(false));
    app.on_evidence_checked(ID, &again.against, true, fresh.clone());
    let d = app.dialog().expect("open");
    assert!(d.refreshed);
    assert_eq!(d.freshness, Freshness::Current);
    assert!(
        d.evidence
            .iter()
            .any(|l| l == &format!("refreshed before deciding: {why}")),
        "{:#?}",
        d.evidence
    );
    assert!(
        d.evidence.iter().any(|l| l == "  +deploy: all"),
        "{:#?}",
        d.evidence
    );
    assert_ne!(
        Some(d.evidence_hash.clone()),
        captured.as_ref().map(|c| c.1.clone())
    );
    // The choice is asked again; the reason is kept.
    assert_eq!((d.chosen, d.reason.as_str()), (None, "fine"));
    assert_eq!(
        d.message.as_deref(),
        Some("evidence refreshed: read it again and choose")
    );
    // A state update that does not touch the request keeps the refresh.
    let events = events_with_gate(HumanGateKind::OutOfScope);
    let _ = app.on_state(state_of(&events), &events);
    assert_eq!(app.dialog().map(|d| d.refreshed), Some(true));
    // The decision carries the refreshed text and its hash.
    clock.advance(PAST_GUARD);
    app.on_key(&ch('a'));
    let shown = app.dialog().map(|d| d.evidence.clone()).unwrap();
    let effects = app.on_key(&ctrl('s'));
    let [Effect::WriteDecision(req)] = &effects[..] else {
        panic!("no decision: {effects:?}");
    };
    assert_eq!(req.evidence, evidence_text(&shown));
    assert_eq!(req.evidence_hash, evidence_hash(&shown));
    assert_eq!(
        req.evidence_hash,
        crate::util::sha256_tagged(req.evidence.as_bytes())
    );
}

#[test]
fn a_refresh_that_finds_nothing_changed_keeps_the_evidence_captured() {
    let (mut app, _clock) = opened(HumanGateKind::Unverifiable);
    let before = app.dialog().map(|d| d.evidence_hash.clone());
    let check = check_of(&app.on_key(&ctrl('r')));
    let same = crate::recorder::evidence::Refreshed {
        evidence: check.request.evidence.clone(),
        changes: Vec::new(),
    };
    app.on_evidence_checked(ID, &check.against, true, same);
    let d = app.dialog().expect("open");
    assert_eq!(Some(d.evidence_hash.clone()), before);
    assert_eq!(
        (d.refreshed, d.freshness.clone()),
        (false, Freshness::Current)
    );
    assert_eq!(
        d.message.as_deref(),
        Some("the evidence is as it is now: nothing to refresh")
    );
}
