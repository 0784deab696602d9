//! Frames of every screen on a fixed-size `TestBackend`, driven by injected
//! events and an injected clock: snapshots at 80x24 and 160x48 in the light
//! and NO_COLOR themes, resizes that never panic, and hostile text that is
//! drawn inside its pane with visible escapes.

mod support;

use std::path::PathBuf;
use std::time::Duration;

use loopwatch::model::{Event, fold};
use loopwatch::tui::app::{Problem, ReplayBar, Tab};
use loopwatch::tui::config::ThemeKind;
use loopwatch::tui::testkit::{app_on, type_text};
use loopwatch::tui::view::render;
use loopwatch::tui::{App, ManualClock};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::{Color, Modifier};
use support::assert_has;

const NOW: &str = "2026-12-01T08:45:00Z";

fn events(name: &str) -> Vec<Event> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tui")
        .join(name);
    let text = std::fs::read(&path).expect("fixture exists");
    text.split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| Event::parse_line(l).expect("valid event"))
        .collect()
}

fn app(theme: ThemeKind, evs: &[Event]) -> (App, ManualClock) {
    app_on(
        theme,
        NOW.parse().expect("time"),
        "/work/proj/.pipeline",
        evs,
    )
}

fn press(app: &mut App, keys: &str) {
    let _ = type_text(app, keys);
}

/// Opens the dialog of the first waiting gate (`n`, enter) and lets the
/// clock pass its key guard.
fn open_dialog(app: &mut App, clock: &ManualClock) {
    press(app, "n");
    let _ = app.on_key(&KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    clock.advance(Duration::from_millis(400));
}

fn draw(app: &App, w: u16, h: u16) -> Buffer {
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("test backend");
    term.draw(|f| render(f, app)).expect("draw");
    term.backend().buffer().clone()
}

/// The text of a frame, then every styled run: `row col-col fg bg +modifiers`.
fn frame_text(buf: &Buffer) -> String {
    let mut out = String::new();
    let area = buf.area;
    for y in 0..area.height {
        let mut line = String::new();
        let mut skip = 0;
        for x in 0..area.width {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let cell = &buf[(x, y)];
            line.push_str(cell.symbol());
            skip = unicode_width::UnicodeWidthStr::width(cell.symbol()).saturating_sub(1);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push_str("--- styles\n");
    for y in 0..area.height {
        let mut x = 0;
        while x < area.width {
            let c = &buf[(x, y)];
            let key = (c.fg, c.bg, c.modifier);
            let mut end = x;
            while end + 1 < area.width {
                let n = &buf[(end + 1, y)];
                if (n.fg, n.bg, n.modifier) != key {
                    break;
                }
                end += 1;
            }
            if key != (Color::Reset, Color::Reset, Modifier::empty()) {
                out.push_str(&format!(
                    "{y:>2} {x:>3}-{end:<3} {:?} {:?} {:?}\n",
                    c.fg, c.bg, c.modifier
                ));
            }
            x = end + 1;
        }
    }
    out
}

fn no_colour_anywhere(buf: &Buffer) {
    for cell in buf.content() {
        assert_eq!(
            (cell.fg, cell.bg),
            (Color::Reset, Color::Reset),
            "colour in NO_COLOR at {:?}",
            cell.symbol()
        );
    }
}

/// Snapshots a screen at both sizes in both themes; `setup` builds the app.
fn snap(name: &str, setup: impl Fn(ThemeKind) -> App) {
    for (theme, tname) in [(ThemeKind::Light, "light"), (ThemeKind::NoColor, "nocolor")] {
        let app = setup(theme);
        for (w, h) in [(80, 24), (160, 48)] {
            let buf = draw(&app, w, h);
            if theme == ThemeKind::NoColor {
                no_colour_anywhere(&buf);
            }
            insta::assert_snapshot!(format!("{name}_{w}x{h}_{tname}"), frame_text(&buf));
        }
    }
}

fn full(theme: ThemeKind) -> App {
    app(theme, &events("full-run.events.jsonl")).0
}

#[test]
fn empty_pipeline() {
    snap("empty", |t| {
        let (mut a, _) = app(t, &[]);
        a.set_looking_in(Some("/work/proj".into()));
        a
    });
}

#[test]
fn damaged_journal_banner() {
    snap("damaged", |t| {
        let mut a = full(t);
        a.set_problem(Some(Problem {
            file: ".pipeline/events.jsonl".into(),
            line: Some(24),
            column: Some(17),
            message: "invalid JSON: expected `,` or `}`".into(),
            partial_since: Some("2026-12-01T08:43:20Z".into()),
        }));
        a
    });
}

#[test]
fn every_tab_of_a_full_run() {
    for (n, tab) in Tab::ALL.iter().enumerate() {
        snap(
            &format!("tab{}_{}", n + 1, tab.title().to_lowercase()),
            |t| {
                let mut a = full(t);
                press(&mut a, &format!("{}", n + 1));
                press(&mut a, "j");
                if *tab == Tab::Logs {
                    let _ = a.on_key(&KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
                    a.on_log_loaded(
                    std::path::Path::new("/work/proj/.pipeline/gates/2-floor-2.out"),
                    Ok(b"GATES \xe2\x80\x94 contract (run)\n  1   MET           cargo test\n\tRUNNABLE: 2 of 4\nGATES \xe2\x80\x94 VERDICT: ABANDONED(1)\n".to_vec()),
                );
                }
                assert_eq!(a.tab(), *tab);
                a
            },
        );
    }
}

#[test]
fn help_overlay() {
    snap("help", |t| {
        let mut a = full(t);
        press(&mut a, "?");
        a
    });
}

#[test]
fn diff_overlay() {
    snap("diff", |t| {
        let mut a = full(t);
        press(&mut a, "d");
        a
    });
}

#[test]
fn decision_dialog() {
    snap("dialog", |t| {
        let (mut a, clock) = app(t, &events("full-run.events.jsonl"));
        open_dialog(&mut a, &clock);
        press(&mut a, "p");
        press(&mut a, "perf target moves to the next release");
        assert!(a.dialog().is_some());
        a
    });
}

#[test]
fn run_list() {
    snap("runs", |t| {
        let evs = events("full-run.events.jsonl");
        let (mut a, _) = app(t, &[]);
        a.set_fleet(vec!["/w".into()]);
        for p in [
            "/w/a/.pipeline",
            "/w/b/.pipeline",
            "/w/c/.pipeline",
            "/w/d/.pipeline",
        ] {
            a.add_run(p.into());
        }
        let _ = a.on_run_state(0, fold(evs[..9].iter()), &evs[..9]);
        let _ = a.on_run_state(1, fold(evs.iter()), &evs);
        // Polled past the watch limit, and a journal that cannot be read.
        a.set_run_polled(
            1,
            Some("the system's inotify watch limit is reached".into()),
        );
        a.set_run_problem(
            3,
            Some(Problem {
                file: "/w/d/.pipeline/events.jsonl".into(),
                line: None,
                column: None,
                message: "cannot read: Is a directory".into(),
                partial_since: None,
            }),
        );
        a.set_fleet_notice(Some(
            "~ 1 run polled every 500 ms, not watched: the system's inotify watch limit is reached"
                .into(),
        ));
        a
    });
}

#[test]
fn replay_bar() {
    snap("replay", |t| {
        let evs = events("full-run.events.jsonl");
        let (mut a, _) = app(t, &evs[..12]);
        a.set_replay(Some(ReplayBar {
            event: 12,
            total: 23,
            at: evs[11].at.clone(),
            iteration: 2,
        }));
        press(&mut a, "5");
        a
    });
}

#[test]
fn stale_age_turns_to_a_warning() {
    let (a, clock) = app(ThemeKind::NoColor, &events("full-run.events.jsonl")[..12]);
    let line = |a: &App| {
        let buf = draw(a, 100, 24);
        (0..100)
            .map(|x| buf[(x, 1)].symbol().to_string())
            .collect::<String>()
    };
    assert_has(&line(&a), "⚠ no event for 18m");
    clock.set("2026-12-01T08:27:00Z".parse().expect("time"));
    assert_has(&line(&a), "last event 58s ago");
    clock.advance(Duration::from_secs(540));
    assert_has(&line(&a), "last event 9m ago");
    clock.advance(Duration::from_secs(2));
    assert_has(&line(&a), "⚠ no event for 10m");
}

#[path = "tui_snapshots/agents.rs"]
mod agents;
#[path = "tui_snapshots/hostile.rs"]
mod hostile;
#[path = "tui_snapshots/kinds.rs"]
mod kinds;
#[path = "tui_snapshots/resize.rs"]
mod resize;
#[path = "tui_snapshots/review.rs"]
mod review;
