//! The review stage's events, written by `loopwatch run` between GATE 1
//! and GATE 2: one `finding.lane` per step of each finding's lane in the
//! finding-verifier graph (so the lanes show live and a resumed engine
//! re-runs only the unfinished ones), and `review.finished` once the stage
//! of an iteration is over (its round counted, the cap gate opened with it).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::types::{Extra, FindingVerdict};

/// `review` of `run.started`: the run has a review stage after GATE 1.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewInfo {
    /// Verify-by-test runs after the triage (`[verify_by_test] enabled`).
    #[serde(default)]
    pub verify_by_test: bool,
    /// Accepted blocking findings verify-by-test attempts per iteration.
    #[serde(default)]
    pub max_findings: u32,
}

/// Where one finding's lane stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[derive(strum::IntoStaticStr)]
#[strum(serialize_all = "kebab-case")]
pub enum LaneState {
    /// Parsed, waiting for a free lane.
    Queued,
    /// The finding verifier is dispatched (`attempt` says which).
    Running,
    /// The first answer failed the verdict gate (`reason`); dispatched again.
    Rejected,
    /// A verdict passed the verdict gate, or the second answer failed it.
    Done,
    /// The agent failed twice (crash, timeout): UNVERIFIABLE, a pipeline fault.
    Fault,
    /// The finding was settled in an earlier round (the finding ledger):
    /// never verified again, its earlier verdict carried over (`raisedAgain`).
    RaisedAgain,
    /// Waiting for a usage limit to be over (`reason`): the lane's agent
    /// answered one, or another lane's did before this one could be
    /// dispatched again. No verdict, no failure: the lane is dispatched
    /// again once the limit was waited out or a person chose retry.
    Limited,
}

impl LaneState {
    /// The token as written in files.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// True once the lane has its verdict.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            LaneState::Done | LaneState::Fault | LaneState::RaisedAgain
        )
    }
}

/// Payload of `finding.lane`: one transition of one finding's lane.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FindingLane {
    /// Iteration.
    pub iteration: u32,
    /// Finding id (from the parsed findings list).
    pub finding: String,
    /// 0-based position in the findings list (results are kept in this order).
    pub index: u32,
    /// The new state.
    pub state: LaneState,
    /// Dispatch attempt (1 or 2; 0 while queued).
    #[serde(default)]
    pub attempt: u32,
    /// done, fault: the verdict recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<FindingVerdict>,
    /// done, fault: the evidence quoted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// done, fault: the note (a `PIPELINE-FAULT: ` note for a fault).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// rejected: why the verdict gate refused the answer; running: why the
    /// attempt before failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// queued: the finding as the parse step returned it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item: Option<Value>,
    /// queued: the project folder the parse step named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_dir: Option<String>,
    /// What the verdict gate normalised to read the answer (a code fence,
    /// prose around the JSON, an echoed id other than the finding's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub normalized: Vec<String>,
    /// The dispatch of this attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatch: Option<u32>,
    /// raised-again: the earlier finding it is the same as, and what
    /// became of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raised_again: Option<crate::model::ledger::RaisedAgain>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

impl FindingLane {
    /// A transition with only the fields every state has.
    pub fn new(iteration: u32, finding: &str, index: u32, state: LaneState, attempt: u32) -> Self {
        FindingLane {
            iteration,
            finding: finding.to_string(),
            index,
            state,
            attempt,
            verdict: None,
            evidence: None,
            note: None,
            reason: None,
            item: None,
            project_dir: None,
            normalized: Vec::new(),
            dispatch: None,
            raised_again: None,
            extra: Extra::default(),
        }
    }
}

/// Payload of `review.finished`: the review stage of an iteration is over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewFinished {
    /// Iteration.
    pub iteration: u32,
    /// Review round: the n-th review of the run (1-based).
    pub round: u32,
    /// Accepted blocking findings left after the stage, in triage order.
    #[serde(default)]
    pub blocking: Vec<String>,
    /// UNVERIFIABLE findings a person asked to be fixed (`fix` on their
    /// `unverifiable-finding` gate), handed back with the person's reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixed: Vec<String>,
    /// Lines the developer gets back (blocking and fixed findings, red
    /// tests not green); 0 for a clean review.
    #[serde(default)]
    pub gaps: u32,
    /// The finding verifier's results, relative to `.pipeline/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub results: Option<String>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

impl FindingLane {
    /// One line: `F2 lane 2: verifying (attempt 2)`, `F2 lane 2: VERIFIED`.
    pub fn summary(&self) -> String {
        let what = match self.state {
            LaneState::Queued => "queued".to_string(),
            LaneState::Running => format!("verifying (attempt {})", self.attempt),
            LaneState::Rejected => format!(
                "rejected once: {}",
                self.reason.as_deref().unwrap_or("no reason given")
            ),
            LaneState::Limited => format!(
                "usage limit: {}",
                self.reason.as_deref().unwrap_or("no reason given")
            ),
            LaneState::RaisedAgain => match &self.raised_again {
                Some(r) => format!("raised again: {}", r.short()),
                None => "raised again".to_string(),
            },
            LaneState::Done | LaneState::Fault => {
                let v = self.verdict.map_or("no verdict", |v| v.as_str());
                let fault = if self.state == LaneState::Fault {
                    " (fault)"
                } else {
                    ""
                };
                format!("{v}{fault}")
            }
        };
        format!("{} lane {}: {what}", self.finding, self.index + 1)
    }
}

impl ReviewFinished {
    /// One line: `review round 1 of iteration 2: clean`.
    pub fn summary(&self) -> String {
        let what = if self.gaps == 0 {
            "clean".to_string()
        } else {
            format!(
                "{} accepted blocking finding(s), {} gap(s) back to the developer",
                self.blocking.len(),
                self.gaps
            )
        };
        format!(
            "review round {} of iteration {}: {what}",
            self.round, self.iteration
        )
    }
}
