//! The markdown form of the report. Every piece of text goes through
//! [`super::md`]: secrets scrubbed, one line, markup escaped.

use std::fmt::Write;

use super::run_events::{dollars, num};
use super::{Report, md};

/// Renders the report as markdown.
pub fn render(r: &Report) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# Run report — {}\n", md(&r.run));
    let _ = writeln!(o, "- flow: {}", md(&r.flow));
    let _ = writeln!(o, "- contract: {}", md(&r.contract));
    let _ = writeln!(o, "- final status: **{}**", r.final_status);
    if let Some(n) = &r.status_note {
        let _ = writeln!(o, "- note: {}", md(n));
    }
    if !r.open_gates.is_empty() {
        let _ = writeln!(o, "- waiting on a person: {}", md(&r.open_gates.join(", ")));
    }
    iterations(&mut o, r);
    criteria(&mut o, r);
    findings(&mut o, r);
    heading(&mut o, "Abandonments", r.abandonments.is_empty(), "none");
    for a in &r.abandonments {
        let _ = writeln!(
            o,
            "- criterion {}: {} — decision: {}",
            md(&a.criterion),
            md(&a.reason),
            a.decision
        );
    }
    if !r.abandonments.is_empty() {
        let _ = writeln!(o);
    }
    let none = r.deferred.is_empty() && r.unreadable_triage.is_empty();
    heading(&mut o, "Deferred findings (for a human eye)", none, "none");
    for f in &r.deferred {
        let _ = writeln!(
            o,
            "- {} (iteration {}): {} — {}",
            md(&f.id),
            f.iteration,
            md(&f.title),
            md(&f.reason)
        );
    }
    for u in &r.unreadable_triage {
        let _ = writeln!(
            o,
            "- triage file {} (iteration {}) could not be read: {}",
            md(&u.file),
            u.iteration,
            md(&u.reason)
        );
    }
    if !none {
        let _ = writeln!(o);
    }
    decisions(&mut o, r);
    expirations(&mut o, r);
    code(&mut o, r);
    convergence(&mut o, r);
    usage(&mut o, r);
    let _ = writeln!(o, "## Red tests kept\n");
    if r.red_tests.is_empty() {
        let _ = writeln!(o, "none");
    }
    for t in &r.red_tests {
        let _ = writeln!(
            o,
            "- {} ({}) proves {}",
            md(&t.test_ref),
            md(&t.file),
            md(&t.issue)
        );
    }
    o
}

fn iterations(o: &mut String, r: &Report) {
    let _ = writeln!(o, "\n## Iterations\n");
    if r.iterations.is_empty() {
        let _ = writeln!(o, "none");
    }
    for it in &r.iterations {
        let _ = writeln!(o, "### Iteration {} ({})\n", it.iteration, md(&it.trigger));
        for g in &it.gates {
            let _ = writeln!(o, "- {}", md(g));
        }
        let _ = writeln!(o);
    }
}

/// A section's heading, with `none` (a paragraph of its own) under it when
/// the section is `empty`; returns `empty`.
fn heading(o: &mut String, title: &str, empty: bool, none: &str) -> bool {
    let _ = writeln!(o, "## {title}\n");
    if empty {
        let _ = writeln!(o, "{none}\n");
    }
    empty
}

fn opt(v: &Option<String>) -> String {
    v.as_deref().map_or_else(|| "—".to_string(), md)
}

fn criteria(o: &mut String, r: &Report) {
    heading(o, "Criteria", r.criteria.is_empty(), "none");
    for t in &r.criteria {
        let _ = writeln!(o, "### Iteration {}\n", t.iteration);
        let _ = writeln!(
            o,
            "| criterion | text | GATE 0 | GATE 0 evidence | GATE 1 | GATE 1 detail |\n|---|---|---|---|---|---|"
        );
        for c in &t.rows {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} | {} |",
                md(&c.id),
                md(&c.text),
                opt(&c.floor),
                md(&c.floor_evidence),
                opt(&c.conformity),
                md(&c.conformity_detail)
            );
        }
        let _ = writeln!(o);
    }
}

fn findings(o: &mut String, r: &Report) {
    if heading(o, "Findings", r.findings.is_empty(), "none") {
        return;
    }
    let _ = writeln!(
        o,
        "| iteration | finding | severity | location | claim | verdict | verify-by-test | triage |\n|---|---|---|---|---|---|---|---|"
    );
    for f in &r.findings {
        let verify = match (&f.verify_by_test, f.repro_test.as_str()) {
            (Some(v), "") => md(v),
            (Some(v), t) => format!("{} ({})", md(v), md(t)),
            (None, _) => "—".into(),
        };
        let mut verdict = if f.note.is_empty() {
            md(&f.verdict)
        } else {
            format!("{} ({})", md(&f.verdict), md(&f.note))
        };
        if f.raised_again.is_some() && !f.note.starts_with("raised again") {
            verdict.push_str(&format!(
                " — {}",
                md(f.raised_again.as_deref().unwrap_or(""))
            ));
        }
        if !f.rounds.is_empty() {
            let rounds: Vec<String> = f.rounds.iter().map(u32::to_string).collect();
            verdict.push_str(&format!(" — seen in review rounds {}", rounds.join(", ")));
        }
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            f.iteration,
            md(&f.id),
            md(&f.severity),
            md(&f.location),
            md(&f.claim),
            verdict,
            verify,
            opt(&f.triage)
        );
    }
    let _ = writeln!(o);
}

fn decisions(o: &mut String, r: &Report) {
    heading(o, "Human decisions", r.decisions.is_empty(), "none");
    for d in &r.decisions {
        let _ = writeln!(
            o,
            "- {} ({} {}): **{}** by {} at {} — {} (evidence {})",
            md(&d.id),
            d.kind,
            md(&d.subject),
            d.decision,
            md(&d.by),
            md(&d.at),
            md(&d.reason),
            md(&d.evidence_hash)
        );
        let _ = writeln!(
            o,
            "  - asked at {}: {}",
            md(&d.requested_at),
            md(&d.summary)
        );
        if let Some(note) = &d.note {
            let _ = writeln!(o, "  - note to the developer: {}", md(note));
        }
        for line in &d.evidence {
            let _ = writeln!(o, "  - {}", md(line));
        }
    }
    if !r.decisions.is_empty() {
        let _ = writeln!(o);
    }
}

fn expirations(o: &mut String, r: &Report) {
    if r.expirations.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "## Expired gates (nobody decided)
"
    );
    for x in &r.expirations {
        let _ = writeln!(
            o,
            "- {} ({} {}): **EXPIRED** after {} at {}: {} applied",
            md(&x.id),
            x.kind,
            md(&x.subject),
            md(&x.after),
            md(&x.at),
            x.action
        );
        let _ = writeln!(
            o,
            "  - asked at {}: {}",
            md(&x.requested_at),
            md(&x.summary)
        );
    }
    let _ = writeln!(o);
}

fn code(o: &mut String, r: &Report) {
    heading(o, "Code changes", r.code.is_empty(), "none recorded");
    for c in &r.code {
        let from = if c.from == 0 {
            "the run's base".to_string()
        } else {
            format!("iteration {}", c.from)
        };
        let _ = writeln!(o, "### Iteration {} (from {from})\n", c.iteration);
        if let Some(why) = &c.unavailable {
            let _ = writeln!(o, "not available: {}\n", md(why));
            continue;
        }
        if c.files.is_empty() {
            let _ = writeln!(o, "no file changed\n");
            continue;
        }
        for f in &c.files {
            let path = match &f.old_path {
                Some(old) => format!("{} → {}", md(old), md(&f.path)),
                None => md(&f.path),
            };
            let counts = match &f.summary {
                Some(s) if f.added + f.removed == 0 => md(s),
                _ => format!("+{} −{}", f.added, f.removed),
            };
            let _ = writeln!(o, "- {} {path} ({counts})", f.status.as_str());
        }
        let _ = writeln!(o);
    }
}

/// Each gate's failing rows per round (`GATE 1: 5 → 2 → 2 NOT-MET`),
/// with per round the rows fixed and new and its spend; the budget.
fn convergence(o: &mut String, r: &Report) {
    if heading(o, "Convergence", r.convergence.is_empty(), "no gate round") {
        return;
    }
    for g in &r.convergence {
        let _ = writeln!(o, "- **{}**", md(&g.line()));
        for l in g.round_lines() {
            let _ = writeln!(o, "  - {}", md(&l));
        }
    }
    let _ = writeln!(o);
    if !r.budget.is_empty() {
        let _ = writeln!(o, "Budget (spent / limit): {}\n", md(&r.budget.join(" · ")));
    }
}

fn usage(o: &mut String, r: &Report) {
    let u = &r.usage;
    if heading(o, "Tokens and cost", u.agents.is_empty(), "none recorded") {
        return;
    }
    let _ = writeln!(
        o,
        "| dispatch | agent | iteration | tokens in | tokens out | cost |\n|---|---|---|---|---|---|"
    );
    for a in &u.agents {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} |",
            num(a.dispatch),
            md(&a.role),
            num(a.iteration),
            num(a.tokens_in),
            num(a.tokens_out),
            dollars(a.cost_usd)
        );
    }
    let _ = writeln!(
        o,
        "| total | | | {} | {} | {} |\n",
        num(u.tokens_in),
        num(u.tokens_out),
        dollars(u.cost_usd)
    );
    if u.cost_unknown > 0 {
        let _ = writeln!(
            o,
            "cost unknown for {}\n",
            super::run_events::dispatches(u.cost_unknown)
        );
    }
}
