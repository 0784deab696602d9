//! The screen shown while there is no `.pipeline` yet: where the app looks,
//! and that it waits for one to appear.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use super::centered;
use crate::sanitize::sanitize_line;
use crate::tui::action::Action;
use crate::tui::app::App;
use crate::tui::theme::Tone;

/// Draws the empty screen.
pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    let w = usize::from(area.width);
    let path = app
        .looking_in
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let lines = vec![
        Line::styled(sanitize_line("loopwatch", w), app.theme.tone(Tone::Accent)),
        Line::raw(""),
        Line::raw(sanitize_line(
            &format!("no pipeline yet: looking in {path}"),
            w,
        )),
        Line::styled(
            sanitize_line(
                "waiting for one to appear (it is created when a run starts)",
                w,
            ),
            app.theme.tone(Tone::Muted),
        ),
        Line::raw(""),
        Line::styled(
            sanitize_line(
                &format!(
                    "{} quit · {} help",
                    app.config.keymap.label(Action::Quit),
                    app.config.keymap.label(Action::Help)
                ),
                w,
            ),
            app.theme.tone(Tone::Muted),
        ),
    ];
    let rect = centered(area, area.width, 6);
    frame.render_widget(Paragraph::new(lines).centered(), rect);
}
