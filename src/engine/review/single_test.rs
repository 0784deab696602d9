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

use std::fmt;

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SingleTestError {
    /// TEST names no runner this module knows.
    UnknownRunner(String),
    /// The file or the test reference is unusable.
    BadReference(String),
}

impl fmt::Display for SingleTestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SingleTestError::UnknownRunner(why) => write!(f, "{why}"),
            SingleTestError::BadReference(why) => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for SingleTestError {}

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

/// The command line that runs the test `test_ref` of `file` (both relative
/// to the worktree) alone.
pub fn invocation(
    cmd: &TestCommand,
    file: &str,
    test_ref: &str,
) -> Result<Invocation, SingleTestError> {
    let file = check_file(file)?;
    let name = test_name(file, test_ref)?;
    let mut args: Vec<String> = cmd.words[1..].to_vec();
    let env = cmd.env.clone();
    match cmd.runner {
        Runner::Cargo => {
            let (dir, target, module) = cargo_target(file);
            if !dir.is_empty()
                && !args.iter().any(|a| {
                    a.starts_with("--manifest-path") || a == "-p" || a.starts_with("--package")
                })
            {
                args.push("--manifest-path".into());
                args.push(format!("{dir}/Cargo.toml"));
            }
            args.extend(target);
            let path = match module {
                Some(m) if !m.is_empty() && !name.starts_with(&format!("{m}::")) => {
                    format!("{m}::{name}")
                }
                _ => name,
            };
            args.extend([path, "--".into(), "--exact".into()]);
        }
        Runner::Pytest => {
            args.extend(["-v".into(), format!("{file}::{name}")]);
        }
        Runner::Jest | Runner::Vitest => {
            let full = name.replace(" > ", " ").replace("::", " ");
            if cmd.runner == Runner::Jest {
                args.extend(["--runTestsByPath".into(), file.to_string()]);
            } else {
                args.push(file.to_string());
            }
            args.extend(["-t".into(), format!("^{}$", regex_escape(&full))]);
        }
        Runner::Go => {
            let dir = file.rsplit_once('/').map_or("", |(d, _)| d);
            let pattern: Vec<String> = name
                .split('/')
                .map(|part| format!("^{}$", regex_escape(part)))
                .collect();
            let pkg = if dir.is_empty() {
                ".".to_string()
            } else {
                format!("./{dir}")
            };
            args.extend([
                "-count=1".into(),
                "-v".into(),
                "-run".into(),
                pattern.join("/"),
                pkg,
            ]);
        }
        Runner::Gradle => {
            if name.contains('*') {
                return Err(bad(format!(
                    "test name {name:?} holds a wildcard: it would select more than one test"
                )));
            }
            let filter = if name.contains('.') {
                name
            } else {
                format!("{}.{}", jvm_class(file), name.trim_end_matches("()"))
            };
            args.extend(["--tests".into(), filter]);
        }
        Runner::Xcodebuild => {
            let parts: Vec<&str> = name.split('/').filter(|p| !p.is_empty()).collect();
            let target = file.split('/').next().unwrap_or(file);
            let stem = stem(file);
            let id = match parts.as_slice() {
                [t, c, m] => format!("{t}/{c}/{}", m.trim_end_matches("()")),
                [c, m] => format!("{target}/{c}/{}", m.trim_end_matches("()")),
                _ => format!("{target}/{stem}/{}", name.trim_end_matches("()")),
            };
            args.push(format!("-only-testing:{id}"));
        }
        Runner::Node => {
            let leaf = name.rsplit(" > ").next().unwrap_or(&name);
            let leaf = leaf.rsplit("::").next().unwrap_or(leaf);
            args.extend([
                "--test-name-pattern".into(),
                format!("{}$", regex_escape(leaf)),
                file.to_string(),
            ]);
        }
    }
    Ok(Invocation {
        runner: cmd.runner,
        env,
        program: cmd.words[0].clone(),
        args,
    })
}

fn bad(why: String) -> SingleTestError {
    SingleTestError::BadReference(why)
}

/// A file relative to the worktree that stays inside it.
fn check_file(file: &str) -> Result<&str, SingleTestError> {
    let file = file.strip_prefix("./").unwrap_or(file);
    if file.is_empty() {
        return Err(bad("no test file given".into()));
    }
    if file.starts_with('/') || file.starts_with('-') {
        return Err(bad(format!(
            "test file {file:?} must be a relative path inside the worktree"
        )));
    }
    if file.split('/').any(|c| c == ".." || c.is_empty()) {
        return Err(bad(format!(
            "test file {file:?} must stay inside the worktree (no `..`, no empty part)"
        )));
    }
    if file.chars().any(char::is_control) {
        return Err(bad(format!("test file {file:?} holds a control character")));
    }
    Ok(file)
}

/// The test's name from its reference: `file::name`, or the name alone.
fn test_name(file: &str, test_ref: &str) -> Result<String, SingleTestError> {
    let r = test_ref.trim();
    let name = match r.strip_prefix(file).and_then(|n| n.strip_prefix("::")) {
        Some(n) => n,
        None => {
            let first = r.split("::").next().unwrap_or(r);
            if r.contains("::") && looks_like_file(first) {
                return Err(bad(format!(
                    "testRef {r:?} names the file {first}, not {file}"
                )));
            }
            r
        }
    };
    if name.is_empty() {
        return Err(bad(format!("testRef {test_ref:?} names no test")));
    }
    if name.starts_with('-') {
        return Err(bad(format!(
            "test name {name:?} would be read as an option"
        )));
    }
    if name.chars().any(char::is_control) {
        return Err(bad(format!("test name {name:?} holds a control character")));
    }
    Ok(name.to_string())
}

fn looks_like_file(s: &str) -> bool {
    s.contains('/')
        || s.rsplit_once('.').is_some_and(|(a, ext)| {
            !a.is_empty()
                && matches!(
                    ext,
                    "rs" | "py"
                        | "js"
                        | "jsx"
                        | "ts"
                        | "tsx"
                        | "mjs"
                        | "cjs"
                        | "go"
                        | "java"
                        | "kt"
                        | "swift"
                )
        })
}

/// For a cargo test file: the package folder (empty at the root), the
/// target options and, for a file under `src/`, its module path.
fn cargo_target(file: &str) -> (String, Vec<String>, Option<String>) {
    let parts: Vec<&str> = file.split('/').collect();
    let at = |name: &str| parts.iter().rposition(|p| *p == name);
    if let Some(i) = at("tests").filter(|i| i + 1 < parts.len()) {
        let dir = parts[..i].join("/");
        let stem = match &parts[i + 1..] {
            [one] => one.strip_suffix(".rs").unwrap_or(one).to_string(),
            [folder, ..] => folder.to_string(),
            [] => String::new(),
        };
        return (dir, vec!["--test".into(), stem], None);
    }
    if let Some(i) = at("src") {
        let dir = parts[..i].join("/");
        let inner = &parts[i + 1..];
        let mut module: Vec<String> = Vec::new();
        if inner.first() != Some(&"bin") {
            for (k, p) in inner.iter().enumerate() {
                let last = k + 1 == inner.len();
                let p = if last {
                    p.strip_suffix(".rs").unwrap_or(p)
                } else {
                    p
                };
                if last && matches!(p, "lib" | "main" | "mod") {
                    continue;
                }
                module.push(p.to_string());
            }
        }
        return (dir, Vec::new(), Some(module.join("::")));
    }
    (String::new(), Vec::new(), None)
}

/// `com.acme.CartTest` from `app/src/test/java/com/acme/CartTest.java`.
fn jvm_class(file: &str) -> String {
    let parts: Vec<&str> = file.split('/').collect();
    let root = parts
        .iter()
        .rposition(|p| matches!(*p, "java" | "kotlin" | "groovy" | "scala"))
        .map_or(0, |i| i + 1);
    let mut class: Vec<String> = parts[root..].iter().map(|p| p.to_string()).collect();
    if let Some(last) = class.last_mut() {
        *last = stem(last).to_string();
    }
    class.join(".")
}

fn stem(file: &str) -> &str {
    let base = file.rsplit('/').next().unwrap_or(file);
    base.split_once('.').map_or(base, |(s, _)| s)
}

/// Escapes what JavaScript, Go and Java regexes read as syntax.
fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\^$.|?*+()[]{}/".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(test: &str, file: &str, test_ref: &str) -> String {
        let cmd = detect(test).unwrap_or_else(|e| panic!("{test}: {e}"));
        invocation(&cmd, file, test_ref)
            .unwrap_or_else(|e| panic!("{test} {file} {test_ref}: {e}"))
            .display()
    }

    #[test]
    fn cargo_runs_one_exact_test_of_its_target() {
        assert_eq!(
            line(
                "cargo test",
                "tests/repro_f1.rs",
                "tests/repro_f1.rs::f1_total_keeps_cents"
            ),
            "cargo test --test repro_f1 f1_total_keeps_cents -- --exact"
        );
        // A module of the library: the name gets the module path.
        assert_eq!(
            line(
                "cargo test --all-features -q -- --nocapture",
                "src/money/cents.rs",
                "tests::rounds"
            ),
            "cargo test --all-features money::cents::tests::rounds -- --exact"
        );
        assert_eq!(
            line("cargo test", "src/lib.rs", "src/lib.rs::tests::f2"),
            "cargo test tests::f2 -- --exact"
        );
        assert_eq!(
            line("cargo test", "src/cart/mod.rs", "cart::tests::f3"),
            "cargo test cart::tests::f3 -- --exact"
        );
        // A workspace member: its manifest; nextest's TEST runs libtest tests too.
        assert_eq!(
            line(
                "RUST_LOG=off cargo +stable nextest run --workspace --features x",
                "crates/api/tests/it/main.rs",
                "auth::f4"
            ),
            "RUST_LOG=off cargo +stable test --features x --manifest-path crates/api/Cargo.toml --test it auth::f4 -- --exact"
        );
    }

    #[test]
    fn pytest_jest_vitest_and_node_get_the_file_and_the_name() {
        assert_eq!(
            line(
                "python -m pytest -q tests/",
                "tests/test_cart.py",
                "tests/test_cart.py::TestCart::test_total"
            ),
            "python -m pytest -v tests/test_cart.py::TestCart::test_total"
        );
        assert_eq!(
            line("pytest", "test_a.py", "test_x[1-2]"),
            "pytest -v 'test_a.py::test_x[1-2]'"
        );
        assert_eq!(
            line(
                "npx jest --ci",
                "src/cart.test.js",
                "src/cart.test.js::total > keeps cents (1.5)"
            ),
            r"npx jest --runTestsByPath src/cart.test.js -t '^total keeps cents \(1\.5\)$'"
        );
        assert_eq!(
            line("pnpm vitest", "web/a.test.ts", "sum"),
            "pnpm vitest run web/a.test.ts -t '^sum$'"
        );
        assert_eq!(
            line(
                "node --test --experimental-test-coverage test/",
                "test/cart.test.mjs",
                "cart > adds.up"
            ),
            r"node --test --experimental-test-coverage --test-name-pattern 'adds\.up$' test/cart.test.mjs"
        );
    }

    #[test]
    fn go_gradle_and_xcodebuild_name_the_test_their_way() {
        assert_eq!(
            line(
                "go test -race ./...",
                "internal/cart/cart_test.go",
                "internal/cart/cart_test.go::TestTotal/cents"
            ),
            "go test -race -count=1 -v -run '^TestTotal$/^cents$' ./internal/cart"
        );
        assert_eq!(
            line("go test ./...", "cart_test.go", "TestX"),
            "go test -count=1 -v -run '^TestX$' ."
        );
        assert_eq!(
            line(
                "./gradlew test --tests 'x.*'",
                "app/src/test/java/com/acme/CartTest.java",
                "totalKeepsCents"
            ),
            "./gradlew test --tests com.acme.CartTest.totalKeepsCents"
        );
        assert_eq!(
            line("gradle :app:test", "src/test/kotlin/a/B.kt", "a.B.c"),
            "gradle :app:test --tests a.B.c"
        );
        assert_eq!(
            line(
                "xcodebuild test -scheme App -destination 'platform=macOS' -only-testing:AppTests",
                "AppTests/CartTests.swift",
                "testTotal()"
            ),
            "xcodebuild test -scheme App -destination platform=macOS -only-testing:AppTests/CartTests/testTotal"
        );
        assert_eq!(
            line(
                "xcodebuild test -scheme App",
                "AppTests/CartTests.swift",
                "Other/CartTests/testTotal"
            ),
            "xcodebuild test -scheme App -only-testing:Other/CartTests/testTotal"
        );
    }

    #[test]
    fn an_unknown_runner_is_a_clear_error_never_a_guess() {
        for test in [
            "make test",
            "npm test",
            "",
            "bash -c 'echo \"",
            "./run-tests.sh",
        ] {
            match detect(test) {
                Err(SingleTestError::UnknownRunner(why)) => {
                    assert!(why.contains("[run] test"), "{why}");
                    assert!(
                        why.contains("not run") || why.contains("cannot be run"),
                        "{why}"
                    );
                }
                other => panic!("{test:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn hostile_files_and_names_are_refused() {
        let cmd = detect("cargo test").unwrap();
        for (file, name) in [
            ("../x/tests/a.rs", "a"),
            ("/etc/tests/a.rs", "a"),
            ("-p/tests/a.rs", "a"),
            ("tests//a.rs", "a"),
            ("tests/a.rs", "--nocapture"),
            ("tests/a.rs", "a\nb"),
            ("tests/a.rs", "tests/b.rs::a"),
            ("tests/a.rs", "tests/a.rs::"),
            ("", "a"),
        ] {
            assert!(
                matches!(
                    invocation(&cmd, file, name),
                    Err(SingleTestError::BadReference(_))
                ),
                "{file:?} {name:?}"
            );
        }
        let g = detect("gradle test").unwrap();
        assert!(invocation(&g, "src/test/java/A.java", "*").is_err());
        // A name with shell syntax is one argv word, never shell text.
        let inv = invocation(&cmd, "tests/a.rs", "a; rm -rf /").unwrap();
        assert_eq!(inv.args[3], "a; rm -rf /");
    }
}
