//! Shared by the end-to-end tests: a tmux driver ([`tmux`]) and a fixture
//! worktree run through the real binary ([`worktree`]).

pub mod tmux;
pub mod worktree;

use std::sync::{Mutex, MutexGuard};

static SERIAL: Mutex<()> = Mutex::new(());

/// Held for the whole of a test: the tests run one at a time, so that
/// timing on a small machine stays predictable.
pub fn serial() -> MutexGuard<'static, ()> {
    // A test that failed poisons the lock; the next one may still run.
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
