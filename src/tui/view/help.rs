//! The help overlay, generated from the keymap in force: every action with
//! its keys and help text, then the decision dialog's keys.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::centered;
use crate::model::{Decision, HumanGateKind};
use crate::sanitize::sanitize_line;
use crate::tui::action::Action;
use crate::tui::app::App;
use crate::tui::theme::Tone;

/// Draws the overlay over `area`.
pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    let theme = app.theme;
    let rect = centered(area, 100, 40);
    frame.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(" help · any key closes ")
        .border_style(theme.tone(Tone::Accent));
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    // Each decision with the key it has in every kind that offers it.
    let opts: Vec<String> = Decision::ALL
        .iter()
        .filter_map(|d| {
            let key = HumanGateKind::ALL.iter().find_map(|k| k.choice(*d))?.key;
            Some(format!("{key} {}", d.label()))
        })
        .collect();
    let dialog_help = format!(
        "decision dialog: {}; ctrl-s confirms, ctrl-n a note to the developer, ctrl-r refreshes the evidence (when it changed since the gate opened), tab options, esc cancels",
        opts.join(", ")
    );
    let footer_rows = 3usize;
    let height = usize::from(inner.height);
    // Two columns when one does not fit (80x24): every binding stays visible.
    let ncols = if Action::ALL.len() + footer_rows > height {
        2
    } else {
        1
    };
    let per_col = Action::ALL.len().div_ceil(ncols);
    let col_w = usize::from(inner.width) / ncols;
    let kw = if ncols == 2 { 10 } else { 16 };
    let tw = col_w.saturating_sub(kw + 2);
    let mut lines = Vec::new();
    for r in 0..per_col {
        let mut spans = Vec::new();
        for c in 0..ncols {
            let Some(a) = Action::ALL.get(c * per_col + r) else {
                continue;
            };
            let keys = sanitize_line(&app.config.keymap.label(*a), kw);
            let help = sanitize_line(a.help(), tw);
            spans.push(Span::styled(
                format!("{keys:<kw$} "),
                theme.tone(Tone::Accent),
            ));
            spans.push(Span::raw(format!("{help:<tw$} ")));
        }
        lines.push(Line::from(spans));
    }
    lines.push(Line::raw(""));
    let wrap_w = usize::from(inner.width).max(1);
    let chars: Vec<char> = dialog_help.chars().collect();
    for chunk in chars.chunks(wrap_w) {
        lines.push(Line::styled(
            chunk.iter().collect::<String>(),
            theme.tone(Tone::Muted),
        ));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
