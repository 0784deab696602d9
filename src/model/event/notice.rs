//! `notify.sent`: the note that a gate's notification (hook, webhook) went
//! out, so that every other loopwatch process watching the same pipeline
//! leaves it alone. Recorded under the writer lock before sending.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::types::Extra;

/// Payload of `notify.sent`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NotifySent {
    /// The gate announced.
    pub id: String,
    /// 1 for the first notification, 2 and up for reminders.
    pub n: u32,
    /// `user@host` of the process that sent it.
    #[serde(default)]
    pub by: String,
    /// Unknown fields, kept.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}
