//! The app: the folded state of the run(s) plus everything the person did
//! to the view (tab, selection, filter, dialog...). No I/O happens here:
//! inputs arrive through `on_*` methods and [`App::update`], and anything
//! that must touch the world leaves as an [`Effect`].

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::action::Action;
use super::clock::Clock;
use super::code_pane::CodePane;
use super::config::{Config, ThemeKind};
use super::dialog::{Dialog, Outcome};
use super::effect::Effect;
use super::rows::{self, CriterionLine, LogEntry, RowKey};
use super::theme::Theme;
use crate::history::Events;
use crate::model::State;
use crate::recorder::RecordError;

mod away;
mod fleet;
pub mod parts;
mod update;

pub use crate::model::Bucket;
pub use parts::{FindingSort, LogView, Problem, ReplayBar, Run, Tab};

/// Which screen is up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    /// The list of runs (several runs watched).
    RunList,
    /// One run.
    Run,
}

/// Where keys go: one mode at a time.
#[derive(Debug)]
pub enum Mode {
    /// The tables: keys are actions.
    Browse,
    /// Typing the filter.
    Filter,
    /// The help overlay (any key closes it), over the dialog when one is open.
    Help(Option<Box<Dialog>>),
    /// What changed since the previous iteration, verdicts then code:
    /// arrows and pages scroll, `/` searches, `n` finds again, esc closes.
    Diff(Box<CodePane>),
    /// The decision dialog.
    Dialog(Box<Dialog>),
    /// "Quit anyway?" while the dialog holds a typed reason; the dialog waits under it.
    ConfirmQuit(Box<Dialog>),
    /// "Stop the run?" when the app owns the engine that drives it; the
    /// dialog, if one was open, waits under it.
    ConfirmStop(Option<Box<Dialog>>),
}

/// The question `q` asks when leaving would stop the run's engine.
pub const STOP_QUESTION: &str =
    "stop the run? agents are stopped, the run can be resumed with `loopwatch run` (y/n)";

/// The app state.
pub struct App {
    pub(crate) clock: Box<dyn Clock>,
    pub(crate) config: Config,
    pub(crate) theme: Theme,
    pub(crate) runs: Vec<Run>,
    pub(crate) current: usize,
    pub(crate) screen: Screen,
    pub(crate) looking_in: Option<PathBuf>,
    pub(crate) tab: Tab,
    pub(crate) selected: [usize; 6],
    pub(crate) run_selected: usize,
    pub(crate) filter: String,
    pub(crate) mode: Mode,
    pub(crate) sort: FindingSort,
    pub(crate) iteration: Option<u32>,
    pub(crate) status: Option<String>,
    /// What happened while the person was away, until a key dismisses it.
    pub(crate) digest: Option<String>,
    /// The seq of each run when the terminal lost focus.
    pub(crate) away_from: Option<Vec<u64>>,
    pub(crate) warnings: Vec<String>,
    pub(crate) replay: Option<ReplayBar>,
    /// How the data arrives, when it is worth saying (polling, a foreign state.json).
    pub(crate) source_note: Option<String>,
    pub(crate) page: usize,
    /// Rows of the current tab, filtered and sorted (refreshed on every change).
    pub(crate) rows: Vec<RowKey>,
    pub(crate) criteria: Vec<CriterionLine>,
    /// The review rounds each finding of the shown iteration was seen in
    /// (the finding ledger), by index; computed for the Findings tab.
    pub(crate) finding_rounds: Vec<Vec<u32>>,
    pub(crate) log_entries: Vec<LogEntry>,
    /// The engine driving the run lives in this process: leaving stops it.
    pub(crate) owns_engine: bool,
    /// Folders are searched for runs: the run list is home, even with one run or none.
    pub(crate) fleet: bool,
    /// The folders searched (the list names worktrees relative to them).
    pub(crate) fleet_roots: Vec<PathBuf>,
    /// The run list's order (indexes into `runs`), refreshed with the rows.
    pub(crate) run_rows: Vec<usize>,
    /// One line over the run list: runs polled, folders that cannot be searched.
    pub(crate) fleet_notice: Option<String>,
    /// The person moved in the run list: the selection follows that run
    /// when the order changes (until then it stays on the top row).
    pub(crate) run_picked: bool,
    /// What `run()` gives while a searched folder holds no run yet.
    pub(crate) placeholder: Run,
}

impl App {
    /// An app watching one run, whose `.pipeline` folder is `pipeline`.
    pub fn new(config: Config, theme: ThemeKind, clock: Box<dyn Clock>, pipeline: PathBuf) -> App {
        let warnings = config.warnings.clone();
        let mut app = App {
            clock,
            config,
            theme: Theme::new(theme),
            runs: vec![Run {
                pipeline,
                ..Run::default()
            }],
            current: 0,
            screen: Screen::Run,
            looking_in: None,
            tab: Tab::Criteria,
            selected: [0; 6],
            run_selected: 0,
            filter: String::new(),
            mode: Mode::Browse,
            sort: FindingSort::Severity,
            iteration: None,
            status: None,
            digest: None,
            away_from: None,
            warnings,
            replay: None,
            source_note: None,
            page: 10,
            rows: Vec::new(),
            criteria: Vec::new(),
            finding_rounds: Vec::new(),
            log_entries: Vec::new(),
            owns_engine: false,
            fleet: false,
            fleet_roots: Vec::new(),
            run_rows: Vec::new(),
            fleet_notice: None,
            run_picked: false,
            placeholder: Run::default(),
        };
        app.refresh();
        app
    }

    /// Watches several runs: the run list comes first.
    pub fn set_runs(&mut self, pipelines: Vec<PathBuf>) {
        self.runs = pipelines
            .into_iter()
            .map(|pipeline| Run {
                pipeline,
                ..Run::default()
            })
            .collect();
        if self.runs.is_empty() {
            self.runs.push(Run::default());
        }
        self.current = 0;
        self.screen = if self.runs.len() > 1 {
            Screen::RunList
        } else {
            Screen::Run
        };
        self.refresh();
    }

    /// Says the engine driving the run lives in this process (`loopwatch
    /// run`): then quitting stops the run, and `q` asks first.
    pub fn set_owns_engine(&mut self, owns: bool) {
        self.owns_engine = owns;
    }

    /// True when quitting stops the run's engine.
    pub fn owns_engine(&self) -> bool {
        self.owns_engine
    }

    /// No `.pipeline` yet: the app says where it looked (`None` once one appears).
    pub fn set_looking_in(&mut self, path: Option<PathBuf>) {
        self.looking_in = path;
    }

    /// The state of the current run to show, with the events up to it.
    pub fn on_state(&mut self, state: State, events: impl Into<Events>) -> Vec<Effect> {
        self.on_run_state(self.current, state, events)
    }

    /// The state of run `index` to show, with the events up to it (a shared
    /// handle on the store's events: nothing is copied). Returns the bell
    /// and terminal notification of gates that opened since the last state
    /// (never on the first state, never in replay); the hook and webhook are
    /// sent by the event loop, once per gate across processes.
    pub fn on_run_state(
        &mut self,
        index: usize,
        state: State,
        events: impl Into<Events>,
    ) -> Vec<Effect> {
        let replaying = self.replay.is_some();
        let Some(run) = self.runs.get_mut(index) else {
            return Vec::new();
        };
        run.events = events.into();
        let mut effects = Vec::new();
        let open: BTreeSet<String> = state
            .open_human_gates()
            .map(|g| g.request.id.clone())
            .collect();
        for id in open.difference(&run.announced) {
            if run.loaded && !replaying {
                if self.config.bell {
                    effects.push(Effect::Bell);
                }
                if self.config.shared.notify.terminal != crate::notify::TerminalNotice::Off
                    && let Some(g) = state.human_gate(id)
                {
                    effects.push(Effect::TerminalNotice {
                        gate: id.clone(),
                        text: format!(
                            "{} ({}) waits on you: {}",
                            id, g.request.kind, g.request.summary
                        ),
                    });
                }
            }
        }
        // Keep decided gates in the set so a gate never rings twice.
        run.announced.extend(open);
        run.state = state;
        run.loaded = true;
        let now = self.clock.now();
        if index == self.current
            && let Some(d) = self.mode.dialog_mut()
        {
            d.on_state(&self.runs[index].state, now);
        }
        if index == self.current
            && self.screen == Screen::Run
            && self.runs[index].state.ended.is_some()
        {
            // Ended under the person's eyes: seen.
            self.runs[index].looked_end = true;
        }
        self.refresh();
        effects
    }

    /// A gate's notification finished: a failure is shown (it is already
    /// logged); a success says nothing.
    pub fn on_notified(&mut self, id: &str, result: Result<crate::notify::Announced, String>) {
        let failures = match result {
            Ok(a) => a.failures,
            Err(e) => vec![format!("cannot record notify.sent: {e}")],
        };
        if !failures.is_empty() {
            self.status = Some(format!(
                "notification of {id} failed: {}",
                failures.join("; ")
            ));
        }
    }

    /// The write of a decision finished.
    pub fn on_write_result(&mut self, result: Result<(), RecordError>) {
        let Some(d) = self.mode.dialog_mut() else {
            return;
        };
        let saved = d.chosen.map(|c| format!("decision saved ({}: {c})", d.id));
        if d.on_write_result(result) {
            self.status = saved;
            self.mode = Mode::Browse;
        }
    }

    /// The evidence asked for with [`Effect::CheckEvidence`] was
    /// recomputed: the open dialog of that gate takes it.
    pub fn on_evidence_checked(
        &mut self,
        id: &str,
        against: &str,
        apply: bool,
        fresh: crate::recorder::evidence::Refreshed,
    ) {
        let now = self.clock.now();
        if let Some(d) = self.mode.dialog_mut().filter(|d| d.id == id) {
            d.on_checked(against, apply, fresh, now);
        }
    }

    /// A log asked for with [`Effect::LoadLog`] was read (or not).
    pub fn on_log_loaded(&mut self, path: &Path, result: Result<Vec<u8>, String>) {
        let Some(run) = self.runs.get_mut(self.current) else {
            return;
        };
        let Ok(rel) = path.strip_prefix(&run.pipeline) else {
            return;
        };
        let key = rel.to_string_lossy().into_owned();
        if run.following.as_deref() == Some(key.as_str()) {
            run.following = None;
        }
        // An agent CLI's stream is read once, here, as its transcript.
        let format = self
            .log_entries
            .iter()
            .find(|e| e.path == key)
            .and_then(|e| e.format);
        let view = match (result, format) {
            (Ok(bytes), Some(f)) => {
                LogView::Transcript(crate::parse::agent_stream::transcript(f, &bytes, false))
            }
            (Ok(bytes), None) => LogView::Loaded(bytes),
            (Err(e), _) => LogView::Failed(e),
        };
        run.logs.insert(key, view);
    }

    /// The pager opened by [`Effect::OpenPager`] was closed (or could not
    /// start): `status` says which.
    pub fn on_pager_closed(&mut self, status: String) {
        self.status = Some(status);
    }

    /// Shows (or clears) a journal problem banner on the current run.
    pub fn set_problem(&mut self, problem: Option<Problem>) {
        self.set_run_problem(self.current, problem);
    }

    /// Shows (or clears) the journal problem banner of run `index`.
    pub fn set_run_problem(&mut self, index: usize, problem: Option<Problem>) {
        if let Some(run) = self.runs.get_mut(index) {
            run.problem = problem;
        }
    }

    /// Says how the data arrives when it is not the usual way: the watcher
    /// fell back to polling, or only a foreign `state.json` is read.
    pub fn set_source_note(&mut self, note: Option<String>) {
        self.source_note = note;
    }

    /// Enters, moves or leaves replay mode (the replay driver calls it).
    pub fn set_replay(&mut self, bar: Option<ReplayBar>) {
        self.replay = bar;
    }

    /// The terminal's size changed: page moves follow the table's height.
    pub fn on_resize(&mut self, _width: u16, height: u16) {
        self.page = usize::from(height).saturating_sub(12).max(1);
    }

    /// A key from the terminal: handled by the mode it arrives in.
    pub fn on_key(&mut self, key: &KeyEvent) -> Vec<Effect> {
        let ctrl_c =
            key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL);
        if self.digest.take().is_some() {
            // Any key dismisses the digest, and does nothing else.
            return Vec::new();
        }
        match std::mem::replace(&mut self.mode, Mode::Browse) {
            Mode::ConfirmQuit(d) => {
                self.confirm_key(key, ctrl_c, Mode::Dialog(d), "quit cancelled")
            }
            Mode::ConfirmStop(under) => {
                let back = under.map_or(Mode::Browse, Mode::Dialog);
                self.confirm_key(key, ctrl_c, back, "the run goes on")
            }
            mode if ctrl_c => {
                self.mode = mode;
                self.update(Action::Quit)
            }
            Mode::Dialog(d) => self.dialog_key(key, d),
            Mode::Filter => {
                self.mode = Mode::Filter;
                self.edit_filter(key);
                Vec::new()
            }
            Mode::Help(under) => self.overlay_key(key, under),
            Mode::Diff(pane) => self.diff_key(key, pane),
            Mode::Browse => match self.config.keymap.action(key) {
                Some(a) => self.update(a),
                None => Vec::new(),
            },
        }
    }

    /// The answer to "quit anyway?" or "stop the run?": yes (or ctrl-c
    /// again) quits, which stops an engine the app owns; anything else goes
    /// back to `back`, what was under the question, and says `cancelled`.
    fn confirm_key(
        &mut self,
        key: &KeyEvent,
        ctrl_c: bool,
        back: Mode,
        cancelled: &str,
    ) -> Vec<Effect> {
        self.mode = back;
        if matches!(key.code, KeyCode::Char('y' | 'Y')) || ctrl_c {
            return vec![Effect::Quit];
        }
        self.status = Some(cancelled.into());
        Vec::new()
    }

    /// A key in the decision dialog; quit and help keep working there.
    fn dialog_key(&mut self, key: &KeyEvent, mut d: Box<Dialog>) -> Vec<Effect> {
        let outcome = d.on_key(key, self.clock.now());
        self.mode = Mode::Dialog(d);
        match outcome {
            Outcome::Stay => Vec::new(),
            Outcome::Cancel => {
                self.mode = Mode::Browse;
                Vec::new()
            }
            Outcome::Confirm(req) => vec![Effect::WriteDecision(req)],
            Outcome::Refresh => {
                let sources = crate::recorder::evidence::Sources::of(self.state());
                match self.mode.dialog_mut() {
                    Some(d) => vec![Effect::CheckEvidence(d.check(sources, true))],
                    None => Vec::new(),
                }
            }
            Outcome::Unhandled => match self.config.keymap.action(key) {
                Some(a @ (Action::Quit | Action::Help)) => self.update(a),
                _ => Vec::new(),
            },
        }
    }

    /// Any key closes an overlay (back to what was under it); its own key
    /// does not reopen it, and quit still quits.
    fn overlay_key(&mut self, key: &KeyEvent, under: Option<Box<Dialog>>) -> Vec<Effect> {
        self.mode = under.map_or(Mode::Browse, Mode::Dialog);
        match self.config.keymap.action(key) {
            Some(Action::Quit) => self.update(Action::Quit),
            _ => Vec::new(),
        }
    }

    /// A key in the `d` overlay: scrolling and search; esc, `d` or any
    /// other key closes it (quit still quits).
    fn diff_key(&mut self, key: &KeyEvent, mut pane: Box<CodePane>) -> Vec<Effect> {
        let page = isize::try_from(self.page.max(1)).unwrap_or(10);
        if let Some(typed) = pane.typing.as_mut() {
            match key.code {
                KeyCode::Enter => {
                    pane.query = pane.typing.take().unwrap_or_default();
                    pane.find_next(true);
                }
                KeyCode::Esc => pane.typing = None,
                KeyCode::Backspace => {
                    typed.pop();
                }
                KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                    typed.push_str(&crate::sanitize::sanitize_input(&c.to_string()));
                }
                _ => {}
            }
            self.mode = Mode::Diff(pane);
            return Vec::new();
        }
        match key.code {
            KeyCode::Up => pane.scroll_by(-1),
            KeyCode::Down => pane.scroll_by(1),
            KeyCode::PageUp => pane.scroll_by(-page),
            KeyCode::PageDown => pane.scroll_by(page),
            KeyCode::Home => pane.scroll = 0,
            KeyCode::End => pane.scroll_by(isize::MAX),
            KeyCode::Char('/') => pane.typing = Some(String::new()),
            KeyCode::Char('n') => pane.find_next(false),
            _ => return self.overlay_key(key, None),
        }
        self.mode = Mode::Diff(pane);
        Vec::new()
    }

    /// The code diff asked for the `d` overlay arrived; ignored when the
    /// overlay was closed or now shows other iterations.
    pub fn on_code_loaded(
        &mut self,
        from: u32,
        to: u32,
        result: Result<Vec<crate::code::FileDiff>, String>,
    ) {
        if let Mode::Diff(pane) = &mut self.mode
            && (pane.from, pane.to) == (from, to)
            && pane.state == crate::tui::code_pane::CodeState::Loading
        {
            pane.on_loaded(result);
        }
    }

    /// A bracketed paste: only a decision reason takes it; it never confirms.
    pub fn on_paste(&mut self, text: &str) {
        let now = self.clock.now();
        if let Mode::Dialog(d) = &mut self.mode {
            d.on_paste(text, now);
        } else if matches!(self.mode, Mode::Filter) {
            self.filter.push_str(&crate::sanitize::sanitize_input(text));
            self.refresh();
        }
    }

    /// The run on screen.
    pub fn run(&self) -> &Run {
        self.runs.get(self.current).unwrap_or(&self.placeholder)
    }

    /// The terminal's title: the gates waiting in every run watched, and
    /// the current run's id.
    pub fn title(&self) -> String {
        let waiting = self
            .runs
            .iter()
            .map(|r| r.state.open_human_gates().count())
            .sum();
        let run = self.state().run.as_ref().map_or("", |r| r.id.as_str());
        crate::notify::terminal::title(waiting, run)
    }

    /// The state of the run on screen.
    pub fn state(&self) -> &State {
        &self.run().state
    }

    /// The status line (last message), if any.
    pub fn status(&self) -> Option<&str> {
        self.status.as_deref()
    }

    /// When the open dialog's keys start to count, while that is still to
    /// come: the event loop redraws then, so the options show they are ready.
    pub fn dialog_arms_at(&self) -> Option<jiff::Timestamp> {
        let d = self.dialog()?;
        (!d.armed(self.clock.now())).then(|| d.armed_at())
    }

    /// The open dialog, if any (also while help or "quit anyway?" is over it).
    pub fn dialog(&self) -> Option<&Dialog> {
        match &self.mode {
            Mode::Dialog(d)
            | Mode::ConfirmQuit(d)
            | Mode::ConfirmStop(Some(d))
            | Mode::Help(Some(d)) => Some(d),
            _ => None,
        }
    }

    /// Where keys go now.
    pub fn mode(&self) -> &Mode {
        &self.mode
    }

    /// The tab on screen.
    pub fn tab(&self) -> Tab {
        self.tab
    }

    /// The screen up.
    pub fn screen(&self) -> Screen {
        self.screen
    }

    /// Warnings from the config file, shown at start.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The iteration the per-iteration tabs show (the latest unless one was chosen).
    pub fn shown_iteration(&self) -> u32 {
        self.iteration
            .unwrap_or_else(|| self.state().iteration_number())
    }

    /// The selected row of the current tab, if any.
    pub fn selected_row(&self) -> Option<RowKey> {
        self.rows.get(self.selected[self.tab.index()]).copied()
    }

    /// Index of the selected row in [`App::rows`] terms.
    pub fn selected_index(&self) -> usize {
        self.selected[self.tab.index()]
    }

    /// Recomputes the rows of the current tab and keeps the selection in range.
    pub(crate) fn refresh(&mut self) {
        self.criteria = rows::criterion_lines(self);
        self.finding_rounds = if self.tab == Tab::Findings {
            rows::findings::rounds_of_shown(self)
        } else {
            Vec::new()
        };
        self.log_entries = rows::log_entries(self.state());
        self.rows = rows::tab_rows(self);
        let i = self.tab.index();
        self.selected[i] = self.selected[i].min(self.rows.len().saturating_sub(1));
        // The selection follows its run when the order changes.
        let selected_run = self.run_rows.get(self.run_selected).copied();
        self.run_rows = rows::run_order(self);
        if let Some(pos) = selected_run
            .filter(|_| self.run_picked)
            .and_then(|r| self.run_rows.iter().position(|x| *x == r))
        {
            self.run_selected = pos;
        }
        self.run_selected = self.run_selected.min(self.runs.len().saturating_sub(1));
    }

    fn edit_filter(&mut self, key: &KeyEvent) {
        match key.code {
            KeyCode::Esc => {
                self.filter.clear();
                self.mode = Mode::Browse;
            }
            KeyCode::Enter => self.mode = Mode::Browse,
            KeyCode::Backspace => {
                self.filter.pop();
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.filter.push(c)
            }
            _ => {}
        }
        self.selected[self.tab.index()] = 0;
        self.refresh();
    }
}

impl Mode {
    /// The dialog, wherever it waits.
    fn dialog_mut(&mut self) -> Option<&mut Dialog> {
        match self {
            Mode::Dialog(d)
            | Mode::ConfirmQuit(d)
            | Mode::ConfirmStop(Some(d))
            | Mode::Help(Some(d)) => Some(d),
            _ => None,
        }
    }
}

impl rows::Query for App {
    fn state(&self) -> &State {
        App::state(self)
    }

    fn run(&self) -> &Run {
        App::run(self)
    }

    fn runs(&self) -> &[Run] {
        &self.runs
    }

    fn tab(&self) -> Tab {
        self.tab
    }

    fn filter(&self) -> &str {
        &self.filter
    }

    fn sort(&self) -> FindingSort {
        self.sort
    }

    fn shown_iteration(&self) -> u32 {
        App::shown_iteration(self)
    }

    fn criteria(&self) -> &[CriterionLine] {
        &self.criteria
    }

    fn log_entries(&self) -> &[LogEntry] {
        &self.log_entries
    }

    fn finding_rounds(&self) -> &[Vec<u32>] {
        &self.finding_rounds
    }

    fn fleet_roots(&self) -> &[PathBuf] {
        App::fleet_roots(self)
    }

    fn now(&self) -> jiff::Timestamp {
        self.clock.now()
    }
}

#[cfg(test)]
mod tests;
