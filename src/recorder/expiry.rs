//! Expiry of human gates: the rule stamped on a request when it opens, when
//! it falls due, and `human.expired` recorded under the writer lock so that
//! a decision and an expiry racing each other give exactly one outcome.

use crate::journal::{Appended, append_with};
use crate::model::event::*;
use crate::model::state::HumanGate;

use super::{RecordError, Recorder, Refusal};

impl Recorder {
    /// The request with its expiry: the one asked for, else the recorder's
    /// rule for its kind, else none. A rule whose action is not one of the
    /// request's options is left out (the gate then never expires).
    pub(super) fn stamp(&self, mut req: HumanRequest, asked: Option<ExpiryRule>) -> HumanRequest {
        let rule = asked.or_else(|| self.expiry.get(&req.kind).cloned());
        req.expires = rule.filter(|r| req.options.contains(&r.action));
        req
    }

    /// Records that gate `id` expired. Refused (and nothing written) when
    /// the gate does not exist, has no expiry, is not due yet, or already
    /// has an outcome: the error then says which decision or expiry won.
    pub fn expire(&self, id: &str) -> Result<Appended, RecordError> {
        super::refuse_read_only(&self.pipeline, "its expiry is recorded")?;
        append_with::<_, RecordError>(&self.pipeline, &self.opts, |s| {
            let gate = s
                .human_gate(id)
                .ok_or_else(|| Refusal::UnknownGate { id: id.into() })?;
            if let Some(d) = &gate.decision {
                return Err(Refusal::DecidedBeforeExpiry {
                    id: id.into(),
                    decision: d.decision.decision,
                    by: d.decision.by.clone(),
                    at: d.at.clone(),
                }
                .into());
            }
            if let Some(x) = &gate.expired {
                return Err(Refusal::AlreadyExpired {
                    id: id.into(),
                    at: x.at.clone(),
                    action: x.action,
                }
                .into());
            }
            let Some(rule) = gate.request.expires.clone() else {
                return Err(Refusal::NoExpiry { id: id.into() }.into());
            };
            match expires_at(gate) {
                Some(due) if due <= jiff::Timestamp::now() => {}
                Some(due) => {
                    return Err(Refusal::NotDue {
                        id: id.into(),
                        due: due.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
                    }
                    .into());
                }
                None => {
                    return Err(Refusal::ExpiryUnreadable {
                        id: id.into(),
                        requested_at: gate.requested_at.clone(),
                        after: rule.after.clone(),
                    }
                    .into());
                }
            }
            Ok(vec![EventBody::from(HumanExpired {
                id: id.to_string(),
                after: rule.after,
                action: rule.action,
                extra: Default::default(),
            })])
        })
    }
}

/// When an open gate expires: its request time plus its expiry's delay;
/// `None` when it has no expiry or either cannot be read.
pub fn expires_at(gate: &HumanGate) -> Option<jiff::Timestamp> {
    let secs = gate.request.expires.as_ref()?.seconds()?;
    let at: jiff::Timestamp = gate.requested_at.parse().ok()?;
    at.checked_add(jiff::SignedDuration::from_secs(i64::try_from(secs).ok()?))
        .ok()
}
