//! One agent dispatch, bracketed by the journal: the input is written
//! beside the log, the process is started, `agent.started` names its pid,
//! its output is read as it comes, and `agent.finished` (with any human
//! gate the rules open for it, in the same append) is written once it was
//! reaped.

use std::path::PathBuf;
use std::time::Duration;

use futures_util::future::BoxFuture;
use sha2::{Digest, Sha256};
use tokio::sync::watch;

use super::adapter::{self, Answer, Request};
use super::config::AgentConfig;
use crate::journal::{JournalError, Pipeline, TAIL_BYTES};
use crate::model::event::{
    AgentFinished, AgentLimited, AgentRole, AgentStarted, RunInfo, SignalFrom,
};
use crate::model::*;
use crate::process::{self, LogFile, Sink};
pub use crate::recorder::dispatch::{Record, record};
use crate::recorder::evidence;

/// Most stdout bytes an answer may have (the rest makes the answer unusable).
pub const STDOUT_LIMIT: usize = 16 * 1024 * 1024;

/// The end of an agent's stderr kept in memory, for its last words.
const STDERR_TAIL: usize = 8 * 1024;

/// Lines of an agent's stderr kept as its last words.
const LAST_WORDS: usize = 5;

/// What one dispatch serves.
#[derive(Debug, Clone)]
pub struct Job<'a> {
    /// The agent.
    pub agent: &'a AgentConfig,
    /// Iteration served.
    pub iteration: u32,
    /// Gate and round served, when the agent judges one.
    pub gate: Option<(GateName, u32)>,
    /// The inputs the loop names.
    pub inputs: String,
    /// Its number in the run (one more than the last `agent.started`).
    pub dispatch: u32,
}

/// How a dispatch went.
#[derive(Debug, Clone)]
pub struct Dispatched {
    /// The recorded finish.
    pub finished: AgentFinished,
    /// What the adapter read from stdout.
    pub answer: Answer,
}

/// Fixed settings of every dispatch of a run.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The pipeline written to.
    pub pipeline: Pipeline,
    /// The run's TEST, CONTRACT and DIFF.
    pub run: RunInfo,
    /// SIGTERM → SIGKILL grace.
    pub grace: Duration,
    /// Bytes per agent log.
    pub log_limit: u64,
    /// The contract as judged, checked after every dispatch (`None`: the
    /// caller checks nothing, as a test of one step may).
    pub contract: Option<std::sync::Arc<std::sync::Mutex<super::contract::ContractWatch>>>,
    /// What the budget leaves each role, as the engine found it before
    /// the step (empty: no budget).
    pub left: BudgetLeft,
}

/// What `[budget]` leaves the dispatches of a step, per role.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BudgetLeft {
    /// Dollars left, per role under a dollar limit (handed to the CLIs
    /// that take a limit of their own).
    pub usd: std::collections::BTreeMap<AgentRole, f64>,
    /// Agent time left, per role under an agent-time limit: with `hard`,
    /// a dispatch is stopped there (its deadline).
    pub wall: std::collections::BTreeMap<AgentRole, Duration>,
    /// `[budget] hard`.
    pub hard: bool,
}

impl BudgetLeft {
    /// What `budget` leaves every role in state `s`.
    pub fn of(budget: &crate::model::budget::Budget, s: &State) -> BudgetLeft {
        let mut left = BudgetLeft {
            hard: budget.hard,
            ..BudgetLeft::default()
        };
        for role in AgentRole::ALL {
            if let Some(u) = budget.usd_left(s, role) {
                left.usd.insert(role, u);
            }
            if let Some(w) = budget.wall_left(s, role) {
                left.wall.insert(role, w);
            }
        }
        left
    }
}

/// Runs one dispatch to its end (or the stop) and records it.
pub async fn dispatch(
    set: &Settings,
    job: Job<'_>,
    stop: &mut watch::Receiver<Option<i32>>,
) -> Result<Dispatched, DispatchError> {
    dispatch_env(set, job, &[], stop).await
}

/// The step a review dispatch serves (`LW_STEP`).
pub const STEP_ENV: &str = "LW_STEP";
/// The finding a finding-verifier lane serves (`LW_FINDING_ID`).
pub const FINDING_ENV: &str = "LW_FINDING_ID";

/// [`dispatch`] with more `LW_*` variables for the agent (`LW_STEP`,
/// `LW_FINDING_ID`); those two are also kept on `agent.started` as `step`
/// and `finding`, so a person sees which lane a dispatch served.
pub async fn dispatch_env(
    set: &Settings,
    job: Job<'_>,
    extra_env: &[(&str, String)],
    stop: &mut watch::Receiver<Option<i32>>,
) -> Result<Dispatched, DispatchError> {
    let with = With {
        env: extra_env,
        ..With::default()
    };
    dispatch_with(set, job, with, stop).await
}

/// What finishes a dispatch's own finish: the events written after it,
/// given the answer and the finish (empty for an interrupted dispatch).
pub type AfterFinish<'a> = &'a (dyn Fn(&Answer, &AgentFinished) -> Vec<EventBody> + Sync);

/// More for one dispatch: variables for the agent, and events written in
/// the same appends as its `agent.started` and its `agent.finished` (a
/// finding lane's transitions: one fsync'd append fewer each).
#[derive(Default)]
pub struct With<'a> {
    /// More `LW_*` variables (see [`dispatch_env`]).
    pub env: &'a [(&'a str, String)],
    /// Written just before `agent.started`, in its append.
    pub with_start: Vec<EventBody>,
    /// Written after `agent.finished` (and its human gates), in its append.
    pub after_finish: Option<AfterFinish<'a>>,
    /// Where the appends go (`None`: each written on its own, on this
    /// thread).
    pub commit: Option<Committer<'a>>,
    /// A concurrency slot, given back as soon as the agent was reaped and
    /// its answer read (its finish is recorded after): the next lane's
    /// agent starts while this one's finish is being made durable. An
    /// answer with a usage limit closes the slots first.
    pub slot: Option<tokio::sync::OwnedSemaphorePermit>,
    /// The start order of the dispatches running beside this one, its
    /// guard held until this one's start is recorded (see [`Starts`]).
    pub starting: Option<Starting>,
}

/// Orders the starts of dispatches that run together (the finding
/// verifier's lanes) with the usage limits their answers bring: a start is
/// recorded holding a read guard, taken after the look at the slots; an
/// answer with a usage limit closes the slots and records its finish
/// holding the write guard. So every start is recorded before the limit
/// or never made: the first `agent.started` after an `agent.limited` is
/// the step's answer to the limit.
#[derive(Debug, Clone, Default)]
pub struct Starts(std::sync::Arc<tokio::sync::RwLock<()>>);

impl Starts {
    /// The guard a start holds from the look at the slots until it is
    /// recorded.
    pub async fn starting(&self) -> Starting {
        Starting {
            starts: self.clone(),
            guard: std::sync::Arc::clone(&self.0).read_owned().await,
        }
    }
}

/// A start under way in a [`Starts`] order.
#[derive(Debug)]
pub struct Starting {
    starts: Starts,
    guard: tokio::sync::OwnedRwLockReadGuard<()>,
}

/// [`dispatch`] with [`With`].
pub async fn dispatch_with(
    set: &Settings,
    job: Job<'_>,
    with: With<'_>,
    stop: &mut watch::Receiver<Option<i32>>,
) -> Result<Dispatched, DispatchError> {
    let extra_env = with.env;
    let slot = with.slot;
    let (starts, starting) = with.starting.map(|s| (s.starts, s.guard)).unzip();
    let role = job.agent.role;
    // The prompt file, else the role's embedded instructions (of its step).
    let step = extra_env
        .iter()
        .find(|(k, _)| *k == STEP_ENV)
        .map(|(_, v)| v.as_str());
    let instructions = super::roles::instructions(job.agent, step)
        .map_err(DispatchError::io(
            "read the prompt file",
            job.agent.prompt_file.clone().unwrap_or_default(),
        ))?
        .map(|i| i.text);
    let worktree = set.pipeline.worktree().to_path_buf();
    let n = job.dispatch;
    let agents_dir = set.pipeline.dir().join("agents");
    crate::util::pipeline_dir(&agents_dir).map_err(DispatchError::io("write into", &agents_dir))?;
    let stem = format!("{n:03}-{role}");
    // The instructions in a file of their own (a CLI reads its system
    // prompt from it: never argv), and the read-only roles' build folder.
    let instructions_file = match instructions.as_deref().filter(|i| !i.trim().is_empty()) {
        Some(text) => {
            let p = agents_dir.join(format!("{stem}.instructions"));
            write_file(p.clone(), text.as_bytes().to_vec()).await?;
            Some(std::path::absolute(&p).unwrap_or(p))
        }
        None => None,
    };
    let build_dir = adapter::needs_build_dir(job.agent).then(|| adapter::build_dir(&worktree));
    if let Some(d) = &build_dir {
        for f in adapter::build_folders(d) {
            std::fs::create_dir_all(&f).map_err(DispatchError::io("create", &f))?;
        }
    }
    let req = Request {
        agent: job.agent,
        instructions: instructions.as_deref(),
        instructions_file: instructions_file.as_deref(),
        inputs: &job.inputs,
        test: &set.run.test,
        worktree: &worktree,
        build_dir: build_dir.as_deref(),
        max_budget_usd: set.left.usd.get(&role).copied(),
    };
    let full = req.full_text();
    let invocation = adapter::invocation(&req);
    let input_path = agents_dir.join(format!("{stem}.input"));
    write_file(input_path.clone(), full.as_bytes().to_vec()).await?;
    let log_path = agents_dir.join(format!("{stem}.log"));
    let pipeline_dir =
        std::path::absolute(set.pipeline.dir()).unwrap_or(set.pipeline.dir().to_path_buf());
    let mut env: Vec<(String, String)> = vec![
        ("LW_ROLE".into(), role.as_str().into()),
        ("LW_CONTRACT".into(), set.run.contract.clone()),
        ("LW_DIFF".into(), set.run.diff.clone()),
        ("LW_TEST".into(), set.run.test.clone()),
        ("LW_ITERATION".into(), job.iteration.to_string()),
        ("LW_PIPELINE".into(), pipeline_dir.display().to_string()),
        (
            "LW_INPUT_FILE".into(),
            std::path::absolute(&input_path)
                .unwrap_or(input_path.clone())
                .display()
                .to_string(),
        ),
        ("LW_DISPATCH".into(), n.to_string()),
    ];
    // A generic agent may report its usage (and a usage limit) in a file.
    let usage_path = agents_dir.join(format!("{stem}.usage"));
    if job.agent.adapter == super::config::AdapterKind::Generic {
        env.push((
            USAGE_ENV.into(),
            std::path::absolute(&usage_path)
                .unwrap_or(usage_path.clone())
                .display()
                .to_string(),
        ));
    }
    env.extend(extra_env.iter().map(|(k, v)| ((*k).to_string(), v.clone())));
    env.extend(invocation.env.iter().cloned());
    let log = LogFile::create(&log_path, set.log_limit)
        .map_err(DispatchError::io("create the log", &log_path))?;
    let command = process::Command::new(&invocation.program, &worktree)
        .args(&invocation.args)
        .envs(env)
        .stdin(invocation.stdin)
        .deadline(deadline(job.agent.timeout, &set.left, role))
        .grace(set.grace)
        .stdout(Sink::capture(STDOUT_LIMIT).log(&log))
        .stderr(Sink::read().tail(STDERR_TAIL).log(&log))
        .on_behalf_of(process::tree::marker(set.pipeline.dir(), &n.to_string()));
    let mut started = AgentStarted {
        dispatch: n,
        role,
        iteration: job.iteration,
        gate: job.gate.map(|g| g.0),
        round: job.gate.map(|g| g.1),
        adapter: job.agent.adapter.as_str().into(),
        pid: 0,
        pgid: 0,
        input_sha256: format!("sha256:{:x}", Sha256::digest(full.as_bytes())),
        log: format!("agents/{stem}.log"),
        input: Some(format!("agents/{stem}.input")),
        extra: Default::default(),
    };
    for (k, field) in [(STEP_ENV, "step"), (FINDING_ENV, "finding")] {
        if let Some((_, v)) = extra_env.iter().find(|(name, _)| *name == k) {
            started
                .extra
                .insert(field.into(), serde_json::Value::from(v.clone()));
        }
    }
    // The spawn waits for the supervisor's word that the agent runs: on
    // the blocking pool, so lanes starting at once do not queue behind
    // each other on the engine's thread.
    // A read-only role's worktree and repository, to put back what it changes.
    let before = if adapter::may_edit(role) {
        None
    } else {
        let (wt, pd) = (worktree.clone(), set.pipeline.dir().to_path_buf());
        tokio::task::spawn_blocking(move || super::readonly::Before::take(&wt, &pd))
            .await
            .ok()
            .flatten()
    };
    let spawned = tokio::task::spawn_blocking(move || command.spawn())
        .await
        .unwrap_or_else(|e| {
            Err(process::SpawnError::Io {
                program: job.agent.command.clone(),
                source: std::io::Error::other(format!("the spawn did not finish: {e}")),
            })
        });
    let running = match spawned {
        Ok(r) => r,
        Err(e) => {
            log.note(&format!("[loopwatch: {e}]"));
            let finished = unanswered(&started, false, e.to_string());
            let answer = Answer::default();
            let mut bodies = with.with_start.clone();
            bodies.push(EventBody::from(started.clone()));
            let after = with
                .after_finish
                .map(|f| f(&answer, &finished))
                .unwrap_or_default();
            let r = Record {
                bodies,
                finish: Some((started, finished.clone())),
                after,
                log_tail: Vec::new(),
            };
            commit(set, with.commit, r).await?;
            return Ok(Dispatched { finished, answer });
        }
    };
    started.pid = running.pid();
    started.pgid = running.group();
    let mut bodies = with.with_start.clone();
    bodies.push(EventBody::from(started.clone()));
    let r = Record {
        bodies,
        ..Record::default()
    };
    commit(set, with.commit, r).await?;
    drop(starting);
    // The log stays the agent's own stream; how it ended is in `agent.finished`.
    let ended = running.finish(stop).await;
    // What the agent did to the contract's judged parts is put back.
    let tampered = match &set.contract {
        Some(watch) => match watch.lock() {
            Ok(mut w) => w.after_dispatch().unwrap_or_else(|e| vec![e]),
            Err(_) => Vec::new(),
        },
        None => Vec::new(),
    };
    // And what a read-only role changed anyway.
    let violations = match before {
        Some(b) => tokio::task::spawn_blocking(move || b.put_back())
            .await
            .unwrap_or_default(),
        None => Vec::new(),
    };
    let mut answer = adapter::answer(job.agent.adapter, &ended.stdout.head, &ended.stderr.tail);
    if ended.stdout.truncated {
        answer.error = Some(format!(
            "the agent printed more than {} MiB on stdout",
            STDOUT_LIMIT / (1024 * 1024)
        ));
    }
    if job.agent.adapter == super::config::AdapterKind::Generic {
        read_usage(set, usage_path, &mut answer).await;
    }
    // A usage limit closes the slots before this one is given back, once
    // the starts under way were recorded: no agent of the step starts
    // until the limit was waited out or a person decided.
    let limiting = match &starts {
        Some(s) if answer.limited.is_some() => {
            Some(std::sync::Arc::clone(&s.0).write_owned().await)
        }
        _ => None,
    };
    if let Some(s) = slot {
        if answer.limited.is_some() {
            s.semaphore().close();
        }
        drop(s);
    }
    if !tampered.is_empty() {
        answer.error = Some(format!(
            "changed the contract's judged parts (put back): {}",
            tampered.join("; ")
        ));
    }
    // The answer is kept before the finish is recorded: an engine that
    // stops between the two records the round from it instead of asking again.
    let answer_rel = format!("agents/{stem}.answer");
    let answer_path = set.pipeline.dir().join(&answer_rel);
    write_file(answer_path, answer.text.clone()).await?;
    if let Some(l) = &answer.limited
        && answer.error.is_none()
    {
        answer.error = Some(format!("usage limit reached: {}", l.message));
    }
    let finished = AgentFinished {
        dispatch: n,
        role,
        exit_code: ended.exit.code(),
        duration_ms: u64::try_from(ended.duration.as_millis()).unwrap_or(u64::MAX),
        timed_out: ended.timed_out(),
        interrupted: ended.stopped().is_some(),
        signal: ended.exit.signal(),
        signal_from: ended.exit.signal().map(|_| match ended.cause {
            Some(process::Cause::Deadline(_)) => SignalFrom::Deadline,
            Some(process::Cause::Stop(_)) => SignalFrom::Stop,
            None => SignalFrom::Outside,
        }),
        last_words: ended.stderr.last_lines(LAST_WORDS),
        leftovers: u32::try_from(ended.leftovers).unwrap_or(u32::MAX),
        tampered,
        violations,
        tokens_in: answer.tokens_in,
        tokens_out: answer.tokens_out,
        cost_usd: answer.cost_usd,
        error: answer.error.clone(),
        answer: Some(answer_rel),
        normalized: answer.normalized.clone(),
        extra: Default::default(),
    };
    let after = match with.after_finish {
        Some(f) if !finished.interrupted => f(&answer, &finished),
        _ => Vec::new(),
    };
    let log_tail = if finished.succeeded() || finished.interrupted {
        Vec::new()
    } else {
        read_log_tail(&set.pipeline, log_path).await
    };
    // What the CLI reported without failing (retries, reconnects, refused
    // tool calls) goes in the finish's append, before it.
    let mut notes: Vec<EventBody> = answer
        .notes
        .iter()
        .map(|t| EventBody::Note {
            text: format!("{role} #{n}: {t}"),
        })
        .collect();
    // A limit is written just before the finish: the fold reads the
    // dispatch as limited, not failed.
    if let Some(l) = answer.limited.as_ref().filter(|_| !finished.interrupted) {
        notes.push(EventBody::from(AgentLimited {
            dispatch: n,
            role,
            until: l.until.map(|t| t.to_string()),
            message: l.message.clone(),
            extra: Default::default(),
        }));
    }
    let r = Record {
        bodies: notes,
        finish: Some((started, finished.clone())),
        after,
        log_tail,
    };
    commit(set, with.commit, r).await?;
    drop(limiting);
    Ok(Dispatched { finished, answer })
}

/// The variable naming a generic agent's usage file.
pub const USAGE_ENV: &str = "LW_USAGE_FILE";

/// The most bytes of a usage file read.
const USAGE_LIMIT: u64 = 64 * 1024;

/// A dispatch's deadline: its timeout, or under a hard budget the agent
/// time its role has left, whichever comes first (at least a second).
fn deadline(timeout: Duration, left: &BudgetLeft, role: AgentRole) -> Duration {
    match left.wall.get(&role).filter(|_| left.hard) {
        Some(w) => timeout.min((*w).max(Duration::from_secs(1))),
        None => timeout,
    }
}

/// A generic agent's usage file, read as a hostile file (bounded, inside
/// the worktree); a file it did not write is no report, a bad one a note.
async fn read_usage(set: &Settings, path: PathBuf, answer: &mut Answer) {
    let pipeline = set.pipeline.clone();
    let p = path.clone();
    let read = tokio::task::spawn_blocking(move || {
        if std::fs::symlink_metadata(&p).is_err() {
            return None;
        }
        Some(crate::journal::read_tail(&pipeline, &p, USAGE_LIMIT).map_err(|e| e.to_string()))
    })
    .await
    .ok()
    .flatten();
    let problem = match read {
        None => return,
        Some(Err(e)) => e,
        Some(Ok(bytes)) if bytes.len() as u64 >= USAGE_LIMIT => {
            format!("larger than {USAGE_LIMIT} bytes")
        }
        Some(Ok(bytes)) => match adapter::limits::usage_file(&bytes, answer) {
            Ok(()) => return,
            Err(e) => e,
        },
    };
    answer.notes.push(format!(
        "the usage file {} was not read: {problem}",
        path.file_name().unwrap_or_default().to_string_lossy()
    ));
}

/// The end of a failed agent's log, read on the blocking pool (the log is
/// the agent's to write: it is read as a hostile file, its last 64 KiB).
async fn read_log_tail(pipeline: &Pipeline, log: PathBuf) -> Vec<String> {
    let pipeline = pipeline.clone();
    let read = tokio::task::spawn_blocking(move || {
        crate::journal::read_tail(&pipeline, &log, TAIL_BYTES)
            // Less than asked for: the log was read whole.
            .map(|raw| (raw.len() < TAIL_BYTES as usize, raw))
    })
    .await
    .map_err(|e| e.to_string())
    .and_then(|r| r.map_err(|e| e.to_string()));
    match read {
        Ok((whole, raw)) => evidence::log_tail(&raw, whole),
        Err(e) => vec![format!("(the log cannot be read: {e})")],
    }
}

/// Replaces `path` with `bytes` (atomically, fsync'd) on the blocking
/// pool: one dispatch's fsyncs do not hold up the others sharing the
/// engine's thread (the finding lanes).
async fn write_file(path: PathBuf, bytes: Vec<u8>) -> Result<(), DispatchError> {
    let target = path.clone();
    // Its folder is checked again each time: an agent may have replaced
    // `agents/` by a link since the last write.
    let write = move || {
        if let Some(dir) = target.parent() {
            crate::util::pipeline_dir(dir)?;
        }
        crate::util::replace_in_pipeline(&target, &bytes)
    };
    let done = tokio::task::spawn_blocking(write)
        .await
        .unwrap_or_else(|e| {
            Err(std::io::Error::other(format!(
                "the write did not finish: {e}"
            )))
        });
    done.map_err(DispatchError::io("write", path))
}

/// Where a dispatch's appends go when not straight to the journal: a
/// committer that may group them with other dispatches' appends (the
/// finding lanes' group commit). It resolves once the request is durable.
pub type Committer<'a> =
    &'a (dyn Fn(Record) -> BoxFuture<'static, Result<(), JournalError>> + Sync);

/// Appends `r` through the committer, or on its own.
async fn commit(set: &Settings, via: Option<Committer<'_>>, r: Record) -> Result<(), JournalError> {
    match via {
        Some(c) => c(r).await,
        None => r.write(&set.pipeline),
    }
}

/// The saved answer of a finished dispatch (at most [`STDOUT_LIMIT`] bytes).
pub fn saved_answer(pipeline: &Pipeline, f: &AgentFinished) -> Vec<u8> {
    use std::io::Read;
    let Some(rel) = &f.answer else {
        return Vec::new();
    };
    let Ok(path) = pipeline.resolve_recorded(rel) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Ok(file) = std::fs::File::open(path) {
        let _ = file.take(STDOUT_LIMIT as u64).read_to_end(&mut out);
    }
    out
}

/// Records a dispatch found started without a finish as interrupted.
pub fn record_interrupted(pipeline: &Pipeline, d: &AgentStarted) -> Result<(), JournalError> {
    let f = unanswered(
        d,
        true,
        "the engine stopped before the agent finished".into(),
    );
    record(pipeline, Vec::new(), Some((d, &f)))
}

/// The finish of a dispatch whose agent gave no answer: it never started,
/// or the engine stopped while it ran (`interrupted`).
fn unanswered(d: &AgentStarted, interrupted: bool, error: String) -> AgentFinished {
    AgentFinished::unanswered(d, interrupted, error)
}

/// Why a dispatch could not be run or recorded.
#[derive(Debug, thiserror::Error)]
pub enum DispatchError {
    /// A file could not be read or written.
    #[error("{op} {}: {source}", path.display())]
    Io {
        /// What was being done.
        op: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The journal refused or failed the append.
    #[error(transparent)]
    Journal(#[from] JournalError),
}

impl DispatchError {
    /// The [`DispatchError::Io`] of `op` on `path`, for `map_err`.
    pub fn io(op: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| DispatchError::Io { op, path, source }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_agents_log_is_read_as_a_hostile_file() {
        let d = tempfile::tempdir().unwrap();
        let p = Pipeline::at(d.path().join("wt/.pipeline"));
        std::fs::create_dir_all(p.dir().join("agents")).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let tail = |name: &str| rt.block_on(read_log_tail(&p, p.dir().join("agents").join(name)));
        std::fs::write(p.dir().join("agents/ok.log"), "one\ntwo\n").unwrap();
        assert_eq!(tail("ok.log"), ["  | one", "  | two"]);
        // Longer than the read of its end: the cut first line is left out.
        let long: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
        std::fs::write(p.dir().join("agents/long.log"), &long).unwrap();
        let shown = tail("long.log");
        assert_eq!(shown[0], "(the log's earlier lines are not shown)");
        assert_eq!(shown.last().map(String::as_str), Some("  | line 19999"));
        // An agent's log swapped for a link out of the worktree is not read.
        std::fs::write(d.path().join("secret"), "password\n").unwrap();
        std::os::unix::fs::symlink(d.path().join("secret"), p.dir().join("agents/link.log"))
            .unwrap();
        let refused = tail("link.log");
        assert_eq!(refused.len(), 1);
        assert!(
            refused[0].starts_with("(the log cannot be read: ") && !refused[0].contains("password"),
            "{refused:?}"
        );
        assert!(tail("missing.log")[0].starts_with("(the log cannot be read: "));
    }
}
