//! What the verify-by-test agent is handed: the findings to reproduce (in
//! accepted order, at most `max_findings`), the diff hunks of their files
//! against the run's DIFF base, and the project's test conventions (the
//! TEST command, how loopwatch will run one test with it, the files that
//! hold tests), then the answer expected.

use std::fmt::Write;
use std::path::Path;

use super::runner::TestCommand;
use crate::code;
use crate::model::triage::TriageFinding;

/// Bytes of diff text handed over at most (the rest is named, not shown).
pub const DIFF_LIMIT: usize = 256 * 1024;

/// Test files listed at most.
const TEST_FILES_LISTED: usize = 30;

/// The agent's input.
pub fn text(
    worktree: &Path,
    diff_base: &str,
    test: &str,
    runner: Result<&TestCommand, String>,
    findings: &[TriageFinding],
    now: Option<&code::TreeId>,
) -> String {
    let files = test_files(worktree);
    let diff = hunks(worktree, diff_base, findings, now);
    compose(test, runner, &files, findings, diff_base, &diff)
}

/// The agent's input from its parts, found by [`text`] (or made up, for
/// `loopwatch run --dry-run`): TEST, its runner, the tracked test files,
/// the findings, the DIFF base and the diff text of the findings' files.
pub fn compose(
    test: &str,
    runner: Result<&TestCommand, String>,
    files: &[String],
    findings: &[TriageFinding],
    diff_base: &str,
    diff: &str,
) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "VERIFY-BY-TEST: write ONE minimal repro test per finding below, a test that FAILS while the finding stands and passes once it is fixed."
    );
    let _ = writeln!(
        o,
        "Do not run the tests and do not change anything but the test files: loopwatch runs each test alone, judges it from its own log, and removes the tests that do not reproduce their finding."
    );
    let _ = writeln!(o, "\nTEST CONVENTIONS");
    let _ = writeln!(
        o,
        "TEST: {}",
        if test.trim().is_empty() { "none" } else { test }
    );
    match runner {
        Ok(cmd) => {
            let _ = writeln!(
                o,
                "RUNNER: {} (each test is run alone by its file and name; give the name the runner knows it by)",
                cmd.runner.as_str()
            );
        }
        Err(why) => {
            let _ = writeln!(o, "RUNNER: unknown ({why})");
        }
    }
    if files.is_empty() {
        let _ = writeln!(o, "EXISTING TESTS: none found");
    } else {
        let _ = writeln!(o, "EXISTING TESTS (put yours beside them, the same way):");
        for f in files {
            let _ = writeln!(o, "  {f}");
        }
    }
    let _ = writeln!(o, "\nFINDINGS ({})", findings.len());
    for f in findings {
        let _ = writeln!(o, "\nFINDING {} [{}]", f.id, severity(f));
        for (k, v) in [
            ("title", &f.title),
            ("path", &f.path),
            ("lines", &f.lines),
            ("claim", &f.claim),
        ] {
            if !v.trim().is_empty() {
                let _ = writeln!(o, "  {k}: {}", v.trim());
            }
        }
    }
    let _ = writeln!(o, "\nDIFF (against {diff_base}) of the findings' files:");
    o.push_str(diff);
    let _ = writeln!(
        o,
        "\nANSWER with ONLY a JSON array, one object per finding: [{{\"finding\":\"<id>\",\"file\":\"<test file, relative to the worktree>\",\"testRef\":\"<file>::<test name>\"}}]"
    );
    o
}

fn severity(f: &TriageFinding) -> &'static str {
    use crate::model::triage::TriageSeverity::*;
    match f.severity {
        Blocking => "blocking",
        Major => "major",
        Minor => "minor",
        Nit => "nit",
    }
}

/// The unified hunks of the findings' files from the DIFF base to `now`.
fn hunks(
    worktree: &Path,
    diff_base: &str,
    findings: &[TriageFinding],
    now: Option<&code::TreeId>,
) -> String {
    let base = diff_base.split("..").next().unwrap_or(diff_base).trim();
    let (Some(now), false) = (now, base.is_empty()) else {
        return "  (no diff: no snapshot of the worktree or no DIFF base)\n".into();
    };
    let from = match code::revision_tree(worktree, base) {
        Ok(t) => t,
        Err(e) => return format!("  (no diff: {e})\n"),
    };
    let files = match code::diff(worktree, &from, now) {
        Ok(f) => f,
        Err(e) => return format!("  (no diff: {e})\n"),
    };
    let wanted: Vec<&str> = findings
        .iter()
        .map(|f| f.path.trim())
        .filter(|p| !p.is_empty())
        .collect();
    let picked: Vec<code::FileDiff> = files
        .into_iter()
        .filter(|d| {
            wanted
                .iter()
                .any(|w| *w == d.path || d.path.ends_with(&format!("/{w}")))
        })
        .collect();
    if picked.is_empty() {
        return "  (the findings' files are unchanged since the DIFF base)\n".into();
    }
    let mut text = code::diff_text(&picked);
    if text.len() > DIFF_LIMIT {
        let mut cut = DIFF_LIMIT;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("\n[diff cut at 256 KiB]\n");
    }
    text
}

/// Tracked files that look like tests (a path part holding `test` or
/// `spec`), the first few.
fn test_files(worktree: &Path) -> Vec<String> {
    let Ok(out) = crate::code::git_stdout(worktree, &["ls-files", "-z"]) else {
        return Vec::new();
    };
    String::from_utf8_lossy(&out)
        .split('\0')
        .filter(|p| {
            let lower = p.to_ascii_lowercase();
            !p.is_empty() && (lower.contains("test") || lower.contains("spec"))
        })
        .take(TEST_FILES_LISTED)
        .map(crate::sanitize::sanitize_input)
        .collect()
}
