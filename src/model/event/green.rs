//! `verify.green`: a red test handed to the developer, run again by
//! loopwatch after the developer's dispatch, and what it showed.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::types::Extra;

/// What the rerun of a red test showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[derive(strum::IntoStaticStr, strum::Display)]
#[strum(serialize_all = "kebab-case")]
pub enum GreenResult {
    /// The test ran and passed: the finding is fixed.
    Green,
    /// The test still fails (or no longer builds, or ran out of time).
    Red,
    /// The test is gone: its file is absent or the runner ran no test by its name.
    Missing,
    /// The test was weakened: an assertion dropped or a skip added since
    /// verify-by-test kept it, or the runner skipped it.
    Weakened,
}

impl GreenResult {
    /// The token as written in files.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Payload of `verify.green`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerifyGreen {
    /// The iteration whose developer dispatch was checked.
    pub iteration: u32,
    /// The finding the red test proves.
    pub finding: String,
    /// The red test (`file::name`).
    pub test_ref: String,
    /// What the rerun showed.
    pub result: GreenResult,
    /// The rerun's log, relative to `.pipeline/` (empty when nothing ran).
    #[serde(default)]
    pub log: String,
    /// Why the result is not green, when it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}
