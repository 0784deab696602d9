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
    pub fn set_fleet(&mut self, roots: Vec<PathBuf>) {
        self.fleet = true;
        self.fleet_roots = roots;
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

    /// The folders searched for runs.
    pub fn fleet_roots(&self) -> &[PathBuf] {
        &self.fleet_roots
    }

    /// The line over the run list, if any.
    pub fn fleet_notice(&self) -> Option<&str> {
        self.fleet_notice.as_deref()
    }

    /// True when the screen shows something the clock moves (an age, an
    /// elapsed time): the 1 s tick then needs a frame. The run list shows
    /// ages only of the gates waiting.
    pub fn shows_clock(&self) -> bool {
        match self.screen {
            Screen::Run => true,
            Screen::RunList => self
                .runs
                .iter()
                .any(|r| r.state.open_human_gates().next().is_some()),
        }
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
        self.run_picked = true;
        if let Some(pos) = self.run_rows.iter().position(|r| *r == index) {
            self.run_selected = pos;
        }
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
        let gates = crate::util::count(waiting, "gate");
        self.status = Some(format!("{gates} waiting in all runs"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::event::RunEnded;
    use crate::model::{EndStatus, Event, EventBody, HumanGateKind};
    use crate::tui::testkit::{app_with, ch, ev, evidence, key, request, run_started, state_of};
    use ratatui::crossterm::event::KeyCode;

    /// A run with gates opened at the given seconds past 10:00 (the event's time).
    fn waiting(opened: &[u64]) -> Vec<Event> {
        let mut evs = vec![ev(1, run_started())];
        for (k, s) in opened.iter().enumerate() {
            evs.push(ev(
                *s,
                request(
                    &format!("hg-1-manual-{}", k + 1),
                    HumanGateKind::OutOfScope,
                    evidence(),
                ),
            ));
        }
        evs
    }

    fn ended(at: u64) -> Vec<Event> {
        vec![
            ev(1, run_started()),
            ev(
                at,
                EventBody::RunEnded(Box::new(RunEnded {
                    status: EndStatus::Complete,
                    report: None,
                })),
            ),
        ]
    }

    /// A fleet app with these runs, in this order (`/r/<i>/.pipeline`).
    fn fleet(runs: &[Vec<Event>]) -> App {
        let (mut app, _) = app_with(&[]);
        app.set_fleet(vec!["/r".into()]);
        for (i, evs) in runs.iter().enumerate() {
            let at = app.add_run(format!("/r/{i}/.pipeline").into());
            let _ = app.on_run_state(at, state_of(evs), evs.as_slice());
        }
        app
    }

    #[test]
    fn waiting_first_oldest_wait_on_top_then_running_then_ended_unseen_then_settled() {
        let mut app = fleet(&[
            ended(5),                   // 0: ended, never looked at
            vec![ev(1, run_started())], // 1: running
            waiting(&[40]),             // 2: waiting since 10:00:40
            waiting(&[30, 50]),         // 3: waiting since 10:00:30
            ended(7),                   // 4: ended, seen last time at seq 9
        ]);
        app.set_looked_mark(4, Some(9));
        assert_eq!(app.run_rows(), &[3, 2, 1, 0, 4]);
        assert_eq!(
            rows::fleet::group(&app.runs[0]),
            rows::fleet::Group::EndedUnseen
        );
        // Run 3's selection follows it when the order changes.
        let _ = app.update(crate::tui::Action::Down);
        let _ = app.update(crate::tui::Action::Up);
        assert_eq!(app.run_selected, 0);
        let evs = waiting(&[20]);
        let _ = app.on_run_state(1, state_of(&evs), evs.as_slice());
        assert_eq!(app.run_rows(), &[1, 3, 2, 0, 4]);
        assert_eq!(app.run_rows()[app.run_selected], 3);
        let evs = vec![ev(1, run_started())];
        let _ = app.on_run_state(1, state_of(&evs), evs.as_slice());
        // Opening the unseen ended run settles it; the selection follows the run.
        app.run_selected = 3;
        let _ = app.update(crate::tui::Action::Open);
        assert_eq!(app.current, 0);
        let _ = app.update(crate::tui::Action::Back);
        assert_eq!(
            rows::fleet::group(&app.runs[0]),
            rows::fleet::Group::Settled
        );
        // Both settled now: by path.
        assert_eq!(app.run_rows(), &[3, 2, 1, 0, 4]);
        assert_eq!(app.run_rows()[app.run_selected], 0);
        // Next session: it ended before the seq kept, so it stays settled.
        assert_eq!(app.looked_marks()[0], Some(5));
        assert_eq!(app.looked_marks()[4], Some(7));
        let (mut b, _) = app_with(&[]);
        b.set_fleet(Vec::new());
        let at = b.add_run("/r/0/.pipeline".into());
        let evs = ended(5);
        let _ = b.on_run_state(at, state_of(&evs), evs.as_slice());
        assert_eq!(b.looked_marks(), vec![None], "never seen: nothing kept");
        // Ended after the mark and not opened: the old mark is kept.
        b.set_looked_mark(0, Some(3));
        assert_eq!(
            rows::fleet::group(&b.runs[0]),
            rows::fleet::Group::EndedUnseen
        );
        assert_eq!(b.looked_marks(), vec![Some(3)]);
    }

    #[test]
    fn n_goes_to_the_oldest_waiting_gate_of_any_run_then_the_next() {
        let mut app = fleet(&[
            waiting(&[40]),
            vec![ev(1, run_started())],
            waiting(&[30, 50]),
        ]);
        let _ = app.on_key(&ch('n'));
        assert_eq!(
            (app.screen(), app.current, app.tab()),
            (Screen::Run, 2, Tab::Gates)
        );
        assert_eq!(app.selected_row(), Some(RowKey::Gate(0)));
        let _ = app.on_key(&ch('n'));
        assert_eq!(
            (app.current, app.selected_row()),
            (0, Some(RowKey::Gate(0)))
        );
        let _ = app.on_key(&ch('n'));
        assert_eq!(
            (app.current, app.selected_row()),
            (2, Some(RowKey::Gate(1)))
        );
        let _ = app.on_key(&ch('n'));
        assert_eq!(
            (app.current, app.selected_row()),
            (2, Some(RowKey::Gate(0))),
            "round"
        );
        let _ = app.on_key(&key(KeyCode::Esc));
        assert_eq!(app.screen(), Screen::RunList);
        let mut none = fleet(&[vec![ev(1, run_started())]]);
        let _ = none.on_key(&ch('n'));
        assert_eq!(none.screen(), Screen::RunList);
        assert_eq!(none.status(), Some("no human gate is waiting in any run"));
    }

    #[test]
    fn a_fleet_with_no_run_yet_shows_the_list_and_takes_keys() {
        let (mut app, _) = app_with(&[]);
        app.set_fleet(vec!["/r".into()]);
        assert_eq!(app.screen(), Screen::RunList);
        for c in ['j', 'k', 'n', '1'] {
            let _ = app.on_key(&ch(c));
        }
        let _ = app.update(crate::tui::Action::Open);
        assert_eq!(app.screen(), Screen::RunList);
        assert_eq!(app.state().seq, 0);
        let i = app.add_run("/r/a/.pipeline".into());
        assert_eq!(i, 0);
        app.set_run_polled(0, Some("limit".into()));
        assert_eq!(app.runs[0].polled.as_deref(), Some("limit"));
    }
}
