//! A virtualised table: only the rows that fit are formatted, every cell is
//! sanitised and cut to its column with a `…`, and wider terminals get more
//! columns.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::sanitize::{sanitize_line, width};
use crate::tui::app::App;
use crate::tui::rows::cells::{Cell, Column};
use crate::tui::rows::{cells_of, columns};
use crate::tui::theme::Tone;

/// Draws the rows of the current tab in `area`, selection kept in view.
pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    let cols = columns(app.tab());
    let rows = &app.rows;
    let selected = app.selected_index();
    draw(frame, area, app, cols, rows.len(), selected, |i| {
        cells_of(app, rows[i])
    });
}

/// Draws any table: `len` rows, `cells(i)` called only for rows in view.
pub fn draw(
    frame: &mut Frame,
    area: Rect,
    app: &App,
    cols: &[Column],
    len: usize,
    selected: usize,
    cells: impl Fn(usize) -> Vec<Cell>,
) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let theme = app.theme;
    let shown: Vec<usize> = (0..cols.len())
        .filter(|i| area.width >= cols[*i].from)
        .collect();
    let widths = layout(cols, &shown, area.width);
    let mut lines = Vec::with_capacity(usize::from(area.height));
    let head: Vec<Cell> = shown
        .iter()
        .map(|i| Cell::toned(cols[*i].title, Tone::Muted))
        .collect();
    lines.push(line(
        &head,
        &widths,
        false,
        theme.tone(Tone::Muted).add_modifier(Modifier::BOLD),
        app,
    ));
    let body = usize::from(area.height).saturating_sub(1);
    if len == 0 {
        lines.push(Line::styled(
            "  (nothing here yet)",
            theme.tone(Tone::Muted),
        ));
    }
    let offset = if body > 0 && selected >= body {
        selected + 1 - body
    } else {
        0
    };
    for i in offset..len.min(offset + body) {
        let all = cells(i);
        let picked: Vec<Cell> = shown
            .iter()
            .map(|c| all.get(*c).cloned().unwrap_or_else(|| Cell::plain("")))
            .collect();
        lines.push(line(&picked, &widths, i == selected, Style::default(), app));
    }
    frame.render_widget(Paragraph::new(lines), area);
}

fn layout(cols: &[Column], shown: &[usize], total: u16) -> Vec<usize> {
    let total = usize::from(total).saturating_sub(1); // the selection marker
    let fixed: usize = shown.iter().map(|i| usize::from(cols[*i].width) + 1).sum();
    let fills = shown.iter().filter(|i| cols[**i].width == 0).count();
    let rest = total.saturating_sub(fixed + fills);
    let share = rest.checked_div(fills).unwrap_or(0);
    let mut extra = if fills > 0 { rest % fills } else { 0 };
    shown
        .iter()
        .map(|i| {
            let w = usize::from(cols[*i].width);
            if w > 0 {
                w
            } else {
                let e = usize::from(extra > 0);
                extra = extra.saturating_sub(1);
                (share + e).max(1)
            }
        })
        .collect()
}

fn line(cells: &[Cell], widths: &[usize], selected: bool, base: Style, app: &App) -> Line<'static> {
    let theme = app.theme;
    let mut spans = Vec::with_capacity(cells.len() * 2 + 1);
    spans.push(Span::raw(if selected { "›" } else { " " }));
    for (cell, w) in cells.iter().zip(widths) {
        let text = sanitize_line(&cell.text, *w);
        let pad = w.saturating_sub(width(&text));
        let style = if cell.tone == Tone::Normal {
            base
        } else {
            base.patch(theme.tone(cell.tone))
        };
        spans.push(Span::styled(text, style));
        spans.push(Span::raw(" ".repeat(pad + 1)));
    }
    let l = Line::from(spans);
    if selected {
        l.style(theme.selected())
    } else {
        l
    }
}
