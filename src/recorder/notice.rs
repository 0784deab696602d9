//! Claiming a gate's notification: `notify.sent` appended under the writer
//! lock only by the first process to ask for notification `n` of a gate, so
//! two watchers of one pipeline never both send it.

use crate::journal::append_with;
use crate::model::State;
use crate::model::event::*;

use super::{RecordError, Recorder, Refusal};

impl Recorder {
    /// Records `notify.sent` number `n` for gate `id` and returns the state
    /// after it, when the gate is still open and exactly `n - 1`
    /// notifications were sent before; `None` (nothing written) when another
    /// process got there first or the gate no longer waits.
    pub fn claim_notice(&self, id: &str, n: u32) -> Result<Option<State>, RecordError> {
        super::refuse_read_only(&self.pipeline, "notifications are sent")?;
        let appended = append_with::<_, RecordError>(&self.pipeline, &self.opts, |s| {
            let Some(gate) = s.human_gate(id) else {
                return Err(Refusal::UnknownGate { id: id.into() }.into());
            };
            if !gate.is_open() || gate.notified + 1 != n {
                return Ok(Vec::new());
            }
            Ok(vec![EventBody::from(NotifySent {
                id: id.to_string(),
                n,
                by: crate::util::user_at_host(),
                extra: Default::default(),
            })])
        })?;
        Ok((!appended.events.is_empty()).then_some(appended.state))
    }
}
