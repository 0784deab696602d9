//! What the screens say of the agents `loopwatch run` dispatches: the one
//! running now (for the header) and the tokens and cost they used (for the
//! Gates tab). Plain strings: no terminal type here.

use crate::model::State;
use crate::model::state::AgentDispatch;

/// `▶ verifier · GATE 1 round 2 · iter 3 · #7 · 1m05s`: the running
/// dispatch, with the seconds since its `agent.started` (`?` when that time
/// cannot be read).
pub fn running_text(a: &AgentDispatch, elapsed_secs: Option<u64>) -> String {
    let s = &a.started;
    let gate = s
        .gate
        .map(|g| format!(" · GATE {} round {}", g.number(), s.round.unwrap_or(1)))
        .unwrap_or_default();
    let elapsed = elapsed_secs.map_or_else(|| "?".to_string(), elapsed);
    format!(
        "▶ {}{gate} · iter {} · #{} · {elapsed}",
        s.role, s.iteration, s.dispatch
    )
}

/// `▶ verifier #7 · 1m05s`: [`running_text`] for a narrow header.
pub fn running_short(a: &AgentDispatch, elapsed_secs: Option<u64>) -> String {
    let s = &a.started;
    let elapsed = elapsed_secs.map_or_else(|| "?".to_string(), elapsed);
    format!("▶ {} #{} · {elapsed}", s.role, s.dispatch)
}

/// `42s`, `1m05s`, `2h03m`: precise enough to see a run move.
pub fn elapsed(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m{:02}s", secs / 60, secs % 60),
        _ => format!("{}h{:02}m", secs / 3600, secs % 3600 / 60),
    }
}

/// `agent #3 auditor GATE 2 round 2 · running` (or `· done`, or why it
/// failed): what an agent's log is, in the Logs tab.
pub fn log_label(a: &AgentDispatch) -> String {
    let s = &a.started;
    let gate = s
        .gate
        .map(|g| format!(" GATE {} round {}", g.number(), s.round.unwrap_or(1)))
        .unwrap_or_default();
    let how = match &a.finished {
        None => "running".to_string(),
        Some(f) => f.failure().unwrap_or_else(|| "done".to_string()),
    };
    format!(
        "iter {} agent #{} {}{gate} · {how}",
        s.iteration, s.dispatch, s.role
    )
}

/// The usage lines of the Gates tab, empty before any dispatch finished:
/// the run and the shown iteration, then the run per gate and the
/// dispatches that serve none. Unknown costs read `$?`, never `$0`.
pub fn usage_lines(state: &State, iteration: u32) -> Vec<String> {
    let u = &state.usage;
    if u.is_empty() {
        return Vec::new();
    }
    let iter = state
        .iteration(iteration)
        .map(|i| i.usage)
        .unwrap_or_default();
    let iter_text = if iter.is_empty() {
        "no agent".to_string()
    } else {
        iter.summary()
    };
    let unpriced = if u.total.unpriced > 0 {
        format!(", {} without a cost", u.total.unpriced)
    } else {
        String::new()
    };
    let first = format!(
        "agents · run: {} ({} dispatches{unpriced}) · iter {iteration}: {iter_text}",
        u.total.summary(),
        u.total.dispatches
    );
    let mut parts = Vec::new();
    for (name, part) in [
        ("GATE 1", &u.conformity),
        ("GATE 2", &u.security),
        ("developer", &u.developer),
        ("review", &u.other),
    ] {
        if !part.is_empty() {
            parts.push(format!("{name}: {}", part.summary()));
        }
    }
    vec![first, format!("per gate · {}", parts.join(" · "))]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elapsed_reads_seconds_then_minutes_then_hours() {
        assert_eq!(elapsed(0), "0s");
        assert_eq!(elapsed(59), "59s");
        assert_eq!(elapsed(65), "1m05s");
        assert_eq!(elapsed(3599), "59m59s");
        assert_eq!(elapsed(3720), "1h02m");
    }

    #[test]
    fn no_usage_lines_before_any_dispatch_finished() {
        assert!(usage_lines(&State::default(), 1).is_empty());
    }
}
