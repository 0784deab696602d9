//! A terminal buffer as a picture: an SVG of monospace text on a grid, each
//! run of cells with its colours and modifiers, and the same frame as plain
//! text. No dependency: the cells are walked and the markup written here.
//!
//! Each run of text is pinned to its cells with `textLength`, so a glyph
//! from a fallback font can never push the columns after it out of line.

use std::fmt::Write;

use ratatui::buffer::{Buffer, Cell};
use ratatui::style::{Color, Modifier};

/// Width and height of one cell, and the font size, in pixels.
const CELL_W: f64 = 8.4;
const CELL_H: f64 = 18.0;
const FONT_PX: f64 = 14.0;
/// Space around the grid.
const PAD: f64 = 14.0;
/// The terminal's own background and foreground.
const BG: &str = "#1d2026";
const FG: &str = "#dcdfe4";

/// The frame as text: one line per row, trailing spaces cut, wide glyphs once.
pub fn plain_text(buf: &Buffer) -> String {
    let mut out = String::new();
    for y in 0..buf.area.height {
        let line: String = row_cells(buf, y).map(|(_, _, c)| c.symbol()).collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The frame as an SVG document.
pub fn svg_of(buf: &Buffer) -> String {
    let (cols, rows) = (f64::from(buf.area.width), f64::from(buf.area.height));
    let (w, h) = (px(cols * CELL_W + 2.0 * PAD), px(rows * CELL_H + 2.0 * PAD));
    let mut s = String::new();
    let _ = writeln!(s, r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" xml:space="preserve">"#);
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" rx="8" fill="{BG}"/>"#);
    let _ = writeln!(
        s,
        r#"<g font-family="'DejaVu Sans Mono','Menlo','Consolas',monospace" font-size="{FONT_PX}" transform="translate({PAD} {PAD})">"#
    );
    for y in 0..buf.area.height {
        let runs = runs_of_row(buf, y);
        for (x, width, fill) in backgrounds(&runs) {
            let _ = writeln!(
                s,
                r#"<rect x="{}" y="{}" width="{}" height="{CELL_H}" fill="{fill}" shape-rendering="crispEdges"/>"#,
                px(f64::from(x) * CELL_W),
                px(f64::from(y) * CELL_H),
                px(f64::from(width) * CELL_W),
            );
        }
        for r in &runs {
            write_text(&mut s, r, y);
        }
    }
    s.push_str("</g>\n</svg>\n");
    s
}

/// How a run of cells looks.
#[derive(Debug, Clone, PartialEq)]
struct Look {
    fg: String,
    bg: Option<String>,
    bold: bool,
    italic: bool,
    dim: bool,
    underline: bool,
    crossed: bool,
}

/// Cells in a row that look alike: ASCII text together, any other glyph alone.
#[derive(Debug)]
struct Run {
    x: u16,
    width: u16,
    text: String,
    look: Look,
}

/// (column, width in cells, cell) of each glyph of row `y`.
fn row_cells(buf: &Buffer, y: u16) -> impl Iterator<Item = (u16, u16, &Cell)> {
    let mut x = 0u16;
    std::iter::from_fn(move || {
        if x >= buf.area.width {
            return None;
        }
        let cell = &buf[(x, y)];
        let width = unicode_width::UnicodeWidthStr::width(cell.symbol()).clamp(1, 2) as u16;
        let at = x;
        x = x.saturating_add(width);
        Some((at, width.min(buf.area.width - at), cell))
    })
}

fn runs_of_row(buf: &Buffer, y: u16) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    for (x, width, cell) in row_cells(buf, y) {
        let look = look_of(cell);
        let sym = cell.symbol();
        let ascii = sym.is_ascii() && width == 1;
        match runs.last_mut() {
            Some(last) if ascii && last.look == look && last.text.is_ascii() && last.x + last.width == x => {
                last.text.push_str(sym);
                last.width += width;
            }
            _ => runs.push(Run { x, width, text: sym.to_string(), look }),
        }
    }
    runs
}

/// (column, width, colour) of each stretch of one background colour, across
/// text runs (one rectangle per stretch: no seams between cells).
fn backgrounds(runs: &[Run]) -> Vec<(u16, u16, &str)> {
    let mut out: Vec<(u16, u16, &str)> = Vec::new();
    for r in runs {
        let Some(bg) = r.look.bg.as_deref() else { continue };
        match out.last_mut() {
            Some((x, w, fill)) if *fill == bg && *x + *w == r.x => *w += r.width,
            _ => out.push((r.x, r.width, bg)),
        }
    }
    out
}

fn write_text(s: &mut String, r: &Run, y: u16) {
    // Spaces around the text are left to the background; inner ones stay.
    let lead = r.text.len() - r.text.trim_start_matches(' ').len();
    let body = r.text.trim_matches(' ');
    if body.is_empty() {
        return;
    }
    let cells = if r.text.is_ascii() { body.len() as f64 } else { f64::from(r.width) };
    let x = (f64::from(r.x) + lead as f64) * CELL_W;
    let mut attrs = format!(r#"x="{}" y="{}" textLength="{}" lengthAdjust="spacingAndGlyphs" fill="{}""#, px(x), px(f64::from(y) * CELL_H + CELL_H * 0.75), px(cells * CELL_W), r.look.fg);
    if r.look.bold {
        attrs.push_str(r#" font-weight="bold""#);
    }
    if r.look.italic {
        attrs.push_str(r#" font-style="italic""#);
    }
    if r.look.dim {
        attrs.push_str(r#" opacity="0.6""#);
    }
    match (r.look.underline, r.look.crossed) {
        (true, true) => attrs.push_str(r#" text-decoration="underline line-through""#),
        (true, false) => attrs.push_str(r#" text-decoration="underline""#),
        (false, true) => attrs.push_str(r#" text-decoration="line-through""#),
        (false, false) => {}
    }
    let _ = writeln!(s, "<text {attrs}>{}</text>", escape(body));
}

fn look_of(cell: &Cell) -> Look {
    let m = cell.modifier;
    let mut fg = colour(cell.fg);
    let mut bg = colour(cell.bg);
    if m.contains(Modifier::REVERSED) {
        (fg, bg) = (Some(bg.unwrap_or_else(|| BG.to_string())), Some(fg.unwrap_or_else(|| FG.to_string())));
    }
    Look {
        fg: fg.unwrap_or_else(|| FG.to_string()),
        bg,
        bold: m.contains(Modifier::BOLD),
        italic: m.contains(Modifier::ITALIC),
        dim: m.contains(Modifier::DIM),
        underline: m.contains(Modifier::UNDERLINED),
        crossed: m.contains(Modifier::CROSSED_OUT),
    }
}

/// The 16 named colours, in ANSI order.
const PALETTE: [&str; 16] = [
    "#282c34", "#e06c75", "#98c379", "#e5c07b", "#61afef", "#c678dd", "#56b6c2", "#a4abb6", // normal
    "#636a76", "#ff8791", "#b8ea95", "#f3d58f", "#8ccaff", "#e0a2f2", "#86dce6", "#ffffff", // bright
];

/// A cell colour as `#rrggbb`; `None` for the terminal's default.
fn colour(c: Color) -> Option<String> {
    let named = |i: usize| Some(PALETTE[i].to_string());
    match c {
        Color::Reset => None,
        Color::Black => named(0),
        Color::Red => named(1),
        Color::Green => named(2),
        Color::Yellow => named(3),
        Color::Blue => named(4),
        Color::Magenta => named(5),
        Color::Cyan => named(6),
        Color::Gray => named(7),
        Color::DarkGray => named(8),
        Color::LightRed => named(9),
        Color::LightGreen => named(10),
        Color::LightYellow => named(11),
        Color::LightBlue => named(12),
        Color::LightMagenta => named(13),
        Color::LightCyan => named(14),
        Color::White => named(15),
        Color::Rgb(r, g, b) => Some(format!("#{r:02x}{g:02x}{b:02x}")),
        Color::Indexed(i) => Some(indexed(i)),
    }
}

/// The xterm 256-colour table.
fn indexed(i: u8) -> String {
    match i {
        0..=15 => PALETTE[usize::from(i)].to_string(),
        16..=231 => {
            let level = |v: u8| if v == 0 { 0 } else { 55 + 40 * v };
            let n = i - 16;
            format!("#{:02x}{:02x}{:02x}", level(n / 36), level((n / 6) % 6), level(n % 6))
        }
        232..=255 => {
            let v = 8 + 10 * (i - 232);
            format!("#{v:02x}{v:02x}{v:02x}")
        }
    }
}

/// A coordinate with at most two decimals, without trailing zeros.
fn px(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c if c.is_control() => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    use ratatui::style::{Color, Modifier, Style};

    use super::*;

    fn sample() -> Buffer {
        let mut buf = Buffer::empty(Rect::new(0, 0, 8, 2));
        buf.set_string(0, 0, "a<b", Style::default().fg(Color::Red).bg(Color::Blue).add_modifier(Modifier::BOLD));
        buf.set_string(4, 0, "⚑", Style::default().fg(Color::Rgb(1, 2, 3)));
        buf.set_string(1, 1, "ok⚑ go", Style::default().add_modifier(Modifier::REVERSED));
        buf
    }

    #[test]
    fn plain_text_has_one_line_per_row_and_wide_glyphs_once() {
        assert_eq!(plain_text(&sample()), "a<b ⚑\n ok⚑ go\n");
    }

    #[test]
    fn svg_pins_each_run_to_its_cells_with_its_colours() {
        let svg = svg_of(&sample());
        assert!(svg.starts_with(r#"<svg xmlns="http://www.w3.org/2000/svg" width="95.2" height="64" viewBox="0 0 95.2 64""#), "{svg}");
        assert!(svg.contains(r##"<rect x="0" y="0" width="25.2" height="18" fill="#61afef" shape-rendering="crispEdges"/>"##), "{svg}");
        assert!(
            svg.contains(r##"<text x="0" y="13.5" textLength="25.2" lengthAdjust="spacingAndGlyphs" fill="#e06c75" font-weight="bold">a&lt;b</text>"##),
            "{svg}"
        );
        assert!(svg.contains(r##"<text x="33.6" y="13.5" textLength="8.4" lengthAdjust="spacingAndGlyphs" fill="#010203">⚑</text>"##), "{svg}");
        // Reversed: the default colours swapped; one background under the
        // three runs of the same look.
        assert!(svg.contains(r##"<rect x="8.4" y="18" width="50.4" height="18" fill="#dcdfe4" shape-rendering="crispEdges"/>"##), "{svg}");
        assert_eq!(svg.matches("<rect ").count(), 3);
        assert!(svg.contains(r##"<text x="8.4" y="31.5" textLength="16.8" lengthAdjust="spacingAndGlyphs" fill="#1d2026">ok</text>"##), "{svg}");
        assert!(svg.contains(r##"<text x="25.2" y="31.5" textLength="8.4" lengthAdjust="spacingAndGlyphs" fill="#1d2026">⚑</text>"##), "{svg}");
        assert!(svg.contains(r##"<text x="42" y="31.5" textLength="16.8" lengthAdjust="spacingAndGlyphs" fill="#1d2026">go</text>"##), "{svg}");
        assert_eq!(svg.matches("<text ").count(), 5);
        assert!(svg.ends_with("</g>\n</svg>\n"));
    }

    #[test]
    fn colours_follow_the_xterm_table() {
        assert_eq!(indexed(16), "#000000");
        assert_eq!(indexed(231), "#ffffff");
        assert_eq!(indexed(196), "#ff0000");
        assert_eq!(indexed(244), "#808080");
        assert_eq!(colour(Color::Reset), None);
    }
}
