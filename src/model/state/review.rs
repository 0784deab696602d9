//! The review stage as folded: each iteration's lanes, whether its
//! verdicts and its end were recorded, and the run's review rounds.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::event::{FindingLane, LaneState, ReviewFinished};
use crate::model::types::FindingVerdict;

/// One finding's lane, as its last `finding.lane` left it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Lane {
    /// Finding id.
    pub finding: String,
    /// 0-based position in the findings list.
    pub index: u32,
    /// Where it stands.
    pub state: LaneState,
    /// Dispatch attempt (1 or 2; 0 while queued).
    pub attempt: u32,
    /// True once an answer of this lane was rejected by the verdict gate.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rejected_once: bool,
    /// The verdict, once final.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<FindingVerdict>,
    /// The evidence, once final.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub evidence: String,
    /// The note, once final.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// The last reason given (rejection, failed attempt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The finding as parsed.
    #[serde(default)]
    pub item: Value,
    /// What the verdict gate normalised.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub normalized: Vec<String>,
    /// raised-again: the earlier finding it is the same as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raised_again: Option<crate::model::ledger::RaisedAgain>,
}

impl Lane {
    /// A lane waiting for its first dispatch: nothing answered yet.
    fn queued(finding: String, index: u32, item: Value) -> Lane {
        Lane {
            finding,
            index,
            state: LaneState::Queued,
            attempt: 0,
            rejected_once: false,
            verdict: None,
            evidence: String::new(),
            note: String::new(),
            reason: None,
            item,
            normalized: Vec::new(),
            raised_again: None,
        }
    }
}

/// The review stage of one iteration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewProgress {
    /// The lanes, by index.
    #[serde(default)]
    pub lanes: Vec<Lane>,
    /// The project folder the parse step named.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub project_dir: String,
    /// The verdicts were recorded (`findings.verified`).
    #[serde(default)]
    pub verified: bool,
    /// The stage's end, once recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished: Option<ReviewFinished>,
}

impl ReviewProgress {
    /// Lanes with their verdict.
    pub fn final_lanes(&self) -> usize {
        self.lanes.iter().filter(|l| l.state.is_final()).count()
    }

    /// Folds one lane transition.
    pub fn apply(&mut self, ev: &FindingLane) {
        let i = ev.index as usize;
        if self.lanes.len() <= i {
            self.lanes
                .resize_with(i + 1, || Lane::queued(String::new(), 0, Value::Null));
        }
        let lane = &mut self.lanes[i];
        if matches!(ev.state, LaneState::Queued | LaneState::RaisedAgain) {
            // A fresh parse: the lane starts over.
            *lane = Lane::queued(
                ev.finding.clone(),
                ev.index,
                ev.item.clone().unwrap_or(Value::Null),
            );
            if let Some(d) = &ev.project_dir {
                self.project_dir.clone_from(d);
            }
            if ev.state == LaneState::Queued {
                return;
            }
            // Settled in an earlier round: final at once, never dispatched.
            lane.state = LaneState::RaisedAgain;
            lane.verdict = ev.verdict;
            lane.evidence = ev.evidence.clone().unwrap_or_default();
            lane.note = ev.note.clone().unwrap_or_default();
            lane.raised_again.clone_from(&ev.raised_again);
            return;
        }
        lane.finding.clone_from(&ev.finding);
        lane.index = ev.index;
        lane.state = ev.state;
        lane.attempt = ev.attempt;
        lane.rejected_once |= ev.state == LaneState::Rejected;
        if ev.reason.is_some() {
            lane.reason.clone_from(&ev.reason);
        }
        if ev.state.is_final() {
            lane.verdict = ev.verdict;
            lane.evidence = ev.evidence.clone().unwrap_or_default();
            lane.note = ev.note.clone().unwrap_or_default();
        }
        lane.normalized.extend(ev.normalized.iter().cloned());
    }
}

/// The run's review rounds (present when the run has a review stage).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewCounters {
    /// Review rounds that sent work back to the developer.
    pub rounds: u32,
    /// Rounds allowed before a person decides (the run's cap, plus one per `extend`).
    pub cap: u32,
    /// Consecutive failed reviewer dispatches.
    #[serde(default)]
    pub strikes: u32,
}
