//! The one-test command line of every runner, TEST's options kept, and
//! what is refused.

use std::collections::BTreeMap;
use std::path::Path;

use super::*;

/// A worktree of a few files (path → text).
#[derive(Default)]
struct Files(BTreeMap<String, String>);

impl Files {
    fn with(files: &[(&str, &str)]) -> Files {
        Files(
            files
                .iter()
                .map(|(p, t)| (p.to_string(), t.to_string()))
                .collect(),
        )
    }
}

impl Worktree for Files {
    fn read(&self, rel: &str) -> Option<String> {
        self.0.get(rel).cloned()
    }
    fn is_file(&self, rel: &str) -> bool {
        self.0.contains_key(rel)
    }
    fn files(&self) -> Vec<String> {
        self.0.keys().cloned().collect()
    }
}

const REPORT: &str = "/p/.pipeline/verify-1-F1.report";

fn crate_tree() -> Files {
    let manifest = "[package]\nname = \"shop\"\nversion = \"0.1.0\"\n";
    Files::with(&[
        ("Cargo.toml", manifest),
        ("src/lib.rs", ""),
        ("src/money.rs", ""),
        ("src/main.rs", ""),
        ("src/bin/till.rs", ""),
        ("tests/cart.rs", ""),
        ("tests/common/mod.rs", ""),
        ("tests/it/main.rs", ""),
        ("tests/it/nested.rs", ""),
        (
            "crates/api/Cargo.toml",
            "[package]\nname = \"api-server\"\n\n[[test]]\nname = \"flows\"\npath = \"checks/flows.rs\"\n",
        ),
        ("crates/api/src/main.rs", ""),
        ("crates/api/src/routes.rs", ""),
    ])
}

fn inv_in(tree: &Files, test: &str, file: &str, test_ref: &str) -> OneTest {
    let cmd = detect(test).unwrap_or_else(|e| panic!("{test}: {e}"));
    invocation(&cmd, tree, file, test_ref, Path::new(REPORT))
        .unwrap_or_else(|e| panic!("{test} {file} {test_ref}: {e}"))
}

fn line_in(tree: &Files, test: &str, file: &str, test_ref: &str) -> String {
    inv_in(tree, test, file, test_ref).invocation.display()
}

fn line(test: &str, file: &str, test_ref: &str) -> String {
    line_in(&Files::default(), test, file, test_ref)
}

fn refused(tree: &Files, test: &str, file: &str, test_ref: &str) -> String {
    let cmd = detect(test).unwrap_or_else(|e| panic!("{test}: {e}"));
    match invocation(&cmd, tree, file, test_ref, Path::new(REPORT)) {
        Err(e) => e.to_string(),
        Ok(i) => panic!("{test} {file} {test_ref:?}: {}", i.invocation.display()),
    }
}

#[test]
fn cargo_runs_one_exact_test_of_the_target_its_file_is_in() {
    let t = crate_tree();
    assert_eq!(
        line_in(
            &t,
            "cargo test",
            "tests/cart.rs",
            "tests/cart.rs::total_keeps_the_tip"
        ),
        "cargo test --test cart total_keeps_the_tip -- --exact"
    );
    // A module of the library: `--lib`, the name under its module path.
    assert_eq!(
        line_in(
            &t,
            "cargo test --all-features -q -- --nocapture",
            "src/money.rs",
            "tests::rounds"
        ),
        "cargo test --all-features --lib money::tests::rounds -- --nocapture --exact"
    );
    assert_eq!(
        line_in(&t, "cargo test", "src/lib.rs", "src/lib.rs::tests::f2"),
        "cargo test --lib tests::f2 -- --exact"
    );
    assert_eq!(
        line_in(&t, "cargo test", "src/bin/till.rs", "tests::works"),
        "cargo test --bin till tests::works -- --exact"
    );
    assert_eq!(
        line_in(&t, "cargo test", "src/main.rs", "tests::works"),
        "cargo test --bin shop tests::works -- --exact"
    );
    // A module of a test target in a folder.
    assert_eq!(
        line_in(&t, "cargo test", "tests/it/nested.rs", "deep_works"),
        "cargo test --test it nested::deep_works -- --exact"
    );
    // A workspace member: its manifest; a binary-only package; a [[test]]
    // the manifest names; nextest's TEST keeps the build options only.
    assert_eq!(
        line_in(
            &t,
            "RUST_LOG=off cargo +stable nextest run --workspace --features x --profile ci -E 'test(a)'",
            "crates/api/src/routes.rs",
            "tests::f4"
        ),
        "RUST_LOG=off cargo +stable test --features x --manifest-path crates/api/Cargo.toml --bin api-server routes::tests::f4 -- --exact"
    );
    assert_eq!(
        line_in(
            &t,
            "cargo test -p api-server --release",
            "crates/api/checks/flows.rs",
            "login"
        ),
        "cargo test --release --manifest-path crates/api/Cargo.toml --test flows login -- --exact"
    );
    // A module two test targets declare runs once per target: refused.
    let why = refused(&t, "cargo test", "tests/common/mod.rs", "helper");
    assert!(
        why.contains("tests/common/mod.rs is in no test target"),
        "{why}"
    );
    let why = refused(&Files::default(), "cargo test", "src/lib.rs", "x");
    assert_eq!(why, "no Cargo.toml with a [package] above src/lib.rs");
}

#[test]
fn pytest_jest_vitest_and_node_select_the_file_and_the_full_name() {
    assert_eq!(
        line(
            "python -m pytest -q -n 4 --cov src tests/",
            "tests/test_cart.py",
            "tests/test_cart.py::TestCart::test_total"
        ),
        "python -m pytest -q -n 4 --cov src -p no:cacheprovider -o junit_family=xunit1 --junitxml=/p/.pipeline/verify-1-F1.report.xml -v -v tests/test_cart.py::TestCart::test_total"
    );
    let i = inv_in(
        &Files::default(),
        "pytest -v",
        "tests/test_a.py",
        "test_x[a b-1]",
    );
    assert_eq!(
        i.invocation.args.last().unwrap(),
        "tests/test_a.py::test_x[a b-1]"
    );
    assert!(!i.selected.every_parametrization);
    let i = inv_in(&Files::default(), "pytest", "tests/test_a.py", "test_x");
    assert!(i.selected.every_parametrization);
    assert_eq!(i.report.unwrap().format, ReportFormat::JunitXml);
    assert_eq!(
        line(
            "npx jest --ci --maxWorkers 2 src/",
            "src/cart.test.js",
            "src/cart.test.js::total > keeps cents (1.5)"
        ),
        r"npx --no -- jest --ci --maxWorkers 2 --verbose --json --outputFile=/p/.pipeline/verify-1-F1.report.json --runTestsByPath src/cart.test.js -t '^total keeps cents \(1\.5\)$'"
    );
    assert_eq!(
        line(
            "pnpm vitest --pool threads --reporter dot",
            "web/a.test.ts",
            "sum"
        ),
        "pnpm vitest run --pool threads --reporter dot --reporter=json --outputFile.json=/p/.pipeline/verify-1-F1.report.json web/a.test.ts -t '^sum$'"
    );
    assert_eq!(
        line(
            "node --test --test-reporter spec --import ./setup.mjs --require x.cjs --test-concurrency 2 test/",
            "test/cart.test.mjs",
            "cart > adds.up"
        ),
        r"node --test-reporter spec --import ./setup.mjs --require x.cjs --test-concurrency 2 --test --test-reporter-destination=stdout --test-reporter=tap --test-reporter-destination=/p/.pipeline/verify-1-F1.report.tap '--test-name-pattern=^adds\.up$' test/cart.test.mjs"
    );
}

#[test]
fn vitest_excludes_the_files_its_path_filter_would_also_run() {
    let t = Files::with(&[
        ("src/cart.test.ts", ""),
        ("web/src/cart.test.ts", ""),
        ("we[b]/src/cart.test.ts", ""),
        ("src/cart.test.tsx", ""),
        ("src/other.test.ts", ""),
    ]);
    assert_eq!(
        line_in(
            &t,
            "vitest",
            "src/cart.test.ts",
            "cart > total > keeps the tip"
        ),
        r"vitest run --reporter=verbose --reporter=json --outputFile.json=/p/.pipeline/verify-1-F1.report.json --exclude src/cart.test.tsx --exclude 'we\[b\]/src/cart.test.ts' --exclude web/src/cart.test.ts src/cart.test.ts -t '^cart total keeps the tip$'"
    );
}

#[test]
fn node_widens_to_a_subtests_parents_only_when_asked() {
    let i = inv_in(
        &Files::default(),
        "node --test",
        "test/a.test.mjs",
        "parent test > sub (x)",
    );
    assert_eq!(
        i.invocation
            .args
            .iter()
            .filter(|a| a.starts_with("--test-name-pattern"))
            .collect::<Vec<_>>(),
        [r"--test-name-pattern=^sub \(x\)$"]
    );
    let wide = widen(&i).unwrap();
    let patterns: Vec<&String> = wide
        .invocation
        .args
        .iter()
        .filter(|a| a.starts_with("--test-name-pattern"))
        .collect();
    assert_eq!(
        patterns,
        [
            r"--test-name-pattern=^sub \(x\)$",
            "--test-name-pattern=^parent test$"
        ]
    );
    assert_eq!(wide.invocation.args.last().unwrap(), "test/a.test.mjs");
    let top = inv_in(&Files::default(), "node --test", "test/a.test.mjs", "top");
    assert!(widen(&top).is_none());
}

#[test]
fn go_gradle_and_xcodebuild_name_the_test_their_way() {
    assert_eq!(
        line(
            "go test -race -tags integration -count 3 ./...",
            "internal/cart/cart_test.go",
            "internal/cart/cart_test.go::TestTotal/rounds [half] up"
        ),
        r"go test -race -tags integration -count=1 -json -run '^TestTotal$/^rounds_\[half\]_up$' ./internal/cart"
    );
    assert_eq!(
        line("go test ./... -args -flag", "cart_test.go", "TestX"),
        "go test -count=1 -json -run '^TestX$' . -args -flag"
    );
    let nested = Files::with(&[("svc/go.mod", "module x\n")]);
    assert_eq!(
        line_in(&nested, "go test ./...", "svc/cart/cart_test.go", "TestX"),
        "go -C svc test -count=1 -json -run '^TestX$' ./cart"
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
fn options_loopwatch_replaces_are_named() {
    let c = detect("npx jest --watch -t slow --ci src/a.test.js").unwrap();
    assert_eq!(c.replaced, ["--watch", "-t", "slow", "src/a.test.js"]);
    let c = detect("vitest watch --reporter verbose -t x").unwrap();
    assert_eq!(c.replaced, ["watch", "-t", "x"]);
    assert_eq!(c.option_words(), ["--reporter", "verbose"]);
}

#[test]
fn an_unknown_runner_or_a_shell_script_is_a_clear_error_never_a_guess() {
    for test in [
        "make test",
        "npm test",
        "",
        "bash -c 'echo \"",
        "./run-tests.sh",
        "sh -c pytest",
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
    for (test, what) in [
        ("cargo test && npm test", "`&`"),
        ("pytest; rm -rf /", "`;`"),
        ("pytest $PYTEST_ARGS", "`$`"),
        ("pytest \"$(cat args)\"", "`$`"),
        ("jest | tee log", "`|`"),
        ("vitest > out.log", "redirection"),
        ("pytest `args`", "backtick"),
    ] {
        let why = detect(test).unwrap_err().to_string();
        assert!(
            why.contains("shell syntax") && why.contains(what),
            "{test}: {why}"
        );
    }
    // Quoted, the same characters are a runner's argument.
    let c = detect("pytest -k 'a and not b;c' -o 'x=$y'").unwrap();
    assert_eq!(c.runner, Runner::Pytest);
}

#[test]
fn hostile_files_and_names_are_refused_or_passed_as_one_word() {
    let t = crate_tree();
    let cmd = detect("cargo test").unwrap();
    for (file, name) in [
        ("../x/tests/a.rs", "a"),
        ("/etc/tests/a.rs", "a"),
        ("-p/tests/a.rs", "a"),
        ("tests//a.rs", "a"),
        ("tests/cart.rs", "--nocapture"),
        ("tests/cart.rs", "a\nb"),
        ("tests/cart.rs", "tests/b.rs::a"),
        ("tests/cart.rs", "tests/cart.rs::"),
        ("", "a"),
    ] {
        assert!(
            matches!(
                invocation(&cmd, &t, file, name, Path::new(REPORT)),
                Err(SingleTestError::BadReference(_))
            ),
            "{file:?} {name:?}"
        );
    }
    let long = "x".repeat(3000);
    assert!(invocation(&cmd, &t, "tests/cart.rs", &long, Path::new(REPORT)).is_err());
    let g = detect("gradle test").unwrap();
    assert!(invocation(&g, &t, "src/test/java/A.java", "*", Path::new(REPORT)).is_err());
    // A name with shell syntax is one argv word, never shell text.
    let inv = inv_in(&t, "cargo test", "tests/cart.rs", "a; rm -rf / $HOME `id`");
    assert_eq!(inv.invocation.args[3], "a; rm -rf / $HOME `id`");
    // Regular-expression syntax, quotes, `$`, unicode and a thousand
    // characters are escaped, never read as a pattern.
    let name = format!("a.b*(c|d) [e] 'f' \"g\" $h ünï {}", "z".repeat(1000));
    let inv = inv_in(&t, "npx jest", "src/a.test.js", &name);
    let pattern = inv.invocation.args.last().unwrap();
    assert!(
        pattern.starts_with(r#"^a\.b\*\(c\|d\) \[e\] 'f' "g" \$h ünï zzz"#),
        "{pattern}"
    );
    assert!(pattern.ends_with("z$"));
    let go = inv_in(&t, "go test", "a/a_test.go", "TestA/x.y (z)");
    assert!(
        go.invocation
            .args
            .contains(&r"^TestA$/^x\.y_\(z\)$".to_string()),
        "{:?}",
        go.invocation.args
    );
}
