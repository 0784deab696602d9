//! The detail pane: the selected row in full (criterion with the round's
//! floor-guard findings, finding with claim, quoted evidence, note and the
//! tail of its repro log, a gate with its decision, an event raw, a log's tail).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph};

use super::marks;
use crate::model::GateName;
use crate::parse::agent_stream::{Entry, EntryKind};
use crate::sanitize::{sanitize_bytes, sanitize_line, width};
use crate::tui::app::{App, LogView};
use crate::tui::rows::{self, RowKey};
use crate::tui::rows::{criteria, findings, human_gates, security};
use crate::tui::theme::Tone;

/// Draws the pane.
pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    if area.height == 0 {
        return;
    }
    let block = Block::default()
        .borders(Borders::TOP)
        .title(" detail ")
        .border_style(app.theme.tone(Tone::Muted));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let w = usize::from(inner.width);
    let h = usize::from(inner.height);
    if w == 0 || h == 0 {
        return;
    }
    let (texts, log) = match app.selected_row() {
        Some(key) => content(app, key),
        None => (
            vec![(
                "select a row to see it in full here".to_string(),
                Tone::Muted,
            )],
            None,
        ),
    };
    let mut lines = wrap(app, &texts, w, h);
    let room = h.saturating_sub(lines.len());
    match log {
        Some(Body::Raw(bytes)) => lines.extend(tail(bytes, w, room).into_iter().map(Line::raw)),
        Some(Body::Transcript(entries)) => lines.extend(transcript_tail(app, entries, w, room)),
        None => {}
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

type Texts = Vec<(String, Tone)>;

/// What a log row shows under its heading.
enum Body<'a> {
    /// The tail of a log, line by line.
    Raw(&'a [u8]),
    /// An agent CLI's log, as its transcript.
    Transcript(&'a [Entry]),
}

fn content(app: &App, key: RowKey) -> (Texts, Option<Body<'_>>) {
    let mut t: Texts = Vec::new();
    let log_path = match key {
        RowKey::Criterion(i) => criterion(app, i, &mut t),
        RowKey::Finding(i) => finding(app, i, &mut t),
        RowKey::Lane(i) => lane(app, i, &mut t),
        RowKey::Blocking(i) => blocking(app, i, &mut t),
        RowKey::Reported(i) => reported(app, i, &mut t),
        RowKey::Gate(i) => gate(app, i, &mut t),
        RowKey::Event(i) => event(app, i, &mut t),
        RowKey::Log(i) => log(app, i, &mut t),
    };
    let body = log_path.and_then(|p| log_body(app, p, &mut t));
    (t, body)
}

/// A criterion: its marks at GATE 0 and 1, the proof asked for, floor-guard.
fn criterion(app: &App, i: usize, t: &mut Texts) -> Option<String> {
    let c = criteria::criterion(app, i)?;
    t.push((format!("criterion {}: {}", c.id, c.text()), Tone::Accent));
    let (g0, g1) = (c.floor_mark(), c.conformity_mark());
    t.push((format!("GATE 0 {}  {}", g0.text(), c.evidence()), g0.tone));
    t.push((format!("GATE 1 {}  {}", g1.text(), c.detail()), g1.tone));
    if let Some(c) = rows::round(app, GateName::Conformity) {
        for (label, v) in [("PROOF", &c.proof), ("FLOOR", &c.floor)] {
            if let Some(v) = v {
                t.push((format!("{label}: {v}"), Tone::Muted));
            }
        }
    }
    if let Some(fg) = rows::shown(app).and_then(|it| it.floor_guard.as_ref()) {
        let tone = if fg.counted > 0 {
            Tone::Bad
        } else {
            Tone::Good
        };
        t.push((
            format!(
                "floor-guard against {}: {} counted, {} waived",
                fg.base, fg.counted, fg.waived
            ),
            tone,
        ));
        for f in &fg.findings {
            let w = if f.waived { " [waived]" } else { "" };
            t.push((
                format!("  {} {}:{} {}{w}", f.kind, f.path, f.line, f.snippet),
                Tone::Normal,
            ));
        }
    }
    None
}

/// A finding: its claim, verdict and verify-by-test result; its test's log.
fn finding(app: &App, i: usize, t: &mut Texts) -> Option<String> {
    let f = rows::shown(app).and_then(|it| it.findings.get(i))?;
    let m = marks::finding(f.verdict);
    t.push((
        format!("finding {} · {} · {}", f.id, f.severity, findings::place(f)),
        Tone::Accent,
    ));
    t.push((format!("claim: {}", f.claim), Tone::Normal));
    if let Some(r) = crate::model::ledger::raised_again_of(f) {
        t.push((
            format!("{} · not verified, asked or sent back again", r.sentence()),
            Tone::Accent,
        ));
    }
    let rounds = findings::seen(app, i);
    if rounds.contains(' ') {
        t.push((format!("seen in review rounds: {rounds}"), Tone::Muted));
    }
    t.push((format!("verdict: {}", m.text()), m.tone));
    if !f.evidence.is_empty() {
        t.push((format!("  > {}", f.evidence), Tone::Normal));
    }
    if !f.note.is_empty() {
        t.push((format!("note: {}", f.note), Tone::Warn));
    }
    if let Some(v) = findings::verification(app, f) {
        let m = marks::outcome(v.result, findings::is_red(app, f));
        t.push((
            format!("verify-by-test: {} {} {}", m.text(), v.test_ref, v.note),
            m.tone,
        ));
        if !v.log.is_empty() {
            return Some(v.log.clone());
        }
    }
    None
}

/// A finding's lane while the finding verifier works.
fn lane(app: &App, i: usize, t: &mut Texts) -> Option<String> {
    let l = findings::lane(app, i)?;
    let m = marks::lane(l);
    t.push((
        format!(
            "finding {} · {} · lane {} · attempt {}",
            l.finding,
            findings::lane_field(l, "severity"),
            l.index + 1,
            l.attempt
        ),
        Tone::Accent,
    ));
    t.push((
        format!("claim: {}", findings::lane_field(l, "claim")),
        Tone::Normal,
    ));
    t.push((format!("lane: {}", m.text()), m.tone));
    if let Some(r) = &l.reason {
        t.push((format!("reason: {r}"), Tone::Warn));
    }
    if !l.evidence.is_empty() {
        t.push((format!("  > {}", l.evidence), Tone::Normal));
    }
    if !l.note.is_empty() {
        t.push((format!("note: {}", l.note), Tone::Warn));
    }
    for n in &l.normalized {
        t.push((format!("normalised: {n}"), Tone::Muted));
    }
    None
}

/// A blocking row of GATE 2.
fn blocking(app: &App, i: usize, t: &mut Texts) -> Option<String> {
    let r = security::blocking(app, i)?;
    t.push(("✗ BLOCKING".to_string(), Tone::Bad));
    let fields = [
        ("severity", &r.severity),
        ("rule", &r.rule),
        ("location", &r.location),
        ("why", &r.why),
        ("hint", &r.hint),
    ];
    push_fields(t, &fields);
    None
}

/// A reported row of GATE 2.
fn reported(app: &App, i: usize, t: &mut Texts) -> Option<String> {
    let r = security::reported(app, i)?;
    t.push(("· REPORTED".to_string(), Tone::Muted));
    let fields = [
        ("severity", &r.severity),
        ("rule", &r.rule),
        ("location", &r.location),
    ];
    push_fields(t, &fields);
    None
}

/// A human gate: its request, and its decision or expiry, or how to decide.
fn gate(app: &App, i: usize, t: &mut Texts) -> Option<String> {
    let g = app.state().human_gates.get(i)?;
    let m = human_gates::status_mark(app, i);
    t.push((
        format!("{} · {} · {}", g.request.id, g.request.kind, m.text()),
        m.tone,
    ));
    t.push((g.request.summary.clone(), Tone::Normal));
    let opts: Vec<&str> = g.request.options.iter().map(|d| d.as_str()).collect();
    t.push((
        format!(
            "subject: {} · options: {} · asked {}",
            g.request.subject,
            opts.join(", "),
            g.requested_at
        ),
        Tone::Muted,
    ));
    match (&g.decision, &g.expired) {
        (Some(d), _) => {
            t.push((
                format!(
                    "decided {} by {} at {}",
                    d.decision.decision, d.decision.by, d.at
                ),
                Tone::Good,
            ));
            t.push((format!("reason: {}", d.decision.reason), Tone::Normal));
            if let Some(note) = d.decision.developer_note() {
                t.push((
                    format!("note to the developer: {}", shown_note(note)),
                    Tone::Accent,
                ));
            }
            t.push((
                format!("evidence {}", d.decision.evidence_hash),
                Tone::Muted,
            ));
        }
        (None, Some(x)) => t.push((
            format!(
                "EXPIRED at {}: nobody decided within {}, {} applied",
                x.at, x.after, x.action
            ),
            Tone::Warn,
        )),
        (None, None) if app.replay.is_none() => {
            let expiry = g.request.expires.as_ref().map_or(String::new(), |r| {
                format!(" · expires after {} ({})", r.after, r.action)
            });
            t.push((format!("enter: decide{expiry}"), Tone::Human))
        }
        (None, None) => {}
    }
    None
}

/// An event of the timeline, as one line.
fn event(app: &App, i: usize, t: &mut Texts) -> Option<String> {
    let ev = app.run().events.get(i)?;
    t.push((ev.to_line(), Tone::Normal));
    None
}

/// A log of the Logs tab.
fn log(app: &App, i: usize, t: &mut Texts) -> Option<String> {
    let e = app.log_entries.get(i)?;
    t.push((format!("{} · {}", e.path, e.label), Tone::Accent));
    Some(e.path.clone())
}

/// The heading of a row's log and its body, once read.
fn log_body<'a>(app: &'a App, p: String, t: &mut Texts) -> Option<Body<'a>> {
    match app.run().logs.get(&p) {
        Some(LogView::Loaded(b)) => {
            t.push((
                format!("── tail of {p} · o: all of it in $PAGER ──"),
                Tone::Muted,
            ));
            return Some(Body::Raw(b.as_slice()));
        }
        Some(LogView::Transcript(e)) => {
            t.push((
                format!("── transcript of {p} · o: all of it in $PAGER ──"),
                Tone::Muted,
            ));
            return Some(Body::Transcript(e.as_slice()));
        }
        Some(LogView::Loading) => t.push((format!("reading {p}…"), Tone::Muted)),
        Some(LogView::Failed(e)) => t.push((format!("✗ {p}: {e}"), Tone::Bad)),
        None => t.push((format!("enter: read {p}"), Tone::Muted)),
    }
    None
}

/// `name: value` lines of the fields that are not empty.
fn push_fields(t: &mut Texts, fields: &[(&str, &String)]) {
    for (name, value) in fields {
        if !value.is_empty() {
            t.push((format!("{name}: {value}"), Tone::Normal));
        }
    }
}

/// A note as far as a screen can show it (a megabyte note costs no more).
fn shown_note(note: &str) -> String {
    note.chars().take(4096).collect()
}

/// Wraps texts to `w` columns, at most `h` lines; work bounded by w × h.
fn wrap(app: &App, texts: &Texts, w: usize, h: usize) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for (text, tone) in texts {
        let style = app.theme.tone(*tone);
        let clean = sanitize_line(text, w.saturating_mul(h));
        let mut cur = String::new();
        let mut cw = 0;
        for c in clean.chars() {
            let cwid = width(c.encode_utf8(&mut [0; 4]));
            if cw + cwid > w && !cur.is_empty() {
                out.push(Line::styled(std::mem::take(&mut cur), style));
                cw = 0;
                if out.len() >= h {
                    return out;
                }
            }
            cur.push(c);
            cw += cwid;
        }
        out.push(Line::styled(cur, style));
        if out.len() >= h {
            return out;
        }
    }
    out
}

/// The colour of a transcript entry.
fn entry_tone(kind: EntryKind) -> Tone {
    match kind {
        EntryKind::Message => Tone::Normal,
        EntryKind::Call => Tone::Accent,
        EntryKind::Failed | EntryKind::OutcomeFailed => Tone::Bad,
        EntryKind::Notice => Tone::Warn,
        EntryKind::Outcome => Tone::Good,
        EntryKind::Meta | EntryKind::Thinking | EntryKind::Output | EntryKind::Raw => Tone::Muted,
    }
}

/// The last `room` screen lines of a transcript: each entry's mark, its
/// lines wrapped at `w` (continuations indented under the text), newest
/// last. Only the entries that reach the screen are wrapped.
fn transcript_tail(app: &App, entries: &[Entry], w: usize, room: usize) -> Vec<Line<'static>> {
    let mut out: Vec<Line<'static>> = Vec::new();
    if room == 0 || w == 0 {
        return out;
    }
    for e in entries.iter().rev() {
        let style = app.theme.tone(entry_tone(e.kind));
        let mark = e.mark();
        let indent = width(mark).min(w.saturating_sub(1));
        let mut mine: Vec<Line<'static>> = Vec::new();
        for (i, text) in e.text.split('\n').enumerate() {
            let lead = if i == 0 {
                mark.to_string()
            } else {
                " ".repeat(indent)
            };
            let clean = sanitize_line(text, w.saturating_mul(room));
            let mut cur = lead;
            let mut cw = width(&cur);
            // Right after a wrap: the spaces that ended the line are dropped.
            let mut wrapped = false;
            for c in clean.chars() {
                let cwid = width(c.encode_utf8(&mut [0; 4]));
                if cw + cwid > w && cw > indent {
                    // At the last space when the line has one past its
                    // indent: words stay whole.
                    let rest = match cur.rfind(' ') {
                        Some(at) if at > indent && c != ' ' => cur.split_off(at + 1),
                        _ => String::new(),
                    };
                    mine.push(Line::styled(std::mem::take(&mut cur), style));
                    cur = format!("{}{rest}", " ".repeat(indent));
                    cw = width(&cur);
                    wrapped = rest.is_empty();
                }
                if c == ' ' && wrapped {
                    continue;
                }
                wrapped = false;
                cur.push(c);
                cw += cwid;
            }
            mine.push(Line::styled(cur, style));
        }
        // Newest last: this entry goes before what is already kept.
        let keep = room - out.len();
        let start = mine.len().saturating_sub(keep);
        mine.drain(..start);
        mine.append(&mut out);
        out = mine;
        if out.len() >= room {
            break;
        }
    }
    out
}

/// The last `n` lines of a log, each sanitised and cut to `w`.
pub fn tail(bytes: &[u8], w: usize, n: usize) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let mut lines: Vec<String> = body
        .rsplit(|b| *b == b'\n')
        .take(n)
        .map(|l| sanitize_bytes(l.strip_suffix(b"\r").unwrap_or(l), w))
        .collect();
    lines.reverse();
    lines
}
