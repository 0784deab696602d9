//! The tab line (`[1] Criteria … [4] Gates ⚑1 …`) and the body of the
//! current tab, under its context lines (the Gates tab's: the agents'
//! tokens and cost).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::table;
use crate::sanitize::sanitize_line;
use crate::tui::app::{App, Tab};
use crate::tui::rows::{agents, security};
use crate::tui::theme::Tone;

/// Draws the tab line.
pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    let theme = app.theme;
    let mut spans = Vec::new();
    for (n, tab) in Tab::ALL.iter().enumerate() {
        let mut label = format!(" [{}] {}", n + 1, tab.title());
        if *tab == Tab::Gates {
            let open = app.state().open_human_gates().count();
            if open > 0 {
                label.push_str(&format!(" ⚑{open}"));
            }
        }
        label.push(' ');
        let style = if *tab == app.tab() {
            theme.bar().add_modifier(Modifier::BOLD)
        } else if *tab == Tab::Gates && app.state().open_human_gates().next().is_some() {
            theme.tone(Tone::Human)
        } else {
            theme.tone(Tone::Muted)
        };
        spans.push(Span::styled(label, style));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// Draws the body of the current tab: a context line when the tab has
/// one, then the table.
pub fn render_body(frame: &mut Frame, area: Rect, app: &App) {
    let theme = app.theme;
    let context: Vec<(String, Tone)> = match app.tab() {
        Tab::Security => security::banner(app).into_iter().collect(),
        Tab::Findings => findings_context(app),
        Tab::Gates => gates_context(app),
        _ => Vec::new(),
    };
    let mut table_area = area;
    // Context lines only when the table keeps its header and a row.
    let n = u16::try_from(context.len()).unwrap_or(u16::MAX);
    if n > 0 && area.height > n.saturating_add(1) {
        let lines: Vec<Line> = context
            .into_iter()
            .map(|(text, tone)| {
                Line::styled(
                    sanitize_line(&format!(" {text}"), usize::from(area.width)),
                    theme.tone(tone),
                )
            })
            .collect();
        frame.render_widget(Paragraph::new(lines), Rect { height: n, ..area });
        table_area = Rect {
            y: area.y + n,
            height: area.height - n,
            ..area
        };
    }
    table::render(frame, table_area, app);
}

/// The Gates tab's context: the agents' tokens and cost, the budget's
/// spent / limit when the run has one, and the failing rows per round of
/// each gate that had two rounds or more (`GATE 1: 5 → 2 → 2 NOT-MET ·
/// fixed … · new … · spend …`).
fn gates_context(app: &App) -> Vec<(String, Tone)> {
    let state = app.state();
    let mut out: Vec<(String, Tone)> = agents::usage_lines(state, app.shown_iteration())
        .into_iter()
        .map(|l| (l, Tone::Muted))
        .collect();
    if let Some(line) = super::budget_line(state) {
        out.push((format!("budget · {line}"), Tone::Accent));
    }
    // A gate converges (or not) from its second round on.
    for g in crate::model::rules::progress::convergence(state) {
        if g.rounds.len() > 1 {
            out.push((g.summary(), Tone::Muted));
        }
    }
    out
}

/// The Findings tab's context: the finding verifier's progress while its
/// lanes run, and the iteration's verify-by-test summary once there is one.
fn findings_context(app: &App) -> Vec<(String, Tone)> {
    let Some(it) = crate::tui::rows::shown(app) else {
        return Vec::new();
    };
    let lanes = crate::tui::rows::findings::progress(it).map(|p| (p, Tone::Accent));
    let vbt = it.verify_by_test.as_ref().map(|s| {
        (
            format!(
                "verify-by-test: {} attempted · {} confirmed · {} downgraded · {} inconclusive · {} past cap · {} red test(s){}",
                s.attempted,
                s.confirmed,
                s.downgraded,
                s.inconclusive,
                s.cap_exceeded,
                s.red_tests.len(),
                if s.timed_out { " · timed out" } else { "" }
            ),
            Tone::Muted,
        )
    });
    lanes.into_iter().chain(vbt).collect()
}
