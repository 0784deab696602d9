//! floor-guard: a diff-scoped detector of a quietly weakened quality bar.
//!
//! Every line added since a base commit (the working tree and untracked
//! files included) is classified into six kinds: SUPPRESS (a checker
//! silenced), SKIP (a test skipped or focused), DELETED_TEST, ASSERT_DROP
//! (fewer assertion lines in a test file), STUB (not-implemented code) and
//! THRESHOLD_DOWN (a coverage number lowered in a config). A line carrying
//! `floor-guard: allow <reason>` is reported as waived and not counted.
//!
//! [`classify`] is the pure core (diff text in, findings out); [`run`] asks
//! git for the diff. Neither prints: [`FloorGuardReport::lines`] gives the
//! output lines.

mod diff;
mod git;
mod rules;

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::model::event::{FloorGuardFinding, FloorGuardResult};

/// The usage line, printed on stderr with exit code 3.
pub const USAGE: &str = "usage: loopwatch floor-guard <base-ref> [-- <pathspec>...]";

/// Longest snippet, in characters.
const SNIPPET_CHARS: usize = 100;

/// What one floor-guard run found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FloorGuardReport {
    /// The base ref as given.
    pub base: String,
    /// Every finding, counted or waived, sorted by path, line, kind.
    pub findings: Vec<FloorGuardFinding>,
}

impl FloorGuardReport {
    /// Findings that count (not waived).
    pub fn counted(&self) -> usize {
        self.findings.iter().filter(|f| !f.waived).count()
    }

    /// Waived findings.
    pub fn waived(&self) -> usize {
        self.findings.iter().filter(|f| f.waived).count()
    }

    /// The output: one line per finding, then the summary line.
    pub fn lines(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .findings
            .iter()
            .map(|f| {
                let tag = if f.waived { "WAIVED" } else { "FLOOR" };
                let (path, snippet) = (one_line(&f.path), one_line(&f.snippet));
                format!("{tag} {} {path}:{} {snippet}", f.kind, f.line)
            })
            .collect();
        out.push(match self.counted() {
            0 => "FLOOR GUARD: clean".to_string(),
            n => format!("FLOOR GUARD: {n} finding(s), {} waived", self.waived()),
        });
        out
    }

    /// 0 clean, 2 findings.
    pub fn exit_code(&self) -> u8 {
        if self.counted() == 0 { 0 } else { 2 }
    }

    /// The payload of a `floor-guard.finished` event for this run.
    pub fn to_result(&self, iteration: u32) -> FloorGuardResult {
        FloorGuardResult {
            iteration,
            base: self.base.clone(),
            findings: self.findings.clone(),
            counted: u32::try_from(self.counted()).unwrap_or(u32::MAX),
            waived: u32::try_from(self.waived()).unwrap_or(u32::MAX),
        }
    }
}

/// A path or snippet as printed: control characters (a tab aside), line
/// separators and bidirectional overrides are written as Rust escapes
/// (`\n`, `\r`, `\u{1b}`), so that a file name holding a newline cannot
/// forge an output line and no escape sequence from a file reaches a
/// terminal, piped or not.
fn one_line(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| {
        (c.is_control() && c != '\t')
            || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_char(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Why floor-guard could not run.
#[derive(Debug, thiserror::Error)]
pub enum FloorGuardError {
    /// The base ref does not resolve to a commit (a usage error, exit 3).
    #[error("{base:?} does not resolve to a commit in {}", cwd.display())]
    UnknownBase {
        /// The ref as given.
        base: String,
        /// Where git was asked.
        cwd: PathBuf,
    },
    /// git could not be started or failed.
    #[error("`git {command}` failed in {}: {message}", cwd.display())]
    Git {
        /// The git subcommand and its arguments.
        command: String,
        /// Where git ran.
        cwd: PathBuf,
        /// git's stderr or the spawn error.
        message: String,
    },
}

/// Runs floor-guard in `cwd` against `base`, restricted to `pathspec`.
pub fn run(
    base: &str,
    pathspec: &[OsString],
    cwd: &Path,
) -> Result<FloorGuardReport, FloorGuardError> {
    let commit = git::resolve_commit(cwd, base)?.ok_or_else(|| FloorGuardError::UnknownBase {
        base: base.to_string(),
        cwd: cwd.to_path_buf(),
    })?;
    let scope = git::collect(cwd, &commit, pathspec)?;
    Ok(FloorGuardReport {
        base: base.to_string(),
        findings: classify(&scope.diff_text, &scope.deleted),
    })
}

/// Classifies a `git diff --unified=0` text; `deleted` lists the deleted
/// paths. Returns every finding (waived ones included), sorted by path,
/// line, kind.
pub fn classify(diff_text: &str, deleted: &[String]) -> Vec<FloorGuardFinding> {
    let deleted: BTreeSet<&str> = deleted.iter().map(String::as_str).collect();
    let files = diff::parse(diff_text);
    // A deleted file is a deleted test only when the diff shows its lines:
    // an empty file (`__init__.py`) or a binary one (an editor's swap file)
    // has no text hunk, and no test was deleted with it.
    let with_lines: BTreeSet<&str> = files.iter().filter_map(|f| f.old_path.as_deref()).collect();
    let had_lines = |p: &str| with_lines.contains(p);
    let mut findings: Vec<FloorGuardFinding> = deleted
        .iter()
        .filter(|p| rules::is_test_path(p) && had_lines(p))
        .map(|p| finding("DELETED_TEST", p, 1, p, false))
        .collect();
    for file in files.iter() {
        match file.path() {
            Some(path) if !deleted.contains(path) => classify_file(path, file, &mut findings),
            _ => {}
        }
    }
    // Stable: findings of one line keep the order in which they were found.
    findings.sort_by(|a, b| (&a.path, a.line, &a.kind).cmp(&(&b.path, b.line, &b.kind)));
    findings
}

fn classify_file(path: &str, file: &diff::FileDiff, out: &mut Vec<FloorGuardFinding>) {
    let test_path = rules::is_test_path(path);
    for (line, text) in &file.adds {
        let waived = rules::is_waived(text);
        let kinds = [
            ("SUPPRESS", rules::is_suppress(text)),
            ("STUB", rules::is_stub(text)),
            ("SKIP", test_path && rules::is_skip(text)),
        ];
        for (kind, hit) in kinds {
            if hit {
                out.push(finding(kind, path, *line, text, waived));
            }
        }
    }
    if test_path {
        out.extend(assert_drop(path, file));
    }
    if rules::is_config_path(path) {
        out.extend(thresholds_down(path, file));
    }
}

fn assert_drop(path: &str, file: &diff::FileDiff) -> Option<FloorGuardFinding> {
    let assertions =
        |lines: &[(u32, String)]| lines.iter().filter(|(_, t)| rules::is_assertion(t)).count();
    let (added, removed) = (assertions(&file.adds), assertions(&file.dels));
    if removed <= added {
        return None;
    }
    // A file emptied of every line has its hunk at new line 0, which does
    // not exist: the finding goes on line 1.
    let line = file
        .adds
        .first()
        .map(|(n, _)| *n)
        .or(file.first_new)
        .filter(|n| *n > 0)
        .unwrap_or(1);
    let waived = file.adds.iter().any(|(_, t)| rules::is_waived(t));
    let snippet = format!("assertion lines {removed} -> {added}");
    Some(finding("ASSERT_DROP", path, line, &snippet, waived))
}

fn thresholds_down(path: &str, file: &diff::FileDiff) -> Vec<FloorGuardFinding> {
    let old: HashMap<String, f64> = file
        .dels
        .iter()
        .filter_map(|(_, t)| rules::key_value(t))
        .collect();
    // Last wins per key, reported in the order keys first appear.
    let mut new: Vec<(String, u32, f64, &str)> = Vec::new();
    for (line, text) in &file.adds {
        if let Some((key, value)) = rules::key_value(text) {
            match new.iter_mut().find(|(k, ..)| *k == key) {
                Some(slot) => *slot = (key, *line, value, text),
                None => new.push((key, *line, value, text)),
            }
        }
    }
    new.into_iter()
        .filter(|(key, _, value, _)| old.get(key).is_some_and(|before| value < before))
        .map(|(_, line, _, text)| {
            finding("THRESHOLD_DOWN", path, line, text, rules::is_waived(text))
        })
        .collect()
}

fn finding(kind: &str, path: &str, line: u32, text: &str, waived: bool) -> FloorGuardFinding {
    FloorGuardFinding {
        kind: kind.to_string(),
        path: path.to_string(),
        line,
        snippet: text.trim().chars().take(SNIPPET_CHARS).collect(),
        waived,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(diff: &str, deleted: &[&str]) -> Vec<String> {
        let deleted: Vec<String> = deleted.iter().map(|s| s.to_string()).collect();
        FloorGuardReport {
            base: "b".into(),
            findings: classify(diff, &deleted),
        }
        .lines()
    }

    #[test]
    fn several_kinds_on_one_line_sort_by_kind() {
        let diff = "diff --git a/a.test.js b/a.test.js\n--- a/a.test.js\n+++ b/a.test.js\n@@ -0,0 +1 @@\n+it.skip('x', () => { throw new Error('not implemented') }) // @ts-ignore\n";
        let long = "it.skip('x', () => { throw new Error('not implemented') }) // @ts-ignore";
        assert_eq!(
            render(diff, &[]),
            [
                format!("FLOOR SKIP a.test.js:1 {long}"),
                format!("FLOOR STUB a.test.js:1 {long}"),
                format!("FLOOR SUPPRESS a.test.js:1 {long}"),
                "FLOOR GUARD: 3 finding(s), 0 waived".to_string(),
            ]
        );
    }

    #[test]
    fn threshold_compares_the_last_value_of_each_side() {
        let diff = "--- a/jest.config.js\n+++ b/jest.config.js\n@@ -2,2 +2,3 @@\n-  lines: 80,\n-  branches: 70,\n+  lines: 90,\n+  branches: 75,\n+  lines: 79.5,\n";
        assert_eq!(
            render(diff, &[]),
            [
                "FLOOR THRESHOLD_DOWN jest.config.js:4 lines: 79.5,",
                "FLOOR GUARD: 1 finding(s), 0 waived"
            ]
        );
    }

    #[test]
    fn snippets_are_cut_at_100_characters_and_deleted_tests_listed() {
        let text = format!("{} # noqa", "é".repeat(120));
        let diff = format!("--- a/x.py\n+++ b/x.py\n@@ -0,0 +1 @@\n+   {text}  \n");
        let gone = "diff --git a/old/test_a.py b/old/test_a.py\n--- a/old/test_a.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-assert x\n";
        let out = render(&format!("{gone}{diff}"), &["old/test_a.py", "src/gone.py"]);
        assert_eq!(out[0], "FLOOR DELETED_TEST old/test_a.py:1 old/test_a.py");
        assert_eq!(out[1], format!("FLOOR SUPPRESS x.py:1 {}", "é".repeat(100)));
        assert_eq!(out.len(), 3);
    }

    #[test]
    fn deleted_files_without_lines_are_not_deleted_tests() {
        let diff = "diff --git a/tests/__init__.py b/tests/__init__.py\ndeleted file mode 100644\nindex e69de29..0000000\ndiff --git a/tests/.a.test.js.swp b/tests/.a.test.js.swp\ndeleted file mode 100644\nindex 3f1c2a4..0000000\nBinary files a/tests/.a.test.js.swp and /dev/null differ\n";
        let deleted = ["tests/.a.test.js.swp", "tests/__init__.py"];
        assert_eq!(render(diff, &deleted), ["FLOOR GUARD: clean"]);
    }

    #[test]
    fn an_emptied_test_file_reports_line_1() {
        let diff = "--- a/a.test.js\n+++ b/a.test.js\n@@ -1,2 +0,0 @@\n-expect(1).toBe(1);\n-expect(2).toBe(2);\n";
        assert_eq!(
            render(diff, &[])[0],
            "FLOOR ASSERT_DROP a.test.js:1 assertion lines 2 -> 0"
        );
    }
}
