//! The review stage on screen: while the finding verifier runs, the
//! Findings tab shows one row per lane (queued, verifying with its attempt,
//! rejected once, the verdict, fault) under the stage's progress; once the
//! verdicts are recorded, the findings themselves.

use super::*;

/// A run with a review stage, its finding verifier halfway through eight lanes.
fn lanes_in_progress() -> Vec<Event> {
    let mut lines = vec![
        r#"{"v":1,"seq":1,"at":"2026-12-01T08:40:00Z","type":"run.started","run":{"id":"2026-12-01-totals","flow":"feat","branch":"main","contract":"docs/contract.md","diff":"HEAD","engine":true,"review":{"verifyByTest":false,"maxFindings":3}}}"#.to_string(),
        r#"{"v":1,"seq":2,"at":"2026-12-01T08:40:00Z","type":"iteration.started","iteration":1,"trigger":"initial"}"#.to_string(),
        r#"{"v":1,"seq":3,"at":"2026-12-01T08:40:10Z","type":"gate.finished","gate":"floor","iteration":1,"round":1,"verdict":{"kind":"MET"},"rows":[]}"#.to_string(),
        r#"{"v":1,"seq":4,"at":"2026-12-01T08:40:20Z","type":"gate.finished","gate":"conformity","iteration":1,"round":1,"verdict":{"kind":"CONFORME"},"rows":[]}"#.to_string(),
    ];
    let sev = [
        "blocking", "major", "minor", "blocking", "nit", "major", "minor", "blocking",
    ];
    for i in 0..8u32 {
        lines.push(format!(
            r#"{{"v":1,"seq":{},"at":"2026-12-01T08:41:00Z","type":"finding.lane","iteration":1,"finding":"F{}","index":{i},"state":"queued","item":{{"id":"F{}","severity":"{}","path":"src/export/csv.rs","lines":"{}","claim":"claim number {}"}},"projectDir":"/work/proj"}}"#,
            5 + i,
            i + 1,
            i + 1,
            sev[i as usize],
            10 * (i + 1),
            i + 1
        ));
    }
    let steps = [
        r#""finding":"F1","index":0,"state":"running","attempt":1"#,
        r#""finding":"F2","index":1,"state":"running","attempt":1"#,
        r#""finding":"F3","index":2,"state":"running","attempt":1"#,
        r#""finding":"F4","index":3,"state":"running","attempt":1"#,
        r#""finding":"F1","index":0,"state":"done","attempt":1,"verdict":"VERIFIED","evidence":"src/export/csv.rs:10","note":"""#,
        r#""finding":"F2","index":1,"state":"done","attempt":1,"verdict":"FALSE","evidence":"no such call","note":"""#,
        r#""finding":"F3","index":2,"state":"rejected","attempt":1,"reason":"VERIFIED without evidence""#,
        r#""finding":"F3","index":2,"state":"running","attempt":2"#,
        r#""finding":"F5","index":4,"state":"running","attempt":1"#,
        r#""finding":"F4","index":3,"state":"running","attempt":2,"reason":"attempt 1 failed: exited with status 7""#,
        r#""finding":"F4","index":3,"state":"fault","attempt":2,"verdict":"UNVERIFIABLE","evidence":"","note":"PIPELINE-FAULT: verifier lane failed after retries — exited with status 7""#,
        r#""finding":"F6","index":5,"state":"running","attempt":1"#,
    ];
    for (k, s) in steps.iter().enumerate() {
        lines.push(format!(
            r#"{{"v":1,"seq":{},"at":"2026-12-01T08:42:{:02}Z","type":"finding.lane","iteration":1,{s}}}"#,
            13 + k,
            k
        ));
    }
    lines
        .iter()
        .map(|l| Event::parse_line(l.as_bytes()).expect("valid review event"))
        .collect()
}

fn on_findings(t: ThemeKind, evs: &[Event]) -> App {
    let (mut a, _) = app(t, evs);
    press(&mut a, "2");
    assert_eq!(a.tab(), Tab::Findings);
    a
}

#[test]
fn the_findings_tab_shows_each_lane_and_the_progress() {
    let evs = lanes_in_progress();
    snap("review_lanes", |t| on_findings(t, &evs));
    let text = frame_text(&draw(&on_findings(ThemeKind::NoColor, &evs), 160, 48));
    assert!(
        text.contains(
            "finding verifier: 3/8 verified · 3 verifying · 2 queued · 1 rejected once · 1 fault"
        ),
        "{text}"
    );
    for want in [
        "✓ VERIFIED",
        "✗ FALSE",
        "↻ verifying 2",
        "✗ fault",
        "… verifying",
        "· queued",
    ] {
        assert!(text.contains(want), "{want} missing:\n{text}");
    }
}

#[test]
fn once_the_verdicts_are_recorded_the_tab_lists_the_findings() {
    let mut evs = lanes_in_progress();
    let line = r#"{"v":1,"seq":40,"at":"2026-12-01T08:43:00Z","type":"findings.verified","iteration":1,"findings":[{"id":"F1","severity":"blocking","path":"src/export/csv.rs","lines":"10","claim":"claim number 1","verdict":"VERIFIED","evidence":"src/export/csv.rs:10","note":""}]}"#;
    evs.push(Event::parse_line(line.as_bytes()).expect("valid"));
    let text = frame_text(&draw(&on_findings(ThemeKind::NoColor, &evs), 160, 48));
    assert!(!text.contains("finding verifier:"), "{text}");
    assert!(!text.contains("F8"), "{text}");
    assert!(text.contains("claim number 1"), "{text}");
}
