//! jest's `--json` report and vitest's `json` reporter (the same shape).

use std::path::Path;

use serde::Deserialize;

use super::{Ran, ReportError, one_line, relative_to, test, text};
use crate::checks::evidence_gate::runners::{Outcome, Runner};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    #[serde(default)]
    test_results: Vec<FileResult>,
    #[serde(default)]
    was_interrupted: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileResult {
    name: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
    assertion_results: Vec<Assertion>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Assertion {
    #[serde(default)]
    ancestor_titles: Vec<String>,
    title: String,
    status: String,
}

/// Reads the report; a file that failed without any test is a problem.
pub(super) fn read(runner: Runner, bytes: &[u8], root: &Path) -> Result<Ran, ReportError> {
    let report: Report = serde_json::from_slice(bytes).map_err(|e| {
        ReportError::Malformed(format!(
            "the {} report is not its JSON: {e}",
            runner.as_str()
        ))
    })?;
    let mut ran = Ran {
        runner,
        tests: Vec::new(),
        problems: Vec::new(),
        complete: !report.was_interrupted,
        interrupted: report.was_interrupted,
    };
    for file in report.test_results {
        let name = relative_to(&file.name, root);
        if file.status == "failed" && !file.message.trim().is_empty() {
            // jest's message starts with its own `● Test suite failed to run`.
            let why: Vec<String> = text::clean_lines(&file.message)
                .into_iter()
                .filter(|l| !l.trim_start().starts_with('●'))
                .collect();
            ran.problems.push(format!(
                "{name} failed to run: {}",
                one_line(&why.join("\n"))
            ));
        }
        for a in file.assertion_results {
            let outcome = match a.status.as_str() {
                "passed" => Outcome::Passed,
                "failed" => Outcome::Failed,
                _ => Outcome::Skipped, // pending, skipped, todo, disabled
            };
            let mut path = a.ancestor_titles;
            path.push(a.title);
            ran.tests.push(test(Some(name.clone()), path, outcome));
        }
    }
    Ok(ran)
}
