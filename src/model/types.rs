//! Value types shared by events, state and parsers.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Unknown fields of an object, kept verbatim (forward compatibility).
pub type Extra = Map<String, Value>;

/// True for a number left out of a file when it is zero.
pub(crate) fn is_zero<T: Default + PartialEq>(n: &T) -> bool {
    *n == T::default()
}

/// One of the three gates of the loop, as named in files.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
#[derive(strum::IntoStaticStr, strum::VariantArray, strum::Display)]
#[strum(serialize_all = "lowercase")]
pub enum GateName {
    /// GATE 0: the deterministic floor.
    Floor,
    /// GATE 1: the conformity verifier.
    Conformity,
    /// GATE 2: the security auditor.
    Security,
}

impl GateName {
    /// All gates, in loop order.
    pub const ALL: &[GateName] = <GateName as strum::VariantArray>::VARIANTS;

    /// The name used in files and on the command line.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// `0`, `1` or `2`.
    pub fn number(self) -> u8 {
        match self {
            GateName::Floor => 0,
            GateName::Conformity => 1,
            GateName::Security => 2,
        }
    }

    /// The gate after this one in loop order, if any.
    pub fn next(self) -> Option<GateName> {
        match self {
            GateName::Floor => Some(GateName::Conformity),
            GateName::Conformity => Some(GateName::Security),
            GateName::Security => None,
        }
    }
}

impl std::str::FromStr for GateName {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "floor" => Ok(GateName::Floor),
            "conformity" => Ok(GateName::Conformity),
            "security" => Ok(GateName::Security),
            other => Err(format!(
                "unknown gate '{other}' (expected floor, conformity or security)"
            )),
        }
    }
}

/// The verdict token of a gate's VERDICT line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[derive(strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum VerdictKind {
    /// GATE 0: every runnable criterion passed.
    Met,
    /// GATE 0: a runnable criterion failed.
    Unmet,
    /// GATE 0 (status mode): recorded NOT-MET or never-run criteria.
    Pending,
    /// GATE 0 / GATE 1: a criterion was handed off as impossible.
    Abandoned,
    /// Any gate: the gate could not judge (or the contract is malformed).
    Error,
    /// GATE 1: conform.
    Conforme,
    /// GATE 1: gaps.
    Ecarts,
    /// GATE 2: no blocking finding.
    Pass,
    /// GATE 2: blocking findings.
    Block,
    /// GATE 2: a bare `DEGRADED` verdict (tooling absent).
    Degraded,
}

impl VerdictKind {
    /// The symbol drawn beside it, never alone: ✓ passed, ✗ failed or
    /// blocking, ? not judged, ⊘ abandoned.
    pub fn symbol(self) -> &'static str {
        match self {
            VerdictKind::Met | VerdictKind::Conforme | VerdictKind::Pass => "✓",
            VerdictKind::Unmet | VerdictKind::Error | VerdictKind::Ecarts | VerdictKind::Block => {
                "✗"
            }
            VerdictKind::Pending | VerdictKind::Degraded => "?",
            VerdictKind::Abandoned => "⊘",
        }
    }

    /// The token as printed on a VERDICT line.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// True for the verdicts that let the loop go on to the next gate.
    pub fn is_pass(self) -> bool {
        matches!(
            self,
            VerdictKind::Met | VerdictKind::Conforme | VerdictKind::Pass | VerdictKind::Degraded
        )
    }
}

/// A gate's verdict: the token, its count and, for ERROR, the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Verdict {
    /// The token.
    pub kind: VerdictKind,
    /// The count in `UNMET(n)`, `ECARTS(n)`, `BLOCK(n)`, `ERROR(n)`...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<u32>,
    /// The reason in `ERROR(<reason>)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Verdict {
    /// A verdict without count or reason.
    pub fn bare(kind: VerdictKind) -> Self {
        Verdict {
            kind,
            n: None,
            reason: None,
        }
    }

    /// A verdict with a count.
    pub fn counted(kind: VerdictKind, n: u32) -> Self {
        Verdict {
            kind,
            n: Some(n),
            reason: None,
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.kind.as_str())?;
        if let Some(n) = self.n {
            write!(f, "({n})")
        } else if let Some(r) = &self.reason {
            write!(f, "({r})")
        } else {
            Ok(())
        }
    }
}

/// State of a criterion row in a GATE 0 report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING-KEBAB-CASE")]
#[derive(strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "SCREAMING-KEBAB-CASE")]
pub enum FloorState {
    /// Ran, exit 0 and marker found.
    Met,
    /// Ran and failed.
    NotMet,
    /// No CHECK: judged by a person or the verifier.
    Manual,
    /// Handed off by an ABANDON line.
    Abandoned,
    /// Status mode: evidence on file says MET.
    MetRecorded,
    /// Status mode: never run, or recorded NOT-MET.
    Pending,
}

impl FloorState {
    /// The word used in reports.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One criterion row of a GATE 0 run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FloorRow {
    /// Criterion id (the number before the dot).
    pub id: String,
    /// Its state in this run.
    pub state: FloorState,
    /// First line of the criterion text.
    pub text: String,
    /// The evidence text (empty when nothing ran).
    #[serde(default)]
    pub evidence: String,
}

/// Status of a criterion as judged by the conformity verifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING-KEBAB-CASE")]
#[derive(strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "SCREAMING-KEBAB-CASE")]
pub enum CriterionStatus {
    /// Met.
    Met,
    /// Not met.
    NotMet,
    /// The verifier could not tell.
    Unverifiable,
    /// Proven impossible; handed off.
    Abandoned,
}

impl CriterionStatus {
    /// The word used in verifier output.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One `CRITERIA:` row of a conformity verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CriterionRow {
    /// Criterion id.
    pub id: String,
    /// Criterion text as the verifier quoted it.
    pub text: String,
    /// The verifier's status.
    pub status: CriterionStatus,
    /// Evidence or explanation.
    #[serde(default)]
    pub detail: String,
}

/// One `BLOCKING:` row of a security verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SecurityRow {
    /// Row number as printed.
    pub n: u32,
    /// CRITICAL, HIGH, MEDIUM, LOW...
    pub severity: String,
    /// Rule id.
    pub rule: String,
    /// `file:line`.
    pub location: String,
    /// Why it blocks.
    #[serde(default)]
    pub why: String,
    /// The auditor's hint.
    #[serde(default)]
    pub hint: String,
}

/// One `REPORTED (non-blocking)` row of a security verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReportedRow {
    /// Severity word.
    pub severity: String,
    /// Rule id.
    pub rule: String,
    /// `file:line`.
    pub location: String,
}

/// A row of `gate.finished`: its shape depends on the gate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum GateRow {
    /// GATE 0 row.
    Floor(FloorRow),
    /// GATE 1 row.
    Criterion(CriterionRow),
    /// GATE 2 row.
    Security(SecurityRow),
    /// A row of a shape this version does not know, kept as is.
    Other(Value),
}

/// `SCOPE:` of a conformity verdict.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Scope {
    /// Number of in-scope files.
    #[serde(default)]
    pub in_scope: u32,
    /// Files changed outside FILE SCOPE.
    #[serde(default)]
    pub out_of_scope: Vec<String>,
}

/// The finding verifier's verdict on one finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[derive(strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum FindingVerdict {
    /// The code does what the finding says (evidence quoted).
    Verified,
    /// Proof that the code does not exist or does not do that.
    False,
    /// Cannot be checked against the working tree (note says why).
    Unverifiable,
}

impl FindingVerdict {
    /// The token as written in files.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A review finding with the finding verifier's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Finding {
    /// Finding id (taken from the finding, never from a model's echo).
    pub id: String,
    /// blocking, major, minor, nit (free text from other tools is kept).
    #[serde(default)]
    pub severity: String,
    /// File the finding is about.
    #[serde(default)]
    pub path: String,
    /// Line or range, as text (`80-92`).
    #[serde(default)]
    pub lines: String,
    /// What the finding claims.
    #[serde(default)]
    pub claim: String,
    /// The verifier's verdict.
    pub verdict: FindingVerdict,
    /// Decisive lines quoted as `path:line`.
    #[serde(default)]
    pub evidence: String,
    /// Why UNVERIFIABLE (or any remark).
    #[serde(default)]
    pub note: String,
    /// Unknown fields, kept.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// Outcome of one verify-by-test attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[derive(strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "kebab-case")]
pub enum VerifyOutcome {
    /// The repro test failed as predicted: the finding stands, the test is kept.
    Confirmed,
    /// The repro test passed (and the evidence gate agreed): downgraded to deferred.
    NotReproduced,
    /// Compile error, timeout, not unit-testable: the judgement stands.
    Inconclusive,
    /// Past `maxFindings`: judgement only.
    CapExceeded,
}

impl VerifyOutcome {
    /// The symbol drawn beside it: ✓ confirmed, ↓ not reproduced, ?
    /// inconclusive, · not attempted.
    pub fn symbol(self) -> &'static str {
        match self {
            VerifyOutcome::Confirmed => "✓",
            VerifyOutcome::NotReproduced => "↓",
            VerifyOutcome::Inconclusive => "?",
            VerifyOutcome::CapExceeded => "·",
        }
    }

    /// The token as written in files.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A repro test kept because it confirmed a finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RedTest {
    /// Test file.
    pub file: String,
    /// Test reference (`file::name`).
    pub test_ref: String,
    /// The finding it proves.
    pub issue: String,
}

/// The kinds of human gate (PROTOCOL §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[derive(strum::IntoStaticStr, strum::VariantArray, strum::Display)]
#[strum(serialize_all = "kebab-case")]
pub enum HumanGateKind {
    /// GATE 1 reported ABANDONED criteria.
    Abandoned,
    /// All MET but criteria remain UNVERIFIABLE (journals written before
    /// `unverifiable-finding` existed hold finding gates of this kind too:
    /// they are read as `unverifiable-finding`).
    Unverifiable,
    /// The finding verifier found a review finding UNVERIFIABLE.
    UnverifiableFinding,
    /// The diff touches a file outside FILE SCOPE.
    OutOfScope,
    /// A gate used all its rounds.
    CapReached,
    /// A verifier or auditor failed structurally twice.
    Structural,
    /// A person changed the contract's judged parts while the engine runs.
    ContractChanged,
    /// The next dispatch would start at or past a `[budget]` limit.
    Budget,
    /// Rounds of a gate went by without progress (`[run] stagnant_after`).
    Stagnant,
}

impl HumanGateKind {
    /// All kinds.
    pub const ALL: &[HumanGateKind] = <HumanGateKind as strum::VariantArray>::VARIANTS;

    /// The name used in files and on the command line.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl std::str::FromStr for HumanGateKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        from_word(s, "human gate kind")
    }
}

/// The word `s` of a vocabulary, or an error naming every word it has.
fn from_word<T>(s: &str, what: &str) -> Result<T, String>
where
    T: strum::VariantArray + Copy + Into<&'static str>,
{
    T::VARIANTS
        .iter()
        .copied()
        .find(|&v| v.into() == s)
        .ok_or_else(|| {
            let names: Vec<&str> = T::VARIANTS.iter().map(|&v| v.into()).collect();
            format!(
                "unknown {what} '{s}' (expected one of: {})",
                names.join(", ")
            )
        })
}

/// A decision token, as written in files and on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[derive(strum::IntoStaticStr, strum::VariantArray, strum::Display)]
#[strum(serialize_all = "kebab-case")]
pub enum Decision {
    /// abandoned: the criterion becomes normal again and goes back to the developer.
    Lift,
    /// abandoned: the run may finish, never reported as fully complete.
    AcceptPartial,
    /// unverifiable: checked by hand.
    Accept,
    /// unverifiable: the run stops as not conformant.
    Reject,
    /// unverifiable-finding: not a problem here; the loop goes on.
    Dismiss,
    /// unverifiable-finding: treat it as real; it goes to the developer.
    Fix,
    /// unverifiable-finding: the run stops as not conformant.
    Stop,
    /// out-of-scope: the file joins FILE SCOPE with `[gated YYYY-MM-DD]`.
    Approve,
    /// out-of-scope: the developer must remove the change.
    Deny,
    /// cap-reached / structural: one more round.
    Extend,
    /// cap-reached / structural: the loop stops; a person finishes.
    TakeOver,
    /// cap-reached / structural: the run is aborted.
    Abort,
    /// structural: run the gate again.
    Retry,
    /// contract-changed: the changed contract is the one judged.
    Adopt,
    /// contract-changed: the contract is put back as it was judged.
    Revert,
    /// budget: the limit rises by its configured amount again.
    Raise,
}

impl Decision {
    /// All decisions.
    pub const ALL: &[Decision] = <Decision as strum::VariantArray>::VARIANTS;

    /// The token.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// A human label for buttons and reports.
    pub fn label(self) -> &'static str {
        match self {
            Decision::Lift => "lift",
            Decision::AcceptPartial => "accept partial",
            Decision::Accept => "accept",
            Decision::Reject => "reject",
            Decision::Dismiss => "dismiss",
            Decision::Fix => "fix",
            Decision::Stop => "stop",
            Decision::Approve => "approve",
            Decision::Deny => "deny",
            Decision::Extend => "extend",
            Decision::TakeOver => "take over",
            Decision::Abort => "abort",
            Decision::Retry => "retry",
            Decision::Adopt => "adopt",
            Decision::Revert => "put back",
            Decision::Raise => "raise the limit",
        }
    }
}

impl std::str::FromStr for Decision {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        from_word(s, "decision")
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[derive(strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "kebab-case")]
pub enum EndStatus {
    /// Every gate passed, nothing abandoned.
    Complete,
    /// Finished with an accepted abandonment.
    Partial,
    /// A person rejected an UNVERIFIABLE leftover (or stopped on one).
    NotConformant,
    /// A person took over.
    Stopped,
    /// Aborted.
    Aborted,
}

impl EndStatus {
    /// The token.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl std::str::FromStr for EndStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        <EndStatus as strum::VariantArray>::VARIANTS
            .iter()
            .copied()
            .find(|e| e.as_str() == s)
        .ok_or_else(|| {
            format!("unknown run status '{s}' (expected complete, partial, not-conformant, stopped or aborted)")
        })
    }
}

#[cfg(test)]
mod names_tests {
    use super::*;

    /// Each word of a vocabulary as written in files, by serde.
    fn serde_names<T: Serialize>(all: &[T]) -> Vec<String> {
        all.iter()
            .map(|v| {
                serde_json::to_value(v)
                    .unwrap()
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    }

    fn strum_names<T: Copy + Into<&'static str>>(all: &[T]) -> Vec<String> {
        all.iter().map(|&v| v.into().to_string()).collect()
    }

    #[test]
    fn every_word_is_the_one_serde_writes() {
        use strum::VariantArray;
        macro_rules! same {
            ($($t:ty),*) => {$(
                assert_eq!(serde_names(<$t>::VARIANTS), strum_names(<$t>::VARIANTS), stringify!($t));
            )*};
        }
        same!(
            GateName,
            VerdictKind,
            FloorState,
            CriterionStatus,
            FindingVerdict,
            VerifyOutcome,
            HumanGateKind,
            Decision,
            EndStatus
        );
        assert_eq!(FloorState::MetRecorded.as_str(), "MET-RECORDED");
        assert_eq!(
            HumanGateKind::UnverifiableFinding.as_str(),
            "unverifiable-finding"
        );
    }
}
