//! `loopwatch record ...`: what the orchestrator calls after each step.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};

use super::Globals;
use super::output::{finish, read_input, say, shown, warn};
use crate::model::event::{VerifyResult, VerifySummary};
use crate::model::*;
use crate::recorder::Recorder;

/// `record` subcommands.
#[derive(Debug, Args)]
#[command(after_long_help = EXIT_CODES)]
pub struct RecordArgs {
    /// What to record.
    #[command(subcommand)]
    pub what: RecordCommand,
}

/// Exit codes shared by every recording command.
pub const EXIT_CODES: &str = "\
Every recording command ends its output with one line `NEXT: <next-gate|dev|human ID|retry|done|stop>`.

Exit codes:
  0   go on (run the next gate, or the loop is done)
  10  a human gate is open: `loopwatch await ID`
  11  back to the developer with the gaps
  12  retry the same gate (its output was not usable)
  13  stop: a person stopped the run; record its end
  2   bad input, usage or a refusal by the loop's rules (nothing was written)
  3   no pipeline
  4   the event was recorded but .pipeline/state.json could not be rewritten: it is
      stale until the next write repairs it; the NEXT line is still printed (do not
      retry: that would record the event twice)

Text from data (ids, summaries, file names) is printed escaped: it can never start a
line of its own.";

/// What to record.
#[derive(Debug, Subcommand)]
pub enum RecordCommand {
    /// Start a run: `run.started` and iteration 1.
    #[command(after_long_help = EXIT_CODES)]
    RunStart(RunStartArgs),
    /// Record a gate's output (the agent's text, or a GATE 0 report).
    #[command(after_long_help = EXIT_CODES)]
    Gate(GateArgs),
    /// Record the finding verifier's verdicts.
    #[command(after_long_help = EXIT_CODES)]
    Findings(FindingsArgs),
    /// Validate a triage file (schema 3.2.0), copy it into the pipeline and record it.
    #[command(after_long_help = EXIT_CODES)]
    Triage(TriageRecordArgs),
    /// Record one verify-by-test result, or the summary of an iteration.
    #[command(after_long_help = EXIT_CODES)]
    Verify(VerifyArgs),
    /// Record that work went back to the developer (starts the next iteration).
    #[command(after_long_help = EXIT_CODES)]
    Dev(DevArgs),
    /// Record a free-text note.
    #[command(after_long_help = EXIT_CODES)]
    Note(NoteArgs),
    /// End the run (writes `.pipeline/report.md`; run again, it writes a
    /// report.md that is missing, e.g. after a crash).
    #[command(after_long_help = EXIT_CODES)]
    RunEnd(RunEndArgs),
}

/// `record run-start`.
#[derive(Debug, Args)]
pub struct RunStartArgs {
    /// The flow (feat, hotfix, ...).
    #[arg(long, value_parser = non_blank)]
    pub flow: String,
    /// The contract file.
    #[arg(long)]
    pub contract: PathBuf,
    /// Run id (default: the contract's file name without `.md`).
    #[arg(long)]
    pub id: Option<String>,
    /// Branch (default: the current git branch, when there is one).
    #[arg(long)]
    pub branch: Option<String>,
    /// Diff base (`develop..HEAD`, a ref).
    #[arg(long)]
    pub diff: Option<String>,
    /// Test command.
    #[arg(long)]
    pub test: Option<String>,
    /// Rounds per gate before a person must decide.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=99))]
    pub max_rounds: u32,
    /// Start over even if a run is in progress.
    #[arg(long)]
    pub force: bool,
}

/// `record gate`.
#[derive(Debug, Args)]
pub struct GateArgs {
    /// floor, conformity or security.
    #[arg(value_parser = super::output::escaped::<GateName>)]
    pub gate: GateName,
    /// The gate's output (`-` for stdin).
    #[arg(long, value_name = "FILE")]
    pub output: PathBuf,
    /// Record it even if the loop expects another gate.
    #[arg(long)]
    pub force: bool,
}

/// `record findings`.
#[derive(Debug, Args)]
pub struct FindingsArgs {
    /// Iteration (default: the current one).
    #[arg(long)]
    pub iteration: Option<u32>,
    /// The finding verifier's output: a JSON array, or text with a
    /// `FINDING_VERIFIER_RESULTS` line before it (`-` for stdin).
    #[arg(long, value_name = "FILE")]
    pub file: PathBuf,
    /// The review's findings (JSON array of {id, severity, path, lines, claim}),
    /// matched to the verdicts by position; without it ids come from the verdicts.
    #[arg(long, value_name = "FILE")]
    pub findings: Option<PathBuf>,
}

/// `record triage`.
#[derive(Debug, Args)]
pub struct TriageRecordArgs {
    /// The triage file.
    pub file: PathBuf,
    /// Iteration (default: the file's `iteration`).
    #[arg(long)]
    pub iteration: Option<u32>,
}

/// `record verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Iteration (default: the current one).
    #[arg(long)]
    pub iteration: Option<u32>,
    /// The finding the repro test is about.
    #[arg(long, required_unless_present = "summary")]
    pub finding: Option<String>,
    /// confirmed, not-reproduced, inconclusive or cap-exceeded.
    #[arg(long, value_parser = parse_outcome, required_unless_present = "summary")]
    pub result: Option<VerifyOutcome>,
    /// Repro test reference (`file::name`).
    #[arg(long, default_value = "")]
    pub test_ref: String,
    /// Repro test file.
    #[arg(long = "test-file", default_value = "")]
    pub test_file: String,
    /// Test log, relative to `.pipeline/`.
    #[arg(long, default_value = "")]
    pub log: String,
    /// Cause (for inconclusive results).
    #[arg(long, default_value = "")]
    pub note: String,
    /// The iteration's summary instead: a JSON object
    /// {attempted, confirmed, downgraded, inconclusive, capExceeded, durationMs, redTests, timedOut}.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["finding", "result"])]
    pub summary: Option<PathBuf>,
}

/// `record dev`.
#[derive(Debug, Args)]
pub struct DevArgs {
    /// What was handed to the developer (repeatable).
    #[arg(long = "input")]
    pub inputs: Vec<String>,
}

/// `record note`.
#[derive(Debug, Args)]
pub struct NoteArgs {
    /// The note.
    pub text: String,
}

/// `record run-end`.
#[derive(Debug, Args)]
pub struct RunEndArgs {
    /// complete, partial, not-conformant, stopped or aborted.
    #[arg(long, value_parser = super::output::escaped::<EndStatus>)]
    pub status: EndStatus,
}

fn non_blank(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        Err("must not be empty".into())
    } else {
        Ok(s.to_string())
    }
}

fn parse_outcome(s: &str) -> Result<VerifyOutcome, String> {
    serde_json::from_value(serde_json::Value::String(s.into()))
        .map_err(|_| format!("'{}' is not a result (expected confirmed, not-reproduced, inconclusive or cap-exceeded)", shown(s)))
}

/// Runs `record`.
pub fn run(args: RecordArgs, globals: &Globals) -> anyhow::Result<ExitCode> {
    let caller = match args.what {
        RecordCommand::Note(_) => crate::recorder::Caller::Person,
        _ => crate::recorder::Caller::Orchestrator,
    };
    let rec = Recorder::new(globals.pipeline_for_writing()?)
        .with_expiry(super::human::expiry_policy()?)
        .admitted(caller)?;
    match args.what {
        RecordCommand::RunStart(a) => super::record_run::run_start(&rec, a),
        RecordCommand::Gate(a) => gate(&rec, a),
        RecordCommand::Findings(a) => findings(&rec, a),
        RecordCommand::Triage(a) => triage(&rec, a),
        RecordCommand::Verify(a) => verify(&rec, a),
        RecordCommand::Dev(a) => Ok(finish(
            &rec.dev(a.inputs.into_iter().map(Into::into).collect())?,
            false,
        )),
        RecordCommand::Note(a) => Ok(finish(&rec.note(a.text)?, false)),
        RecordCommand::RunEnd(a) => super::record_run::run_end(&rec, a),
    }
}

fn gate(rec: &Recorder, a: GateArgs) -> anyhow::Result<ExitCode> {
    let (name, bytes) = read_input(&a.output)?;
    let result = crate::recorder::gates::Gate::of(a.gate).read(&name, &bytes);
    if let Err(st) = &result {
        warn(&format!("structural failure: {}", shown(&st.to_string())));
    }
    let out = rec.round(a.gate, result, &bytes, a.force)?;
    if let Some(g) = out.state.last_round(a.gate) {
        say(&format!(
            "GATE {} {} round {}: {}",
            a.gate.number(),
            a.gate,
            g.round,
            shown(&g.verdict.to_string())
        ));
    }
    Ok(finish(&out, false))
}

fn findings(rec: &Recorder, a: FindingsArgs) -> anyhow::Result<ExitCode> {
    let (name, bytes) = read_input(&a.file)?;
    let verdicts = crate::parse::parse_verdicts(&name, &bytes)?;
    let list = match &a.findings {
        Some(p) => {
            let (fname, fbytes) = read_input(p)?;
            let review = crate::parse::parse_findings(&fname, &fbytes)?;
            let m = crate::parse::match_findings(&review, &verdicts);
            if !m.extra_verdicts.is_empty() {
                warn(&format!(
                    "warning: {} verdict(s) past the last finding were not applied",
                    m.extra_verdicts.len()
                ));
            }
            for (pos, id, echoed) in &m.echo_mismatches {
                warn(&format!(
                    "warning: verdict {} echoed id {} for finding {}: the finding's id was kept",
                    pos + 1,
                    shown(echoed),
                    shown(id)
                ));
            }
            m.findings
        }
        None => crate::parse::findings_from_verdicts(&verdicts),
    };
    let counts = |v: FindingVerdict| list.iter().filter(|f| f.verdict == v).count();
    say(&format!(
        "findings: {} verified, {} false, {} unverifiable",
        counts(FindingVerdict::Verified),
        counts(FindingVerdict::False),
        counts(FindingVerdict::Unverifiable)
    ));
    Ok(finish(&rec.findings(a.iteration, list)?, false))
}

fn triage(rec: &Recorder, a: TriageRecordArgs) -> anyhow::Result<ExitCode> {
    let (name, bytes) = read_input(&a.file)?;
    let file = crate::model::triage::Triage::parse(&name, &bytes).map_err(anyhow::Error::msg)?;
    let iteration = a.iteration.unwrap_or(file.iteration);
    let (counts, buckets) = file.buckets();
    // Refused before anything is copied: an iteration the run does not have.
    if let Some(snap) = crate::journal::snapshot(rec.pipeline())? {
        crate::recorder::check_iteration(&snap.state, iteration)?;
    }
    let rel = format!("triage-{iteration}.json");
    let dest = rec.pipeline().dir().join(&rel);
    rec.pipeline().ensure_dir()?;
    let same_file = match (std::fs::metadata(&a.file), std::fs::symlink_metadata(&dest)) {
        (Ok(src), Ok(dst)) => {
            use std::os::unix::fs::MetadataExt;
            dst.is_file() && src.dev() == dst.dev() && src.ino() == dst.ino()
        }
        _ => false,
    };
    if !same_file {
        crate::util::replace_in_pipeline(&dest, &bytes)
            .with_context(|| format!("write {}", dest.display()))?;
    }
    say(&format!(
        "triage {}: {} accepted, {} deferred, {} rejected",
        iteration, counts.accepted, counts.deferred, counts.rejected
    ));
    Ok(finish(&rec.triage(iteration, rel, counts, buckets)?, false))
}

fn verify(rec: &Recorder, a: VerifyArgs) -> anyhow::Result<ExitCode> {
    let iteration = match a.iteration {
        Some(i) => i,
        None => crate::journal::snapshot(rec.pipeline())?
            .map_or(1, |s| s.state.iteration_number().max(1)),
    };
    if let Some(path) = a.summary {
        let (name, bytes) = read_input(&path)?;
        let mut v: serde_json::Value =
            serde_json::from_slice(&bytes).with_context(|| format!("{name}: not JSON"))?;
        if let Some(o) = v.as_object_mut() {
            o.insert("iteration".into(), iteration.into());
        }
        let summary: VerifySummary = serde_json::from_value(v)
            .with_context(|| format!("{name}: not a verify-by-test summary"))?;
        return Ok(finish(&rec.verify(Vec::new(), Some(summary))?, false));
    }
    let (Some(finding), Some(result)) = (a.finding, a.result) else {
        anyhow::bail!("--finding and --result are required without --summary");
    };
    let r = VerifyResult {
        iteration,
        finding,
        result,
        test_ref: a.test_ref,
        file: a.test_file,
        log: a.log,
        note: a.note,
        evidence_gate: None,
        extra: Default::default(),
    };
    Ok(finish(&rec.verify(vec![r], None)?, false))
}
