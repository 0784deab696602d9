//! The `d` overlay: what changed between the previous iteration and the one shown.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::centered;
use crate::sanitize::sanitize_line;
use crate::tui::app::App;
use crate::tui::diff::changes;
use crate::tui::rows;
use crate::tui::theme::Tone;

/// Draws the overlay over `area`.
pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    let n = app.shown_iteration();
    let (Some(after), Some(before)) = (
        app.state().iteration(n),
        rows::previous_iteration(app.state(), n),
    ) else {
        return;
    };
    let theme = app.theme;
    let rect = centered(area, 90, 20);
    frame.render_widget(Clear, rect);
    let title = format!(
        " iteration {} → {} · any key closes ",
        before.iteration, after.iteration
    );
    let block = Block::default()
        .borders(Borders::ALL)
        .title(title)
        .border_style(theme.tone(Tone::Accent));
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let w = usize::from(inner.width);
    let list = changes(app.state(), before.iteration, after.iteration);
    let mut lines: Vec<Line> = list
        .iter()
        .take(usize::from(inner.height))
        .map(|c| {
            let (sym, tone) = match c.better {
                Some(true) => ("✓", Tone::Good),
                Some(false) => ("✗", Tone::Bad),
                None => ("·", Tone::Normal),
            };
            Line::styled(
                sanitize_line(&format!("{sym} {}", c.text), w),
                theme.tone(tone),
            )
        })
        .collect();
    if lines.is_empty() {
        lines.push(Line::styled("nothing changed", theme.tone(Tone::Muted)));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
