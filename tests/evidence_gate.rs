//! `loopwatch evidence-gate` over realistic logs of each runner: passed,
//! failed, none ran, named test absent, garbage. Exact stdout and exit code.

use std::path::PathBuf;
use std::process::Command;

mod support;

fn fixture(name: &str) -> PathBuf {
    support::fixture_path(&format!("checks/evidence/{name}"))
}

/// Runs the gate; returns (exit code, stdout, stderr).
fn gate(log: &str, status: &str, test: Option<&str>) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_loopwatch"));
    cmd.args([
        "evidence-gate",
        "--claim",
        "test",
        "--status",
        status,
        "--log",
    ])
    .arg(fixture(log));
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

const RUNNERS: [(&str, &str, &str, &str); 8] = [
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
];

#[test]
fn every_runner_passed_failed_and_none_ran() {
    for (runner, passed, failed, none) in RUNNERS {
        let ok = format!("{runner}-passed.log");
        let bad = format!("{runner}-failed.log");
        let empty = format!("{runner}-none.log");
        check(
            &ok,
            "passed",
            None,
            0,
            &format!("proven: the run passed ({passed})"),
        );
        check(
            &ok,
            "failed",
            None,
            1,
            &format!("not proven: no test failed ({passed})"),
        );
        check(
            &bad,
            "failed",
            None,
            0,
            &format!("proven: the run failed ({failed})"),
        );
        check(
            &bad,
            "passed",
            None,
            1,
            &format!("not proven: the run has failures ({failed})"),
        );
        check(
            &empty,
            "passed",
            None,
            1,
            &format!("not proven: no test ran ({none})"),
        );
        check(
            &empty,
            "failed",
            None,
            1,
            &format!("not proven: no test ran ({none})"),
        );
        check(
            &ok,
            "passed",
            Some("tests/x.rs::no_such_test"),
            1,
            &format!("not proven: test tests/x.rs::no_such_test is not in the log ({passed})"),
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
    let (code, out, _) = gate("", "passed", None);
    assert_eq!(code, 1);
    assert!(
        out.starts_with("not proven: test log ") && out.ends_with(" is not a regular file\n"),
        "{out}"
    );
}

#[test]
fn usage_errors_exit_2() {
    let bin = env!("CARGO_BIN_EXE_loopwatch");
    let log = fixture("cargo-passed.log");
    let bad: [&[&str]; 4] = [
        &["evidence-gate", "--claim", "test", "--status", "passed"],
        &[
            "evidence-gate",
            "--claim",
            "test",
            "--status",
            "green",
            "--log",
            "x",
        ],
        &[
            "evidence-gate",
            "--claim",
            "build",
            "--status",
            "passed",
            "--log",
            "x",
        ],
        &["evidence-gate", "--status", "passed", "--log", "x"],
    ];
    for args in bad {
        let out = Command::new(bin).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
    }
    let out = Command::new(bin)
        .args([
            "evidence-gate",
            "--claim",
            "test",
            "--status",
            "passed",
            "--log",
        ])
        .arg(&log)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}
