//! Shared output of the recording commands: what was opened, the `NEXT:`
//! line, and the exit code that goes with it. Text that came from files is
//! escaped when stdout is a terminal.

use std::io::{IsTerminal, Read};
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;

use crate::journal::Appended;
use crate::model::EventBody;

/// Largest input file a recording command reads (agent outputs, verdicts).
pub const MAX_INPUT_BYTES: u64 = 16 * 1024 * 1024;

/// Reads a file, or stdin for `-`, refusing anything larger than [`MAX_INPUT_BYTES`].
pub fn read_input(path: &Path) -> anyhow::Result<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    if path.as_os_str() == "-" {
        std::io::stdin()
            .take(MAX_INPUT_BYTES + 1)
            .read_to_end(&mut buf)
            .context("read standard input")?;
        check_size("standard input", buf.len())?;
        return Ok(("<stdin>".into(), buf));
    }
    let meta = std::fs::metadata(path).with_context(|| format!("read {}", path.display()))?;
    if !meta.is_file() {
        anyhow::bail!("{} is not a regular file", path.display());
    }
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_INPUT_BYTES + 1).read_to_end(&mut buf))
        .with_context(|| format!("read {}", path.display()))?;
    check_size(&path.display().to_string(), buf.len())?;
    Ok((path.display().to_string(), buf))
}

fn check_size(name: &str, len: usize) -> anyhow::Result<()> {
    if len as u64 > MAX_INPUT_BYTES {
        anyhow::bail!(
            "{name} is larger than {} MiB",
            MAX_INPUT_BYTES / (1024 * 1024)
        );
    }
    Ok(())
}

/// Text from files, made safe for a terminal when stdout is one.
pub fn shown(s: &str) -> String {
    if std::io::stdout().is_terminal() {
        crate::sanitize::terminal_text(s.as_bytes())
    } else {
        s.to_string()
    }
}

/// Prints what an append opened and its `NEXT:` line; the exit code says
/// what the orchestrator does next.
pub fn finish(appended: &Appended, to_stderr: bool) -> ExitCode {
    let mut lines = Vec::new();
    for ev in &appended.events {
        if let EventBody::HumanRequested(r) = &ev.body {
            lines.push(format!(
                "human gate opened: {} ({}) {}",
                r.id,
                r.kind,
                shown(&r.summary)
            ));
        }
    }
    let next = &appended.state.next;
    lines.push(next.line());
    for l in lines {
        if to_stderr {
            eprintln!("{l}");
        } else {
            println!("{l}");
        }
    }
    ExitCode::from(next.action.exit_code())
}
