//! What the event loop keeps beside the app: the pipelines, the replay
//! position, the observed foreign states; and the effects it performs for
//! the app (decisions written off the UI thread, logs read, clipboard, bell,
//! terminal notifications, replay moves), and the gates' notifications
//! (hook, webhook) sent off the UI thread when due.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;

use ratatui::crossterm::event::Event as TermEvent;

use super::app::{App, Problem, ReplayBar};
use super::effect::{Effect, ReplayMove};
use super::replay::{Past, ReplayStart, move_target, show_position, start_position};
use crate::history::History;
use crate::journal::{Pipeline, TAIL_BYTES, read_tail};
use crate::model::State;
use crate::model::event::HumanDecision;
use crate::notify::Notifier;
use crate::recorder::Recorder;
use crate::watch::{FeedUpdate, Live, ObservedLog};

/// Inputs of the loop besides file changes.
#[derive(Debug)]
pub(crate) enum Ui {
    Term(TermEvent),
    TermClosed,
    Tick,
    Quit,
    WriteDone(Result<(), String>),
    LogLoaded(PathBuf, Result<Vec<u8>, String>),
    Notified(String, Result<crate::notify::Announced, String>),
}

/// What the loop keeps beside the app: the pipelines and the replay position.
pub(crate) struct Controller {
    pipelines: Vec<Pipeline>,
    replay: Option<usize>,
    history: Option<Past>,
    observed: Option<ObservedLog>,
    notifier: Notifier,
    /// Notifications (pipeline, gate, n) this process has started: each at most once.
    attempted: BTreeSet<(usize, String, u32)>,
}

impl Controller {
    /// A controller on these pipelines, live (not replaying).
    pub(crate) fn new(pipelines: Vec<Pipeline>, notifier: Notifier) -> Self {
        Controller {
            pipelines,
            replay: None,
            history: None,
            observed: None,
            notifier,
            attempted: BTreeSet::new(),
        }
    }

    /// Starts, off the UI thread, every gate notification now due (first
    /// one after `delay`, reminders every `remind`). The journal's
    /// `notify.sent` decides which process sends; a pipeline this process
    /// may not write (a synced, read-only copy) or one without a journal is
    /// left to the process that writes it.
    pub(crate) fn send_due_notices(&mut self, live: &Live<Ui>) {
        if !self.notifier.is_active() {
            return;
        }
        let now = jiff::Timestamp::now();
        for (i, feed) in live.feeds().iter().enumerate() {
            if feed.is_foreign() || !feed.exists() || crate::recorder::is_read_only(feed.pipeline())
            {
                continue;
            }
            for gate in feed.state().open_human_gates() {
                let Some(n) = crate::notify::due(gate, now, &self.notifier.settings) else {
                    continue;
                };
                if !self.attempted.insert((i, gate.request.id.clone(), n)) {
                    continue;
                }
                let (notifier, pipeline, id) = (
                    self.notifier.clone(),
                    feed.pipeline().clone(),
                    gate.request.id.clone(),
                );
                let tx = live.sender();
                tokio::task::spawn_blocking(move || {
                    let r = notifier
                        .announce(&pipeline, &id, n)
                        .map_err(|e| e.to_string());
                    let _ = tx.send(crate::watch::Input::Other(Ui::Notified(id, r)));
                });
            }
        }
    }

    /// The first pipeline (the one replay works on).
    pub(crate) fn first_pipeline(&self) -> &Pipeline {
        &self.pipelines[0]
    }

    pub(crate) fn apply_updates(
        &mut self,
        app: &mut App,
        live: &Live<Ui>,
        updates: Vec<(usize, FeedUpdate)>,
        first: bool,
    ) {
        for (i, up) in updates {
            let feed = &live.feeds()[i];
            if i == 0 {
                app.set_looking_in((!feed.exists()).then(|| feed.pipeline().dir().to_path_buf()));
                let note = match (live.is_polling(0), feed.is_foreign()) {
                    (true, true) => {
                        Some("polling · state.json written by another program".to_string())
                    }
                    (true, false) => Some("polling (filesystem events unavailable)".to_string()),
                    (false, true) => {
                        Some("state.json written by another program (no journal)".to_string())
                    }
                    (false, false) => None,
                };
                app.set_source_note(note);
            }
            if !up.changed && !first {
                continue;
            }
            let events = feed.events();
            let new = if up.reset {
                events
            } else {
                &events[events.len().saturating_sub(up.new_events)..]
            };
            if i == 0 && feed.is_foreign() && up.new_events > 0 {
                // The TUI keeps each version it sees, so a foreign pipeline can be replayed.
                let log = self.observed.get_or_insert_with(|| {
                    ObservedLog::for_pipeline(feed.pipeline().dir()).unwrap_or_else(|| {
                        ObservedLog::at(&std::env::temp_dir(), feed.pipeline().dir())
                    })
                });
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
    pub(crate) fn perform(&mut self, app: &mut App, live: &Live<Ui>, effect: Effect) -> bool {
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
            Effect::TerminalNotice { text, .. } => {
                let in_tmux = std::env::var_os("TMUX").is_some_and(|v| !v.is_empty());
                if let Some(bytes) = crate::notify::terminal::notification(
                    self.notifier.settings.terminal,
                    &text,
                    in_tmux,
                ) {
                    let mut out = std::io::stdout();
                    let _ = out.write_all(&bytes).and_then(|()| out.flush());
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
    pub(crate) fn observed_states(&mut self, live: &Live<Ui>) -> anyhow::Result<Past> {
        let feed = &live.feeds()[0];
        let log = self.observed.get_or_insert_with(|| {
            ObservedLog::for_pipeline(feed.pipeline().dir())
                .unwrap_or_else(|| ObservedLog::at(&std::env::temp_dir(), feed.pipeline().dir()))
        });
        let _ = log.record(feed.state());
        let v: Vec<(String, State)> = log
            .versions()
            .into_iter()
            .map(|o| (o.observed_at, o.state))
            .collect();
        anyhow::ensure!(
            !v.is_empty(),
            "nothing to replay: no journal, and no state.json version was observed"
        );
        Ok(Past::States(v))
    }

    pub(crate) fn enter_replay(&mut self, app: &mut App, past: Past, start: ReplayStart) {
        let len = past.len();
        let k = match (&past, start) {
            (Past::Events(h), _) => start_position(h, start),
            (Past::States(_), ReplayStart::First) => 1.min(len),
            (Past::States(_), ReplayStart::Seq(seq)) => {
                usize::try_from(seq).unwrap_or(len).clamp(1, len.max(1))
            }
            (Past::States(_), ReplayStart::Iteration(n)) => past
                .iteration_starts()
                .iter()
                .find(|(i, _)| *i == n)
                .map_or(1, |(_, pos)| *pos)
                .min(len),
        };
        if matches!(past, Past::States(_)) {
            app.set_source_note(Some(
                "replaying the state.json versions this TUI observed (no journal)".into(),
            ));
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
        let Some((state, at)) = past.observed_at(k) else {
            return;
        };
        app.set_replay(Some(ReplayBar {
            event: k as u64,
            total: past.len() as u64,
            at,
            iteration: state.iteration_number(),
        }));
        app.on_run_state(0, state, &[]);
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
        let (Some(past), Some(k)) = (&self.history, self.replay) else {
            return;
        };
        let target = match past {
            Past::Events(h) => move_target(h, k, m),
            Past::States(_) => {
                let starts = past.iteration_starts();
                let len = past.len();
                match m {
                    ReplayMove::Back => Some(k.saturating_sub(1).max(1)),
                    ReplayMove::Forward => Some((k + 1).min(len)),
                    ReplayMove::First => Some(1),
                    ReplayMove::PrevIteration => Some(
                        starts
                            .iter()
                            .rev()
                            .map(|(_, p)| *p)
                            .find(|&p| p < k)
                            .unwrap_or(1),
                    ),
                    ReplayMove::NextIteration => Some(
                        starts
                            .iter()
                            .map(|(_, p)| *p)
                            .find(|&p| p > k)
                            .unwrap_or(len),
                    ),
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
        jiff::Timestamp::try_from(t)
            .map(|ts| ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
            .unwrap_or_default()
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
