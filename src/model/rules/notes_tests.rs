//! The notes people leave for the developer, as the next developer
//! dispatch receives them.

use crate::model::State;
use crate::model::rules::{NOTE_HANDOFF_MAX, developer_input, notes_section, pending_notes};

fn state(lines: &[String]) -> State {
    crate::model::test_journal::state(lines)
}

fn dev(dispatch: u32, iteration: u32) -> [String; 2] {
    [
        format!(
            r#"{{"type":"agent.started","dispatch":{dispatch},"role":"developer","iteration":{iteration},"adapter":"generic","pid":1,"pgid":1,"inputSha256":"x","log":"agents/{dispatch}.log"}}"#
        ),
        format!(
            r#"{{"type":"agent.finished","dispatch":{dispatch},"role":"developer","exitCode":0}}"#
        ),
    ]
}

fn gate(id: &str, note: &str) -> [String; 2] {
    [
        format!(
            r#"{{"type":"human.requested","id":"{id}","kind":"out-of-scope","gate":"conformity","iteration":1,"subject":"Makefile","summary":"s","options":["approve","deny"]}}"#
        ),
        serde_json::json!({"type": "human.decided", "id": id, "decision": "deny", "reason": "r", "by": "ana@desk", "evidenceHash": "h", "note": note}).to_string(),
    ]
}

#[test]
fn notes_since_the_last_developer_that_succeeded_go_to_the_next_one_under_their_heading() {
    let mut l = vec![
        r#"{"type":"run.started","run":{"id":"r","contract":"c.md","diff":"HEAD","engine":true}}"#
            .to_string(),
        r#"{"type":"iteration.started","iteration":1,"trigger":"initial"}"#.to_string(),
    ];
    l.extend(dev(1, 1));
    l.extend(gate(
        "hg-1-conformity-1",
        "first\tline\nsecond \u{1b}[31mline\r\n",
    ));
    l.extend(gate("hg-1-conformity-2", "  "));
    l.push(r#"{"type":"dev.dispatched","iteration":1,"inputs":["  out-of-scope: Makefile — denied by a person: remove the change"]}"#.into());
    l.push(r#"{"type":"iteration.started","iteration":2,"trigger":"ecarts"}"#.into());
    let s = state(&l);
    assert_eq!(pending_notes(&s).len(), 1, "a blank note is no note");
    assert_eq!(
        developer_input(&s, 2, ""),
        "CONTRACT: c.md\nGAPS:\n  out-of-scope: Makefile — denied by a person: remove the change\nNOTE FROM ana@desk (hg-1-conformity-1 deny):\nfirst\tline\nsecond ␛[31mline\n"
    );
    // A dispatch that failed hands them over again; one that succeeded
    // was their last.
    l.push(r#"{"type":"agent.started","dispatch":2,"role":"developer","iteration":2,"adapter":"generic","pid":1,"pgid":1,"inputSha256":"x","log":"agents/2.log"}"#.into());
    l.push(r#"{"type":"agent.finished","dispatch":2,"role":"developer","exitCode":3}"#.into());
    assert!(notes_section(&state(&l)).starts_with("NOTE FROM ana@desk"));
    l.extend(dev(3, 2));
    assert_eq!(notes_section(&state(&l)), "");
    // A megabyte note is cut for the developer; the journal keeps it whole.
    l.extend(gate("hg-2-conformity-1", &"x".repeat(1 << 20)));
    let s = state(&l);
    let section = notes_section(&s);
    assert!(section.len() < NOTE_HANDOFF_MAX + 200, "{}", section.len());
    assert!(
        section.ends_with(
            "… (cut: the whole note is recorded with the decision of hg-2-conformity-1)\n"
        )
    );
    let kept = s
        .human_gate("hg-2-conformity-1")
        .unwrap()
        .decision
        .as_ref()
        .unwrap();
    assert_eq!(kept.decision.note.as_ref().map(String::len), Some(1 << 20));
}
