//! `o`: a whole log in the person's `$PAGER`. The log is read as a hostile
//! file (inside the worktree, its last 16 MiB), an agent CLI's stream is
//! turned into its transcript (every tool result up to 40 lines), every line
//! is sanitised, and the pager reads that copy: the raw stream stays in
//! `.pipeline/agents/`, and nothing from the log reaches the terminal
//! unsanitised.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::journal::{Pipeline, read_tail};
use crate::parse::agent_stream::{Format, render, transcript};
use crate::sanitize::sanitize;

/// Bytes of a log shown at most (its end).
pub const PAGE_BYTES: u64 = 16 * 1024 * 1024;

/// A log to page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PagerRequest {
    /// The pipeline folder holding it.
    pub pipeline: PathBuf,
    /// The log, relative to the pipeline folder.
    pub rel: String,
    /// The CLI stream it holds, when an agent CLI wrote it.
    pub format: Option<Format>,
}

/// The text the pager shows: a header naming the raw file, then the
/// transcript (or the log's lines), every line sanitised.
pub fn page_text(req: &PagerRequest, bytes: &[u8], whole: bool) -> String {
    let raw = req.pipeline.join(&req.rel);
    let what = match req.format {
        Some(Format::ClaudeStreamJson) => "the transcript of a Claude Code session",
        Some(Format::CodexJson) => "the transcript of a Codex session",
        None => "the log",
    };
    let mut out = format!(
        "{} — {what}; the raw stream is {}\n",
        sanitize(&req.rel),
        sanitize(&raw.display().to_string())
    );
    if !whole {
        out.push_str(&format!(
            "(its last {} MiB only: the start is left out)\n",
            PAGE_BYTES / (1024 * 1024)
        ));
    }
    out.push('\n');
    let body = match req.format {
        Some(f) => render(&transcript(f, bytes, true)),
        None => String::from_utf8_lossy(bytes).into_owned(),
    };
    for line in body.lines() {
        out.push_str(&sanitize(line));
        out.push('\n');
    }
    out
}

/// The pager: `$PAGER` split as a shell would (`less -R`), `less` when it
/// is unset or blank.
pub fn pager_command(pager: Option<&str>) -> Result<(OsString, Vec<OsString>), String> {
    let line = pager
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .unwrap_or("less");
    let words =
        shlex::split(line).ok_or_else(|| format!("$PAGER cannot be read: {}", sanitize(line)))?;
    let mut words = words.into_iter().map(OsString::from);
    let program = words.next().ok_or_else(|| "$PAGER is empty".to_string())?;
    Ok((program, words.collect()))
}

/// Reads the log and writes the page to a private temporary file (kept
/// until it is dropped).
pub fn prepare(req: &PagerRequest) -> Result<tempfile::NamedTempFile, String> {
    let pipeline = Pipeline::at(req.pipeline.clone());
    let path = req.pipeline.join(&req.rel);
    let bytes = read_tail(&pipeline, &path, PAGE_BYTES).map_err(|e| e.to_string())?;
    let whole = (bytes.len() as u64) < PAGE_BYTES;
    let text = page_text(req, &bytes, whole);
    let mut file = tempfile::Builder::new()
        .prefix("loopwatch-log-")
        .suffix(".txt")
        .tempfile()
        .map_err(|e| format!("a temporary file for the pager: {e}"))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.flush())
        .map_err(|e| format!("a temporary file for the pager: {e}"))?;
    Ok(file)
}

/// Opens the page in the pager on the terminal (the TUI is suspended by
/// the caller) and waits for the person to quit it; what the status line
/// says after.
pub fn open(req: &PagerRequest, pager: Option<&str>) -> String {
    let (program, mut args) = match pager_command(pager) {
        Ok(c) => c,
        Err(e) => return e,
    };
    let file = match prepare(req) {
        Ok(f) => f,
        Err(e) => return format!("{}: {e}", sanitize(&req.rel)),
    };
    args.push(file.path().as_os_str().to_owned());
    let cwd = req.pipeline.parent().unwrap_or(Path::new("/"));
    match crate::process::terminal::run_in_terminal(&program, &args, cwd) {
        Ok(_) => format!("{} closed", sanitize(&req.rel)),
        Err(e) => format!(
            "the pager '{}' could not start: {e}",
            sanitize(&program.to_string_lossy())
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_is_the_transcript_with_every_line_sanitised() {
        let req = PagerRequest {
            pipeline: PathBuf::from("/w/.pipeline"),
            rel: "agents/002-verifier.log".into(),
            format: Some(Format::CodexJson),
        };
        let log = b"{\"type\":\"item.completed\",\"item\":{\"id\":\"1\",\"type\":\"agent_message\",\"text\":\"red \\u001b[31mtext\"}}\nstderr \x1b]0;title\x07\n";
        let page = page_text(&req, log, true);
        assert_eq!(
            page,
            "agents/002-verifier.log — the transcript of a Codex session; the raw stream is /w/.pipeline/agents/002-verifier.log\n\n◆ red ␛[31mtext\n  | stderr ␛]0;title␇\n"
        );
        assert!(!page.bytes().any(|b| b < 0x20 && b != b'\n'));
        let raw = PagerRequest {
            format: None,
            ..req
        };
        let page = page_text(&raw, b"one\ntwo", false);
        assert!(
            page.ends_with("(its last 16 MiB only: the start is left out)\n\none\ntwo\n"),
            "{page}"
        );
    }

    #[test]
    fn the_pager_is_pager_split_as_a_shell_would() {
        assert_eq!(pager_command(None).unwrap(), ("less".into(), vec![]));
        assert_eq!(pager_command(Some("  ")).unwrap(), ("less".into(), vec![]));
        assert_eq!(
            pager_command(Some("less -R '+G'")).unwrap(),
            ("less".into(), vec!["-R".into(), "+G".into()])
        );
        assert!(pager_command(Some("less 'unclosed")).is_err());
    }
}
