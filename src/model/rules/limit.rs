//! The usage limit the engine has yet to answer: wait it out once, or ask
//! a person (`[run] wait_for_limit`).
//!
//! Dispatches may run together (the finding verifier's lanes), so the
//! pending limit is not always the last dispatch: a lane under way when
//! another lane's agent answered a limit finishes after it. The engine
//! starts no dispatch once a limit is answered until the limit was waited
//! out or a person decided, so the next `agent.started` after a limit is
//! its answer.

use crate::model::state::{AgentDispatch, State};

/// The usage limit nothing answered yet, with the number of limits in a
/// row it ends.
///
/// Pending: the latest `agent.limited` (by seq) of a finished dispatch,
/// when no human gate was requested after it and no dispatch started
/// after it. Several dispatches under way together that each answered a
/// limit are one limit: the latest stands for them.
///
/// In a row: the pending limit, and before it each limit recorded before
/// the start of the dispatch that answered the later one, with no human
/// gate requested in between and every dispatch started in between
/// limited too (a person's decision, or a dispatch the limit let through,
/// starts the count over).
pub fn pending_limit(s: &State) -> Option<(&AgentDispatch, usize)> {
    let last = latest_limit(s, u64::MAX)?;
    let seq = limit_seq(last);
    if s.human_gates.iter().any(|g| g.requested_seq > seq)
        || s.agents.iter().any(|d| d.started_seq > seq)
    {
        return None;
    }
    let mut in_a_row = 1;
    let mut cur = last;
    while let Some(before) = latest_limit(s, cur.started_seq) {
        let (from, to) = (limit_seq(before), cur.started_seq);
        let between = |x: u64| x > from && x < to;
        if s.human_gates.iter().any(|g| between(g.requested_seq))
            || s.agents
                .iter()
                .any(|d| between(d.started_seq) && !d.is_limited())
        {
            break;
        }
        in_a_row += 1;
        cur = before;
    }
    Some((last, in_a_row))
}

/// The seq of a dispatch's `agent.limited` (0 when it has none).
fn limit_seq(d: &AgentDispatch) -> u64 {
    d.limited.as_ref().map_or(0, |l| l.seq)
}

/// The finished dispatch with the latest limit recorded before `before`.
fn latest_limit(s: &State, before: u64) -> Option<&AgentDispatch> {
    s.agents
        .iter()
        .filter(|d| d.finished.is_some() && d.limited.as_ref().is_some_and(|l| l.seq < before))
        .max_by_key(|d| limit_seq(d))
}

#[cfg(test)]
mod tests {
    use super::pending_limit;
    use crate::model::State;

    fn state(lines: &[String]) -> State {
        crate::model::test_journal::state(lines)
    }

    fn start(n: u32) -> String {
        format!(
            r#"{{"type":"agent.started","dispatch":{n},"role":"finding-verifier","iteration":1,"adapter":"generic","pid":1,"pgid":1,"inputSha256":"x","log":"agents/{n}.log"}}"#
        )
    }

    fn finish(n: u32, code: i32) -> String {
        format!(
            r#"{{"type":"agent.finished","dispatch":{n},"role":"finding-verifier","exitCode":{code}}}"#
        )
    }

    /// A limited finish: `agent.limited`, then `agent.finished`.
    fn limited(n: u32) -> [String; 2] {
        [
            format!(
                r#"{{"type":"agent.limited","dispatch":{n},"role":"finding-verifier","until":"2026-12-01T10:05:00Z","message":"usage limit"}}"#
            ),
            finish(n, 1),
        ]
    }

    fn gate() -> String {
        r#"{"type":"human.requested","id":"hg-1-limit-1","kind":"structural","iteration":1,"subject":"finding-verifier","summary":"s","options":["retry"]}"#.to_string()
    }

    fn run() -> Vec<String> {
        vec![
            r#"{"type":"run.started","run":{"id":"r","contract":"c.md","diff":"HEAD","engine":true}}"#
                .to_string(),
        ]
    }

    fn pending(lines: &[String]) -> Option<(u32, usize)> {
        let s = state(lines);
        pending_limit(&s).map(|(d, n)| (d.started.dispatch, n))
    }

    #[test]
    fn a_lane_that_finishes_after_the_limit_leaves_it_pending() {
        // Lanes 2 and 3 run together; 2 answers a limit, 3 its verdict.
        let mut l = run();
        l.extend([start(2), start(3)]);
        l.extend(limited(2));
        l.push(finish(3, 0));
        assert_eq!(pending(&l), Some((2, 1)));
        // The next start answers it.
        l.push(start(4));
        assert_eq!(pending(&l), None);
    }

    #[test]
    fn lanes_limited_together_are_one_limit_and_the_next_one_is_the_second() {
        let mut l = run();
        l.extend([start(2), start(3)]);
        l.extend(limited(2));
        l.extend(limited(3));
        assert_eq!(pending(&l), Some((3, 1)));
        // Waited out: both lanes again, both limited again.
        l.extend([start(4), start(5)]);
        l.extend(limited(4));
        l.extend(limited(5));
        assert_eq!(pending(&l), Some((5, 2)));
    }

    #[test]
    fn a_person_or_a_dispatch_let_through_starts_the_count_over() {
        let mut l = run();
        l.push(start(2));
        l.extend(limited(2));
        l.push(gate());
        assert_eq!(pending(&l), None);
        // Retried: limited again, a first limit since the person.
        l.push(start(3));
        l.extend(limited(3));
        assert_eq!(pending(&l), Some((3, 1)));
        // A dispatch went through between two limits.
        l.extend([start(4), finish(4, 0), start(5)]);
        l.extend(limited(5));
        assert_eq!(pending(&l), Some((5, 1)));
    }

    #[test]
    fn a_failure_or_a_running_dispatch_is_no_limit() {
        let mut l = run();
        l.extend([start(2), finish(2, 1)]);
        assert_eq!(pending(&l), None);
        // Answered a limit but not finished yet: nothing pending.
        l.extend([
            start(3),
            r#"{"type":"agent.limited","dispatch":3,"role":"finding-verifier","message":"m"}"#
                .to_string(),
        ]);
        assert_eq!(pending(&l), None);
        l.push(finish(3, 1));
        assert_eq!(pending(&l), Some((3, 1)));
    }
}
