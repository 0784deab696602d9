//! The footer (main keys, from the keymap in force) and the status line
//! (filter being typed, last message, config warnings, quit question).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::sanitize::sanitize_line;
use crate::tui::action::Action;
use crate::tui::app::{App, Mode, Screen, Tab};
use crate::tui::theme::Tone;

/// Draws the key line.
pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    let k = &app.config.keymap;
    let mut items: Vec<(String, &str)> = vec![(k.label(Action::Help), "help")];
    match app.screen {
        Screen::RunList => {
            items.push((k.label(Action::Open), "open"));
            items.push((k.label(Action::NextHumanGate), "next waiting"));
        }
        Screen::Run => {
            items.push((k.label(Action::Filter), "filter"));
            items.push((k.label(Action::NextHumanGate), "next gate"));
            items.push((
                format!(
                    "{} {}",
                    k.label(Action::PrevIteration),
                    k.label(Action::NextIteration)
                ),
                "iteration",
            ));
            items.push((k.label(Action::Open), "open"));
            if app.tab() == Tab::Findings {
                items.push((k.label(Action::Sort), "sort"));
            }
            if app.runs.len() > 1 {
                items.push((k.label(Action::Back), "runs"));
            }
        }
    }
    items.push((k.label(Action::Quit), "quit"));
    let theme = app.theme;
    let mut spans = vec![Span::raw(" ")];
    for (key, what) in items {
        spans.push(Span::styled(key, theme.tone(Tone::Accent)));
        spans.push(Span::raw(format!(" {what}  ")));
    }
    frame.render_widget(
        Paragraph::new(Line::from(spans)).style(theme.tone(Tone::Muted)),
        area,
    );
}

/// Draws the status line.
pub fn render_status(frame: &mut Frame, area: Rect, app: &App) {
    let w = usize::from(area.width);
    let theme = app.theme;
    let (text, tone) = if matches!(app.mode, Mode::Filter) {
        (
            format!(" / {}▏  (enter keeps, esc clears)", app.filter),
            Tone::Accent,
        )
    } else if let Some(d) = app.digest() {
        (format!(" {d}"), Tone::Human)
    } else if matches!(app.mode, Mode::ConfirmQuit(_)) {
        (
            format!(" {}", app.status.as_deref().unwrap_or("quit? (y/n)")),
            Tone::Warn,
        )
    } else if matches!(app.mode, Mode::ConfirmStop(_)) {
        (
            format!(
                " {}",
                app.status
                    .as_deref()
                    .unwrap_or(crate::tui::app::STOP_QUESTION)
            ),
            Tone::Warn,
        )
    } else if let Some(s) = &app.status {
        (format!(" {s}"), Tone::Normal)
    } else if let Some(w) = app.warnings.first() {
        let more = if app.warnings.len() > 1 {
            format!(" (+{} more)", app.warnings.len() - 1)
        } else {
            String::new()
        };
        (format!(" ⚠ config: {w}{more}"), Tone::Warn)
    } else if !app.filter.is_empty() {
        (
            format!(
                " filter: {}  ({} rows; esc clears)",
                app.filter,
                app.rows.len()
            ),
            Tone::Accent,
        )
    } else if app.tab() == Tab::Findings && app.screen == Screen::Run {
        // While the finding verifier runs, its lanes are listed in the
        // findings' order whatever the sort.
        let lanes = crate::tui::rows::shown(app)
            .and_then(crate::tui::rows::findings::live_lanes)
            .is_some();
        if lanes {
            (" lanes in the findings' order".to_string(), Tone::Muted)
        } else {
            (format!(" sorted by {}", app.sort.name()), Tone::Muted)
        }
    } else {
        (String::new(), Tone::Normal)
    };
    frame.render_widget(
        Paragraph::new(Line::styled(sanitize_line(&text, w), theme.tone(tone))),
        area,
    );
}
