//! The verdict a run's report justifies about the selected test: it ran
//! exactly once in its file, no other test named alike ran beside it, and
//! its outcome; what ran instead, when it did not.

use super::RunVerdict;
use crate::checks::evidence_gate::report::Ran as Report;
use crate::checks::evidence_gate::{Outcome, Place, TestLine};
use crate::engine::review::verify_by_test::runner::Selected;

/// Tests named in a reason at most.
const LISTED: usize = 5;

/// The verdict the report justifies.
pub(super) fn decide(ran: &Report, sel: &Selected, runner: &str) -> RunVerdict {
    let named = |t: &&TestLine| is_named(t, sel);
    let same: Vec<&TestLine> = ran.tests.iter().filter(named).collect();
    if ran.interrupted {
        return RunVerdict::Undecided("the run was interrupted before its end".into());
    }
    if !ran.complete {
        return RunVerdict::Undecided("the run was cut before its end".into());
    }
    let test = sel.paths.first().map(|p| p.join(" > ")).unwrap_or_default();
    let test = crate::sanitize::sanitize_line(&format!("{}::{test}", sel.file), 200);
    if same.is_empty() {
        if !ran.problems.is_empty() {
            return RunVerdict::Undecided(format!("no test ran: {}", problems(ran)));
        }
        let ran_tests: Vec<&TestLine> = ran.tests.iter().filter(|t| t.outcome.ran()).collect();
        return RunVerdict::NotRun(match ran_tests.as_slice() {
            [] => format!("{runner} ran no test by that name ({test}), nor any other"),
            some => format!(
                "{runner} ran no test by that name ({test}); it ran {}",
                listed(some)
            ),
        });
    }
    // One test: the same file and name. A go package or a cargo target is
    // the one the command ran: a test seen in two ran twice.
    let mut ids: Vec<(Option<&Place>, &Vec<String>)> = same
        .iter()
        .map(|t| match &t.place {
            Some(p @ Place::File(_)) => (Some(p), &t.path),
            _ => (None, &t.path),
        })
        .collect();
    ids.sort();
    if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
        let n = ids.iter().filter(|id| **id == w[0]).count();
        return RunVerdict::Undecided(format!(
            "{test} ran {n} times in one run: its results cannot be told apart"
        ));
    }
    let alike: Vec<&TestLine> = ran
        .tests
        .iter()
        .filter(|t| t.outcome.ran() && !is_named(t, sel) && is_alike(t, sel))
        .collect();
    if !alike.is_empty() {
        return RunVerdict::Undecided(format!(
            "other tests named alike ran too, which the run does not tell from {test}: {}",
            listed(&alike)
        ));
    }
    let all = |o: Outcome| same.iter().all(|t| t.outcome == o);
    if all(Outcome::Failed) {
        return RunVerdict::Failed;
    }
    if all(Outcome::Passed) {
        return match ran.problems.as_slice() {
            [] => RunVerdict::Passed,
            _ => RunVerdict::Undecided(format!(
                "it passed, but the run failed outside its tests: {}",
                problems(ran)
            )),
        };
    }
    if all(Outcome::Skipped) {
        return RunVerdict::Skipped(format!("{runner} skipped {test}"));
    }
    if same.iter().any(|t| t.outcome == Outcome::Errored) {
        return RunVerdict::Undecided(format!(
            "{test} errored: a fixture's setup or teardown failed, not the test"
        ));
    }
    if same.iter().all(|t| t.outcome == Outcome::XFailed) {
        return RunVerdict::Undecided(format!(
            "{test} is an expected failure (xfail): not a failure of the test"
        ));
    }
    RunVerdict::Undecided(format!("the runs of {test} disagree: {}", listed(&same)))
}

/// A test of the report is the one selected: its file, and one of the
/// spellings of its name (pytest: any parametrization of a name given
/// without parameters).
fn is_named(t: &TestLine, sel: &Selected) -> bool {
    let file_ok = match &t.place {
        Some(Place::File(f)) => {
            let f = f.strip_prefix("./").unwrap_or(f);
            f == sel.file || sel.file.ends_with(&format!("/{f}"))
        }
        Some(Place::Class(c)) => {
            let simple = c.rsplit('.').next().unwrap_or(c);
            stem(&sel.file) == simple
        }
        // One package, one cargo target, was run.
        Some(Place::Package(_) | Place::Target(_)) | None => true,
    };
    if !file_ok {
        return false;
    }
    let class_place = matches!(t.place, Some(Place::Class(_)));
    sel.paths.iter().any(|p| {
        if class_place || t.place.is_none() && p.len() == 1 {
            return t.path.last() == p.last();
        }
        if *p == t.path {
            return true;
        }
        sel.every_parametrization
            && p.len() == t.path.len()
            && p[..p.len() - 1] == t.path[..t.path.len() - 1]
            && t.path.last().map(|l| without_parameters(l)) == p.last().map(String::as_str)
    })
}

/// Another test named alike: the same last name, case aside.
fn is_alike(t: &TestLine, sel: &Selected) -> bool {
    let Some(last) = t.path.last() else {
        return false;
    };
    let last = without_parameters(last).to_lowercase();
    sel.paths
        .iter()
        .filter_map(|p| p.last())
        .any(|l| without_parameters(l).to_lowercase() == last)
}

fn without_parameters(name: &str) -> &str {
    match name.find('[') {
        Some(i) if i > 0 && name.ends_with(']') => &name[..i],
        _ => name,
    }
}

fn stem(file: &str) -> &str {
    let base = file.rsplit('/').next().unwrap_or(file);
    base.split_once('.').map_or(base, |(s, _)| s)
}

/// `a (passed), b (failed) and 3 more`.
fn listed(tests: &[&TestLine]) -> String {
    let mut shown: Vec<String> = tests
        .iter()
        .take(LISTED)
        .map(|t| {
            let name = match &t.place {
                Some(Place::File(f)) => format!("{f}::{}", t.path.join(" > ")),
                _ => t.path.join(" > "),
            };
            format!(
                "{} ({})",
                crate::sanitize::sanitize_line(&name, 120),
                t.outcome.as_str()
            )
        })
        .collect();
    if tests.len() > LISTED {
        shown.push(format!("{} more", tests.len() - LISTED));
    }
    shown.join(", ")
}

fn problems(ran: &Report) -> String {
    let shown: Vec<String> = ran
        .problems
        .iter()
        .take(3)
        .map(|p| crate::sanitize::sanitize_line(p, 200))
        .collect();
    shown.join("; ")
}
