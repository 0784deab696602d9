//! The reading side without a child process: a watcher overflow (Rescan)
//! re-reads a journal from its first byte, through [`Feed`] and through the
//! live loop's [`Live`]; and the header's age when the orchestrator goes
//! quiet, the clock jumps back, or an event claims to come from the future.

mod support;

use support::hardening as hardening_support;

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::time::{Duration, Instant};

use hardening_support::{Worktree, notes};
use loopwatch::journal::Pipeline;
use loopwatch::model::{Event, EventBody, fold};
use loopwatch::tui::config::{Config, ThemeKind};
use loopwatch::tui::view::render;
use loopwatch::tui::{App, ManualClock};
use loopwatch::watch::{Feed, Input, Live, WatchEvent};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// Lines whose text differs from [`notes`] and which are longer, so the
/// old read offset falls inside the second line of the new file.
fn rewritten(n: u64) -> String {
    (1..=n)
        .map(|s| format!("{{\"v\":1,\"seq\":{s},\"at\":\"2026-11-02T11:00:00Z\",\"type\":\"note\",\"text\":\"rewritten {s}\"}}\n"))
        .collect()
}

fn texts<'a>(events: impl IntoIterator<Item = &'a Event>) -> Vec<String> {
    events
        .into_iter()
        .map(|e| match &e.body {
            EventBody::Note { text } => text.clone(),
            other => format!("{other:?}"),
        })
        .collect()
}

/// Rewrites the journal in place: same inode, longer than before, so an
/// offset-based read cannot tell that it changed.
fn rewrite_in_place(p: &Pipeline, text: &str) {
    let mut f = OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(p.journal_path())
        .unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

fn want_rewritten(n: u64) -> Vec<String> {
    (1..=n).map(|s| format!("rewritten {s}")).collect()
}

#[test]
fn a_rescan_rereads_the_whole_journal() {
    let (_w, p) = Worktree::with_pipeline();
    fs::write(p.journal_path(), notes(3)).unwrap();
    let mut feed = Feed::new(p.clone());
    assert_eq!(feed.refresh().new_events, 3);
    rewrite_in_place(&p, &rewritten(4));
    let up = feed.rescan();
    assert!(up.reset && up.changed);
    assert_eq!(up.new_events, 4);
    assert_eq!(texts(feed.events()), want_rewritten(4));
    assert_eq!(feed.state(), &fold(feed.events()));
    assert_eq!(feed.state().seq, 4);
    assert!(feed.problems().is_empty(), "{:?}", feed.problems());
}

#[test]
fn a_rescan_of_a_journal_truncated_to_nothing_keeps_the_last_state() {
    let (_w, p) = Worktree::with_pipeline();
    fs::write(p.journal_path(), notes(3)).unwrap();
    let mut feed = Feed::new(p.clone());
    feed.refresh();
    rewrite_in_place(&p, "");
    let up = feed.refresh();
    assert!(!up.reset);
    assert_eq!(feed.state().seq, 3);
    assert_eq!(up.problems.len(), 1);
    assert_eq!(
        up.problems[0].message,
        "the journal was truncated or replaced: showing the last state read until it holds a complete line"
    );
    fs::write(p.journal_path(), notes(2)).unwrap();
    let up = feed.refresh();
    assert!(up.reset);
    assert_eq!(
        feed.state().seq,
        2,
        "a complete rewrite is the new truth, even when shorter"
    );
}

#[test]
fn the_live_loop_rereads_everything_on_a_rescan() {
    let (_w, p) = Worktree::with_pipeline();
    fs::write(p.journal_path(), notes(3)).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut live: Live<&'static str> = Live::start(vec![p.clone()]);
        live.refresh_all();
        assert_eq!(live.feeds()[0].state().seq, 3);
        rewrite_in_place(&p, &rewritten(4));
        // Let the real watcher's events for the rewrite arrive (and be read
        // from the old offset) before the overflow is reported.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let tx = live.sender();
        tx.send(Input::Watch(0, WatchEvent::Rescan)).unwrap();
        tx.send(Input::Other("after the rescan")).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            assert!(Instant::now() < deadline, "the marker never came back");
            let batch = tokio::time::timeout(Duration::from_secs(5), live.next_batch())
                .await
                .unwrap()
                .unwrap();
            if batch.others.contains(&"after the rescan") {
                break;
            }
        }
        let feed = &live.feeds()[0];
        assert_eq!(texts(feed.events()), want_rewritten(4));
        assert_eq!(feed.state().seq, 4);
    });
}

const AT: &str = "2026-11-02T10:00:00Z";

fn app_at(clock: &ManualClock, at: &str) -> App {
    let events: Vec<Event> = [
        r#"{"v":1,"seq":1,"at":"AT","type":"run.started","run":{"id":"2026-11-02-hardening","flow":"feat","contract":"contract.md"}}"#,
        r#"{"v":1,"seq":2,"at":"AT","type":"iteration.started","iteration":1,"trigger":"initial"}"#,
    ]
    .iter()
    .map(|l| Event::parse_line(l.replace("AT", at).as_bytes()).unwrap())
    .collect();
    let mut app = App::new(
        Config::default(),
        ThemeKind::NoColor,
        Box::new(clock.clone()),
        "/w/.pipeline".into(),
    );
    let _ = app.on_state(fold(&events), &events);
    app
}

/// The header's age text: from `last event`/`no event` to the next ` · `.
fn age_text(app: &App) -> String {
    let mut term = Terminal::new(TestBackend::new(160, 24)).unwrap();
    term.draw(|f| render(f, app)).unwrap();
    let buf = term.backend().buffer().clone();
    let row: String = (0..buf.area.width)
        .map(|x| buf[(x, 1)].symbol().to_string())
        .collect();
    let start = row
        .find("last event")
        .or_else(|| row.find("⚠ no event"))
        .unwrap_or_else(|| panic!("no age in {row:?}"));
    let rest = &row[start..];
    rest.split("  ·  ").next().unwrap().trim_end().to_string()
}

#[test]
fn the_age_keeps_counting_and_warns_past_stale_after() {
    let t = |s: &str| s.parse::<jiff::Timestamp>().unwrap();
    let clock = ManualClock::new(t("2026-11-02T10:00:30Z"));
    let app = app_at(&clock, AT);
    assert_eq!(age_text(&app), "last event 30s ago");
    clock.advance(Duration::from_secs(4 * 60 + 30));
    assert_eq!(age_text(&app), "last event 5m ago");
    clock.advance(Duration::from_secs(5 * 60 - 1));
    assert_eq!(age_text(&app), "last event 9m ago");
    clock.advance(Duration::from_secs(1));
    assert_eq!(age_text(&app), "⚠ no event for 10m");
    clock.advance(Duration::from_secs(55 * 60));
    assert_eq!(age_text(&app), "⚠ no event for 1h05m");
    clock.advance(Duration::from_secs(2 * 86_400));
    assert_eq!(age_text(&app), "⚠ no event for 2d");
}

#[test]
fn a_clock_jump_back_or_an_event_from_the_future_never_shows_a_negative_age() {
    let t = |s: &str| s.parse::<jiff::Timestamp>().unwrap();
    let clock = ManualClock::new(t("2026-11-02T10:02:00Z"));
    let app = app_at(&clock, AT);
    assert_eq!(age_text(&app), "last event 2m ago");
    clock.set(t("2026-11-02T09:00:00Z"));
    assert_eq!(age_text(&app), "last event 0s ago");
    clock.set(t("1970-01-01T00:00:00Z"));
    assert_eq!(age_text(&app), "last event 0s ago");
    let future = app_at(&clock, "2099-12-31T23:59:59Z");
    clock.set(t("2026-11-02T10:02:00Z"));
    assert_eq!(age_text(&future), "last event 0s ago");
}
