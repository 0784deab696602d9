//! The review stage's rules, on folded journals.
use super::*;
use crate::model::rules::NextAction;

fn state(lines: &[String]) -> State {
    crate::model::test_journal::state(lines)
}

fn start(vbt: bool) -> Vec<String> {
    vec![
        format!(
            r#"{{"type":"run.started","run":{{"id":"r","contract":"c.md","diff":"HEAD","test":"true","review":{{"verifyByTest":{vbt},"maxFindings":3}}}}}}"#
        ),
        r#"{"type":"iteration.started","iteration":1,"trigger":"initial"}"#.into(),
        r#"{"type":"gate.finished","gate":"floor","iteration":1,"round":1,"verdict":{"kind":"MET"},"rows":[]}"#.into(),
        r#"{"type":"gate.finished","gate":"conformity","iteration":1,"round":1,"verdict":{"kind":"CONFORME"},"rows":[]}"#.into(),
    ]
}

const REVIEWED: [&str; 2] = [
    r#"{"type":"agent.started","dispatch":1,"role":"reviewer","iteration":1,"adapter":"generic","pid":1,"pgid":1,"inputSha256":"x","log":"agents/001-reviewer.log"}"#,
    r#"{"type":"agent.finished","dispatch":1,"role":"reviewer","exitCode":0}"#,
];
const VERIFIED: &str = r#"{"type":"findings.verified","iteration":1,"findings":[{"id":"F1","severity":"🔴","path":"a.rs","lines":"3","claim":"drops cents","verdict":"VERIFIED","evidence":"a.rs:3"},{"id":"F2","severity":"minor","verdict":"FALSE","evidence":"no"}]}"#;
const TRIAGED: &str = r#"{"type":"triage.recorded","iteration":1,"file":"triage-1.json","counts":{"accepted":1,"deferred":0,"rejected":1},"buckets":{"accepted":["F1"],"rejected":["F2"]}}"#;

/// The review stage's end, one accepted blocking finding sent back.
const SENT_BACK: &str =
    r#"{"type":"review.finished","iteration":1,"round":1,"blocking":["F1"],"gaps":1}"#;

fn step_of(s: &State) -> String {
    s.next.machine_line()
}

#[test]
fn the_stage_goes_review_verify_triage_done_then_back_to_the_developer() {
    let mut l = start(false);
    assert_eq!(step_of(&state(&l)), "review review");
    l.extend(REVIEWED.iter().map(|s| s.to_string()));
    let s = state(&l);
    assert_eq!(step_of(&s), "review verify");
    assert_eq!(s.next.line(), "NEXT: review verify");
    assert_eq!(s.next.action().exit_code(), 14);
    l.push(VERIFIED.into());
    assert_eq!(step_of(&state(&l)), "review triage");
    l.push(TRIAGED.into());
    let s = state(&l);
    assert_eq!(step_of(&s), "review done");
    let f = finish(&s, 1, None);
    assert_eq!(
        (f.round, f.blocking.clone(), f.gaps),
        (1, vec!["F1".to_string()], 1)
    );
    l.push(SENT_BACK.into());
    let s = state(&l);
    assert_eq!(s.next.action(), NextAction::Dev);
    assert_eq!(s.review.map(|c| c.rounds), Some(1));
    assert_eq!(
        crate::model::rules::handoff_lines(&s),
        ["  F1 [🔴] a.rs:3 — drops cents"]
    );
}

#[test]
fn verify_by_test_runs_only_when_on_with_accepted_blocking_findings() {
    let mut l = start(true);
    l.extend(REVIEWED.iter().map(|s| s.to_string()));
    l.push(VERIFIED.into());
    l.push(TRIAGED.into());
    assert_eq!(step_of(&state(&l)), "review verify-by-test");
    l.push(r#"{"type":"verify.summary","iteration":1,"attempted":1,"confirmed":1,"redTests":[{"file":"tests/a.rs","testRef":"tests/a.rs::cents","issue":"F1"}]}"#.into());
    assert_eq!(step_of(&state(&l)), "review done");
    l.push(SENT_BACK.into());
    assert_eq!(
        crate::model::rules::handoff_lines(&state(&l)),
        [
            "  F1 [🔴] a.rs:3 — drops cents — a failing repro test already exists at tests/a.rs::cents; make it green; do not delete or weaken it"
        ]
    );
    // Nothing blocking accepted: straight to done.
    let mut l = start(true);
    l.extend(REVIEWED.iter().map(|s| s.to_string()));
    l.push(VERIFIED.into());
    l.push(r#"{"type":"triage.recorded","iteration":1,"file":"triage-1.json","counts":{"accepted":0,"deferred":1,"rejected":1},"buckets":{"deferred":["F1"],"rejected":["F2"]}}"#.into());
    assert_eq!(step_of(&state(&l)), "review done");
}

#[test]
fn a_clean_review_goes_on_to_gate_2_and_no_review_stage_changes_nothing() {
    let mut l = start(false);
    l.extend(REVIEWED.iter().map(|s| s.to_string()));
    l.push(r#"{"type":"findings.verified","iteration":1,"findings":[]}"#.into());
    l.push(r#"{"type":"triage.recorded","iteration":1,"file":"triage-1.json","counts":{"accepted":0,"deferred":0,"rejected":0}}"#.into());
    l.push(r#"{"type":"review.finished","iteration":1,"round":1,"gaps":0}"#.into());
    assert_eq!(step_of(&state(&l)), "next-gate security");
    let mut plain = start(false);
    plain[0] = r#"{"type":"run.started","run":{"id":"r"}}"#.into();
    let s = state(&plain);
    assert_eq!(step_of(&s), "next-gate security");
    assert!(s.review.is_none());
    assert!(s.review_iterations.iter().all(|i| i.review.is_none()));
}

#[test]
fn the_review_that_uses_the_last_round_opens_the_cap_gate_and_extend_adds_one() {
    let mut l = start(false);
    l[0] = l[0].replace(r#""test":"true""#, r#""test":"true","maxRounds":2"#);
    let s = state(&l);
    let r = |gaps| ReviewFinished {
        iteration: 1,
        round: 1,
        blocking: vec!["F1".into()],
        fixed: Vec::new(),
        gaps,
        results: None,
        extra: Default::default(),
    };
    assert!(gates_for_review(&s, &r(1)).is_empty(), "round 1 of 2");
    l.push(SENT_BACK.into());
    let s = state(&l);
    let g = gates_for_review(&s, &r(1));
    assert_eq!(g.len(), 1);
    assert_eq!(
        (g[0].kind, g[0].subject.as_str()),
        (HumanGateKind::CapReached, REVIEW_SUBJECT)
    );
    assert_eq!(
        g[0].summary,
        "the review used 2 of 2 rounds: 1 accepted blocking finding(s) left"
    );
    assert!(
        gates_for_review(&s, &r(0)).is_empty(),
        "a clean review uses no round"
    );
    l.push(r#"{"type":"human.requested","id":"hg-1-review-1","kind":"cap-reached","iteration":1,"subject":"review","options":["extend","take-over","abort"]}"#.into());
    l.push(
        r#"{"type":"human.decided","id":"hg-1-review-1","decision":"extend","reason":"one more"}"#
            .into(),
    );
    assert_eq!(state(&l).review.map(|c| c.cap), Some(3));
}

#[test]
fn severities_map_to_the_triage_scale_and_the_derived_triage_follows_the_verdicts() {
    for (word, want) in [
        ("🔴", TriageSeverity::Blocking),
        ("Blocking", TriageSeverity::Blocking),
        ("critical", TriageSeverity::Blocking),
        ("🟠 major", TriageSeverity::Major),
        ("high", TriageSeverity::Major),
        ("🟡", TriageSeverity::Minor),
        ("low", TriageSeverity::Minor),
        ("nit", TriageSeverity::Nit),
        ("whatever", TriageSeverity::Major),
    ] {
        assert_eq!(triage_severity(word), want, "{word}");
    }
    let s = state(&[start(false), vec![VERIFIED.into()]].concat());
    let mut findings = s.iteration(1).unwrap().findings.clone();
    findings.push(Finding {
        id: "F3".into(),
        severity: "nit".into(),
        path: String::new(),
        lines: String::new(),
        claim: String::new(),
        verdict: FindingVerdict::Unverifiable,
        evidence: String::new(),
        note: "needs a browser".into(),
        extra: Default::default(),
    });
    let t = derive_triage(1, &findings);
    assert_eq!(t.accepted[0].id, "F1");
    assert_eq!(t.accepted[0].severity, TriageSeverity::Blocking);
    assert_eq!(
        t.rejected[0].reason.as_deref(),
        Some("finding verifier: FALSE")
    );
    assert_eq!(t.deferred[0].reason.as_deref(), Some("needs a browser"));
    assert_eq!(check_triage(&t, 1, &findings), Ok(()));
    assert_eq!(
        check_triage(&t, 2, &findings),
        Err("it is for iteration 1, not 2".into())
    );
    assert_eq!(
        check_triage(&t, 1, &findings[..2]),
        Err("it triages F3, which is not a finding of the review".into())
    );
    let mut short = t.clone();
    short.deferred.clear();
    assert_eq!(
        check_triage(&short, 1, &findings),
        Err("it leaves F3 out".into())
    );
}

/// Findings F1 (VERIFIED, blocking) and F3 (UNVERIFIABLE, minor), F3's gate
/// opened as this version opens it.
const WITH_UNVERIFIABLE: &str = r#"{"type":"findings.verified","iteration":1,"findings":[{"id":"F1","severity":"🔴","path":"a.rs","lines":"3","claim":"drops cents","verdict":"VERIFIED","evidence":"a.rs:3"},{"id":"F3","severity":"minor","path":"b.sh","lines":"5","claim":"awk is slow","verdict":"UNVERIFIABLE","note":"needs a million lines"}]}"#;
const F3_GATE: &str = r#"{"type":"human.requested","id":"hg-1-findings-1","kind":"unverifiable-finding","iteration":1,"subject":"F3","summary":"finding F3 UNVERIFIABLE","options":["dismiss","fix","stop"],"evidence":{"findings":[{"id":"F3"}]}}"#;
const TRIAGED_F3: &str = r#"{"type":"triage.recorded","iteration":1,"file":"triage-1.json","counts":{"accepted":1,"deferred":1,"rejected":0},"buckets":{"accepted":["F1"],"deferred":["F3"]}}"#;

fn decided(id: &str, decision: &str) -> String {
    format!(
        r#"{{"type":"human.decided","id":"{id}","decision":"{decision}","reason":"seen in production","by":"ana@desk","evidenceHash":"sha256:00"}}"#
    )
}

#[test]
fn a_finding_a_person_asks_to_fix_goes_to_the_developer_with_the_reason() {
    let mut l = start(false);
    l.extend(REVIEWED.iter().map(|s| s.to_string()));
    l.push(WITH_UNVERIFIABLE.into());
    l.push(F3_GATE.into());
    assert_eq!(step_of(&state(&l)), "human hg-1-findings-1");
    l.push(decided("hg-1-findings-1", "fix"));
    assert_eq!(step_of(&state(&l)), "review triage");
    l.push(TRIAGED_F3.into());
    let s = state(&l);
    let f = finish(&s, 1, None);
    assert_eq!(
        (f.blocking.clone(), f.fixed.clone(), f.gaps),
        (vec!["F1".to_string()], vec!["F3".to_string()], 2)
    );
    l.push(serde_json::json!({"type": "review.finished", "iteration": 1, "round": 1, "blocking": ["F1"], "fixed": ["F3"], "gaps": 2}).to_string());
    let s = state(&l);
    assert_eq!(s.next.action(), NextAction::Dev);
    assert_eq!(
        crate::model::rules::handoff_lines(&s),
        [
            "  F1 [🔴] a.rs:3 — drops cents",
            "  F3 [minor] b.sh:5 — awk is slow — the finding verifier could not check it; fix asked by ana@desk: seen in production"
        ]
    );
    // The triage file says what the person decided, over the verdicts'.
    let mut t = derive_triage(1, &s.iteration(1).unwrap().findings);
    assert_eq!(t.deferred[0].id, "F3");
    apply_person(&mut t, &s, 1);
    assert!(t.deferred.is_empty());
    assert_eq!(t.accepted[1].id, "F3");
    assert_eq!(
        t.accepted[1].reason.as_deref(),
        Some("fix asked by ana@desk: seen in production")
    );
}

#[test]
fn a_dismissed_finding_never_reaches_the_developer_and_stop_ends_the_run() {
    let mut l = start(false);
    l.extend(REVIEWED.iter().map(|s| s.to_string()));
    // F3 blocking this time: a dismissal overrides a triage that accepted it.
    l.push(WITH_UNVERIFIABLE.replace(r#""severity":"minor""#, r#""severity":"blocking""#));
    l.push(F3_GATE.into());
    let mut dismissed = l.clone();
    dismissed.push(decided("hg-1-findings-1", "dismiss"));
    dismissed.push(
        r#"{"type":"triage.recorded","iteration":1,"file":"triage-1.json","counts":{"accepted":2,"deferred":0,"rejected":0},"buckets":{"accepted":["F1","F3"]}}"#.into(),
    );
    let s = state(&dismissed);
    let f = finish(&s, 1, None);
    assert_eq!(
        (f.blocking, f.fixed, f.gaps),
        (vec!["F1".to_string()], vec![], 1)
    );
    let mut t = derive_triage(1, &s.iteration(1).unwrap().findings);
    apply_person(&mut t, &s, 1);
    assert_eq!(t.rejected[0].id, "F3");
    assert_eq!(
        t.rejected[0].reason.as_deref(),
        Some("dismissed by ana@desk: seen in production")
    );
    let mut stopped = l.clone();
    stopped.push(decided("hg-1-findings-1", "stop"));
    assert_eq!(step_of(&state(&stopped)), "stop not-conformant");
}

#[test]
fn finding_gates_of_earlier_journals_are_read_as_unverifiable_finding_gates() {
    let mut l = start(false);
    l.extend(REVIEWED.iter().map(|s| s.to_string()));
    l.push(WITH_UNVERIFIABLE.into());
    // As an earlier version recorded it: kind unverifiable, accept/reject.
    l.push(
        F3_GATE
            .replace("unverifiable-finding", "unverifiable")
            .replace(r#"["dismiss","fix","stop"]"#, r#"["accept","reject"]"#),
    );
    let s = state(&l);
    let g = &s.human_gates[0];
    assert_eq!(g.request.kind, HumanGateKind::UnverifiableFinding);
    assert_eq!(
        g.request.options,
        [Decision::Dismiss, Decision::Fix, Decision::Stop]
    );
    assert_eq!(crate::model::rules::origin(&g.request), "finding verifier");
    // accept meant: the loop goes on.
    let mut accepted = l.clone();
    accepted.push(decided("hg-1-findings-1", "accept"));
    let s = state(&accepted);
    let g = &s.human_gates[0];
    assert_eq!(
        g.decision.as_ref().map(|d| d.decision.decision),
        Some(Decision::Dismiss)
    );
    assert_eq!(step_of(&s), "review triage");
    // reject meant: stop, not conformant.
    let mut rejected = l.clone();
    rejected.push(decided("hg-1-findings-1", "reject"));
    let s = state(&rejected);
    assert_eq!(s.human_gates[0].outcome(), Some(Decision::Stop));
    assert_eq!(step_of(&s), "stop not-conformant");
    // An expiry recorded with the old name means the same.
    let mut expired = l.clone();
    expired.push(
        r#"{"type":"human.expired","id":"hg-1-findings-1","after":"30m","action":"reject"}"#.into(),
    );
    assert_eq!(step_of(&state(&expired)), "stop not-conformant");
    // A criterion's unverifiable gate stays one.
    let mut criterion = start(false);
    criterion.push(r#"{"type":"human.requested","id":"hg-1-conformity-1","kind":"unverifiable","gate":"conformity","iteration":1,"subject":"2","summary":"criterion 2 UNVERIFIABLE","options":["accept","reject"],"evidence":{"rows":[]}}"#.into());
    let s = state(&criterion);
    assert_eq!(s.human_gates[0].request.kind, HumanGateKind::Unverifiable);
    assert_eq!(
        crate::model::rules::origin(&s.human_gates[0].request),
        "GATE 1 conformity"
    );
}

#[test]
fn without_a_review_stage_a_fixed_finding_goes_back_with_the_rounds_gaps() {
    let mut l = vec![
        r#"{"type":"run.started","run":{"id":"r","contract":"c.md","diff":"HEAD","test":"true"}}"#.to_string(),
        r#"{"type":"iteration.started","iteration":1,"trigger":"initial"}"#.into(),
        r#"{"type":"gate.finished","gate":"floor","iteration":1,"round":1,"verdict":{"kind":"MET"},"rows":[]}"#.into(),
        r#"{"type":"gate.finished","gate":"conformity","iteration":1,"round":1,"verdict":{"kind":"CONFORME"},"rows":[]}"#.into(),
        WITH_UNVERIFIABLE.into(),
        F3_GATE.into(),
    ];
    let mut dismissed = l.clone();
    dismissed.push(decided("hg-1-findings-1", "dismiss"));
    assert_eq!(step_of(&state(&dismissed)), "next-gate security");
    l.push(decided("hg-1-findings-1", "fix"));
    let s = state(&l);
    assert_eq!(s.next.action(), NextAction::Dev);
    assert_eq!(
        crate::model::rules::handoff_lines(&s),
        [
            "  F3 [minor] b.sh:5 — awk is slow — the finding verifier could not check it; fix asked by ana@desk: seen in production"
        ]
    );
}
