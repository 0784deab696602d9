//! The judge on the real reports and logs of each runner's one-test runs
//! (tests/fixtures/checks, made by its generate.sh).

use std::collections::BTreeMap;
use std::path::Path;

use super::*;
use crate::engine::review::verify_by_test::runner::{Worktree, detect, invocation};

/// A worktree that holds `files` (for cargo's manifest).
struct Files(BTreeMap<&'static str, &'static str>);

impl Worktree for Files {
    fn read(&self, rel: &str) -> Option<String> {
        self.0.get(rel).map(|s| s.to_string())
    }
    fn is_file(&self, rel: &str) -> bool {
        self.0.contains_key(rel)
    }
    fn files(&self) -> Vec<String> {
        Vec::new()
    }
}

fn fixture(rel: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/checks")
        .join(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Judges the fixture run `name` of `runner` as loopwatch's own run of
/// `test_ref` in `file`: its log (with loopwatch's last line) and report.
fn judged(test: &str, name: &str, file: &str, test_ref: &str) -> RunVerdict {
    let tree = Files(BTreeMap::from([
        ("Cargo.toml", "[package]\nname = \"shop\"\n"),
        ("src/lib.rs", ""),
        ("tests/it/main.rs", ""),
    ]));
    let cmd = detect(test).unwrap();
    let inv = invocation(&cmd, &tree, file, test_ref, Path::new("/r/report")).unwrap();
    let mut log = String::from_utf8(fixture(&format!("evidence/{name}.log"))).unwrap();
    log.push_str(&format!(
        "\n[loopwatch: `{}` exited with status 1 after 0.4 s]\n",
        inv.invocation.display()
    ));
    let report = inv.report.as_ref().map(|r| {
        let ext = r.format.extension();
        Ok(fixture(&format!("reports/{name}.{ext}")))
    });
    let project = test
        .split_whitespace()
        .find(|w| ["jest", "vitest", "pytest", "node", "go", "cargo"].contains(w));
    let root = format!("/tmp/loopwatch-fixtures/{}", project.unwrap_or(""));
    judge_run(&inv, &log, report, Path::new(&root), test_ref)
}

#[track_caller]
fn undecided(v: RunVerdict, want: &str) {
    match v {
        RunVerdict::Undecided(why) | RunVerdict::NotRun(why) => {
            assert!(why.contains(want), "{want:?} not in {why:?}")
        }
        other => panic!("{other:?}, not undecided ({want})"),
    }
}

#[test]
fn jest_reports_decide_by_file_full_name_and_case() {
    let j = |name, r| judged("jest", name, "src/cart.test.js", r);
    assert_eq!(
        j("jest-one-failed", "cart > total > keeps the tip"),
        RunVerdict::Failed
    );
    assert_eq!(j("jest-one-case", "cart > Works"), RunVerdict::Passed);
    // jest's -t ignores case: `cart works` ran `cart Works`, not the test asked for.
    assert_eq!(
        j("jest-one-case", "cart > works"),
        RunVerdict::NotRun(
            "jest ran no test by that name (src/cart.test.js::cart > works); it ran src/cart.test.js::cart > Works (passed)".into()
        )
    );
    undecided(
        j("jest-one-alike", "cart > total > works"),
        "other tests named alike ran too, which the run does not tell from src/cart.test.js::cart > total > works: src/cart.test.js::cart total > works (passed)",
    );
    assert_eq!(
        judged(
            "jest",
            "jest-one-special",
            "src/invoice.test.js",
            "prints (a|b) $1 \"quoted\" ünïcode"
        ),
        RunVerdict::Passed
    );
    assert!(matches!(
        j("jest-one-none", "no such test"),
        RunVerdict::NotRun(_)
    ));
    undecided(
        judged("jest", "jest-one-suite-error", "src/broken.test.js", "x"),
        "no test ran: src/broken.test.js failed to run: Cannot find module './missing' from 'src/broken.test.js'",
    );
    assert_eq!(
        judged(
            "jest",
            "jest-one-passed",
            "web/src/cart.test.js",
            "cart > total > keeps the tip"
        ),
        RunVerdict::Passed
    );
}

#[test]
fn vitest_reports_namesake_files_and_errors_after_the_tests() {
    let v = |name, file, r| judged("vitest", name, file, r);
    // vitest's file filter also ran web/src/cart.test.ts: no verdict.
    undecided(
        v(
            "vitest-one-failed",
            "src/cart.test.ts",
            "cart > total > keeps the tip",
        ),
        "web/src/cart.test.ts::cart > total > keeps the tip (passed)",
    );
    undecided(
        v(
            "vitest-one-unhandled",
            "src/leak.test.ts",
            "passes but throws later",
        ),
        "vitest's report says it passed, but its log does not prove it: the run reported a failure outside its tests",
    );
    undecided(
        v("vitest-one-import-error", "src/broken.test.ts", "x"),
        "no test ran: src/broken.test.ts failed to run: Cannot find module './missing'",
    );
    assert_eq!(
        v(
            "vitest-one-special",
            "src/invoice.test.ts",
            "prints (a|b) $1 \"quoted\" ünïcode"
        ),
        RunVerdict::Passed
    );
    assert!(matches!(
        v("vitest-one-case", "src/cart.test.ts", "cart > works"),
        RunVerdict::NotRun(_)
    ));
    undecided(
        v(
            "vitest-one-alike",
            "src/cart.test.ts",
            "cart > total > works",
        ),
        "src/cart.test.ts::cart total > works (passed)",
    );
}

#[test]
fn pytest_reports_parameters_errors_and_skips() {
    let p = |name, r| judged("python3 -m pytest", name, "tests/test_cart.py", r);
    assert_eq!(
        p("pytest-one-failed", "TestCart::test_keeps_the_tip"),
        RunVerdict::Failed
    );
    assert_eq!(
        p("pytest-one-param-failed", "test_param[x [y]-2]"),
        RunVerdict::Failed
    );
    undecided(
        p("pytest-one-param-all", "test_param"),
        "the runs of tests/test_cart.py::test_param disagree: tests/test_cart.py::test_param[a b-1] (passed), tests/test_cart.py::test_param[x [y]-2] (failed), tests/test_cart.py::test_param[c::d-3] (passed)",
    );
    undecided(
        p("pytest-one-setup-error", "test_setup_error"),
        "errored: a fixture's setup or teardown failed",
    );
    assert_eq!(
        p("pytest-one-skipped", "test_skipped"),
        RunVerdict::Skipped("pytest skipped tests/test_cart.py::test_skipped".into())
    );
    assert!(matches!(
        p("pytest-one-none", "test_no_such_test"),
        RunVerdict::NotRun(_)
    ));
    undecided(
        judged(
            "python3 -m pytest",
            "pytest-one-collection-error",
            "tests/test_broken.py",
            "test_x",
        ),
        "no test ran: tests.test_broken could not be collected",
    );
    assert_eq!(
        judged(
            "python3 -m pytest",
            "pytest-one-passed",
            "tests/sub/test_cart.py",
            "test_works"
        ),
        RunVerdict::Passed
    );
}

#[test]
fn go_json_logs_subtests_and_builds() {
    let g = |name, file, r| judged("go test", name, file, r);
    assert_eq!(
        g("go-one-failed", "cart/cart_test.go", "TestTotal"),
        RunVerdict::Failed
    );
    assert_eq!(
        g("go-one-passed", "invoice/invoice_test.go", "TestTotal"),
        RunVerdict::Passed
    );
    assert_eq!(
        g(
            "go-one-subtest",
            "cart/cart_test.go",
            "TestDiscount/rounds [half] up"
        ),
        RunVerdict::Failed
    );
    assert_eq!(
        g(
            "go-one-subtest-passed",
            "cart/cart_test.go",
            "TestDiscount/nested/deep one"
        ),
        RunVerdict::Passed
    );
    assert_eq!(
        g("go-one-twice", "cart/cart_test.go", "TestDiscount/twice"),
        RunVerdict::Passed
    );
    assert!(matches!(
        g("go-one-skipped", "cart/cart_test.go", "TestSkipped"),
        RunVerdict::Skipped(_)
    ));
    assert!(matches!(
        g("go-one-none", "cart/cart_test.go", "TestNoSuchTest"),
        RunVerdict::NotRun(_)
    ));
    undecided(
        g("go-one-build-failed", "broken/broken_test.go", "TestBroken"),
        "no test ran",
    );
}

#[test]
fn cargo_logs_exact_names_builds_and_a_module_run_twice() {
    let c = |name, file, r| judged("cargo test", name, file, r);
    assert_eq!(
        c("cargo-one-failed", "tests/cart.rs", "total_keeps_the_tip"),
        RunVerdict::Failed
    );
    assert_eq!(
        c("cargo-one-passed", "src/lib.rs", "money::tests::works"),
        RunVerdict::Passed
    );
    undecided(
        c("cargo-one-build-error", "tests/it/main.rs", "broken"),
        "no test ran",
    );
    // `cargo test shared_helper_works` ran the module of two targets twice.
    undecided(
        c(
            "cargo-shared-module",
            "tests/it/main.rs",
            "common::shared_helper_works",
        ),
        "ran 2 times in one run",
    );
}

#[test]
fn node_reports_alike_names_subtests_and_crashes() {
    let n = |name, file, r| judged("node --test", name, file, r);
    assert_eq!(
        n(
            "node-one-failed",
            "test/cart.test.mjs",
            "cart > total > keeps the tip"
        ),
        RunVerdict::Failed
    );
    assert_eq!(
        n(
            "node-one-passed",
            "other/cart.test.mjs",
            "cart > total > keeps the tip"
        ),
        RunVerdict::Passed
    );
    undecided(
        n("node-one-alike", "test/cart.test.mjs", "B > works"),
        "test/cart.test.mjs::cart > total > works (passed)",
    );
    // The parent test's other subtest ran and failed: the run did not pass.
    undecided(
        n(
            "node-one-subtest",
            "test/cart.test.mjs",
            "parent test > subtest passes",
        ),
        "node --test's report says it passed, but its log does not prove it: the run has failures",
    );
    assert_eq!(
        n(
            "node-one-special",
            "test/cart.test.mjs",
            "a # hash and \\ backslash"
        ),
        RunVerdict::Passed
    );
    assert!(matches!(
        n("node-one-none", "test/cart.test.mjs", "no such test"),
        RunVerdict::NotRun(_)
    ));
    undecided(
        n("node-one-crash", "test/broken.test.mjs", "x"),
        "no test ran: a test file failed to load",
    );
}

#[test]
fn a_missing_or_broken_report_is_no_verdict() {
    let tree = Files(BTreeMap::new());
    let cmd = detect("npx vitest").unwrap();
    let inv = invocation(&cmd, &tree, "a.test.ts", "x", Path::new("/r/report")).unwrap();
    let log = "npm error npx canceled due to missing packages and no YES option: [\"vitest@4.1.12\"]\n[loopwatch: `npx --no vitest run` exited with status 1 after 0.9 s]\n";
    undecided(
        judge_run(
            &inv,
            log,
            Some(Err("No such file".into())),
            Path::new("/"),
            "x",
        ),
        "no test ran: vitest wrote no report (/r/report.json); the log ends with: `npm error npx canceled due to missing packages",
    );
    undecided(
        judge_run(
            &inv,
            log,
            Some(Ok(b"{not json".to_vec())),
            Path::new("/"),
            "x",
        ),
        "vitest's report cannot be read: the vitest report is not its JSON",
    );
}

#[test]
fn green_results_follow_the_verdicts() {
    assert_eq!(green_of(RunVerdict::Passed).0, GreenResult::Green);
    assert_eq!(
        green_of(RunVerdict::Failed),
        (GreenResult::Red, "it still fails".into())
    );
    assert_eq!(
        green_of(RunVerdict::Skipped("s".into())).0,
        GreenResult::Weakened
    );
    assert_eq!(
        green_of(RunVerdict::NotRun("n".into())).0,
        GreenResult::Missing
    );
    assert_eq!(
        green_of(RunVerdict::Undecided("u".into())).0,
        GreenResult::Red
    );
}
