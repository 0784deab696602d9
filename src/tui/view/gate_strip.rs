//! The gate strip: GATE 0/1/2, rounds used of the cap as ●○○, and the last
//! verdict (word, symbol, tone) or "running".

use ratatui::text::{Line, Span};

use super::marks;
use crate::model::{GateName, State};
use crate::tui::app::App;
use crate::tui::theme::Tone;

/// The strip as one line; below 100 columns gates are written `G0`, `G1`, `G2`.
pub fn line(app: &App, state: &State, width: u16) -> Line<'static> {
    let theme = app.theme;
    let mut spans = vec![Span::raw(" ")];
    for &g in GateName::ALL {
        let wide = width >= 100;
        if g != GateName::Floor {
            spans.push(Span::styled(
                if wide { " ▸ " } else { "  " },
                theme.tone(Tone::Muted),
            ));
        }
        let name = if wide {
            format!("GATE {} {g} ", g.number())
        } else {
            format!("G{} ", g.number())
        };
        spans.push(Span::raw(name));
        spans.push(Span::raw(format!("{} ", marks::dots(state, g))));
        let running = state.current_gate.as_ref().is_some_and(|c| c.gate == g);
        let m = match state.last_round(g) {
            _ if running => marks::Mark {
                symbol: "▸",
                word: "running".into(),
                tone: Tone::Accent,
            },
            Some(r) => marks::verdict(&r.verdict),
            None => marks::none(),
        };
        spans.push(Span::styled(m.text(), theme.tone(m.tone)));
        if state.last_round(g).is_some_and(|r| r.degraded) && !running {
            spans.push(Span::styled(" ?DEGRADED", theme.tone(Tone::Warn)));
        }
    }
    Line::from(spans)
}
