//! Verify-by-test: one dispatch writes a repro test per accepted blocking
//! finding, loopwatch runs each test alone and judges it from its log, and
//! the red tests handed to the developer are run again after its work.

use std::path::PathBuf;

use tokio::sync::watch;

use crate::engine::EngineError;
use crate::engine::config::{AgentConfig, VerifyByTestConfig};
use crate::engine::dispatch::Settings;
use crate::recorder::Recorder;

/// One iteration's verify-by-test step.
#[derive(Debug, Clone)]
pub struct Job<'a> {
    /// The run's dispatch settings.
    pub settings: &'a Settings,
    /// `[agents.verify-by-test]`.
    pub agent: &'a AgentConfig,
    /// `[verify_by_test]`.
    pub config: &'a VerifyByTestConfig,
    /// The iteration whose triage is tested.
    pub iteration: u32,
    /// The iteration's recorded triage file (`.pipeline/triage-<i>.json`).
    pub triage_file: PathBuf,
    /// The dispatch number the agent gets.
    pub dispatch: u32,
}

/// Runs the step: the dispatch, each test alone, the results, `triage
/// apply`, the cleanup check and `verify.summary`. `Ok(Some(code))` when a
/// stop was asked for.
pub async fn run(
    _rec: &Recorder,
    _job: Job<'_>,
    _stop: &mut watch::Receiver<Option<i32>>,
) -> Result<Option<i32>, EngineError> {
    Err(EngineError::Refused(
        "verify-by-test is not available yet".into(),
    ))
}

/// The red tests of an earlier iteration, run again after the developer's work.
#[derive(Debug, Clone)]
pub struct Recheck<'a> {
    /// The run's dispatch settings.
    pub settings: &'a Settings,
    /// The iteration whose developer dispatch just succeeded.
    pub iteration: u32,
}

/// Reruns each red test handed to the developer of `iteration` and records
/// one `verify.green` per test. `Ok(Some(code))` when a stop was asked for.
pub async fn recheck(
    _rec: &Recorder,
    _job: Recheck<'_>,
    _stop: &mut watch::Receiver<Option<i32>>,
) -> Result<Option<i32>, EngineError> {
    Err(EngineError::Refused(
        "the red-test recheck is not available yet".into(),
    ))
}
