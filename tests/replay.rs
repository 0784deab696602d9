//! Replay of a recorded run: `loopwatch demo --no-tui` records a whole
//! scripted run once per test binary; the screen at chosen events and
//! iterations is drawn exactly as `loopwatch replay` draws it and compared
//! with snapshots, and every position of the history (the demo's and a
//! generated 5,000-event journal's) equals the live fold of its prefix.
//!
//! Times are made deterministic by rewriting the recorded journal's `at`
//! fields before it is loaded; nothing is redacted from the frames.

#[path = "fixtures/replay/journal_gen.rs"]
mod journal_gen;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use loopwatch::history::History;
use loopwatch::journal::{Pipeline, snapshot};
use loopwatch::model::state::RunStatus;
use loopwatch::model::{EndStatus, Event, State, fold};
use loopwatch::tui::config::{Config, ThemeKind};
use loopwatch::tui::replay::{ReplayStart, move_target, show_position, start_position};
use loopwatch::tui::view::render;
use loopwatch::tui::{App, Effect, ManualClock};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// The first rewritten `at`; event `seq` is at this time plus `7 * seq` seconds.
const BASE: &str = "2026-11-30T09:00:00Z";
/// The manual clock: a minute after the last event of the demo.
const NOW: &str = "2026-11-30T09:05:00Z";

/// The demo run, recorded once: its folder (kept alive) and its events.
struct Demo {
    _dir: tempfile::TempDir,
    pipeline: PathBuf,
    events: Vec<Event>,
}

fn demo() -> &'static Demo {
    static DEMO: OnceLock<Demo> = OnceLock::new();
    DEMO.get_or_init(record_demo)
}

/// Runs `loopwatch demo --no-tui --out DIR --speed 1000`, rewrites the
/// journal's times, and reads it back through the journal reader.
fn record_demo() -> Demo {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("invoice-tools");
    let run = loopwatch::tui::testkit::record_demo(env!("CARGO_BIN_EXE_loopwatch").as_ref(), &out);
    assert!(
        run.status.success(),
        "the demo run did not complete ({:?}):\n{}\n{}",
        run.status,
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    let pipeline = out.join(".pipeline");
    rewrite_times(&pipeline.join("events.jsonl"));
    let snap = snapshot(&Pipeline::at(&pipeline))
        .expect("read the journal")
        .expect("a journal");
    assert!(
        snap.problems.is_empty(),
        "journal problems: {:?}",
        snap.problems
    );
    Demo {
        _dir: dir,
        pipeline,
        events: snap.events,
    }
}

/// Sets every line's `at` to [`BASE`] plus 7 s per seq, keeping the rest.
fn rewrite_times(journal: &Path) {
    let base: jiff::Timestamp = BASE.parse().expect("base time");
    let text = std::fs::read_to_string(journal).expect("read journal");
    let mut out = String::new();
    for line in text.lines() {
        let mut v: serde_json::Value = serde_json::from_str(line).expect("journal line is JSON");
        let seq = v["seq"].as_i64().expect("seq");
        let at = base
            .checked_add(jiff::SignedDuration::from_secs(7 * seq))
            .expect("time in range");
        v["at"] = serde_json::Value::from(at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string());
        out.push_str(&v.to_string());
        out.push('\n');
    }
    std::fs::write(journal, out).expect("write journal");
}

/// The replay driver as `loopwatch replay` runs it, on a history.
struct Replayer {
    app: App,
    history: History,
    k: usize,
}

impl Replayer {
    fn new(events: Vec<Event>, start: ReplayStart) -> Replayer {
        let clock = ManualClock::new(NOW.parse().expect("time"));
        let app = App::new(
            Config::default(),
            ThemeKind::NoColor,
            Box::new(clock),
            "/demo/invoice-tools/.pipeline".into(),
        );
        let history = History::new(events);
        let mut r = Replayer { app, history, k: 0 };
        let k = start_position(&r.history, start);
        r.k = show_position(&mut r.app, &r.history, k);
        r
    }

    /// Presses a key; replay moves it asks for are performed like the event loop does.
    fn press(&mut self, code: KeyCode) {
        for effect in self.app.on_key(&KeyEvent::new(code, KeyModifiers::NONE)) {
            match effect {
                Effect::Replay(m) => match move_target(&self.history, self.k, m) {
                    Some(target) => self.k = show_position(&mut self.app, &self.history, target),
                    None => {
                        // Back to live: for a recorded run, the whole journal.
                        self.app.set_replay(None);
                        let _ = self.app.on_run_state(
                            0,
                            self.history.latest().clone(),
                            self.history.events(),
                        );
                        self.k = self.history.len();
                    }
                },
                other => panic!("unexpected effect {other:?}"),
            }
        }
    }

    fn frame(&self, w: u16, h: u16) -> String {
        let mut term = Terminal::new(TestBackend::new(w, h)).expect("test backend");
        term.draw(|f| render(f, &self.app)).expect("draw");
        let buf = term.backend().buffer();
        let mut out = String::new();
        for y in 0..buf.area.height {
            let mut line = String::new();
            let mut skip = 0;
            for x in 0..buf.area.width {
                if skip > 0 {
                    skip -= 1;
                    continue;
                }
                let sym = buf[(x, y)].symbol();
                line.push_str(sym);
                skip = unicode_width::UnicodeWidthStr::width(sym).saturating_sub(1);
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

fn fold_of(events: &[Event]) -> State {
    fold(events.iter())
}

/// The events of a generated journal of `n` lines.
fn generated(n: usize) -> Vec<Event> {
    journal_gen::lines(n)
        .iter()
        .map(|l| Event::parse_line(l.as_bytes()).expect("generated line parses"))
        .collect()
}

#[test]
fn the_demo_run_is_recorded_whole() {
    let d = demo();
    let h = History::new(d.events.clone());
    let last = h.latest();
    assert_eq!(last.status, RunStatus::Ended);
    assert_eq!(
        last.ended.as_ref().map(|e| e.status),
        Some(EndStatus::Complete)
    );
    assert_eq!(h.iteration_starts(), vec![(1, 1), (2, 8), (3, 59), (4, 83)]);
    assert_eq!(h.len(), 104);
    assert_eq!(
        d.events.first().map(|e| e.at.as_str()),
        Some("2026-11-30T09:00:07Z")
    );
    assert_eq!(
        d.events.last().map(|e| e.at.as_str()),
        Some("2026-11-30T09:12:08Z")
    );
    assert!(d.pipeline.join("report.md").is_file());
}

#[test]
fn every_position_of_the_demo_equals_the_fold_of_its_prefix() {
    let events = &demo().events;
    let h = History::new(events.clone());
    for k in 0..=events.len() {
        assert_eq!(h.state_at(k), fold_of(&events[..k]), "position {k}");
    }
    assert_eq!(
        h.state_at(events.len() + 10),
        fold_of(events),
        "past the end is the end"
    );
}

#[test]
fn stepping_forward_through_the_demo_shows_the_live_fold_at_every_step() {
    let events = &demo().events;
    let mut r = Replayer::new(events.clone(), ReplayStart::First);
    assert_eq!(r.k, 1);
    for k in 1..=events.len() {
        assert_eq!(r.k, k);
        assert_eq!(r.app.state(), &fold_of(&events[..k]), "state at step {k}");
        assert_eq!(r.app.run().events, events[..k], "events at step {k}");
        r.press(KeyCode::Right);
    }
    assert_eq!(r.k, events.len(), "→ stops at the last event");
    for k in (1..events.len()).rev() {
        r.press(KeyCode::Left);
        assert_eq!(r.k, k);
        assert_eq!(
            r.app.state(),
            &fold_of(&events[..k]),
            "state stepping back to {k}"
        );
        assert_eq!(
            r.app.run().events,
            events[..k],
            "events stepping back to {k}"
        );
    }
    r.press(KeyCode::Left);
    assert_eq!(r.k, 1, "← stops at the first event");
}

#[test]
fn iteration_keys_home_and_end_land_on_iteration_starts() {
    let events = &demo().events;
    let mut r = Replayer::new(events.clone(), ReplayStart::First);
    let mut seen = Vec::new();
    for _ in 0..4 {
        r.press(KeyCode::Char(']'));
        seen.push(r.k);
    }
    assert_eq!(seen, vec![2, 9, 60, 84]);
    r.press(KeyCode::Char('['));
    assert_eq!(r.k, 60);
    r.press(KeyCode::Char('['));
    assert_eq!(r.k, 9);
    r.press(KeyCode::Home);
    assert_eq!(r.k, 1);
    assert_eq!(r.app.state(), &fold_of(&events[..1]));
    r.press(KeyCode::Char(']'));
    assert_eq!(r.k, 2);
}

#[test]
fn end_leaves_replay_for_the_whole_run() {
    let events = &demo().events;
    let mut r = Replayer::new(events.clone(), ReplayStart::Seq(11));
    assert!(r.frame(100, 30).contains("REPLAY  event 11/104"));
    r.press(KeyCode::End);
    assert_eq!(r.app.state(), &fold_of(events));
    assert!(
        !r.frame(100, 30).contains("REPLAY"),
        "no replay bar once live"
    );
}

#[test]
fn start_positions_follow_seq_and_iteration() {
    let h = History::new(demo().events.clone());
    assert_eq!(start_position(&h, ReplayStart::First), 1);
    assert_eq!(start_position(&h, ReplayStart::Seq(12)), 12);
    assert_eq!(start_position(&h, ReplayStart::Seq(0)), 1);
    assert_eq!(start_position(&h, ReplayStart::Seq(999)), 104);
    assert_eq!(start_position(&h, ReplayStart::Iteration(3)), 60);
    assert_eq!(start_position(&h, ReplayStart::Iteration(9)), 1);
    assert_eq!(
        start_position(&History::new(Vec::new()), ReplayStart::First),
        0
    );
}

/// One test per screen: `test: start [, 'c'] => snapshot`, the demo
/// replayed from `start` (then the key `c` pressed) and drawn at 120×32.
macro_rules! screens {
    ($($test:ident: $start:expr $(, $key:literal)? => $snapshot:literal;)*) => {$(
        #[test]
        fn $test() {
            let r = Replayer::new(demo().events.clone(), $start);
            $(let mut r = r; r.press(KeyCode::Char($key));)?
            insta::assert_snapshot!($snapshot, r.frame(120, 32));
        }
    )*};
}

screens! {
    screen_at_the_first_event: ReplayStart::First => "demo_first_event_120x32";
    screen_at_the_floor_unmet_of_iteration_1: ReplayStart::Seq(7) => "demo_seq7_floor_unmet_120x32";
    screen_at_the_out_of_scope_gate: ReplayStart::Seq(18) => "demo_seq18_out_of_scope_120x32";
    screen_at_the_unverifiable_criterion: ReplayStart::Seq(70) => "demo_seq70_unverifiable_120x32";
    screen_at_the_last_event: ReplayStart::Seq(104) => "demo_last_event_120x32";
    // F1 VERIFIED, F2 FALSE, F3 rejected once and dispatched again, F4 verifying.
    screen_of_the_finding_lanes_running: ReplayStart::Seq(44), '2' => "demo_seq44_lanes_120x32";
    screen_of_the_security_block: ReplayStart::Seq(82), '3' => "demo_seq82_security_120x32";
}

#[test]
fn screen_at_the_start_of_iteration_3() {
    let r = Replayer::new(demo().events.clone(), ReplayStart::Iteration(3));
    assert_eq!(r.k, 60);
    insta::assert_snapshot!("demo_iteration3_start_120x32", r.frame(120, 32));
}

#[test]
fn every_position_of_a_generated_5000_event_journal_equals_the_live_fold() {
    let events = generated(5000);
    assert_eq!(events.len(), 5000);
    let h = History::new(events.clone());
    // Thinned: a checkpoint every 64 events at first, at most 8 kept.
    let thin = History::with_checkpoints(events.clone(), 64, 8);
    assert_eq!(
        (thin.checkpoint_spacing(), thin.checkpoint_count()),
        (1024, 5)
    );
    let mut live = State::default();
    assert_eq!(h.state_at(0), fold_of(&[]));
    assert_eq!(thin.state_at(0), fold_of(&[]));
    for (i, ev) in events.iter().enumerate() {
        live.apply(ev);
        let mut expected = live.clone();
        expected.finish();
        assert_eq!(h.state_at(i + 1), expected, "position {}", i + 1);
        assert_eq!(
            thin.state_at(i + 1),
            expected,
            "thinned, position {}",
            i + 1
        );
    }
    assert_eq!(h.latest(), &fold_of(&events));
    assert!(
        h.latest().iteration_number() > 100,
        "the journal spans many iterations"
    );
    assert_eq!(
        h.latest().ended.as_ref().map(|e| e.status),
        Some(EndStatus::Complete)
    );
}

#[test]
fn a_generated_journal_grown_by_extend_seeks_like_one_built_whole() {
    let events = generated(3000);
    let whole = History::new(events.clone());
    let mut grown = History::new(events[..700].to_vec());
    grown.extend(events[700..1500].iter().cloned());
    grown.extend(events[1500..].iter().cloned());
    for k in [0, 1, 511, 512, 513, 700, 1023, 1024, 1499, 1500, 2999, 3000] {
        assert_eq!(grown.state_at(k), whole.state_at(k), "position {k}");
        assert_eq!(grown.state_at(k), fold_of(&events[..k]), "fold at {k}");
    }
}
