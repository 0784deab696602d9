//! What a process waiting on a human gate does each time it looks: records
//! the gate's expiry once it falls due (`human.expired`, under the writer
//! lock: a decision racing it gives exactly one outcome, and the loser is
//! told), and sends the gate's notification when it is due (claimed in the
//! journal first: `notify.sent` keeps two watchers from both sending).
//! `loopwatch await` and the engine both wait through an [`Attendant`],
//! sleeping at most [`Look::wake`] between two looks.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;

use super::{Announced, Notifier, due};
use crate::journal::Pipeline;
use crate::model::HumanGate;
use crate::recorder::{RecordError, Recorder, Refusal, expires_at};

/// Where the outcome of a notification sent in the background is told.
pub type Report = Arc<dyn Fn(&str, Result<Announced, RecordError>) + Send + Sync>;

/// The longest a process waiting on a gate sleeps without reading the
/// journal again: a guard against a missed filesystem event (one read).
pub const GUARD: Duration = Duration::from_secs(5);

/// What one look did.
#[derive(Debug, Default)]
pub struct Look {
    /// Gates whose expiry this process recorded.
    pub expired: Vec<String>,
    /// Expiries that lost to a decision (or to another process's expiry):
    /// the refusal says which outcome won.
    pub lost: Vec<RecordError>,
    /// When something will be due next (an expiry, a notification), if anything.
    pub next: Option<Duration>,
}

impl Look {
    /// This look recorded or lost an expiry: the journal is to be read
    /// again at once.
    pub fn changed(&self) -> bool {
        !self.expired.is_empty() || !self.lost.is_empty()
    }

    /// How long to sleep at most before looking again: zero when
    /// [`changed`](Look::changed), else until the next thing due, at most
    /// [`GUARD`].
    pub fn wake(&self) -> Duration {
        if self.changed() {
            return Duration::ZERO;
        }
        self.next.map_or(GUARD, |n| n.min(GUARD))
    }
}

/// Watches over the open gates of one pipeline for a waiting process.
pub struct Attendant {
    recorder: Recorder,
    notifier: Notifier,
    /// A copy this process may not write: its expiries and notifications
    /// are left to the host that writes it.
    read_only: bool,
    /// Notifications (gate, n) this process has started: each at most once.
    attempted: BTreeSet<(String, u32)>,
    report: Report,
}

impl std::fmt::Debug for Attendant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Attendant")
            .field("read_only", &self.read_only)
            .field("attempted", &self.attempted)
            .finish()
    }
}

impl Attendant {
    /// An attendant writing through `recorder`, sending through `notifier`;
    /// the outcome of each notification (sent on a thread of its own) goes
    /// to `report`.
    pub fn new(recorder: Recorder, notifier: Notifier, report: Report) -> Self {
        let read_only = crate::recorder::is_read_only(recorder.pipeline());
        Attendant {
            recorder,
            notifier,
            read_only,
            attempted: BTreeSet::new(),
            report,
        }
    }

    /// True when the pipeline is a copy this process never writes.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// The pipeline.
    pub fn pipeline(&self) -> &Pipeline {
        self.recorder.pipeline()
    }

    /// Looks at `gates` (as last read from the journal; `foreign`: read
    /// from a `state.json` another program writes): expires the open ones
    /// due, starts the notifications due. An error is a failure to record
    /// an expiry other than losing the race.
    pub fn look<'a>(
        &mut self,
        gates: impl IntoIterator<Item = &'a HumanGate>,
        foreign: bool,
    ) -> Result<Look, RecordError> {
        let mut look = Look::default();
        if self.read_only || foreign {
            return Ok(look);
        }
        let now = Timestamp::now();
        let mut soonest: Option<Timestamp> = None;
        let mut sooner = |t: Timestamp| {
            soonest = Some(soonest.map_or(t, |s| s.min(t)));
        };
        for gate in gates.into_iter().filter(|g| g.is_open()) {
            let id = gate.request.id.as_str();
            if let Some(at) = expires_at(gate) {
                if at <= now {
                    match self.recorder.expire(id) {
                        Ok(_) => look.expired.push(id.to_string()),
                        Err(e @ RecordError::Refused(Refusal::DecidedBeforeExpiry { .. }))
                        | Err(e @ RecordError::Refused(Refusal::AlreadyExpired { .. })) => {
                            look.lost.push(e)
                        }
                        Err(e) => return Err(e),
                    }
                    continue;
                }
                sooner(at);
            }
            if !self.notifier.is_active() {
                continue;
            }
            if let Some(n) = due(gate, now, &self.notifier.settings) {
                if self.attempted.insert((id.to_string(), n)) {
                    self.send(id, n);
                }
            } else if let Some(t) = next_notice(gate, &self.notifier.settings) {
                sooner(t);
            }
        }
        look.next = soonest.map(|t| {
            let d = t.duration_since(now);
            // Rounded up to a whole millisecond: never a busy wake just before it.
            d.unsigned_abs() + Duration::from_millis(1)
        });
        Ok(look)
    }

    fn send(&self, id: &str, n: u32) {
        let (notifier, pipeline, id, report) = (
            self.notifier.clone(),
            self.recorder.pipeline().clone(),
            id.to_string(),
            self.report.clone(),
        );
        let spawned = std::thread::Builder::new()
            .name("loopwatch-notify".into())
            .spawn(move || {
                let r = notifier.announce(&pipeline, &id, n);
                // A failure is said in the journal too, where every watcher
                // (the TUI's status line, `--headless`, the report) sees it.
                if let Ok(a) = &r
                    && !a.failures.is_empty()
                {
                    // The webhook's address may hold a token: scrubbed.
                    let text = format!(
                        "notification {n} of {id} failed: {}",
                        crate::redact::scrub(&a.failures.join("; "))
                    );
                    if let Err(e) = Recorder::new(pipeline.clone()).note(text) {
                        tracing::warn!(error = %e, "cannot record a notification's failure");
                    }
                }
                report(&id, r);
            });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "cannot start a notification thread");
        }
    }
}

/// When the next notification of an open gate falls due: the first
/// `delay` after it opened, then every `remind` after the last one.
pub fn next_notice(gate: &HumanGate, s: &super::NotifySettings) -> Option<Timestamp> {
    let plus = |at: &str, d: Duration| -> Option<Timestamp> {
        let t: Timestamp = at.parse().ok()?;
        t.checked_add(jiff::SignedDuration::try_from(d).ok()?).ok()
    };
    if gate.notified == 0 {
        return plus(&gate.requested_at, s.delay);
    }
    let last = gate.notified_at.as_deref().unwrap_or(&gate.requested_at);
    plus(last, s.remind?)
}
