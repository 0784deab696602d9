//! The judging of a claim: which run of the log speaks for it (the last,
//! or the last in which the named test ran), that run's refusals in order
//! (cut, no test ran, interrupted, failures), the named test's occurrences
//! in it, and the failures of earlier runs no later run made good.

use std::collections::HashSet;

use super::runners::{self, Outcome, Runner, RunnerLog};
use super::{Claim, ClaimStatus, Proof, Refusal, Tally, Verdict};
use super::{reference, text};

/// Judges whether `log` proves `claim`.
pub fn judge(log: &str, claim: &Claim) -> Verdict {
    let lines = text::clean_lines(log);
    let runs = runs_of(&lines);
    if runs.is_empty() {
        return Verdict::NotProven(Refusal::UnknownRunner);
    }
    // The run that speaks for the claim: the last one, or for a named test
    // the last one in which that test ran (or, failing that, appeared).
    let mut judged = runs.len() - 1;
    let mut seen: Vec<(String, Outcome)> = Vec::new();
    if let Some(reference) = &claim.test {
        let found = runs.iter().enumerate().rev().find_map(|(i, r)| {
            let n = named(r, reference);
            n.iter()
                .any(|(_, o)| *o != Outcome::Skipped)
                .then_some((i, n))
        });
        let found = found.or_else(|| {
            runs.iter().enumerate().rev().find_map(|(i, r)| {
                let n = named(r, reference);
                (!n.is_empty()).then_some((i, n))
            })
        });
        if let Some((i, n)) = found {
            (judged, seen) = (i, n);
        }
    }
    let run = &runs[judged];
    let tally = tally(run, judged, runs.len());
    if run.cut {
        return Verdict::NotProven(Refusal::Cut(tally));
    }
    if run.passed + run.failed == 0 {
        return Verdict::NotProven(Refusal::NoTestRan(tally));
    }
    if run.interrupted {
        return Verdict::NotProven(Refusal::Interrupted(tally));
    }
    // Failures in the run come first for a `passed` claim; otherwise the
    // named test's own status is the clearest reason.
    if claim.status == ClaimStatus::Passed && run.failed > 0 {
        return Verdict::NotProven(Refusal::RunFailed(tally));
    }
    let mut shown = None;
    if let Some(reference) = &claim.test {
        let Some(first) = seen.first() else {
            return Verdict::NotProven(Refusal::TestAbsent {
                test: reference.clone(),
                tally,
            });
        };
        let wanted = match claim.status {
            ClaimStatus::Passed => Outcome::Passed,
            ClaimStatus::Failed => Outcome::Failed,
        };
        // Every occurrence must agree: a retried test that failed once is not a pass.
        if let Some(other) = seen.iter().find(|(_, o)| *o != wanted) {
            return Verdict::NotProven(Refusal::StatusDiffers {
                test: other.0.clone(),
                found: other.1.as_str(),
                claimed: claim.status,
            });
        }
        shown = Some(first.0.clone());
    }
    match claim.status {
        ClaimStatus::Passed if run.failed > 0 || run.failure_reported => {
            Verdict::NotProven(Refusal::RunFailed(tally))
        }
        ClaimStatus::Passed => match unresolved(&runs) {
            Some(failure) => Verdict::NotProven(Refusal::EarlierFailure { failure, tally }),
            None => Verdict::Proven(Proof {
                status: claim.status,
                tally,
                test: shown,
            }),
        },
        ClaimStatus::Failed if run.failed == 0 => Verdict::NotProven(Refusal::NothingFailed(tally)),
        ClaimStatus::Failed => Verdict::Proven(Proof {
            status: claim.status,
            tally,
            test: shown,
        }),
    }
}

/// Every run of every runner in the lines, in order; node's tests placed
/// in the one file the command of loopwatch's own run named.
fn runs_of(lines: &[String]) -> Vec<RunnerLog> {
    let mut runs = runners::detect(lines);
    if let Some(file) = text::loopwatch_command(lines).and_then(|c| text::node_file(&c)) {
        runners::attribute_file(&mut runs, &file);
    }
    runs
}

fn tally(run: &RunnerLog, index: usize, runs: usize) -> Tally {
    Tally {
        runners: vec![run.runner],
        passed: run.passed,
        failed: run.failed,
        skipped: run.skipped,
        errors: run.errors,
        runs,
        run: index + 1,
        coverage_unmet: run.coverage_unmet,
        interrupted: run.interrupted,
        unit: run.unit,
        failure_reported: run.failure_reported,
        cut: run.cut,
    }
}

/// A failure of a run that no later run made good: a test that failed and
/// did not pass in a later run, or a run that failed without naming its
/// failures (a build that failed, a suite that did not run) and no later
/// run of the same runner ended whole without failure.
fn unresolved(runs: &[RunnerLog]) -> Option<String> {
    // From the last run back: the tests that passed in a later run, the
    // runners with a later whole passing run. Linear in the log's tests.
    let mut passed_later: HashSet<(Option<&runners::Place>, &[String])> = HashSet::new();
    let mut whole_later: HashSet<Runner> = HashSet::new();
    let mut earliest = None;
    for (i, run) in runs.iter().enumerate().rev() {
        let failed: Vec<&runners::TestLine> = run
            .tests
            .iter()
            .filter(|t| t.outcome == Outcome::Failed)
            .collect();
        let unmade = failed
            .iter()
            .find(|t| !passed_later.contains(&(t.place.as_ref(), t.path.as_slice())));
        let unnamed = run.failed > failed.len() as u64 || run.failure_reported || run.errors > 0;
        if let Some(t) = unmade {
            earliest = Some(format!(
                "test {} failed in run {} of the log",
                t.shown(),
                i + 1
            ));
        } else if unnamed && i + 1 < runs.len() && !whole_later.contains(&run.runner) {
            earliest = Some(format!("run {} of the log failed", i + 1));
        }
        for t in run.tests.iter().filter(|t| t.outcome == Outcome::Passed) {
            passed_later.insert((t.place.as_ref(), t.path.as_slice()));
        }
        let whole = !run.cut
            && !run.interrupted
            && run.failed == 0
            && !run.failure_reported
            && run.errors == 0
            && run.passed > 0;
        if whole {
            whole_later.insert(run.runner);
        }
    }
    earliest
}

/// The occurrences of the named test in one run: exact names when there
/// are any, otherwise the names the reference stands for
/// ([`reference::Reference`]).
fn named(run: &RunnerLog, reference: &str) -> Vec<(String, Outcome)> {
    let exact: Vec<_> = run
        .tests
        .iter()
        .filter(|t| {
            t.shown() == reference
                || (!reference_has_file(reference) && t.path.join("::") == reference)
        })
        .map(|t| (t.shown(), t.outcome))
        .collect();
    if !exact.is_empty() {
        return exact;
    }
    let wanted = reference::Reference::parse(reference);
    let packages: std::collections::BTreeSet<&runners::Place> = run
        .tests
        .iter()
        .filter_map(|t| t.place.as_ref())
        .filter(|p| matches!(p, runners::Place::Package(_)))
        .collect();
    let want_file = reference_file(reference);
    let named_exactly = want_file.as_deref().is_some_and(|f| {
        run.files.iter().any(|g| same_path(g, f))
            || run
                .tests
                .iter()
                .any(|t| matches!(&t.place, Some(runners::Place::File(g)) if same_path(g, f)))
    });
    let scope = reference::Scope {
        single_package: packages.len() == 1,
        tail: !named_exactly,
    };
    run.tests
        .iter()
        .filter(|t| wanted.matches(t, scope))
        .map(|t| (t.shown(), t.outcome))
        .collect()
}

/// The reference starts with a file part.
fn reference_has_file(reference: &str) -> bool {
    reference_file(reference).is_some()
}

/// The reference's file part, if it starts with one.
fn reference_file(reference: &str) -> Option<String> {
    let first = reference.split("::").next()?;
    (reference.contains("::") && text::is_file(first)).then(|| first.to_string())
}

fn same_path(a: &str, b: &str) -> bool {
    a.strip_prefix("./").unwrap_or(a) == b.strip_prefix("./").unwrap_or(b)
}
