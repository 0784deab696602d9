//! One test, alone: the runner found from the run's TEST (`[run] test`)
//! and the command line that runs exactly one test of one file with it,
//! with the machine-readable report loopwatch judges it by.
//!
//! | runner | found from TEST | one test |
//! |---|---|---|
//! | cargo | `cargo test`, `cargo nextest run` | `cargo test … [--manifest-path <pkg>/Cargo.toml] --lib\|--bin <b>\|--test <t> <module::name> -- … --exact` |
//! | pytest | `pytest`, `py.test`, `python -m pytest` | `… -p no:cacheprovider -o junit_family=xunit1 --junitxml=<report> <file>::<name>` |
//! | jest | `jest` (`npx jest`, `yarn jest`…) | `… --verbose --json --outputFile=<report> --runTestsByPath <file> -t '^<full name>$'` |
//! | vitest | `vitest` | `… run … --reporter=json --outputFile.json=<report> [--exclude <namesake>…] <file> -t '^<full name>$'` |
//! | go | `go test` | `go test … -count=1 -json -run '^Name$/^sub$' ./<dir of file>` |
//! | gradle | `gradle`, `gradlew` | `… --tests <package.Class.method>` |
//! | xcodebuild | `xcodebuild` | `… -only-testing:<Target/Class/method>` |
//! | node | `node --test` | `node … --test … --test-reporter=tap --test-reporter-destination=<report> --test-name-pattern='^<name>$' <file>` |
//!
//! The options of TEST are kept with their values ([`argv`] reads them the
//! way each runner does); those that choose the tests or the report
//! loopwatch needs are replaced, and TEST's positionals (its files and
//! filters) give way to the one file. The words are argv entries, never
//! shell text, so a test name cannot inject a command; a TEST that is shell
//! syntax (`&&`, `|`, `$VAR`, `;`…), a file or a name that would be read as
//! an option (a leading `-`), leaves the worktree or holds a control
//! character is refused. An unknown runner is an error naming the TEST,
//! never a guess. The only files read are the worktree's, through
//! [`Worktree`] (cargo's manifests, vitest's namesakes); nothing runs.

pub mod argv;
pub(super) mod cargo;
mod detect;
pub(super) mod names;

use std::path::{Path, PathBuf};

pub use super::invocation::{invocation, widen};
pub use crate::checks::evidence_gate::report::ReportFormat;
pub use detect::detect;

/// A test runner loopwatch can run one test with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runner {
    /// `cargo test` (libtest).
    Cargo,
    /// pytest.
    Pytest,
    /// jest.
    Jest,
    /// vitest.
    Vitest,
    /// `go test`.
    Go,
    /// gradle (or its wrapper).
    Gradle,
    /// `xcodebuild test`.
    Xcodebuild,
    /// node's built-in test runner.
    Node,
}

impl Runner {
    /// The runner's name in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Runner::Cargo => "cargo test",
            Runner::Pytest => "pytest",
            Runner::Jest => "jest",
            Runner::Vitest => "vitest",
            Runner::Go => "go test",
            Runner::Gradle => "gradle",
            Runner::Xcodebuild => "xcodebuild",
            Runner::Node => "node --test",
        }
    }

    /// The evidence gate's runner of the same output.
    pub fn gate(self) -> crate::checks::evidence_gate::Runner {
        use crate::checks::evidence_gate::Runner as G;
        match self {
            Runner::Cargo => G::CargoTest,
            Runner::Pytest => G::Pytest,
            Runner::Jest => G::Jest,
            Runner::Vitest => G::Vitest,
            Runner::Go => G::GoTest,
            Runner::Gradle => G::Gradle,
            Runner::Xcodebuild => G::Xcodebuild,
            Runner::Node => G::NodeTest,
        }
    }
}

/// The runner of a TEST and the words of TEST kept for every single-test run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestCommand {
    /// The runner.
    pub runner: Runner,
    /// `NAME=value` assignments before the program.
    pub env: Vec<(String, String)>,
    /// The program and the words that start the runner (`npx --no -- jest`,
    /// `python -m pytest`, `cargo +stable test`, `go test`, `vitest run`).
    pub words: Vec<String>,
    /// TEST's own options, each with its value, kept for every run.
    pub options: Vec<argv::Arg>,
    /// cargo: libtest's options after `--`, kept.
    pub harness: Vec<argv::Arg>,
    /// What loopwatch replaces of TEST (its files and filters, the options
    /// that choose tests or reports), as written.
    pub replaced: Vec<String>,
}

impl TestCommand {
    /// The kept options' words, in order.
    pub fn option_words(&self) -> Vec<String> {
        self.options.iter().flat_map(|a| a.words.clone()).collect()
    }
}

/// The test a command runs, as the runner names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selected {
    /// The test file, relative to the worktree.
    pub file: String,
    /// The name's spellings the runner may give it: its groups and its
    /// own name (one path; two when a JavaScript name holding `::` may be
    /// one name or a group and a name).
    pub paths: Vec<Vec<String>>,
    /// pytest: the name has no `[parameters]` and stands for every
    /// parametrization.
    pub every_parametrization: bool,
}

/// A report a run writes, read after it ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// Where (absolute).
    pub path: PathBuf,
    /// Its format.
    pub format: ReportFormat,
}

/// A command line that runs one test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The runner.
    pub runner: Runner,
    /// Environment to add.
    pub env: Vec<(String, String)>,
    /// The program.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
}

/// The one-test command of a repro test: what runs it, and what judging
/// the run needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OneTest {
    /// The command line that runs it (as the process runner takes it).
    pub invocation: Invocation,
    /// The machine-readable report the run writes (to a file), `None` when
    /// its log is its report (cargo's libtest, go's `-json`, gradle,
    /// xcodebuild).
    pub report: Option<Report>,
    /// The test it selects.
    pub selected: Selected,
}

impl Invocation {
    /// The command as one line, for logs and notes (words with blanks or
    /// quotes are quoted the shell's way).
    pub fn display(&self) -> String {
        let mut out: Vec<String> = self
            .env
            .iter()
            .map(|(k, v)| format!("{k}={}", quote(v)))
            .collect();
        out.push(quote(&self.program));
        out.extend(self.args.iter().map(|a| quote(a)));
        out.join(" ")
    }
}

fn quote(w: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    if !w.is_empty() && w.chars().all(plain) {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// Why one test cannot be run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SingleTestError {
    /// TEST names no runner this module knows, or is shell syntax.
    #[error("{0}")]
    UnknownRunner(String),
    /// The file or the test reference is unusable.
    #[error("{0}")]
    BadReference(String),
}

/// The worktree's files, as far as a one-test command needs them.
pub trait Worktree {
    /// The text of a small file (a manifest), relative to the worktree.
    fn read(&self, rel: &str) -> Option<String>;
    /// Whether a regular file exists there.
    fn is_file(&self, rel: &str) -> bool;
    /// The worktree's files (tracked and untracked, ignored ones left
    /// out), relative to it.
    fn files(&self) -> Vec<String>;
    /// Why the file at `rel` is not a place a repro test may be run from:
    /// a part of its path is a link, or it resolves outside the worktree
    /// (`None`: it may). A test may never run someone else's file.
    fn outside(&self, rel: &str) -> Option<String> {
        let _ = rel;
        None
    }
}

/// The worktree on disk.
#[derive(Debug, Clone, Copy)]
pub struct Dir<'a>(pub &'a Path);

/// Bytes of a manifest read at most.
const MANIFEST_LIMIT: u64 = 1 << 20;

impl Worktree for Dir<'_> {
    fn read(&self, rel: &str) -> Option<String> {
        let bytes = crate::util::read_regular(&self.0.join(rel), MANIFEST_LIMIT).ok()?;
        String::from_utf8(bytes).ok()
    }

    fn is_file(&self, rel: &str) -> bool {
        std::fs::symlink_metadata(self.0.join(rel)).is_ok_and(|m| m.is_file())
    }

    fn outside(&self, rel: &str) -> Option<String> {
        let mut at = self.0.to_path_buf();
        for part in Path::new(rel).components() {
            at.push(part);
            if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
                return Some(format!(
                    "{} is a symbolic link: a repro test is run only from the worktree's own files",
                    at.strip_prefix(self.0).unwrap_or(&at).display()
                ));
            }
        }
        let (Ok(root), Ok(full)) = (
            std::fs::canonicalize(self.0),
            std::fs::canonicalize(self.0.join(rel)),
        ) else {
            return None;
        };
        (!full.starts_with(&root)).then(|| format!("{rel} resolves outside the worktree"))
    }

    fn files(&self) -> Vec<String> {
        let args = [
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ];
        let Ok(out) = crate::code::git_stdout(self.0, &args) else {
            return Vec::new();
        };
        String::from_utf8_lossy(&out)
            .split('\0')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect()
    }
}

#[cfg(test)]
#[path = "runner_tests.rs"]
mod tests;
