//! Verify-by-test: one dispatch writes a repro test per accepted blocking
//! finding, loopwatch runs each test alone and judges it from its log, and
//! the red tests handed to the developer are run again after its work.
//!
//! The step, for iteration `i`:
//! 1. the first `max_findings` accepted blocking findings of the triage
//!    file are handed to `[agents.verify-by-test]` in ONE dispatch (the
//!    rest are `cap-exceeded`); the worktree is snapshotted first;
//! 2. each answered test is run alone ([`runner`], under the
//!    build lock, [`exec`]) into `.pipeline/verify-<i>-<finding>.test.log`;
//! 3. a test the log shows failing is `confirmed`, one it shows passing
//!    `not-reproduced` (the evidence gate proves it again in `triage
//!    apply`), anything else `inconclusive`, with why;
//! 4. every file the agent changed is put back but the confirmed tests'
//!    files, and the worktree is checked to hold no other change
//!    (`verify.summary.cleanupViolations` and a note otherwise);
//! 5. `triage apply` updates the triage file, which is recorded again
//!    with each `verify.result` and the `verify.summary`.
//!
//! `step_timeout` bounds the dispatch and the test runs together: past it
//! the agent or the test is stopped (its whole process group), what was
//! not judged stays accepted as `inconclusive`, and `timedOut` plus a
//! `verify-by-test-timeout` note are recorded. The step's own failures are
//! recorded and never stop the loop; only a stop asked for does (the
//! worktree is put back first, and the step is done again on resume), or a
//! usage limit the agent answered: the worktree is put back, nothing is
//! recorded, and the step is done again once the engine waited the limit
//! out or a person chose retry.

pub mod answer;
pub mod cleanup;
pub mod exec;
pub mod input;
pub mod invocation;
pub mod judge;
pub mod recheck;
pub mod runner;
pub mod tree;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use self::answer::Repro;
use self::tree::Tree;
use crate::checks::triage as triage_apply;
use crate::engine::EngineError;
use crate::engine::config::{AgentConfig, VerifyByTestConfig};
use crate::engine::dispatch::{self, DispatchError, Settings};
use crate::model::event::VerifySummary;
use crate::model::triage::{
    AttemptResult, Triage, TriageFinding, TriageSeverity, VerificationEntry, VerificationReport,
};
use crate::recorder::Recorder;

pub use self::recheck::{Recheck, recheck};

/// One iteration's verify-by-test step.
#[derive(Debug, Clone)]
pub struct Job<'a> {
    /// The run's dispatch settings.
    pub settings: &'a Settings,
    /// `[agents.verify-by-test]`.
    pub agent: &'a AgentConfig,
    /// `[verify_by_test]`.
    pub config: &'a VerifyByTestConfig,
    /// The iteration whose triage is tested.
    pub iteration: u32,
    /// The iteration's recorded triage file (`.pipeline/triage-<i>.json`).
    pub triage_file: PathBuf,
    /// The dispatch number the agent gets.
    pub dispatch: u32,
}

/// What the step found out, recorded at its end.
#[derive(Debug, Default)]
struct Findings {
    entries: Vec<VerificationEntry>,
    normalized: Vec<String>,
    notes: Vec<String>,
    violations: Vec<String>,
    timed_out: bool,
    tokens: (Option<u64>, Option<u64>),
    tree: Option<String>,
}

/// Runs the step: the dispatch, each test alone, the results, `triage
/// apply`, the cleanup check and `verify.summary`. `Ok(Some(code))` when a
/// stop was asked for; `Ok(None)` with nothing recorded when the agent
/// answered a usage limit.
pub async fn run(
    rec: &Recorder,
    job: Job<'_>,
    stop: &mut watch::Receiver<Option<i32>>,
) -> Result<Option<i32>, EngineError> {
    let started = Instant::now();
    let deadline = started + job.config.step_timeout;
    let pipeline = rec.pipeline().clone();
    let triage_path = if job.triage_file.is_relative() && !job.triage_file.exists() {
        pipeline.dir().join(&job.triage_file)
    } else {
        job.triage_file.clone()
    };
    let mut out = Findings::default();
    let triage = match read_triage(&triage_path) {
        Ok(t) => t,
        Err(why) => {
            out.notes.push(format!(
                "verify-by-test of iteration {}: {why}; nothing was tested",
                job.iteration
            ));
            return finish(rec, &job, &triage_path, out, started).await;
        }
    };
    let cap = usize::try_from(job.config.max_findings).unwrap_or(usize::MAX);
    let attempted: Vec<TriageFinding> = triage
        .accepted
        .iter()
        .filter(|f| f.severity == TriageSeverity::Blocking)
        .take(cap)
        .cloned()
        .collect();
    if attempted.is_empty() {
        return finish(rec, &job, &triage_path, out, started).await;
    }
    let worktree = pipeline.worktree().to_path_buf();
    let before = match Tree::take(&worktree, pipeline.dir()) {
        Ok(t) => t,
        Err(e) => {
            // Without a snapshot nothing the agent writes could be put back.
            let why =
                format!("not run: {e} (verify-by-test puts the worktree back from a snapshot)");
            out.entries = attempted
                .iter()
                .map(|f| inconclusive(f, None, &why))
                .collect();
            return finish(rec, &job, &triage_path, out, started).await;
        }
    };
    let marker = pipeline
        .dir()
        .join(format!("verify-{}.before", job.iteration));
    let asked: Vec<String> = attempted.iter().map(|f| f.id.clone()).collect();
    let stray = earlier_repro_files(&pipeline, job.iteration, &asked);
    let (note, removed) = interrupted_before(&before, &marker, &stray);
    out.notes.extend(note);
    // The snapshot the step puts the worktree back to has no stray test.
    let before = match removed {
        true => Tree::take(&worktree, pipeline.dir()).unwrap_or(before),
        false => before,
    };
    if let Err(e) = crate::util::replace_atomically(&marker, before.id.as_str().as_bytes()) {
        tracing::warn!("cannot write {}: {e}", marker.display());
    }
    let runner = runner::detect(&job.settings.run.test);
    let inputs = self::input::text(
        &worktree,
        &job.settings.run.diff,
        &job.settings.run.test,
        runner.as_ref().map_err(ToString::to_string),
        &attempted,
        Some(&before.id),
    );
    let mut agent = job.agent.clone();
    agent.timeout = agent
        .timeout
        .min(deadline.saturating_duration_since(Instant::now()));
    let djob = dispatch::Job {
        agent: &agent,
        iteration: job.iteration,
        gate: None,
        inputs,
        dispatch: job.dispatch,
    };
    let answered = match dispatch::dispatch(job.settings, djob, stop).await {
        Ok(d) if d.finished.interrupted => {
            let code = stop.borrow().unwrap_or(130);
            stopped(&before, &marker);
            return Ok(Some(code));
        }
        Ok(d) if d.answer.limited.is_some() => {
            stopped(&before, &marker);
            return Ok(None);
        }
        Ok(d) => {
            out.tokens = (d.finished.tokens_in, d.finished.tokens_out);
            match d.finished.failure() {
                None => answer::read(&d.answer.text, &ids(&attempted)),
                Some(_)
                    if d.finished.timed_out
                        && Instant::now() + Duration::from_millis(50) >= deadline =>
                {
                    out.timed_out = true;
                    Err(format!(
                        "not run: the step's {} s ran out while the agent wrote the tests",
                        job.config.step_timeout.as_secs()
                    ))
                }
                Some(why) => Err(format!("not run: the verify-by-test agent failed ({why})")),
            }
        }
        Err(DispatchError::Journal(e)) => return Err(e.into()),
        Err(e) => Err(format!(
            "not run: the verify-by-test agent could not be dispatched ({e})"
        )),
    };
    let answered = match answered {
        Ok(a) => a,
        Err(why) => {
            out.entries = attempted
                .iter()
                .map(|f| inconclusive(f, None, &why))
                .collect();
            out.violations = cleanup::cleanup(&before, &BTreeSet::new(), &mut out.tree);
            return finish(rec, &job, &triage_path, out, started).await;
        }
    };
    out.normalized = answered.normalized.clone();
    out.notes.extend(
        answered
            .ignored
            .iter()
            .map(|w| format!("verify-by-test answer: {w}")),
    );
    let tampered = cleanup::isolate(&before, &answered, &mut out.notes);
    let mut names = LogNames::default();
    for f in &attempted {
        let repro = match answered.by_finding.get(&f.id) {
            Some(Ok(r)) if tampered.contains_key(&before.to_top(&r.file)) => {
                let why = &tampered[&before.to_top(&r.file)];
                out.entries.push(inconclusive(f, Some(r), why));
                continue;
            }
            Some(Ok(r)) => r.clone(),
            Some(Err(why)) => {
                out.entries.push(inconclusive(f, None, why));
                continue;
            }
            None => {
                out.entries.push(inconclusive(
                    f,
                    None,
                    "the agent wrote no repro test for it",
                ));
                continue;
            }
        };
        if out.timed_out {
            out.entries.push(inconclusive(
                f,
                Some(&repro),
                "not run: the step ran out of time",
            ));
            continue;
        }
        let log = names.log(job.iteration, &f.id);
        let judged = judge::verify_test(
            job.settings,
            &runner,
            &repro,
            &pipeline.dir().join(&log),
            deadline,
            stop,
            &f.id,
        )
        .await;
        let (result, note) = match judged {
            judge::Judged::Stopped(code) => {
                stopped(&before, &marker);
                return Ok(Some(code));
            }
            judge::Judged::OutOfTime(note) => {
                out.timed_out = true;
                (AttemptResult::Inconclusive, note)
            }
            judge::Judged::Done(r, note) => (r, note),
        };
        out.entries.push(VerificationEntry {
            finding: f.id.clone(),
            result,
            test_ref: repro.test_ref.clone(),
            file: repro.file.clone(),
            log,
            note,
        });
    }
    let keep: BTreeSet<String> = out
        .entries
        .iter()
        .filter(|e| e.result == AttemptResult::Confirmed)
        .map(|e| before.to_top(&e.file))
        .collect();
    let shared: Vec<String> = out
        .entries
        .iter()
        .filter(|e| e.result != AttemptResult::Confirmed && keep.contains(&before.to_top(&e.file)))
        .map(|e| format!("{} ({})", e.file, e.finding))
        .collect();
    if !shared.is_empty() {
        out.notes.push(format!(
            "verify-by-test cleanup: kept {} although it also holds a test that did not confirm its finding: the file holds a confirmed repro test too",
            shared.join(", ")
        ));
    }
    out.violations = cleanup::cleanup(&before, &keep, &mut out.tree);
    finish(rec, &job, &triage_path, out, started).await
}

fn ids(findings: &[TriageFinding]) -> Vec<String> {
    findings.iter().map(|f| f.id.clone()).collect()
}

fn inconclusive(f: &TriageFinding, repro: Option<&Repro>, why: &str) -> VerificationEntry {
    VerificationEntry {
        finding: f.id.clone(),
        result: AttemptResult::Inconclusive,
        test_ref: repro.map(|r| r.test_ref.clone()).unwrap_or_default(),
        file: repro.map(|r| r.file.clone()).unwrap_or_default(),
        log: String::new(),
        note: why.to_string(),
    }
}

/// `verify-<i>-<finding>.test.log`, the finding's id made a safe file
/// name (and told apart when two ids make the same one).
#[derive(Default)]
struct LogNames(BTreeSet<String>);

impl LogNames {
    fn log(&mut self, iteration: u32, finding: &str) -> String {
        let safe = self::recheck::safe(finding);
        let mut name = format!("verify-{iteration}-{safe}.test.log");
        let mut n = 2;
        while !self.0.insert(name.clone()) {
            name = format!("verify-{iteration}-{safe}-{n}.test.log");
            n += 1;
        }
        name
    }
}

/// A stop: the worktree put back to `before`; once it is, no cleanup is
/// left for a resumed step to report.
fn stopped(before: &Tree, marker: &Path) {
    if cleanup::put_back(before, &BTreeSet::new()).is_empty() {
        let _ = std::fs::remove_file(marker);
    }
}

/// The repro test files the verify-by-test agent of an earlier run of the
/// step named in its saved answer (top-level relative paths as the answer
/// gives them, worktree-relative).
fn earlier_repro_files(
    pipeline: &crate::journal::Pipeline,
    iteration: u32,
    asked: &[String],
) -> BTreeSet<String> {
    let Ok(Some(snap)) = crate::journal::snapshot(pipeline) else {
        return BTreeSet::new();
    };
    snap.state
        .agents
        .iter()
        .rev()
        .filter(|a| {
            a.started.role == crate::model::event::AgentRole::VerifyByTest
                && a.started.iteration == iteration
        })
        .find_map(|a| a.finished.as_ref())
        .map(|f| dispatch::saved_answer(pipeline, f))
        .and_then(|raw| answer::read(&raw, asked).ok())
        .map(|a| {
            a.by_finding
                .values()
                .filter_map(|r| r.as_ref().ok())
                .map(|r| r.file.clone())
                .collect()
        })
        .unwrap_or_default()
}

/// When an earlier run of this step died before its cleanup
/// (`verify-<i>.before` names its snapshot): the repro tests it left that
/// were never confirmed (the files its agent named, or files it created
/// under a test folder when it named none) are put back from that
/// snapshot; every other file changed since is named in a note and left as
/// it is: a person may have changed it since, and only they can tell.
fn interrupted_before(
    now: &Tree,
    marker: &Path,
    named: &BTreeSet<String>,
) -> (Option<String>, bool) {
    let Some(then) = std::fs::read_to_string(marker)
        .ok()
        .and_then(|id| crate::code::TreeId::parse(id.trim()))
        .map(|id| now.recorded(id))
    else {
        return (None, false);
    };
    let Ok(changed) = then.changes(now, 0) else {
        return (None, false);
    };
    let named: BTreeSet<String> = named.iter().map(|f| then.to_top(f)).collect();
    let stray = |f: &crate::code::FileDiff| {
        named.contains(&f.path)
            || (named.is_empty()
                && f.status == crate::code::FileStatus::Added
                && f.path
                    .split('/')
                    .any(|c| c.contains("test") || c.contains("spec")))
    };
    let mut removed = Vec::new();
    let mut list = Vec::new();
    for f in &changed {
        if stray(f) && then.restore(&f.path).is_ok() {
            removed.push(format!("{} {}", f.path, self::tree::status_word(f)));
        } else {
            list.push(format!("{} {}", f.path, self::tree::status_word(f)));
        }
    }
    let iteration = marker
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix("verify-"))
        .and_then(|n| n.strip_suffix(".before"))
        .unwrap_or("?");
    let mut text = format!(
        "verify-by-test of iteration {iteration}: an earlier run of the step stopped before its cleanup"
    );
    if !removed.is_empty() {
        text.push_str(&format!(
            "; its unconfirmed repro tests were put back from its snapshot: {}",
            removed.join(", ")
        ));
    }
    text.push_str(&format!(
        "; changed since its snapshot and left as they are: {}",
        if list.is_empty() {
            "nothing".to_string()
        } else {
            list.join(", ")
        }
    ));
    (Some(text), !removed.is_empty())
}

/// `triage apply` with the entries, then the events: the notes, each
/// `verify.result`, `verify.summary`, and the triage file recorded again.
async fn finish(
    rec: &Recorder,
    job: &Job<'_>,
    triage_path: &Path,
    mut out: Findings,
    started: Instant,
) -> Result<Option<i32>, EngineError> {
    let i = job.iteration;
    let pipeline = rec.pipeline();
    // The step ends here whatever happens next: no cleanup is left undone.
    let _ = std::fs::remove_file(pipeline.dir().join(format!("verify-{i}.before")));
    let report = VerificationReport {
        results: out.entries.clone(),
        max_findings: job.config.max_findings,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        timed_out: out.timed_out,
        tokens_in: out.tokens.0,
        tokens_out: out.tokens.1,
    };
    if out.timed_out {
        out.notes.push(format!(
            "verify-by-test-timeout: iteration {i}'s step ran past its step_timeout of {} s; the agent and its tests were stopped, the findings not judged keep their judgement",
            job.config.step_timeout.as_secs()
        ));
    }
    if !out.violations.is_empty() {
        out.notes.push(format!(
            "verify-by-test cleanup invariant violated in iteration {i}: {}",
            out.violations.join("; ")
        ));
    }
    if let Some(tree) = &out.tree {
        keep_tree(rec, i, tree);
    }
    let report_path = pipeline.dir().join(format!("verify-{i}.verification.json"));
    let applied = serde_json::to_vec_pretty(&report)
        .map_err(|e| e.to_string())
        .and_then(|bytes| {
            crate::util::replace_atomically(&report_path, &bytes)
                .map_err(|e| format!("cannot write {}: {e}", report_path.display()))
        })
        .and_then(|()| {
            triage_apply::apply_files(triage_path, &report_path, Some(pipeline.dir()))
                .map_err(|e| e.to_string())
        });
    for n in out.notes.drain(..) {
        rec.note(n)?;
    }
    let extend = |mut s: VerifySummary, out: &Findings| {
        s.normalized.clone_from(&out.normalized);
        s.cleanup_violations.clone_from(&out.violations);
        s.tree.clone_from(&out.tree);
        s
    };
    match applied {
        Ok(o) => {
            let summary = extend(o.summary, &out);
            rec.verify(o.results, Some(summary))?;
            let (counts, buckets) = o.triage.buckets();
            let file = triage_path.strip_prefix(pipeline.dir()).map_or_else(
                |_| triage_path.display().to_string(),
                |p| p.display().to_string(),
            );
            rec.triage(i, file, counts, buckets)?;
        }
        Err(why) => {
            rec.note(format!(
                "verify-by-test of iteration {i}: triage apply {} failed: {why}",
                triage_path.display()
            ))?;
            let summary = VerifySummary {
                iteration: i,
                duration_ms: report.duration_ms,
                tokens_in: report.tokens_in,
                tokens_out: report.tokens_out,
                timed_out: report.timed_out,
                ..VerifySummary::default()
            };
            rec.verify(Vec::new(), Some(extend(summary, &out)))?;
        }
    }
    Ok(None)
}

/// Keeps the snapshot the red tests are later compared with reachable
/// (`refs/loopwatch/<run>/iteration-<i>-verify-by-test`); a failure is
/// logged, the tree stays readable until git prunes it.
fn keep_tree(rec: &Recorder, iteration: u32, tree: &str) {
    let Some(id) = crate::code::TreeId::parse(tree) else {
        return;
    };
    let Ok(Some(snap)) = crate::journal::snapshot(rec.pipeline()) else {
        return;
    };
    let Some(run) = snap.state.run else {
        return;
    };
    let label = format!("iteration-{iteration}-verify-by-test");
    if let Err(e) = crate::code::keep(rec.pipeline().worktree(), &run.id, &label, &id) {
        tracing::warn!("snapshot {tree} not kept under refs/loopwatch: {e}");
    }
}

fn read_triage(path: &Path) -> Result<Triage, String> {
    let bytes = crate::util::read_regular(path, crate::util::MAX_TEXT_BYTES)
        .map_err(|e| format!("cannot read the triage file {}: {e}", path.display()))?;
    Triage::parse(&path.display().to_string(), &bytes)
}
