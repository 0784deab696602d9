//! The HTML form of the report: one file, inline CSS, no script, no network.

use super::Report;

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
@media (prefers-color-scheme:dark){body{background:#111;color:#eee}td,th{border-color:#444}.status{background:#333}}</style>\n");
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
    if !r.agents.is_empty() {
        b.push_str("<h2>Agents (tokens and cost)</h2>\n<ul>\n");
        for a in &r.agents {
            b.push_str(&format!("<li>{}</li>\n", esc(a)));
        }
        b.push_str("</ul>\n");
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
        if let Some(a) = &it.agents {
            b.push_str(&format!("<li>agents: {}</li>\n", esc(a)));
        }
        b.push_str("</ul>\n");
    }
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
    b.push_str("<h2>Human decisions</h2>\n");
    if r.decisions.is_empty() {
        b.push_str("<p>none</p>\n");
    } else {
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
        }
        b.push_str("</table>\n");
    }
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

fn esc(s: &str) -> String {
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
