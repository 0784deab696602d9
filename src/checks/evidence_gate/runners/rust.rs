//! cargo test (libtest) and cargo-nextest output.
//!
//! cargo names the test target of every test binary it runs (`Running
//! unittests src/lib.rs (…)`, `Running tests/cart.rs (…)`); each test is
//! placed in that target (see [`target_id`]), so that a reference to a file
//! is proven only by the target that file belongs to.

use std::sync::LazyLock;

use regex::Regex;

use super::runs::{Mark, read_each, split};
use super::{Outcome, Place, Runner, RunnerLog, count_of, counts};

static RUNNING: LazyLock<Regex> = static_regex!(r"^running \d+ tests?$");
static TEST: LazyLock<Regex> = static_regex!(r"^test (.+?) \.\.\. (ok|FAILED|ignored)(?:,.*)?$");
static RESULT: LazyLock<Regex> = static_regex!(
    r"^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored; \d+ measured; \d+ filtered out"
);
static CARGO_FAILED: LazyLock<Regex> =
    static_regex!(r"^error: (?:test failed|\d+ targets? failed|could not compile)");
static CARGO_BUILD_FAILED: LazyLock<Regex> = static_regex!(r"^error: could not compile");
/// The build lines that open one `cargo test` invocation.
static CARGO_INVOCATION: LazyLock<Regex> = static_regex!(r"^\s*(?:Compiling|Finished) \S");
/// The test binary cargo starts next, by its target's root file.
static CARGO_BINARY: LazyLock<Regex> =
    static_regex!(r"^\s*Running (?:unittests )?(\S+) \([^)]*\)$");
static CARGO_DOCTESTS: LazyLock<Regex> = static_regex!(r"^\s*Doc-tests \S+$");

fn cargo_mark(line: &str) -> Mark {
    if CARGO_INVOCATION.is_match(line) {
        Mark::SoftStart
    } else if CARGO_BUILD_FAILED.is_match(line) {
        Mark::End
    } else if RUNNING.is_match(line)
        || TEST.is_match(line)
        || RESULT.is_match(line)
        || CARGO_BINARY.is_match(line)
    {
        Mark::Content
    } else {
        Mark::Other
    }
}

/// The target a cargo source file belongs to, by its root: `src/lib.rs`
/// for the library (and every module file under `src/` but `src/bin/` and
/// `src/main.rs`), `src/main.rs`, `src/bin/<name>`, `tests/<name>`,
/// `examples/<name>`, `benches/<name>`; the package's own folder left out
/// (cargo prints paths from the package's root). `None` for a path that is
/// in no target folder.
pub(in crate::checks::evidence_gate) fn target_id(path: &str) -> Option<String> {
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    let i = parts
        .iter()
        .rposition(|p| matches!(*p, "src" | "tests" | "examples" | "benches"))?;
    let rest = &parts[i + 1..];
    let first = rest.first()?;
    let stem = |p: &str| p.strip_suffix(".rs").unwrap_or(p).to_string();
    Some(match (parts[i], *first) {
        ("src", "bin") => format!("src/bin/{}", stem(rest.get(1)?)),
        ("src", "main.rs") => "src/main.rs".to_string(),
        ("src", _) => "src/lib.rs".to_string(),
        (folder, _) => format!("{folder}/{}", stem(first)),
    })
}

/// libtest's `running N tests` / `test x ... ok` / `test result:` lines,
/// each test placed in the target cargo named before it. A build that
/// failed (`error: could not compile`) is a run in which no test ran; a
/// test binary without its `test result:` line crashed (cargo then says
/// `error: test failed`) or was cut.
pub(super) fn cargo_test(lines: &[String]) -> Vec<RunnerLog> {
    read_each(lines, split(lines, cargo_mark), cargo_run)
}

fn cargo_run(lines: &[String], start: usize) -> Option<RunnerLog> {
    let mut log = RunnerLog::new(Runner::CargoTest, start);
    let (mut running, mut results, mut seen) = (0, 0, false);
    let (mut passed, mut failed, mut ignored) = (0, 0, 0);
    let mut target: Option<Place> = None;
    // A binary that started and has no result yet, and whether cargo then
    // reported the failure (a crash) or the log simply ended (cut).
    let mut open = false;
    let mut crashed = false;
    for line in lines {
        if let Some(c) = CARGO_BINARY.captures(line) {
            target = target_id(&c[1]).map(Place::Target);
            seen = true;
        } else if CARGO_DOCTESTS.is_match(line) {
            target = None;
        } else if RUNNING.is_match(line) {
            running += 1;
            open = true;
            seen = true;
        } else if let Some(c) = TEST.captures(line) {
            let name = c[1].strip_suffix(" - should panic").unwrap_or(&c[1]);
            let path = name.split("::").map(str::to_string).collect();
            log.push(target.clone(), path, outcome(&c[2]));
            seen = true;
        } else if let Some(c) = RESULT.captures(line) {
            results += 1;
            open = false;
            passed += c[2].parse::<u64>().unwrap_or(0);
            failed += c[3].parse::<u64>().unwrap_or(1);
            ignored += c[4].parse::<u64>().unwrap_or(0);
            log.failure_reported |= &c[1] != "ok";
            seen = true;
        } else if CARGO_FAILED.is_match(line) {
            log.failure_reported = true;
            crashed |= open;
            open = false;
            seen |= CARGO_BUILD_FAILED.is_match(line);
        }
    }
    if !seen {
        return None;
    }
    log.count_tests();
    if results > 0 {
        log.failed = log.failed.max(failed);
        (log.passed, log.skipped) = (passed, ignored);
    }
    log.failure_reported |= crashed || running > results;
    // The log ends inside a test binary's output: the run was cut.
    log.cut = open;
    Some(log)
}

fn outcome(word: &str) -> Outcome {
    match word {
        "ok" => Outcome::Passed,
        "ignored" => Outcome::Skipped,
        _ => Outcome::Failed,
    }
}

static NEXTEST_STATUS: LazyLock<Regex> = static_regex!(
    r"^\s*(PASS|FAIL|SKIP|FLAKY(?: \d+/\d+)?|LEAK|LEAK-FAIL|TIMEOUT|ABORT|SIG[A-Z]+|TRY \d+ [A-Z-]+|RETRY \d+/\d+)\s+\[\s*[\d.]+s\]\s+(?:\(\s*\d+/\d+\)\s+)?(\S+)\s+(\S.*)$"
);
static NEXTEST_SUMMARY: LazyLock<Regex> =
    static_regex!(r"^\s*Summary \[\s*[\d.]+s\] \d+ tests? run: (.*)$");
static NEXTEST_START: LazyLock<Regex> = static_regex!(r"^\s*Starting \d+ tests? across");
static NEXTEST_FAILED: LazyLock<Regex> =
    static_regex!(r"^(?:error: test run failed|\s*Cancelling due to test failure)");

/// nextest's binary id (`shop`, `shop::cart`, `shop::bin/till`) as the
/// target id of [`target_id`].
fn nextest_target(binary: &str) -> Option<Place> {
    let (_, kind) = match binary.split_once("::") {
        Some((c, k)) => (c, k),
        None => return Some(Place::Target("src/lib.rs".into())),
    };
    let id = match kind.split_once('/') {
        Some(("bin", name)) => format!("src/bin/{name}"),
        Some(("example", name)) => format!("examples/{name}"),
        Some(("bench", name)) => format!("benches/{name}"),
        Some(_) => return None,
        None => format!("tests/{kind}"),
    };
    Some(Place::Target(id))
}

/// cargo-nextest's status lines and `Summary` line. Each run opens with
/// `Starting N tests`; the status lines repeated after `Summary` are a recap.
pub(super) fn nextest(lines: &[String]) -> Vec<RunnerLog> {
    // The status lines after a `Summary` recap the failures: not a new run.
    let mut recap = false;
    let mark = |line: &str| {
        if NEXTEST_START.is_match(line) {
            recap = false;
            Mark::Start
        } else if NEXTEST_SUMMARY.is_match(line) {
            recap = true;
            Mark::End
        } else if NEXTEST_STATUS.is_match(line) && !recap {
            Mark::Content
        } else {
            Mark::Other
        }
    };
    read_each(lines, split(lines, mark), nextest_run)
}

fn nextest_run(lines: &[String], start: usize) -> Option<RunnerLog> {
    let mut log = RunnerLog::new(Runner::Nextest, start);
    let (mut started, mut summary, mut seen) = (false, None, false);
    for line in lines {
        if let Some(c) = NEXTEST_STATUS.captures(line) {
            // The recap after the summary repeats the failures: read once.
            if summary.is_none() && !c[1].starts_with("RETRY") {
                let path = c[3].trim().split("::").map(str::to_string).collect();
                log.push(nextest_target(&c[2]), path, nextest_outcome(&c[1]));
            }
            seen = true;
        } else if let Some(c) = NEXTEST_SUMMARY.captures(line) {
            summary = Some(counts(&c[1]));
            seen = true;
        } else if NEXTEST_START.is_match(line) {
            started = true;
            seen = true;
        } else if NEXTEST_FAILED.is_match(line) {
            log.failure_reported = true;
        }
    }
    if !seen {
        return None;
    }
    log.count_tests();
    match summary {
        Some(c) => {
            log.passed = count_of(&c, &["passed"]);
            log.failed = log.failed.max(count_of(&c, &["failed", "timed out"]));
            log.skipped = count_of(&c, &["skipped"]);
        }
        None => log.cut = started || !log.tests.is_empty(),
    }
    Some(log)
}

fn nextest_outcome(status: &str) -> Outcome {
    let last = status.rsplit(' ').next().unwrap_or(status);
    match (status, last) {
        ("SKIP", _) => Outcome::Skipped,
        (s, _) if s.starts_with("FLAKY") => Outcome::Passed,
        (_, "PASS" | "LEAK") => Outcome::Passed,
        _ => Outcome::Failed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::evidence_gate::runners::lines;

    #[test]
    fn a_binary_without_its_result_line_is_a_cut_run() {
        let log = &cargo_test(&lines("running 2 tests\ntest a ... ok\n"))[0];
        assert_eq!((log.passed, log.failed, log.cut), (1, 0, true));
        let crash = "running 1 test\nerror: test failed, to rerun pass `--lib`\n";
        let log = &cargo_test(&lines(crash))[0];
        assert!(log.failure_reported && !log.cut);
    }

    #[test]
    fn tests_are_placed_in_their_target() {
        let text = "     Running unittests src/lib.rs (target/debug/deps/shop-1)\n\nrunning 1 test\ntest money::tests::works ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n     Running tests/it/main.rs (target/debug/deps/it-2)\n\nrunning 1 test\ntest nested::deep ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
        let log = &cargo_test(&lines(text))[0];
        let places: Vec<_> = log.tests.iter().map(|t| t.place.clone()).collect();
        assert_eq!(
            places,
            [
                Some(Place::Target("src/lib.rs".into())),
                Some(Place::Target("tests/it".into()))
            ]
        );
        assert_eq!(
            target_id("crates/api/src/money/mod.rs").unwrap(),
            "src/lib.rs"
        );
        assert_eq!(target_id("src/bin/till/args.rs").unwrap(), "src/bin/till");
        assert_eq!(target_id("tests/it/nested.rs").unwrap(), "tests/it");
        assert_eq!(target_id("README.md"), None);
    }

    #[test]
    fn nextest_retries_keep_the_failed_try() {
        let text = "    Starting 1 test across 1 binary\n  TRY 1 FAIL [   0.010s] crate tests::flaky\n  TRY 2 PASS [   0.011s] crate tests::flaky\n     Summary [   0.020s] 1 test run: 1 passed (1 flaky), 0 skipped\n";
        let log = &nextest(&lines(text))[0];
        assert_eq!(log.tests.len(), 2);
        assert_eq!(log.tests[0].outcome, Outcome::Failed);
        assert_eq!((log.passed, log.failed, log.cut), (1, 1, false));
    }
}
