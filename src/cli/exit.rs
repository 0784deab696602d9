//! The one map from an error to an exit code, and the one way an error is
//! printed: `loopwatch: <message>` on stderr, on one line, sanitised (an
//! id or a file name in it cannot drive the terminal or start a line).
//!
//! | code | meaning |
//! |------|---------|
//! | 2    | bad input, usage, a refusal by the loop's rules (at the engine's door too), an unreadable file |
//! | 3    | no pipeline |
//! | 4    | the event was recorded but `state.json` is stale (do not retry) |
//!
//! Commands return their own outcome codes (0, 1, 10–13, 124) as `Ok`;
//! `loopwatch run`'s engine errors are mapped by [`engine_code`].

use std::process::ExitCode;

use crate::engine::EngineError;
use crate::journal::JournalError;
use crate::recorder::RecordError;

/// Bad input, usage, a refusal, an unreadable file.
pub const USAGE: u8 = 2;
/// No pipeline where one was needed.
pub const NO_PIPELINE: u8 = 3;
/// Recorded, but `state.json` could not be rewritten.
pub const STATE_STALE: u8 = 4;

/// The journal error somewhere in the chain, looking through the
/// recorder's transparent wrapper.
fn journal_error(e: &anyhow::Error) -> Option<&JournalError> {
    e.chain().find_map(|c| {
        c.downcast_ref::<JournalError>()
            .or_else(|| match c.downcast_ref::<RecordError>() {
                Some(RecordError::Journal(j)) => Some(j),
                _ => None,
            })
    })
}

/// The exit code of a failed command.
pub fn code_of(e: &anyhow::Error) -> u8 {
    match journal_error(e) {
        Some(JournalError::NoPipeline { .. } | JournalError::NoPipelineAt { .. }) => NO_PIPELINE,
        Some(JournalError::StateStale { .. }) => STATE_STALE,
        _ => USAGE,
    }
}

/// The error as printed: its chain on one line, sanitised.
pub fn message(e: &anyhow::Error) -> String {
    format!("loopwatch: {}", crate::sanitize::field(&format!("{e:#}")))
}

/// Prints a failed command's error and returns its exit code. When the
/// events were recorded but `state.json` is stale, the usual lines (the
/// gates opened, `NEXT:`) are printed first: the orchestrator must go on
/// from what was recorded, not retry it.
pub fn fail(e: &anyhow::Error) -> ExitCode {
    if let Some(JournalError::StateStale { appended, .. }) = journal_error(e) {
        super::output::say(&super::output::finish_lines(appended).join("\n"));
    }
    super::output::warn(&message(e));
    ExitCode::from(code_of(e))
}

/// The exit code of an engine that could not go on: each of its failures
/// is a refusal of `loopwatch run` as asked, whatever failed.
pub fn engine_code(e: &EngineError) -> u8 {
    match e {
        EngineError::Lock(_)
        | EngineError::Refused(_)
        | EngineError::Journal(_)
        | EngineError::Record(_)
        | EngineError::Dispatch(_)
        | EngineError::Watch { .. } => USAGE,
    }
}

/// Prints why the engine could not go on and returns its exit code.
pub fn engine_failed(e: &EngineError) -> ExitCode {
    super::output::warn(&format!("loopwatch: {e}"));
    ExitCode::from(engine_code(e))
}

/// A command line clap refused (or `--help` / `--version`, which print on
/// stdout and exit 0). An error echoes the values it refused: each is
/// escaped as a field before clap renders the message, so a newline or an
/// escape sequence in an argument shows as a visible stand-in.
pub fn clap_error(mut e: clap::Error) -> ExitCode {
    use clap::error::ContextValue;
    if !e.use_stderr() {
        // Help and version: our own text, printed with clap's styling.
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    let escaped: Vec<_> = e
        .context()
        .filter_map(|(kind, value)| match value {
            ContextValue::String(s) => {
                Some((kind, ContextValue::String(crate::sanitize::field(s))))
            }
            ContextValue::Strings(v) => Some((
                kind,
                ContextValue::Strings(v.iter().map(|s| crate::sanitize::field(s)).collect()),
            )),
            _ => None,
        })
        .collect();
    for (kind, value) in escaped {
        e.insert(kind, value);
    }
    super::output::warn(e.render().to_string().trim_end());
    ExitCode::from(USAGE)
}
