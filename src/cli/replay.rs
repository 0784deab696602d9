//! `loopwatch replay`, `diff` and `report`: a past run, explored and shared.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, ValueEnum};

use super::Globals;
use super::output::{say, say_json};
use crate::history::diff_iterations;
use crate::journal::{Pipeline, Snapshot, snapshot};
use crate::report::Report;

/// `replay`.
#[derive(Debug, Args)]
#[command(after_long_help = "\
Keys: ← / → one event, [ / ] start of the previous / next iteration, Home the
first event, End back to live (the whole journal), d what changed since the
previous iteration, q quit.
Decisions cannot be taken in replay.

Exit codes: 0 quit, 2 --at or --iteration out of the run's range (or no terminal),
3 no pipeline.")]
pub struct ReplayArgs {
    /// Worktree, .pipeline folder or export archive (opened read-only; default: found from here).
    pub path: Option<PathBuf>,
    /// Start at the event with this seq.
    #[arg(long, conflicts_with = "iteration")]
    pub at: Option<u64>,
    /// Start at the beginning of this iteration.
    #[arg(long)]
    pub iteration: Option<u32>,
}

/// `diff`.
#[derive(Debug, Args)]
#[command(after_long_help = "\
Prints what changed in the verdicts, then the code changes between the two
iterations' GATE 0 snapshots: the file list, then unified hunks (binary and
very large files summarised). --json adds `code`: [{path, status, hunks}].
Exit codes: 0 printed, 2 an iteration does not exist, 3 no pipeline.

JSON strings escape control, bidirectional and invisible characters as \\uXXXX.")]
pub struct DiffArgs {
    /// Worktree or .pipeline folder, then the two iterations: `[PATH] I J`.
    #[arg(num_args = 2..=3, required = true, value_name = "[PATH] I J")]
    pub args: Vec<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Markdown.
    Md,
    /// JSON.
    Json,
    /// One self-contained HTML file.
    Html,
}

/// `report`.
#[derive(Debug, Args)]
#[command(after_long_help = "\
Deferred findings are read from the triage files the journal names; a triage file that
cannot be read is named in the report (`unreadableTriage` in JSON) instead of being
skipped. JSON strings escape control, bidirectional and invisible characters as \\uXXXX.

Exit codes: 0 written, 2 the output file could not be written, 3 no pipeline.")]
pub struct ReportArgs {
    /// Worktree, .pipeline folder or export archive (opened read-only; default: found from here).
    pub path: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Md)]
    pub format: Format,
    /// Write to this file instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

fn pipeline_of(path: Option<&PathBuf>, globals: &Globals) -> anyhow::Result<Pipeline> {
    match path {
        Some(p) => Ok(Pipeline::from_user_path(p)),
        None => globals.pipeline_for_reading(),
    }
}

/// The pipeline to read: a folder as [`pipeline_of`] finds it, or an
/// export archive opened read-only into a private temporary folder (kept
/// as long as the returned archive is).
fn readable(
    path: Option<&PathBuf>,
    globals: &Globals,
) -> anyhow::Result<(Pipeline, Option<crate::audit::archive::Opened>)> {
    match path {
        Some(p) if crate::audit::archive::is_archive(p) => {
            let opened = crate::audit::archive::open(p)
                .with_context(|| format!("open the archive {}", p.display()))?;
            Ok((Pipeline::at(opened.pipeline.clone()), Some(opened)))
        }
        _ => Ok((pipeline_of(path, globals)?, None)),
    }
}

/// The pipeline read once; no journal nor state is "no pipeline" (exit 3).
fn read(pipeline: &Pipeline) -> anyhow::Result<Snapshot> {
    snapshot(pipeline)?.ok_or_else(|| pipeline.missing().into())
}

/// `--at` and `--iteration` must name a position the run has.
#[derive(Debug, thiserror::Error)]
pub enum RangeError {
    /// `--at` past the last event.
    #[error("--at {seq} is out of range: the journal's events are seq 1 to {last}")]
    Seq {
        /// Asked for.
        seq: u64,
        /// The last seq.
        last: u64,
    },
    /// `--iteration` the run does not have.
    #[error("--iteration {iteration} is out of range: the run has iterations 1 to {last}")]
    Iteration {
        /// Asked for.
        iteration: u32,
        /// The last iteration.
        last: u32,
    },
}

/// Runs `replay`.
pub fn replay(a: ReplayArgs, globals: &Globals) -> anyhow::Result<ExitCode> {
    let (pipeline, _archive) = readable(a.path.as_ref(), globals)?;
    let snap = read(&pipeline)?;
    if let Some(seq) = a.at {
        let last = snap.state.seq;
        if seq == 0 || seq > last {
            return Err(RangeError::Seq { seq, last }.into());
        }
    }
    if let Some(iteration) = a.iteration {
        let last = snap.state.iteration_number();
        if iteration == 0 || iteration > last {
            return Err(RangeError::Iteration { iteration, last }.into());
        }
    }
    drop(snap);
    let start = match (a.at, a.iteration) {
        (Some(seq), _) => crate::tui::ReplayStart::Seq(seq),
        (None, Some(i)) => crate::tui::ReplayStart::Iteration(i),
        (None, None) => crate::tui::ReplayStart::First,
    };
    crate::tui::run_replay(pipeline, start)
}

/// Runs `diff`.
pub fn diff(a: DiffArgs, globals: &Globals) -> anyhow::Result<ExitCode> {
    let (path, i, j) = match a.args.as_slice() {
        [i, j] => (None, i, j),
        [p, i, j] => (Some(PathBuf::from(p)), i, j),
        _ => anyhow::bail!("usage: loopwatch diff [PATH] I J"),
    };
    let i: u32 = i
        .parse()
        .with_context(|| format!("'{i}' is not an iteration number"))?;
    let j: u32 = j
        .parse()
        .with_context(|| format!("'{j}' is not an iteration number"))?;
    let pipeline = pipeline_of(path.as_ref(), globals)?;
    let snap = read(&pipeline)?;
    let Some(d) = diff_iterations(&snap.state, i, j) else {
        anyhow::bail!(
            "iteration {i} or {j} does not exist (the run has {})",
            snap.state.iteration_number()
        );
    };
    let code = crate::code::RunTrees::from_events(&snap.events).changes(pipeline.worktree(), i, j);
    if a.json {
        let mut v = serde_json::to_value(&d)?;
        code.add_to_json(&mut v);
        say_json(&v)?;
    } else {
        say(&(d.to_text() + &code.to_text(i, j)));
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `report`.
pub fn report(a: ReportArgs, globals: &Globals) -> anyhow::Result<ExitCode> {
    let (pipeline, _archive) = readable(a.path.as_ref(), globals)?;
    let snap = read(&pipeline)?;
    let r = Report::build(&snap.state, Some(pipeline.dir()))
        .with_events(&snap.events, pipeline.worktree());
    let text = match a.format {
        Format::Md => r.to_markdown(),
        Format::Json => r.to_json() + "\n",
        Format::Html => r.to_html(),
    };
    match a.output {
        Some(path) => crate::util::replace_atomically(&path, text.as_bytes())
            .with_context(|| format!("write {}", path.display()))?,
        // JSON is escaped already; markdown and HTML go through the sanitiser.
        None => say(&text),
    }
    Ok(ExitCode::SUCCESS)
}
