//! Colours by meaning. A [`Tone`] says what a piece of text means (good,
//! bad, warning, waiting on a person...); the theme turns it into a style
//! for a dark or a light background, or into no colour at all. Meaning is
//! never carried by colour alone: every verdict also has a word and a symbol.

use ratatui::style::{Color, Modifier, Style};

use super::config::ThemeKind;

pub use super::tone::Tone;

/// A theme in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// Which palette.
    pub kind: ThemeKind,
}

impl Theme {
    /// The theme of a resolved kind.
    pub fn new(kind: ThemeKind) -> Self {
        Theme { kind }
    }

    /// The style of a tone.
    pub fn tone(&self, tone: Tone) -> Style {
        let base = Style::default();
        let bold = matches!(tone, Tone::Bad | Tone::Human | Tone::Accent);
        let base = if bold {
            base.add_modifier(Modifier::BOLD)
        } else {
            base
        };
        let fg = match (self.kind, tone) {
            (ThemeKind::NoColor, _) | (_, Tone::Normal) => None,
            (ThemeKind::Dark, Tone::Good) => Some(Color::LightGreen),
            (ThemeKind::Dark, Tone::Bad) => Some(Color::LightRed),
            (ThemeKind::Dark, Tone::Warn) => Some(Color::Yellow),
            (ThemeKind::Dark, Tone::Human) => Some(Color::LightMagenta),
            (ThemeKind::Dark, Tone::Muted) => Some(Color::Gray),
            (ThemeKind::Dark, Tone::Accent) => Some(Color::LightCyan),
            (ThemeKind::Light, Tone::Good) => Some(Color::Green),
            (ThemeKind::Light, Tone::Bad) => Some(Color::Red),
            (ThemeKind::Light, Tone::Warn) => Some(Color::Rgb(0x8a, 0x5a, 0x00)),
            (ThemeKind::Light, Tone::Human) => Some(Color::Magenta),
            (ThemeKind::Light, Tone::Muted) => Some(Color::DarkGray),
            (ThemeKind::Light, Tone::Accent) => Some(Color::Blue),
        };
        match fg {
            Some(c) => base.fg(c),
            None if tone == Tone::Muted => base.add_modifier(Modifier::DIM),
            None => base,
        }
    }

    /// The selected row: reversed, which reads on every background and without colour.
    pub fn selected(&self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }

    /// Bars (title, tab line, footer).
    pub fn bar(&self) -> Style {
        match self.kind {
            ThemeKind::NoColor => Style::default().add_modifier(Modifier::BOLD),
            ThemeKind::Dark => Style::default().fg(Color::Black).bg(Color::Cyan),
            ThemeKind::Light => Style::default().fg(Color::White).bg(Color::Blue),
        }
    }
}
