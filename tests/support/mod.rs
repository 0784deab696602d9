//! The one test kit of the integration tests (the in-crate helpers are
//! `loopwatch::tui::testkit`, behind the `testkit` feature): fixture files
//! ([`fixture`], [`fixture_path`]), a tmux driver ([`tmux`]), a fixture
//! worktree run through the real binary ([`worktree`]), a `watch --headless`
//! child ([`headless`]), the hardening suite's pipelines and seeded
//! faults ([`hardening`]), a scripted model server speaking the Anthropic
//! and OpenAI APIs ([`model_server`]) and the real agent CLIs pointed at it
//! ([`clis`]); hermetic git ([`git`]), scratch repositories and journals for
//! the code tests ([`code`]), a project driven by `loopwatch run
//! --headless` with scripted agents ([`engine`]) and its review stage
//! ([`review`]), and the examples of the shipped role files
//! ([`role_files`]); SSH keys and allowed signers ([`ssh`]). A test crate declares `mod support;`; a few include
//! one self-contained file of it by `#[path]`.

// Each test crate uses its own subset.
#![allow(dead_code)]

pub mod clis;
pub mod code;
pub mod engine;
pub mod git;
pub mod hardening;
pub mod headless;
pub mod model_server;
pub mod pty;
pub mod review;
pub mod role_files;
pub mod ssh;
pub mod tmux;
pub mod worktree;

// In its self-contained file, for the crates that include only that file;
// each test crate uses its own subset.
#[allow(unused_imports)]
pub use worktree::assert_has;

use std::path::{Path, PathBuf};
use std::process::Output;
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

/// Asserts that `out` exited `code` with `words` in its stderr; returns
/// the stderr.
#[track_caller]
pub fn assert_failed(out: &Output, code: i32, words: &str) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "{stderr}");
    assert!(stderr.contains(words), "{words:?} not in: {stderr}");
    stderr
}

/// The path of `tests/fixtures/<rel>`.
pub fn fixture_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// The bytes of `tests/fixtures/<rel>` (the test fails naming the file
/// when it cannot be read).
pub fn fixture(rel: &str) -> Vec<u8> {
    let p = fixture_path(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}
