//! The decision dialog of every kind of human gate: each option on its own
//! line beside its key, saying what it does in the rules' words, and the
//! gate's origin where a gate without a loop gate used to show `none`.

use loopwatch::model::event::HumanRequest;
use loopwatch::model::{EventBody, GateName, HumanGateKind};
use loopwatch::tui::testkit::events_with_request;
use serde_json::json;

use super::*;

/// A gate of `kind` as the rules open it: its id, the gate that asked,
/// its subject and summary, and its evidence.
fn gate_of(kind: HumanGateKind) -> HumanRequest {
    let (id, gate, subject, summary, evidence) = match kind {
        HumanGateKind::Abandoned => (
            "hg-1-conformity-1",
            Some(GateName::Conformity),
            "4",
            "criterion 4 abandoned: no 10k-page fixture in CI",
            json!({"rows": [{"id": "4", "text": "Renders a 10k-page report under 2 s", "status": "ABANDONED", "detail": "no fixture"}]}),
        ),
        HumanGateKind::Unverifiable => (
            "hg-1-conformity-1",
            Some(GateName::Conformity),
            "2",
            "criterion 2 UNVERIFIABLE: needs a printer",
            json!({"rows": [{"id": "2", "text": "The PDF prints", "status": "UNVERIFIABLE", "detail": "needs a printer"}]}),
        ),
        HumanGateKind::UnverifiableFinding => (
            "hg-1-findings-1",
            None,
            "F4",
            "finding F4 UNVERIFIABLE: needs a million lines",
            json!({"findings": [{"id": "F4", "severity": "minor", "path": "src/total.sh", "lines": "5", "claim": "awk is slow on a million lines", "verdict": "UNVERIFIABLE", "note": "needs a million lines"}]}),
        ),
        HumanGateKind::OutOfScope => (
            "hg-1-conformity-1",
            Some(GateName::Conformity),
            "Makefile",
            "Makefile changed outside FILE SCOPE",
            json!({"paths": ["Makefile"]}),
        ),
        HumanGateKind::CapReached => (
            "hg-3-conformity-1",
            Some(GateName::Conformity),
            "conformity",
            "GATE 1 conformity used 3 of 3 rounds: last verdict ECARTS(1)",
            json!({"verdict": {"kind": "ECARTS", "n": 1}}),
        ),
        HumanGateKind::Structural => (
            "hg-1-developer-1",
            None,
            "developer",
            "the developer dispatch failed twice: exited with status 4",
            json!({"failure": "exited with status 4"}),
        ),
        HumanGateKind::ContractChanged => (
            "hg-1-contract-1",
            None,
            "docs/contract.md",
            "the contract's ACCEPTANCE CRITERIA changed while the run goes on",
            json!({}),
        ),
        HumanGateKind::Budget => (
            "hg-2-budget-1",
            None,
            "developer.usd",
            "budget developer.usd: spent $2.1000 of $2.0000: the next dispatch (developer) waits for a person (raise adds $2.0000)",
            json!({"key": "developer.usd", "spent": "$2.1000", "limit": "$2.0000", "raiseBy": "$2.0000"}),
        ),
        HumanGateKind::Stagnant => (
            "hg-2-floor-1",
            Some(GateName::Floor),
            "floor",
            "GATE 0 floor: 1 round(s) without progress: the developer's dispatch left the code's tree unchanged",
            json!({"rounds": [{"iteration": 1, "round": 1, "verdict": "UNMET(1)", "tree": "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "rows": [{"key": "criterion 1", "text": "1. The total shows cents — UNMET"}]}, {"iteration": 2, "round": 2, "verdict": "UNMET(1)", "tree": "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "rows": [{"key": "criterion 1", "text": "1. The total shows cents — UNMET"}]}]}),
        ),
    };
    HumanRequest {
        id: id.into(),
        kind,
        gate,
        iteration: 1,
        subject: subject.into(),
        summary: summary.into(),
        options: kind.options(),
        evidence,
        expires: None,
        extra: Default::default(),
    }
}

/// The dialog of `req`, open and past its key guard, as text at 100x30.
fn dialog_text(req: HumanRequest) -> String {
    let events = events_with_request(EventBody::from(req));
    let (mut a, clock) = app(ThemeKind::NoColor, &events);
    open_dialog(&mut a, &clock);
    assert!(a.dialog().is_some());
    let buf = draw(&a, 100, 30);
    no_colour_anywhere(&buf);
    let text = frame_text(&buf);
    text[..text.find("--- styles").unwrap_or(text.len())].to_string()
}

#[test]
fn every_kind_shows_each_option_with_what_it_does() {
    for &kind in HumanGateKind::ALL {
        let req = gate_of(kind);
        let gate = req.gate;
        let text = dialog_text(req);
        // Every option's line, from the rules' table.
        for c in kind.spec().choices {
            let line = format!("[{}] {} — {}", c.key, c.decision.label(), c.words(gate));
            assert!(text.contains(&line), "{kind}: no line {line:?}\n{text}");
        }
        assert!(!text.contains(" · none · "), "{kind}: no origin\n{text}");
        insta::assert_snapshot!(format!("dialog_kind_{kind}"), text);
    }
}

#[test]
fn a_gate_asked_by_hand_says_so() {
    let mut req = gate_of(HumanGateKind::Unverifiable);
    req.id = "hg-1-manual-1".into();
    req.gate = None;
    let text = dialog_text(req);
    assert_has(&text, "unverifiable · by hand · iteration 1");
    // The review's own gates say they come from the review.
    let mut req = gate_of(HumanGateKind::CapReached);
    req.id = "hg-2-review-1".into();
    req.gate = None;
    req.subject = "review".into();
    let text = dialog_text(req);
    assert_has(&text, "cap-reached · review · iteration 1");
    assert_has(&text, "[e] extend — one more round");
}

#[test]
fn a_finding_gate_of_an_earlier_journal_opens_with_the_finding_options() {
    // As recorded before finding gates had their own kind.
    let mut req = gate_of(HumanGateKind::UnverifiableFinding);
    req.kind = HumanGateKind::Unverifiable;
    req.options = HumanGateKind::Unverifiable.options();
    let text = dialog_text(req);
    assert_has(&text, "decide hg-1-findings-1 · unverifiable-finding");
    assert_has(
        &text,
        "unverifiable-finding · finding verifier · iteration 1",
    );
    assert_has(&text, "[d] dismiss — not a problem here");
    assert_has(&text, "[s] stop — stop the run: NOT-CONFORMANT");
    assert!(!text.contains("[a] accept"), "{text}");
}
