//! Hostile text in every field (ESC sequences, bidi overrides, carriage
//! returns, a 10 MB line) is drawn with visible escapes and stays in its pane.

use serde_json::json;

use super::*;

fn hostile_events() -> Vec<Event> {
    let bad = "A\u{1b}[2J\u{1b}]52;c;ZXZpbA==\u{7}B\u{202e}gnp.exe\rOVER\u{9b}31m\u{200b}Z";
    let big = "X\u{1b}[31m".repeat(10 * 1024 * 1024 / 6);
    let lines = vec![
        json!({"v":1,"seq":1,"at":"2026-12-01T08:00:00Z","type":"run.started","run":{"id":bad,"flow":bad,"contract":format!("c/{bad}.md")}}),
        json!({"v":1,"seq":2,"at":"2026-12-01T08:01:00Z","type":"iteration.started","iteration":1,"trigger":bad}),
        json!({"v":1,"seq":3,"at":"2026-12-01T08:02:00Z","type":"gate.finished","gate":"floor","iteration":1,"round":1,"verdict":{"kind":"UNMET","n":1},
            "rows":[{"id":bad,"state":"NOT-MET","text":bad,"evidence":big}],"output":bad}),
        json!({"v":1,"seq":4,"at":"2026-12-01T08:03:00Z","type":"gate.finished","gate":"security","iteration":1,"round":1,"verdict":{"kind":"BLOCK","n":1},"degraded":true,"tool":bad,
            "rows":[{"n":1,"severity":bad,"rule":bad,"location":bad,"why":big,"hint":bad}],"reported":[{"severity":bad,"rule":bad,"location":bad}]}),
        json!({"v":1,"seq":5,"at":"2026-12-01T08:04:00Z","type":"findings.verified","iteration":1,"findings":[
            {"id":bad,"severity":bad,"path":bad,"lines":bad,"claim":big,"verdict":"UNVERIFIABLE","evidence":bad,"note":bad}]}),
        json!({"v":1,"seq":6,"at":"2026-12-01T08:05:00Z","type":"human.requested","id":"hg-1-findings-1","kind":"unverifiable","iteration":1,"subject":bad,"summary":bad,
            "options":["accept","reject"],"evidence":{"rows":[bad, {"id":bad,"text":big,"status":"UNVERIFIABLE","detail":bad}],"paths":[bad],"notes":[bad],"output":bad}}),
        json!({"v":1,"seq":7,"at":"2026-12-01T08:06:00Z","type":"human.requested","id":"hg-1-floor-1","kind":"cap-reached","iteration":1,"subject":"s","summary":"s","options":["extend","take-over","abort"],"evidence":{}}),
        json!({"v":1,"seq":8,"at":"2026-12-01T08:07:00Z","type":"human.decided","id":"hg-1-floor-1","decision":"extend","reason":bad,"by":bad,"evidenceHash":bad}),
        json!({"v":1,"seq":9,"at":bad,"type":"note","text":big}),
        json!({"v":1,"seq":10,"at":"2026-12-01T08:09:00Z","type":bad,"payload":bad}),
    ];
    parsed(&lines)
}

/// The events of journal lines written as JSON values.
fn parsed(lines: &[serde_json::Value]) -> Vec<Event> {
    lines
        .iter()
        .map(|v| Event::parse_line(v.to_string().as_bytes()).expect("valid event"))
        .collect()
}

fn assert_inert(buf: &Buffer, what: &str) {
    for cell in buf.content() {
        for c in cell.symbol().chars() {
            let u = c as u32;
            assert!(
                u >= 0x20 && u != 0x7f && !(0x80..=0x9f).contains(&u),
                "{what}: control {u:#x} drawn"
            );
            assert!(
                !matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200b}'..='\u{200f}'),
                "{what}: invisible {u:#x} drawn"
            );
        }
    }
}

#[test]
fn hostile_text_is_visible_and_contained_on_every_tab() {
    let evs = hostile_events();
    let mut seen_escape = false;
    let mut seen_bidi = false;
    let mut seen_cr = false;
    for tab in 1..=6 {
        let (mut a, _) = app(ThemeKind::Dark, &evs);
        press(&mut a, &format!("{tab}"));
        for row in 0..3 {
            let buf = draw(&a, 120, 40);
            let what = format!("tab {tab} row {row}");
            assert_inert(&buf, &what);
            let t = frame_text(&buf);
            seen_escape |= t.contains("␛[2J");
            seen_bidi |= t.contains("<U+202E>");
            seen_cr |= t.contains("␍OVER");
            let lines: Vec<&str> = t.lines().collect();
            // The tab line and the footer are where they belong, untouched.
            assert!(
                lines[3].starts_with(" [1] Criteria  [2] Findings"),
                "{what}: {}",
                lines[3]
            );
            assert!(lines[38].starts_with(" ? help"), "{what}: {}", lines[38]);
            press(&mut a, "j");
        }
    }
    assert!(seen_escape && seen_bidi && seen_cr);
}

#[test]
fn hostile_evidence_in_the_dialog_is_visible_and_contained() {
    let evs = hostile_events();
    let (mut a, clock) = app(ThemeKind::Light, &evs);
    open_dialog(&mut a, &clock);
    let d = a.dialog().expect("dialog open");
    assert!(d.evidence.iter().all(|l| loopwatch::sanitize::width(l)
        <= loopwatch::recorder::evidence::lines::EVIDENCE_LINE_MAX));
    a.on_paste("pasted \u{1b}[31m\u{202e}reason");
    assert_eq!(
        a.dialog().map(|d| d.reason.clone()),
        Some("pasted [31mreason".to_string())
    );
    let buf = draw(&a, 100, 30);
    assert_inert(&buf, "dialog");
    let t = frame_text(&buf);
    assert_has(
        &t,
        "subject: A␛[2J␛]52;c;ZXZpbA==␇B<U+202E>gnp.exe␍OVER<U+009B>31m<U+200B>Z",
    );
}

/// Text that imitates the UI (a fake "✔ approved", fake key hints, a fake
/// dialog line) is drawn as data inside its pane, labelled by the field it
/// came from, and typing what it suggests decides nothing by itself.
#[test]
fn text_imitating_the_ui_stays_data() {
    let fake = "✔ approved · decision saved (hg-1-findings-1: accept) · press ctrl-s to confirm";
    let lines = [
        json!({"v":1,"seq":1,"at":"2026-12-01T08:00:00Z","type":"run.started","run":{"id":"r","flow":"feat","contract":"c.md"}}),
        json!({"v":1,"seq":2,"at":"2026-12-01T08:01:00Z","type":"findings.verified","iteration":1,"findings":[
            {"id":"F1","severity":"major","path":"a.rs","lines":"1","claim":fake,"verdict":"UNVERIFIABLE","evidence":"","note":fake}]}),
        json!({"v":1,"seq":3,"at":"2026-12-01T08:02:00Z","type":"human.requested","id":"hg-1-findings-1","kind":"unverifiable","iteration":1,
            "subject":"F1","summary":fake,"options":["accept","reject"],"evidence":{"notes":[fake]}}),
    ];
    let evs = parsed(&lines);
    let (mut a, clock) = app(ThemeKind::Dark, &evs);
    press(&mut a, "2");
    let t = frame_text(&draw(&a, 120, 40));
    let row = t
        .lines()
        .find(|l| l.contains("F1"))
        .expect("the finding's row");
    assert_has(row, "? UNVERIFIABLE");
    // The claim is cut to its column: it never reaches the footer or the status line.
    let footer: Vec<&str> = t.lines().skip(38).collect();
    assert!(
        footer.iter().all(|l| !l.contains("decision saved")),
        "{footer:?}"
    );
    // In the dialog the fake text is labelled as the field it is.
    open_dialog(&mut a, &clock);
    let d = a.dialog().expect("dialog open");
    assert!(
        d.evidence.iter().any(|l| l == &format!("summary: {fake}")),
        "{:?}",
        d.evidence
    );
    assert!(
        d.evidence.iter().any(|l| l == &format!("note: {fake}")),
        "{:?}",
        d.evidence
    );
    // Doing what the text says (ctrl-s) without choosing an option and a
    // reason writes nothing.
    let effects = a.on_key(&KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL));
    assert!(effects.is_empty(), "{effects:?}");
    assert!(a.dialog().is_some());
    assert_eq!(a.state().open_human_gates().count(), 1);
}

#[test]
fn the_start_time_of_a_running_gate_is_sanitised_in_the_header() {
    let bad = "A\u{1b}[2J\u{202e}B";
    let evs = parsed(&[
        json!({"v":1,"seq":1,"at":"2026-12-01T08:00:00Z","type":"run.started","run":{"id":"r","flow":"feat","contract":"c.md"}}),
        json!({"v":1,"seq":2,"at":"2026-12-01T08:01:00Z","type":"iteration.started","iteration":1,"trigger":"initial"}),
        json!({"v":1,"seq":3,"at":bad,"type":"gate.started","gate":"floor","iteration":1,"round":1}),
    ]);
    let (a, _) = app(ThemeKind::Dark, &evs);
    let buf = draw(&a, 160, 48);
    assert_inert(&buf, "header");
    let screen = frame_text(&buf);
    assert!(
        screen.contains("GATE 0 running since A"),
        "the time is shown, escaped:\n{screen}"
    );
}
