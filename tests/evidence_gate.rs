//! `loopwatch evidence-gate` over real logs of each runner (made by
//! tests/fixtures/checks/generate.sh; gradle's and xcodebuild's are written
//! by hand, see the fixtures' README): passed, failed, none ran, named test
//! absent, cut before its end, interrupted, build and collection errors,
//! errors outside the tests, namesakes in other files, concatenated runs,
//! garbage. Exact stdout and exit code.

use std::path::PathBuf;
use std::process::Command;

mod support;

fn fixture(name: &str) -> PathBuf {
    support::fixture_path(&format!("checks/evidence/{name}"))
}

/// `loopwatch evidence-gate --claim test --status <status> --log <log>`.
fn claim(status: &str, log: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_loopwatch"));
    cmd.args([
        "evidence-gate",
        "--claim",
        "test",
        "--status",
        status,
        "--log",
    ])
    .arg(log);
    cmd
}

/// Runs the gate on `log` (a path); returns (exit code, stdout, stderr).
fn gate_at(log: &std::path::Path, status: &str, test: Option<&str>) -> (i32, String, String) {
    let mut cmd = claim(status, log);
    if let Some(t) = test {
        cmd.args(["--test", t]);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn gate(log: &str, status: &str, test: Option<&str>) -> (i32, String, String) {
    gate_at(&fixture(log), status, test)
}

/// Asserts the exit code and the one stdout line.
#[track_caller]
fn check(log: &str, status: &str, test: Option<&str>, code: i32, line: &str) {
    assert_eq!(
        gate(log, status, test),
        (code, format!("{line}\n"), String::new()),
        "{log} {status} {test:?}"
    );
}

const RUNNERS: [(&str, &str, &str, &str); 10] = [
    // (prefix, counts of the passed log, counts of the failed log, counts of the none log)
    (
        "cargo",
        "cargo test: 3 passed, 0 failed, 1 skipped",
        "cargo test: 9 passed, 1 failed, 1 skipped",
        "cargo test: 0 passed, 0 failed, 0 skipped",
    ),
    (
        "nextest",
        "cargo-nextest: 3 passed, 0 failed, 1 skipped",
        "cargo-nextest: 9 passed, 1 failed, 1 skipped",
        "cargo-nextest: 0 passed, 0 failed, 11 skipped",
    ),
    (
        "pytest",
        "pytest: 3 passed, 0 failed, 2 skipped",
        "pytest: 6 passed, 2 failed, 2 skipped, 1 error",
        "pytest: 0 passed, 0 failed, 0 skipped",
    ),
    (
        "jest",
        "jest: 2 passed, 0 failed, 0 skipped",
        "jest: 8 passed, 1 failed, 2 skipped",
        "jest: 0 passed, 0 failed, 0 skipped",
    ),
    (
        "vitest",
        "vitest: 2 passed, 0 failed, 0 skipped",
        "vitest: 10 passed, 1 failed, 2 skipped",
        "vitest: 0 passed, 0 failed, 0 skipped",
    ),
    (
        "go",
        "go test: 1 passed, 0 failed, 0 skipped",
        "go test: 8 passed, 3 failed, 1 skipped",
        "go test: 0 passed, 0 failed, 0 skipped",
    ),
    (
        "gradle",
        "gradle: 2 passed, 0 failed, 1 skipped",
        "gradle: 1 passed, 1 failed, 0 skipped",
        "gradle: 0 passed, 0 failed, 0 skipped",
    ),
    (
        "xcodebuild",
        "xcodebuild: 2 passed, 0 failed, 0 skipped",
        "xcodebuild: 1 passed, 1 failed, 0 skipped",
        "xcodebuild: 0 passed, 0 failed, 0 skipped",
    ),
    (
        "node-spec",
        "node --test: 1 passed, 0 failed, 0 skipped",
        "node --test: 5 passed, 4 failed, 2 skipped",
        "node --test: 0 passed, 0 failed, 9 skipped",
    ),
    (
        "node-tap",
        "node --test: 1 passed, 0 failed, 0 skipped",
        "node --test: 5 passed, 4 failed, 2 skipped",
        "node --test: 0 passed, 0 failed, 9 skipped",
    ),
];

#[test]
fn every_runner_passed_failed_and_none_ran() {
    for (runner, pass, fail, none) in RUNNERS {
        let ok = format!("{runner}-passed.log");
        let bad = format!("{runner}-failed.log");
        let empty = format!("{runner}-none.log");
        // Without a test named, the line is the verdict and the log's tally.
        let run = |log: &str, status: &str, code, verdict: &str, tally: &str| {
            check(log, status, None, code, &format!("{verdict} ({tally})"));
        };
        run(&ok, "passed", 0, "proven: the run passed", pass);
        run(&ok, "failed", 1, "not proven: no test failed", pass);
        run(&bad, "failed", 0, "proven: the run failed", fail);
        run(&bad, "passed", 1, "not proven: the run has failures", fail);
        run(&empty, "passed", 1, "not proven: no test ran", none);
        run(&empty, "failed", 1, "not proven: no test ran", none);
        check(
            &ok,
            "passed",
            Some("no_such_test"),
            1,
            &format!("not proven: test no_such_test is not in the log ({pass})"),
        );
    }
}

#[test]
fn named_tests_are_found_by_file_and_full_name() {
    let cases = [
        (
            "cargo-passed.log",
            "src/money.rs::tests::rounds_half_up",
            "money::tests::rounds_half_up",
        ),
        (
            "cargo-passed.log",
            "src/lib.rs::money::tests::works",
            "money::tests::works",
        ),
        (
            "nextest-passed.log",
            "src/money.rs::tests::works",
            "money::tests::works",
        ),
        (
            "pytest-passed.log",
            "tests/test_cart.py::test_param[a b-1]",
            "tests/test_cart.py::test_param[a b-1]",
        ),
        (
            "pytest-passed.log",
            "tests/test_cart.py::TestCart::TestNested::test_deep",
            "tests/test_cart.py::TestCart::TestNested::test_deep",
        ),
        (
            "jest-passed.log",
            "web/src/cart.test.js::cart > total > keeps the tip",
            "web/src/cart.test.js::cart::total::keeps the tip",
        ),
        (
            "jest-passed.log",
            "src/invoice.test.js::prints (a|b) $1 \"quoted\" ünïcode",
            "src/invoice.test.js::prints (a|b) $1 \"quoted\" ünïcode",
        ),
        (
            "vitest-passed.log",
            "web/src/cart.test.ts::cart > total > keeps the tip",
            "web/src/cart.test.ts::cart::total::keeps the tip",
        ),
        (
            "go-passed.log",
            "invoice/invoice_test.go::TestTotal",
            "TestTotal",
        ),
        (
            "go-one-subtest-passed.log",
            "cart/cart_test.go::TestDiscount/nested/deep one",
            "TestDiscount/nested/deep_one",
        ),
        (
            "gradle-passed.log",
            "src/test/java/CartTest.java::capsAtFifty",
            "CartTest::DiscountTest::capsAtFifty",
        ),
        (
            "xcodebuild-passed.log",
            "ShopTests/CartTests/testTotalRoundsHalfUp",
            "ShopTests.CartTests::testTotalRoundsHalfUp",
        ),
        (
            "node-spec-passed.log",
            "cart > total > keeps the tip",
            "cart::total::keeps the tip",
        ),
        (
            "node-tap-passed.log",
            "total > keeps the tip",
            "cart::total::keeps the tip",
        ),
    ];
    for (log, reference, seen) in cases {
        let (code, out, _) = gate(log, "passed", Some(reference));
        assert_eq!(code, 0, "{log} {reference}: {out}");
        assert!(
            out.ends_with(&format!("; test {seen} passed\n")),
            "{log}: {out}"
        );
    }
}

#[test]
fn a_failed_claim_needs_that_very_test_failing() {
    let failing = [
        ("cargo-failed.log", "tests/cart.rs::total_keeps_the_tip"),
        ("nextest-failed.log", "tests/cart.rs::total_keeps_the_tip"),
        (
            "pytest-failed.log",
            "tests/test_cart.py::TestCart::test_keeps_the_tip",
        ),
        (
            "pytest-failed.log",
            "tests/test_cart.py::test_param[x [y]-2]",
        ),
        (
            "pytest-failed-progress.log",
            "tests/test_cart.py::TestCart::test_keeps_the_tip",
        ),
        (
            "jest-failed.log",
            "src/cart.test.js::cart > total > keeps the tip",
        ),
        (
            "jest-failed-quiet.log",
            "src/cart.test.js::cart > total > keeps the tip",
        ),
        (
            "vitest-failed.log",
            "src/cart.test.ts::cart > total > keeps the tip",
        ),
        (
            "vitest-failed-verbose.log",
            "src/cart.test.ts::cart > total > keeps the tip",
        ),
        (
            "go-failed.log",
            "cart/cart_test.go::TestDiscount/rounds [half] up",
        ),
        (
            "go-json-failed.log",
            "cart/cart_test.go::TestDiscount/rounds [half] up",
        ),
        ("gradle-failed.log", "totalRoundsHalfUp"),
        ("xcodebuild-failed.log", "testTotalRoundsHalfUp"),
        ("node-spec-failed.log", "cart > total > keeps the tip"),
        ("node-tap-failed.log", "parent test > subtest fails"),
    ];
    for (log, reference) in failing {
        assert_eq!(
            gate(log, "failed", Some(reference)).0,
            0,
            "{log} {reference}"
        );
    }
    check(
        "cargo-failed.log",
        "failed",
        Some("tests/cart.rs::works"),
        1,
        "not proven: test works passed, not failed",
    );
    check(
        "gradle-failed.log",
        "failed",
        Some("capsAtFifty"),
        1,
        "not proven: test CartTest::DiscountTest::capsAtFifty passed, not failed",
    );
    // pytest without -v names only the failures: a passing test cannot be shown.
    check(
        "pytest-failed-quiet.log",
        "failed",
        Some("tests/test_cart.py::test_works"),
        1,
        "not proven: test tests/test_cart.py::test_works is not in the log (pytest: 5 passed, 2 failed, 2 skipped, 1 error)",
    );
    // A todo and a timed-out (cancelled) node test.
    check(
        "node-spec-failed.log",
        "failed",
        Some("is to do"),
        1,
        "not proven: test cart::is to do skipped, not failed",
    );
    check(
        "node-tap-failed.log",
        "failed",
        Some("slow"),
        0,
        "proven: the run failed (node --test: 5 passed, 4 failed, 2 skipped); test slow failed",
    );
}

#[test]
fn a_file_part_is_proven_only_by_lines_that_name_that_file() {
    let namesakes = [
        (
            "cargo-failed.log",
            "tests/invoice.rs::works",
            "not proven: test works passed, not failed",
        ),
        (
            "nextest-failed.log",
            "tests/invoice.rs::works",
            "not proven: test works passed, not failed",
        ),
        (
            "pytest-failed.log",
            "tests/sub/test_cart.py::test_works",
            "not proven: test tests/sub/test_cart.py::test_works passed, not failed",
        ),
        (
            "jest-failed.log",
            "web/src/cart.test.js::cart > total > keeps the tip",
            "not proven: test web/src/cart.test.js::cart::total::keeps the tip passed, not failed",
        ),
        (
            "go-failed.log",
            "invoice/invoice_test.go::TestTotal",
            "not proven: test TestTotal passed, not failed",
        ),
        (
            "vitest-failed-verbose.log",
            "web/src/cart.test.ts::cart > total > keeps the tip",
            "not proven: test web/src/cart.test.ts::cart::total::keeps the tip passed, not failed",
        ),
        // The default reporter lists a passing file's tests by its name only.
        (
            "vitest-failed.log",
            "web/src/cart.test.ts::cart > total > keeps the tip",
            "not proven: test web/src/cart.test.ts::cart > total > keeps the tip is not in the log (vitest: 10 passed, 1 failed, 2 skipped)",
        ),
        // node names no file: two files' namesakes cannot be told apart.
        (
            "node-spec-two-files.log",
            "other/cart.test.mjs::cart > total > keeps the tip",
            "not proven: test other/cart.test.mjs::cart > total > keeps the tip is not in the log (node --test: 6 passed, 4 failed, 2 skipped)",
        ),
    ];
    for (log, reference, line) in namesakes {
        check(log, "failed", Some(reference), 1, line);
    }
    // jest's quiet output names the failing file only.
    check(
        "jest-failed-quiet.log",
        "failed",
        Some("web/src/cart.test.js::cart > total > keeps the tip"),
        1,
        "not proven: test web/src/cart.test.js::cart > total > keeps the tip is not in the log (jest: 7 passed, 1 failed, 2 skipped)",
    );
}

#[test]
fn loopwatchs_own_node_run_names_its_file_in_its_last_line() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("verify-1-F1.test.log");
    let mut text = std::fs::read_to_string(fixture("node-one-failed.log")).unwrap();
    text.push_str("\n[loopwatch: `node --test --test-reporter=spec --test-reporter-destination=stdout '--test-name-pattern=^keeps the tip$' test/cart.test.mjs` exited with status 1 after 0.4 s]\n");
    std::fs::write(&log, text).unwrap();
    assert_eq!(
        gate_at(
            &log,
            "failed",
            Some("test/cart.test.mjs::cart > total > keeps the tip")
        )
        .1,
        "proven: the run failed (node --test: 2 passed, 1 failed, 6 skipped); test test/cart.test.mjs::cart::total::keeps the tip failed\n"
    );
    assert_eq!(
        gate_at(
            &log,
            "failed",
            Some("other/cart.test.mjs::cart > total > keeps the tip")
        )
        .1,
        "not proven: test other/cart.test.mjs::cart > total > keeps the tip is not in the log (node --test: 2 passed, 1 failed, 6 skipped)\n"
    );
}

#[test]
fn a_run_cut_before_its_end_proves_nothing_in_every_runner() {
    let cut = [
        (
            "cargo-cut.log",
            "src/lib.rs::money::tests::works",
            "cargo test: 1 passed, 0 failed, 0 skipped",
        ),
        (
            "nextest-cut.log",
            "tests/cart.rs::total_keeps_the_tip",
            "cargo-nextest: 4 passed, 1 failed, 0 skipped",
        ),
        (
            "pytest-cut.log",
            "tests/test_cart.py::TestCart::test_keeps_the_tip",
            "pytest: 4 passed, 2 failed, 0 skipped",
        ),
        (
            "jest-cut.log",
            "web/src/cart.test.js::cart > total > keeps the tip",
            "jest: 1 passed, 0 failed, 0 skipped",
        ),
        (
            "vitest-cut.log",
            "web/src/cart.test.ts::cart > total > keeps the tip",
            "vitest: 0 passed, 0 failed, 0 skipped",
        ),
        (
            "go-cut.log",
            "cart/cart_test.go::TestTotalNoTip",
            "go test: 1 passed, 1 failed, 0 skipped",
        ),
        (
            "go-json-cut.log",
            "cart/cart_test.go::TestTotalNoTip",
            "go test: 1 passed, 1 failed, 0 skipped",
        ),
        (
            "node-spec-cut.log",
            "cart > total > keeps the tip",
            "node --test: 1 passed, 0 failed, 0 skipped",
        ),
    ];
    for (log, reference, tally) in cut {
        let line = format!("not proven: the run was cut before its end ({tally})");
        for status in ["passed", "failed"] {
            check(log, status, None, 1, &line);
            check(log, status, Some(reference), 1, &line);
        }
    }
    // gradle and xcodebuild: their logs without the closing lines.
    let dir = tempfile::tempdir().unwrap();
    for (log, until, tally) in [
        (
            "gradle-passed.log",
            "BUILD SUCCESSFUL",
            "gradle: 2 passed, 0 failed, 1 skipped",
        ),
        (
            "xcodebuild-passed.log",
            "** TEST SUCCEEDED **",
            "xcodebuild: 2 passed, 0 failed, 0 skipped",
        ),
    ] {
        let text = std::fs::read_to_string(fixture(log)).unwrap();
        let cut_at = text.find(until).unwrap();
        let path = dir.path().join(log);
        std::fs::write(&path, &text[..cut_at]).unwrap();
        assert_eq!(
            gate_at(&path, "passed", None).1,
            format!("not proven: the run was cut before its end ({tally})\n")
        );
    }
}

#[test]
fn an_error_outside_the_tests_means_the_run_failed() {
    let outside = "not proven: the run reported a failure outside its tests: a build that failed, a suite that did not run or an error after the tests";
    for (log, tally) in [
        // vitest: `Errors  1 error` (an unhandled error after the tests passed).
        (
            "vitest-unhandled.log",
            "vitest: 2 passed, 0 failed, 0 skipped",
        ),
        (
            "vitest-one-unhandled.log",
            "vitest: 1 passed, 0 failed, 1 skipped",
        ),
        // vitest and jest: a test file that does not load, beside a passing one.
        (
            "vitest-import-error.log",
            "vitest: 1 passed, 0 failed, 0 skipped",
        ),
        (
            "jest-suite-error.log",
            "jest: 1 passed, 0 failed, 0 skipped",
        ),
    ] {
        check(log, "passed", None, 1, &format!("{outside} ({tally})"));
    }
    check(
        "vitest-unhandled.log",
        "passed",
        Some("src/leak.test.ts::passes but throws later"),
        1,
        &format!("{outside} (vitest: 2 passed, 0 failed, 0 skipped)"),
    );
    // go: a package that does not build, beside packages that ran.
    check(
        "go-build-failed.log",
        "passed",
        Some("invoice/invoice_test.go::TestTotal"),
        1,
        "not proven: the run has failures (go test: 9 passed, 2 failed, 1 skipped)",
    );
}

#[test]
fn a_build_or_collection_error_is_no_test_ran_in_every_runner() {
    let cases = [
        (
            "pytest-collection-error.log",
            "pytest: 0 passed, 0 failed, 0 skipped, 1 error",
        ),
        (
            "pytest-one-collection-error.log",
            "pytest: 0 passed, 0 failed, 0 skipped, 1 error",
        ),
        (
            "cargo-build-error.log",
            "cargo test: 0 passed, 0 failed, 0 skipped",
        ),
        (
            "cargo-one-build-error.log",
            "cargo test: 0 passed, 0 failed, 0 skipped",
        ),
        (
            "go-one-build-failed.log",
            "go test: 0 passed, 0 failed, 0 skipped",
        ),
        (
            "gradle-compile-failed.log",
            "gradle: 0 passed, 0 failed, 0 skipped",
        ),
        (
            "xcodebuild-build-failed.log",
            "xcodebuild: 0 passed, 0 failed, 0 skipped",
        ),
        (
            "vitest-one-import-error.log",
            "vitest: 0 passed, 0 failed, 0 skipped",
        ),
        (
            "jest-one-suite-error.log",
            "jest: 0 passed, 0 failed, 0 skipped",
        ),
        (
            "node-spec-crash.log",
            "node --test: 0 passed, 0 failed, 0 skipped",
        ),
        (
            "node-tap-crash.log",
            "node --test: 0 passed, 0 failed, 0 skipped",
        ),
    ];
    for (log, tally) in cases {
        for status in ["failed", "passed"] {
            check(
                log,
                status,
                None,
                1,
                &format!("not proven: no test ran ({tally})"),
            );
        }
    }
    // The crashed file's own "test" is not a test that failed.
    check(
        "node-spec-crash.log",
        "failed",
        Some("test/broken.test.mjs"),
        1,
        "not proven: no test ran (node --test: 0 passed, 0 failed, 0 skipped)",
    );
}

#[test]
fn an_interrupted_pytest_session_proves_nothing() {
    for log in ["pytest-interrupted.log", "pytest-exit.log"] {
        let interrupted = "not proven: the run was interrupted before its end (pytest: 1 passed, 0 failed, 0 skipped)";
        check(log, "passed", None, 1, interrupted);
        check(log, "failed", None, 1, interrupted);
    }
    check(
        "pytest-interrupted.log",
        "passed",
        Some("tests/test_slow.py::test_quick"),
        1,
        "not proven: the run was interrupted before its end (pytest: 1 passed, 0 failed, 0 skipped)",
    );
    // -x stops the session on purpose: not an interruption.
    check(
        "pytest-maxfail.log",
        "failed",
        Some("tests/test_cart.py::TestCart::test_keeps_the_tip"),
        0,
        "proven: the run failed (pytest: 0 passed, 1 failed, 0 skipped); test tests/test_cart.py::TestCart::test_keeps_the_tip failed",
    );
}

#[test]
fn pytest_errors_and_xfails_are_neither_passes_nor_failures() {
    let tally = "pytest: 6 passed, 2 failed, 2 skipped, 1 error";
    check(
        "pytest-failed.log",
        "failed",
        Some("tests/test_cart.py::test_setup_error"),
        1,
        "not proven: test tests/test_cart.py::test_setup_error errored (a setup, teardown or collection error: not a test result), not failed",
    );
    check(
        "pytest-failed.log",
        "failed",
        Some("tests/test_cart.py::test_known_bug"),
        1,
        "not proven: test tests/test_cart.py::test_known_bug xfailed (an expected failure is not a failure), not failed",
    );
    check(
        "pytest-failed.log",
        "passed",
        Some("tests/test_cart.py::test_works"),
        1,
        &format!("not proven: the run has failures ({tally})"),
    );
    let tally = "pytest: 1 passed, 0 failed, 0 skipped, 1 error";
    check(
        "pytest-collection-error-continue.log",
        "failed",
        None,
        1,
        &format!("not proven: no test failed ({tally})"),
    );
    check(
        "pytest-collection-error-continue.log",
        "passed",
        None,
        1,
        &format!("not proven: the run has errors that are not test results ({tally})"),
    );
}

#[test]
fn a_parametrized_pytest_test_is_named_with_or_without_its_parameters() {
    // Every parametrization must agree.
    check(
        "pytest-one-param-all.log",
        "failed",
        Some("tests/test_cart.py::test_param"),
        1,
        "not proven: test tests/test_cart.py::test_param[a b-1] passed, not failed",
    );
    check(
        "pytest-one-param-all.log",
        "failed",
        Some("tests/test_cart.py::test_param[x [y]-2]"),
        0,
        "proven: the run failed (pytest: 2 passed, 1 failed, 0 skipped); test tests/test_cart.py::test_param[x [y]-2] failed",
    );
    check(
        "pytest-failed.log",
        "failed",
        Some("tests/test_cart.py::test_param[c::d-3]"),
        1,
        "not proven: test tests/test_cart.py::test_param[c::d-3] passed, not failed",
    );
}

#[test]
fn a_coverage_threshold_unmet_does_not_unprove_a_passing_test() {
    check(
        "pytest-cov-unmet.log",
        "passed",
        Some("tests/sub/test_cart.py::test_works"),
        0,
        "proven: the run passed (pytest: 1 passed, 0 failed, 0 skipped; coverage below its threshold, not a test result); test tests/sub/test_cart.py::test_works passed",
    );
}

#[test]
fn a_fixed_test_run_again_counts_and_a_rerun_of_others_proves_no_pass() {
    // The fix, then the same run again: the last run counts.
    let again = [
        (
            "cargo-two-runs.log",
            "tests/cart.rs::total_keeps_the_tip",
            "cargo test: 3 passed, 0 failed, 0 skipped",
            "total_keeps_the_tip",
        ),
        (
            "nextest-two-runs.log",
            "tests/cart.rs::total_keeps_the_tip",
            "cargo-nextest: 1 passed, 0 failed, 2 skipped",
            "total_keeps_the_tip",
        ),
        (
            "pytest-two-runs.log",
            "tests/test_cart.py::TestCart::test_keeps_the_tip",
            "pytest: 3 passed, 0 failed, 0 skipped",
            "tests/test_cart.py::TestCart::test_keeps_the_tip",
        ),
        (
            "jest-two-runs.log",
            "src/cart.test.js::cart > total > keeps the tip",
            "jest: 8 passed, 0 failed, 2 skipped",
            "src/cart.test.js::cart::total::keeps the tip",
        ),
        (
            "vitest-two-runs.log",
            "src/cart.test.ts::cart > total > keeps the tip",
            "vitest: 8 passed, 0 failed, 2 skipped",
            "src/cart.test.ts::cart::total::keeps the tip",
        ),
        (
            "go-two-runs.log",
            "cart/cart_test.go::TestTotal",
            "go test: 1 passed, 0 failed, 0 skipped",
            "TestTotal",
        ),
        (
            "node-spec-two-runs.log",
            "cart > total > keeps the tip",
            "node --test: 1 passed, 0 failed, 8 skipped",
            "cart::total::keeps the tip",
        ),
    ];
    for (log, reference, tally, seen) in again {
        let tally = format!("{tally}; the last of 2 runs in the log");
        check(
            log,
            "passed",
            None,
            0,
            &format!("proven: the run passed ({tally})"),
        );
        check(
            log,
            "passed",
            Some(reference),
            0,
            &format!("proven: the run passed ({tally}); test {seen} passed"),
        );
        // The first run's failure is history, not proof.
        check(
            log,
            "failed",
            Some(reference),
            1,
            &format!("not proven: test {seen} passed, not failed"),
        );
    }
    // A failing run, then a run of other tests only: the failure stands.
    let subset = [
        (
            "cargo-subset-rerun.log",
            "test total_keeps_the_tip",
            "cargo test: 2 passed, 0 failed, 0 skipped",
        ),
        (
            "nextest-subset-rerun.log",
            "test total_keeps_the_tip",
            "cargo-nextest: 3 passed, 0 failed, 1 skipped",
        ),
        (
            "pytest-subset-rerun.log",
            "test tests/test_cart.py::TestCart::test_keeps_the_tip",
            "pytest: 1 passed, 0 failed, 0 skipped",
        ),
        (
            "jest-subset-rerun.log",
            "test src/cart.test.js::cart::total::keeps the tip",
            "jest: 1 passed, 0 failed, 0 skipped",
        ),
        (
            "vitest-subset-rerun.log",
            "test src/cart.test.ts::cart::total::keeps the tip",
            "vitest: 1 passed, 0 failed, 0 skipped",
        ),
        (
            "node-spec-subset-rerun.log",
            "test cart::total::keeps the tip",
            "node --test: 1 passed, 0 failed, 8 skipped",
        ),
    ];
    for (log, failure, tally) in subset {
        check(
            log,
            "passed",
            None,
            1,
            &format!(
                "not proven: {failure} failed in run 1 of the log and no later run passed it ({tally}; the last of 2 runs in the log)"
            ),
        );
    }
    // A test is judged by the last run in which it ran, not by the last run.
    check(
        "pytest-subset-rerun.log",
        "failed",
        Some("tests/test_cart.py::TestCart::test_keeps_the_tip"),
        0,
        "proven: the run failed (pytest: 0 passed, 1 failed, 0 skipped; run 1 of 2 in the log); test tests/test_cart.py::TestCart::test_keeps_the_tip failed",
    );
}

#[test]
fn a_quiet_go_run_proves_packages_but_names_no_test() {
    check(
        "go-passed-quiet.log",
        "passed",
        None,
        0,
        "proven: the run passed (go test: 1 packages passed, 0 failed)",
    );
    check(
        "go-passed-quiet.log",
        "passed",
        Some("invoice/invoice_test.go::TestTotal"),
        1,
        "not proven: test invoice/invoice_test.go::TestTotal is not in the log (go test: 1 packages passed, 0 failed)",
    );
}

#[test]
fn garbage_is_never_proof() {
    for log in [
        "garbage-claims.log",
        "garbage-random.log",
        "garbage-binary.log",
    ] {
        for status in ["passed", "failed"] {
            check(
                log,
                status,
                None,
                1,
                "not proven: no known test runner output in the log",
            );
        }
    }
}

#[test]
fn an_unreadable_log_is_not_proof() {
    let (code, out, _) = gate("no-such.log", "passed", None);
    assert_eq!(code, 1);
    assert!(
        out.starts_with("not proven: cannot read test log ") && out.contains("no-such.log"),
        "{out}"
    );
}

#[test]
fn a_log_that_is_no_regular_file_is_a_usage_error_and_never_blocks() {
    // A folder: refused on the command line, before anything is opened.
    let (code, out, err) = gate("", "passed", None);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("is a folder, not a file"), "{err}");
    // A FIFO no one writes to: opening it for reading must not wait.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("verify-1.test.log");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let mut child = claim("passed", &fifo)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("evidence-gate blocked on a FIFO");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(2));
}

#[test]
fn control_characters_from_the_log_are_never_printed_raw() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("x.log");
    std::fs::write(
        &log,
        "running 1 test\ntest bell\u{7}\u{9b}31m ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n",
    )
    .unwrap();
    let out = claim("passed", &log)
        .args(["--test", "x"])
        .output()
        .unwrap();
    let out = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        out,
        "not proven: test x is not in the log (cargo test: 1 passed, 0 failed, 0 skipped)\n"
    );
    let out = claim("passed", &log)
        .args(["--test", "bell\u{7}\u{9b}31m"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "proven: the run passed (cargo test: 1 passed, 0 failed, 0 skipped); test bell\u{2407}<U+009B>31m passed\n"
    );
}

#[test]
fn usage_errors_exit_2() {
    let bin = env!("CARGO_BIN_EXE_loopwatch");
    let log = fixture("cargo-passed.log");
    for args in [
        "--claim test --status passed",
        "--claim test --status green --log x",
        "--claim build --status passed --log x",
        "--status passed --log x",
    ] {
        let out = Command::new(bin)
            .arg("evidence-gate")
            .args(args.split(' '))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args}");
        assert!(out.stdout.is_empty());
    }
    let out = claim("passed", &log).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn the_help_states_every_rule() {
    let out = Command::new(env!("CARGO_BIN_EXE_loopwatch"))
        .args(["evidence-gate", "--help"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8(out.stdout).unwrap();
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    for needle in [
        "node --test (spec or TAP reporter)",
        "go test (text or -json)",
        "A run cut before its end proves nothing",
        "An interrupted run",
        "is `no test ran` for `passed` and `failed` alike",
        "An error outside the tests",
        "vitest's `Errors N error`",
        "jest's `Test suite failed to run`",
        "go's `[build failed]`",
        "A reference with a file part is proven only by lines that name that file",
        "A pytest ERROR (a fixture's setup or teardown failed) is neither a pass nor a failure",
        "An xfail (an expected failure) is not a failure",
        "(--cov-fail-under) while the tests passed leaves `passed`",
        "a named test is judged by the last run in which it ran",
        "`passed` is not proven while a test that failed in an earlier run has no later pass",
    ] {
        assert!(flat.contains(needle), "--help lacks {needle:?}:\n{help}");
    }
}
