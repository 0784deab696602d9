//! The folded state of a run (PROTOCOL §4): what `state.json` holds.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::event::*;
use super::rules::Next;
use super::types::*;

mod agents;
mod review;
pub use agents::{AgentDispatch, Limited, RunUsage, Usage};
pub use review::{Lane, ReviewCounters, ReviewProgress};

/// Version of the state format.
pub const STATE_VERSION: u32 = 1;

/// Rounds per gate before a person must decide, unless the run says otherwise.
pub const DEFAULT_MAX_ROUNDS: u32 = 3;

/// Where the run stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[derive(strum::IntoStaticStr)]
#[strum(serialize_all = "kebab-case")]
pub enum RunStatus {
    /// No `run.started` yet.
    #[default]
    Idle,
    /// The loop is going.
    Running,
    /// At least one human gate is open.
    AwaitingHuman,
    /// `run.ended` was recorded.
    Ended,
}

impl RunStatus {
    /// The token.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One number per gate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PerGate {
    /// GATE 0.
    pub floor: u32,
    /// GATE 1.
    pub conformity: u32,
    /// GATE 2.
    pub security: u32,
}

impl PerGate {
    /// The same number for every gate.
    pub fn splat(n: u32) -> Self {
        PerGate {
            floor: n,
            conformity: n,
            security: n,
        }
    }

    /// The number of one gate.
    pub fn get(&self, g: GateName) -> u32 {
        match g {
            GateName::Floor => self.floor,
            GateName::Conformity => self.conformity,
            GateName::Security => self.security,
        }
    }

    /// The number of one gate, mutably.
    pub fn get_mut(&mut self, g: GateName) -> &mut u32 {
        match g {
            GateName::Floor => &mut self.floor,
            GateName::Conformity => &mut self.conformity,
            GateName::Security => &mut self.security,
        }
    }
}

/// A gate round that started and has not finished.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GateInProgress {
    /// Which gate.
    pub gate: GateName,
    /// Iteration.
    pub iteration: u32,
    /// Round.
    pub round: u32,
    /// When it started.
    pub since: String,
}

/// The triage of an iteration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TriageRecord {
    /// `triage-<iter>.json`, relative to `.pipeline/`.
    pub file: String,
    /// Bucket sizes.
    pub counts: TriageCounts,
    /// Finding ids per bucket, when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buckets: Option<TriageBuckets>,
}

/// One iteration of the loop (a developer hand-off and the gates after it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Iteration {
    /// 1-based number.
    pub iteration: u32,
    /// When it started (time of its first event).
    #[serde(default)]
    pub started_at: String,
    /// Why it started.
    #[serde(default)]
    pub trigger: String,
    /// Seq of the first event of this iteration.
    #[serde(default)]
    pub start_seq: u64,
    /// Every gate round that finished in this iteration, in order.
    #[serde(default)]
    pub gates: Vec<GateFinished>,
    /// Findings with the finding verifier's verdicts.
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// Triage of the findings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub triage: Option<TriageRecord>,
    /// Verify-by-test summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_by_test: Option<VerifySummary>,
    /// Verify-by-test results, one per finding.
    #[serde(default)]
    pub verifications: Vec<VerifyResult>,
    /// Floor-guard result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor_guard: Option<FloorGuardResult>,
    /// The red tests handed to this iteration's developer, run again after
    /// its dispatch (`verify.green`), one per test reference.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub greens: Vec<VerifyGreen>,
    /// What was handed to the developer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dev_inputs: Vec<Value>,
    /// Tokens and cost of the agents dispatched for this iteration.
    #[serde(default, skip_serializing_if = "Usage::is_empty")]
    pub usage: Usage,
    /// The review stage of this iteration (runs with one only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<ReviewProgress>,
}

impl Iteration {
    /// The last finished round of a gate in this iteration.
    pub fn last_gate(&self, g: GateName) -> Option<&GateFinished> {
        self.gates.iter().rev().find(|r| r.gate == g)
    }
}

/// Open, decided, or expired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GateStatus {
    /// Waiting on a person.
    Open,
    /// Decided.
    Decided,
    /// Nobody decided in time: the expiry action applied.
    Expired,
}

/// An expiry as folded: the event payload plus when it was recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExpiryRecord {
    /// How long the gate was allowed to wait.
    pub after: String,
    /// The option that applied.
    pub action: Decision,
    /// When it was recorded.
    pub at: String,
    /// Its seq.
    pub seq: u64,
}

/// A decision as folded: the event payload plus when it was recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DecisionRecord {
    /// The decision.
    #[serde(flatten)]
    pub decision: HumanDecision,
    /// When it was recorded.
    pub at: String,
    /// Its seq.
    pub seq: u64,
}

/// A human gate and, once taken, its decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HumanGate {
    /// The request.
    #[serde(flatten)]
    pub request: HumanRequest,
    /// When it was opened.
    pub requested_at: String,
    /// Seq of the request.
    pub requested_seq: u64,
    /// Open or decided.
    pub status: GateStatus,
    /// The decision, once taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<DecisionRecord>,
    /// Approvals counted towards a decision policy's `required` people
    /// (`human.approved`), oldest first, while more are awaited.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvals: Vec<DecisionRecord>,
    /// The expiry, when nobody decided in time (never together with `decision`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expired: Option<ExpiryRecord>,
    /// Notifications sent for it (`notify.sent`): 1 the first, more for reminders.
    #[serde(default, skip_serializing_if = "crate::model::types::is_zero")]
    pub notified: u32,
    /// When the last one was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notified_at: Option<String>,
    /// Seq of the `contract.judged` that applied its outcome to the
    /// contract as judged, once one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract_applied: Option<u64>,
}

impl HumanGate {
    /// True while it waits on a person.
    pub fn is_open(&self) -> bool {
        self.status == GateStatus::Open
    }

    /// The option the loop goes on with: the person's decision, else the
    /// expiry's action; `None` while open.
    pub fn outcome(&self) -> Option<Decision> {
        self.decision
            .as_ref()
            .map(|d| d.decision.decision)
            .or(self.expired.as_ref().map(|x| x.action))
    }

    /// What its outcome does to the loop (`None` while open, or when the
    /// outcome is not one of the kind's options).
    pub fn effect(&self) -> Option<crate::model::kinds::Effect> {
        self.request.kind.effect(self.outcome()?)
    }
}

/// The fold of a journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct State {
    /// Format version (1).
    pub v: u32,
    /// Last seq folded.
    pub seq: u64,
    /// The run, once started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunInfo>,
    /// Where the run stands.
    pub status: RunStatus,
    /// Iterations, in order.
    #[serde(default)]
    pub review_iterations: Vec<std::sync::Arc<Iteration>>,
    /// Failed rounds per gate (a round that sent work back).
    #[serde(default)]
    pub counters: PerGate,
    /// Rounds allowed per gate (3, plus one per `extend`).
    #[serde(default)]
    pub caps: PerGate,
    /// Consecutive structural failures per gate in its current round.
    #[serde(default)]
    pub structural_strikes: PerGate,
    /// The gate round running now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_gate: Option<GateInProgress>,
    /// Every human gate, in the order opened.
    #[serde(default)]
    pub human_gates: Vec<HumanGate>,
    /// How the run ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<RunEnded>,
    /// Time of the last event folded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_event_at: Option<String>,
    /// Events of types this version does not know.
    #[serde(default)]
    pub unknown_events: u64,
    /// Seq of the last gate.finished, dev.dispatched and iteration.started.
    #[serde(default)]
    pub marks: Marks,
    /// Agents dispatched by `loopwatch run`, in dispatch order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<AgentDispatch>,
    /// Tokens and cost of those agents: total, per gate, developer.
    #[serde(default, skip_serializing_if = "RunUsage::is_empty")]
    pub usage: RunUsage,
    /// Consecutive failed developer dispatches (a success or a person's
    /// retry resets it).
    #[serde(default, skip_serializing_if = "crate::model::types::is_zero")]
    pub dev_strikes: u32,
    /// Review rounds and reviewer strikes (runs with a review stage only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<ReviewCounters>,
    /// The contract as `loopwatch run` judges it (its last `contract.judged`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract: Option<crate::model::event::ContractJudged>,
    /// Findings raised again that a person split from the earlier finding
    /// they were matched with (`finding.split`), in the order recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub finding_splits: Vec<crate::model::ledger::FindingSplit>,
    /// What the loop does next.
    pub next: Next,
}

/// Positions the loop rules need.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Marks {
    /// Seq of the last `gate.finished`.
    pub last_gate_seq: u64,
    /// Seq of the last `dev.dispatched` or `iteration.started`.
    pub last_dev_seq: u64,
    /// Seq of the last `contract.judged` after which GATE 0 judges again.
    #[serde(default, skip_serializing_if = "crate::model::types::is_zero")]
    pub last_contract_seq: u64,
}

impl Default for State {
    fn default() -> Self {
        State {
            v: STATE_VERSION,
            seq: 0,
            run: None,
            status: RunStatus::Idle,
            review_iterations: Vec::new(),
            counters: PerGate::default(),
            caps: PerGate::splat(DEFAULT_MAX_ROUNDS),
            structural_strikes: PerGate::default(),
            current_gate: None,
            human_gates: Vec::new(),
            ended: None,
            last_event_at: None,
            unknown_events: 0,
            marks: Marks::default(),
            agents: Vec::new(),
            usage: RunUsage::default(),
            dev_strikes: 0,
            review: None,
            contract: None,
            finding_splits: Vec::new(),
            next: Next::default(),
        }
    }
}

impl State {
    /// Ids of the gates waiting on a person, oldest first.
    pub fn open_human_gates(&self) -> impl Iterator<Item = &HumanGate> {
        self.human_gates.iter().filter(|g| g.is_open())
    }

    /// A human gate by id.
    pub fn human_gate(&self, id: &str) -> Option<&HumanGate> {
        self.human_gates.iter().find(|g| g.request.id == id)
    }

    /// An iteration by number.
    pub fn iteration(&self, n: u32) -> Option<&Iteration> {
        self.review_iterations
            .iter()
            .find(|i| i.iteration == n)
            .map(AsRef::as_ref)
    }

    /// The number of the latest iteration (0 before any).
    pub fn iteration_number(&self) -> u32 {
        self.review_iterations.last().map_or(0, |i| i.iteration)
    }

    /// The last finished round of a gate, over the whole run.
    pub fn last_round(&self, g: GateName) -> Option<&GateFinished> {
        self.review_iterations
            .iter()
            .rev()
            .find_map(|i| i.last_gate(g))
    }

    /// The last finished round of any gate, over the whole run.
    pub fn latest_round(&self) -> Option<&GateFinished> {
        self.review_iterations
            .iter()
            .rev()
            .find_map(|i| i.gates.last())
    }

    /// The dispatch running now (started, not finished), if any.
    pub fn running_agent(&self) -> Option<&AgentDispatch> {
        self.agents.iter().rev().find(|a| a.is_running())
    }

    /// A dispatch by number.
    pub fn dispatch(&self, n: u32) -> Option<&AgentDispatch> {
        self.agents.iter().find(|a| a.started.dispatch == n)
    }

    /// The round number the next run of a gate will have.
    pub fn next_round(&self, g: GateName) -> u32 {
        self.counters.get(g) + 1
    }
}
