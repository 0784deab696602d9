//! One test, alone: the runner found from the run's TEST (`[run] test`)
//! and the command line that runs exactly one test of one file with it.
//!
//! | runner | found from TEST | one test |
//! |---|---|---|
//! | cargo | `cargo test`, `cargo nextest run` | `cargo test [--test <stem>] <path::name> -- --exact` |
//! | pytest | `pytest`, `py.test`, `python -m pytest` | `… -v <file>::<name>` |
//! | jest | `jest` (`npx jest`, `yarn jest`…) | `… --runTestsByPath <file> -t '^<full name>$'` |
//! | vitest | `vitest` | `… run <file> -t '^<full name>$'` |
//! | go | `go test` | `go test -count=1 -v -run '^Name$' ./<dir of file>` |
//! | gradle | `gradle`, `gradlew` | `… --tests <package.Class.method>` |
//! | xcodebuild | `xcodebuild` | `… -only-testing:<Target/Class/method>` |
//! | node | `node --test` | `node --test --test-name-pattern '<name>$' <file>` |
//!
//! Pure: no file is read and nothing runs. The words are argv entries,
//! never shell text, so a test name cannot inject a command; a file or a
//! name that would be read as an option (a leading `-`), leaves the
//! worktree or holds a control character is refused. An unknown runner is
//! an error naming the TEST, never a guess.

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
}

/// The runner of a TEST and the words of TEST kept for every single-test run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestCommand {
    /// The runner.
    pub runner: Runner,
    /// `NAME=value` assignments before the program.
    pub env: Vec<(String, String)>,
    /// The program and the words kept (the runner's own options).
    pub words: Vec<String>,
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
    /// TEST names no runner this module knows.
    #[error("{0}")]
    UnknownRunner(String),
    /// The file or the test reference is unusable.
    #[error("{0}")]
    BadReference(String),
}

const KNOWN: &str = "cargo test, pytest, jest, vitest, go test, gradle, xcodebuild, node --test";

/// Finds the runner of `test` (the run's `[run] test`).
pub fn detect(test: &str) -> Result<TestCommand, SingleTestError> {
    let unknown = |why: String| SingleTestError::UnknownRunner(why);
    if test.trim().is_empty() {
        return Err(unknown(
            "[run] test is empty: the repro test cannot be run alone".into(),
        ));
    }
    let Some(words) = shlex::split(test) else {
        return Err(unknown(format!(
            "[run] test `{test}` is not a command line (an unclosed quote?): the repro test cannot be run alone"
        )));
    };
    let mut env = Vec::new();
    let mut rest = words.as_slice();
    while let Some((first, tail)) = rest.split_first() {
        match first.split_once('=') {
            Some((k, v)) if is_env_name(k) => {
                env.push((k.to_string(), v.to_string()));
                rest = tail;
            }
            _ => break,
        }
    }
    let base = |w: &str| w.rsplit('/').next().unwrap_or(w).to_string();
    let names: Vec<String> = rest.iter().map(|w| base(w)).collect();
    let pos = |name: &str| names.iter().position(|w| w == name);
    let found = |runner: Runner, words: Vec<String>| TestCommand {
        runner,
        env: env.clone(),
        words,
    };
    if names.first().is_some_and(|w| w == "cargo")
        && let Some(i) = pos("test").or(pos("nextest"))
    {
        return Ok(found(Runner::Cargo, cargo_words(&rest[..1], &rest[1..], i)));
    }
    if let Some(i) = pos("pytest").or(pos("py.test")) {
        return Ok(found(Runner::Pytest, rest[..=i].to_vec()));
    }
    if let Some(i) = pos("jest") {
        return Ok(found(Runner::Jest, rest[..=i].to_vec()));
    }
    if let Some(i) = pos("vitest") {
        let mut w = rest[..=i].to_vec();
        w.push("run".into());
        return Ok(found(Runner::Vitest, w));
    }
    if names.first().is_some_and(|w| w == "go") && names.get(1).is_some_and(|w| w == "test") {
        return Ok(found(Runner::Go, go_words(rest)));
    }
    if names
        .first()
        .is_some_and(|w| w == "gradle" || w == "gradlew")
    {
        return Ok(found(Runner::Gradle, without_option(rest, "--tests")));
    }
    if names.first().is_some_and(|w| w == "xcodebuild") {
        let kept = rest
            .iter()
            .filter(|w| !w.starts_with("-only-testing:") && !w.starts_with("-skip-testing:"))
            .cloned()
            .collect();
        return Ok(found(Runner::Xcodebuild, kept));
    }
    if names.first().is_some_and(|w| w == "node") && rest.iter().any(|w| w == "--test") {
        // node's own options are kept; test files and name filters are not.
        let kept = rest
            .iter()
            .enumerate()
            .filter(|(i, w)| {
                *i == 0 || (w.starts_with('-') && !w.starts_with("--test-name-pattern"))
            })
            .map(|(_, w)| w.clone())
            .collect();
        return Ok(found(Runner::Node, kept));
    }
    Err(unknown(format!(
        "cannot tell the test runner from [run] test `{test}` (known: {KNOWN}): the repro test is not run"
    )))
}

fn is_env_name(k: &str) -> bool {
    !k.is_empty()
        && !k.starts_with(|c: char| c.is_ascii_digit())
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `cargo [+toolchain] test` and the options of TEST that choose how it
/// builds (features, profile, package, manifest, offline); target and
/// name filters are left out.
fn cargo_words(program: &[String], after: &[String], sub: usize) -> Vec<String> {
    let mut out = program.to_vec();
    out.extend(
        after
            .iter()
            .take(sub - 1)
            .filter(|w| w.starts_with('+'))
            .cloned(),
    );
    out.push("test".into());
    let with_value = [
        "--features",
        "-F",
        "-p",
        "--package",
        "--manifest-path",
        "--target-dir",
        "--profile",
    ];
    let flags = [
        "--release",
        "--all-features",
        "--no-default-features",
        "--offline",
        "--locked",
        "--frozen",
    ];
    let mut it = after.iter().skip(sub).take_while(|w| *w != "--");
    while let Some(w) = it.next() {
        if flags.contains(&w.as_str()) {
            out.push(w.clone());
        } else if with_value.contains(&w.as_str()) {
            if let Some(v) = it.next() {
                out.push(w.clone());
                out.push(v.clone());
            }
        } else if with_value.iter().any(|o| w.starts_with(&format!("{o}="))) {
            out.push(w.clone());
        }
    }
    out
}

/// `go test` and its build options (`-race`, `-tags`); packages, `-run`
/// and `-count` are set per test.
fn go_words(words: &[String]) -> Vec<String> {
    let mut out = words[..2].to_vec();
    let mut it = words.iter().skip(2);
    while let Some(w) = it.next() {
        if w == "-race" || w.starts_with("-tags=") {
            out.push(w.clone());
        } else if w == "-tags"
            && let Some(v) = it.next()
        {
            out.push(w.clone());
            out.push(v.clone());
        }
    }
    out
}

/// `words` without `option VALUE` / `option=VALUE`.
fn without_option(words: &[String], option: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = words.iter();
    while let Some(w) = it.next() {
        if w == option {
            it.next();
        } else if !w.starts_with(&format!("{option}=")) {
            out.push(w.clone());
        }
    }
    out
}

pub use super::vbt_invocation::invocation;

#[cfg(test)]
#[path = "single_test_tests.rs"]
mod tests;
