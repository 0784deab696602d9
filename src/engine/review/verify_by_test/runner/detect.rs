//! The runner of `[run] test` and the words of it kept for every one-test
//! run: TEST split the way a shell would (never run through one), its
//! `NAME=value` assignments, the words that start the runner, then its
//! options read with the runner's own table ([`super::argv`]).

use super::argv::{self, Arg, Table};
use super::{Runner, SingleTestError, TestCommand};

const KNOWN: &str = "cargo test, pytest, jest, vitest, go test, gradle, xcodebuild, node --test";

/// Programs that run a script given to them: a TEST starting with one is
/// a shell script, not a runner loopwatch can hand one test to.
const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "fish", "csh", "tcsh", "make",
];

/// Finds the runner of `test` (the run's `[run] test`).
pub fn detect(test: &str) -> Result<TestCommand, SingleTestError> {
    let unknown = SingleTestError::UnknownRunner;
    if test.trim().is_empty() {
        return Err(unknown(
            "[run] test is empty: the repro test cannot be run alone".into(),
        ));
    }
    if let Some(what) = shell_syntax(test) {
        return Err(unknown(format!(
            "[run] test `{}` is shell syntax ({what}); loopwatch runs one test without a shell: the repro test is not run",
            crate::sanitize::sanitize_line(test, 200)
        )));
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
    let names: Vec<&str> = rest.iter().map(|w| base(w)).collect();
    let not_run = || {
        unknown(format!(
            "cannot tell the test runner from [run] test `{}` (known: {KNOWN}): the repro test is not run",
            crate::sanitize::sanitize_line(test, 200)
        ))
    };
    if names.first().is_some_and(|n| SHELLS.contains(n)) {
        return Err(not_run());
    }
    let pos = |name: &str| names.iter().position(|w| *w == name);
    let command = |runner, words: Vec<String>| TestCommand {
        runner,
        env: env.clone(),
        words,
        options: Vec::new(),
        harness: Vec::new(),
        replaced: Vec::new(),
    };
    if names.first() == Some(&"cargo") {
        let sub = names.iter().position(|w| *w == "test" || *w == "nextest");
        if let Some(i) = sub {
            return Ok(cargo(command(Runner::Cargo, Vec::new()), rest, i));
        }
        return Err(not_run());
    }
    if let Some(i) = pos("pytest").or(pos("py.test")) {
        let c = command(Runner::Pytest, rest[..=i].to_vec());
        return Ok(options(
            c,
            &rest[i + 1..],
            &argv::PYTEST,
            argv::PYTEST_REPLACED,
        ));
    }
    if let Some(i) = pos("jest") {
        let c = command(Runner::Jest, npx_without_install(&rest[..=i]));
        return Ok(options(c, &rest[i + 1..], &argv::JEST, argv::JEST_REPLACED));
    }
    if let Some(i) = pos("vitest") {
        let mut prefix = npx_without_install(&rest[..=i]);
        prefix.push("run".into());
        let mut after = &rest[i + 1..];
        let mut c = command(Runner::Vitest, prefix);
        // `vitest run|watch|dev|related|bench`: loopwatch runs once.
        if let Some(sub) = after.first().filter(|w| !w.starts_with('-')) {
            c.replaced.push(sub.clone());
            after = &after[1..];
        }
        return Ok(options(c, after, &argv::VITEST, argv::VITEST_REPLACED));
    }
    if names.first() == Some(&"go") && names.get(1) == Some(&"test") {
        let c = command(Runner::Go, rest[..2].to_vec());
        // `-args` and what follows go to the test binary, as written.
        let after = &rest[2..];
        let cut = after
            .iter()
            .position(|w| w == "-args" || w == "--args")
            .unwrap_or(after.len());
        let mut c = options(c, &after[..cut], &argv::GO, argv::GO_REPLACED);
        if cut < after.len() {
            c.harness.push(Arg {
                name: "-args".into(),
                value: None,
                words: after[cut..].to_vec(),
            });
        }
        return Ok(c);
    }
    if names
        .first()
        .is_some_and(|w| *w == "gradle" || *w == "gradlew")
    {
        let mut c = command(Runner::Gradle, rest[..1].to_vec());
        for a in plain_args(&rest[1..]) {
            if a.name == "--tests" {
                c.replaced.extend(a.words);
            } else {
                c.options.push(a);
            }
        }
        return Ok(c);
    }
    if names.first() == Some(&"xcodebuild") {
        let mut c = command(Runner::Xcodebuild, rest[..1].to_vec());
        for a in plain_args(&rest[1..]) {
            if a.name.starts_with("-only-testing:") || a.name.starts_with("-skip-testing:") {
                c.replaced.extend(a.words);
            } else {
                c.options.push(a);
            }
        }
        return Ok(c);
    }
    if names.first() == Some(&"node") && rest.iter().any(|w| w == "--test") {
        let c = command(Runner::Node, rest[..1].to_vec());
        let mut c = options(c, &rest[1..], &argv::NODE, argv::NODE_REPLACED);
        // `--test` is put back by the invocation, before the files.
        c.options.retain(|a| a.name != "--test");
        return Ok(c);
    }
    Err(not_run())
}

/// The first shell construct in `test` outside quotes (or a `$` or a
/// backtick inside double quotes), if any.
fn shell_syntax(test: &str) -> Option<&'static str> {
    let (mut single, mut double, mut escaped) = (false, false, false);
    for c in test.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '$' if !single => return Some("`$`: a variable or a substitution"),
            '`' if !single => return Some("a backtick substitution"),
            '\n' | '\r' if !single && !double => return Some("more than one line"),
            _ if single || double => {}
            ';' => return Some("`;`: more than one command"),
            '&' => return Some("`&`: a background job or `&&`"),
            '|' => return Some("`|`: a pipe or `||`"),
            '<' | '>' => return Some("a redirection"),
            '(' | ')' => return Some("a subshell or a group"),
            _ => {}
        }
    }
    None
}

fn base(w: &str) -> &str {
    w.rsplit('/').next().unwrap_or(w)
}

fn is_env_name(k: &str) -> bool {
    !k.is_empty()
        && !k.starts_with(|c: char| c.is_ascii_digit())
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `npx jest` as `npx --no -- jest`: a runner that is not installed is an
/// error, never a download from the registry in the middle of a check; and
/// after `--` the runner's options are its own (npm would read `--json`,
/// `--verbose`, `--ci` as its own settings).
fn npx_without_install(prefix: &[String]) -> Vec<String> {
    if base(&prefix[0]) != "npx" {
        return prefix.to_vec();
    }
    let (runner, options) = prefix[1..]
        .split_last()
        .map_or((None, &[][..]), |(r, o)| (Some(r), o));
    let decided = options
        .iter()
        .any(|w| matches!(w.as_str(), "--yes" | "-y" | "--no" | "--no-install"));
    let mut out = vec![prefix[0].clone()];
    if !decided {
        out.push("--no".into());
    }
    out.extend(options.iter().filter(|w| *w != "--").cloned());
    out.push("--".into());
    out.extend(runner.cloned());
    out
}

/// `c` with the options of `words` read with `table`: those in `replaced`
/// and the positionals go to `c.replaced`, the rest are kept.
fn options(mut c: TestCommand, words: &[String], table: &Table, replaced: &[&str]) -> TestCommand {
    let (args, after) = argv::split(words, table);
    for a in args {
        if a.is_positional() || replaced.contains(&argv::key(&a, table).as_str()) {
            c.replaced.extend(a.words);
        } else {
            c.options.push(a);
        }
    }
    // What follows `--` is more files and filters (pytest, jest, vitest)
    // or the script's arguments (node): loopwatch's selection replaces it.
    if let Some(after) = after {
        c.replaced.push("--".into());
        c.replaced.extend(after);
    }
    c
}

/// Words as options without values (gradle's and xcodebuild's own syntax:
/// `-scheme App` is kept as two words, in order).
fn plain_args(words: &[String]) -> Vec<Arg> {
    let mut out = Vec::new();
    let mut it = words.iter().peekable();
    while let Some(w) = it.next() {
        let mut words = vec![w.clone()];
        if w == "--tests"
            && let Some(v) = it.next()
        {
            words.push(v.clone());
        }
        out.push(Arg {
            name: w.clone(),
            value: None,
            words,
        });
    }
    out
}

/// `cargo [+toolchain] test|nextest run` and TEST's build options; for
/// nextest only the cargo build options `cargo test` takes too.
fn cargo(mut c: TestCommand, rest: &[String], sub: usize) -> TestCommand {
    c.words.push(rest[0].clone());
    c.words
        .extend(rest[1..sub].iter().filter(|w| w.starts_with('+')).cloned());
    c.words.push("test".into());
    let nextest = rest[sub] == "nextest";
    let mut after = &rest[sub + 1..];
    if nextest && after.first().is_some_and(|w| w == "run") {
        after = &after[1..];
    }
    let table = if nextest {
        &argv::NEXTEST
    } else {
        &argv::CARGO
    };
    let (args, harness) = argv::split(after, table);
    for mut a in args {
        let key = argv::key(&a, table);
        let keep = if nextest {
            argv::NEXTEST_CARGO.contains(&key.as_str())
        } else {
            !a.is_positional() && !argv::CARGO_REPLACED.contains(&key.as_str())
        };
        if !keep {
            c.replaced.extend(a.words);
            continue;
        }
        if nextest && key == "--cargo-profile" {
            a.words = match &a.value {
                Some(v) => vec!["--profile".into(), v.clone()],
                None => vec!["--profile".into()],
            };
            a.name = "--profile".into();
        }
        c.options.push(a);
    }
    if let Some(harness) = harness.filter(|_| !nextest) {
        let (args, _) = argv::split(&harness, &argv::LIBTEST);
        for a in args {
            if a.is_positional() || argv::LIBTEST_REPLACED.contains(&a.name.as_str()) {
                c.replaced.extend(a.words);
            } else {
                c.harness.push(a);
            }
        }
    }
    c
}
