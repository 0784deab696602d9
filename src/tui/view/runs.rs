//! The run list (several runs watched): one line per run with status,
//! iteration, gate strip and ⚑ count, runs waiting on a person first.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use super::gate_strip;
use super::marks;
use super::table;
use crate::sanitize::sanitize_line;
use crate::tui::app::App;
use crate::tui::rows;
use crate::tui::rows::cells::{Cell, Column, col, wide};
use crate::tui::theme::Tone;

const COLUMNS: &[Column] = &[
    col("⚑", 3),
    col("status", 16),
    col("iter", 4),
    col("gates", 18),
    col("run", 0),
    wide("pipeline", 0, 130),
];

/// Draws the list.
pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    if area.height == 0 {
        return;
    }
    let title = format!(" loopwatch · {} runs · enter opens one", app.runs.len());
    let bar = Line::styled(
        sanitize_line(&title, usize::from(area.width)),
        app.theme.bar(),
    )
    .style(app.theme.bar());
    frame.render_widget(Paragraph::new(bar), Rect { height: 1, ..area });
    let body = Rect {
        y: area.y + 1,
        height: area.height - 1,
        ..area
    };
    let order = rows::run_order(app);
    table::draw(
        frame,
        body,
        app,
        COLUMNS,
        order.len(),
        app.run_selected,
        |i| {
            let run = &app.runs[order[i]];
            let s = &run.state;
            let open = s.open_human_gates().count();
            let status = marks::run_status(s);
            let strip: String = crate::model::GateName::ALL
                .iter()
                .map(|g| {
                    let v = s
                        .last_round(*g)
                        .map_or_else(marks::none, |r| marks::verdict(&r.verdict));
                    format!("{} {} ", gate_strip::dots(s, *g), v.symbol)
                })
                .collect();
            let name = s.run.as_ref().map_or_else(
                || "(no run yet)".to_string(),
                |r| format!("{} {}", r.flow, r.id),
            );
            vec![
                if open > 0 {
                    Cell::toned(format!("⚑{open}"), Tone::Human)
                } else {
                    Cell::plain("")
                },
                Cell::mark(&status),
                Cell::plain(s.iteration_number().to_string()),
                Cell::plain(strip),
                Cell::plain(name),
                Cell::toned(run.pipeline.display().to_string(), Tone::Muted),
            ]
        },
    );
}
