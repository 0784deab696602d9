//! What the engine does while a human gate waits: the gate's expiry and
//! its notifications, through the same [`Attendant`] as `loopwatch await`
//! (so whichever process notices first records the expiry or sends, once),
//! from the engine's own `[notify]` and `[expiry.<kind>]` of
//! `loopwatch.toml`.

use std::sync::Arc;
use std::time::Duration;

use super::config::Config;
use crate::journal::Pipeline;
use crate::model::State;
use crate::notify::{Attendant, Notifier};
use crate::recorder::Recorder;

/// The engine's recorder: its expiry per kind applied to every gate it opens.
pub fn recorder(pipeline: Pipeline, config: &Config) -> Recorder {
    Recorder::new(pipeline).with_expiry(config.expiry.clone())
}

/// Watches over the gates the engine waits on.
#[derive(Debug)]
pub struct Attention {
    attendant: Attendant,
}

impl Attention {
    /// The attention of the engine driving `pipeline` with `config`.
    pub fn new(pipeline: Pipeline, config: &Config) -> Self {
        let notifier = Notifier {
            hook: None,
            settings: config.notify.clone(),
        };
        let report: crate::notify::attend::Report = Arc::new(|id: &str, r| match r {
            Ok(a) => {
                for f in a.failures {
                    tracing::warn!(gate = id, failure = %f, "notification failed");
                }
            }
            Err(e) => tracing::warn!(gate = id, error = %e, "cannot record notify.sent"),
        });
        Attention {
            attendant: Attendant::new(recorder(pipeline, config), notifier, report),
        }
    }

    /// Looks at the open gates of `state` (the gate `id`, or all of them):
    /// records the expiries due, starts the notifications due. Returns how
    /// long to sleep at most before looking again.
    pub fn look(
        &mut self,
        state: &State,
        id: Option<&str>,
    ) -> Result<Duration, crate::recorder::RecordError> {
        let gates = state
            .open_human_gates()
            .filter(|g| id.is_none_or(|id| g.request.id == id));
        let look = self.attendant.look(gates, false)?;
        for id in &look.expired {
            tracing::info!(gate = %id, "expired: its expiry's action applies");
        }
        for lost in &look.lost {
            // A person decided first: the decision is what the loop goes on with.
            tracing::info!(reason = %lost, "not expired");
        }
        Ok(look.wake())
    }
}
