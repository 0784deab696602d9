//! The time the app believes it is: injected, so ages and the dialog's
//! key guard are testable without sleeping.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use jiff::Timestamp;

/// A source of "now".
pub trait Clock: Send + Sync {
    /// The current time.
    fn now(&self) -> Timestamp;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that moves only when told to (tests, replay). Clones share the time.
#[derive(Debug, Clone)]
pub struct ManualClock {
    millis: Arc<AtomicI64>,
}

impl ManualClock {
    /// A clock stopped at `at`.
    pub fn new(at: Timestamp) -> Self {
        ManualClock {
            millis: Arc::new(AtomicI64::new(at.as_millisecond())),
        }
    }

    /// Sets the time.
    pub fn set(&self, at: Timestamp) {
        self.millis.store(at.as_millisecond(), Ordering::SeqCst);
    }

    /// Moves the time forward.
    pub fn advance(&self, by: Duration) {
        let ms = i64::try_from(by.as_millis()).unwrap_or(i64::MAX);
        self.millis.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        // Invariant: only ever set from a valid Timestamp plus small test steps.
        Timestamp::from_millisecond(self.millis.load(Ordering::SeqCst))
            .unwrap_or(Timestamp::UNIX_EPOCH)
    }
}
