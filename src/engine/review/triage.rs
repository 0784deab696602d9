//! The triage step: `[agents.triage]` writes the triage file when it is
//! configured (its answer is the file's JSON, unwrapped like any answer);
//! without one, or when its file is refused, the file is derived from the
//! verdicts by the rules. Either way it is read back as a 3.2.0 triage
//! file, checked against the iteration's findings, kept as
//! `.pipeline/triage-<iteration>.json` and recorded.

use serde_json::json;
use tokio::sync::watch;

use super::verdict_gate::extract_object;
use super::{Ctx, EngineError};
use crate::engine::Refusal;
use crate::engine::dispatch::{self, DispatchError, Job, STEP_ENV};
use crate::model::event::AgentRole;
use crate::model::rules::review::{apply_person, check_triage, derive_triage, place_raised_again};
use crate::model::triage::{TRIAGE_SCHEMA_VERSION, Triage};
use crate::model::{Finding, State};

/// The triage agent's input: what it sorts and the shape it answers in.
pub fn input(iteration: u32, findings: &[Finding]) -> String {
    let body = json!({
        "schemaVersion": TRIAGE_SCHEMA_VERSION,
        "iteration": iteration,
        "findings": findings,
    });
    format!(
        "Sort these findings into accepted, deferred and rejected. Answer with ONLY a triage file (schemaVersion {TRIAGE_SCHEMA_VERSION}): {{\"schemaVersion\",\"iteration\",\"accepted\":[...],\"deferred\":[...],\"rejected\":[...]}}, every finding exactly once, a reason on each deferred or rejected one.\n{body}\n"
    )
}

/// Runs the step for `iteration`. `Ok(Some(code))` when a stop was asked
/// for; `Ok(None)` with nothing recorded when the agent answered a usage
/// limit.
pub async fn run(
    ctx: &Ctx<'_>,
    state: &State,
    iteration: u32,
    stop: &mut watch::Receiver<Option<i32>>,
) -> Result<Option<i32>, EngineError> {
    let findings = state
        .iteration(iteration)
        .map(|it| it.findings.clone())
        .unwrap_or_default();
    // Findings raised again are placed by the rules (the finding ledger):
    // the agent sorts the others only.
    let asked = crate::model::ledger::asked(&findings);
    let mut triage = match ctx.config.agent(AgentRole::Triage) {
        None => derive_triage(iteration, &findings),
        Some(_) if asked.is_empty() => derive_triage(iteration, &findings),
        Some(agent) => {
            let job = Job {
                agent,
                iteration,
                gate: None,
                inputs: input(iteration, &asked),
                dispatch: ctx.dispatches.take(),
            };
            let env = [(STEP_ENV, "triage".to_string())];
            let d = dispatch::dispatch_env(ctx.settings, job, &env, stop).await?;
            if d.finished.interrupted {
                return Ok(Some(stop.borrow().unwrap_or(130)));
            }
            if d.answer.limited.is_some() {
                return Ok(None);
            }
            let read = match d.finished.failure() {
                Some(f) => Err(format!("the agent failed ({f})")),
                None => agent_triage(&d.answer.text, iteration, &asked),
            };
            match read {
                Ok(mut t) => {
                    place_raised_again(&mut t, &findings);
                    t
                }
                Err(why) => {
                    let text = format!(
                        "triage #{}: {why}; the triage of iteration {iteration} was derived from the verdicts",
                        d.finished.dispatch
                    );
                    ctx.recorder.note(text)?;
                    derive_triage(iteration, &findings)
                }
            }
        }
    };
    // What a person decided on a finding stands over any triage.
    apply_person(&mut triage, state, iteration);
    keep(ctx, iteration, &triage)?;
    Ok(None)
}

/// The triage agent's answer as a triage file, checked against the
/// iteration's findings (the error says why it cannot be kept).
pub fn agent_triage(text: &[u8], iteration: u32, findings: &[Finding]) -> Result<Triage, String> {
    let (obj, _) = extract_object(text)?;
    let bytes = serde_json::to_vec(&obj).map_err(|e| e.to_string())?;
    let t = Triage::parse("the triage agent's answer", &bytes)?;
    check_triage(&t, iteration, findings)?;
    Ok(t)
}

/// Writes `triage-<iteration>.json` (read back as a 3.2.0 file first) and
/// records it.
fn keep(ctx: &Ctx<'_>, iteration: u32, t: &Triage) -> Result<(), EngineError> {
    let name = format!("triage-{iteration}.json");
    let path = ctx.recorder.pipeline().dir().join(&name);
    let mut bytes =
        serde_json::to_vec_pretty(t).map_err(|source| Refusal::TriageJson { iteration, source })?;
    bytes.push(b'\n');
    let back = Triage::parse(&name, &bytes).map_err(Refusal::Triage)?;
    crate::util::replace_in_pipeline(&path, &bytes).map_err(DispatchError::io("write", &path))?;
    let (counts, buckets) = back.buckets();
    ctx.recorder.triage(iteration, name, counts, buckets)?;
    Ok(())
}
