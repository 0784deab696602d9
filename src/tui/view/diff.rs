//! The `d` overlay: what changed between the previous iteration and the one
//! shown: the verdict changes, then the code (file list, hunks; added and
//! removed lines coloured and marked `+` / `-`), scrolled and searched in
//! the pane the app holds. Nothing is computed here but the layout.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::centered;
use crate::sanitize::sanitize_line;
use crate::tui::app::App;
use crate::tui::code_pane::{CodeLineKind, CodePane, CodeState};
use crate::tui::diff::changes;
use crate::tui::rows;
use crate::tui::theme::Tone;

/// Draws the overlay over `area`.
pub fn render(frame: &mut Frame, area: Rect, app: &App, pane: &CodePane) {
    let n = app.shown_iteration();
    let (Some(after), Some(before)) = (
        app.state().iteration(n),
        rows::previous_iteration(app.state(), n),
    ) else {
        return;
    };
    let theme = app.theme;
    let rect = centered(area, 110, area.height.saturating_sub(2).max(20));
    frame.render_widget(Clear, rect);
    let title = format!(
        " iteration {} → {} · ↑↓ pgup pgdn scroll · / search · n next · esc closes ",
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
    let height = usize::from(inner.height);
    // The verdict changes take at most a third of the height; the code the rest.
    let room = (height / 3).max(1);
    let mut lines: Vec<Line> = list
        .iter()
        .take(room)
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
    let heading = format!(
        "code changes, {} → iteration {}",
        if pane.from == 0 {
            "the run's base".to_string()
        } else {
            format!("iteration {}", pane.from)
        },
        pane.to
    );
    lines.push(Line::styled(
        sanitize_line(&heading, w),
        theme.tone(Tone::Accent),
    ));
    let footer = match (&pane.typing, &pane.message) {
        (Some(t), _) => Some((format!("search: {t}▏"), Tone::Accent)),
        (None, Some(m)) => Some((m.clone(), Tone::Warn)),
        (None, None) => None,
    };
    let body = height
        .saturating_sub(lines.len())
        .saturating_sub(usize::from(footer.is_some()));
    match &pane.state {
        CodeState::Loading => lines.push(Line::styled(
            "loading the code changes…",
            theme.tone(Tone::Muted),
        )),
        CodeState::Unavailable(why) => lines.push(Line::styled(
            sanitize_line(&format!("not available: {why}"), w),
            theme.tone(Tone::Muted),
        )),
        CodeState::Ready(code) => {
            for l in code.iter().skip(pane.scroll).take(body) {
                let tone = match l.kind {
                    CodeLineKind::Added => Tone::Good,
                    CodeLineKind::Removed => Tone::Bad,
                    CodeLineKind::Hunk | CodeLineKind::Heading => Tone::Accent,
                    CodeLineKind::File => Tone::Normal,
                    CodeLineKind::Plain => Tone::Muted,
                };
                lines.push(Line::styled(sanitize_line(&l.text, w), theme.tone(tone)));
            }
        }
    }
    if let Some((text, tone)) = footer {
        while lines.len() + 1 < height {
            lines.push(Line::raw(""));
        }
        lines.push(Line::styled(sanitize_line(&text, w), theme.tone(tone)));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
