//! The replay bar: `REPLAY  event k/N  <time>  iter i`.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use super::date_time_of;
use crate::sanitize::sanitize_line;
use crate::tui::action::Action;
use crate::tui::app::App;

/// Draws the bar when in replay.
pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    let Some(r) = &app.replay else { return };
    let k = &app.config.keymap;
    let text = format!(
        " REPLAY  event {}/{}  {}  iter {}   {} {} step · {} {} iteration · {} first · {} live",
        r.event,
        r.total,
        date_time_of(&r.at),
        r.iteration,
        k.label(Action::ReplayBack),
        k.label(Action::ReplayForward),
        k.label(Action::PrevIteration),
        k.label(Action::NextIteration),
        k.label(Action::ReplayFirst),
        k.label(Action::ReplayLive),
    );
    let text = match &app.source_note {
        Some(note) => format!("{text}   · {note}"),
        None => text,
    };
    let line = Line::styled(
        sanitize_line(&text, usize::from(area.width)),
        app.theme.bar(),
    )
    .style(app.theme.bar());
    frame.render_widget(Paragraph::new(line), area);
}
