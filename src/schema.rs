//! JSON Schemas of every file loopwatch reads or writes, generated from the
//! Rust types (schemars). The copies under `schemas/` are checked in; a
//! test fails when they drift (`LOOPWATCH_UPDATE_SCHEMAS=1 cargo test
//! schemas` rewrites them).

use schemars::{JsonSchema, schema_for};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::model::event::EventBody;
use crate::model::{FindingVerdict, State};

/// One line of `events.jsonl`, for the schema only.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "loopwatch event (one line of events.jsonl)")]
pub struct EventLine {
    /// Format version.
    #[schemars(range(min = 1, max = 1))]
    pub v: u32,
    /// Sequence number, from 1.
    #[schemars(range(min = 1))]
    pub seq: u64,
    /// RFC 3339 UTC time.
    pub at: String,
    /// The hash chain: sha256 (64 lowercase hex digits) of the previous
    /// line's bytes; absent on the first line and on lines written before
    /// the chain existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[0-9a-f]{64}$"))]
    pub prev: Option<String>,
    /// Payload by `type`.
    #[serde(flatten)]
    pub body: EventBody,
}

/// One entry of the finding verifier's output.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "finding verifier verdict")]
pub struct FindingVerdictEntry {
    /// The finding id as echoed by the verifier (never trusted as the id).
    pub id: String,
    /// VERIFIED, FALSE or UNVERIFIABLE.
    pub verdict: FindingVerdict,
    /// Decisive lines quoted as `path:line` (required for VERIFIED and FALSE).
    #[serde(default)]
    pub evidence: String,
    /// Why UNVERIFIABLE (required for UNVERIFIABLE).
    #[serde(default)]
    pub note: String,
}

/// The kinds of file `validate` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FileKind {
    /// `events.jsonl`.
    Journal,
    /// `state.json`.
    State,
    /// `triage-<iter>.json` (3.2.0).
    Triage,
    /// Finding-verifier verdicts (a JSON array).
    Verdicts,
}

/// Every schema with its file name under `schemas/`.
pub fn all() -> Vec<(&'static str, Value)> {
    [
        ("event.schema.json", FileKind::Journal),
        ("state.schema.json", FileKind::State),
        ("triage.schema.json", FileKind::Triage),
        ("finding-verdicts.schema.json", FileKind::Verdicts),
    ]
    .into_iter()
    .map(|(name, kind)| (name, for_kind(kind)))
    .collect()
}

/// The schema of one kind of file (for journals: of one line).
pub fn for_kind(kind: FileKind) -> Value {
    match kind {
        FileKind::Journal => schema_for!(EventLine).to_value(),
        FileKind::State => schema_for!(State).to_value(),
        FileKind::Triage => schema_for!(crate::model::triage::Triage).to_value(),
        FileKind::Verdicts => verdicts_schema(),
    }
}

/// The verdict-gate rules on top of the entry's shape: evidence required
/// for VERIFIED/FALSE, a note for UNVERIFIABLE.
fn verdicts_schema() -> Value {
    let mut entry = schema_for!(FindingVerdictEntry).to_value();
    let defs = entry.as_object_mut().and_then(|o| o.remove("$defs"));
    if let Some(o) = entry.as_object_mut() {
        o.remove("$schema");
        o.insert(
            "allOf".into(),
            json!([
                { "if": { "properties": { "verdict": { "enum": ["VERIFIED", "FALSE"] } } },
                  "then": { "properties": { "evidence": { "minLength": 1, "pattern": "\\S" } }, "required": ["evidence"] } },
                { "if": { "properties": { "verdict": { "const": "UNVERIFIABLE" } } },
                  "then": { "properties": { "note": { "minLength": 1, "pattern": "\\S" } }, "required": ["note"] } }
            ]),
        );
    }
    let mut root = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "finding verifier verdicts",
        "type": "array",
        "items": entry,
    });
    if let (Some(d), Some(o)) = (defs, root.as_object_mut()) {
        o.insert("$defs".into(), d);
    }
    root
}
