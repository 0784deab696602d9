//! node's built-in test runner (`node --test`), in both of its reporters.
//!
//! - spec (the default on a terminal, and everywhere from node 22): `✔`,
//!   `✖` and `﹣` result lines nested by two spaces under `▶` suite lines,
//!   the `ℹ tests N` / `ℹ pass N` / … summary, then a `✖ failing tests:`
//!   recap that repeats the failures without their suites.
//! - TAP (node 20's default when piped): `TAP version 13`, `# Subtest:`
//!   lines, `ok N - name` / `not ok N - name` nested by four spaces, with a
//!   `# SKIP` or `# TODO` directive, and the `# tests N` / `# pass N` summary.
//!
//! Nested tests are named by their path (`group::nested passes`). A todo
//! test and a test `--test-name-pattern` left out are skipped. A test file
//! that crashed is reported by node as a failed "test" named by the file's
//! path: it is a reported failure, never a test, so a file that crashed
//! before any test ran shows as a run in which no test ran. node names no
//! test's file; [`attribute_file`] places the tests of a log whose command
//! named one file (loopwatch's own runs) in that file.

use std::sync::LazyLock;

use regex::Regex;

use super::runs::{Mark, read_each, split};
use super::{Outcome, Place, Runner, RunnerLog};

static SPEC_RESULT: LazyLock<Regex> =
    static_regex!(r"^( *)(✔|✖|﹣) (.+?) \(\d+(?:\.\d+)?ms\)(?: # (.*))?$");
static SPEC_SUITE: LazyLock<Regex> = static_regex!(r"^( *)▶ (.+)$");
static SPEC_SUMMARY: LazyLock<Regex> = static_regex!(
    r"^ℹ (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) (\d+(?:\.\d+)?)$"
);
static SPEC_RECAP: LazyLock<Regex> = static_regex!(r"^✖ failing tests:$");
static SPEC_RECAP_AT: LazyLock<Regex> = static_regex!(r"^test at \S");
static TAP_VERSION: LazyLock<Regex> = static_regex!(r"^TAP version \d+$");
static TAP_SUBTEST: LazyLock<Regex> = static_regex!(r"^( *)# Subtest: (.*)$");
static TAP_RESULT: LazyLock<Regex> =
    static_regex!(r"^( *)(ok|not ok) \d+(?: - (.*?))?(?: # (SKIP|TODO)\b.*)?$");
static TAP_SUMMARY: LazyLock<Regex> = static_regex!(
    r"^# (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) (\d+(?:\.\d+)?)$"
);
/// The name node gives a test file's own process when it fails.
static FILE_NAME: LazyLock<Regex> = static_regex!(r"(?:^|/)[^/\s]+\.(?:[cm]?[jt]s|[jt]sx)$");

/// Tells summary, result and header lines apart for the cutting into runs;
/// the spec reporter's recap of failures is not a new run.
fn marker() -> impl FnMut(&str) -> Mark {
    let mut recap = false;
    let mut after_at = false;
    move |line: &str| {
        let was_at = std::mem::replace(&mut after_at, SPEC_RECAP_AT.is_match(line));
        if TAP_VERSION.is_match(line) {
            recap = false;
            return Mark::Start;
        }
        if is_summary_total(line) {
            return Mark::End;
        }
        if SPEC_RECAP.is_match(line) {
            recap = true;
            return Mark::Other;
        }
        if let Some(c) = SPEC_RESULT.captures(line) {
            if recap && (was_at || &c[2] == "✖") {
                return Mark::Other;
            }
            recap = false;
            return Mark::Content;
        }
        if SPEC_SUITE.is_match(line) {
            recap = false;
            return Mark::Content;
        }
        if TAP_SUBTEST.is_match(line) || TAP_RESULT.is_match(line) {
            return Mark::Content;
        }
        Mark::Other
    }
}

fn is_summary_total(line: &str) -> bool {
    [&SPEC_SUMMARY, &TAP_SUMMARY]
        .iter()
        .any(|re| re.captures(line).is_some_and(|c| &c[1] == "tests"))
}

/// The summary's numbers.
#[derive(Debug, Default)]
struct Summary {
    pass: u64,
    fail: u64,
    cancelled: u64,
    skipped: u64,
    todo: u64,
}

impl Summary {
    fn set(&mut self, key: &str, value: &str) {
        let n = value.parse::<u64>().unwrap_or(0);
        match key {
            "pass" => self.pass = n,
            "fail" => self.fail = n,
            "cancelled" => self.cancelled = n,
            "skipped" => self.skipped = n,
            "todo" => self.todo = n,
            _ => {}
        }
    }
}

/// What one pass over the last run collected.
#[derive(Default)]
struct Reading {
    /// Open suites / parent tests, by depth.
    stack: Vec<String>,
    /// Inside the spec reporter's recap of failures.
    recap: bool,
    /// The previous line was a recap's `test at <location>`.
    after_at: bool,
    /// A line only node's runner prints was seen.
    seen: bool,
    summary: Option<Summary>,
    /// Test files whose process failed (node's file-level "tests").
    crashed_files: u64,
}

impl Reading {
    /// Records a result at `depth` (it closes whatever was open at that
    /// depth or deeper: a suite's or a parent test's own result line).
    fn result(&mut self, log: &mut RunnerLog, depth: usize, name: &str, outcome: Outcome) {
        self.stack.truncate(depth);
        if depth == 0 && outcome == Outcome::Failed && FILE_NAME.is_match(name) {
            self.crashed_files += 1;
            log.failure_reported = true;
            return;
        }
        let mut path = self.stack.clone();
        path.resize(depth, String::new());
        path.push(name.to_string());
        log.push(None, path, outcome);
    }

    fn open(&mut self, depth: usize, name: &str) {
        self.stack.truncate(depth);
        // A deeper line without its parents (a cut log) still nests.
        while self.stack.len() < depth {
            self.stack.push(String::new());
        }
        self.stack.push(name.to_string());
    }

    fn line(&mut self, log: &mut RunnerLog, line: &str) {
        let was_at = std::mem::replace(&mut self.after_at, SPEC_RECAP_AT.is_match(line));
        if TAP_VERSION.is_match(line) {
            self.seen = true;
        } else if let Some(c) = SPEC_SUMMARY
            .captures(line)
            .or_else(|| TAP_SUMMARY.captures(line))
        {
            self.summary.get_or_insert_default().set(&c[1], &c[2]);
        } else if SPEC_RECAP.is_match(line) {
            self.recap = true;
        } else if let Some(c) = SPEC_RESULT.captures(line) {
            if self.recap && (was_at || &c[2] == "✖") {
                return;
            }
            self.recap = false;
            self.seen = true;
            let outcome = match (&c[2], c.get(4)) {
                ("﹣", _) | (_, Some(_)) => Outcome::Skipped, // skipped, or a todo
                ("✔", None) => Outcome::Passed,
                _ => Outcome::Failed,
            };
            self.result(log, c[1].len() / 2, &c[3], outcome);
        } else if let Some(c) = SPEC_SUITE.captures(line) {
            self.recap = false;
            self.seen = true;
            self.open(c[1].len() / 2, &c[2]);
        } else if let Some(c) = TAP_SUBTEST.captures(line) {
            self.seen = true;
            self.open(c[1].len() / 4, &tap_unescape(&c[2]));
        } else if let Some(c) = TAP_RESULT.captures(line) {
            let outcome = match (&c[2], c.get(4)) {
                (_, Some(_)) => Outcome::Skipped,
                ("ok", None) => Outcome::Passed,
                _ => Outcome::Failed,
            };
            let name = tap_unescape(c.get(3).map_or("", |m| m.as_str()));
            self.result(log, c[1].len() / 4, &name, outcome);
        }
    }
}

/// TAP escapes `#` and `\` in names.
fn tap_unescape(name: &str) -> String {
    name.replace("\\#", "#").replace("\\\\", "\\")
}

/// node's test runner, spec or TAP reporter: every run of it in the lines.
pub(super) fn node_test(lines: &[String]) -> Vec<RunnerLog> {
    read_each(lines, split(lines, marker()), node_run)
}

fn node_run(lines: &[String], start: usize) -> Option<RunnerLog> {
    let mut log = RunnerLog::new(Runner::NodeTest, start);
    let mut reading = Reading::default();
    for line in lines {
        reading.line(&mut log, line);
    }
    if !reading.seen {
        return None;
    }
    log.count_tests();
    match reading.summary {
        Some(s) => {
            // The crashed files are in node's own counts as failed tests.
            let failed = (s.fail + s.cancelled).saturating_sub(reading.crashed_files);
            log.take_summary(s.pass, failed, s.skipped + s.todo);
        }
        // A run that never printed its summary was cut.
        None => log.cut = true,
    }
    Some(log)
}

/// Places every node test of `logs` that has no place in `file`: the one
/// test file the command that made the log ran.
pub(in crate::checks::evidence_gate) fn attribute_file(logs: &mut [RunnerLog], file: &str) {
    for log in logs.iter_mut().filter(|l| l.runner == Runner::NodeTest) {
        for t in log.tests.iter_mut().filter(|t| t.place.is_none()) {
            t.place = Some(Place::File(file.to_string()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::evidence_gate::runners::lines;

    #[test]
    fn spec_nesting_names_tests_by_their_path() {
        let text = "▶ cart\n  ▶ discount\n    ✔ caps at fifty (0.2ms)\n  ✔ discount (0.5ms)\n  ✖ rounds (0.1ms)\n✖ cart (1ms)\n✔ top (0.1ms)\nℹ tests 3\nℹ pass 2\nℹ fail 1\n";
        let log = &node_test(&lines(text))[0];
        let names: Vec<(String, Outcome)> =
            log.tests.iter().map(|t| (t.shown(), t.outcome)).collect();
        let names: Vec<(&str, Outcome)> = names.iter().map(|(n, o)| (n.as_str(), *o)).collect();
        assert_eq!(
            names,
            [
                ("cart::discount::caps at fifty", Outcome::Passed),
                ("cart::discount", Outcome::Passed),
                ("cart::rounds", Outcome::Failed),
                ("cart", Outcome::Failed),
                ("top", Outcome::Passed),
            ]
        );
        assert_eq!(
            (log.passed, log.failed, log.failure_reported),
            (2, 1, false)
        );
    }

    #[test]
    fn tap_names_are_unescaped_and_directives_skip() {
        let text = "TAP version 13\n# Subtest: a \\# b\nok 1 - a \\# b\n# Subtest: t\nnot ok 2 - t # TODO later\n1..2\n# tests 2\n# pass 1\n# fail 0\n# todo 1\n";
        let log = &node_test(&lines(text))[0];
        assert_eq!(log.tests[0].path, ["a # b"]);
        assert_eq!(log.tests[1].outcome, Outcome::Skipped);
        assert_eq!((log.passed, log.failed, log.skipped), (1, 0, 1));
    }

    #[test]
    fn results_without_a_summary_are_a_cut_run() {
        let log = &node_test(&lines("✔ a (0.1ms)\n"))[0];
        assert!(log.cut);
        assert!(
            node_test(&lines("ℹ tests 1\n")).is_empty(),
            "a summary alone is not node's"
        );
    }
}
