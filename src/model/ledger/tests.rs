//! The matching rule and the ledger, on reviewer output of three rounds
//! (`tests/fixtures/ledger/review-<n>.json`, in the reviewer's format).

use super::*;

const ROUNDS: [&str; 3] = [
    include_str!("../../../tests/fixtures/ledger/review-1.json"),
    include_str!("../../../tests/fixtures/ledger/review-2.json"),
    include_str!("../../../tests/fixtures/ledger/review-3.json"),
];

/// The findings of round `n` (1-based) as the reviewer wrote them.
fn round(n: usize) -> Vec<Value> {
    let v: Value = serde_json::from_str(ROUNDS[n - 1]).expect("a review");
    v["findingsList"]
        .as_array()
        .or_else(|| v["findings_list"].as_array())
        .cloned()
        .expect("a findings list")
}

fn item(n: usize, id: &str) -> Value {
    round(n)
        .into_iter()
        .find(|f| f["id"] == id)
        .unwrap_or_else(|| panic!("no {id} in round {n}"))
}

fn score(a: &Value, b: &Value) -> Option<u32> {
    let (a, b) = (claim_fields(a), claim_fields(b));
    same(Claim::of_fields(&a), Claim::of_fields(&b))
}

/// For each finding of round `n`, the finding of round `m` it is the same
/// as (the most alike), if any.
fn matches(n: usize, m: usize) -> Vec<(String, Option<String>)> {
    round(n)
        .iter()
        .map(|f| {
            let best = round(m)
                .iter()
                .filter_map(|g| score(f, g).map(|s| (s, g["id"].as_str().unwrap().to_string())))
                .max_by_key(|(s, _)| *s)
                .map(|(_, id)| id);
            (f["id"].as_str().unwrap().to_string(), best)
        })
        .collect()
}

fn pairs(v: &[(&str, Option<&str>)]) -> Vec<(String, Option<String>)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.map(str::to_string)))
        .collect()
}

#[test]
fn rephrased_findings_of_later_rounds_are_the_same_and_new_ones_are_not() {
    // Round 2 against round 1: the empty export (F2), the unbuffered
    // writes (F4), the unquoted names (F5) and the untested credit note
    // (F3) come back in other words, some lines further down; the
    // formatting of the total (F4) is new, though it sits where the
    // rounding finding F1 was and shares its numbers.
    assert_eq!(
        matches(2, 1),
        pairs(&[
            ("F1", Some("F2")),
            ("F2", Some("F4")),
            ("F3", Some("F5")),
            ("F4", None),
            ("F5", Some("F3")),
        ])
    );
    // Round 3 against round 1: the same claim about another file
    // (src/import) is not F2. A double quote written raw in a customer
    // name is taken for F5 (names not quoted): the words are close enough
    // on the same lines — a wrong match a person splits (see below).
    assert_eq!(
        matches(3, 1),
        pairs(&[
            ("F1", Some("F4")),
            ("F2", Some("F2")),
            ("F3", Some("F5")),
            ("F4", None),
            ("F5", None),
        ])
    );
    // Round 3 against round 2: the lost cents are the same as round 2's F4;
    // round 2's shorter words about the names are too far from the double quote.
    assert_eq!(
        matches(3, 2),
        pairs(&[
            ("F1", Some("F2")),
            ("F2", Some("F1")),
            ("F3", None),
            ("F4", Some("F4")),
            ("F5", None),
        ])
    );
}

#[test]
fn words_are_normalised_and_lines_read_in_every_form() {
    let w = words("The Rows' totals are rounded: rounding ROWS[0] with floor() in parse_amount");
    let got: Vec<&str> = w.iter().map(String::as_str).collect();
    assert_eq!(
        got,
        ["floor", "parse_amount", "round", "row", "total"],
        "function words, one-letter words and endings dropped"
    );
    assert_eq!(line_ranges("80-92"), Some(vec![(80, 92)]));
    assert_eq!(line_ranges("L92–L80"), Some(vec![(80, 92)]));
    assert_eq!(line_ranges("12, 30-31"), Some(vec![(12, 12), (30, 31)]));
    assert_eq!(line_ranges("near the top"), None);
    assert_eq!(line_ranges(""), None);
}

#[test]
fn the_rule_needs_the_same_file_and_more_words_when_the_lines_are_apart() {
    let c = |path, lines, claim| Claim { path, lines, claim };
    let a = "the export panics on an empty invoice list at rows[0]";
    let b = "an empty invoice list makes the export panic (rows[0])";
    assert!(same(c("src/a.rs", "10", a), c("./src/a.rs", "14", b)).is_some());
    assert!(same(c("src/a.rs", "10", a), c("src/b.rs", "10", b)).is_none());
    assert!(same(c("src/a.rs", "10", a), c("src/a.rs", "10", "")).is_none());
    // Half the words in common: enough where the lines overlap, not 200
    // lines away.
    let near = "the total is floored instead of rounded half up";
    let other =
        "the total is floored, so the rounded cents vanish from the last csv line of the export";
    let s = similarity(near, other);
    assert!((NEAR_THRESHOLD..FAR_THRESHOLD).contains(&s), "{s}");
    assert!(same(c("x.rs", "80-92", near), c("x.rs", "90", other)).is_some());
    assert!(same(c("x.rs", "80-92", near), c("x.rs", "300", other)).is_none());
    // Two words in common are not enough, unless they are all the words.
    assert_eq!(similarity("claim of F1", "claim of F2"), 50);
    assert!(same(c("x.rs", "1", "claim of F1"), c("x.rs", "2", "claim of F2")).is_none());
    assert_eq!(
        same(
            c("x.rs", "1", "claim of F2"),
            c("x.rs", "2", "Claim of F2.")
        ),
        Some(100)
    );
    // Lines that cannot be read ask for the higher similarity.
    assert!(same(c("x.rs", "top", near), c("x.rs", "90", other)).is_none());
}

// --- the ledger, on a folded journal of the three rounds ---

fn state(lines: &[String]) -> State {
    crate::model::test_journal::state(lines)
}

/// `findings.verified` of round `n` with a verdict per finding; a
/// finding the ledger finds raised again in `s` carries its `raisedAgain`.
fn verified(s: Option<&State>, n: usize, verdicts: &[(&str, &str)]) -> String {
    let findings: Vec<Value> = round(n)
        .into_iter()
        .map(|mut f| {
            let id = f["id"].as_str().unwrap().to_string();
            let v = verdicts
                .iter()
                .find(|(i, _)| *i == id)
                .map_or("VERIFIED", |(_, v)| v);
            f["verdict"] = Value::from(v);
            f["evidence"] = Value::from(format!("evidence of {id}"));
            if let Some(r) = s.and_then(|s| again(s, n, &id)) {
                f[RAISED_AGAIN_KEY] = serde_json::to_value(&r).unwrap();
                f["verdict"] = Value::from(r.verdict.as_str());
            }
            f
        })
        .collect();
    serde_json::json!({"type": "findings.verified", "iteration": n, "findings": findings})
        .to_string()
}

fn again(s: &State, n: usize, id: &str) -> Option<RaisedAgain> {
    again_in(s, n, id, u32::try_from(n).unwrap())
}

/// What the ledger of `s` says of finding `id` of round `n` raised again
/// in the review of `iteration`.
fn again_in(s: &State, n: usize, id: &str, iteration: u32) -> Option<RaisedAgain> {
    raised_again(s, iteration, Claim::of_fields(&claim_fields(&item(n, id))))
}

fn outcome_of(s: &State, n: usize, id: &str) -> Option<(EarlierOutcome, u32, String)> {
    again(s, n, id).map(|r| (r.outcome, r.iteration, r.finding))
}

fn triaged(n: usize, accepted: &[&str], deferred: &[&str], rejected: &[&str]) -> String {
    serde_json::json!({"type": "triage.recorded", "iteration": n, "file": format!("triage-{n}.json"),
        "counts": {"accepted": accepted.len(), "deferred": deferred.len(), "rejected": rejected.len()},
        "buckets": {"accepted": accepted, "deferred": deferred, "rejected": rejected}})
    .to_string()
}

fn finished(n: usize, blocking: &[&str]) -> String {
    serde_json::json!({"type": "review.finished", "iteration": n, "round": n, "blocking": blocking, "gaps": blocking.len()}).to_string()
}

/// Round 1 settled: F2 FALSE, F4 UNVERIFIABLE and accepted by a person,
/// F5 VERIFIED but deferred by the triage; F1 went to the developer, F3
/// was accepted (minor, not sent back).
fn round_one() -> Vec<String> {
    vec![
        r#"{"type":"run.started","run":{"id":"r","contract":"c.md","diff":"HEAD","test":"true","engine":true,"review":{"verifyByTest":false,"maxFindings":3}}}"#.into(),
        r#"{"type":"iteration.started","iteration":1,"trigger":"initial"}"#.into(),
        verified(None, 1, &[("F2", "FALSE"), ("F4", "UNVERIFIABLE")]),
        r#"{"type":"human.requested","id":"hg-1-findings-1","kind":"unverifiable","iteration":1,"subject":"F4","summary":"finding F4 UNVERIFIABLE","options":["accept","reject"]}"#.into(),
        r#"{"type":"human.decided","id":"hg-1-findings-1","decision":"accept","reason":"a million invoices never happens here","by":"ana@desk","evidenceHash":"h"}"#.into(),
        triaged(1, &["F1", "F3"], &["F4", "F5"], &["F2"]),
        finished(1, &["F1"]),
        r#"{"type":"iteration.started","iteration":2,"trigger":"review"}"#.into(),
    ]
}

#[test]
fn settled_findings_raised_again_carry_their_earlier_outcome_across_three_rounds() {
    let mut l = round_one();
    let s = state(&l);
    assert_eq!(
        outcome_of(&s, 2, "F1"),
        Some((EarlierOutcome::False, 1, "F2".into()))
    );
    assert_eq!(
        outcome_of(&s, 2, "F2"),
        Some((EarlierOutcome::Dismissed, 1, "F4".into()))
    );
    assert_eq!(
        outcome_of(&s, 2, "F3"),
        Some((EarlierOutcome::AcceptedAsIs, 1, "F5".into()))
    );
    // Sent to the developer, or accepted and not sent back: not settled.
    assert_eq!(outcome_of(&s, 2, "F4"), None);
    assert_eq!(outcome_of(&s, 2, "F5"), None);
    let r = again(&s, 2, "F2").unwrap();
    assert_eq!(
        r.sentence(),
        // A journal of before the finding gates' own kind: its `accept` reads as `dismiss`.
        "raised again: dismissed in round 1 (iteration 1, F4): dismiss by ana@desk (hg-1-findings-1): a million invoices never happens here"
    );
    assert_eq!(r.bucket(), "rejected");
    assert_eq!(again(&s, 2, "F3").unwrap().bucket(), "deferred");
    assert_eq!(r.short(), "dismissed in round 1 (F4)");

    // Round 2 recorded with its raised-again findings; round 3 matches
    // them to the first of their kind, whichever round's words are closer.
    l.push(verified(Some(&s), 2, &[]));
    l.push(triaged(2, &["F4", "F5"], &["F3"], &["F1", "F2"]));
    l.push(finished(2, &["F4"]));
    l.push(r#"{"type":"iteration.started","iteration":3,"trigger":"review"}"#.into());
    let s = state(&l);
    assert_eq!(
        outcome_of(&s, 3, "F1"),
        Some((EarlierOutcome::Dismissed, 1, "F4".into()))
    );
    assert_eq!(
        outcome_of(&s, 3, "F2"),
        Some((EarlierOutcome::False, 1, "F2".into()))
    );
    assert_eq!(
        outcome_of(&s, 3, "F3"),
        Some((EarlierOutcome::AcceptedAsIs, 1, "F5".into()))
    );
    for id in ["F4", "F5"] {
        assert_eq!(outcome_of(&s, 3, id), None, "{id}");
    }
    // The rounds each finding was seen in.
    let it = |n: u32| s.iteration(n).unwrap();
    let f = |n: u32, id: &str| it(n).findings.iter().find(|f| f.id == id).unwrap().clone();
    assert_eq!(seen_in(&s, 1, &f(1, "F4")), [1, 2]);
    assert_eq!(seen_in(&s, 2, &f(2, "F2")), [1, 2]);
    assert_eq!(
        seen_in(&s, 2, &f(2, "F5")),
        [1, 2],
        "the credit note, not settled"
    );
    assert_eq!(seen_in(&s, 2, &f(2, "F4")), [2]);

    // Round 3 recorded; a person splits its F3 (a double quote) from
    // round 1's F5 (a comma): a fourth round raising it again in the same
    // words finds it new, and only that match is undone.
    l.push(verified(Some(&s), 3, &[]));
    let s = state(&l);
    assert_eq!(seen_in(&s, 3, &f3(&s)), [1, 2, 3]);
    let before = again_in(&s, 3, "F3", 4);
    assert_eq!(
        before.map(|r| (r.outcome, r.iteration, r.finding, r.similarity)),
        Some((EarlierOutcome::AcceptedAsIs, 1, "F5".into(), 100)),
        "the same words in a fourth round: the thread of F5, through round 3's F3"
    );
    l.push(
        r#"{"type":"finding.split","iteration":3,"finding":"F3","earlierIteration":1,"earlier":"F5","reason":"a double quote is not a comma: another defect","by":"ana@desk"}"#.into(),
    );
    let s = state(&l);
    assert!(is_split(&s, 3, "F3"));
    assert_eq!(seen_in(&s, 3, &f3(&s)), [3]);
    let fourth = again_in(&s, 3, "F3", 4);
    assert_eq!(fourth, None);
    let comma = again_in(&s, 2, "F3", 4);
    assert_eq!(
        comma.map(|r| (r.outcome, r.iteration, r.finding)),
        Some((EarlierOutcome::AcceptedAsIs, 1, "F5".into())),
        "the comma is still F5"
    );
}

fn f3(s: &State) -> Finding {
    s.iteration(3)
        .unwrap()
        .findings
        .iter()
        .find(|f| f.id == "F3")
        .unwrap()
        .clone()
}

#[test]
fn only_unsettled_findings_are_asked_and_triaged_by_the_agent() {
    let s = state(&round_one());
    let mut l = round_one();
    l.push(verified(Some(&s), 2, &[]));
    let s = state(&l);
    let findings = &s.iteration(2).unwrap().findings;
    let ids: Vec<String> = asked(findings).into_iter().map(|f| f.id).collect();
    assert_eq!(ids, ["F4", "F5"]);
    let t = crate::model::rules::review::derive_triage(2, findings);
    let bucket = |v: &[crate::model::triage::TriageFinding]| {
        v.iter().map(|f| f.id.clone()).collect::<Vec<_>>()
    };
    assert_eq!(bucket(&t.accepted), ["F4", "F5"]);
    assert_eq!(bucket(&t.deferred), ["F3"]);
    assert_eq!(bucket(&t.rejected), ["F1", "F2"]);
    assert!(
        t.rejected[0]
            .reason
            .as_deref()
            .unwrap()
            .starts_with("raised again: found FALSE in round 1 (iteration 1, F2)")
    );
    // No gate for a finding raised again, whatever its carried verdict.
    assert!(crate::model::rules::gates_for_findings(&asked(findings)).is_empty());
}
