//! [`App::update`]: what each action does to the app, and the effects it asks for.

use std::path::{Component, Path};

use super::{App, LogView, Mode, STOP_QUESTION, Screen, Tab};
use crate::recorder::evidence::Sources;
use crate::tui::action::Action;
use crate::tui::dialog::Dialog;
use crate::tui::effect::{Effect, ReplayMove};
use crate::tui::rows::{self, RowKey};

impl App {
    /// Applies an action; returns what the event loop must do.
    pub fn update(&mut self, action: Action) -> Vec<Effect> {
        let mut effects = Vec::new();
        match action {
            Action::TabCriteria => self.set_tab(Tab::Criteria),
            Action::TabFindings => self.set_tab(Tab::Findings),
            Action::TabSecurity => self.set_tab(Tab::Security),
            Action::TabGates => self.set_tab(Tab::Gates),
            Action::TabTimeline => self.set_tab(Tab::Timeline),
            Action::TabLogs => self.set_tab(Tab::Logs),
            Action::NextTab => self.set_tab(Tab::ALL[(self.tab.index() + 1) % Tab::ALL.len()]),
            Action::PrevTab => {
                self.set_tab(Tab::ALL[(self.tab.index() + Tab::ALL.len() - 1) % Tab::ALL.len()])
            }
            Action::Down => self.move_by(1),
            Action::Up => self.move_by(-1),
            Action::PageDown => self.move_by(isize::try_from(self.page).unwrap_or(10)),
            Action::PageUp => self.move_by(-isize::try_from(self.page).unwrap_or(10)),
            Action::Top => self.move_by(isize::MIN / 2),
            Action::Bottom => self.move_by(isize::MAX / 2),
            Action::Open => effects.extend(self.open()),
            Action::Back => self.back(),
            Action::Filter => {
                if self.screen == Screen::Run && matches!(self.mode, Mode::Browse) {
                    self.mode = Mode::Filter;
                }
            }
            Action::NextHumanGate => self.next_human_gate(),
            Action::PrevIteration => effects.extend(self.step_iteration(-1)),
            Action::NextIteration => effects.extend(self.step_iteration(1)),
            Action::ReplayBack => effects.push(Effect::Replay(ReplayMove::Back)),
            Action::ReplayForward => effects.push(Effect::Replay(ReplayMove::Forward)),
            Action::ReplayFirst => effects.push(Effect::Replay(ReplayMove::First)),
            Action::ReplayLive => effects.push(Effect::Replay(ReplayMove::Live)),
            Action::Diff => {
                if matches!(self.mode, Mode::Diff(_)) {
                    self.mode = Mode::Browse;
                } else if let Some(before) =
                    rows::previous_iteration(self.state(), self.shown_iteration())
                {
                    if matches!(self.mode, Mode::Browse) {
                        let (from, to) = (before.iteration, self.shown_iteration());
                        let trees = crate::code::RunTrees::from_events(self.run().events.iter());
                        let worktree = crate::journal::Pipeline::at(self.run().pipeline.clone())
                            .worktree()
                            .to_path_buf();
                        let (pane, req) = crate::tui::code_pane::CodePane::open(
                            worktree,
                            from,
                            to,
                            trees.of(from),
                            trees.of(to),
                        );
                        self.mode = Mode::Diff(Box::new(pane));
                        effects.extend(req.map(Effect::LoadCode));
                    }
                } else {
                    self.status = Some(format!(
                        "iteration {} has no previous iteration to compare",
                        self.shown_iteration()
                    ));
                }
            }
            Action::OpenInPager => effects.extend(self.open_in_pager()),
            Action::Copy => {
                if let Some(key) = self.selected_row() {
                    // What leaves for the clipboard (another program, a
                    // chat, a ticket) never carries a secret a row shows.
                    let text = rows::row_text(self, key);
                    let scrubbed = crate::redact::scrub(&text);
                    self.status = Some(match scrubbed {
                        std::borrow::Cow::Borrowed(_) => "row copied to the clipboard".into(),
                        std::borrow::Cow::Owned(_) => {
                            "row copied to the clipboard, secrets redacted".into()
                        }
                    });
                    effects.push(Effect::CopyToClipboard(scrubbed.into_owned()));
                }
            }
            Action::Sort => {
                if self.tab == Tab::Findings {
                    self.sort = self.sort.next();
                    self.status = Some(format!("findings sorted by {}", self.sort.name()));
                    self.refresh();
                }
            }
            Action::Help => {
                self.mode = match std::mem::replace(&mut self.mode, Mode::Browse) {
                    Mode::Help(under) => under.map_or(Mode::Browse, Mode::Dialog),
                    Mode::Dialog(d) | Mode::ConfirmQuit(d) => Mode::Help(Some(d)),
                    Mode::ConfirmStop(under) => Mode::Help(under),
                    Mode::Browse | Mode::Filter | Mode::Diff(_) => Mode::Help(None),
                }
            }
            Action::Quit => match std::mem::replace(&mut self.mode, Mode::Browse) {
                // Leaving stops the engine of a run still going: ask first
                // (one question, even over a typed reason).
                mode if self.owns_engine && self.state().ended.is_none() => {
                    let typed = matches!(&mode, Mode::Dialog(d) if d.has_typed_reason());
                    self.mode = Mode::ConfirmStop(match mode {
                        Mode::Dialog(d) | Mode::ConfirmQuit(d) | Mode::Help(Some(d)) => Some(d),
                        _ => None,
                    });
                    self.status = Some(if typed {
                        format!("{STOP_QUESTION} · the reason being typed is lost")
                    } else {
                        STOP_QUESTION.to_string()
                    });
                }
                Mode::Dialog(d) if d.has_typed_reason() => {
                    self.mode = Mode::ConfirmQuit(d);
                    self.status =
                        Some("a decision reason is being typed: quit anyway? (y/n)".into());
                }
                mode => {
                    self.mode = mode;
                    effects.push(Effect::Quit);
                }
            },
        }
        effects
    }

    fn set_tab(&mut self, tab: Tab) {
        if self.screen == Screen::Run {
            self.tab = tab;
            self.refresh();
        }
    }

    fn move_by(&mut self, delta: isize) {
        if self.screen == Screen::RunList {
            self.run_picked = true;
        }
        let (len, sel) = match self.screen {
            Screen::RunList => (self.runs.len(), &mut self.run_selected),
            Screen::Run => (self.rows.len(), &mut self.selected[self.tab.index()]),
        };
        let last = len.saturating_sub(1);
        *sel = sel.saturating_add_signed(delta).min(last);
    }

    fn open(&mut self) -> Vec<Effect> {
        if self.screen == Screen::RunList {
            if let Some(&i) = self.run_rows.get(self.run_selected) {
                self.open_run(i);
            }
            return Vec::new();
        }
        match self.selected_row() {
            Some(RowKey::Gate(i)) => {
                let Some(gate) = self.state().human_gates.get(i) else {
                    return Vec::new();
                };
                if self.replay.is_some() {
                    self.status = Some("decisions cannot be taken in replay".into());
                } else if let Some(rec) = &gate.decision {
                    self.status = Some(format!(
                        "{} is already decided: {}",
                        gate.request.id, rec.decision.decision
                    ));
                } else if let Some(x) = &gate.expired {
                    self.status = Some(format!(
                        "{} EXPIRED after {}: {} applied",
                        gate.request.id, x.after, x.action
                    ));
                } else {
                    let mut d = Box::new(Dialog::open(gate, self.clock.now()));
                    // Is the evidence captured still what is there? Asked at once.
                    let check = d.check(Sources::of(self.state()), false);
                    self.mode = Mode::Dialog(d);
                    return vec![Effect::CheckEvidence(check)];
                }
                Vec::new()
            }
            Some(RowKey::Log(i)) => match self.log_entries.get(i) {
                Some(entry) => {
                    let path = entry.path.clone();
                    self.load_log(&path)
                }
                None => Vec::new(),
            },
            Some(RowKey::Finding(i)) => {
                let it = self.shown_iteration();
                let log = self.state().iteration(it).and_then(|iter| {
                    let f = iter.findings.get(i)?;
                    iter.verifications
                        .iter()
                        .find(|v| v.finding == f.id)
                        .map(|v| v.log.clone())
                });
                match log {
                    Some(l) if !l.is_empty() => self.load_log(&l),
                    _ => Vec::new(),
                }
            }
            _ => Vec::new(),
        }
    }

    /// The 1 s tick: while the Logs tab is up on a live run, the running
    /// agent's log is read again (its tail), so it is followed as it grows.
    /// One read at a time; the tail shown stays until the new one arrives.
    pub fn on_tick(&mut self) -> Vec<Effect> {
        if self.screen != Screen::Run || self.tab != Tab::Logs || self.replay.is_some() {
            return Vec::new();
        }
        let Some(run) = self.runs.get_mut(self.current) else {
            return Vec::new();
        };
        let Some(a) = run.state.running_agent() else {
            return Vec::new();
        };
        let rel = a.started.log.clone();
        if run.following.is_some() || !stays_inside(&rel) {
            return Vec::new();
        }
        if matches!(run.logs.get(&rel), Some(LogView::Loading)) {
            return Vec::new();
        }
        let path = run.pipeline.join(&rel);
        run.following = Some(rel);
        vec![Effect::LoadLog(path)]
    }

    /// `o`: the selected row's log, whole, in the pager.
    fn open_in_pager(&mut self) -> Vec<Effect> {
        if self.screen != Screen::Run || !matches!(self.mode, Mode::Browse) {
            return Vec::new();
        }
        let target = match self.selected_row() {
            Some(RowKey::Log(i)) => self.log_entries.get(i).map(|e| (e.path.clone(), e.format)),
            Some(RowKey::Finding(i)) => {
                let it = self.shown_iteration();
                self.state().iteration(it).and_then(|iter| {
                    let f = iter.findings.get(i)?;
                    iter.verifications
                        .iter()
                        .find(|v| v.finding == f.id && !v.log.is_empty())
                        .map(|v| (v.log.clone(), None))
                })
            }
            _ => None,
        };
        let Some((rel, format)) = target else {
            self.status = Some("o shows a log: select one on the Logs tab".into());
            return Vec::new();
        };
        if !stays_inside(&rel) {
            self.status = Some(format!(
                "not opening '{}': the path leaves .pipeline",
                crate::sanitize::sanitize_line(&rel, 60)
            ));
            return Vec::new();
        }
        vec![Effect::OpenPager(crate::tui::pager::PagerRequest {
            pipeline: self.run().pipeline.clone(),
            rel,
            format,
        })]
    }

    /// Asks for a log, relative to `.pipeline/`; a path leaving the folder is refused.
    fn load_log(&mut self, rel: &str) -> Vec<Effect> {
        let p = Path::new(rel);
        if !stays_inside(rel) {
            self.status = Some(format!(
                "not loading '{}': the path leaves .pipeline",
                crate::sanitize::sanitize_line(rel, 60)
            ));
            return Vec::new();
        }
        let Some(run) = self.runs.get_mut(self.current) else {
            return Vec::new();
        };
        if matches!(
            run.logs.get(rel),
            Some(LogView::Loaded(_) | LogView::Transcript(_) | LogView::Loading)
        ) {
            return Vec::new();
        }
        run.logs.insert(rel.to_string(), LogView::Loading);
        vec![Effect::LoadLog(run.pipeline.join(p))]
    }

    fn back(&mut self) {
        if matches!(self.mode, Mode::Help(_) | Mode::Diff(_)) {
            self.mode = match std::mem::replace(&mut self.mode, Mode::Browse) {
                Mode::Help(Some(d)) => Mode::Dialog(d),
                _ => Mode::Browse,
            };
        } else if !self.filter.is_empty() {
            self.filter.clear();
            self.refresh();
        } else if self.screen == Screen::Run && (self.runs.len() > 1 || self.fleet) {
            self.screen = Screen::RunList;
            self.refresh();
        }
    }

    fn next_human_gate(&mut self) {
        if self.runs.len() > 1 || self.fleet {
            self.next_gate_of_any_run();
            return;
        }
        let gates = &self.state().human_gates;
        let open: Vec<usize> = (0..gates.len()).filter(|i| gates[*i].is_open()).collect();
        if open.is_empty() {
            self.status = Some("no human gate is waiting".into());
            return;
        }
        self.filter.clear();
        let on_gate = match (self.tab, self.selected_row()) {
            (Tab::Gates, Some(RowKey::Gate(g))) => Some(g),
            _ => None,
        };
        self.tab = Tab::Gates;
        self.refresh();
        let target = match on_gate {
            Some(cur) => open.iter().copied().find(|g| *g > cur).unwrap_or(open[0]),
            None => open[0],
        };
        if let Some(pos) = self.rows.iter().position(|r| *r == RowKey::Gate(target)) {
            self.selected[Tab::Gates.index()] = pos;
        }
    }

    fn step_iteration(&mut self, dir: i32) -> Vec<Effect> {
        if self.replay.is_some() {
            let m = if dir < 0 {
                ReplayMove::PrevIteration
            } else {
                ReplayMove::NextIteration
            };
            return vec![Effect::Replay(m)];
        }
        let numbers: Vec<u32> = self
            .state()
            .review_iterations
            .iter()
            .map(|i| i.iteration)
            .collect();
        let Some(&latest) = numbers.last() else {
            return Vec::new();
        };
        let cur = self.shown_iteration();
        let pos = numbers
            .iter()
            .position(|n| *n == cur)
            .unwrap_or(numbers.len() - 1);
        let next = if dir < 0 {
            pos.saturating_sub(1)
        } else {
            (pos + 1).min(numbers.len() - 1)
        };
        self.iteration = (numbers[next] != latest).then_some(numbers[next]);
        self.status = Some(format!("iteration {} of {latest}", numbers[next]));
        self.refresh();
        Vec::new()
    }
}

/// True for a non-empty path made only of names (no `..`, no root).
fn stays_inside(rel: &str) -> bool {
    !rel.is_empty()
        && Path::new(rel)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
}
