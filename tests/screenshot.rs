//! The README picture, made by the project's own code from a real frame:
//! `loopwatch demo --no-tui` records a run, the journal is folded up to a
//! moment a human gate is waiting, its decision dialog is opened on the
//! evidence the gate carries, and the screen is drawn at 120x36
//! on a `TestBackend`, then written as `assets/screenshot/loopwatch.svg`
//! (monospace text with the cells' colours) and `loopwatch.txt`.
//!
//! `cargo test --test screenshot -- --ignored` remakes the picture; the
//! buffer-to-SVG conversion itself is tested on every run.

#[path = "screenshot/svg.rs"]
mod svg;

use std::path::{Path, PathBuf};
use std::time::Duration;

use loopwatch::journal::read_all;
use loopwatch::model::{Event, EventBody, fold};
use loopwatch::tui::app::Tab;
use loopwatch::tui::config::{Config, ThemeKind};
use loopwatch::tui::view::render;
use loopwatch::tui::{App, ManualClock};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// The picture's size, in cells.
const COLS: u16 = 120;
const ROWS: u16 = 36;

#[test]
#[ignore = "records a demo run and rewrites assets/screenshot; run with --ignored"]
fn readme_picture_from_a_recorded_demo_run() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().join("invoice-tools");
    let status =
        loopwatch::tui::testkit::record_demo(env!("CARGO_BIN_EXE_loopwatch").as_ref(), &root)
            .status;
    // The picture needs the recorded journal, not a clean ending: a run
    // that stops at a human gate still recorded the moment shown.
    if !status.success() {
        eprintln!("note: the demo run ended with {status}; using what it recorded");
    }
    let events = read_all(&root.join(".pipeline/events.jsonl"))
        .expect("read the demo journal")
        .events;

    let upto = moment_with_open_gate(&events).expect("the demo run opens a human gate");
    let shown = &events[..upto];
    let state = fold(shown.iter());
    assert_eq!(state.open_human_gates().count(), 1);

    let last_at: jiff::Timestamp = shown[upto - 1].at.parse().expect("event time");
    let clock = ManualClock::new(last_at);
    clock.advance(Duration::from_secs(42));
    let mut app = App::new(
        Config::default(),
        ThemeKind::Dark,
        Box::new(clock),
        root.join(".pipeline"),
    );
    let _ = app.on_state(state, shown);
    // The gate waiting, its dialog open on the evidence it was opened with.
    let _ = app.on_key(&KeyEvent::new(KeyCode::Char('4'), KeyModifiers::NONE));
    assert_eq!(app.tab(), Tab::Gates);
    let _ = app.on_key(&KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    let dialog = app.dialog().expect("the gate's dialog is open");
    assert!(
        dialog
            .evidence
            .iter()
            .any(|l| l == "code (as captured when the gate opened):"),
        "the gate carries no code evidence: {:#?}",
        dialog.evidence
    );

    let mut term = Terminal::new(TestBackend::new(COLS, ROWS)).expect("test backend");
    term.draw(|f| render(f, &app)).expect("draw");
    let buf = term.backend().buffer();
    let text = svg::plain_text(buf);
    assert!(
        text.contains("decide hg-"),
        "no gate dialog on screen:\n{text}"
    );
    assert!(
        text.contains("code (as captured when the gate opened)"),
        "no evidence on screen:\n{text}"
    );
    assert!(
        !text.contains(&root.display().to_string()),
        "the temp path leaked into the picture:\n{text}"
    );

    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/screenshot");
    std::fs::create_dir_all(&out).expect("create assets/screenshot");
    write(&out.join("loopwatch.svg"), &svg::svg_of(buf));
    write(&out.join("loopwatch.txt"), &text);
}

/// The number of events up to the latest `human.requested` that carries
/// code evidence: the screen a person saw while the run waited on them.
fn moment_with_open_gate(events: &[Event]) -> Option<usize> {
    // Code shown, not only said missing: a hunk (`@@`) or cited lines (`>`).
    let shows_code = |ev: &serde_json::Value| {
        ev.get("code")
            .and_then(serde_json::Value::as_array)
            .is_some_and(|lines| {
                lines
                    .iter()
                    .filter_map(serde_json::Value::as_str)
                    .any(|l| l.starts_with("@@") || l.starts_with('>'))
            })
    };
    events
        .iter()
        .rposition(|e| matches!(&e.body, EventBody::HumanRequested(r) if shows_code(&r.evidence)))
        .map(|i| i + 1)
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}
