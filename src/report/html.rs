//! The HTML form of the report: one file, inline CSS and SVG, no script,
//! no network. Every piece of text goes through [`esc`]: secrets scrubbed,
//! control characters made visible, markup escaped.

use super::run_events::{dollars, num};
use super::{IterationCode, Report};

/// Lines of hunks shown per file before the rest is left to `loopwatch diff`.
const MAX_HUNK_LINES: usize = 400;

/// Renders the page.
pub fn render(r: &Report) -> String {
    let mut b = String::new();
    b.push_str("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
    b.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n");
    b.push_str(&format!("<title>Run report — {}</title>\n", esc(&r.run)));
    b.push_str("<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b;background:#fff}\
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd}\
table{border-collapse:collapse;width:100%}td,th{border:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top}\
.status{font-weight:bold;padding:.1rem .4rem;border-radius:.2rem;background:#eee}\
pre{margin:0;white-space:pre-wrap;font-size:13px}td code{word-break:break-all}.legend{font-size:13px;color:#666}.add{background:#e6ffec}.del{background:#ffebe9}\
.hunk{color:#0550ae}td.met,td.pass{color:#1a7f37}td.fail{color:#cf222e}\
@media (prefers-color-scheme:dark){body{background:#111;color:#eee}td,th{border-color:#444}.status{background:#333}\
.add{background:#12361f}.del{background:#4a1714}.hunk{color:#7cb7ff}}</style>\n");
    b.push_str("</head><body>\n");
    b.push_str(&format!("<h1>Run report — {}</h1>\n", esc(&r.run)));
    b.push_str(&format!(
        "<p>flow {} · contract {}</p>\n<p>Final status: <span class=\"status\" id=\"final-status\">{}</span></p>\n",
        esc(&r.flow),
        esc(&r.contract),
        esc(&r.final_status)
    ));
    if let Some(n) = &r.status_note {
        b.push_str(&format!("<p>{}</p>\n", esc(n)));
    }
    if !r.open_gates.is_empty() {
        b.push_str(&format!(
            "<p>Waiting on a person: {}</p>\n",
            esc(&r.open_gates.join(", "))
        ));
    }
    b.push_str("<h2>Iterations</h2>\n");
    for it in &r.iterations {
        b.push_str(&format!(
            "<h3>Iteration {} ({})</h3>\n<ul>\n",
            it.iteration,
            esc(&it.trigger)
        ));
        for g in &it.gates {
            b.push_str(&format!("<li>{}</li>\n", esc(g)));
        }
        b.push_str("</ul>\n");
    }
    b.push_str("<h2>The run over time</h2>\n");
    match super::svg::picture(&r.timeline) {
        Some(svg) => b.push_str(&svg),
        None => b.push_str("<p>no timed events</p>\n"),
    }
    criteria(&mut b, r);
    findings(&mut b, r);
    b.push_str("<h2>Abandonments</h2>\n");
    list(
        &mut b,
        r.abandonments.iter().map(|a| {
            format!(
                "criterion {}: {} — decision: {}",
                a.criterion, a.reason, a.decision
            )
        }),
    );
    b.push_str("<h2>Deferred findings (for a human eye)</h2>\n");
    list(
        &mut b,
        r.deferred.iter().map(|f| {
            format!(
                "{} (iteration {}): {} — {}",
                f.id, f.iteration, f.title, f.reason
            )
        }),
    );
    if !r.unreadable_triage.is_empty() {
        b.push_str(
            "<p>Triage files that could not be read (their deferred findings are missing):</p>\n",
        );
        list(
            &mut b,
            r.unreadable_triage
                .iter()
                .map(|u| format!("{} (iteration {}): {}", u.file, u.iteration, u.reason)),
        );
    }
    if !heading(&mut b, "Human decisions", r.decisions.is_empty(), "none") {
        b.push_str("<table><tr><th>gate</th><th>kind</th><th>subject</th><th>decision</th><th>by</th><th>when</th><th>why</th><th>evidence</th></tr>\n");
        for d in &r.decisions {
            b.push_str(&format!(
                "<tr class=\"decision\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>\n",
                esc(&d.id),
                esc(&d.kind),
                esc(&d.subject),
                esc(&d.decision),
                esc(&d.by),
                esc(&d.at),
                esc(&d.reason),
                esc(&d.evidence_hash)
            ));
            if let Some(note) = &d.note {
                b.push_str(&format!(
                    "<tr class=\"note\"><td colspan=\"8\">note to the developer: {}</td></tr>\n",
                    esc(note)
                ));
            }
            let mut shown = format!("asked at {}: {}", d.requested_at, d.summary);
            for line in &d.evidence {
                shown.push('\n');
                shown.push_str(line);
            }
            b.push_str(&format!(
                "<tr class=\"evidence\"><td colspan=\"8\"><pre>{}</pre></td></tr>\n",
                esc(&shown)
            ));
        }
        b.push_str("</table>\n");
    }
    if !r.expirations.is_empty() {
        b.push_str("<h2>Expired gates (nobody decided)</h2>\n");
        b.push_str("<table><tr><th>gate</th><th>kind</th><th>subject</th><th>outcome</th><th>after</th><th>when</th><th>asked</th></tr>\n");
        for x in &r.expirations {
            b.push_str(&format!(
                "<tr class=\"expired\"><td>{}</td><td>{}</td><td>{}</td><td>EXPIRED: {} applied</td><td>{}</td><td>{}</td><td>{}: {}</td></tr>\n",
                esc(&x.id),
                esc(&x.kind),
                esc(&x.subject),
                esc(&x.action),
                esc(&x.after),
                esc(&x.at),
                esc(&x.requested_at),
                esc(&x.summary)
            ));
        }
        b.push_str("</table>\n");
    }
    code(&mut b, &r.code);
    convergence(&mut b, r);
    usage(&mut b, r);
    b.push_str("<h2>Red tests kept</h2>\n");
    list(
        &mut b,
        r.red_tests
            .iter()
            .map(|t| format!("{} ({}) proves {}", t.test_ref, t.file, t.issue)),
    );
    b.push_str("</body></html>\n");
    b
}

/// A section's heading, with `none` under it when the section is `empty`;
/// returns `empty`.
fn heading(b: &mut String, title: &str, empty: bool, none: &str) -> bool {
    b.push_str(&format!("<h2>{title}</h2>\n"));
    if empty {
        b.push_str(&format!("<p>{none}</p>\n"));
    }
    empty
}

fn list(b: &mut String, items: impl Iterator<Item = String>) {
    let items: Vec<String> = items.collect();
    if items.is_empty() {
        b.push_str("<p>none</p>\n");
        return;
    }
    b.push_str("<ul>\n");
    for i in items {
        b.push_str(&format!("<li>{}</li>\n", esc(&i)));
    }
    b.push_str("</ul>\n");
}

/// Criteria tables, one per iteration.
fn criteria(b: &mut String, r: &Report) {
    heading(b, "Criteria", r.criteria.is_empty(), "none");
    let cell = |v: &Option<String>| match v {
        Some(s) => format!("<td class=\"{}\">{}</td>", class_of(s), esc(s)),
        None => "<td>—</td>".to_string(),
    };
    for t in &r.criteria {
        b.push_str(&format!(
            "<h3>Iteration {}</h3>\n<table class=\"criteria\"><tr><th>criterion</th><th>text</th><th>GATE 0</th><th>GATE 0 evidence</th><th>GATE 1</th><th>GATE 1 detail</th></tr>\n",
            t.iteration
        ));
        for c in &t.rows {
            b.push_str(&format!(
                "<tr class=\"criterion\"><td>{}</td><td>{}</td>{}<td>{}</td>{}<td>{}</td></tr>\n",
                esc(&c.id),
                esc(&c.text),
                cell(&c.floor),
                esc(&c.floor_evidence),
                cell(&c.conformity),
                esc(&c.conformity_detail)
            ));
        }
        b.push_str("</table>\n");
    }
}

/// A finding's note, with its ledger's word (raised again, the rounds
/// it was seen in) when it has one.
fn html_note(f: &super::FindingLine) -> String {
    let mut note = f.note.clone();
    if let Some(r) = f
        .raised_again
        .as_ref()
        .filter(|_| !f.note.starts_with("raised again"))
    {
        note = if note.is_empty() {
            r.clone()
        } else {
            format!("{note} — {r}")
        };
    }
    if !f.rounds.is_empty() {
        let rounds: Vec<String> = f.rounds.iter().map(u32::to_string).collect();
        note.push_str(&format!(" — seen in review rounds {}", rounds.join(", ")));
    }
    note
}

/// The findings table.
fn findings(b: &mut String, r: &Report) {
    if heading(b, "Findings", r.findings.is_empty(), "none") {
        return;
    }
    b.push_str("<table class=\"findings\"><tr><th>iteration</th><th>finding</th><th>severity</th><th>location</th><th>claim</th><th>verdict</th><th>note</th><th>verify-by-test</th><th>repro test</th><th>triage</th></tr>\n");
    let opt = |v: &Option<String>| v.as_deref().map_or_else(|| "—".to_string(), esc);
    for f in &r.findings {
        b.push_str(&format!(
            "<tr class=\"finding\"><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            f.iteration,
            esc(&f.id),
            esc(&f.severity),
            esc(&f.location),
            esc(&f.claim),
            esc(&f.verdict),
            esc(&html_note(f)),
            opt(&f.verify_by_test),
            esc(&f.repro_test),
            opt(&f.triage)
        ));
    }
    b.push_str("</table>\n");
}

/// The code changes of each iteration: the file list, then each file's
/// hunks behind a disclosure, `+` and `-` lines coloured and marked.
fn code(b: &mut String, code: &[IterationCode]) {
    heading(b, "Code changes", code.is_empty(), "none recorded");
    for c in code {
        let from = if c.from == 0 {
            "the run's base".to_string()
        } else {
            format!("iteration {}", c.from)
        };
        b.push_str(&format!(
            "<h3>Iteration {} (from {from})</h3>\n",
            c.iteration
        ));
        if let Some(why) = &c.unavailable {
            b.push_str(&format!("<p>not available: {}</p>\n", esc(why)));
            continue;
        }
        if c.files.is_empty() {
            b.push_str("<p>no file changed</p>\n");
            continue;
        }
        b.push_str("<table class=\"code\"><tr><th>status</th><th>file</th><th>added</th><th>removed</th><th>note</th></tr>\n");
        for f in &c.files {
            let path = match &f.old_path {
                Some(old) => format!("{old} → {}", f.path),
                None => f.path.clone(),
            };
            b.push_str(&format!(
                "<tr class=\"code-file\"><td>{}</td><td><code>{}</code></td><td>+{}</td><td>−{}</td><td>{}</td></tr>\n",
                f.status.as_str(),
                esc(&path),
                f.added,
                f.removed,
                esc(f.summary.as_deref().unwrap_or(""))
            ));
        }
        b.push_str("</table>\n");
        for f in c.files.iter().filter(|f| !f.hunks.is_empty()) {
            b.push_str(&format!(
                "<details class=\"hunks\"><summary><code>{}</code></summary><pre>",
                esc(&f.path)
            ));
            let mut shown = 0;
            let total: usize = f.hunks.iter().map(|h| h.lines.len() + 1).sum();
            'hunks: for h in &f.hunks {
                b.push_str(&format!(
                    "<span class=\"hunk\">{}</span>\n",
                    esc(&h.header())
                ));
                for l in &h.lines {
                    if shown == MAX_HUNK_LINES {
                        break 'hunks;
                    }
                    shown += 1;
                    let class = match l.as_bytes().first() {
                        Some(b'+') => "add",
                        Some(b'-') => "del",
                        _ => "ctx",
                    };
                    b.push_str(&format!("<span class=\"{class}\">{}</span>\n", esc(l)));
                }
            }
            if shown == MAX_HUNK_LINES && total > shown {
                b.push_str(&format!(
                    "… {} more lines: loopwatch diff shows them\n",
                    total - shown
                ));
            }
            b.push_str("</pre></details>\n");
        }
    }
}

/// Each gate's failing rows per round, with the rows fixed and new and
/// the spend of each round; the budget.
fn convergence(b: &mut String, r: &Report) {
    if heading(b, "Convergence", r.convergence.is_empty(), "no gate round") {
        return;
    }
    b.push_str("<ul class=\"convergence\">\n");
    for g in &r.convergence {
        b.push_str(&format!("<li><b>{}</b><ul>", esc(&g.line())));
        for l in g.round_lines() {
            b.push_str(&format!("<li>{}</li>", esc(&l)));
        }
        b.push_str("</ul></li>\n");
    }
    b.push_str("</ul>\n");
    if !r.budget.is_empty() {
        b.push_str(&format!(
            "<p>Budget (spent / limit): {}</p>\n",
            esc(&r.budget.join(" · "))
        ));
    }
}

/// Tokens and cost where recorded.
fn usage(b: &mut String, r: &Report) {
    let u = &r.usage;
    if heading(b, "Tokens and cost", u.agents.is_empty(), "none recorded") {
        return;
    }
    b.push_str("<table class=\"usage\"><tr><th>dispatch</th><th>agent</th><th>iteration</th><th>tokens in</th><th>tokens out</th><th>cost</th></tr>\n");
    for a in &u.agents {
        b.push_str(&format!(
            "<tr class=\"agent\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            num(a.dispatch),
            esc(&a.role),
            num(a.iteration),
            num(a.tokens_in),
            num(a.tokens_out),
            dollars(a.cost_usd)
        ));
    }
    b.push_str(&format!(
        "<tr class=\"total\"><th>total</th><td></td><td></td><td>{}</td><td>{}</td><td>{}</td></tr>\n</table>\n",
        num(u.tokens_in),
        num(u.tokens_out),
        dollars(u.cost_usd)
    ));
    if u.cost_unknown > 0 {
        b.push_str(&format!(
            "<p>cost unknown for {}</p>\n",
            super::run_events::dispatches(u.cost_unknown)
        ));
    }
}

/// A CSS class for a state word (met, fail, or none).
fn class_of(state: &str) -> &'static str {
    match state {
        "MET" | "MET-RECORDED" => "met",
        "NOT-MET" | "UNVERIFIABLE" | "ABANDONED" | "PENDING" => "fail",
        _ => "other",
    }
}

/// HTML-safe text: secrets scrubbed, control characters made visible,
/// markup escaped.
pub(super) fn esc(s: &str) -> String {
    let s = crate::redact::scrub(s);
    let s = crate::sanitize::terminal_text(s.as_bytes());
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}
