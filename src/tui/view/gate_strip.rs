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
    for g in GateName::ALL {
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
        spans.push(Span::raw(format!("{} ", dots(state, g))));
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

/// Rounds used of the cap: `●●○`, with `+k` past the cap (`used/cap` for big caps).
pub fn dots(state: &State, g: GateName) -> String {
    let cap = state.caps.get(g) as usize;
    let running = state
        .current_gate
        .as_ref()
        .filter(|c| c.gate == g)
        .map(|c| c.round);
    let used = running
        .or(state.last_round(g).map(|r| r.round))
        .unwrap_or(0) as usize;
    if cap > 8 {
        return format!("{used}/{cap}");
    }
    let mut s = "●".repeat(used.min(cap));
    s.push_str(&"○".repeat(cap.saturating_sub(used)));
    if used > cap {
        s.push_str(&format!("+{}", used - cap));
    }
    s
}
