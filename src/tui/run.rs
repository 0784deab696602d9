//! The event loop: one channel of inputs (file changes, keys, paste,
//! resize, a 1 s tick for the age counter, results of background writes),
//! drained whole, then one frame. Effects the app asks for are performed
//! here, off the drawing path: decisions are written on a blocking thread
//! and their result comes back as an input.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use futures_util::StreamExt;
use ratatui::crossterm::event::{Event as TermEvent, EventStream, KeyCode, KeyEventKind, KeyModifiers};
use tokio::signal::unix::{SignalKind, signal};

use super::app::{App, Problem, ReplayBar};
use super::config::Config;
use super::effect::{Effect, ReplayMove};
use super::terminal::{self, TerminalGuard};
use super::{SystemClock, view};
use crate::history::History;
use crate::journal::{Pipeline, Source, TAIL_BYTES, read_tail, snapshot};
use crate::model::State;
use crate::model::event::HumanDecision;
use crate::recorder::Recorder;
use crate::watch::{Batch, FeedUpdate, Live, ObservedLog};

/// Where `loopwatch replay` starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayStart {
    /// The first event.
    First,
    /// The event with this seq.
    Seq(u64),
    /// The first event of this iteration.
    Iteration(u32),
}

/// The position (events applied) where replay starts: the first event, the
/// event with a seq, or the first event of an iteration (the first event
/// when that iteration does not exist).
pub fn start_position(history: &History, start: ReplayStart) -> usize {
    let k = match start {
        ReplayStart::First => 1,
        ReplayStart::Seq(seq) => history.position_of_seq(seq).max(1),
        ReplayStart::Iteration(n) => {
            history.iteration_starts().iter().find(|(i, _)| *i == n).map_or(1, |(_, pos)| pos + 1)
        }
    };
    k.min(history.len())
}

/// Where a replay key moves from position `k`; `None` for [`ReplayMove::Live`]
/// (leave replay).
pub fn move_target(history: &History, k: usize, m: ReplayMove) -> Option<usize> {
    let starts = history.iteration_starts();
    let target = match m {
        ReplayMove::Back => k.saturating_sub(1).max(1),
        ReplayMove::Forward => k + 1,
        ReplayMove::First => 1,
        ReplayMove::PrevIteration => starts.iter().rev().map(|(_, p)| p + 1).find(|&p| p < k).unwrap_or(1),
        ReplayMove::NextIteration => starts.iter().map(|(_, p)| p + 1).find(|&p| p > k).unwrap_or(history.len()),
        ReplayMove::Live => return None,
    };
    Some(target.min(history.len()))
}

/// Shows position `k` of a history in the app exactly as replay does: the
/// replay bar (position, time and iteration of the event at `k`), then the
/// state after the first `k` events with those events. Returns the position
/// shown (`k` clamped to the history's length).
pub fn show_position(app: &mut App, history: &History, k: usize) -> usize {
    let k = k.min(history.len());
    let state = history.state_at(k);
    let at = k.checked_sub(1).and_then(|i| history.events().get(i)).map(|e| e.at.clone()).unwrap_or_default();
    app.set_replay(Some(ReplayBar { event: k as u64, total: history.len() as u64, at, iteration: state.iteration_number() }));
    // Replay never rings nor runs hooks: the effects are always empty here.
    let _ = app.on_run_state(0, state, &history.events()[..k]);
    k
}

/// Inputs of the loop besides file changes.
#[derive(Debug)]
enum Ui {
    Term(TermEvent),
    TermClosed,
    Tick,
    Quit,
    WriteDone(Result<(), String>),
    LogLoaded(PathBuf, Result<Vec<u8>, String>),
}

/// Opens the live view on these pipelines.
pub fn run_live(pipelines: Vec<Pipeline>) -> anyhow::Result<ExitCode> {
    run(pipelines, None)
}

/// Opens the replay of one pipeline.
pub fn run_replay(pipeline: Pipeline, start: ReplayStart) -> anyhow::Result<ExitCode> {
    run(vec![pipeline], Some(start))
}

fn run(pipelines: Vec<Pipeline>, replay: Option<ReplayStart>) -> anyhow::Result<ExitCode> {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        anyhow::bail!("the TUI needs a terminal (for scripts use `loopwatch watch --headless`, `loopwatch status`)");
    }
    let config = load_config();
    let theme = config.theme.resolve(
        std::env::var("NO_COLOR").ok().as_deref(),
        std::env::var("COLORFGBG").ok().as_deref(),
    );
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async move {
        let mut app = App::new(config, theme, Box::new(SystemClock), pipelines[0].dir().to_path_buf());
        if pipelines.len() > 1 {
            app.set_runs(pipelines.iter().map(|p| p.dir().to_path_buf()).collect());
        }
        let mut live: Live<Ui> = Live::start(pipelines.clone());
        let mut ctl = Controller { pipelines, replay: None, history: None, observed: None };
        let initial = live.refresh_all();
        ctl.apply_updates(&mut app, &live, initial, true);
        if let Some(start) = replay {
            let snap = snapshot(&ctl.pipelines[0])?.context("nothing to replay: no events.jsonl and no state.json")?;
            let past = match snap.source {
                Source::Journal => Past::Events(Box::new(History::new(snap.events))),
                Source::ForeignState => ctl.observed_states(&live)?,
            };
            ctl.enter_replay(&mut app, past, start);
        }
        let mut test_panic = render_panics_for_tests();
        let (_guard, mut term) = TerminalGuard::enter(false)?;
        spawn_inputs(&live);
        term.draw(|f| view::render(f, &app))?;
        loop {
            let Some(batch) = live.next_batch().await else { break };
            let Batch { updates, others, errors } = batch;
            if !errors.is_empty() {
                tracing::warn!(?errors, "watcher errors");
            }
            ctl.apply_updates(&mut app, &live, updates, false);
            let mut quit = false;
            let mut full_redraw = false;
            for input in others {
                let effects = match input {
                    Ui::Term(TermEvent::Key(k)) if k.kind != KeyEventKind::Release => {
                        if k.code == KeyCode::Char('z') && k.modifiers.contains(KeyModifiers::CONTROL) {
                            terminal::suspend(false)?;
                            full_redraw = true;
                            Vec::new()
                        } else {
                            app.on_key(&k)
                        }
                    }
                    Ui::Term(TermEvent::Paste(text)) => {
                        app.on_paste(&text);
                        Vec::new()
                    }
                    Ui::Term(TermEvent::Resize(w, h)) => {
                        app.on_resize(w, h);
                        full_redraw = true;
                        Vec::new()
                    }
                    Ui::Term(_) | Ui::Tick => Vec::new(),
                    Ui::TermClosed | Ui::Quit => {
                        quit = true;
                        Vec::new()
                    }
                    Ui::WriteDone(r) => {
                        app.on_write_result(r);
                        Vec::new()
                    }
                    Ui::LogLoaded(p, r) => {
                        app.on_log_loaded(&p, r);
                        Vec::new()
                    }
                };
                for e in effects {
                    if ctl.perform(&mut app, &live, e) {
                        quit = true;
                    }
                }
            }
            if quit {
                break;
            }
            if full_redraw {
                // Clear by "resizing" to the current size, not `Terminal::clear`:
                // that one asks the terminal where the cursor is, and after a
                // resume the answer could be lost to the key reader, ending the
                // TUI with "the cursor position could not be read".
                let size = term.size()?;
                term.resize(size.into())?;
            }
            // The terminal may be gone (closed pty): stop instead of spinning.
            let panic_now = std::mem::take(&mut test_panic);
            if term.draw(|f| draw(f, &app, panic_now)).is_err() {
                break;
            }
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// Draws one frame of the loop.
fn draw(frame: &mut ratatui::Frame, app: &App, test_panic: bool) {
    if test_panic {
        panic!("LOOPWATCH_TEST_PANIC=render: a test-only panic inside rendering");
    }
    view::render(frame, app);
}

/// Test-only, not a feature: with `LOOPWATCH_TEST_PANIC=render` in the
/// environment (read once, at start) the second frame panics inside
/// rendering, so the end-to-end tests can check that a panic restores the
/// terminal exactly once before its message is printed.
fn render_panics_for_tests() -> bool {
    std::env::var_os("LOOPWATCH_TEST_PANIC").is_some_and(|v| v == "render")
}

fn load_config() -> Config {
    let Some(path) = Config::path(std::env::var_os("XDG_CONFIG_HOME"), std::env::var_os("HOME")) else {
        return Config::default();
    };
    if !path.exists() {
        return Config::default();
    }
    match Config::load(&path) {
        Ok(c) => c,
        Err(e) => {
            let mut c = Config::default();
            c.warnings.push(format!("{e} (defaults in use)"));
            c
        }
    }
}

/// Starts the tasks that feed the loop: terminal events, the 1 s tick, signals.
fn spawn_inputs(live: &Live<Ui>) {
    let tx = live.sender();
    tokio::spawn(async move {
        let mut events = EventStream::new();
        loop {
            match events.next().await {
                Some(Ok(ev)) => {
                    if tx.send(crate::watch::Input::Other(Ui::Term(ev))).is_err() {
                        break;
                    }
                }
                // EOF or an error on the tty: the terminal is gone.
                Some(Err(_)) | None => {
                    let _ = tx.send(crate::watch::Input::Other(Ui::TermClosed));
                    break;
                }
            }
        }
    });
    // A pty closed under the TUI shows only as a hangup on stdin (the
    // terminal events reader does not end on it): watch for it apart.
    let tx = live.sender();
    std::thread::spawn(move || {
        if wait_for_hangup() {
            let _ = tx.send(crate::watch::Input::Other(Ui::TermClosed));
        }
    });
    let tx = live.sender();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tick.tick().await;
            if tx.send(crate::watch::Input::Other(Ui::Tick)).is_err() {
                break;
            }
        }
    });
    for kind in [SignalKind::terminate(), SignalKind::hangup(), SignalKind::interrupt()] {
        let tx = live.sender();
        if let Ok(mut sig) = signal(kind) {
            tokio::spawn(async move {
                if sig.recv().await.is_some() {
                    let _ = tx.send(crate::watch::Input::Other(Ui::Quit));
                }
            });
        }
    }
}

/// Blocks until the terminal on stdin hangs up (true), or polling it fails
/// (false). Polling for no event at all wakes only on a hangup or an error.
fn wait_for_hangup() -> bool {
    use rustix::event::{PollFd, PollFlags, poll};
    let stdin = std::io::stdin();
    loop {
        let mut fds = [PollFd::new(&stdin, PollFlags::empty())];
        match poll(&mut fds, None) {
            Ok(_) if fds[0].revents().intersects(PollFlags::HUP | PollFlags::ERR | PollFlags::NVAL) => return true,
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(_) => return false,
        }
    }
}

/// What the loop keeps beside the app: the pipelines and the replay position.
struct Controller {
    pipelines: Vec<Pipeline>,
    replay: Option<usize>,
    history: Option<Past>,
    observed: Option<ObservedLog>,
}

/// What a replay steps through: the journal's events, or, for a pipeline
/// written by another program, the versions of its state.json observed.
enum Past {
    Events(Box<History>),
    States(Vec<(String, State)>),
}

impl Past {
    fn len(&self) -> usize {
        match self {
            Past::Events(h) => h.len(),
            Past::States(v) => v.len(),
        }
    }

    /// The state after `k` steps, its time, and the events up to it.
    fn at(&self, k: usize) -> (State, String, &[crate::model::Event]) {
        match self {
            Past::Events(h) => {
                let at = k.checked_sub(1).and_then(|i| h.events().get(i)).map(|e| e.at.clone()).unwrap_or_default();
                (h.state_at(k), at, &h.events()[..k])
            }
            Past::States(v) => match k.checked_sub(1).and_then(|i| v.get(i)) {
                Some((at, s)) => (s.clone(), at.clone(), &[]),
                None => (State::default(), String::new(), &[]),
            },
        }
    }

    /// 1-based positions of the first step of each iteration.
    fn iteration_starts(&self) -> Vec<(u32, usize)> {
        match self {
            Past::Events(h) => h.iteration_starts().into_iter().map(|(n, p)| (n, p + 1)).collect(),
            Past::States(v) => {
                let mut out: Vec<(u32, usize)> = Vec::new();
                for (i, (_, s)) in v.iter().enumerate() {
                    let n = s.iteration_number();
                    if !out.iter().any(|(m, _)| *m == n) {
                        out.push((n, i + 1));
                    }
                }
                out
            }
        }
    }
}

impl Controller {
    fn apply_updates(&mut self, app: &mut App, live: &Live<Ui>, updates: Vec<(usize, FeedUpdate)>, first: bool) {
        for (i, up) in updates {
            let feed = &live.feeds()[i];
            if i == 0 {
                app.set_looking_in((!feed.exists()).then(|| feed.pipeline().dir().to_path_buf()));
                let note = match (live.is_polling(0), feed.is_foreign()) {
                    (true, true) => Some("polling · state.json written by another program".to_string()),
                    (true, false) => Some("polling (filesystem events unavailable)".to_string()),
                    (false, true) => Some("state.json written by another program (no journal)".to_string()),
                    (false, false) => None,
                };
                app.set_source_note(note);
            }
            if !up.changed && !first {
                continue;
            }
            let events = feed.events();
            let new = if up.reset { events } else { &events[events.len().saturating_sub(up.new_events)..] };
            if i == 0 && feed.is_foreign() && up.new_events > 0 {
                // The TUI keeps each version it sees, so a foreign pipeline can be replayed.
                let log = self.observed.get_or_insert_with(|| ObservedLog::for_pipeline(feed.pipeline().dir()).unwrap_or_else(|| ObservedLog::at(&std::env::temp_dir(), feed.pipeline().dir())));
                if let Err(e) = log.record(feed.state()) {
                    tracing::warn!(error = %e, "cannot keep the observed state.json version");
                }
            }
            if let Some(past) = &mut self.history
                && i == 0
            {
                match past {
                    Past::Events(h) if up.reset => **h = History::new(events.to_vec()),
                    Past::Events(h) => h.extend(new.iter().cloned()),
                    Past::States(v) => {
                        if feed.is_foreign() && up.new_events > 0 {
                            v.push((crate::util::now_rfc3339(), feed.state().clone()));
                        }
                    }
                }
                if let Some(k) = self.replay {
                    self.show(app, k);
                }
            } else {
                let effects = app.on_run_state(i, feed.state().clone(), new);
                for e in effects {
                    self.perform(app, live, e);
                }
            }
            if i == 0 || app.screen() == super::app::Screen::RunList {
                app.set_problem(problem_of(feed, &up));
            }
        }
    }

    /// Performs one effect; true when the app asked to quit.
    fn perform(&mut self, app: &mut App, live: &Live<Ui>, effect: Effect) -> bool {
        match effect {
            Effect::Quit => return true,
            Effect::Bell => {
                let mut out = std::io::stdout();
                let _ = out.write_all(b"\x07").and_then(|()| out.flush());
            }
            Effect::CopyToClipboard(text) => {
                use base64::Engine as _;
                let b64 = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
                let mut out = std::io::stdout();
                let _ = write!(out, "\x1b]52;c;{b64}\x07").and_then(|()| out.flush());
            }
            Effect::RunHook { command, gate } => {
                let spawned = std::process::Command::new("sh")
                    .arg("-c")
                    .arg(&command)
                    .env("LOOPWATCH_GATE", &gate)
                    .stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn();
                if let Err(e) = spawned {
                    tracing::warn!(error = %e, "on_human_gate command failed to start");
                }
            }
            Effect::LoadLog(path) => {
                let pipeline = self.current_pipeline(app).clone();
                let tx = live.sender();
                tokio::task::spawn_blocking(move || {
                    let r = read_tail(&pipeline, &path, TAIL_BYTES);
                    let _ = tx.send(crate::watch::Input::Other(Ui::LogLoaded(path, r)));
                });
            }
            Effect::WriteDecision(req) => {
                let rec = Recorder::new(self.current_pipeline(app).clone());
                let tx = live.sender();
                tokio::task::spawn_blocking(move || {
                    let d = HumanDecision {
                        id: req.id,
                        decision: req.decision,
                        reason: req.reason,
                        by: crate::util::user_at_host(),
                        evidence_hash: req.evidence_hash,
                        contract_edit: None,
                        extra: Default::default(),
                    };
                    let r = rec.decide(d).map(|_| ()).map_err(|e| e.to_string());
                    let _ = tx.send(crate::watch::Input::Other(Ui::WriteDone(r)));
                });
            }
            Effect::Replay(m) => self.replay_move(app, live, m),
        }
        false
    }

    fn current_pipeline(&self, app: &App) -> &Pipeline {
        self.pipelines
            .iter()
            .find(|p| p.dir() == app.run().pipeline)
            .unwrap_or(&self.pipelines[0])
    }

    /// The observed versions of a foreign state.json, oldest first.
    fn observed_states(&mut self, live: &Live<Ui>) -> anyhow::Result<Past> {
        let feed = &live.feeds()[0];
        let log = self
            .observed
            .get_or_insert_with(|| ObservedLog::for_pipeline(feed.pipeline().dir()).unwrap_or_else(|| ObservedLog::at(&std::env::temp_dir(), feed.pipeline().dir())));
        let _ = log.record(feed.state());
        let v: Vec<(String, State)> = log.versions().into_iter().map(|o| (o.observed_at, o.state)).collect();
        anyhow::ensure!(!v.is_empty(), "nothing to replay: no journal, and no state.json version was observed");
        Ok(Past::States(v))
    }

    fn enter_replay(&mut self, app: &mut App, past: Past, start: ReplayStart) {
        let len = past.len();
        let k = match (&past, start) {
            (Past::Events(h), _) => start_position(h, start),
            (Past::States(_), ReplayStart::First) => 1.min(len),
            (Past::States(_), ReplayStart::Seq(seq)) => usize::try_from(seq).unwrap_or(len).clamp(1, len.max(1)),
            (Past::States(_), ReplayStart::Iteration(n)) => {
                past.iteration_starts().iter().find(|(i, _)| *i == n).map_or(1, |(_, pos)| *pos).min(len)
            }
        };
        if matches!(past, Past::States(_)) {
            app.set_source_note(Some("replaying the state.json versions this TUI observed (no journal)".into()));
        }
        self.history = Some(past);
        self.show(app, k);
    }

    fn show(&mut self, app: &mut App, k: usize) {
        let Some(past) = &self.history else { return };
        if let Past::Events(h) = past {
            self.replay = Some(show_position(app, h, k));
            return;
        }
        let k = k.min(past.len());
        self.replay = Some(k);
        let (state, at, events) = past.at(k);
        app.set_replay(Some(ReplayBar {
            event: k as u64,
            total: past.len() as u64,
            at,
            iteration: state.iteration_number(),
        }));
        app.on_run_state(0, state, events);
    }

    fn replay_move(&mut self, app: &mut App, live: &Live<Ui>, m: ReplayMove) {
        if self.replay.is_none() {
            if m == ReplayMove::Live {
                return;
            }
            // Entering replay from the live view: live updates keep arriving
            // into the history in the background.
            let feed = &live.feeds()[0];
            let past = if feed.is_foreign() {
                match self.observed_states(live) {
                    Ok(p) => p,
                    Err(_) => return,
                }
            } else {
                Past::Events(Box::new(History::new(feed.events().to_vec())))
            };
            self.replay = Some(past.len());
            self.history = Some(past);
        }
        let (Some(past), Some(k)) = (&self.history, self.replay) else { return };
        let target = match past {
            Past::Events(h) => move_target(h, k, m),
            Past::States(_) => {
                let starts = past.iteration_starts();
                let len = past.len();
                match m {
                    ReplayMove::Back => Some(k.saturating_sub(1).max(1)),
                    ReplayMove::Forward => Some((k + 1).min(len)),
                    ReplayMove::First => Some(1),
                    ReplayMove::PrevIteration => Some(starts.iter().rev().map(|(_, p)| *p).find(|&p| p < k).unwrap_or(1)),
                    ReplayMove::NextIteration => Some(starts.iter().map(|(_, p)| *p).find(|&p| p > k).unwrap_or(len)),
                    ReplayMove::Live => None,
                }
            }
        };
        let Some(target) = target else {
            self.replay = None;
            self.history = None;
            app.set_replay(None);
            let feed = &live.feeds()[0];
            app.on_run_state(0, feed.state().clone(), feed.events());
            return;
        };
        self.show(app, target);
    }
}

fn problem_of(feed: &crate::watch::Feed, up: &FeedUpdate) -> Option<Problem> {
    let partial_since = feed.partial_since().map(|t| {
        jiff::Timestamp::try_from(t).map(|ts| ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()).unwrap_or_default()
    });
    let last = up.problems.last().or_else(|| feed.problems().last())?;
    Some(Problem {
        file: last.path.clone(),
        line: Some(last.line).filter(|l| *l > 0),
        column: last.column.map(|c| c as u64),
        message: last.message.clone(),
        partial_since,
    })
    .or(None)
}
