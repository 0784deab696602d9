//! `loopwatch evidence-gate` over realistic logs of each runner: passed,
//! failed, none ran, named test absent, interrupted, build and collection
//! errors, concatenated runs, garbage. Exact stdout and exit code.

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

/// Runs the gate; returns (exit code, stdout, stderr).
fn gate(log: &str, status: &str, test: Option<&str>) -> (i32, String, String) {
    let mut cmd = claim(status, fixture(log));
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
        "cargo test: 1 passed, 1 failed, 0 skipped",
        "cargo test: 0 passed, 0 failed, 0 skipped",
    ),
    (
        "nextest",
        "cargo-nextest: 3 passed, 0 failed, 1 skipped",
        "cargo-nextest: 1 passed, 1 failed, 0 skipped",
        "cargo-nextest: 0 passed, 0 failed, 12 skipped",
    ),
    (
        "pytest",
        "pytest: 2 passed, 0 failed, 1 skipped",
        "pytest: 2 passed, 1 failed, 0 skipped",
        "pytest: 0 passed, 0 failed, 0 skipped",
    ),
    (
        "jest",
        "jest: 2 passed, 0 failed, 1 skipped",
        "jest: 1 passed, 1 failed, 0 skipped",
        "jest: 0 passed, 0 failed, 0 skipped",
    ),
    (
        "vitest",
        "vitest: 2 passed, 0 failed, 0 skipped",
        "vitest: 1 passed, 1 failed, 0 skipped",
        "vitest: 0 passed, 0 failed, 0 skipped",
    ),
    (
        "go",
        "go test: 3 passed, 0 failed, 0 skipped",
        "go test: 1 passed, 1 failed, 0 skipped",
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
        "node --test: 3 passed, 0 failed, 1 skipped",
        "node --test: 5 passed, 1 failed, 2 skipped",
        "node --test: 0 passed, 0 failed, 4 skipped",
    ),
    (
        "node-tap",
        "node --test: 3 passed, 0 failed, 1 skipped",
        "node --test: 5 passed, 1 failed, 2 skipped",
        "node --test: 0 passed, 0 failed, 4 skipped",
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
            Some("tests/x.rs::no_such_test"),
            1,
            &format!("not proven: test tests/x.rs::no_such_test is not in the log ({pass})"),
        );
    }
}

#[test]
fn named_tests_are_found_by_full_name_or_last_segment() {
    let cases = [
        (
            "cargo-passed.log",
            "tests/export_csv.rs::empty_export",
            "empty_export",
        ),
        (
            "cargo-passed.log",
            "src/export/csv.rs::header_order",
            "export::csv::tests::header_order",
        ),
        (
            "nextest-passed.log",
            "tests/export_csv.rs::total_row_rounds_half_up",
            "total_row_rounds_half_up",
        ),
        (
            "pytest-passed.log",
            "tests/test_cart.py::TestDiscount::test_caps_at_fifty",
            "tests/test_cart.py::TestDiscount::test_caps_at_fifty",
        ),
        (
            "jest-passed.log",
            "src/cart.test.js::total rounds half up",
            "src/cart.test.js::total rounds half up",
        ),
        (
            "node-spec-passed.log",
            "test/ok.test.mjs::group > inner > deep passes",
            "group::inner::deep passes",
        ),
        (
            "node-tap-passed.log",
            "total rounds half up",
            "total rounds half up",
        ),
        (
            "vitest-passed.log",
            "src/cart.test.ts::cart::discount caps at fifty",
            "src/cart.test.ts::cart::discount caps at fifty",
        ),
        (
            "go-passed.log",
            "cart/cart_test.go::TestDiscount/caps_at_fifty",
            "TestDiscount/caps_at_fifty",
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
        (
            "cargo-failed.log",
            "tests/export_csv.rs::total_row_rounds_half_up",
        ),
        ("nextest-failed.log", "total_row_rounds_half_up"),
        (
            "pytest-failed.log",
            "tests/test_cart.py::test_total_rounds_half_up",
        ),
        ("jest-failed.log", "total rounds half up"),
        ("vitest-failed.log", "total rounds half up"),
        ("go-failed.log", "TestTotalRoundsHalfUp"),
        ("gradle-failed.log", "totalRoundsHalfUp"),
        ("xcodebuild-failed.log", "testTotalRoundsHalfUp"),
        ("node-spec-failed.log", "group > nested fails"),
        ("node-tap-failed.log", "group > nested fails"),
    ];
    for (log, reference) in failing {
        assert_eq!(gate(log, "failed", Some(reference)).0, 0, "{log}");
    }
    check(
        "cargo-failed.log",
        "failed",
        Some("tests/export_csv.rs::header_order"),
        1,
        "not proven: test header_order passed, not failed",
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
        "pytest-failed.log",
        "failed",
        Some("tests/test_cart.py::test_discount"),
        1,
        "not proven: test tests/test_cart.py::test_discount is not in the log (pytest: 2 passed, 1 failed, 0 skipped)",
    );
}

#[test]
fn a_quiet_go_run_proves_packages_but_names_no_test() {
    check(
        "go-quiet.log",
        "passed",
        None,
        0,
        "proven: the run passed (go test: 2 packages passed, 0 failed)",
    );
    check(
        "go-quiet.log",
        "passed",
        Some("TestTotalRoundsHalfUp"),
        1,
        "not proven: test TestTotalRoundsHalfUp is not in the log (go test: 2 packages passed, 0 failed)",
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
fn an_interrupted_pytest_session_proves_nothing() {
    let interrupted = "not proven: the run was interrupted before its end (pytest: 1 passed, 0 failed, 0 skipped)";
    for log in ["pytest-interrupted.log", "pytest-interrupted-verbose.log"] {
        check(log, "passed", None, 1, interrupted);
        check(
            log,
            "passed",
            Some("tests/test_interrupt.py::test_total_rounds_half_up"),
            1,
            interrupted,
        );
        check(log, "failed", None, 1, interrupted);
    }
}

#[test]
fn a_build_or_collection_error_is_no_test_ran_in_every_runner() {
    let cases = [
        (
            "pytest-collection-error.log",
            "pytest: 0 passed, 0 failed, 0 skipped, 1 error",
        ),
        (
            "cargo-build-error.log",
            "cargo test: 0 passed, 0 failed, 0 skipped",
        ),
        (
            "go-build-failed.log",
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
            "vitest-import-error.log",
            "vitest: 0 passed, 0 failed, 0 skipped",
        ),
        (
            "jest-suite-error.log",
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
        Some("broken.test.mjs"),
        1,
        "not proven: no test ran (node --test: 0 passed, 0 failed, 0 skipped)",
    );
}

#[test]
fn pytest_errors_and_xfails_are_neither_passes_nor_failures() {
    let tally = "pytest: 2 passed, 0 failed, 1 skipped, 1 error";
    check(
        "pytest-setup-error.log",
        "failed",
        Some("tests/test_cart.py::test_saves_cart"),
        1,
        "not proven: test tests/test_cart.py::test_saves_cart errored (a setup, teardown or collection error: not a test result), not failed",
    );
    check(
        "pytest-setup-error.log",
        "passed",
        Some("tests/test_cart.py::test_saves_cart"),
        1,
        "not proven: test tests/test_cart.py::test_saves_cart errored (a setup, teardown or collection error: not a test result), not passed",
    );
    check(
        "pytest-setup-error.log",
        "failed",
        Some("tests/test_cart.py::test_rounds_negative"),
        1,
        "not proven: test tests/test_cart.py::test_rounds_negative xfailed (an expected failure is not a failure), not failed",
    );
    check(
        "pytest-setup-error.log",
        "failed",
        None,
        1,
        &format!("not proven: no test failed ({tally})"),
    );
    // A test that passed beside an error: the test passed, the run did not.
    check(
        "pytest-setup-error.log",
        "passed",
        Some("tests/test_cart.py::test_discount"),
        1,
        &format!("not proven: the run has errors that are not test results ({tally})"),
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
fn a_coverage_threshold_unmet_does_not_unprove_a_passing_test() {
    check(
        "pytest-cov-unmet.log",
        "passed",
        Some("tests/test_total.py::test_total_rounds_half_up"),
        0,
        "proven: the run passed (pytest: 1 passed, 0 failed, 0 skipped; coverage below its threshold, not a test result); test tests/test_total.py::test_total_rounds_half_up passed",
    );
}

#[test]
fn of_concatenated_runs_the_last_one_counts() {
    let cases = [
        (
            "pytest-two-runs.log",
            "tests/test_total.py::test_total_rounds_half_up",
            "pytest: 1 passed, 0 failed, 0 skipped",
            "tests/test_total.py::test_total_rounds_half_up",
        ),
        (
            "cargo-two-runs.log",
            "tests/export_csv.rs::total_row_rounds_half_up",
            "cargo test: 2 passed, 0 failed, 0 skipped",
            "total_row_rounds_half_up",
        ),
        (
            "go-two-runs.log",
            "cart/cart_test.go::TestTotalRoundsHalfUp",
            "go test: 1 passed, 0 failed, 0 skipped",
            "TestTotalRoundsHalfUp",
        ),
        (
            "jest-two-runs.log",
            "src/invoice.test.js::cart > total rounds half up",
            "jest: 1 passed, 0 failed, 0 skipped",
            "src/invoice.test.js::total rounds half up",
        ),
        (
            "node-spec-two-runs.log",
            "group > nested fails",
            "node --test: 6 passed, 0 failed, 2 skipped",
            "group::nested fails",
        ),
    ];
    for (log, reference, tally, seen) in cases {
        let tally = format!("{tally}; the last of 2 runs in the log");
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
}

#[test]
fn jest_references_are_matched_by_file_too() {
    let tally = "jest: 2 passed, 1 failed, 0 skipped";
    check(
        "jest-two-files.log",
        "failed",
        Some("src/cart.test.js::total rounds half up"),
        1,
        "not proven: test src/cart.test.js::total rounds half up passed, not failed",
    );
    check(
        "jest-two-files.log",
        "failed",
        Some("src/invoice.test.js::total rounds half up"),
        0,
        &format!(
            "proven: the run failed ({tally}); test src/invoice.test.js::total rounds half up failed"
        ),
    );
    // Without -v only failures are named: the passing file's test is absent.
    check(
        "jest-two-files-quiet.log",
        "failed",
        Some("src/cart.test.js::total rounds half up"),
        1,
        &format!(
            "not proven: test src/cart.test.js::total rounds half up is not in the log ({tally})"
        ),
    );
    check(
        "jest-two-files-quiet.log",
        "failed",
        Some("invoice.test.js::cart > total rounds half up"),
        0,
        &format!(
            "proven: the run failed ({tally}); test src/invoice.test.js::cart::total rounds half up failed"
        ),
    );
}

#[test]
fn node_nested_skipped_todo_and_name_pattern_runs() {
    for reporter in ["spec", "tap"] {
        let failed = format!("node-{reporter}-failed.log");
        check(
            &failed,
            "failed",
            Some("group > nested passes"),
            1,
            "not proven: test group::nested passes passed, not failed",
        );
        check(
            &failed,
            "failed",
            Some("todo one"),
            1,
            "not proven: test todo one skipped, not failed",
        );
        check(
            &failed,
            "failed",
            Some("parent test > subtest passes"),
            1,
            "not proven: test parent test::subtest passes passed, not failed",
        );
        // A nested name is not another group's test of the same name.
        check(
            &failed,
            "failed",
            Some("inner > nested fails"),
            1,
            "not proven: test inner > nested fails is not in the log (node --test: 5 passed, 1 failed, 2 skipped)",
        );
        let pattern = format!("node-{reporter}-pattern.log");
        check(
            &pattern,
            "passed",
            Some("group > nested passes"),
            0,
            "proven: the run passed (node --test: 1 passed, 0 failed, 6 skipped); test group::nested passes passed",
        );
        check(
            &pattern,
            "passed",
            Some("group > nested fails"),
            1,
            "not proven: test group::nested fails skipped, not passed",
        );
    }
    // The same name in two files, one passing, one failing: never a pass.
    check(
        "node-spec-two-files.log",
        "failed",
        Some("test/a.test.mjs::shared name"),
        1,
        "not proven: test shared name passed, not failed",
    );
    // A timed-out (cancelled) test failed.
    check(
        "node-spec-two-files.log",
        "failed",
        Some("slow"),
        0,
        "proven: the run failed (node --test: 2 passed, 2 failed, 1 skipped); test slow failed",
    );
}

#[test]
fn the_help_states_the_decided_cases() {
    let out = Command::new(env!("CARGO_BIN_EXE_loopwatch"))
        .args(["evidence-gate", "--help"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "node --test (spec or TAP reporter)",
        "An interrupted run",
        "is `no test ran` for `passed` and `failed` alike",
        "A pytest ERROR (a fixture's setup or teardown failed) is neither a pass nor a failure",
        "An xfail (an expected failure) is not a failure",
        "(--cov-fail-under) while the tests passed leaves `passed`",
        "only the last run of\n    each runner counts; the reason printed says `the last of N runs in the log`",
        "`src/a.test.js::name` (jest: the file must be the one the test ran in)",
    ] {
        assert!(help.contains(needle), "--help lacks {needle:?}:\n{help}");
    }
}

#[test]
fn a_parametrized_pytest_test_is_named_with_or_without_its_parameters() {
    check(
        "pytest-parametrized-passed.log",
        "passed",
        Some("tests/test_param.py::test_total_rounds_half_up"),
        0,
        "proven: the run passed (pytest: 3 passed, 0 failed, 0 skipped); test tests/test_param.py::test_total_rounds_half_up[prices0-10.01] passed",
    );
    // Every parametrization must agree.
    check(
        "pytest-parametrized.log",
        "failed",
        Some("tests/test_param.py::test_discount"),
        1,
        "not proven: test tests/test_param.py::test_discount[10] passed, not failed",
    );
    check(
        "pytest-parametrized.log",
        "failed",
        Some("tests/test_param.py::test_discount[200]"),
        0,
        "proven: the run failed (pytest: 4 passed, 1 failed, 0 skipped); test tests/test_param.py::test_discount[200] failed",
    );
}
