//! The red tests handed to a developer, run again after its dispatch, one
//! `verify.green` each:
//! - `missing`: the test file is gone, or the runner ran no test by its name;
//! - `weakened`: since verify-by-test kept it (`verify.summary.tree`), its
//!   file lost an assertion or gained a skip (floor-guard's `ASSERT_DROP`
//!   and `SKIP`, a `floor-guard: allow` waiver notwithstanding: the
//!   developer was told not to weaken it), or the runner skipped it;
//! - `green`: its report shows it ran once and passed, and its log proves it;
//! - `red`: anything else (it fails, no longer builds, runs out of time,
//!   cannot be told from a namesake).
//!
//! Each run is the same as verify-by-test's (alone, under the build lock,
//! in its own process group, judged by [`super::judge`]) into
//! `.pipeline/green-<i>-<finding>.test.log`, its report beside it;
//! `step_timeout` bounds the whole recheck.

use std::time::Instant;

use tokio::sync::watch;

use super::judge::{self, RunEnd, TestRun};
use super::runner;
use super::tree::Tree;
use crate::checks::floor_guard;
use crate::code::TreeId;
use crate::engine::EngineError;
use crate::engine::config::VerifyByTestConfig;
use crate::engine::dispatch::Settings;
use crate::model::event::{GreenResult, VerifyGreen};
use crate::model::rules::green;
use crate::model::state::State;
use crate::model::types::RedTest;
use crate::recorder::Recorder;

/// The red tests of an earlier iteration, run again after the developer's work.
#[derive(Debug, Clone)]
pub struct Recheck<'a> {
    /// The run's dispatch settings.
    pub settings: &'a Settings,
    /// `[verify_by_test]` (its `step_timeout` bounds the recheck).
    pub config: &'a VerifyByTestConfig,
    /// The iteration whose developer dispatch just succeeded.
    pub iteration: u32,
}

/// Reruns each red test handed to the developer of `iteration` and records
/// one `verify.green` per test. `Ok(Some(code))` when a stop was asked for
/// (nothing is recorded then: the recheck is done again on resume).
pub async fn recheck(
    rec: &Recorder,
    job: Recheck<'_>,
    stop: &mut watch::Receiver<Option<i32>>,
) -> Result<Option<i32>, EngineError> {
    let deadline = Instant::now() + job.config.step_timeout;
    let pipeline = rec.pipeline().clone();
    let state = crate::journal::snapshot(&pipeline)?
        .map(|s| s.state)
        .unwrap_or_default();
    let i = job.iteration;
    let done: Vec<&str> = state
        .iteration(i)
        .map(|it| it.greens.iter().map(|g| g.test_ref.as_str()).collect())
        .unwrap_or_default();
    let reds: Vec<RedTest> = green::handed_over(&state, i)
        .into_iter()
        .filter(|r| !done.contains(&r.test_ref.as_str()))
        .collect();
    if reds.is_empty() {
        return Ok(None);
    }
    let worktree = pipeline.worktree().to_path_buf();
    let now = Tree::take(&worktree, pipeline.dir());
    let runner = runner::detect(&job.settings.run.test);
    let mut greens = Vec::new();
    for red in &reds {
        let mut g = VerifyGreen {
            iteration: i,
            finding: red.issue.clone(),
            test_ref: red.test_ref.clone(),
            result: GreenResult::Red,
            log: String::new(),
            note: None,
            extra: Default::default(),
        };
        let mut set = |result, note: String| {
            g.result = result;
            g.note = Some(note).filter(|n| !n.is_empty());
        };
        if !worktree.join(&red.file).is_file() {
            set(
                GreenResult::Missing,
                format!("the test file {} is gone", red.file),
            );
            greens.push(g);
            continue;
        }
        match (&now, kept_tree(&state, i, &red.test_ref)) {
            (Ok(now), Some(then)) => match weakened(&now.recorded(then), now, &red.file) {
                Ok(Some(why)) => {
                    set(GreenResult::Weakened, why);
                    greens.push(g);
                    continue;
                }
                Ok(None) => {}
                Err(e) => tracing::warn!("no weakening check of {}: {e}", red.test_ref),
            },
            (Err(e), _) => tracing::warn!("no weakening check of {}: {e}", red.test_ref),
            (Ok(_), None) => {}
        }
        let log = format!("green-{i}-{}.test.log", safe(&red.issue));
        let log_path = pipeline.dir().join(&log);
        let inv = match judge::command(job.settings, &runner, &red.file, &red.test_ref, &log_path) {
            Ok(inv) => inv,
            Err(why) => {
                set(GreenResult::Red, format!("cannot be run alone: {why}"));
                greens.push(g);
                continue;
            }
        };
        let run = TestRun {
            set: job.settings,
            log: &log_path,
            deadline,
            tag: format!("recheck-{i}"),
            test_ref: &red.test_ref,
        };
        let end = judge::run_one(&run, &inv, stop).await;
        let (result, note) = match end {
            Ok(RunEnd::Stopped(code)) => {
                put_back(&now);
                return Ok(Some(code));
            }
            Ok(RunEnd::Judged(verdict)) => {
                g.log = log.clone();
                judge::green_of(verdict)
            }
            Ok(RunEnd::TimedOut { .. }) => {
                g.log = log.clone();
                (
                    GreenResult::Red,
                    "did not finish before the recheck's step_timeout".to_string(),
                )
            }
            Ok(RunEnd::NotStarted(why)) => (GreenResult::Red, why),
            Err(e) => (GreenResult::Red, format!("not run: {e}")),
        };
        set(result, note);
        greens.push(g);
    }
    // The same invariant as verify-by-test's: a rerun changes nothing.
    let violations = put_back(&now);
    if !violations.is_empty() {
        rec.note(format!(
            "verify-by-test recheck of iteration {i}: cleanup invariant violated: {} (put back)",
            violations.join(", ")
        ))?;
    }
    rec.verify_green(greens)?;
    Ok(None)
}

/// Puts the worktree back to `before` (what it was when the reruns
/// started) and returns what had changed: nothing, when the tests only ran.
fn put_back(before: &Result<Tree, super::tree::TreeError>) -> Vec<String> {
    match before {
        Ok(t) => super::cleanup::cleanup_changes(t)
            .into_iter()
            .map(|r| r.unwrap_or_else(|e| e))
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// The snapshot verify-by-test recorded with the red test (the latest
/// iteration before `iteration` whose summary kept it).
fn kept_tree(s: &State, iteration: u32, test_ref: &str) -> Option<TreeId> {
    s.review_iterations
        .iter()
        .rev()
        .filter(|it| it.iteration < iteration)
        .filter_map(|it| it.verify_by_test.as_ref())
        .find(|v| v.red_tests.iter().any(|r| r.test_ref == test_ref))
        .and_then(|v| v.tree.as_deref())
        .and_then(TreeId::parse)
}

/// Why the test file was weakened from `then` to `now`, if it was.
fn weakened(then: &Tree, now: &Tree, file: &str) -> Result<Option<String>, super::tree::TreeError> {
    let path = then.to_top(file);
    let changes: Vec<_> = then
        .changes(now, 0)?
        .into_iter()
        .filter(|f| f.path == path)
        .collect();
    if changes.is_empty() {
        return Ok(None);
    }
    let text = crate::code::diff_text(&changes);
    let found: Vec<String> = floor_guard::classify(&text, &[])
        .into_iter()
        .filter(|f| f.kind == "ASSERT_DROP" || f.kind == "SKIP")
        .map(|f| {
            let waived = if f.waived {
                " (waived, which a red test may not be)"
            } else {
                ""
            };
            format!("{} {}:{} {}{waived}", f.kind, f.path, f.line, f.snippet)
        })
        .collect();
    Ok((!found.is_empty()).then(|| {
        format!(
            "weakened since verify-by-test kept it: {}",
            found.join("; ")
        )
    }))
}

/// A finding's id as part of a file name: at most 64 characters, each
/// one that is not `[A-Za-z0-9_-]` replaced by `_`.
pub(super) fn safe(id: &str) -> String {
    id.chars()
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
