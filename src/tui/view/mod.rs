//! The view: a pure function of the app, drawing one frame. One file per
//! region of the screen. Nothing here reads a file, parses text or formats
//! a row that is not on screen; every string that came from a file goes
//! through [`crate::sanitize`] before it becomes a span.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};

use super::app::{App, Mode, Screen};

pub mod detail;
pub mod dialog;
pub mod diff;
pub mod empty;
pub mod footer;
pub mod gate_strip;
pub mod header;
pub mod help;
pub mod replay;
pub mod runs;
pub mod table;
pub mod tabs;

pub use crate::tui::rows::time::{date_time_of, short_age, time_of};
pub use crate::tui::rows::{marks, timeline};

/// Draws the whole screen.
pub fn render(frame: &mut Frame, app: &App) {
    let area = frame.area();
    if area.width == 0 || area.height == 0 {
        return;
    }
    if app.looking_in.is_some() && app.state().seq == 0 && app.screen == Screen::Run {
        empty::render(frame, area, app);
        return;
    }
    if app.screen == Screen::RunList {
        let [list, replay_area, foot, status] = Layout::vertical([
            Constraint::Fill(1),
            Constraint::Length(u16::from(app.replay.is_some())),
            Constraint::Length(1),
            Constraint::Length(1),
        ])
        .areas(area);
        runs::render(frame, list, app);
        replay::render(frame, replay_area, app);
        footer::render(frame, foot, app);
        footer::render_status(frame, status, app);
        return;
    }
    let banner = u16::from(app.run().problem.is_some());
    let [
        head,
        banner_area,
        tab_line,
        body,
        detail_area,
        replay_area,
        foot,
        status,
    ] = Layout::vertical([
        Constraint::Length(3),
        Constraint::Length(banner),
        Constraint::Length(1),
        Constraint::Fill(3),
        Constraint::Fill(2),
        Constraint::Length(u16::from(app.replay.is_some())),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    header::render(frame, head, app);
    header::render_problem(frame, banner_area, app);
    tabs::render(frame, tab_line, app);
    tabs::render_body(frame, body, app);
    detail::render(frame, detail_area, app);
    replay::render(frame, replay_area, app);
    footer::render(frame, foot, app);
    footer::render_status(frame, status, app);
    match app.mode {
        Mode::Diff(ref pane) => diff::render(frame, area, app, pane.as_ref()),
        Mode::Dialog(_) | Mode::ConfirmQuit(_) => dialog::render(frame, area, app),
        Mode::Help(ref under) => {
            if under.is_some() {
                dialog::render(frame, area, app);
            }
            help::render(frame, area, app);
        }
        Mode::ConfirmStop(ref under) => {
            if under.is_some() {
                dialog::render(frame, area, app);
            }
        }
        Mode::Browse | Mode::Filter => {}
    }
}

/// Seconds from `at` to now (0 when `at` is in the future or not a time).
pub fn age_secs(app: &App, at: &str) -> Option<u64> {
    crate::tui::rows::query::age_secs(app.clock.now(), at)
}

/// A rectangle of at most `w` x `h` centred in `area`.
pub fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// The run's budget as spent / limit, each limit once (`usd $1.2000 /
/// $5.0000 · wall 3m 0s / 1h 0m`), when the run started with one.
pub fn budget_line(state: &crate::model::State) -> Option<String> {
    let b = crate::model::budget::from_json(state.run.as_ref()?.budget.as_ref()?);
    let lines = b.lines(state);
    (!lines.is_empty()).then(|| lines.join(" · "))
}
