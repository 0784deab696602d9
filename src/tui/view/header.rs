//! The header: run title, status word, iteration, age of the last event
//! (a warning past `stale_after`), the agent running and for how long,
//! the human gates waiting, the gate strip, and the journal problem
//! banner. The status line keeps what matters on a narrow terminal (80
//! columns): the gates waiting on a person, a stale journal, the agent
//! running, then the rest, shortened before anything is left out.

use std::path::Path;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{age_secs, gate_strip, marks, short_age, time_of};
use crate::model::Next;
use crate::sanitize::{sanitize_line, width};
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
    let status = Span::styled(status.text(), theme.tone(status.tone));
    let plain = ratatui::style::Style::default();
    let mut segs: Vec<Seg> = Vec::new();
    let shown = app.shown_iteration();
    let iter = state.iteration_number();
    if shown == iter {
        segs.push(Seg::new(6, format!("iter {iter}"), None, plain));
    } else {
        segs.push(Seg::new(
            6,
            format!("iter {iter} (showing {shown})"),
            Some(format!("iter {iter}→{shown}")),
            theme.tone(Tone::Accent),
        ));
    }
    if let Some(a) = state.running_agent() {
        let secs = age_secs(app, &a.started_at);
        segs.push(Seg::new(
            7,
            agents::running_text(a, secs),
            Some(agents::running_short(a, secs)),
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
        segs.push(Seg::new(
            4,
            text,
            Some("review".into()),
            theme.tone(Tone::Accent),
        ));
    }
    if app.replay.is_some() {
        segs.push(Seg::new(8, "replay".into(), None, theme.tone(Tone::Accent)));
    } else if let Some(at) = &state.last_event_at {
        let secs = age_secs(app, at).unwrap_or(0);
        if secs >= app.config.stale_after.as_secs() && state.ended.is_none() {
            segs.push(Seg::new(
                8,
                format!("⚠ no event for {}", short_age(secs)),
                Some(format!("⚠ {}", short_age(secs))),
                theme.tone(Tone::Warn),
            ));
        } else {
            segs.push(Seg::new(
                2,
                format!("last event {} ago", short_age(secs)),
                Some(format!("{} ago", short_age(secs))),
                plain,
            ));
        }
    }
    if state.ended.is_none()
        && let Some((d, _)) = crate::model::rules::pending_limit(state)
    {
        // A usage limit nobody answered yet: the engine waits it out or
        // asks a person.
        let until = d
            .limited
            .as_ref()
            .and_then(|l| l.until.as_deref())
            .map_or_else(|| "no reset time".to_string(), time_of);
        segs.push(Seg::new(
            7,
            format!(
                "⏸ {} #{} usage limit · waiting until {until}",
                d.started.role, d.started.dispatch
            ),
            Some(format!("⏸ limit {until}")),
            theme.tone(Tone::Warn),
        ));
    }
    if let Some(line) = super::budget_line(state) {
        let short = line.split(" · ").next().unwrap_or_default().to_string();
        segs.push(Seg::new(5, format!("budget {line}"), Some(short), plain));
    }
    if let Some(g) = &state.current_gate {
        // Not a time when the journal says otherwise: then it is its text.
        let since = sanitize_line(&time_of(&g.since), 32);
        segs.push(Seg::new(
            3,
            format!("GATE {} running since {since}", g.gate.number()),
            Some(format!("G{} since {since}", g.gate.number())),
            plain,
        ));
    }
    if let Some(note) = &app.source_note {
        segs.push(Seg::new(
            5,
            format!("⟳ {note}"),
            Some(format!("⟳ {}", sanitize_line(note, 24))),
            theme.tone(Tone::Warn),
        ));
    }
    let waiting = state.open_human_gates().count();
    if waiting > 0 {
        let key = app
            .config
            .keymap
            .label(crate::tui::action::Action::NextHumanGate);
        segs.push(Seg::new(
            9,
            format!("⚑ {waiting} waiting on you ({key})"),
            Some(format!("⚑ {waiting} ({key})")),
            theme.tone(Tone::Human),
        ));
    }
    let spans = fit(status, segs, w);
    let lines = vec![
        title,
        Line::from(spans),
        gate_strip::line(app, state, area.width),
    ];
    frame.render_widget(Paragraph::new(lines), area);
}

/// A part of the status line: kept in full while the line has room,
/// shortened, then left out, lowest `keep` first.
struct Seg {
    keep: u8,
    long: String,
    short: Option<String>,
    style: ratatui::style::Style,
}

impl Seg {
    fn new(keep: u8, long: String, short: Option<String>, style: ratatui::style::Style) -> Seg {
        Seg {
            keep,
            long,
            short,
            style,
        }
    }
}

/// The status line in `w` columns: the status word, then the parts,
/// each in full if they all fit; else the least important are shortened
/// first, then the separators narrowed, then the least important left out.
fn fit(status: Span<'static>, segs: Vec<Seg>, w: usize) -> Vec<Span<'static>> {
    let mut shown: Vec<(Seg, bool)> = segs.into_iter().map(|s| (s, false)).collect();
    let text_of = |(s, short): &(Seg, bool)| -> String {
        if *short {
            s.short.clone().unwrap_or_else(|| s.long.clone())
        } else {
            s.long.clone()
        }
    };
    let total = |shown: &[(Seg, bool)], sep: &str| -> usize {
        let parts: usize = shown.iter().map(|p| width(&text_of(p))).sum();
        // " status" + "  " before the first part + a separator between the others.
        1 + width(&status.content)
            + parts
            + shown.len().min(1) * 2
            + shown.len().saturating_sub(1) * width(sep)
    };
    let mut sep = "  ·  ";
    let mut order: Vec<usize> = (0..shown.len()).collect();
    order.sort_by_key(|&i| shown[i].0.keep);
    for &i in &order {
        if total(&shown, sep) <= w {
            break;
        }
        if shown[i].0.short.is_some() {
            shown[i].1 = true;
        }
    }
    if total(&shown, sep) > w {
        sep = " · ";
    }
    while total(&shown, sep) > w && !shown.is_empty() {
        let lowest = (0..shown.len())
            .min_by_key(|&i| shown[i].0.keep)
            .unwrap_or(0);
        shown.remove(lowest);
    }
    let mut spans = vec![Span::raw(" "), status];
    for (i, p) in shown.iter().enumerate() {
        spans.push(Span::raw(if i == 0 { "  " } else { sep }));
        spans.push(Span::styled(text_of(p), p.0.style));
    }
    spans
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
