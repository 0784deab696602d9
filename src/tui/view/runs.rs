//! The run list (several runs watched, or folders searched for runs): a
//! title with the counts, a notice when some runs are polled or folders
//! cannot be searched, and one line per run in the list's order (waiting
//! on a person first, the oldest wait on top).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use super::table;
use crate::sanitize::sanitize_line;
use crate::tui::app::App;
use crate::tui::rows::fleet::{self, COLUMNS, Group};

/// Draws the list.
pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    if area.height == 0 {
        return;
    }
    let waiting = app
        .runs
        .iter()
        .filter(|r| fleet::group(r) == Group::Waiting)
        .count();
    let title = format!(
        " loopwatch · {} runs · {waiting} waiting on you · enter opens one · n the oldest gate",
        app.runs.len()
    );
    let bar = Line::styled(
        sanitize_line(&title, usize::from(area.width)),
        app.theme.bar(),
    )
    .style(app.theme.bar());
    frame.render_widget(Paragraph::new(bar), Rect { height: 1, ..area });
    let mut y = area.y + 1;
    if let Some(n) = app.fleet_notice()
        && area.height > 2
    {
        let line = Line::styled(
            sanitize_line(n, usize::from(area.width)),
            app.theme.tone(crate::tui::theme::Tone::Warn),
        );
        frame.render_widget(
            Paragraph::new(line),
            Rect {
                y,
                height: 1,
                ..area
            },
        );
        y += 1;
    }
    let body = Rect {
        y,
        height: area.height - (y - area.y),
        ..area
    };
    if app.runs.is_empty() {
        let msg = " no .pipeline found yet: the folders are searched again every few seconds";
        frame.render_widget(
            Paragraph::new(Line::styled(
                sanitize_line(msg, usize::from(area.width)),
                app.theme.tone(crate::tui::theme::Tone::Muted),
            )),
            body,
        );
        return;
    }
    let order = app.run_rows();
    table::draw(
        frame,
        body,
        app,
        COLUMNS,
        order.len(),
        app.run_selected,
        |i| fleet::cells(app, order[i]),
    );
}
