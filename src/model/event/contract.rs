//! `contract.judged`: the contract as `loopwatch run` judges it. Recorded
//! when the run starts, and again whenever its judged parts (REQUEST,
//! criteria with their CHECK and EXPECT, FILE SCOPE) change by loopwatch's
//! own hand: a file a person approved joining FILE SCOPE, a change a
//! person adopted or put back (`contract-changed` gates). Any other change
//! of the judged parts is an agent's tamper (put back, and a failure of
//! its dispatch) or a person's edit, which waits for a decision.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::types::Extra;

/// Payload of `contract.judged`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContractJudged {
    /// The contract, relative to the worktree.
    pub path: String,
    /// `sha256:<hex>` of its judged parts.
    pub judged: String,
    /// `sha256:<hex>` of the file's bytes then.
    pub bytes: String,
    /// Why it was recorded (`run start`, `hg-2-conformity-1 approved src/x.rs`, …).
    pub why: String,
    /// The human gate whose outcome this applies, when one does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<String>,
    /// GATE 0 judges again from here (the judged parts changed by a
    /// person's adoption).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rerun: bool,
    /// Unknown fields, kept.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}
