//! What the event loop keeps beside the app: the pipelines, what is being
//! replayed, the observed foreign states; and the effects it performs for
//! the app (decisions written off the UI thread, logs read, evidence
//! recomputed, clipboard, bell,
//! terminal notifications, replay moves), and the gates' notifications
//! (hook, webhook) sent off the UI thread when due. Replay positions live in
//! the feed's store; this only moves them and hands what is there to the app.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;

use ratatui::crossterm::event::Event as TermEvent;

use super::app::{App, Problem};
use super::effect::{Effect, ReplayMove};
use super::replay::{Observed, ReplayStart, move_target, show_position, start_position};
use crate::journal::{Pipeline, TAIL_BYTES, read_tail};
use crate::model::event::HumanDecision;
use crate::notify::Notifier;
use crate::recorder::{RecordError, Recorder};
use crate::watch::{Feed, FeedUpdate, Live, ObservedLog};

/// Inputs of the loop besides file changes.
#[derive(Debug)]
pub(crate) enum Ui {
    Term(TermEvent),
    TermClosed,
    Tick,
    /// Draw again: a part of the screen that depends on the time changed
    /// (the dialog's keys now count).
    Redraw,
    Quit,
    WriteDone(Result<(), RecordError>),
    LogLoaded(PathBuf, Result<Vec<u8>, String>),
    Notified(String, Result<crate::notify::Announced, String>),
    /// The code diff of the `d` overlay, iterations from → to.
    CodeLoaded(u32, u32, Result<Vec<crate::code::FileDiff>, String>),
    /// A dialog's evidence recomputed: gate id, the hash it was asked
    /// against, whether to show it, the result.
    EvidenceChecked(String, String, bool, crate::recorder::evidence::Refreshed),
}

/// What a replay steps through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Replaying {
    /// Live: the newest position of every feed.
    No,
    /// A position of the first feed's store (the feed holds it).
    Events,
    /// A version of a foreign `state.json` observed.
    Observed(usize),
}

/// What the loop keeps beside the app: the pipelines, what is replayed,
/// and the observed versions of a foreign state.json.
pub(crate) struct Controller {
    pipelines: Vec<Pipeline>,
    replaying: Replaying,
    observed: Observed,
    observed_log: Option<ObservedLog>,
    notifier: Notifier,
    /// Notifications (pipeline, gate, n) this process has started: each at most once.
    attempted: BTreeSet<(usize, String, u32)>,
    /// Search problems already shown.
    search_problems: usize,
}

impl Controller {
    /// A controller on these pipelines, live (not replaying).
    pub(crate) fn new(pipelines: Vec<Pipeline>, notifier: Notifier) -> Self {
        Controller {
            pipelines,
            replaying: Replaying::No,
            observed: Observed::default(),
            observed_log: None,
            notifier,
            attempted: BTreeSet::new(),
            search_problems: 0,
        }
    }

    /// Adds to the app the runs the search found (their indexes are the
    /// same in the app and the live loop), with the seq each was last
    /// looked at, then says which runs are polled.
    pub(crate) fn add_runs(&mut self, app: &mut App, live: &Live<Ui>, added: &[usize]) {
        for &i in added {
            let Some(feed) = live.feeds().get(i) else {
                continue;
            };
            let dir = feed.pipeline().dir().to_path_buf();
            let at = app.add_run(dir.clone());
            debug_assert_eq!(at, i, "the app's runs follow the live loop's feeds");
            self.pipelines.push(feed.pipeline().clone());
            app.set_looked_mark(at, super::looked::read(&dir));
        }
        self.show_how(app, live);
    }

    /// Marks the runs polled instead of watched, and writes the list's
    /// notice (runs polled, folders that cannot be searched).
    pub(crate) fn show_how(&mut self, app: &mut App, live: &Live<Ui>) {
        let mut polled = Vec::new();
        for i in 0..live.feeds().len() {
            let why = match live.how(i) {
                Some(crate::watch::hub::How::Polled(why)) => Some(why.clone()),
                _ => None,
            };
            if let Some(w) = &why {
                polled.push(w.clone());
            }
            app.set_run_polled(i, why);
        }
        let mut parts = Vec::new();
        if let Some(first) = polled.first() {
            parts.push(format!(
                "~ {} polled every {} ms, not watched: {first}",
                crate::util::count(polled.len(), "run"),
                crate::watch::hub::POLL_EVERY.as_millis()
            ));
        }
        let problems = live.search_problems();
        self.search_problems = problems.len();
        if let Some(p) = problems.first() {
            parts.push(format!(
                "{} cannot be searched: {} ({})",
                crate::util::count(problems.len(), "folder"),
                p.dir.display(),
                p.message
            ));
        }
        app.set_fleet_notice((!parts.is_empty()).then(|| parts.join(" · ")));
    }

    /// True when the search reported folders not shown yet.
    pub(crate) fn search_problems_changed(&self, live: &Live<Ui>) -> bool {
        live.search_problems().len() != self.search_problems
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

    pub(crate) fn apply_updates(
        &mut self,
        app: &mut App,
        live: &mut Live<Ui>,
        updates: Vec<(usize, FeedUpdate)>,
        first: bool,
    ) {
        let mut effects = Vec::new();
        for (i, up) in updates {
            let feed = &live.feeds()[i];
            if i == 0 && !app.is_fleet() {
                app.set_looking_in((!feed.exists()).then(|| feed.pipeline().dir().to_path_buf()));
                if !matches!(self.replaying, Replaying::Observed(_)) {
                    app.set_source_note(source_note(live.is_polling(0), feed.is_foreign()));
                }
            }
            if !up.changed && !first {
                continue;
            }
            if i == 0 && feed.is_foreign() && up.new_events > 0 {
                // The TUI keeps each version it sees, so a foreign pipeline can be replayed.
                let log = self.observed_log(feed);
                if let Err(e) = log.record(feed.state()) {
                    tracing::warn!(error = %e, "cannot keep the observed state.json version");
                }
                if let Replaying::Observed(_) = self.replaying {
                    self.observed
                        .push(crate::util::now_rfc3339(), feed.state().clone());
                }
            }
            match (i, self.replaying) {
                (0, Replaying::Events) => {
                    // Live updates keep arriving into the store; the
                    // position (clamped by the feed on a reset) stays.
                    let k = feed.position().unwrap_or(feed.history().len());
                    show_position(app, feed.history(), k);
                }
                (0, Replaying::Observed(k)) => {
                    self.replaying = Replaying::Observed(self.observed.show(app, k));
                }
                _ => {
                    effects.extend(app.on_run_state(i, feed.shown_state(), feed.shown_events()));
                }
            }
            app.set_run_problem(i, problem_of(feed, &up));
        }
        for e in effects {
            self.perform(app, live, e);
        }
    }

    /// Performs one effect; true when the app asked to quit.
    pub(crate) fn perform(&mut self, app: &mut App, live: &mut Live<Ui>, effect: Effect) -> bool {
        match effect {
            Effect::Quit => return true,
            // The pager needs the terminal: the event loop opens it
            // (`run::page`) before effects reach here.
            Effect::OpenPager(_) => {}
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
                    let r = read_tail(&pipeline, &path, TAIL_BYTES).map_err(|e| e.to_string());
                    let _ = tx.send(crate::watch::Input::Other(Ui::LogLoaded(path, r)));
                });
            }
            Effect::LoadCode(req) => {
                let tx = live.sender();
                tokio::task::spawn_blocking(move || {
                    let r =
                        crate::code::diff(&req.worktree, &req.a, &req.b).map_err(|e| e.to_string());
                    let _ = tx.send(crate::watch::Input::Other(Ui::CodeLoaded(
                        req.from, req.to, r,
                    )));
                });
            }
            Effect::CheckEvidence(check) => {
                let pipeline = self.current_pipeline(app).clone();
                let tx = live.sender();
                tokio::task::spawn_blocking(move || {
                    let fresh = crate::recorder::evidence::refresh(
                        &pipeline,
                        &check.sources,
                        &check.request,
                    );
                    let _ = tx.send(crate::watch::Input::Other(Ui::EvidenceChecked(
                        check.request.id,
                        check.against,
                        check.apply,
                        fresh,
                    )));
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
                        note: req.note,
                        extra: Default::default(),
                    };
                    let r = rec.decide_on(d, req.evidence.as_bytes()).map(|_| ());
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

    fn observed_log(&mut self, feed: &Feed) -> &mut ObservedLog {
        self.observed_log.get_or_insert_with(|| {
            ObservedLog::for_pipeline(feed.pipeline().dir())
                .unwrap_or_else(|| ObservedLog::at(&std::env::temp_dir(), feed.pipeline().dir()))
        })
    }

    /// Loads the observed versions of the first feed's foreign state.json.
    fn load_observed(&mut self, live: &Live<Ui>) -> anyhow::Result<()> {
        let feed = &live.feeds()[0];
        let log = self.observed_log(feed);
        let _ = log.record(feed.state());
        let versions: Vec<(String, crate::model::State)> = log
            .versions()
            .into_iter()
            .map(|o| (o.observed_at, o.state))
            .collect();
        anyhow::ensure!(
            !versions.is_empty(),
            "nothing to replay: no journal, and no state.json version was observed"
        );
        self.observed = Observed::new(versions);
        Ok(())
    }

    /// Starts replaying the first pipeline at `start`, from what the live
    /// feed already read: its store, or the versions of a foreign
    /// state.json observed.
    pub(crate) fn enter_replay(
        &mut self,
        app: &mut App,
        live: &mut Live<Ui>,
        start: ReplayStart,
    ) -> anyhow::Result<()> {
        let feed = &live.feeds()[0];
        if feed.is_foreign() {
            self.load_observed(live)?;
            app.set_source_note(Some(
                "replaying the state.json versions this TUI observed (no journal)".into(),
            ));
            let k = start_position(&self.observed, start);
            self.replaying = Replaying::Observed(self.observed.show(app, k));
            return Ok(());
        }
        anyhow::ensure!(
            !feed.history().is_empty(),
            "nothing to replay: no events.jsonl and no state.json"
        );
        let k = start_position(feed.history(), start);
        self.seek(app, live, Some(k));
        Ok(())
    }

    /// Moves the first feed's store to `position` (or back to live) and
    /// hands what is there to the app.
    fn seek(&mut self, app: &mut App, live: &mut Live<Ui>, position: Option<usize>) {
        let Some(feed) = live.feed_mut(0) else {
            return;
        };
        match feed.seek(position) {
            Some(k) => {
                self.replaying = Replaying::Events;
                show_position(app, feed.history(), k);
            }
            None => self.leave_replay(app, live),
        }
    }

    fn leave_replay(&mut self, app: &mut App, live: &Live<Ui>) {
        self.replaying = Replaying::No;
        self.observed = Observed::default();
        app.set_replay(None);
        let feed = &live.feeds()[0];
        app.set_source_note(source_note(live.is_polling(0), feed.is_foreign()));
        let _ = app.on_run_state(0, feed.shown_state(), feed.shown_events());
    }

    fn replay_move(&mut self, app: &mut App, live: &mut Live<Ui>, m: ReplayMove) {
        let feed = &live.feeds()[0];
        match self.replaying {
            Replaying::No if m == ReplayMove::Live => {}
            Replaying::No if feed.is_foreign() => {
                // Entering replay from the live view, at the newest version.
                if self.load_observed(live).is_ok() {
                    let k = crate::history::Steps::len(&self.observed);
                    self.replaying = Replaying::Observed(k);
                    self.replay_move(app, live, m);
                }
            }
            Replaying::No | Replaying::Events => {
                // Entering replay from the live view starts at the newest position.
                let k = feed.position().unwrap_or(feed.history().len());
                let target = move_target(feed.history(), k, m);
                self.seek(app, live, target);
            }
            Replaying::Observed(k) => match move_target(&self.observed, k, m) {
                Some(t) => self.replaying = Replaying::Observed(self.observed.show(app, t)),
                None => self.leave_replay(app, live),
            },
        }
    }
}

fn source_note(polling: bool, foreign: bool) -> Option<String> {
    match (polling, foreign) {
        (true, true) => Some("polling · state.json written by another program".to_string()),
        (true, false) => Some("polling (filesystem events unavailable)".to_string()),
        (false, true) => Some("state.json written by another program (no journal)".to_string()),
        (false, false) => None,
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EventBody;
    use crate::tui::testkit::{app_with, ev};

    /// The journal line of note `seq`, saying `text`.
    fn note(seq: u64, text: &str) -> String {
        ev(seq, EventBody::Note { text: text.into() }).to_line()
    }

    fn journal(dir: &std::path::Path, tail: &str) -> Pipeline {
        std::fs::create_dir_all(dir).unwrap();
        let line = note(1, "n");
        std::fs::write(dir.join("events.jsonl"), format!("{line}\n{tail}")).unwrap();
        Pipeline::at(dir)
    }

    #[test]
    fn each_run_shows_its_own_journal_problem() {
        let d = tempfile::tempdir().unwrap();
        let pipelines = vec![
            journal(&d.path().join("a/.pipeline"), ""),
            journal(&d.path().join("b/.pipeline"), "{not json\n"),
        ];
        let (mut app, _clock) = app_with(&[]);
        app.set_runs(pipelines.iter().map(|p| p.dir().to_path_buf()).collect());
        let mut live: Live<Ui> = Live::start(pipelines.clone());
        let mut ctl = Controller::new(pipelines, crate::notify::Notifier::default());
        let initial = live.refresh_all();
        ctl.apply_updates(&mut app, &mut live, initial, true);
        assert_eq!(app.runs[0].problem, None);
        let p = app.runs[1].problem.as_ref().expect("run b's problem");
        assert!(p.file.starts_with(d.path().join("b")), "{p:?}");
        assert_eq!(p.line, Some(2));
    }

    #[test]
    fn replay_is_a_position_in_the_live_store_that_later_events_do_not_move() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join(".pipeline");
        let pipeline = journal(&dir, "");
        let more: String = (2..=4).map(|s| note(s, &format!("n{s}")) + "\n").collect();
        let journal_path = dir.join("events.jsonl");
        let first = std::fs::read_to_string(&journal_path).unwrap();
        std::fs::write(&journal_path, format!("{first}{more}")).unwrap();
        let (mut app, _clock) = app_with(&[]);
        let mut live: Live<Ui> = Live::start(vec![pipeline.clone()]);
        let mut ctl = Controller::new(vec![pipeline], crate::notify::Notifier::default());
        let initial = live.refresh_all();
        ctl.apply_updates(&mut app, &mut live, initial, true);
        ctl.enter_replay(&mut app, &mut live, ReplayStart::Seq(2))
            .unwrap();
        assert_eq!(live.feeds()[0].position(), Some(2));
        assert_eq!(
            app.replay.as_ref().map(|r| (r.event, r.total)),
            Some((2, 4))
        );
        assert_eq!(app.run().events.len(), 2);
        // The agent goes on writing: the store grows, the position stays.
        let line = note(5, "n5");
        std::fs::write(&journal_path, format!("{first}{more}{line}\n")).unwrap();
        let up = live.feed_mut(0).map(Feed::refresh).unwrap();
        ctl.apply_updates(&mut app, &mut live, vec![(0, up)], false);
        assert_eq!(
            app.replay.as_ref().map(|r| (r.event, r.total)),
            Some((2, 5))
        );
        assert_eq!(app.state().seq, 2);
        ctl.perform(&mut app, &mut live, Effect::Replay(ReplayMove::Live));
        assert_eq!(live.feeds()[0].position(), None);
        assert_eq!((app.replay.is_none(), app.state().seq), (true, 5));
        assert_eq!(app.run().events.len(), 5);
    }
}
