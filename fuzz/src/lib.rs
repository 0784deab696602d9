//! The fuzz targets of loopwatch's parsers of foreign text, as plain
//! functions: the libFuzzer entry points under `fuzz_targets/` and the
//! stable driver (`src/bin/drive.rs`) call the same code.
//!
//! Each target panics only on a real defect: a parser panicking, or a
//! property that must hold for every input failing (what the recorder
//! writes must read back the same; reading a journal in pieces must give
//! what reading it whole gives; what is printed holds no control).

use std::io::Write;

use loopwatch::checks::evidence_gate::{Claim, ClaimStatus, Verdict, judge};
use loopwatch::journal::{JournalReader, read_all};
use loopwatch::model::{Event, EventBody, GateName, fold};
use loopwatch::parse::{parse_conformity, parse_gate0_report, parse_security, parse_verdicts};

/// The names of every target, in the order the driver runs them.
pub const TARGETS: [&str; 6] = [
    "contract",
    "gate_output",
    "verdicts",
    "journal",
    "printer",
    "test_log",
];

/// Runs target `name` on `data`; false when there is no such target.
pub fn run(name: &str, data: &[u8]) -> bool {
    match name {
        "contract" => contract(data),
        "gate_output" => gate_output(data),
        "verdicts" => verdicts(data),
        "journal" => journal(data),
        "printer" => printer(data),
        "test_log" => test_log(data),
        _ => return false,
    }
    true
}

/// A contract through GATE 0's parser.
pub fn contract(data: &[u8]) {
    let c = loopwatch::gate0::parse(data);
    for cr in &c.criteria {
        assert!(cr.line >= 1, "criterion lines are 1-based");
    }
}

/// Any text as the output of each gate; what the recorder would write for
/// it must read back as the same event.
pub fn gate_output(data: &[u8]) {
    for &gate in GateName::ALL {
        let parsed = match gate {
            GateName::Floor => {
                let _ = parse_gate0_report("fuzz.out", data);
                continue;
            }
            GateName::Conformity => parse_conformity("fuzz.out", data),
            GateName::Security => parse_security("fuzz.out", data),
        };
        let finished = match parsed {
            Ok(out) => out.into_finished(1, 1, Some("gates/1-x-1.out".into())),
            Err(st) => st.into_finished(gate, 1, 1, Some("gates/1-x-1.out".into())),
        };
        round_trip(EventBody::from(finished));
    }
}

/// Any text as the finding verifier's JSON.
pub fn verdicts(data: &[u8]) {
    if let Ok(entries) = parse_verdicts("fuzz.json", data) {
        for (i, e) in entries.iter().enumerate() {
            assert_eq!(e.position, i, "entries come in array order");
            assert!(e.line >= 1 && e.column >= 1, "positions are 1-based");
        }
    }
}

/// Any bytes as a journal: each line through `Event::parse_line` (an event
/// read must write back and read again the same), and the whole through
/// `JournalReader` in two pieces, which must agree with one whole read.
pub fn journal(data: &[u8]) {
    for line in data.split(|&b| b == b'\n') {
        if let Ok(ev) = Event::parse_line(line) {
            let again = Event::parse_line(ev.to_line().trim_end().as_bytes());
            assert_eq!(
                again.as_ref().ok(),
                Some(&ev),
                "an event read back differs: {:?}",
                again.as_ref().err()
            );
        }
    }
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(_) => return,
    };
    let path = dir.path().join("events.jsonl");
    let cut = data.len() / 2;
    let Ok(mut f) = std::fs::File::create(&path) else {
        return;
    };
    if f.write_all(&data[..cut]).is_err() {
        return;
    }
    let mut reader = JournalReader::new(&path);
    let Ok(first) = reader.read_new() else { return };
    if f.write_all(&data[cut..]).is_err() {
        return;
    }
    let Ok(second) = reader.read_new() else {
        return;
    };
    let Ok(whole) = read_all(&path) else { return };
    let mut pieces = first.events;
    pieces.extend(second.events);
    assert_eq!(
        pieces, whole.events,
        "reading in two pieces differs from reading whole"
    );
    assert_eq!(
        first.problems.len() + second.problems.len(),
        whole.problems.len()
    );
    assert!(
        whole.events.windows(2).all(|w| w[0].seq < w[1].seq),
        "seqs rise"
    );
    let state = fold(&whole.events);
    assert_eq!(state.seq, whole.events.last().map_or(0, |e| e.seq));
}

/// Any bytes as text a command prints: a field never holds a line break
/// or a character a terminal would act on; printed text keeps only its own
/// line feeds; JSON output holds none of them either and parses back to
/// the very same string.
pub fn printer(data: &[u8]) {
    use loopwatch::sanitize::{field, json, needs_escape, terminal_text};
    let text = String::from_utf8_lossy(data).into_owned();
    let f = field(&text);
    assert!(
        !f.chars().any(needs_escape),
        "a field kept a control: {f:?}"
    );
    let t = terminal_text(data);
    assert!(
        !t.chars().any(|c| c != '\n' && needs_escape(c)),
        "printed text kept a control: {t:?}"
    );
    assert_eq!(
        t.matches('\n').count(),
        text.matches('\n').count(),
        "printed text added or lost a line"
    );
    for out in [json::to_string(&text), json::to_string_pretty(&[&text])] {
        let Ok(out) = out else {
            panic!("a string failed to serialise");
        };
        // Line feeds here are the layout's: a string's own are escaped.
        assert!(
            !out.chars().any(|c| c != '\n' && needs_escape(c)),
            "JSON kept a control: {out:?}"
        );
        let back: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
        let back = back
            .as_str()
            .map(str::to_owned)
            .or_else(|| back.get(0).and_then(|v| v.as_str()).map(str::to_owned));
        assert_eq!(
            back.as_deref(),
            Some(text.as_str()),
            "JSON did not round-trip"
        );
    }
}

/// Test references the `test_log` target asks every log about: none, a
/// plain name, a nested node name, a file-qualified jest or pytest one.
const TEST_REFS: [Option<&str>; 5] = [
    None,
    Some("total rounds half up"),
    Some("group > nested passes"),
    Some("src/cart.test.js::total rounds half up"),
    Some("tests/test_cart.py::test_total_rounds_half_up"),
];

/// Any bytes as a test log (node's spec and TAP reporters and every other
/// runner the evidence gate reads): `judge` never proves both `passed` and
/// `failed` of the same reference, a proof always rests on a test that ran
/// (and, for `passed`, on no failure or interruption), and the reason is
/// one line.
pub fn test_log(data: &[u8]) {
    let log = String::from_utf8_lossy(data);
    for test in TEST_REFS {
        let verdict = |status| {
            judge(
                &log,
                &Claim {
                    status,
                    test: test.map(str::to_string),
                },
            )
        };
        let passed = verdict(ClaimStatus::Passed);
        let failed = verdict(ClaimStatus::Failed);
        assert!(
            !(passed.is_proven() && failed.is_proven()),
            "both passed and failed proven for {test:?}: {passed} / {failed}"
        );
        for v in [&passed, &failed] {
            let line = v.to_string();
            assert!(!line.contains('\n'), "a reason on two lines: {line:?}");
            let Verdict::Proven(p) = v else { continue };
            let t = &p.tally;
            assert!(t.passed + t.failed > 0, "proven with no test run: {line}");
            assert!(!t.interrupted, "proven by an interrupted run: {line}");
            assert_eq!(p.test.is_some(), test.is_some(), "{line}");
            match p.status {
                ClaimStatus::Passed => assert!(
                    t.failed == 0 && !t.failure_reported,
                    "passed proven beside a failure: {line}"
                ),
                ClaimStatus::Failed => assert!(t.failed > 0, "failed proven, none failed: {line}"),
            }
        }
    }
}

fn round_trip(body: EventBody) {
    let ev = Event {
        v: 1,
        seq: 1,
        at: "2026-11-02T10:00:00Z".into(),
        prev: None,
        body,
    };
    let line = ev.to_line();
    let back = Event::parse_line(line.trim_end().as_bytes());
    assert_eq!(
        back.as_ref().ok(),
        Some(&ev),
        "written {line:?} reads back as {:?}",
        back.as_ref().err()
    );
}
