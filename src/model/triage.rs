//! Triage files (`triage-<iter>.json`, schema version 3.2.0, PROTOCOL §4)
//! and the verify-by-test report that `loopwatch triage apply` reads.
//!
//! A triage file sorts an iteration's findings into accepted, deferred and
//! rejected; verify-by-test adds a [`Verification`] to the findings it
//! attempted. Unknown fields are kept verbatim and written back unchanged;
//! a file of another schema version is refused at parse time, so a serde
//! round trip is also a validation. Never does I/O.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::types::{Extra, VerifyOutcome};

/// The only triage schema version this program reads and writes.
pub const TRIAGE_SCHEMA_VERSION: &str = "3.2.0";

/// Default of [`VerificationReport::max_findings`] (PROTOCOL §1).
pub const DEFAULT_MAX_FINDINGS: u32 = 3;

/// One `triage-<iter>.json` file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(title = "Triage")]
pub struct Triage {
    /// Always `3.2.0`; any other value is refused.
    pub schema_version: SchemaVersion,
    /// 1-based review iteration.
    pub iteration: u32,
    /// Findings the developer must address.
    #[serde(default)]
    pub accepted: Vec<TriageFinding>,
    /// Findings postponed (with a reason).
    #[serde(default)]
    pub deferred: Vec<TriageFinding>,
    /// Findings dismissed (with a reason).
    #[serde(default)]
    pub rejected: Vec<TriageFinding>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

impl Triage {
    /// Reads a triage file (schema 3.2.0); the error names the input, line
    /// and column.
    pub fn parse(name: &str, bytes: &[u8]) -> Result<Triage, String> {
        serde_json::from_slice(bytes).map_err(|e| {
            format!(
                "{name}:{}:{}: not a 3.2.0 triage file: {e}",
                e.line(),
                e.column()
            )
        })
    }

    /// Bucket sizes and finding ids per bucket (what `triage.recorded` carries).
    pub fn buckets(&self) -> (super::event::TriageCounts, super::event::TriageBuckets) {
        let ids = |v: &[TriageFinding]| v.iter().map(|f| f.id.clone()).collect::<Vec<_>>();
        let n = |v: &[TriageFinding]| u32::try_from(v.len()).unwrap_or(u32::MAX);
        (
            super::event::TriageCounts {
                accepted: n(&self.accepted),
                deferred: n(&self.deferred),
                rejected: n(&self.rejected),
            },
            super::event::TriageBuckets {
                accepted: ids(&self.accepted),
                deferred: ids(&self.deferred),
                rejected: ids(&self.rejected),
            },
        )
    }
}

/// The `schemaVersion` marker: serialises as `3.2.0`, refuses anything else.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SchemaVersion;

/// Severity of a finding in a triage file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TriageSeverity {
    /// Must be fixed before the change ships (verify-by-test candidates).
    Blocking,
    /// Should be fixed.
    Major,
    /// Could be fixed.
    Minor,
    /// Taste.
    Nit,
}

/// One finding of a triage file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TriageFinding {
    /// Finding id (`F1`).
    pub id: String,
    /// blocking, major, minor or nit.
    pub severity: TriageSeverity,
    /// One-line title.
    #[serde(default)]
    pub title: String,
    /// File the finding is about.
    #[serde(default)]
    pub path: String,
    /// Line or range, as text (`80-92`).
    #[serde(default)]
    pub lines: String,
    /// What the finding claims.
    #[serde(default)]
    pub claim: String,
    /// Which reviewer raised it.
    #[serde(default)]
    pub reviewer: String,
    /// Why it is deferred or rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What verify-by-test found, when it was attempted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<Verification>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `$defs.verification`: the verify-by-test result recorded on a finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "verification", title = "Verification")]
pub struct Verification {
    /// confirmed, not-reproduced, inconclusive or cap-exceeded.
    pub result: VerifyOutcome,
    /// Repro test reference (`tests/x.rs::name`).
    #[serde(default)]
    pub test_ref: String,
    /// Repro test file.
    #[serde(default)]
    pub file: String,
    /// Test log, relative to the triage file's folder or `.pipeline/`.
    #[serde(default)]
    pub log: String,
    /// Cause of an inconclusive result, or any remark.
    #[serde(default)]
    pub note: String,
    /// What the evidence gate said about the log.
    pub evidence_gate: EvidenceGateStatus,
    /// Unknown fields, kept.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// What the evidence gate said about a repro test log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[derive(strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
pub enum EvidenceGateStatus {
    /// The log proves the claim.
    Passed,
    /// The log does not prove the claim (or could not be read).
    Failed,
    /// The gate was not asked.
    Skipped,
}

impl EvidenceGateStatus {
    /// The token as written in files.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The `--verification FILE` of `loopwatch triage apply`: what the
/// verify-by-test step did for one iteration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VerificationReport {
    /// One entry per finding attempted.
    pub results: Vec<VerificationEntry>,
    /// How many findings may be attempted (default 3); the rest are `cap-exceeded`.
    #[serde(default = "default_max_findings")]
    pub max_findings: u32,
    /// Wall time of the step.
    #[serde(default)]
    pub duration_ms: u64,
    /// The step ran out of time.
    #[serde(default)]
    pub timed_out: bool,
    /// Tokens in, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_in: Option<u64>,
    /// Tokens out, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_out: Option<u64>,
}

/// One attempted finding of a [`VerificationReport`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VerificationEntry {
    /// Finding id; must be in the triage file's `accepted`.
    pub finding: String,
    /// What the repro test did.
    pub result: AttemptResult,
    /// Repro test reference (`tests/x.rs::name`).
    #[serde(default)]
    pub test_ref: String,
    /// Repro test file.
    #[serde(default)]
    pub file: String,
    /// Test log, relative to the triage file's folder or `.pipeline/`.
    #[serde(default)]
    pub log: String,
    /// Cause of an inconclusive result, or any remark.
    #[serde(default)]
    pub note: String,
}

/// What one repro test did, as the verify-by-test step reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AttemptResult {
    /// The test failed as predicted.
    Confirmed,
    /// The test passed: the finding did not reproduce.
    NotReproduced,
    /// Compile error, timeout, not unit-testable.
    Inconclusive,
}

fn default_max_findings() -> u32 {
    DEFAULT_MAX_FINDINGS
}

impl Serialize for SchemaVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(TRIAGE_SCHEMA_VERSION)
    }
}

impl<'de> Deserialize<'de> for SchemaVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let found = String::deserialize(d)?;
        if found == TRIAGE_SCHEMA_VERSION {
            Ok(SchemaVersion)
        } else {
            Err(serde::de::Error::custom(format_args!(
                "schemaVersion {found:?} is not supported (expected \"{TRIAGE_SCHEMA_VERSION}\")"
            )))
        }
    }
}

impl JsonSchema for SchemaVersion {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "SchemaVersion".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "const": TRIAGE_SCHEMA_VERSION })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"{"schemaVersion":"3.2.0","iteration":2,"owner":"x",
      "accepted":[{"id":"F1","severity":"blocking","title":"t","path":"p","lines":"1","claim":"c","reviewer":"r","mood":1,
        "verification":{"result":"confirmed","testRef":"a::b","file":"a","log":"l","note":"","evidenceGate":"skipped","extra":true}}],
      "deferred":[],"rejected":[]}"#;

    #[test]
    fn unknown_fields_survive_a_round_trip() {
        let t: Triage = serde_json::from_str(SAMPLE).unwrap();
        let back = serde_json::to_value(&t).unwrap();
        assert_eq!(back["owner"], "x");
        assert_eq!(back["accepted"][0]["mood"], 1);
        assert_eq!(back["accepted"][0]["verification"]["extra"], true);
        assert_eq!(back["schemaVersion"], "3.2.0");
    }

    #[test]
    fn a_wrong_schema_version_is_refused() {
        let err = serde_json::from_str::<Triage>(&SAMPLE.replace("3.2.0", "3.1.0")).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("schemaVersion \"3.1.0\" is not supported (expected \"3.2.0\")"),
            "{err}"
        );
    }

    #[test]
    fn schema_defines_verification_under_its_protocol_name() {
        let schema = serde_json::to_value(schemars::schema_for!(Triage)).unwrap();
        let def = &schema["$defs"]["verification"];
        assert_eq!(def["title"], "Verification");
        let props: Vec<&str> = def["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            props,
            ["result", "testRef", "file", "log", "note", "evidenceGate"]
        );
        assert_eq!(schema["properties"]["schemaVersion"]["const"], "3.2.0");
    }

    #[test]
    fn verification_report_defaults_and_rejects_typos() {
        let r: VerificationReport =
            serde_json::from_str(r#"{"results":[{"finding":"F1","result":"not-reproduced"}]}"#)
                .unwrap();
        assert_eq!(r.max_findings, 3);
        assert_eq!(r.results[0].result, AttemptResult::NotReproduced);
        let err = serde_json::from_str::<VerificationReport>(r#"{"results":[],"maxfindings":2}"#)
            .unwrap_err();
        assert!(
            err.to_string().starts_with("unknown field `maxfindings`"),
            "{err}"
        );
    }
}
