//! What a report reads from the journal's events rather than from the
//! folded state (the code changes per iteration, from the snapshots the
//! events name, and the spans of the run's picture: gate rounds and waits on
//! a person, over time), and the agents' tokens and cost, from the fold.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::code::{CodeChanges, FileDiff, RunTrees};
use crate::model::{Event, EventBody, GateName};

/// The code changes of one iteration, against the one before it (the
/// run's base for the first).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IterationCode {
    /// Iteration.
    pub iteration: u32,
    /// The iteration compared with (0: the run's base).
    pub from: u32,
    /// The changed files (empty when unavailable).
    pub files: Vec<FileDiff>,
    /// Why the changes cannot be shown, when they cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
}

/// One agent dispatch (or one verify-by-test summary) with its usage.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentLine {
    /// Dispatch number, for `agent.finished`.
    pub dispatch: Option<u64>,
    /// The agent's part.
    pub role: String,
    /// Iteration served, when known.
    pub iteration: Option<u64>,
    /// Input tokens.
    pub tokens_in: Option<u64>,
    /// Output tokens.
    pub tokens_out: Option<u64>,
    /// Cost in US dollars.
    pub cost_usd: Option<f64>,
    /// Wall time.
    pub duration_ms: Option<u64>,
}

/// Tokens and cost where recorded.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Each dispatch.
    pub agents: Vec<AgentLine>,
    /// Sum of the known input tokens.
    pub tokens_in: Option<u64>,
    /// Sum of the known output tokens.
    pub tokens_out: Option<u64>,
    /// Sum of the known costs.
    pub cost_usd: Option<f64>,
    /// Dispatches whose cost is not known (left out of `costUsd`).
    pub cost_unknown: u32,
}

/// One bar of the run's picture.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Span {
    /// floor, conformity, security, or person.
    pub lane: String,
    /// `i<iteration> r<round>` or the human gate's id.
    pub label: String,
    /// Seconds from the run's start.
    pub start: f64,
    /// Seconds from the run's start (the last event's time while open).
    pub end: f64,
    /// pass, fail, running (a gate), decided, expired, open (a wait on a person).
    pub outcome: String,
}

impl Span {
    /// A bar of `lane` from `start` to `end`, labelled, with its outcome.
    fn new(lane: &str, label: String, start: f64, end: f64, outcome: &str) -> Span {
        Span {
            lane: lane.into(),
            label,
            start,
            end,
            outcome: outcome.into(),
        }
    }
}

/// The code changes of every iteration that has a snapshot, or says why not.
pub fn code_changes(events: &[Event], worktree: &Path) -> Vec<IterationCode> {
    let trees = RunTrees::from_events(events);
    let mut out = Vec::new();
    let mut previous = 0;
    for &iteration in trees.iterations.keys() {
        let changes = trees.changes(worktree, previous, iteration);
        let (files, unavailable) = match changes {
            CodeChanges::Files(mut files) => {
                files.iter_mut().for_each(scrub_hunks);
                (files, None)
            }
            CodeChanges::Unavailable(why) => (Vec::new(), Some(why)),
        };
        out.push(IterationCode {
            iteration,
            from: previous,
            files,
            unavailable,
        });
        previous = iteration;
    }
    out
}

/// Scrubs a file's hunks as one text, so a secret spanning lines (a key
/// block) goes whole; its lines then count as one.
fn scrub_hunks(f: &mut FileDiff) {
    for h in &mut f.hunks {
        let joined = h.lines.join("\n");
        if let std::borrow::Cow::Owned(clean) = crate::redact::scrub(&joined) {
            h.lines = clean.split('\n').map(str::to_string).collect();
        }
    }
}

/// The agents' usage from the dispatches the fold paired (`agent.started`
/// with its `agent.finished`); when there are none, from the verify-by-test
/// summaries that carry tokens.
pub fn usage(s: &crate::model::State) -> Usage {
    // The fold already pairs each dispatch with its finish: read it there.
    let mut agents: Vec<AgentLine> = s
        .agents
        .iter()
        .filter_map(|a| {
            let f = a.finished.as_ref()?;
            Some(AgentLine {
                dispatch: Some(u64::from(a.started.dispatch)),
                role: a.started.role.to_string(),
                iteration: Some(u64::from(a.started.iteration)),
                tokens_in: f.tokens_in,
                tokens_out: f.tokens_out,
                cost_usd: f.cost_usd,
                duration_ms: Some(f.duration_ms),
            })
        })
        .collect();
    if agents.is_empty() {
        // Runs without agent events: the verify-by-test summaries that carry tokens.
        agents = s
            .review_iterations
            .iter()
            .filter_map(|it| {
                let v = it.verify_by_test.as_ref()?;
                (v.tokens_in.is_some() || v.tokens_out.is_some()).then(|| AgentLine {
                    dispatch: None,
                    role: "verify-by-test".into(),
                    iteration: Some(u64::from(v.iteration)),
                    tokens_in: v.tokens_in,
                    tokens_out: v.tokens_out,
                    cost_usd: None,
                    duration_ms: Some(v.duration_ms),
                })
            })
            .collect();
    }
    let sum = |f: fn(&AgentLine) -> Option<u64>| {
        agents
            .iter()
            .filter_map(f)
            .fold(None, |acc: Option<u64>, n| Some(acc.unwrap_or(0) + n))
    };
    let cost_usd = agents
        .iter()
        .filter_map(|a| a.cost_usd)
        .fold(None, |acc: Option<f64>, c| Some(acc.unwrap_or(0.0) + c));
    Usage {
        tokens_in: sum(|a| a.tokens_in),
        tokens_out: sum(|a| a.tokens_out),
        cost_usd,
        cost_unknown: u32::try_from(agents.iter().filter(|a| a.cost_usd.is_none()).count())
            .unwrap_or(u32::MAX),
        agents,
    }
}

/// The spans of the picture: each gate round from its start to its
/// verdict, each human gate from its request to its decision.
pub fn timeline(events: &[Event]) -> Vec<Span> {
    let Some(t0) = events.iter().find_map(|e| seconds(&e.at)) else {
        return Vec::new();
    };
    let last = events
        .iter()
        .filter_map(|e| seconds(&e.at))
        .fold(t0, f64::max);
    let mut open_gates: BTreeMap<(GateName, u32, u32), f64> = BTreeMap::new();
    let mut open_waits: BTreeMap<String, f64> = BTreeMap::new();
    let mut spans = Vec::new();
    for ev in events {
        let Some(t) = seconds(&ev.at).map(|t| t - t0) else {
            continue;
        };
        match &ev.body {
            EventBody::RunStarted { .. } => {
                open_gates.clear();
                open_waits.clear();
                spans.clear();
            }
            EventBody::GateStarted {
                gate,
                iteration,
                round,
                ..
            } => {
                open_gates.insert((*gate, *iteration, *round), t);
            }
            EventBody::GateFinished(g) => {
                let start = open_gates
                    .remove(&(g.gate, g.iteration, g.round))
                    .unwrap_or(t);
                let outcome = if g.verdict.kind.is_pass() && g.structural.is_none() {
                    "pass"
                } else {
                    "fail"
                };
                let label = format!("i{} r{}", g.iteration, g.round);
                spans.push(Span::new(g.gate.as_str(), label, start, t, outcome));
            }
            EventBody::HumanRequested(r) => {
                open_waits.insert(r.id.clone(), t);
            }
            EventBody::HumanDecided(d) => {
                if let Some(start) = open_waits.remove(&d.id) {
                    spans.push(Span::new("person", d.id.clone(), start, t, "decided"));
                }
            }
            EventBody::HumanExpired(x) => {
                if let Some(start) = open_waits.remove(&x.id) {
                    spans.push(Span::new("person", x.id.clone(), start, t, "expired"));
                }
            }
            _ => {}
        }
    }
    let end = last - t0;
    for ((gate, iteration, round), start) in open_gates {
        let label = format!("i{iteration} r{round}");
        spans.push(Span::new(gate.as_str(), label, start, end, "running"));
    }
    for (id, start) in open_waits {
        spans.push(Span::new("person", id, start, end, "open"));
    }
    spans.sort_by(|a, b| a.start.total_cmp(&b.start));
    spans
}

/// Seconds since the epoch of an RFC 3339 time.
fn seconds(at: &str) -> Option<f64> {
    let ts: jiff::Timestamp = at.parse().ok()?;
    Some(ts.as_millisecond() as f64 / 1000.0)
}

/// A JSON number or nothing, for rendering.
pub(super) fn num(v: Option<u64>) -> String {
    v.map_or_else(|| "—".to_string(), |n| n.to_string())
}

/// Dollars with 4 decimals, or a dash.
pub(super) fn dollars(v: Option<f64>) -> String {
    v.map_or_else(|| "—".to_string(), |c| format!("${c:.4}"))
}

/// `1 dispatch`, `3 dispatches`.
pub(super) fn dispatches(n: u32) -> String {
    if n == 1 {
        "1 dispatch".into()
    } else {
        format!("{n} dispatches")
    }
}
