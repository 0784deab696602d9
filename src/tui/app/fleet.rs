//! Many runs in one view: runs added while watching (found by the search
//! of folders), how each is followed, what the person has looked at, and
//! `n` across every run (the gate waiting longest first).

use std::path::PathBuf;

use jiff::Timestamp;

use super::{App, Run, Screen, Tab};
use crate::tui::rows::{self, RowKey};

impl App {
    /// Folders are searched for runs: the run list is the home screen,
    /// whatever the number of runs (none yet included).
    pub fn set_fleet(&mut self) {
        self.fleet = true;
        self.runs.clear();
        self.current = 0;
        self.screen = Screen::RunList;
        self.refresh();
    }

    /// True when folders are searched for runs.
    pub fn is_fleet(&self) -> bool {
        self.fleet
    }

    /// Adds a run watched from now on; returns its index (the index of its
    /// pipeline in the live loop).
    pub fn add_run(&mut self, pipeline: PathBuf) -> usize {
        self.runs.push(Run {
            pipeline,
            ..Run::default()
        });
        if self.runs.len() > 1 && !self.fleet && self.screen == Screen::Run {
            self.screen = Screen::RunList;
        }
        self.refresh();
        self.runs.len() - 1
    }

    /// Says run `index` is polled (and why) instead of watched.
    pub fn set_run_polled(&mut self, index: usize, why: Option<String>) {
        if let Some(r) = self.runs.get_mut(index) {
            r.polled = why;
        }
    }

    /// The seq run `index` was last seen at, from an earlier session: a run
    /// that ended after it is listed as ended and not looked at.
    pub fn set_looked_mark(&mut self, index: usize, mark: Option<u64>) {
        if let Some(r) = self.runs.get_mut(index) {
            r.looked_mark = mark;
        }
        self.refresh();
    }

    /// The line over the run list (runs polled, folders not searched).
    pub fn set_fleet_notice(&mut self, notice: Option<String>) {
        self.fleet_notice = notice;
    }

    /// The line over the run list, if any.
    pub fn fleet_notice(&self) -> Option<&str> {
        self.fleet_notice.as_deref()
    }

    /// The run list's order: indexes into the runs.
    pub fn run_rows(&self) -> &[usize] {
        &self.run_rows
    }

    /// The seq to keep for each run as "last looked at": its newest, but
    /// for a run that ended and was not opened since, the one kept before
    /// (`None`: keep nothing), so it is still new next time.
    pub fn looked_marks(&self) -> Vec<Option<u64>> {
        self.runs
            .iter()
            .map(|r| {
                if rows::fleet::ended_unseen(r) {
                    r.looked_mark
                } else {
                    Some(r.state.seq)
                }
            })
            .collect()
    }

    /// Opens run `index` on its Criteria tab.
    pub(crate) fn open_run(&mut self, index: usize) {
        self.current = index;
        self.screen = Screen::Run;
        self.tab = Tab::Criteria;
        self.selected = [0; 6];
        self.filter.clear();
        self.iteration = None;
        if let Some(r) = self.runs.get_mut(index)
            && r.state.ended.is_some()
        {
            r.looked_end = true;
        }
        self.refresh();
    }

    /// `n` with several runs: the open gate that has waited longest, of any
    /// run; on a gate already, the next one in that order (round to the first).
    pub(crate) fn next_gate_of_any_run(&mut self) {
        let mut open: Vec<(bool, Option<Timestamp>, u64, usize, usize)> = Vec::new();
        for (r, run) in self.runs.iter().enumerate() {
            for (g, gate) in run.state.human_gates.iter().enumerate() {
                if gate.is_open() {
                    let t = gate.requested_at.parse::<Timestamp>().ok();
                    open.push((t.is_none(), t, gate.requested_seq, r, g));
                }
            }
        }
        if open.is_empty() {
            self.status = Some("no human gate is waiting in any run".into());
            return;
        }
        open.sort();
        let here = match (self.screen, self.tab, self.selected_row()) {
            (Screen::Run, Tab::Gates, Some(RowKey::Gate(g))) => {
                open.iter().position(|o| (o.3, o.4) == (self.current, g))
            }
            _ => None,
        };
        let (_, _, _, run, gate) = match here {
            Some(k) => open[(k + 1) % open.len()],
            None => open[0],
        };
        if self.screen != Screen::Run || self.current != run {
            self.open_run(run);
        }
        self.filter.clear();
        self.tab = Tab::Gates;
        self.refresh();
        if let Some(pos) = self.rows.iter().position(|r| *r == RowKey::Gate(gate)) {
            self.selected[Tab::Gates.index()] = pos;
        }
        let waiting = open.len();
        self.status = Some(format!(
            "{waiting} gate{} waiting in all runs",
            if waiting == 1 { "" } else { "s" }
        ));
    }
}
