//! The inputs a dry run shows per dispatch: those of the first dispatch of
//! each role, built by the code that builds them for the run; for the steps
//! fed by what the run produces, their shape, built by the same code with
//! `<…>` placeholders.

use std::path::Path;

use serde_json::json;

use super::Target;
use crate::engine::driver::request_section;
use crate::engine::review::verify_by_test::{self, runner};
use crate::engine::review::{graph, lane, triage};
use crate::model::event::AgentRole;
use crate::model::triage::{TriageFinding, TriageSeverity};
use crate::model::{Finding, FindingVerdict, rules};

/// One dispatch to show.
pub(super) struct Dispatch {
    /// `LW_STEP`, when the dispatch serves a step of the review stage.
    pub(super) step: Option<&'static str>,
    /// `LW_FINDING_ID`, for a finding lane.
    pub(super) finding: Option<&'static str>,
    /// The inputs.
    pub(super) inputs: String,
    /// What the inputs are.
    pub(super) about: String,
}

const SHAPE: &str = "the shape of its inputs: the <…> parts are filled in by the run";
const EVERY: &str = "the inputs of every one of its dispatches in this run";

/// The dispatches of `role`, with the inputs of the first of each.
pub(super) fn dispatches(
    role: AgentRole,
    t: &Target,
    worktree: &Path,
) -> Result<Vec<Dispatch>, String> {
    let run = &t.run;
    let one = |step, inputs, about: &str| {
        vec![Dispatch {
            step,
            finding: None,
            inputs,
            about: about.to_string(),
        }]
    };
    Ok(match role {
        AgentRole::Developer => {
            let iteration = t.state.iteration_number().max(1);
            let request = if iteration <= 1 {
                contract_request(worktree, &run.contract)?
            } else {
                String::new()
            };
            let about = format!("the inputs of its dispatch for iteration {iteration}");
            one(
                None,
                rules::developer_input(&t.state, iteration, &request),
                &about,
            )
        }
        AgentRole::Verifier => one(None, rules::verifier_input(run), EVERY),
        AgentRole::Auditor => one(None, rules::auditor_input(run), EVERY),
        AgentRole::Reviewer => one(
            Some("review"),
            rules::review::reviewer_input(&t.state),
            EVERY,
        ),
        AgentRole::FindingVerifier => {
            let item = json!({
                "id": "<id>",
                "severity": "<severity>",
                "path": "<path>",
                "lines": "<lines>",
                "claim": "<claim>",
            });
            let job = lane::LaneJob {
                iteration: 1,
                index: 0,
                finding: "<id>".into(),
                item,
                project_dir: "<project_dir>".into(),
            };
            vec![
                Dispatch {
                    step: Some("parse"),
                    finding: None,
                    inputs: graph::parse_input("<the reviewer's answer, as it printed it>", None),
                    about: format!("once per review; {SHAPE}"),
                },
                Dispatch {
                    step: Some("verify"),
                    finding: Some("<id>"),
                    inputs: lane::input(&job, None),
                    about: format!("once per finding, max_concurrency at once; {SHAPE}"),
                },
            ]
        }
        AgentRole::Triage => {
            let f = Finding {
                id: "<id>".into(),
                severity: "<severity>".into(),
                path: "<path>".into(),
                lines: "<lines>".into(),
                claim: "<claim>".into(),
                verdict: FindingVerdict::Verified,
                evidence: "<evidence>".into(),
                note: "<note>".into(),
                extra: Default::default(),
            };
            one(
                Some("triage"),
                triage::input(1, &[f]),
                &format!("once per review, with every finding and its verdict; {SHAPE}"),
            )
        }
        AgentRole::VerifyByTest => {
            let f = TriageFinding {
                id: "<id>".into(),
                severity: TriageSeverity::Blocking,
                title: "<title>".into(),
                path: "<path>".into(),
                lines: "<lines>".into(),
                claim: "<claim>".into(),
                reviewer: String::new(),
                reason: None,
                verification: None,
                extra: Default::default(),
            };
            let cmd = runner::detect(&run.test);
            one(
                None,
                verify_by_test::input::compose(
                    &run.test,
                    cmd.as_ref().map_err(ToString::to_string),
                    &["<the tracked files whose path holds test or spec>".to_string()],
                    &[f],
                    &run.diff,
                    "<the diff of the findings' files since the DIFF base>\n",
                ),
                &format!("once per review with accepted blocking findings; {SHAPE}"),
            )
        }
    })
}

/// The contract's REQUEST section, read as any file from outside.
fn contract_request(worktree: &Path, contract: &str) -> Result<String, String> {
    let path = crate::recorder::contract_path(worktree, contract).map_err(|e| e.to_string())?;
    let bytes = crate::util::read_regular(&path, crate::util::MAX_TEXT_BYTES)
        .map_err(|e| format!("contract {}: {e}", path.display()))?;
    Ok(request_section(&String::from_utf8_lossy(&bytes)))
}
