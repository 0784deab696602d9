//! The loop itself: fold the journal, do what `state.next` says, repeat.
//!
//! - next-gate / retry floor: GATE 0 runs here, as `loopwatch gate0 run`;
//! - next-gate / retry conformity, security: the verifier or auditor is
//!   dispatched with the inputs the rules name and its answer recorded as
//!   the round (a failed or silent agent is a structural round);
//! - dev: the gaps are handed back (`dev.dispatched`) and the developer is
//!   dispatched for the new iteration;
//! - review `<step>`: the review stage's step (reviewer, finding-verifier
//!   graph, triage, verify-by-test, its end, the red-test recheck), carried
//!   out by [`super::review::step`];
//! - human: the engine sleeps on the pipeline's filesystem watch until the
//!   gate is decided, from anywhere;
//! - done / stop: the end of the run is recorded.
//!
//! Start-up takes the engine lock, stops whatever a dead engine left
//! running, records its unfinished dispatches interrupted, and resumes from
//! the journal.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{mpsc, watch};

use super::config::{AgentConfig, Config};
use super::contract::{ContractWatch, Look};
use super::dispatch::{self, Job, Settings};
use super::error::{EngineError, Refusal};
use super::lock::EngineLock;
use super::review::{self as stage, Ctx, Dispatches};
use crate::gate0;
use crate::journal::Pipeline;
use crate::model::event::{AgentRole, ReviewInfo, RunInfo};
use crate::model::rules::{self, ReviewStep};
use crate::model::*;
use crate::recorder::gates::{Gate, Judge};
use crate::recorder::{self, Recorder};
use crate::watch::{Feed, PipelineWatch, WatchEvent};

#[path = "guard.rs"]
mod guard;

/// What `loopwatch run` was asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    /// The checked `loopwatch.toml`.
    pub config: Config,
    /// The pipeline (its parent is the worktree).
    pub pipeline: Pipeline,
    /// The contract, for a new run (a run in progress names its own).
    pub contract: Option<PathBuf>,
    /// Archive an ended run (`.pipeline/runs/<run-id>/`) and start anew.
    pub new: bool,
}

/// How the engine stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// The run ended (now or before).
    Ended(EndStatus),
    /// A stop was asked for (the value is the exit code it asked for); the
    /// run can be resumed.
    Stopped(i32),
}

/// Runs the loop until the run ends or `stop` asks it to stop. `notice`
/// receives one line for each thing worth telling a person (a stale lock
/// taken over, processes of a dead engine stopped, a resume).
pub async fn run(
    mut opts: Options,
    mut stop: watch::Receiver<Option<i32>>,
    notice: &mut (dyn FnMut(String) + Send),
) -> Result<Finish, EngineError> {
    // Absolute: every child runs in the worktree, wherever `loopwatch run`
    // was started (the engine never changes its own folder). Guarded: the
    // journal is this engine's to write while it runs.
    if let Ok(abs) = std::path::absolute(opts.pipeline.dir()) {
        opts.pipeline = Pipeline::at(abs);
    }
    // A person's decision reaches the journal through the engine's door
    // (recorder::door): the guard takes a decision only from its ledger.
    let ledger = crate::recorder::door::Ledger::default();
    let door_ledger = ledger.clone();
    opts.pipeline =
        opts.pipeline
            .clone()
            .guarded(std::sync::Arc::new(move |ev: &Event, s: &State| {
                others_may_append(ev, s, &door_ledger)
            }));
    if let Some(c) = opts.contract.as_mut()
        && let Ok(abs) = std::path::absolute(&*c)
    {
        *c = abs;
    }
    let lock = EngineLock::acquire(opts.pipeline.dir())?;
    let door =
        crate::recorder::door::Door::open(&opts.pipeline, ledger).map_err(|e| Refusal::Door {
            dir: opts.pipeline.dir().to_path_buf(),
            source: e,
        })?;
    if let Some(pid) = lock.stale {
        notice(format!(
            "the engine lock named pid {pid}, which is gone: taken over (the run resumes)"
        ));
    }
    let gate0_timeout = gate0::Timeout::from_env().map_err(Refusal::from)?;
    let (tx, rx) = mpsc::unbounded_channel();
    let watch = PipelineWatch::start(opts.pipeline.dir(), move |ev| {
        let _ = tx.send(ev);
    })
    .map_err(|e| EngineError::Watch {
        path: opts.pipeline.dir().to_path_buf(),
        source: e,
    })?;
    let mut e = Engine {
        recorder: super::attention::recorder(opts.pipeline.clone(), &opts.config),
        feed: Feed::new(opts.pipeline.clone()),
        opts,
        gate0_timeout,
        watch,
        rx,
        settings: None,
        waited: None,
        _door: door,
        _lock: lock,
    };
    e.start(notice).await?;
    e.drive(&mut stop).await
}

struct Engine {
    opts: Options,
    recorder: Recorder,
    feed: Feed,
    gate0_timeout: gate0::Timeout,
    watch: PipelineWatch,
    rx: mpsc::UnboundedReceiver<WatchEvent>,
    settings: Option<Settings>,
    /// The limited dispatch whose usage limit this engine waited out
    /// (dispatched again once, then a person is asked).
    waited: Option<u32>,
    _door: crate::recorder::door::Door,
    _lock: EngineLock,
}

impl Engine {
    /// The state of the journal, once what other writers appended since
    /// the last look was checked (see [`crate::journal::Guard`]).
    fn state(&mut self) -> Result<State, EngineError> {
        crate::journal::check_guard(&self.opts.pipeline)?;
        self.feed.refresh();
        Ok(self.feed.state().clone())
    }

    async fn start(&mut self, notice: &mut (dyn FnMut(String) + Send)) -> Result<(), EngineError> {
        let s = self.state()?;
        let worktree = self.opts.pipeline.worktree().to_path_buf();
        match (&s.run, &s.ended) {
            (Some(run), None) if self.opts.new => {
                return Err(Refusal::InProgress {
                    run: run.id.clone(),
                }
                .into());
            }
            (Some(run), None) => {
                if !run.engine {
                    return Err(Refusal::OtherOrchestrator {
                        run: run.id.clone(),
                    }
                    .into());
                }
                if let Some(c) = &self.opts.contract {
                    let given = relative_contract(&worktree, c)?;
                    if given != run.contract {
                        return Err(Refusal::OtherContract {
                            run: run.id.clone(),
                            contract: run.contract.clone(),
                            given,
                        }
                        .into());
                    }
                }
                notice(format!(
                    "resuming run {} from the journal (seq {})",
                    run.id, s.seq
                ));
            }
            (Some(run), Some(end)) if !self.opts.new => {
                let hint = format!(
                    "`loopwatch run --new CONTRACT` archives it under {}/ and starts a new run",
                    self.opts
                        .pipeline
                        .dir()
                        .join(ARCHIVE)
                        .join(&run.id)
                        .display()
                );
                if self.opts.contract.is_some() {
                    return Err(Refusal::Ended {
                        run: run.id.clone(),
                        status: end.status.as_str(),
                        hint,
                    }
                    .into());
                }
                notice(format!(
                    "run {} already ended {}: {hint}",
                    run.id,
                    end.status.as_str()
                ));
            }
            _ => {
                let Some(c) = self.opts.contract.clone() else {
                    return Err(Refusal::NoContract.into());
                };
                if let (Some(run), Some(_)) = (&s.run, &s.ended) {
                    let to = archive(&self.opts.pipeline, &run.id)?;
                    notice(format!("run {} archived in {}", run.id, to.display()));
                    // A journal anew: what was there is the archive's now.
                    if let Some(g) = self.opts.pipeline.guard() {
                        g.forget();
                    }
                    self.feed = Feed::new(self.opts.pipeline.clone());
                }
                let info = new_run_info(&self.opts.config, &worktree, &c)?;
                if let Some(off) = self.opts.config.verify_by_test_off() {
                    notice(off);
                }
                self.recorder.run_start(info, false)?;
            }
        }
        let grace = self.opts.config.run.grace;
        let dir = self.opts.pipeline.dir().to_path_buf();
        let found =
            tokio::task::spawn_blocking(move || crate::process::tree::stop_marked(&dir, grace))
                .await
                .unwrap_or(0);
        if found > 0 {
            notice(format!(
                "stopped {found} process(es) left running by an earlier engine"
            ));
        }
        let s = self.state()?;
        for d in s.agents.iter().filter(|d| d.is_running()) {
            dispatch::record_interrupted(&self.opts.pipeline, &d.started)?;
            notice(format!(
                "dispatch #{} ({}) had no finish: recorded interrupted, it is dispatched fresh",
                d.started.dispatch, d.started.role
            ));
        }
        let s = self.state()?;
        if let Some(run) = s.run.clone() {
            let watch = self.watch_contract(&s, &run.contract, notice)?;
            self.settings = Some(Settings {
                pipeline: self.opts.pipeline.clone(),
                run,
                grace,
                log_limit: self.opts.config.run.log_limit,
                contract: Some(std::sync::Arc::new(std::sync::Mutex::new(watch))),
                left: dispatch::BudgetLeft::default(),
            });
        }
        Ok(())
    }

    /// The contract as judged: recorded when the run has no record yet
    /// (it just started, or it began before contracts were recorded), else
    /// taken up from the record. A contract whose judged parts differ from
    /// the record (a person's edit while no engine ran) is put to a person
    /// by the first look of [`Engine::look_at_contract`].
    fn watch_contract(
        &mut self,
        s: &State,
        rel: &str,
        notice: &mut (dyn FnMut(String) + Send),
    ) -> Result<ContractWatch, EngineError> {
        let refused = |e: String| EngineError::from(Refusal::ContractWatch(e));
        match &s.contract {
            Some(recorded) => match ContractWatch::resume(&self.opts.pipeline, recorded) {
                Ok(w) => Ok(w),
                Err(e) => {
                    notice(format!("{e}: the contract is judged as it is now"));
                    let (w, payload) = ContractWatch::record_now(
                        &self.opts.pipeline,
                        rel,
                        "resumed: the record could not be matched",
                    )
                    .map_err(refused)?;
                    self.recorder.contract_judged(payload)?;
                    Ok(w)
                }
            },
            None => {
                let why = if s.agents.is_empty() {
                    "run start"
                } else {
                    "resumed: first record"
                };
                let (w, payload) =
                    ContractWatch::record_now(&self.opts.pipeline, rel, why).map_err(refused)?;
                self.recorder.contract_judged(payload)?;
                Ok(w)
            }
        }
    }

    /// Between steps: applies what people decided about the contract (an
    /// approved file tagged into FILE SCOPE, an adopted or reverted change),
    /// then asks a person about any other change of its judged parts.
    fn look_at_contract(&mut self, s: &State) -> Result<(), EngineError> {
        let Some(watch) = self.settings.as_ref().and_then(|x| x.contract.clone()) else {
            return Ok(());
        };
        let mut w = watch
            .lock()
            .map_err(|_| Refusal::ContractWatch("the contract's watch failed".into()))?;
        let refused = |e: String| EngineError::from(Refusal::ContractWatch(e));
        for g in s
            .human_gates
            .iter()
            .filter(|g| !g.is_open() && g.contract_applied.is_none())
        {
            let id = g.request.id.clone();
            let payload = match (g.effect(), &g.decision) {
                (Some(Effect::JoinScope), Some(d)) if d.decision.contract_edit.is_some() => {
                    let why = format!("{id}: {} approved into FILE SCOPE", g.request.subject);
                    w.join_scope(&g.request.subject, &d.decision.reason, &why, id)
                        .map_err(refused)?
                }
                (Some(Effect::AdoptContract), _) => {
                    let why = format!("{id}: a person adopted the change");
                    w.adopt(&why, Some(id), true).map_err(refused)?
                }
                (Some(Effect::RevertContract), _) => {
                    w.put_back().map_err(refused)?;
                    let why = format!("{id}: a person put the contract back");
                    w.payload(&why, Some(id), false)
                }
                _ => continue,
            };
            self.recorder.contract_judged(payload)?;
        }
        if let Look::Changed(changes) = w.look().map_err(refused)? {
            let rel = w.rel().to_string();
            drop(w);
            self.recorder.contract_changed(&rel, &changes)?;
        }
        Ok(())
    }

    async fn drive(
        &mut self,
        stop: &mut watch::Receiver<Option<i32>>,
    ) -> Result<Finish, EngineError> {
        loop {
            if let Some(code) = *stop.borrow() {
                return Ok(Finish::Stopped(code));
            }
            let s = self.state()?;
            self.look_at_contract(&s)?;
            let s = self.state()?;
            match self.guard(&s, stop).await? {
                guard::Guard::Go => {}
                guard::Guard::Asked => continue,
                guard::Guard::Stopped(code) => return Ok(Finish::Stopped(code)),
            }
            let step = match s.next.clone() {
                Next::Done { end, .. } | Next::Stop { end, .. } => {
                    if let Some(e) = &s.ended {
                        return Ok(Finish::Ended(e.status));
                    }
                    self.recorder.run_end(end)?;
                    return Ok(Finish::Ended(end));
                }
                Next::Human { id, .. } => self.await_human(&id, stop).await?,
                Next::Dev { .. } => self.developer(&s, stop).await?,
                Next::Review { step, .. } => self.review(step, &s, stop).await?,
                Next::Gate { gate, .. } | Next::Retry { gate, .. } => {
                    let gate = Gate::of(gate);
                    match gate.judge {
                        None => self.floor(&s, stop).await?,
                        Some(judge) => self.judge(gate, judge, &s, stop).await?,
                    }
                }
            };
            if let Some(code) = step {
                return Ok(Finish::Stopped(code));
            }
        }
    }

    fn settings(&self) -> Result<&Settings, EngineError> {
        self.settings.as_ref().ok_or_else(|| Refusal::NoRun.into())
    }

    /// GATE 0, in-process, exactly as `loopwatch gate0 run` records it.
    async fn floor(
        &mut self,
        s: &State,
        stop: &mut watch::Receiver<Option<i32>>,
    ) -> Result<Option<i32>, EngineError> {
        let run = &self.settings()?.run;
        let path = recorder::contract_path(self.opts.pipeline.worktree(), &run.contract)
            .map_err(Refusal::from)?;
        if s.current_gate.as_ref().map(|c| c.gate) != Some(GateName::Floor) {
            self.recorder.start_round(GateName::Floor, false)?;
        }
        let timeout = self.gate0_timeout.clone();
        let mut checks =
            gate0::exec::Checks::new(self.opts.pipeline.worktree(), &crate::process::Stop::new());
        checks.on_behalf_of = Some(crate::process::tree::marker(
            self.opts.pipeline.dir(),
            "gate0",
        ));
        let halt = checks.stop.clone();
        let mut handle = tokio::task::spawn_blocking(move || gate0::run(&path, &timeout, &checks));
        let outcome = tokio::select! {
            r = &mut handle => r,
            code = stopped(stop) => {
                // Stops the running check's tree; nothing is recorded.
                halt.ask(code);
                let _ = handle.await;
                return Ok(Some(code));
            }
        };
        let outcome = outcome.map_err(Refusal::Gate0Stopped)?;
        let result = recorder::floor_round(outcome.rows.clone(), outcome.verdict.clone());
        self.recorder
            .round(GateName::Floor, result, &outcome.report, false)?;
        Ok(None)
    }

    /// GATE 1 or 2: the verifier or auditor, its answer recorded as the round.
    async fn judge(
        &mut self,
        spec: &Gate,
        judge: Judge,
        s: &State,
        stop: &mut watch::Receiver<Option<i32>>,
    ) -> Result<Option<i32>, EngineError> {
        let (gate, role) = (spec.name, judge.role);
        if s.current_gate.as_ref().map(|c| c.gate) != Some(gate) {
            self.recorder.start_round(gate, false)?;
        }
        let s = self.state()?;
        let (iteration, round) = s
            .current_gate
            .as_ref()
            .map_or((s.iteration_number(), s.next_round(gate)), |c| {
                (c.iteration, c.round)
            });
        let set = self.settings()?.clone();
        let (finished, raw) = match rules::unrecorded_answer(&s, gate) {
            Some(f) => (f.clone(), dispatch::saved_answer(&self.opts.pipeline, f)),
            None => {
                let inputs = (judge.input)(&set.run);
                let agent = self.agent(role)?;
                let job = Job {
                    agent: &agent,
                    iteration,
                    gate: Some((gate, round)),
                    inputs,
                    dispatch: next_dispatch(&s),
                };
                let d = dispatch::dispatch(&set, job, stop).await?;
                if d.finished.interrupted {
                    return Ok(Some(stop.borrow().unwrap_or(130)));
                }
                if d.answer.limited.is_some() {
                    // Limited, not failed: no round is recorded; the
                    // look before the next step waits or asks.
                    return Ok(None);
                }
                (d.finished, d.answer.text)
            }
        };
        let name = format!("{role} dispatch #{}", finished.dispatch);
        let result = match finished.failure() {
            Some(why) => spec.failed(&name, why),
            None => spec.read(&name, &raw),
        };
        self.recorder.round(gate, result, &raw, false)?;
        Ok(None)
    }

    /// The developer: the hand-off first (`dev.dispatched`), then the dispatch.
    async fn developer(
        &mut self,
        s: &State,
        stop: &mut watch::Receiver<Option<i32>>,
    ) -> Result<Option<i32>, EngineError> {
        if !rules::dev_handed_off(s) {
            let lines: Vec<Value> = rules::handoff_lines(s)
                .into_iter()
                .map(Value::from)
                .collect();
            self.recorder.dev(lines)?;
            return Ok(None);
        }
        let set = self.settings()?.clone();
        let iteration = s.iteration_number().max(1);
        let request = if iteration <= 1 {
            let path = recorder::contract_path(self.opts.pipeline.worktree(), &set.run.contract)
                .map_err(Refusal::from)?;
            let text = std::fs::read_to_string(&path).map_err(|source| Refusal::ReadContract {
                path: path.clone(),
                source,
            })?;
            request_section(&text)
        } else {
            String::new()
        };
        let agent = self.agent(AgentRole::Developer)?;
        let job = Job {
            agent: &agent,
            iteration,
            gate: None,
            inputs: rules::developer_input(s, iteration, &request),
            dispatch: next_dispatch(s),
        };
        let d = dispatch::dispatch(&set, job, stop).await?;
        Ok(d.finished.interrupted.then(|| stop.borrow().unwrap_or(130)))
    }

    /// A step of the review stage (carried out by [`stage::step`]).
    async fn review(
        &mut self,
        step: ReviewStep,
        s: &State,
        stop: &mut watch::Receiver<Option<i32>>,
    ) -> Result<Option<i32>, EngineError> {
        let set = self.settings()?.clone();
        let dispatches = Dispatches::from(next_dispatch(s));
        let ctx = Ctx {
            settings: &set,
            recorder: &self.recorder,
            config: &self.opts.config,
            dispatches: &dispatches,
        };
        stage::step(&ctx, step, s, stop).await
    }

    /// Sleeps on the filesystem watch until the gate is decided or expires
    /// (or the stop), sending its notifications when due.
    async fn await_human(
        &mut self,
        id: &str,
        stop: &mut watch::Receiver<Option<i32>>,
    ) -> Result<Option<i32>, EngineError> {
        let mut attention =
            super::attention::Attention::new(self.opts.pipeline.clone(), &self.opts.config);
        loop {
            let s = self.state()?;
            let open = s.human_gate(id).is_some_and(|g| g.is_open());
            if !open {
                return Ok(None);
            }
            let wake = attention.look(&s, Some(id))?;
            if wake.is_zero() {
                continue;
            }
            tokio::select! {
                ev = self.rx.recv() => {
                    let mut rescan = matches!(ev, Some(WatchEvent::Rescan));
                    while let Ok(more) = self.rx.try_recv() {
                        rescan |= more == WatchEvent::Rescan;
                    }
                    if rescan {
                        self.watch.rearm();
                        self.feed.rescan();
                    }
                    if ev.is_none() {
                        // The watcher is gone: fall back to a slow re-read.
                        tokio::time::sleep(Duration::from_secs(1)).await;
                    }
                }
                code = stopped(stop) => return Ok(Some(code)),
                // An expiry or a notification falls due (or the guard
                // against a missed event: one read of the journal).
                () = tokio::time::sleep(wake) => {}
            }
        }
    }

    fn agent(&self, role: AgentRole) -> Result<AgentConfig, EngineError> {
        required_agent(&self.opts.config, role).cloned()
    }
}

/// What another writer may append while the engine drives the run: a
/// person's decision that came through the engine's door (`door`: the ones
/// it recorded) on a gate that took it (open, and one of its options), an
/// expiry of a gate that took it once it fell due, a notification's claim,
/// a note. Anything else is the engine's alone to write.
fn others_may_append(
    ev: &Event,
    s: &State,
    door: &crate::recorder::door::Ledger,
) -> Result<(), String> {
    let took = |id: &str, seq: Option<u64>| match (s.human_gate(id), seq) {
        (None, _) => Err(format!("{id} is not a gate of this run")),
        (Some(_), Some(at)) if at == ev.seq => Ok(()),
        (Some(_), _) => Err(format!(
            "{id} does not take it (decided or expired before, or not one of its options)"
        )),
    };
    match &ev.body {
        EventBody::HumanDecided(d) => took(
            &d.id,
            s.human_gate(&d.id)
                .and_then(|g| g.decision.as_ref())
                .map(|r| r.seq),
        )
        .and_then(|()| {
            if door.took(d) {
                Ok(())
            } else {
                Err("not handed to the engine at its door (appended by another writer: while `loopwatch run` drives the run, a person's decision is written by the engine)".into())
            }
        })
        .map_err(|why| format!("a decision of {}: {why}", d.id)),
        // An approval counted towards a decision policy's `required`.
        EventBody::HumanApproved(d) => took(
            &d.id,
            s.human_gate(&d.id)
                .and_then(|g| g.approvals.last())
                .map(|r| r.seq),
        )
        .and_then(|()| {
            if door.took(d) {
                Ok(())
            } else {
                Err("not handed to the engine at its door".into())
            }
        })
        .map_err(|why| format!("an approval of {}: {why}", d.id)),
        EventBody::HumanExpired(x) => took(
            &x.id,
            s.human_gate(&x.id)
                .and_then(|g| g.expired.as_ref())
                .map(|r| r.seq),
        )
        .and_then(|()| {
            let due = s
                .human_gate(&x.id)
                .and_then(crate::recorder::expires_at)
                .is_some_and(|at| at <= jiff::Timestamp::now());
            if due {
                Ok(())
            } else {
                Err("its expiry has not fallen due".into())
            }
        })
        .map_err(|why| format!("an expiry of {}: {why}", x.id)),
        // A split only makes the loop verify more (a finding the ledger
        // would have let go is verified again): never a way around a gate.
        EventBody::NotifySent(_) | EventBody::Note { .. } | EventBody::FindingSplit(_) => Ok(()),
        other => Err(format!(
            "a `{}` event, which only loopwatch run writes while it drives the run",
            other.type_name()
        )),
    }
}

/// `[agents.<role>]` of `config`, or the refusal naming the file.
pub fn required_agent(config: &Config, role: AgentRole) -> Result<&AgentConfig, EngineError> {
    config.agent(role).ok_or_else(|| {
        Refusal::NoAgent {
            config: config.path.clone(),
            role,
        }
        .into()
    })
}

/// The `run` of a new run on `contract` in `worktree` (`run.started`): the
/// contract relative to the worktree (refused outside it), DIFF (`[run] diff`,
/// else HEAD now), TEST and the review stage of `config`.
pub fn new_run_info(
    config: &Config,
    worktree: &Path,
    contract: &Path,
) -> Result<RunInfo, EngineError> {
    let rel = relative_contract(worktree, contract)?;
    let full = worktree.join(&rel);
    let text = std::fs::read_to_string(&full).map_err(|source| Refusal::ReadContract {
        path: full.clone(),
        source,
    })?;
    let cfg = &config.run;
    let diff = match &cfg.diff {
        Some(d) => d.clone(),
        None => crate::code::git_answer(worktree, &["rev-parse", "HEAD"]).ok_or_else(|| {
            Refusal::NoHead {
                worktree: worktree.to_path_buf(),
                config: config.path.clone(),
            }
        })?,
    };
    let id = Path::new(&rel)
        .file_stem()
        .map_or_else(|| "run".to_string(), |s| s.to_string_lossy().into_owned());
    Ok(RunInfo {
        id,
        flow: header_field(&text, "flow").unwrap_or_else(|| "feat".into()),
        branch: crate::code::git_answer(worktree, &["rev-parse", "--abbrev-ref", "HEAD"])
            .unwrap_or_default(),
        contract: rel,
        diff,
        test: cfg.test.clone(),
        worktree: worktree.display().to_string(),
        max_rounds: Some(cfg.max_rounds),
        engine: true,
        review: config.agent(AgentRole::Reviewer).map(|_| ReviewInfo {
            verify_by_test: config.verify_by_test_off().is_none() && config.verify_by_test.enabled,
            max_findings: config.verify_by_test.max_findings,
        }),
        budget: (!config.budget.is_empty()).then(|| crate::model::budget::to_json(&config.budget)),
        extra: Default::default(),
    })
}

/// Resolves when a stop is asked for, with its exit code.
async fn stopped(stop: &mut watch::Receiver<Option<i32>>) -> i32 {
    match stop.wait_for(Option::is_some).await {
        Ok(v) => v.unwrap_or(130),
        Err(_) => std::future::pending().await,
    }
}

fn next_dispatch(s: &State) -> u32 {
    s.agents
        .iter()
        .map(|a| a.started.dispatch)
        .max()
        .unwrap_or(0)
        + 1
}

/// Where `--new` archives ended runs, inside `.pipeline/`.
pub const ARCHIVE: &str = "runs";

/// Moves everything of an ended run out of `.pipeline/` into
/// `.pipeline/runs/<run-id>/` (`-2`, `-3`… when that is taken), under the
/// writer lock; the locks and `.gitignore` stay.
fn archive(pipeline: &Pipeline, run_id: &str) -> Result<PathBuf, EngineError> {
    let io = |what: &'static str, p: &Path, source: std::io::Error| Refusal::Archive {
        what,
        path: p.to_path_buf(),
        source,
    };
    let _lock = crate::journal::PipelineLock::acquire(
        &pipeline.lock_path(),
        crate::journal::PipelineLock::timeout_from_env()?,
    )?;
    let base = pipeline.dir().join(ARCHIVE);
    std::fs::create_dir_all(&base).map_err(|e| io("create", &base, e))?;
    let safe: String = run_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    let mut to = base.join(&safe);
    let mut n = 2;
    while to.exists() {
        to = base.join(format!("{safe}-{n}"));
        n += 1;
    }
    std::fs::create_dir(&to).map_err(|e| io("create", &to, e))?;
    let keep = [ARCHIVE, "lock", crate::journal::ENGINE_LOCK, ".gitignore"];
    let entries = std::fs::read_dir(pipeline.dir()).map_err(|e| io("list", pipeline.dir(), e))?;
    for e in entries.flatten() {
        let name = e.file_name();
        if keep.iter().any(|k| name == *k) {
            continue;
        }
        let dest = to.join(&name);
        std::fs::rename(e.path(), &dest).map_err(|err| io("move", &e.path(), err))?;
    }
    Ok(to)
}

/// The contract's path relative to the worktree; refused outside it.
pub fn relative_contract(worktree: &Path, contract: &Path) -> Result<String, EngineError> {
    let abs = std::fs::canonicalize(contract)
        .or_else(|_| std::fs::canonicalize(worktree.join(contract)))
        .map_err(|source| Refusal::ReadContract {
            path: contract.to_path_buf(),
            source,
        })?;
    let root = std::fs::canonicalize(worktree).map_err(|source| Refusal::Worktree {
        path: worktree.to_path_buf(),
        source,
    })?;
    let rel = abs
        .strip_prefix(&root)
        .map_err(|_| Refusal::OutsideWorktree {
            contract: contract.to_path_buf(),
            worktree: worktree.to_path_buf(),
        })?;
    Ok(rel.to_string_lossy().into_owned())
}

/// The `## REQUEST` section of a contract, without its heading.
pub fn request_section(contract: &str) -> String {
    let mut out = Vec::new();
    let mut inside = false;
    for line in contract.lines() {
        if line.starts_with("## ") {
            if inside {
                break;
            }
            inside = line
                .trim_start_matches('#')
                .trim()
                .to_ascii_uppercase()
                .starts_with("REQUEST");
            continue;
        }
        if inside {
            out.push(line);
        }
    }
    out.join("\n").trim().to_string()
}

/// `flow: feat` from the contract's header line.
fn header_field(text: &str, key: &str) -> Option<String> {
    text.lines().take(10).find_map(|l| {
        l.split('|').find_map(|part| {
            let part = part.trim().trim_start_matches("- ");
            let v = part.strip_prefix(key)?.strip_prefix(':')?.trim();
            (!v.is_empty()).then(|| v.to_string())
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_and_the_flow_are_read_from_the_contract() {
        let c = "# CONTRACT — x\n- date: 2026-11-30 | flow: hotfix | branch: b\n\n## REQUEST (verbatim — IMMUTABLE)\n\"Do the thing.\"\n\n## CLARIFICATIONS\nnone\n";
        assert_eq!(request_section(c), "\"Do the thing.\"");
        assert_eq!(header_field(c, "flow").as_deref(), Some("hotfix"));
        assert_eq!(request_section("no sections"), "");
    }
}
