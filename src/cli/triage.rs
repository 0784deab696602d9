//! `loopwatch triage apply TRIAGE.json --verification FILE`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};

use super::Globals;
use super::output::shown;
use crate::checks::triage::{self, ApplyOutcome};
use crate::model::types::VerifyOutcome;

/// Arguments of `triage`.
#[derive(Debug, Args)]
pub struct TriageArgs {
    /// What to do with a triage file.
    #[command(subcommand)]
    pub command: TriageCommand,
}

/// `triage` subcommands.
#[derive(Debug, Subcommand)]
pub enum TriageCommand {
    /// Apply verify-by-test results to a triage file (schema 3.2.0).
    ///
    /// --verification FILE is a JSON object:
    ///
    ///   {"results": [{"finding": "F1",
    ///                 "result": "confirmed|not-reproduced|inconclusive",
    ///                 "testRef": "tests/a.rs::name", "file": "tests/a.rs",
    ///                 "log": "verify-1.test.log", "note": "cause, if inconclusive"}],
    ///    "maxFindings": 3, "durationMs": 0, "timedOut": false,
    ///    "tokensIn": 0, "tokensOut": 0}
    ///
    /// Only "results" is required; unknown fields are refused.
    /// Every finding named must be in "accepted".
    ///
    /// - confirmed: stays accepted; its test joins redTests.
    /// - not-reproduced: moves to deferred, only when the evidence gate proves
    ///   from its log that the repro test ran and passed; otherwise recorded
    ///   inconclusive with the gate's reason. The log is relative to the
    ///   triage file's folder or .pipeline (no absolute path, no "..").
    /// - inconclusive: stays accepted; cause in verification.note.
    /// - Accepted blocking findings and findings with a result, in accepted
    ///   order, past maxFindings keep their judgement as cap-exceeded.
    ///
    /// The file is re-validated and replaced atomically.
    ///
    /// Exit codes: 0 applied, 2 bad input (nothing is written).
    #[command(verbatim_doc_comment)]
    Apply(ApplyArgs),
}

/// Arguments of `triage apply`.
#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// The triage file to update (`triage-<iter>.json`).
    #[arg(value_name = "TRIAGE.json")]
    pub triage: PathBuf,
    /// The verify-by-test report (format above).
    #[arg(long, value_name = "FILE")]
    pub verification: PathBuf,
}

/// Runs `triage`.
pub fn run(args: TriageArgs, globals: &Globals) -> anyhow::Result<ExitCode> {
    let TriageCommand::Apply(args) = args.command;
    let pipeline = match &globals.pipeline {
        Some(p) => Some(p.clone()),
        None => crate::journal::Pipeline::discover(
            &std::env::current_dir().context("cannot read the current directory")?,
        )
        .map(|p| p.dir().to_path_buf()),
    };
    let outcome = triage::apply_files(&args.triage, &args.verification, pipeline.as_deref())
        .with_context(|| format!("triage apply {}", args.triage.display()))?;
    after_apply(&outcome, globals);
    for line in summary_lines(&args.triage, &outcome) {
        super::output::say(&line);
    }
    Ok(ExitCode::SUCCESS)
}

/// Once the file is written: when a `.pipeline` exists, records each
/// `verify.result` and the iteration's `verify.summary`. A recording problem
/// goes to stderr (the triage file is already correct on disk).
pub fn after_apply(outcome: &ApplyOutcome, globals: &Globals) {
    let Some(pipeline) = globals.existing_pipeline() else {
        return;
    };
    let recorded = crate::recorder::Recorder::new(pipeline)
        .admitted(crate::recorder::Caller::Orchestrator)
        .and_then(|rec| rec.verify(outcome.results.clone(), Some(outcome.summary.clone())));
    if let Err(e) = recorded {
        super::output::warn(&format!(
            "loopwatch triage: not recorded: {}",
            super::output::shown(&e.to_string())
        ));
    }
}

/// The nearest `.pipeline` folder at or above `dir`.
fn summary_lines(path: &Path, o: &ApplyOutcome) -> Vec<String> {
    let s = &o.summary;
    let mut out = vec![format!(
        "{}: {} attempted: {} confirmed, {} downgraded to deferred, {} inconclusive, {} past the cap",
        super::output::shown(&path.display().to_string()),
        s.attempted,
        s.confirmed,
        s.downgraded,
        s.inconclusive,
        s.cap_exceeded
    )];
    for r in &o.results {
        let detail = match r.result {
            VerifyOutcome::Confirmed => format!("red test {}", shown(&r.test_ref)),
            VerifyOutcome::NotReproduced => {
                format!(
                    "repro test {} passed, moved to deferred",
                    shown(&r.test_ref)
                )
            }
            VerifyOutcome::Inconclusive | VerifyOutcome::CapExceeded => shown(&r.note),
        };
        out.push(format!(
            "  {} {}: {detail}",
            shown(&r.finding),
            r.result.as_str()
        ));
    }
    out
}
