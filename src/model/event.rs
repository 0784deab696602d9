//! The events of `events.jsonl` (PROTOCOL §3).
//!
//! Every line is `{"v":1,"seq":n,"at":"<RFC 3339>","type":"...", ...payload}`.
//! Known types are parsed into typed payloads; unknown types and unknown
//! fields are kept verbatim and written back unchanged.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::LazyLock;

use super::types::*;

/// Version of the event format written by this program.
pub const EVENT_VERSION: u32 = 1;

/// One line of the journal.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Format version (1).
    pub v: u32,
    /// Sequence number, from 1, rising by one.
    pub seq: u64,
    /// RFC 3339 UTC time of the append.
    pub at: String,
    /// The hash chain: the sha256 (64 lowercase hex digits) of the previous
    /// line's bytes (without its `\n`), absent on a journal's first line and
    /// on lines written before the chain existed (PROTOCOL §3).
    pub prev: Option<String>,
    /// The typed payload.
    pub body: EventBody,
}

/// The payload of an event, by `type`.
#[derive(
    Debug,
    Clone,
    PartialEq,
    Serialize,
    Deserialize,
    JsonSchema,
    strum::IntoStaticStr,
    strum::VariantNames,
)]
#[serde(tag = "type")]
pub enum EventBody {
    /// A run begins.
    #[serde(rename = "run.started")]
    RunStarted {
        /// What the run is about.
        run: Box<RunInfo>,
        /// The base snapshot: the worktree's git tree when the run started.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tree: Option<String>,
        /// Why there is no `tree` (not a git worktree, git failed, turned off).
        #[serde(
            default,
            rename = "treeMissing",
            skip_serializing_if = "Option::is_none"
        )]
        tree_missing: Option<String>,
    },
    /// A developer hand-off begins a new iteration.
    #[serde(rename = "iteration.started")]
    IterationStarted {
        /// 1-based iteration number.
        iteration: u32,
        /// initial, floor-unmet, ecarts, block, human, review.
        #[serde(default)]
        trigger: String,
    },
    /// A gate round begins.
    #[serde(rename = "gate.started")]
    GateStarted {
        /// Which gate.
        gate: GateName,
        /// Iteration.
        iteration: u32,
        /// Round of this gate (1-based).
        round: u32,
        /// GATE 0 only: the snapshot of the code the round judges.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tree: Option<String>,
        /// GATE 0 only: why there is no `tree`.
        #[serde(
            default,
            rename = "treeMissing",
            skip_serializing_if = "Option::is_none"
        )]
        tree_missing: Option<String>,
    },
    /// A gate round ended with a verdict.
    #[serde(rename = "gate.finished")]
    GateFinished(Box<GateFinished>),
    /// The finding verifier's verdicts.
    #[serde(rename = "findings.verified")]
    FindingsVerified {
        /// Iteration.
        iteration: u32,
        /// Findings with their verdicts.
        findings: Vec<Finding>,
    },
    /// A triage file was recorded.
    #[serde(rename = "triage.recorded")]
    TriageRecorded {
        /// Iteration.
        iteration: u32,
        /// `triage-<iter>.json`, relative to `.pipeline/`.
        file: String,
        /// Bucket sizes.
        counts: TriageCounts,
        /// Finding ids per bucket (absent in journals written by other programs).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        buckets: Option<Box<TriageBuckets>>,
    },
    /// One verify-by-test result.
    #[serde(rename = "verify.result")]
    VerifyResult(Box<VerifyResult>),
    /// The verify-by-test summary of an iteration.
    #[serde(rename = "verify.summary")]
    VerifySummary(Box<VerifySummary>),
    /// The floor-guard result of an iteration.
    #[serde(rename = "floor-guard.finished")]
    FloorGuardFinished(FloorGuardResult),
    /// The run waits for a person.
    #[serde(rename = "human.requested")]
    HumanRequested(Box<HumanRequest>),
    /// A person decided.
    #[serde(rename = "human.decided")]
    HumanDecided(Box<HumanDecision>),
    /// A person approved a gate whose decision policy needs more people
    /// than have approved so far: counted, the gate stays open.
    #[serde(rename = "human.approved")]
    HumanApproved(Box<HumanDecision>),
    /// Nobody decided in time: the gate's expiry action applies.
    #[serde(rename = "human.expired")]
    HumanExpired(Box<HumanExpired>),
    /// A gate's notification went out (once per gate across processes).
    #[serde(rename = "notify.sent")]
    NotifySent(Box<NotifySent>),
    /// Work handed back to the developer.
    #[serde(rename = "dev.dispatched")]
    DevDispatched {
        /// Iteration.
        iteration: u32,
        /// Paths or rows handed over.
        #[serde(default)]
        inputs: Vec<Value>,
    },
    /// The run ended.
    #[serde(rename = "run.ended")]
    RunEnded(Box<RunEnded>),
    /// An agent process was started by `loopwatch run`.
    #[serde(rename = "agent.started")]
    AgentStarted(Box<AgentStarted>),
    /// An agent process started by `loopwatch run` was reaped.
    #[serde(rename = "agent.finished")]
    AgentFinished(Box<AgentFinished>),
    /// An agent's CLI answered that a usage limit is reached.
    #[serde(rename = "agent.limited")]
    AgentLimited(Box<AgentLimited>),
    // The review stage (written by `loopwatch run` when the run has one).
    /// One transition of a finding's lane in the finding-verifier graph.
    #[serde(rename = "finding.lane")]
    FindingLane(Box<FindingLane>),
    /// The review stage of an iteration is over.
    #[serde(rename = "review.finished")]
    ReviewFinished(Box<ReviewFinished>),
    /// Free text.
    #[serde(rename = "note")]
    Note {
        /// The note.
        text: String,
    },
    /// A red test handed to the developer, run again after its dispatch.
    #[serde(rename = "verify.green")]
    VerifyGreen(Box<VerifyGreen>),
    /// The contract as `loopwatch run` judges it.
    #[serde(rename = "contract.judged")]
    ContractJudged(Box<ContractJudged>),
    /// A person says a finding raised again is not the same as the earlier
    /// one it was matched with (the finding ledger).
    #[serde(rename = "finding.split")]
    FindingSplit(Box<crate::model::ledger::FindingSplit>),
    /// A type this version does not know (kept, shown raw).
    #[serde(skip)]
    Unknown {
        /// Its `type`.
        type_name: String,
        /// Every field but v, seq, at and type.
        fields: Box<Map<String, Value>>,
    },
}

/// The payloads kept behind a box (so that every event is small whatever
/// its type: a long run is mostly small events) convert into the body.
macro_rules! boxed_body {
    ($($variant:ident($ty:ty)),* $(,)?) => {$(
        impl From<$ty> for EventBody {
            fn from(payload: $ty) -> Self {
                EventBody::$variant(Box::new(payload))
            }
        }
    )*};
}

boxed_body!(
    GateFinished(GateFinished),
    VerifyResult(VerifyResult),
    VerifySummary(VerifySummary),
    HumanRequested(HumanRequest),
    HumanDecided(HumanDecision),
    HumanExpired(HumanExpired),
    NotifySent(NotifySent),
    RunEnded(RunEnded),
    AgentStarted(AgentStarted),
    AgentFinished(AgentFinished),
    AgentLimited(AgentLimited),
    VerifyGreen(VerifyGreen),
    FindingLane(FindingLane),
    ReviewFinished(ReviewFinished),
    ContractJudged(ContractJudged),
    FindingSplit(crate::model::ledger::FindingSplit),
);

impl EventBody {
    /// Payloads parsed from a whole line see `v`, `seq` and `at` as unknown
    /// fields: they belong to the event, not to the payload's extras.
    fn strip_header_fields(&mut self) {
        let extra = match self {
            EventBody::GateFinished(g) => &mut g.extra,
            EventBody::VerifyResult(r) => &mut r.extra,
            EventBody::HumanRequested(h) => &mut h.extra,
            EventBody::HumanDecided(d) | EventBody::HumanApproved(d) => &mut d.extra,
            EventBody::AgentStarted(a) => &mut a.extra,
            EventBody::AgentFinished(a) => &mut a.extra,
            EventBody::AgentLimited(a) => &mut a.extra,
            EventBody::HumanExpired(x) => &mut x.extra,
            EventBody::NotifySent(n) => &mut n.extra,
            EventBody::VerifyGreen(g) => &mut g.extra,
            EventBody::FindingLane(l) => &mut l.extra,
            EventBody::ReviewFinished(r) => &mut r.extra,
            EventBody::ContractJudged(c) => &mut c.extra,
            EventBody::FindingSplit(x) => &mut x.extra,
            _ => return,
        };
        for k in ["v", "seq", "at", "prev"] {
            extra.shift_remove(k);
        }
    }

    /// The `type` string of this payload: serde's name of its variant
    /// (its place among strum's variant names is its place in
    /// [`KNOWN_TYPES`], which leaves out the last, `Unknown`).
    pub fn type_name(&self) -> &str {
        if let EventBody::Unknown { type_name, .. } = self {
            return type_name;
        }
        let variant: &'static str = self.into();
        <Self as strum::VariantNames>::VARIANTS
            .iter()
            .position(|v| *v == variant)
            .and_then(|i| KNOWN_TYPES.get(i))
            .copied()
            .unwrap_or(variant)
    }

    /// The iteration this event belongs to, when it names one.
    pub fn iteration(&self) -> Option<u32> {
        match self {
            EventBody::IterationStarted { iteration, .. }
            | EventBody::GateStarted { iteration, .. }
            | EventBody::FindingsVerified { iteration, .. }
            | EventBody::TriageRecorded { iteration, .. }
            | EventBody::DevDispatched { iteration, .. } => Some(*iteration),
            EventBody::GateFinished(g) => Some(g.iteration),
            EventBody::VerifyResult(r) => Some(r.iteration),
            EventBody::VerifySummary(s) => Some(s.iteration),
            EventBody::FloorGuardFinished(f) => Some(f.iteration),
            EventBody::HumanRequested(h) => Some(h.iteration),
            EventBody::AgentStarted(a) => Some(a.iteration),
            EventBody::VerifyGreen(g) => Some(g.iteration),
            EventBody::FindingLane(l) => Some(l.iteration),
            EventBody::ReviewFinished(r) => Some(r.iteration),
            _ => None,
        }
    }
}

/// `run` of `run.started`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunInfo {
    /// Run id (usually the contract's slug with its date).
    pub id: String,
    /// feat, hotfix, ...
    #[serde(default)]
    pub flow: String,
    /// Git branch.
    #[serde(default)]
    pub branch: String,
    /// Contract path (relative to the worktree).
    #[serde(default)]
    pub contract: String,
    /// Diff base (`develop..HEAD`, a ref).
    #[serde(default)]
    pub diff: String,
    /// Test command.
    #[serde(default)]
    pub test: String,
    /// Worktree root.
    #[serde(default)]
    pub worktree: String,
    /// Rounds per gate before a person must decide (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rounds: Option<u32>,
    /// The loop is driven by `loopwatch run`: every developer hand-off is a
    /// dispatch recorded in the journal (iteration 1 starts with one).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub engine: bool,
    /// The run has a review stage after GATE 1 (`[agents.reviewer]` was
    /// configured); absent, the loop goes from GATE 1 straight to GATE 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<ReviewInfo>,
    /// The run's `[budget]` as `loopwatch run` started it (see
    /// [`crate::model::budget::to_json`]): `{"usd": 5.0, "developer.usd":
    /// 2.0, "wall": 3600}`; absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Value>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// Payload of `gate.finished`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GateFinished {
    /// Which gate.
    pub gate: GateName,
    /// Iteration.
    pub iteration: u32,
    /// Round of this gate.
    pub round: u32,
    /// The verdict.
    pub verdict: Verdict,
    /// A security run without its tools.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub degraded: bool,
    /// Rows: floor, criterion or security rows by gate.
    #[serde(default)]
    pub rows: Vec<GateRow>,
    /// Security: REPORTED (non-blocking) rows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reported: Vec<ReportedRow>,
    /// Conformity/security: the SCOPE line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// Conformity: the FLOOR line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor: Option<String>,
    /// The PROOF line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<String>,
    /// Conformity: the CONTRACT line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract: Option<String>,
    /// Security: the TOOL line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Path of the verbatim output, relative to `.pipeline/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// Why the output is structurally invalid, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structural: Option<String>,
    /// What the reader normalised to read the output (a code fence, prose
    /// after the block, markdown emphasis on keys, CRLF, trailing blanks).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub normalized: Vec<String>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

impl GateFinished {
    /// The conformity rows of this round.
    pub fn criterion_rows(&self) -> impl Iterator<Item = &CriterionRow> {
        self.rows.iter().filter_map(|r| match r {
            GateRow::Criterion(c) => Some(c),
            _ => None,
        })
    }

    /// The floor rows of this round.
    pub fn floor_rows(&self) -> impl Iterator<Item = &FloorRow> {
        self.rows.iter().filter_map(|r| match r {
            GateRow::Floor(c) => Some(c),
            _ => None,
        })
    }

    /// The security BLOCKING rows of this round.
    pub fn security_rows(&self) -> impl Iterator<Item = &SecurityRow> {
        self.rows.iter().filter_map(|r| match r {
            GateRow::Security(c) => Some(c),
            _ => None,
        })
    }

    /// Files out of scope, if any.
    pub fn out_of_scope(&self) -> &[String] {
        self.scope
            .as_ref()
            .map(|s| s.out_of_scope.as_slice())
            .unwrap_or(&[])
    }
}

/// Bucket sizes of a triage file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TriageCounts {
    /// Accepted findings.
    pub accepted: u32,
    /// Deferred findings.
    pub deferred: u32,
    /// Rejected findings.
    pub rejected: u32,
}

/// Finding ids per triage bucket.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TriageBuckets {
    /// Accepted finding ids.
    #[serde(default)]
    pub accepted: Vec<String>,
    /// Deferred finding ids.
    #[serde(default)]
    pub deferred: Vec<String>,
    /// Rejected finding ids.
    #[serde(default)]
    pub rejected: Vec<String>,
}

impl TriageBuckets {
    /// The bucket a finding is in.
    pub fn bucket_of(&self, id: &str) -> Option<&'static str> {
        if self.accepted.iter().any(|x| x == id) {
            Some("accepted")
        } else if self.deferred.iter().any(|x| x == id) {
            Some("deferred")
        } else if self.rejected.iter().any(|x| x == id) {
            Some("rejected")
        } else {
            None
        }
    }
}

/// Payload of `verify.result`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerifyResult {
    /// Iteration.
    pub iteration: u32,
    /// Finding id.
    pub finding: String,
    /// Outcome.
    pub result: VerifyOutcome,
    /// Repro test reference.
    #[serde(default)]
    pub test_ref: String,
    /// Repro test file.
    #[serde(default)]
    pub file: String,
    /// Test log, relative to `.pipeline/`.
    #[serde(default)]
    pub log: String,
    /// Cause, for inconclusive results.
    #[serde(default)]
    pub note: String,
    /// What the evidence gate said about the log (passed, failed, skipped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence_gate: Option<String>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// Payload of `verify.summary` (the `review.verify_by_test` metric).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerifySummary {
    /// Iteration.
    pub iteration: u32,
    /// Findings attempted.
    #[serde(default)]
    pub attempted: u32,
    /// Confirmed.
    #[serde(default)]
    pub confirmed: u32,
    /// Downgraded (not reproduced).
    #[serde(default)]
    pub downgraded: u32,
    /// Inconclusive.
    #[serde(default)]
    pub inconclusive: u32,
    /// Past the cap.
    #[serde(default)]
    pub cap_exceeded: u32,
    /// Wall time.
    #[serde(default)]
    pub duration_ms: u64,
    /// Tokens in, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_in: Option<u64>,
    /// Tokens out, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_out: Option<u64>,
    /// Tests kept red.
    #[serde(default)]
    pub red_tests: Vec<RedTest>,
    /// The step ran out of time.
    #[serde(default)]
    pub timed_out: bool,
    /// What was normalised to read the agent's answer (a code fence, prose
    /// around the array).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub normalized: Vec<String>,
    /// Cleanup invariant violations: files left changed after the step
    /// that are not a confirmed repro test (each with why).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cleanup_violations: Vec<String>,
    /// The worktree's snapshot after the step (the red tests as they were
    /// handed over), against which their later diff is taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<String>,
}

/// One floor-guard line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FloorGuardFinding {
    /// SUPPRESS, SKIP, DELETED_TEST, ASSERT_DROP, STUB, THRESHOLD_DOWN.
    pub kind: String,
    /// File.
    pub path: String,
    /// Line in the new file.
    pub line: u32,
    /// Stripped snippet (at most 100 characters).
    pub snippet: String,
    /// Carried a `floor-guard: allow` waiver.
    #[serde(default)]
    pub waived: bool,
}

/// Payload of `floor-guard.finished`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FloorGuardResult {
    /// Iteration.
    pub iteration: u32,
    /// Base ref the diff was taken against.
    pub base: String,
    /// Every line printed, in order.
    #[serde(default)]
    pub findings: Vec<FloorGuardFinding>,
    /// Counted (not waived) findings.
    pub counted: u32,
    /// Waived findings.
    pub waived: u32,
}

/// Payload of `human.requested`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HumanRequest {
    /// Stable id, `hg-<iter>-<gate>-<n>`.
    pub id: String,
    /// Why the run waits.
    pub kind: HumanGateKind,
    /// The gate that asked, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateName>,
    /// Iteration.
    #[serde(default)]
    pub iteration: u32,
    /// Criterion id, finding id or file path.
    #[serde(default)]
    pub subject: String,
    /// One-line summary.
    #[serde(default)]
    pub summary: String,
    /// Decisions allowed.
    pub options: Vec<Decision>,
    /// What to show the person (rows, paths, output).
    #[serde(default)]
    pub evidence: Value,
    /// When nobody decides in time, what applies instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<ExpiryRule>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

impl HumanRequest {
    /// True for the gate of an UNVERIFIABLE review finding, whatever its
    /// kind says: no gate asked, and its evidence carries the finding (or
    /// its id is a `findings` one).
    pub fn is_finding_gate(&self) -> bool {
        self.kind == HumanGateKind::UnverifiableFinding
            || (self.gate.is_none()
                && (self.evidence.get("findings").is_some() || self.id.contains("-findings-")))
    }

    /// Its kind's options that it offers, in the kind's order.
    pub fn choices(&self) -> impl Iterator<Item = &'static crate::model::kinds::Choice> + '_ {
        let choices = self.kind.spec().choices.iter();
        choices.filter(|c| self.options.contains(&c.decision))
    }

    /// The request as this version reads it: a finding gate recorded as
    /// `unverifiable` (before `unverifiable-finding` existed) is an
    /// `unverifiable-finding` gate with that kind's options, and options
    /// recorded under an earlier name carry their new one (PROTOCOL §1).
    pub fn read_as_now(&mut self) {
        if self.kind == HumanGateKind::Unverifiable && self.is_finding_gate() {
            self.kind = HumanGateKind::UnverifiableFinding;
            self.options = self.kind.options();
        }
        let kind = self.kind;
        for d in &mut self.options {
            *d = kind.read_decision(*d);
        }
        if let Some(x) = self.expires.as_mut() {
            x.action = kind.read_decision(x.action);
        }
    }
}

/// Content hashes of a contract edited by a decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ContractEdit {
    /// Contract path.
    pub path: String,
    /// `sha256:<hex>` before.
    pub before: String,
    /// `sha256:<hex>` after.
    pub after: String,
}

/// Payload of `human.decided`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HumanDecision {
    /// The gate decided.
    pub id: String,
    /// One of the request's options.
    pub decision: Decision,
    /// Why (never empty).
    pub reason: String,
    /// `user@host`.
    #[serde(default)]
    pub by: String,
    /// `sha256:<hex>` of the evidence the person was shown.
    #[serde(default)]
    pub evidence_hash: String,
    /// The contract edit this decision made, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract_edit: Option<ContractEdit>,
    /// A note to the developer, kept as written: the next developer
    /// dispatch receives it under its own heading (`NOTE FROM <by>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

impl HumanDecision {
    /// The note to the developer, when there is one that says something.
    pub fn developer_note(&self) -> Option<&str> {
        self.note.as_deref().filter(|n| !n.trim().is_empty())
    }

    /// One line for the decision: `<id> <decision> by <who>: <reason>`, and
    /// ` · note to the developer: <note>` (its first 512 characters) when
    /// it carries one (the timeline's and `--headless`'s line).
    pub fn summary(&self) -> String {
        let mut s = format!(
            "{} {} by {}: {}",
            self.id, self.decision, self.by, self.reason
        );
        if let Some(n) = self.developer_note() {
            s.push_str(" · note to the developer: ");
            s.extend(n.chars().take(512));
        }
        s
    }
}

/// Payload of `run.ended`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunEnded {
    /// How it ended.
    pub status: EndStatus,
    /// Report path, relative to `.pipeline/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<String>,
}

mod agent;
mod contract;
mod expiry;
mod green;
mod limits;
mod line;
mod notice;
mod review;
pub use agent::{AgentFinished, AgentLimited, AgentRole, AgentStarted, SignalFrom};
pub use contract::ContractJudged;
pub use expiry::{
    ExpiryError, ExpiryRule, ExpiryTableError, HumanExpired, expiry_table, parse_duration,
};
pub use green::{GreenResult, VerifyGreen};
pub use limits::MAX_VALUES_PER_LINE;
pub use notice::NotifySent;
pub use review::{FindingLane, LaneState, ReviewFinished, ReviewInfo};

/// Why a journal line is not an event.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum EventError {
    /// Not JSON, or not an object.
    #[error("invalid JSON at column {column}: {message}")]
    Json {
        /// 1-based column.
        column: usize,
        /// serde_json's message.
        message: String,
    },
    /// A common field is missing or of the wrong type.
    #[error("{0}")]
    Header(String),
    /// A known type whose payload does not fit.
    #[error("{type_name}: {message}")]
    Payload {
        /// The event type.
        type_name: String,
        /// What is wrong.
        message: String,
    },
}

impl Event {
    /// Parses one journal line (without its `\n`).
    pub fn parse_line(line: &[u8]) -> Result<Event, EventError> {
        if let Some(column) = limits::too_many_values(line) {
            let message = format!(
                "more than {} JSON values in one line",
                limits::MAX_VALUES_PER_LINE
            );
            return Err(EventError::Json { column, message });
        }
        if let Some(ev) = Self::parse_fast(line) {
            return Ok(ev);
        }
        Self::parse_checked(line)
    }

    /// The common case without an intermediate JSON tree: a well-formed line
    /// of a known type straight into its typed payload. `None` sends the line
    /// to [`Event::parse_checked`], which names what is wrong.
    fn parse_fast(line: &[u8]) -> Option<Event> {
        #[derive(Deserialize)]
        struct Header<'a> {
            v: u32,
            seq: u64,
            at: String,
            #[serde(default)]
            prev: Option<String>,
            #[serde(rename = "type", borrow)]
            type_name: std::borrow::Cow<'a, str>,
        }
        let h: Header = serde_json::from_slice(line).ok()?;
        if h.seq == 0 || !is_known_type(&h.type_name) {
            return None;
        }
        let mut body: EventBody = serde_json::from_slice(line).ok()?;
        body.strip_header_fields();
        Some(Event {
            v: h.v,
            seq: h.seq,
            at: h.at,
            prev: h.prev,
            body,
        })
    }

    /// Parses through a JSON object, with an error naming the field at fault.
    fn parse_checked(line: &[u8]) -> Result<Event, EventError> {
        let mut map: Map<String, Value> =
            serde_json::from_slice(line).map_err(|e| EventError::Json {
                column: e.column(),
                message: crate::util::json_message(&e),
            })?;
        let v = take_u64(&mut map, "v")?;
        let seq = take_u64(&mut map, "seq")?;
        if seq == 0 {
            return Err(EventError::Header("\"seq\" must be at least 1".into()));
        }
        let at = match map.shift_remove("at") {
            Some(Value::String(s)) => s,
            Some(_) => return Err(EventError::Header("\"at\" must be a string".into())),
            None => return Err(EventError::Header("missing field \"at\"".into())),
        };
        let prev = match map.shift_remove("prev") {
            Some(Value::String(s)) => Some(s),
            Some(Value::Null) | None => None,
            Some(_) => return Err(EventError::Header("\"prev\" must be a string".into())),
        };
        let type_name = match map.get("type") {
            Some(Value::String(s)) => s.clone(),
            Some(_) => return Err(EventError::Header("\"type\" must be a string".into())),
            None => return Err(EventError::Header("missing field \"type\"".into())),
        };
        let body = if is_known_type(&type_name) {
            serde_json::from_value::<EventBody>(Value::Object(map)).map_err(|e| {
                EventError::Payload {
                    type_name: type_name.clone(),
                    message: e.to_string(),
                }
            })?
        } else {
            map.shift_remove("type");
            EventBody::Unknown {
                type_name,
                fields: Box::new(map),
            }
        };
        Ok(Event {
            v: u32::try_from(v).map_err(|_| EventError::Header("\"v\" is too large".into()))?,
            seq,
            at,
            prev,
            body,
        })
    }

    /// The event as one JSON object (field order: v, seq, at, type, payload).
    pub fn to_value(&self) -> Value {
        let mut out = Map::new();
        out.insert("v".into(), Value::from(self.v));
        out.insert("seq".into(), Value::from(self.seq));
        out.insert("at".into(), Value::from(self.at.clone()));
        if let Some(p) = &self.prev {
            out.insert("prev".into(), Value::from(p.clone()));
        }
        match &self.body {
            EventBody::Unknown { type_name, fields } => {
                out.insert("type".into(), Value::from(type_name.clone()));
                for (k, v) in fields.iter() {
                    out.insert(k.clone(), v.clone());
                }
            }
            body => {
                // Invariant: every known payload serialises to an object
                // (internally tagged enum of structs).
                if let Ok(Value::Object(m)) = serde_json::to_value(body) {
                    for (k, v) in m {
                        out.insert(k, v);
                    }
                }
            }
        }
        Value::Object(out)
    }

    /// The journal line for this event, without `\n`.
    pub fn to_line(&self) -> String {
        self.to_value().to_string()
    }
}

impl Serialize for Event {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        let bytes = serde_json::to_vec(&v).map_err(serde::de::Error::custom)?;
        Event::parse_line(&bytes).map_err(serde::de::Error::custom)
    }
}

/// The `type` strings this version parses into typed payloads: serde's own
/// names of the variants of [`EventBody`], so that none can be left out.
pub static KNOWN_TYPES: LazyLock<&'static [&'static str]> = LazyLock::new(|| {
    // Asked for a `type` no variant has, serde names every one it has.
    let probe =
        serde::de::value::MapDeserializer::<_, TypeNames>::new(std::iter::once(("type", "")));
    match EventBody::deserialize(probe) {
        Err(TypeNames(names)) => names,
        Ok(_) => &[],
    }
});

/// The error of that question: the names serde expected.
#[derive(Debug)]
struct TypeNames(&'static [&'static str]);

impl serde::de::Error for TypeNames {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        TypeNames(&[])
    }

    fn unknown_variant(_: &str, expected: &'static [&'static str]) -> Self {
        TypeNames(expected)
    }
}

impl std::fmt::Display for TypeNames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the event types: {}", self.0.join(", "))
    }
}

impl std::error::Error for TypeNames {}

fn is_known_type(t: &str) -> bool {
    KNOWN_TYPES.contains(&t)
}

fn take_u64(map: &mut Map<String, Value>, key: &str) -> Result<u64, EventError> {
    match map.shift_remove(key) {
        Some(Value::Number(n)) => n
            .as_u64()
            .ok_or_else(|| EventError::Header(format!("\"{key}\" must be a non-negative integer"))),
        Some(_) => Err(EventError::Header(format!(
            "\"{key}\" must be a non-negative integer"
        ))),
        None => Err(EventError::Header(format!("missing field \"{key}\""))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `type` the event schema names (its `const`s), found anywhere.
    fn schema_types(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(t) = m.get("properties").and_then(|p| p.get("type")) {
                    out.extend(t.get("const").and_then(Value::as_str).map(String::from));
                }
                m.values().for_each(|x| schema_types(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| schema_types(x, out)),
            _ => {}
        }
    }

    #[test]
    fn the_known_types_are_every_type_the_schema_names() {
        let schema = serde_json::to_value(schemars::schema_for!(EventBody)).unwrap();
        let mut named = Vec::new();
        schema_types(&schema, &mut named);
        named.sort();
        let mut known: Vec<String> = KNOWN_TYPES.iter().map(|t| t.to_string()).collect();
        known.sort();
        assert!(known.contains(&"run.started".to_string()), "{known:?}");
        assert_eq!(known, named);
    }

    #[test]
    fn every_variant_is_named_by_its_serde_type() {
        // Unknown, the one variant serde skips, is the last.
        let variants = <EventBody as strum::VariantNames>::VARIANTS;
        assert_eq!(variants.last(), Some(&"Unknown"));
        assert_eq!(variants.len(), KNOWN_TYPES.len() + 1);
        let fixture = include_str!("../../tests/fixtures/tui/full-run.events.jsonl");
        let mut seen = 0;
        for line in fixture.lines() {
            let ev = Event::parse_line(line.as_bytes()).unwrap();
            let v: Value = serde_json::from_str(line).unwrap();
            assert_eq!(ev.body.type_name(), v["type"].as_str().unwrap());
            seen += 1;
        }
        assert!(seen > 10, "{seen}");
    }

    #[test]
    fn unknown_type_and_fields_round_trip() {
        let line = br#"{"v":1,"seq":3,"at":"2026-01-01T00:00:00Z","type":"future.thing","x":[1,2],"y":"z"}"#;
        let ev = Event::parse_line(line).unwrap();
        assert_eq!(ev.body.type_name(), "future.thing");
        assert_eq!(ev.to_line().as_bytes(), &line[..]);
    }

    #[test]
    fn unknown_field_in_known_type_is_kept() {
        let line = br#"{"v":1,"seq":1,"at":"t","type":"human.decided","id":"hg-1","decision":"approve","reason":"ok","by":"a@b","evidenceHash":"h","mood":"good"}"#;
        let ev = Event::parse_line(line).unwrap();
        assert!(ev.to_line().contains(r#""mood":"good""#));
    }

    #[test]
    fn fast_path_gives_what_the_general_path_gives() {
        let fixture = include_str!("../../tests/fixtures/tui/full-run.events.jsonl");
        let edge: &[&str] = &[
            r#"{"v":1,"seq":0,"at":"t","type":"note","text":"x"}"#,
            r#"{"v":4294967296,"seq":1,"at":"t","type":"note","text":"x"}"#,
            r#"{"v":1,"seq":1,"seq":2,"at":"t","type":"note","text":"x"}"#,
            r#"{"v":1,"seq":1,"at":"t","type":"note","type":"future.thing","text":"x"}"#,
            r#"{"v":1,"seq":1,"at":"t","type":"human.decided","id":"a","decision":"approve","reason":"r","by":"b","evidenceHash":"h","mood":1,"mood":2}"#,
            r#"{"type":"note","text":"first","v":1,"at":"t","seq":9}"#,
            r#"{"v":1,"seq":1,"at":"t","type":"Unknown","type_name":"x"}"#,
            r#"{"v":1.0,"seq":1,"at":"t","type":"note","text":"x"}"#,
        ];
        // Compact lines of known types, each written back byte for byte.
        let more: &[&str] = &[
            r#"{"v":1,"seq":4,"at":"t","type":"gate.finished","gate":"floor","iteration":1,"round":1,"verdict":{"kind":"MET"},"rows":[],"mood":1}"#,
            r#"{"v":1,"seq":5,"at":"t","type":"human.decided","id":"hg-1","decision":"approve","reason":"r","by":"a@b","evidenceHash":"h"}"#,
            r#"{"v":1,"seq":6,"at":"t","type":"verify.result","iteration":1,"finding":"F1","result":"confirmed","testRef":"","file":"","log":"","note":""}"#,
            r#"{"v":1,"seq":7,"at":"t","type":"note","text":"x"}"#,
        ];
        for line in more {
            let ev = Event::parse_fast(line.as_bytes()).expect("fast path");
            assert_eq!(ev.to_line(), *line);
        }
        let lines: Vec<&str> = fixture
            .lines()
            .chain(edge.iter().chain(more).copied())
            .collect();
        let mut fast = 0;
        for line in &lines {
            let general = Event::parse_checked(line.as_bytes());
            assert_eq!(Event::parse_line(line.as_bytes()), general, "{line}");
            fast += usize::from(Event::parse_fast(line.as_bytes()).is_some());
        }
        // The fixture's 22 lines of known types, the reordered line, the
        // repeated unknown field and the compact lines take the fast path;
        // the rest fall back.
        assert_eq!(fixture.lines().count(), 23);
        assert_eq!(fast, 28);
    }

    #[test]
    fn wrong_types_are_errors_naming_the_field() {
        let err = Event::parse_line(br#"{"v":1,"seq":"2","at":"t","type":"note","text":"x"}"#)
            .unwrap_err();
        assert_eq!(err.to_string(), "\"seq\" must be a non-negative integer");
        let err = Event::parse_line(br#"{"v":1,"seq":2,"at":"t","type":"gate.started","gate":"floor","iteration":"x","round":1}"#)
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("gate.started: invalid type: string \"x\""),
            "{err}"
        );
        let err = Event::parse_line(br#"{"v":1,"seq":2,"at":"t""#).unwrap_err();
        assert!(
            matches!(err, EventError::Json { column: 23, .. }),
            "{err:?}"
        );
    }

    #[test]
    fn a_decisions_line_carries_its_note_cut_at_512_characters() {
        let mut d = HumanDecision {
            id: "hg-1-conformity-1".into(),
            decision: crate::model::Decision::Deny,
            reason: "no Makefile here".into(),
            by: "ana@desk".into(),
            evidence_hash: String::new(),
            contract_edit: None,
            note: None,
            extra: Default::default(),
        };
        assert_eq!(
            d.summary(),
            "hg-1-conformity-1 deny by ana@desk: no Makefile here"
        );
        d.note = Some("   ".into());
        assert_eq!(
            d.summary(),
            "hg-1-conformity-1 deny by ana@desk: no Makefile here"
        );
        d.note = Some("x".repeat(600));
        assert_eq!(
            d.summary(),
            format!(
                "hg-1-conformity-1 deny by ana@desk: no Makefile here · note to the developer: {}",
                "x".repeat(512)
            )
        );
    }
}
