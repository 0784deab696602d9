//! The picture of a run in the HTML report: one inline SVG (no script, no
//! external reference), one lane per gate plus one for the person, a bar
//! per gate round from its start to its verdict, and each wait on a person
//! shaded across every lane so the time lost to waiting shows at a glance.

use std::fmt::Write;

use super::Span;
use super::html::esc;

const LANES: [(&str, &str); 4] = [
    ("floor", "GATE 0 floor"),
    ("conformity", "GATE 1 conformity"),
    ("security", "GATE 2 security"),
    ("person", "waits on a person"),
];
const LEFT: f64 = 140.0;
const WIDTH: f64 = 760.0;
const LANE: f64 = 30.0;
const TOP: f64 = 8.0;

/// The SVG of the spans, or `None` when there is nothing timed to draw.
pub fn picture(spans: &[Span]) -> Option<String> {
    if spans.is_empty() {
        return None;
    }
    let total = spans.iter().map(|s| s.end).fold(0.0_f64, f64::max).max(1.0);
    let x = |t: f64| LEFT + (t.clamp(0.0, total) / total) * WIDTH;
    let lanes_h = LANE * LANES.len() as f64;
    let height = TOP + lanes_h + 28.0;
    let mut o = String::new();
    let _ = write!(
        o,
        "<svg class=\"run-picture\" role=\"img\" viewBox=\"0 0 {w} {height}\" width=\"100%\" \
         aria-label=\"gate rounds and waits on a person over {d}\">\n<title>The run over time: \
         gate rounds by lane, waits on a person shaded</title>\n",
        w = LEFT + WIDTH + 40.0,
        d = duration(total)
    );
    for (i, (_, name)) in LANES.iter().enumerate() {
        let y = TOP + LANE * i as f64;
        let _ = writeln!(
            o,
            "<text x=\"4\" y=\"{:.1}\" font-size=\"12\" fill=\"currentColor\">{}</text>\
             <line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#8884\"/>",
            y + LANE * 0.62,
            esc(name),
            LEFT + WIDTH,
            y + LANE,
            y + LANE
        );
    }
    for s in spans.iter().filter(|s| s.lane == "person") {
        let (x0, x1) = (x(s.start), x(s.end));
        let _ = writeln!(
            o,
            "<rect class=\"wait-shade\" x=\"{x0:.1}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{lanes_h}\" \
             fill=\"#f0a020\" fill-opacity=\"0.18\"/>",
            (x1 - x0).max(1.0)
        );
    }
    for s in spans {
        let Some(lane) = LANES.iter().position(|(l, _)| *l == s.lane) else {
            continue;
        };
        let (x0, x1) = (x(s.start), x(s.end));
        let y = TOP + LANE * lane as f64 + 5.0;
        let fill = match s.outcome.as_str() {
            "pass" => "#2e9d4f",
            "fail" => "#d0453a",
            "decided" => "#c07a10",
            "expired" => "#7a5cc0",
            "open" => "#f0a020",
            _ => "#8a8a8a",
        };
        let _ = writeln!(
            o,
            "<rect class=\"span {outcome}\" x=\"{x0:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" \
             rx=\"2\" fill=\"{fill}\"><title>{label}: {outcome}, {from} to {to}</title></rect>",
            (x1 - x0).max(2.0),
            LANE - 10.0,
            outcome = esc(&s.outcome),
            label = esc(&s.label),
            from = duration(s.start),
            to = duration(s.end),
        );
    }
    for k in 0..=4 {
        let t = total * f64::from(k) / 4.0;
        let _ = writeln!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" fill=\"currentColor\" text-anchor=\"middle\">{}</text>",
            x(t),
            TOP + lanes_h + 18.0,
            duration(t)
        );
    }
    o.push_str("</svg>\n");
    o.push_str(
        "<p class=\"legend\">Each bar is a gate round from its start to its verdict \
         (green passed, red failed, grey still running; hover for the round and times); \
         waits on a person are shaded across every lane (dark once decided, light while open).</p>\n",
    );
    Some(o)
}

/// `1h 02m`, `12m 05s` or `42s`.
fn duration(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    match (s / 3600, (s % 3600) / 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, m, sec) => format!("{m}m {sec:02}s"),
        (h, m, _) => format!("{h}h {m:02}m"),
    }
}
