//! The one-test command line of every runner, and what is refused.

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
