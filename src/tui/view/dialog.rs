//! The decision dialog as drawn: evidence (as built, wrapped), the options
//! as named buttons with their keys, the reason field, the note to the
//! developer (once `ctrl-n` reached it or it holds text), whether the
//! evidence changed since the gate opened, and the dialog's message
//! (reason required, saving…, NOT SAVED, decided elsewhere).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::centered;
use crate::sanitize::{sanitize_line, width};
use crate::tui::app::App;
use crate::tui::dialog::{Dialog, Focus, Freshness, Phase};
use crate::tui::theme::Tone;

/// Draws the open dialog over `area`.
pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    let Some(d) = app.dialog() else { return };
    let theme = app.theme;
    let rect = centered(
        area,
        area.width.saturating_sub(4).max(20),
        area.height.saturating_sub(2).max(5),
    );
    frame.render_widget(Clear, rect);
    let title = sanitize_line(
        &format!(" ⚑ decide {} · {} ", d.id, d.kind),
        usize::from(rect.width).saturating_sub(2),
    );
    let block = Block::default()
        .borders(Borders::ALL)
        .title(title)
        .border_style(theme.tone(Tone::Human));
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let w = usize::from(inner.width);
    let h = usize::from(inner.height);
    if w == 0 || h == 0 {
        return;
    }
    let mut bottom: Vec<Line> = Vec::new();
    // Options as buttons, one a line, each with what it does (the rules'
    // words). Keys typed in the first moments are dropped (they were meant
    // for the list): the options say so until they count.
    let armed = d.armed(app.clock.now());
    bottom.push(Line::raw(if armed {
        "options:"
    } else {
        "options (a moment):"
    }));
    for o in &d.options {
        let label = format!("[{}] {}", d.option_key(*o), o.label());
        let style = if !armed {
            theme.tone(Tone::Muted)
        } else if d.chosen == Some(*o) {
            theme.tone(Tone::Human).add_modifier(Modifier::REVERSED)
        } else if d.focus == Focus::Options {
            theme.tone(Tone::Accent)
        } else {
            theme.tone(Tone::Normal)
        };
        let words = d.option_words(*o);
        let room = w.saturating_sub(width(&label) + 5);
        bottom.push(Line::from(vec![
            Span::raw("  "),
            Span::styled(label, style),
            Span::raw(" — "),
            Span::raw(sanitize_line(&words, room)),
        ]));
    }
    // Reason field: the end of the text, so the cursor stays in view.
    let cursor = if d.focus == Focus::Reason { "▏" } else { "" };
    let room = w.saturating_sub(9);
    let shown = tail_fit(&d.reason, room);
    let rs = if d.focus == Focus::Reason {
        theme.tone(Tone::Accent)
    } else {
        theme.tone(Tone::Normal)
    };
    bottom.push(Line::from(vec![
        Span::styled("reason: ", rs),
        Span::raw(format!("{shown}{cursor}")),
    ]));
    // The note to the developer: drawn once it has the focus or a text.
    if d.focus == Focus::Note || !d.note.is_empty() {
        const LABEL: &str = "note to the developer: ";
        let cursor = if d.focus == Focus::Note { "▏" } else { "" };
        let shown = tail_fit(&d.note, w.saturating_sub(LABEL.len() + 1));
        let ns = if d.focus == Focus::Note {
            theme.tone(Tone::Accent)
        } else {
            theme.tone(Tone::Normal)
        };
        bottom.push(Line::from(vec![
            Span::styled(LABEL, ns),
            Span::raw(format!("{shown}{cursor}")),
        ]));
    }
    let (msg, tone) = match &d.phase {
        Phase::Editing => (d.message.clone().unwrap_or_default(), Tone::Warn),
        Phase::Saving => ("saving…".to_string(), Tone::Accent),
        Phase::Failed(e) => (format!("NOT SAVED: {e} · ctrl-s retries"), Tone::Bad),
        Phase::DecidedElsewhere(r) => (
            format!(
                "decided elsewhere: {} by {} at {}: {} · esc closes",
                r.decision.decision, r.decision.by, r.at, r.decision.reason
            ),
            Tone::Human,
        ),
        Phase::Expired(x) => (
            format!(
                "EXPIRED at {} (nobody decided within {}): {} applied · esc closes",
                x.at, x.after, x.action
            ),
            Tone::Warn,
        ),
    };
    if let Some(a) = &d.approvals {
        bottom.push(Line::styled(sanitize_line(a, w), theme.tone(Tone::Human)));
    }
    if let Some((text, tone)) = freshness(d) {
        bottom.push(Line::styled(sanitize_line(&text, w), theme.tone(tone)));
    }
    bottom.push(Line::styled(sanitize_line(&msg, w), theme.tone(tone)));
    bottom.push(Line::styled(
        sanitize_line(
            "ctrl-s confirms · ctrl-n note · ctrl-r refresh · tab options · esc cancels · ↑↓ pgup pgdn scroll",
            w,
        ),
        theme.tone(Tone::Muted),
    ));
    let ev_h = h.saturating_sub(bottom.len() + 1);
    let mut lines: Vec<Line> = Vec::new();
    for text in d.evidence.iter().skip(d.scroll) {
        for piece in wrap(text, w) {
            if lines.len() >= ev_h {
                break;
            }
            lines.push(Line::raw(piece));
        }
    }
    let rest = d.evidence.len().saturating_sub(d.scroll);
    if lines.len() >= ev_h && rest > 0 && ev_h > 0 {
        lines.truncate(ev_h.saturating_sub(1));
        lines.push(Line::styled(
            sanitize_line("… more below (↓)", w),
            theme.tone(Tone::Muted),
        ));
    }
    while lines.len() < ev_h {
        lines.push(Line::raw(""));
    }
    lines.push(Line::raw(""));
    lines.extend(bottom);
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The line saying how the evidence shown stands against what is there
/// now, when there is something to say.
fn freshness(d: &Dialog) -> Option<(String, Tone)> {
    if matches!(d.phase, Phase::DecidedElsewhere(_) | Phase::Expired(_)) {
        return None;
    }
    match &d.freshness {
        // The check made on opening is said only when it finds a change.
        Freshness::Checking { apply: true } => {
            Some(("refreshing the evidence…".into(), Tone::Muted))
        }
        Freshness::Changed(what) => Some((
            format!(
                "CHANGED since the gate opened: {} · ctrl-r refreshes",
                what.join("; ")
            ),
            Tone::Warn,
        )),
        Freshness::Current if d.refreshed => Some((
            "refreshed: the evidence as it is now (saved with the decision)".into(),
            Tone::Accent,
        )),
        Freshness::Unknown | Freshness::Checking { apply: false } | Freshness::Current => None,
    }
}

/// Splits sanitised text into pieces of at most `w` columns.
fn wrap(text: &str, w: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut cw = 0;
    for c in text.chars() {
        let cwid = width(c.encode_utf8(&mut [0; 4]));
        if cw + cwid > w && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
            cw = 0;
        }
        cur.push(c);
        cw += cwid;
    }
    out.push(cur);
    out
}

/// The end of `text` that fits in `w` columns, with `…` in front when cut.
fn tail_fit(text: &str, w: usize) -> String {
    let clean = sanitize_line(text, usize::MAX);
    if width(&clean) <= w {
        return clean;
    }
    let mut out: Vec<char> = Vec::new();
    let mut cw = 1;
    for c in clean.chars().rev() {
        let cwid = width(c.encode_utf8(&mut [0; 4]));
        if cw + cwid > w {
            break;
        }
        out.push(c);
        cw += cwid;
    }
    out.push('…');
    out.into_iter().rev().collect()
}
