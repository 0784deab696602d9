//! The runners' machine-readable reports: what a run did, test by test,
//! with each test's file and full name (its groups, classes, parent tests)
//! exactly as the runner knows it.
//!
//! - jest `--json --outputFile`, vitest's `json` reporter: one entry per
//!   test file (its absolute path), one per test (`ancestorTitles`,
//!   `title`, `status`), a file that failed to run with its message;
//! - pytest `--junitxml` (`-o junit_family=xunit1`, which names each
//!   test's file): one `testcase` per test, `failure`, `error` and
//!   `skipped` in it, a module that could not be collected as an `error`
//!   without a test;
//! - node's TAP reporter (`--test-reporter=tap` to a file): read as the
//!   gate reads TAP;
//! - a log, for the runners whose console output is already exact (cargo's
//!   libtest, go's `-json` stream) and those loopwatch cannot run here
//!   (gradle, xcodebuild): its last run.
//!
//! A report is hostile input: it is parsed, never trusted to be whole; an
//! unreadable one is an error naming why.

mod json;
mod junit;

use std::path::Path;

use super::runners::{self, Outcome, Place, Runner, RunnerLog, TestLine};
use super::text;

/// The format of a report a runner writes to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    /// jest's `--json` output.
    JestJson,
    /// vitest's `json` reporter (jest's shape).
    VitestJson,
    /// pytest's junit XML (`junit_family=xunit1`).
    JunitXml,
    /// node's TAP reporter.
    NodeTap,
}

impl ReportFormat {
    /// The runner that writes it.
    pub fn runner(self) -> Runner {
        match self {
            ReportFormat::JestJson => Runner::Jest,
            ReportFormat::VitestJson => Runner::Vitest,
            ReportFormat::JunitXml => Runner::Pytest,
            ReportFormat::NodeTap => Runner::NodeTest,
        }
    }

    /// The file extension of the report (`json`, `xml`, `tap`).
    pub fn extension(self) -> &'static str {
        match self {
            ReportFormat::JestJson | ReportFormat::VitestJson => "json",
            ReportFormat::JunitXml => "xml",
            ReportFormat::NodeTap => "tap",
        }
    }
}

/// What one run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    /// The runner.
    pub runner: Runner,
    /// Every test the run reported, ran or not, in report order; a test's
    /// file is relative to the worktree when it is inside it.
    pub tests: Vec<TestLine>,
    /// Failures outside any test: a file that did not load or collect, a
    /// build that failed, errors after the tests (one line each).
    pub problems: Vec<String>,
    /// The run reached its end (its summary, its report's last line).
    pub complete: bool,
    /// The run was interrupted (Ctrl-C, `pytest.exit`).
    pub interrupted: bool,
}

/// Why a report could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReportError {
    /// Not the format expected (not JSON, not XML, not TAP).
    #[error("{0}")]
    Malformed(String),
}

/// Reads a report of `format`; file paths in it are made relative to
/// `root` (the worktree) when they are inside it.
pub fn read(format: ReportFormat, bytes: &[u8], root: &Path) -> Result<Ran, ReportError> {
    match format {
        ReportFormat::JestJson | ReportFormat::VitestJson => {
            json::read(format.runner(), bytes, root)
        }
        ReportFormat::JunitXml => junit::read(bytes),
        ReportFormat::NodeTap => {
            let text = String::from_utf8_lossy(bytes);
            let lines = text::clean_lines(&text);
            from_runs(runners::detect(&lines), Runner::NodeTest).ok_or_else(|| {
                ReportError::Malformed("the report holds no TAP of node's test runner".into())
            })
        }
    }
}

/// The last run of `runner` in a log (for the runners whose log is their
/// report), `None` when the log holds none.
pub fn from_log(log: &str, runner: Runner) -> Option<Ran> {
    let lines = text::clean_lines(log);
    from_runs(runners::detect(&lines), runner)
}

fn from_runs(runs: Vec<RunnerLog>, runner: Runner) -> Option<Ran> {
    let run = runs.into_iter().rev().find(|r| r.runner == runner)?;
    let mut problems = Vec::new();
    if run.failure_reported && run.failed == 0 {
        problems.push(match runner {
            Runner::GoTest => "a package did not build".to_string(),
            Runner::CargoTest | Runner::Nextest => {
                "cargo reported a failure outside the tests (a build that failed, a test binary that crashed)".to_string()
            }
            Runner::NodeTest => "a test file failed to load".to_string(),
            _ => "the runner reported a failure outside the tests".to_string(),
        });
    }
    if run.errors > 0 {
        problems.push(format!("{} errors outside the tests", run.errors));
    }
    Some(Ran {
        runner,
        tests: run.tests,
        problems,
        complete: !run.cut,
        interrupted: run.interrupted,
    })
}

/// A test name split at `::` outside brackets (pytest's
/// `Class::test_x[a::b]` is two segments).
pub fn split_name(name: &str) -> Vec<String> {
    runners::split_outside_brackets(name, "::")
}

/// `path` relative to `root` when it is inside it (the path as given, or
/// as both are after resolving links), else as given.
fn relative_to(path: &str, root: &Path) -> String {
    let p = Path::new(path);
    let strip = |r: &Path| {
        p.strip_prefix(r)
            .ok()
            .map(|rel| rel.to_string_lossy().into_owned())
    };
    if let Some(rel) = strip(root) {
        return rel;
    }
    if let (Ok(real_root), Ok(real)) = (root.canonicalize(), p.canonicalize())
        && let Ok(rel) = real.strip_prefix(&real_root)
    {
        return rel.to_string_lossy().into_owned();
    }
    path.to_string()
}

/// One line of a failure message (its first non-empty line, at most 300
/// characters).
fn one_line(message: &str) -> String {
    let line = message
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    match line.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_string(),
    }
}

fn test(file: Option<String>, path: Vec<String>, outcome: Outcome) -> TestLine {
    TestLine {
        place: file.map(Place::File),
        path,
        outcome,
    }
}
