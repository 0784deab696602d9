//! The header: run title, status word, iteration, age of the last event
//! (a warning past `stale_after`), the agent running and for how long,
//! the human gates waiting, the gate strip,
//! and the journal problem banner.

use std::path::Path;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{age_secs, gate_strip, marks, short_age, time_of};
use crate::model::Next;
use crate::sanitize::sanitize_line;
use crate::tui::app::App;
use crate::tui::rows::agents;
use crate::tui::theme::Tone;

/// Draws the three header lines.
pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    let w = usize::from(area.width);
    let theme = app.theme;
    let state = app.state();
    let title = match &state.run {
        Some(run) => {
            let contract = Path::new(&run.contract)
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            format!(
                " loopwatch · {} {} · contract {}",
                run.flow, run.id, contract
            )
        }
        None => " loopwatch · no run started yet".to_string(),
    };
    let title = Line::styled(sanitize_line(&title, w), theme.bar()).style(theme.bar());

    let status = marks::run_status(state);
    let mut spans = vec![
        Span::raw(" "),
        Span::styled(status.text(), theme.tone(status.tone)),
    ];
    spans.push(Span::raw(format!("  iter {}", state.iteration_number())));
    if app.shown_iteration() != state.iteration_number() {
        spans.push(Span::styled(
            format!(" (showing {})", app.shown_iteration()),
            theme.tone(Tone::Accent),
        ));
    }
    if let Some(a) = state.running_agent() {
        spans.push(Span::raw("  ·  "));
        spans.push(Span::styled(
            agents::running_text(a, age_secs(app, &a.started_at)),
            theme.tone(Tone::Accent),
        ));
    }
    if let (None, Next::Review { step, .. }) = (&state.ended, &state.next) {
        // The review stage in progress: which step, and the lanes' count
        // while the finding verifier runs.
        let step = step.as_str();
        let mut text = format!("review: {step}");
        if let Some(p) = state
            .review_iterations
            .last()
            .and_then(|it| crate::tui::rows::findings::progress(it))
            && let Some(first) = p.split(" · ").next()
        {
            let counts = first.strip_prefix("finding verifier: ").unwrap_or(first);
            text = format!("review: {counts}");
        }
        spans.push(Span::raw("  ·  "));
        spans.push(Span::styled(text, theme.tone(Tone::Accent)));
    }
    if app.replay.is_some() {
        spans.push(Span::styled("  ·  replay", theme.tone(Tone::Accent)));
    } else if let Some(at) = &state.last_event_at {
        let secs = age_secs(app, at).unwrap_or(0);
        if secs >= app.config.stale_after.as_secs() && state.ended.is_none() {
            spans.push(Span::raw("  ·  "));
            spans.push(Span::styled(
                format!("⚠ no event for {}", short_age(secs)),
                theme.tone(Tone::Warn),
            ));
        } else {
            spans.push(Span::raw(format!(
                "  ·  last event {} ago",
                short_age(secs)
            )));
        }
    }
    if let Some(g) = &state.current_gate {
        spans.push(Span::raw(format!(
            "  ·  GATE {} running since {}",
            g.gate.number(),
            // Not a time when the journal says otherwise: then it is its text.
            sanitize_line(&time_of(&g.since), 32)
        )));
    }
    if let Some(note) = &app.source_note {
        spans.push(Span::raw("  ·  "));
        spans.push(Span::styled(format!("⟳ {note}"), theme.tone(Tone::Warn)));
    }
    let waiting = state.open_human_gates().count();
    if waiting > 0 {
        let key = app
            .config
            .keymap
            .label(crate::tui::action::Action::NextHumanGate);
        spans.push(Span::raw("  ·  "));
        spans.push(Span::styled(
            format!("⚑ {waiting} waiting on you ({key})"),
            theme.tone(Tone::Human),
        ));
    }
    let lines = vec![
        title,
        Line::from(spans),
        gate_strip::line(app, state, area.width),
    ];
    frame.render_widget(Paragraph::new(lines), area);
}

/// Draws the journal problem banner (file:line:column: message · partial since).
pub fn render_problem(frame: &mut Frame, area: Rect, app: &App) {
    let Some(p) = &app.run().problem else { return };
    let mut text = format!(" ⚠ {}", p.file.display());
    if let Some(l) = p.line {
        text.push_str(&format!(":{l}"));
        if let Some(c) = p.column {
            text.push_str(&format!(":{c}"));
        }
    }
    text.push_str(&format!(": {}", p.message));
    if let Some(since) = &p.partial_since {
        text.push_str(&format!(" · journal partial since {}", time_of(since)));
    }
    let line = Line::styled(
        sanitize_line(&text, usize::from(area.width)),
        app.theme.tone(Tone::Bad),
    );
    frame.render_widget(Paragraph::new(line), area);
}
