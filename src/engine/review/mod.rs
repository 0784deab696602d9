//! The review stage of `loopwatch run`, between GATE 1 and GATE 2: the
//! reviewer's review, the finding-verifier graph, triage, and
//! verify-by-test. Each step is a `Next` the rules produce; this module only
//! carries them out.
//!
//! - [`graph`]: parse → map (one [`lane`] per finding) → done;
//! - [`commit`]: the lanes' appends, grouped into one per commit;
//! - [`verdict_gate`]: loopwatch's own check of every verdict;
//! - [`triage`]: the triage file, from `[agents.triage]` or derived;
//! - [`verify_by_test`]: repro tests for accepted blocking findings;
//! - [`finish`]: the stage's end, counted as a review round.

pub mod commit;
pub mod graph;
pub mod lane;
pub mod triage;
pub mod verdict_gate;
pub mod verify_by_test;

use std::sync::atomic::{AtomicU32, Ordering};

use tokio::sync::watch;

use super::EngineError;
use super::config::{AgentConfig, Config};
use super::dispatch::{self, Job, Settings};
use crate::model::State;
use crate::model::event::AgentRole;
use crate::model::rules::{self, ReviewStep};
use crate::recorder::Recorder;

/// What every step of the stage works with.
#[derive(Debug)]
pub struct Ctx<'a> {
    /// The run's dispatch settings.
    pub settings: &'a Settings,
    /// The recorder of the run's pipeline.
    pub recorder: &'a Recorder,
    /// The checked `loopwatch.toml`.
    pub config: &'a Config,
    /// The next free dispatch number.
    pub dispatches: &'a Dispatches,
}

impl Ctx<'_> {
    /// `[agents.<role>]`, or the refusal naming the file.
    pub fn agent(&self, role: AgentRole) -> Result<&AgentConfig, EngineError> {
        super::driver::required_agent(self.config, role)
    }
}

/// Dispatch numbers for lanes that start at once: each is taken once, in
/// the order asked, however the lanes interleave.
#[derive(Debug)]
pub struct Dispatches(AtomicU32);

impl Dispatches {
    /// Numbers from `first` on.
    pub fn from(first: u32) -> Self {
        Dispatches(AtomicU32::new(first))
    }

    /// The next number.
    pub fn take(&self) -> u32 {
        self.0.fetch_add(1, Ordering::SeqCst)
    }
}

/// Records the end of the review of `iteration` (`review.finished`, with
/// the `cap-reached` gate when the round used the last one), the rules
/// applied under the journal lock.
pub fn finish(rec: &Recorder, iteration: u32) -> Result<(), EngineError> {
    rec.review_finish(iteration, graph::results_path(rec, iteration))?;
    Ok(())
}

/// Carries out one step of the review stage, on the iteration whose GATE 1
/// passed (the green step: on the iteration whose red tests are due).
/// `Ok(Some(code))` when a stop was asked for.
pub async fn step(
    ctx: &Ctx<'_>,
    step: ReviewStep,
    s: &State,
    stop: &mut watch::Receiver<Option<i32>>,
) -> Result<Option<i32>, EngineError> {
    let pipeline = ctx.recorder.pipeline();
    let n = s
        .latest_round()
        .map_or(s.iteration_number().max(1), |g| g.iteration);
    match step {
        ReviewStep::Review => {
            let job = Job {
                agent: ctx.agent(AgentRole::Reviewer)?,
                iteration: n,
                gate: None,
                inputs: rules::review::reviewer_input(s),
                dispatch: ctx.dispatches.take(),
            };
            let env = [(dispatch::STEP_ENV, "review".to_string())];
            let d = dispatch::dispatch_env(ctx.settings, job, &env, stop).await?;
            // A failed review is dispatched again; the second failure in a
            // row opened a structural gate with its finish. A usage limit
            // is no failure: the look before the next step waits or asks.
            Ok(d.finished.interrupted.then(|| stop.borrow().unwrap_or(130)))
        }
        ReviewStep::Verify => {
            let review = rules::review::reviewer_dispatch(s, n)
                .and_then(|d| d.finished.as_ref())
                .map(|f| dispatch::saved_answer(pipeline, f))
                .unwrap_or_default();
            let text = String::from_utf8_lossy(&review);
            graph::run(ctx, s, n, &text, stop).await
        }
        ReviewStep::Triage => triage::run(ctx, s, n, stop).await,
        ReviewStep::VerifyByTest => {
            let file = s
                .iteration(n)
                .and_then(|it| it.triage.as_ref())
                .map_or_else(|| format!("triage-{n}.json"), |t| t.file.clone());
            let job = verify_by_test::Job {
                settings: ctx.settings,
                agent: ctx.agent(AgentRole::VerifyByTest)?,
                config: &ctx.config.verify_by_test,
                iteration: n,
                triage_file: pipeline.dir().join(file),
                dispatch: ctx.dispatches.take(),
            };
            verify_by_test::run(ctx.recorder, job, stop).await
        }
        ReviewStep::Done => {
            finish(ctx.recorder, n)?;
            Ok(None)
        }
        ReviewStep::Green => {
            let job = verify_by_test::Recheck {
                settings: ctx.settings,
                config: &ctx.config.verify_by_test,
                iteration: rules::green::pending(s).unwrap_or(n),
            };
            verify_by_test::recheck(ctx.recorder, job, stop).await
        }
    }
}
