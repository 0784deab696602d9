//! Red tests handed to the developer and proven green afterwards: when the
//! recheck is due, and which results go back to the developer as gaps.
//!
//! A red test is one verify-by-test kept because it confirmed a finding
//! (`verify.summary.redTests`). It is handed to the developer of the next
//! iteration by a gap line holding [`handoff_line`]'s sentence; the
//! developer of iteration `i` was handed exactly the red tests whose
//! sentence is in the lines recorded by `dev.dispatched` of iteration
//! `i − 1` ([`handed_over`]). After that developer's dispatch succeeded,
//! each of them is run again and one `verify.green` recorded for it in
//! iteration `i`; a result other than green goes back as a gap ([`gaps`])
//! that hands the test over once more.

use serde_json::Value;

use crate::model::event::{AgentRole, GreenResult};
use crate::model::state::State;
use crate::model::types::RedTest;

/// The sentence that hands a red test over (it names the test exactly, so
/// that the recheck finds it in the recorded hand-off).
pub fn handoff_line(test_ref: &str) -> String {
    format!(
        "a failing repro test already exists at {test_ref}; make it green; do not delete or weaken it"
    )
}

/// Whether a hand-off line hands over `test_ref`.
fn names(line: &str, test_ref: &str) -> bool {
    line.contains(&format!("already exists at {test_ref};"))
}

/// The red tests handed to the developer of `iteration`: every red test of
/// an earlier iteration named in the lines recorded for that developer, in
/// the order they were first kept, once each.
pub fn handed_over(s: &State, iteration: u32) -> Vec<RedTest> {
    let Some(lines) = iteration
        .checked_sub(1)
        .and_then(|p| s.iteration(p))
        .map(|i| i.dev_inputs.as_slice())
    else {
        return Vec::new();
    };
    let lines: Vec<&str> = lines.iter().filter_map(Value::as_str).collect();
    let mut out: Vec<RedTest> = Vec::new();
    for it in s
        .review_iterations
        .iter()
        .filter(|i| i.iteration < iteration)
    {
        let Some(summary) = &it.verify_by_test else {
            continue;
        };
        for red in &summary.red_tests {
            if red.test_ref.is_empty() || !lines.iter().any(|l| names(l, &red.test_ref)) {
                continue;
            }
            match out.iter_mut().find(|r| r.test_ref == red.test_ref) {
                Some(slot) => *slot = red.clone(),
                None => out.push(red.clone()),
            }
        }
    }
    out
}

/// The iteration whose red tests must be rerun now (its developer dispatch
/// succeeded and no `verify.green` was recorded for them yet), if any.
///
/// Only the current iteration is considered: a recheck that was not done
/// when it was due (verify-by-test turned off since) is not done later.
pub fn pending(s: &State) -> Option<u32> {
    let i = s.iteration_number();
    let it = s.iteration(i)?;
    let developer = s
        .agents
        .iter()
        .rev()
        .find(|a| a.started.role == AgentRole::Developer && a.started.iteration == i)?;
    if !developer.finished.as_ref().is_some_and(|f| f.succeeded()) {
        return None;
    }
    let handed = handed_over(s, i);
    let done = handed
        .iter()
        .all(|r| it.greens.iter().any(|g| g.test_ref == r.test_ref));
    (!handed.is_empty() && !done).then_some(i)
}

/// Gap lines for the developer: every red test whose recheck in the
/// current iteration was not green, naming the test, the result and why,
/// and handing the test over again.
pub fn gaps(s: &State) -> Vec<String> {
    let Some(it) = s.iteration(s.iteration_number()) else {
        return Vec::new();
    };
    it.greens
        .iter()
        .filter(|g| g.result != GreenResult::Green)
        .map(|g| {
            let why = g
                .note
                .as_deref()
                .filter(|n| !n.trim().is_empty())
                .map(|n| format!(" ({})", crate::sanitize::sanitize_input(n).trim()))
                .unwrap_or_default();
            format!(
                "  red test {} of finding {} is {} after your work{why}: {}",
                g.test_ref,
                g.finding,
                g.result,
                handoff_line(&g.test_ref)
            )
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::event::*;
    use crate::model::{Event, fold};

    fn ev(seq: u64, body: EventBody) -> Event {
        Event {
            v: 1,
            seq,
            at: "2026-12-01T00:00:00Z".into(),
            prev: None,
            body,
        }
    }

    fn red(t: &str, f: &str) -> RedTest {
        RedTest {
            file: "tests/repro.rs".into(),
            test_ref: t.into(),
            issue: f.into(),
        }
    }

    /// A developer dispatch of `iteration` that exited `exit`: its start and
    /// its finish (the engine's tests use it too).
    pub(crate) fn developer(
        dispatch: u32,
        iteration: u32,
        exit: i32,
    ) -> (AgentStarted, AgentFinished) {
        let started = AgentStarted {
            dispatch,
            role: AgentRole::Developer,
            iteration,
            gate: None,
            round: None,
            adapter: "generic".into(),
            pid: 1,
            pgid: 1,
            input_sha256: String::new(),
            log: String::new(),
            input: None,
            extra: Default::default(),
        };
        let finished = AgentFinished {
            exit_code: Some(exit),
            duration_ms: 1,
            ..AgentFinished::new(dispatch, AgentRole::Developer)
        };
        (started, finished)
    }

    fn green(iteration: u32, t: &str, result: GreenResult, note: Option<&str>) -> EventBody {
        EventBody::from(VerifyGreen {
            iteration,
            finding: "F1".into(),
            test_ref: t.into(),
            result,
            log: String::new(),
            note: note.map(str::to_string),
            extra: Default::default(),
        })
    }

    /// Iteration 1 kept two red tests, the hand-off named one of them, and
    /// the developer of iteration 2 exited `exit`.
    fn run(exit: i32, more: Vec<EventBody>) -> State {
        let mut bodies = vec![
            EventBody::IterationStarted {
                iteration: 1,
                trigger: "initial".into(),
            },
            EventBody::from(VerifySummary {
                iteration: 1,
                red_tests: vec![
                    red("tests/repro.rs::f1", "F1"),
                    red("tests/repro.rs::f2", "F2"),
                ],
                ..VerifySummary::default()
            }),
            EventBody::DevDispatched {
                iteration: 1,
                inputs: vec![Value::from(format!(
                    "  F1 — {}",
                    handoff_line("tests/repro.rs::f1")
                ))],
            },
            EventBody::IterationStarted {
                iteration: 2,
                trigger: "review".into(),
            },
        ];
        let (started, finished) = developer(7, 2, exit);
        bodies.extend([EventBody::from(started), EventBody::from(finished)]);
        bodies.extend(more);
        let evs: Vec<Event> = bodies
            .into_iter()
            .enumerate()
            .map(|(i, b)| ev(i as u64 + 1, b))
            .collect();
        fold(&evs)
    }

    #[test]
    fn only_the_tests_named_in_the_hand_off_are_handed_over() {
        let s = run(0, vec![]);
        let handed = handed_over(&s, 2);
        assert_eq!(handed, vec![red("tests/repro.rs::f1", "F1")]);
        assert!(handed_over(&s, 1).is_empty());
        // `f1` is a prefix of `f10`: the sentence names the test exactly.
        assert!(!names(&handoff_line("a::f10"), "a::f1"));
    }

    #[test]
    fn the_recheck_is_due_after_a_successful_developer_until_recorded() {
        assert_eq!(pending(&run(0, vec![])), Some(2));
        assert_eq!(pending(&run(1, vec![])), None, "the developer failed");
        let done = run(
            0,
            vec![green(2, "tests/repro.rs::f1", GreenResult::Green, None)],
        );
        assert_eq!(pending(&done), None);
        assert!(gaps(&done).is_empty());
    }

    #[test]
    fn results_other_than_green_are_gaps_that_hand_the_test_over_again() {
        let s = run(
            0,
            vec![green(
                2,
                "tests/repro.rs::f1",
                GreenResult::Weakened,
                Some("ASSERT_DROP tests/repro.rs:3\nassertion lines 1 -> 0"),
            )],
        );
        let lines = gaps(&s);
        assert_eq!(lines.len(), 1);
        let l = &lines[0];
        assert!(
            l.starts_with(
                "  red test tests/repro.rs::f1 of finding F1 is weakened after your work ("
            ),
            "{l}"
        );
        assert!(!l.contains('\n'), "one line: {l}");
        assert!(names(l, "tests/repro.rs::f1"), "{l}");
    }
}
