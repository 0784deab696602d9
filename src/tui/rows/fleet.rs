//! The run list: the order of the runs watched (waiting on a person first,
//! the oldest wait on top; then running; then ended but not looked at
//! since; then settled) and what each row says.

use jiff::Timestamp;

use super::cells::{Cell, Column, col, wide};
use super::marks;
use super::query::Query;
use super::time::short_age;
use crate::model::{EventBody, HumanGate, State};
use crate::tui::app::parts::Run;
use crate::tui::tone::Tone;

/// The columns of the run list.
pub const COLUMNS: &[Column] = &[
    col("", 1),
    col("⚑", 3),
    col("state", 21),
    col("waiting", 7),
    col("gate", 19),
    wide("cost", 18, 100),
    wide("gates", 18, 150),
    col("run", 0),
    wide("worktree", 0, 80),
];

/// Where a run goes in the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Group {
    /// A gate waits on a person.
    Waiting,
    /// Not ended (running, or nothing recorded yet).
    Running,
    /// Ended, and not opened since.
    EndedUnseen,
    /// Ended and seen.
    Settled,
}

/// The group of a run.
pub fn group(run: &Run) -> Group {
    let s = &run.state;
    if s.open_human_gates().next().is_some() {
        Group::Waiting
    } else if s.ended.is_none() {
        Group::Running
    } else if ended_unseen(run) {
        Group::EndedUnseen
    } else {
        Group::Settled
    }
}

/// True when the run ended after the person last looked at it: not opened
/// in this session since, and ended after the seq kept from the last one.
pub fn ended_unseen(run: &Run) -> bool {
    if run.state.ended.is_none() || run.looked_end {
        return false;
    }
    let mark = run.looked_mark.unwrap_or(0);
    // `run.ended` is nearly always the last event: look from the end.
    (0..run.events.len())
        .rev()
        .filter_map(|i| run.events.get(i))
        .find(|e| matches!(e.body, EventBody::RunEnded(_)))
        .is_none_or(|e| e.seq > mark)
}

/// When the oldest open gate of a state opened, if one is open.
pub fn oldest_wait(s: &State) -> Option<(&HumanGate, Option<Timestamp>)> {
    s.open_human_gates()
        .map(|g| (g, g.requested_at.parse::<Timestamp>().ok()))
        .min_by_key(|(g, t)| (t.is_none(), *t, g.requested_seq))
}

/// Runs in list order (indexes into `app.runs()`).
pub fn run_order(app: &dyn Query) -> Vec<usize> {
    let mut keyed: Vec<(Group, Option<Timestamp>, &std::path::Path, usize)> = app
        .runs()
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let g = group(r);
            let wait = match g {
                Group::Waiting => oldest_wait(&r.state).and_then(|(_, t)| t),
                _ => None,
            };
            (g, wait, r.pipeline.as_path(), i)
        })
        .collect();
    // Oldest wait first; a time that cannot be read goes after the others.
    keyed.sort_by(|a, b| (a.0, a.1.is_none(), a.1, a.2).cmp(&(b.0, b.1.is_none(), b.1, b.2)));
    keyed.into_iter().map(|k| k.3).collect()
}

/// The cells of run `i`'s row.
pub fn cells(app: &dyn Query, i: usize) -> Vec<Cell> {
    let run = &app.runs()[i];
    let s = &run.state;
    let open = s.open_human_gates().count();
    let marker = if run.polled.is_some() {
        Cell::toned("~", Tone::Warn)
    } else if run.problem.is_some() {
        Cell::toned("!", Tone::Bad)
    } else {
        Cell::plain("")
    };
    let status = if run.problem.is_some() && s.seq == 0 {
        Cell::toned("UNREADABLE", Tone::Bad)
    } else if group(run) == Group::EndedUnseen {
        let m = marks::run_status(s);
        Cell::toned(format!("{} •new", m.text()), m.tone)
    } else {
        Cell::mark(&marks::run_status(s))
    };
    let waiting = oldest_wait(s)
        .and_then(|(g, _)| super::query::age_secs(app.now(), &g.requested_at))
        .map(short_age)
        .unwrap_or_default();
    let name = s.run.as_ref().map_or_else(
        || "(no run yet)".to_string(),
        |r| format!("{} {}", r.flow, r.id),
    );
    let wt = run.pipeline.parent().unwrap_or(&run.pipeline);
    // Under a folder searched: the path from it, the part that tells runs apart.
    let worktree = app
        .fleet_roots()
        .iter()
        .find_map(|r| wt.strip_prefix(r).ok())
        .map_or_else(
            || wt.display().to_string(),
            |rel| match rel.as_os_str().is_empty() {
                true => ".".to_string(),
                false => rel.display().to_string(),
            },
        );
    vec![
        marker,
        if open > 0 {
            Cell::toned(format!("⚑{open}"), Tone::Human)
        } else {
            Cell::plain("")
        },
        status,
        Cell::toned(waiting, Tone::Human),
        Cell::plain(gate_and_round(s)),
        Cell::toned(cost(s), Tone::Muted),
        Cell::plain(strip(s)),
        Cell::plain(name),
        Cell::toned(worktree, Tone::Muted),
    ]
}

/// `conformity r2` for the gate in progress, else the last round of the
/// iteration with its verdict (`security r1 ✓`), else `-`.
pub fn gate_and_round(s: &State) -> String {
    if let Some(c) = &s.current_gate {
        return format!("i{} {} r{}", c.iteration, c.gate, c.round);
    }
    let it = s.iteration_number();
    s.iteration(it).and_then(|i| i.gates.last()).map_or_else(
        || "-".to_string(),
        |r| {
            format!(
                "i{it} {} r{} {}",
                r.gate,
                r.round,
                marks::verdict(&r.verdict).symbol
            )
        },
    )
}

/// Each gate's rounds and last verdict: `●●○ ⊘ ●○○ ✓ ○○○ ·`.
fn strip(s: &State) -> String {
    crate::model::GateName::ALL
        .iter()
        .map(|g| {
            let v = s
                .last_round(*g)
                .map_or_else(marks::none, |r| marks::verdict(&r.verdict));
            format!("{} {} ", marks::dots(s, *g), v.symbol)
        })
        .collect::<String>()
        .trim_end()
        .to_string()
}

/// The run's tokens and cost, when its agents reported any.
pub fn cost(s: &State) -> String {
    let u = &s.usage.total;
    if u.dispatches == 0 {
        return String::new();
    }
    let tokens = u.tokens_in + u.tokens_out;
    let t = if tokens >= 1_000_000 {
        format!("{:.1}M", tokens as f64 / 1e6)
    } else if tokens >= 1_000 {
        format!("{:.1}k", tokens as f64 / 1e3)
    } else {
        tokens.to_string()
    };
    let c = match (u.cost_usd, u.unpriced) {
        (None, _) => "$?".to_string(),
        (Some(c), 0) => format!("${c:.2}"),
        (Some(c), _) => format!("${c:.2}+?"),
    };
    format!("{t} tok · {c}")
}
