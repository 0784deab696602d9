//! Everything a command prints goes through here: [`say`] (stdout) and
//! [`warn`] (stderr) pass every line through the one sanitiser
//! ([`crate::sanitize::terminal_text`]), on a terminal or not, and
//! [`shown`] escapes one field from data (an id, a summary, a file name)
//! so that nothing in it can start a line of its own: a newline in a
//! summary cannot forge a `NEXT:` line. JSON is written by
//! [`crate::sanitize::json`], which escapes what is not printable.
//!
//! The recording commands' `NEXT:` line and its exit code are built here too.

use std::io::{Read, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;

use crate::journal::Appended;
use crate::model::EventBody;

/// Largest input file a recording command reads (agent outputs, verdicts).
pub const MAX_INPUT_BYTES: u64 = 16 * 1024 * 1024;

/// Reads a file, or stdin for `-`, refusing anything larger than
/// [`MAX_INPUT_BYTES`] and anything that is not a regular file (a FIFO
/// never blocks, a device is never read).
pub fn read_input(path: &Path) -> anyhow::Result<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    if path.as_os_str() == "-" {
        std::io::stdin()
            .take(MAX_INPUT_BYTES + 1)
            .read_to_end(&mut buf)
            .context("read standard input")?;
        if buf.len() as u64 > MAX_INPUT_BYTES {
            anyhow::bail!(
                "standard input is larger than {}",
                crate::util::size_text(MAX_INPUT_BYTES)
            );
        }
        return Ok(("<stdin>".into(), buf));
    }
    let bytes = crate::util::read_regular(path, MAX_INPUT_BYTES)
        .with_context(|| format!("read {}", path.display()))?;
    Ok((path.display().to_string(), bytes))
}

/// A `--log FILE`-style argument that names a folder is a usage error
/// (exit 2), not a file that fails to prove something.
pub fn not_a_folder(s: &str) -> Result<std::path::PathBuf, String> {
    let p = std::path::PathBuf::from(s);
    if p.is_dir() {
        return Err("is a folder, not a file".into());
    }
    Ok(p)
}

/// A clap value parser for a type parsed by `FromStr` whose error echoes
/// the value: the message is escaped, so the value cannot add a line to
/// the usage error (clap escapes the values it quotes itself).
pub fn escaped<T>(s: &str) -> Result<T, String>
where
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    s.parse().map_err(|e: T::Err| shown(&e.to_string()))
}

/// One field from data, safe inside a printed line whatever it holds.
pub fn shown(s: &str) -> String {
    crate::sanitize::field(s)
}

/// Prints text on stdout, every line sanitised. A closed stdout (`| head`)
/// is not an error of the command.
pub fn say(text: &str) {
    emit(&mut std::io::stdout().lock(), text);
}

/// Prints text on stderr, every line sanitised.
pub fn warn(text: &str) {
    emit(&mut std::io::stderr().lock(), text);
}

/// Prints text as it is printed on stdout or stderr (`to_stderr`).
pub fn say_to(to_stderr: bool, text: &str) {
    if to_stderr { warn(text) } else { say(text) }
}

fn emit(out: &mut impl Write, text: &str) {
    let mut clean = crate::sanitize::terminal_text(text.as_bytes());
    if !clean.ends_with('\n') {
        clean.push('\n');
    }
    let _ = out.write_all(clean.as_bytes()).and_then(|()| out.flush());
}

/// Prints a value as indented JSON, escaped.
pub fn say_json(v: &impl serde::Serialize) -> anyhow::Result<()> {
    say(&crate::sanitize::json::to_string_pretty(v)?);
    Ok(())
}

/// The lines an append prints: each human gate it opened, then `NEXT:`.
pub fn finish_lines(appended: &Appended) -> Vec<String> {
    let mut lines = Vec::new();
    for ev in &appended.events {
        if let EventBody::HumanRequested(r) = &ev.body {
            lines.push(format!(
                "human gate opened: {} ({}) {}",
                shown(&r.id),
                r.kind,
                shown(&r.summary)
            ));
        }
    }
    // The line is built from state fields (a gate id) that may come from a
    // journal another program wrote: escaped like any field.
    lines.push(shown(&appended.state.next.line()));
    lines
}

/// Prints what an append opened and its `NEXT:` line; the exit code says
/// what the orchestrator does next.
pub fn finish(appended: &Appended, to_stderr: bool) -> ExitCode {
    say_to(to_stderr, &finish_lines(appended).join("\n"));
    ExitCode::from(appended.state.next.action().exit_code())
}
