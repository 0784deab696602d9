//! The rows of each tab: light keys into the state, computed when the
//! state, the tab, the filter or the sort change, and what each row says
//! ([`cells`]), for the app (filter, copy, sort) and the views alike. The
//! views format only the rows they show. No terminal type is used here.

pub mod agents;
pub mod cells;
pub mod criteria;
pub mod findings;
pub mod fleet;
pub mod human_gates;
pub mod logs;
pub mod marks;
pub mod query;
pub mod security;
pub mod time;
pub mod timeline;

use crate::model::{FindingVerdict, GateName, HumanGate, Iteration, State, severity_rank};

use crate::tui::app::parts::{FindingSort, Tab};
use cells::{Cell, Column};
pub use query::{Query, round, shown};

/// One row of a tab: an index into the state (or into the app's caches).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKey {
    /// `App::criteria[i]`.
    Criterion(usize),
    /// `findings[i]` of the shown iteration.
    Finding(usize),
    /// `review.lanes[i]` of the shown iteration, while its findings are verified.
    Lane(usize),
    /// `rows[i]` of the shown iteration's last security round.
    Blocking(usize),
    /// `reported[i]` of the shown iteration's last security round.
    Reported(usize),
    /// `state.human_gates[i]`.
    Gate(usize),
    /// `run.events[i]`.
    Event(usize),
    /// `App::log_entries[i]`.
    Log(usize),
}

/// A contract criterion: its GATE 0 row beside its GATE 1 row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CriterionLine {
    /// Criterion id.
    pub id: String,
    /// Index in the last floor round's rows.
    pub floor: Option<usize>,
    /// Index in the last conformity round's rows.
    pub conformity: Option<usize>,
}

/// A log the Logs tab lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    /// What it is.
    pub label: String,
    /// Path relative to `.pipeline/`.
    pub path: String,
    /// The agent CLI stream it holds (read as a transcript), if any.
    pub format: Option<crate::parse::agent_stream::Format>,
}

/// The iteration before `n`, if any.
pub fn previous_iteration(state: &State, n: u32) -> Option<&Iteration> {
    state
        .review_iterations
        .iter()
        .rev()
        .find(|i| i.iteration < n)
        .map(AsRef::as_ref)
}

/// Criteria of the shown iteration, in GATE 0 order, then GATE 1-only ids.
pub fn criterion_lines(app: &dyn Query) -> Vec<CriterionLine> {
    let mut out: Vec<CriterionLine> = Vec::new();
    if let Some(f) = round(app, GateName::Floor) {
        for (i, r) in f.rows.iter().enumerate() {
            if let crate::model::GateRow::Floor(r) = r {
                out.push(CriterionLine {
                    id: r.id.clone(),
                    floor: Some(i),
                    conformity: None,
                });
            }
        }
    }
    if let Some(c) = round(app, GateName::Conformity) {
        for (i, r) in c.rows.iter().enumerate() {
            if let crate::model::GateRow::Criterion(r) = r {
                match out.iter_mut().find(|l| l.id == r.id) {
                    Some(l) => l.conformity = Some(i),
                    None => out.push(CriterionLine {
                        id: r.id.clone(),
                        floor: None,
                        conformity: Some(i),
                    }),
                }
            }
        }
    }
    out
}

/// Gate outputs and repro logs of the whole run, oldest first, each path once.
pub fn log_entries(state: &State) -> Vec<LogEntry> {
    let mut out: Vec<LogEntry> = Vec::new();
    // Each path once, found in constant time: a long run lists thousands.
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut push = |label: String, path: &str, format| {
        if !path.is_empty() && seen.insert(path.to_string()) {
            out.push(LogEntry {
                label,
                path: path.to_string(),
                format,
            });
        }
    };
    // The agents' logs first: the running one, then the newest.
    let running = state.running_agent().map(|a| a.started.dispatch);
    let mut agents: Vec<_> = state.agents.iter().collect();
    agents.sort_by_key(|a| {
        (
            Some(a.started.dispatch) != running,
            std::cmp::Reverse(a.started_seq),
        )
    });
    for a in agents {
        let format = crate::parse::agent_stream::Format::of_adapter(&a.started.adapter);
        push(agents::log_label(a), &a.started.log, format);
    }
    for it in &state.review_iterations {
        for g in &it.gates {
            if let Some(p) = &g.output {
                let label = format!(
                    "iter {} GATE {} {} round {} {}",
                    it.iteration,
                    g.gate.number(),
                    g.gate,
                    g.round,
                    g.verdict
                );
                push(label, p, None);
            }
        }
        for v in &it.verifications {
            push(
                format!(
                    "iter {} verify {} {}",
                    it.iteration,
                    v.finding,
                    v.result.as_str()
                ),
                &v.log,
                None,
            );
        }
    }
    out
}

/// The rows of the current tab, sorted and filtered.
pub fn tab_rows(app: &dyn Query) -> Vec<RowKey> {
    let state = app.state();
    let mut rows: Vec<RowKey> = match app.tab() {
        Tab::Criteria => (0..app.criteria().len()).map(RowKey::Criterion).collect(),
        Tab::Findings => {
            let Some(it) = shown(app) else {
                return Vec::new();
            };
            if let Some(lanes) = findings::live_lanes(it) {
                return (0..lanes.len()).map(RowKey::Lane).collect();
            }
            let mut idx: Vec<usize> = (0..it.findings.len()).collect();
            sort_findings(it, &mut idx, app.sort());
            idx.into_iter().map(RowKey::Finding).collect()
        }
        Tab::Security => match round(app, GateName::Security) {
            Some(g) => g
                .rows
                .iter()
                .enumerate()
                .filter(|(_, r)| matches!(r, crate::model::GateRow::Security(_)))
                .map(|(i, _)| RowKey::Blocking(i))
                .chain((0..g.reported.len()).map(RowKey::Reported))
                .collect(),
            None => Vec::new(),
        },
        Tab::Gates => gate_order(&state.human_gates)
            .into_iter()
            .map(RowKey::Gate)
            .collect(),
        Tab::Timeline => (0..app.run().events.len()).map(RowKey::Event).collect(),
        Tab::Logs => (0..app.log_entries().len()).map(RowKey::Log).collect(),
    };
    if !app.filter().is_empty() {
        let needle = app.filter().to_lowercase();
        rows.retain(|k| row_text(app, *k).to_lowercase().contains(&needle));
    }
    rows
}

/// Open gates oldest first, then decided ones in the order they were decided.
pub fn gate_order(gates: &[HumanGate]) -> Vec<usize> {
    let mut open: Vec<usize> = (0..gates.len()).filter(|i| gates[*i].is_open()).collect();
    open.sort_by_key(|i| gates[*i].requested_seq);
    let mut decided: Vec<usize> = (0..gates.len()).filter(|i| !gates[*i].is_open()).collect();
    decided.sort_by_key(|i| gates[*i].decision.as_ref().map_or(u64::MAX, |d| d.seq));
    open.extend(decided);
    open
}

/// A row as plain text (cells joined by two spaces): for the filter and the clipboard.
pub fn row_text(app: &dyn Query, key: RowKey) -> String {
    cells_of(app, key)
        .into_iter()
        .map(|c| c.text)
        .collect::<Vec<_>>()
        .join("  ")
}

fn sort_findings(it: &Iteration, idx: &mut [usize], sort: FindingSort) {
    let f = &it.findings;
    match sort {
        FindingSort::Severity => idx.sort_by(|a, b| {
            (severity_rank(&f[*a].severity), &f[*a].id)
                .cmp(&(severity_rank(&f[*b].severity), &f[*b].id))
        }),
        FindingSort::Id => idx.sort_by(|a, b| f[*a].id.cmp(&f[*b].id)),
        FindingSort::Verdict => idx.sort_by_key(|i| {
            let rank = match f[*i].verdict {
                FindingVerdict::Verified => 0,
                FindingVerdict::Unverifiable => 1,
                FindingVerdict::False => 2,
            };
            (rank, f[*i].id.clone())
        }),
        FindingSort::Path => {
            idx.sort_by(|a, b| (&f[*a].path, &f[*a].lines).cmp(&(&f[*b].path, &f[*b].lines)))
        }
    }
}

pub use fleet::run_order;

/// The columns of a tab.
pub fn columns(tab: Tab) -> &'static [Column] {
    match tab {
        Tab::Criteria => criteria::COLUMNS,
        Tab::Findings => findings::COLUMNS,
        Tab::Security => security::COLUMNS,
        Tab::Gates => human_gates::COLUMNS,
        Tab::Timeline => timeline::COLUMNS,
        Tab::Logs => logs::COLUMNS,
    }
}

/// The cells of a row, one per column of its tab.
pub fn cells_of(app: &dyn Query, key: RowKey) -> Vec<Cell> {
    match key {
        RowKey::Criterion(i) => criteria::cells(app, i),
        RowKey::Finding(i) => findings::cells(app, i),
        RowKey::Lane(i) => findings::lane_cells(app, i),
        RowKey::Blocking(i) => security::blocking_cells(app, i),
        RowKey::Reported(i) => security::reported_cells(app, i),
        RowKey::Gate(i) => human_gates::cells(app, i),
        RowKey::Event(i) => timeline::cells(app, i),
        RowKey::Log(i) => logs::cells(app, i),
    }
}
