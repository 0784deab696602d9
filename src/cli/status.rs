//! `loopwatch status [--json]`: a one-shot summary of the pipeline.

use std::process::ExitCode;

use clap::Args;

use super::Globals;
use super::output::{say, say_json, shown};
use crate::journal::{JournalError, Pipeline, Source, snapshot};
use crate::model::*;

/// `status`.
#[derive(Debug, Args)]
#[command(after_long_help = "\
--json prints the whole state (the fold of events.jsonl, as in state.json) plus
`openHumanGates` (ids of the gates waiting on a person), `waiting` (each of those
gates with its kind, its origin and its options, each with its key and what it does:
{\"id\",\"kind\",\"origin\",\"summary\",\"options\":[{\"decision\",\"key\",\"does\"}]}, and
\"approvals\" (who approved so far) when a decision policy counted some)
and `problems` (journal lines that could not be used). Strings are escaped as JSON
(control, bidirectional and invisible characters as \\uXXXX), so the output parses
back to what was recorded. The text form lists each open gate's options under it,
each with what it does.

Text from the journal is printed escaped: a newline in a summary or an id shows as
␊ and can never start a line of its own (a forged `NEXT:` line).

Exit codes: 0 nothing waits on a person, 10 a human gate is open, 3 no pipeline,
2 the pipeline could not be read.")]
pub struct StatusArgs {
    /// Print JSON instead of text.
    #[arg(long, conflicts_with = "next")]
    pub json: bool,
    /// Print only what comes next, for scripts: `next-gate <gate>`, `retry <gate>`,
    /// `dev`, `human <id>`, `done <end status>` or `stop <end status>`.
    #[arg(long)]
    pub next: bool,
}

/// Runs `status`.
pub fn run(a: StatusArgs, globals: &Globals) -> anyhow::Result<ExitCode> {
    let pipeline = match &globals.pipeline {
        Some(p) => Some(Pipeline::from_user_path(p)),
        None => Pipeline::discover(&std::env::current_dir()?),
    };
    let Some(snap) = pipeline.as_ref().map(snapshot).transpose()?.flatten() else {
        let err = match pipeline {
            Some(p) if globals.pipeline.is_some() => p.missing(),
            Some(p) => JournalError::NoPipeline {
                start: p.dir().to_path_buf(),
            },
            None => JournalError::NoPipeline {
                start: Pipeline::search_hint(&std::env::current_dir().unwrap_or_default()),
            },
        };
        if a.json {
            let looked = match &err {
                JournalError::NoPipeline { start } => start.clone(),
                JournalError::NoPipelineAt { dir } => dir.clone(),
                _ => Default::default(),
            };
            say_json(&serde_json::json!({ "error": "no pipeline", "lookedIn": looked }))?;
        }
        return Err(err.into());
    };
    let state = &snap.state;
    let open: Vec<&str> = state
        .open_human_gates()
        .map(|g| g.request.id.as_str())
        .collect();
    if a.next {
        say(&shown(&state.next.machine_line()));
    } else if a.json {
        let mut v = serde_json::to_value(state)?;
        if let Some(o) = v.as_object_mut() {
            o.insert("openHumanGates".into(), serde_json::json!(open));
            o.insert("waiting".into(), waiting(state));
            o.insert(
                "problems".into(),
                serde_json::json!(
                    snap.problems
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                ),
            );
            o.insert(
                "source".into(),
                serde_json::json!(match snap.source {
                    Source::Journal => "events.jsonl",
                    Source::ForeignState => "state.json",
                }),
            );
        }
        say_json(&v)?;
    } else {
        let policy = crate::audit::policy::Policy::load_user();
        let mut out = text_with(state, policy.as_ref().ok());
        if let Err(e) = &policy {
            out.push_str(&format!(
                "problem: the decision policy cannot be used: {}\n",
                shown(&e.to_string())
            ));
        }
        for p in &snap.problems {
            out.push_str(&format!("problem: {}\n", shown(&p.to_string())));
        }
        say(&out);
    }
    Ok(ExitCode::from(if open.is_empty() { 0 } else { 10 }))
}

/// The open gates, each with its options and what each does (`status --json`).
pub fn waiting(s: &State) -> serde_json::Value {
    s.open_human_gates()
        .map(|g| {
            let r = &g.request;
            let options: Vec<serde_json::Value> = r
                .choices()
                .map(|c| {
                    serde_json::json!({
                        "decision": c.decision,
                        "key": c.key.to_string(),
                        "does": c.words(r.gate),
                    })
                })
                .collect();
            let approvals: Vec<String> = g
                .approvals
                .iter()
                .map(|a| crate::audit::policy::approver(&a.decision))
                .collect();
            let mut v = serde_json::json!({
                "id": r.id,
                "kind": r.kind,
                "origin": rules::origin(r),
                "summary": r.summary,
                "options": options,
            });
            // Who approved so far, when a decision policy counted approvals.
            if !approvals.is_empty()
                && let Some(o) = v.as_object_mut()
            {
                o.insert("approvals".into(), serde_json::json!(approvals));
            }
            v
        })
        .collect()
}

/// The text form of `status`: every field from the journal escaped, so
/// each line is one of ours.
pub fn text(s: &State) -> String {
    text_with(s, None)
}

/// [`text`], each open gate saying who approved it so far and who is
/// still awaited under the decision `policy`.
pub fn text_with(s: &State, policy: Option<&crate::audit::policy::Policy>) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    match &s.run {
        Some(r) => {
            let _ = writeln!(
                out,
                "run {} · {} · contract {}",
                shown(&r.id),
                shown(&r.flow),
                shown(&r.contract)
            );
        }
        None => out.push_str("no run started\n"),
    }
    let _ = writeln!(
        out,
        "status {} · iteration {} · last event {}",
        s.status.as_str(),
        s.iteration_number(),
        shown(s.last_event_at.as_deref().unwrap_or("never"))
    );
    let strip: Vec<String> = GateName::ALL
        .iter()
        .map(|&g| {
            let last = s
                .last_round(g)
                .map_or_else(|| "—".to_string(), |r| shown(&r.verdict.to_string()));
            format!(
                "GATE {} {g} {}/{} {last}",
                g.number(),
                s.counters.get(g),
                s.caps.get(g)
            )
        })
        .collect();
    let _ = writeln!(out, "{}", strip.join(" · "));
    let open: Vec<&HumanGate> = s.open_human_gates().collect();
    if !open.is_empty() {
        let _ = writeln!(out, "waiting on you ({}):", open.len());
        for g in open {
            let r = &g.request;
            let _ = writeln!(
                out,
                "  {}  {} · {}  {}",
                shown(&r.id),
                r.kind,
                rules::origin(r),
                shown(&r.summary)
            );
            if let Some(line) = crate::audit::policy::approvals_line(g, policy) {
                let _ = writeln!(out, "    {}", shown(&line));
            }
            for c in r.choices() {
                let _ = writeln!(out, "    {}", c.said(r.gate));
            }
        }
    }
    for g in s.human_gates.iter().filter(|g| !g.is_open()) {
        if let Some(d) = &g.decision {
            let _ = writeln!(
                out,
                "decided {}: {} by {} at {} — {} ({})",
                shown(&g.request.id),
                d.decision.decision,
                shown(&d.decision.by),
                shown(&d.at),
                shown(&d.decision.reason),
                shown(&d.decision.evidence_hash)
            );
        }
        if let Some(x) = &g.expired {
            let _ = writeln!(
                out,
                "EXPIRED {}: nobody decided within {}, {} applied at {}",
                g.request.id, x.after, x.action, x.at
            );
        }
    }
    if let Some(e) = &s.ended {
        let _ = writeln!(out, "ended {}", e.status.as_str());
    }
    let _ = writeln!(out, "{}", shown(&s.next.line()));
    out
}
