//! Every verdict as word + symbol + tone, never colour alone:
//! ✓ passed/met/verified/confirmed, ✗ failed/blocking, ? unverifiable or
//! inconclusive, ⊘ abandoned, ↓ not reproduced or deferred, ⚑ waiting on you.

use crate::model::Bucket;
use crate::model::state::RunStatus;
use crate::model::{
    CriterionStatus, FindingVerdict, FloorState, GateName, State, Verdict, VerdictKind,
    VerifyOutcome,
};
use crate::tui::tone::Tone;

/// A verdict as drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    /// One symbol.
    pub symbol: &'static str,
    /// The word.
    pub word: String,
    /// Its meaning.
    pub tone: Tone,
}

impl Mark {
    fn new(symbol: &'static str, word: impl Into<String>, tone: Tone) -> Self {
        Mark {
            symbol,
            word: word.into(),
            tone,
        }
    }

    /// `symbol word`.
    pub fn text(&self) -> String {
        format!("{} {}", self.symbol, self.word)
    }
}

/// Where a finding's lane stands: `· queued`, `… verifying`, `…
/// verifying 2` (after a failed attempt), `↻ rejected once`, `↻
/// verifying 2` (after a rejection), `⏸ usage limit` (waiting for a usage
/// limit to be over), the verdict once done, `✗ fault`.
pub fn lane(l: &crate::model::state::Lane) -> Mark {
    use crate::model::event::LaneState;
    match l.state {
        LaneState::Queued => Mark::new("·", "queued", Tone::Muted),
        LaneState::Running if l.rejected_once => {
            Mark::new("↻", format!("verifying {}", l.attempt), Tone::Warn)
        }
        LaneState::Running if l.attempt > 1 => {
            Mark::new("…", format!("verifying {}", l.attempt), Tone::Warn)
        }
        LaneState::Running => Mark::new("…", "verifying", Tone::Accent),
        LaneState::Rejected => Mark::new("↻", "rejected once", Tone::Warn),
        LaneState::Done => l.verdict.map_or_else(none, finding),
        LaneState::Fault => Mark::new("✗", "fault", Tone::Bad),
        LaneState::RaisedAgain => raised_again(),
        LaneState::Limited => Mark::new("⏸", "usage limit", Tone::Warn),
    }
}

/// A finding raised again (the finding ledger): never verified again.
pub fn raised_again() -> Mark {
    Mark::new("↺", "raised again", Tone::Muted)
}

/// A gate's verdict.
pub fn verdict(v: &Verdict) -> Mark {
    let t = match v.kind {
        VerdictKind::Met | VerdictKind::Conforme | VerdictKind::Pass => Tone::Good,
        VerdictKind::Unmet | VerdictKind::Error | VerdictKind::Ecarts | VerdictKind::Block => {
            Tone::Bad
        }
        VerdictKind::Pending | VerdictKind::Degraded | VerdictKind::Abandoned => Tone::Warn,
    };
    Mark::new(v.kind.symbol(), v.to_string(), t)
}

/// A GATE 0 criterion state.
pub fn floor_state(s: FloorState) -> Mark {
    let (sym, t) = match s {
        FloorState::Met | FloorState::MetRecorded => ("✓", Tone::Good),
        FloorState::NotMet => ("✗", Tone::Bad),
        FloorState::Manual => ("·", Tone::Muted),
        FloorState::Pending => ("?", Tone::Warn),
        FloorState::Abandoned => ("⊘", Tone::Warn),
    };
    Mark::new(sym, s.as_str(), t)
}

/// A GATE 1 criterion status.
pub fn criterion(s: CriterionStatus) -> Mark {
    let (sym, t) = match s {
        CriterionStatus::Met => ("✓", Tone::Good),
        CriterionStatus::NotMet => ("✗", Tone::Bad),
        CriterionStatus::Unverifiable => ("?", Tone::Warn),
        CriterionStatus::Abandoned => ("⊘", Tone::Warn),
    };
    Mark::new(sym, s.as_str(), t)
}

/// A finding verifier verdict.
pub fn finding(v: FindingVerdict) -> Mark {
    let (sym, t) = match v {
        FindingVerdict::Verified => ("✓", Tone::Good),
        FindingVerdict::False => ("✗", Tone::Bad),
        FindingVerdict::Unverifiable => ("?", Tone::Warn),
    };
    Mark::new(sym, v.as_str(), t)
}

/// A verify-by-test result; `red` when its repro test is kept red.
pub fn outcome(o: VerifyOutcome, red: bool) -> Mark {
    let t = match o {
        VerifyOutcome::Confirmed => Tone::Good,
        VerifyOutcome::NotReproduced | VerifyOutcome::CapExceeded => Tone::Muted,
        VerifyOutcome::Inconclusive => Tone::Warn,
    };
    let word = if red {
        format!("{} (red)", o.as_str())
    } else {
        o.as_str().to_string()
    };
    Mark::new(o.symbol(), word, t)
}

/// A triage bucket.
pub fn bucket(b: Bucket) -> Mark {
    match b {
        Bucket::Accepted => Mark::new("✓", "accepted", Tone::Good),
        Bucket::Deferred => Mark::new("↓", "deferred", Tone::Muted),
        Bucket::Rejected => Mark::new("✗", "rejected", Tone::Bad),
    }
}

/// Where the run stands.
pub fn run_status(s: &State) -> Mark {
    match s.status {
        RunStatus::Idle => Mark::new("·", "IDLE", Tone::Muted),
        RunStatus::Running => Mark::new("▸", "RUNNING", Tone::Accent),
        RunStatus::AwaitingHuman => Mark::new("⚑", "WAITING ON YOU", Tone::Human),
        RunStatus::Ended => {
            let end = s.ended.as_ref().map_or("ended", |e| e.status.as_str());
            let (sym, t) = match end {
                "complete" => ("✓", Tone::Good),
                "partial" => ("⊘", Tone::Warn),
                _ => ("✗", Tone::Bad),
            };
            Mark::new(sym, format!("ENDED {}", end.to_uppercase()), t)
        }
    }
}

/// Nothing yet.
pub fn none() -> Mark {
    Mark::new("·", "-", Tone::Muted)
}

/// Rounds used of the cap: `●●○`, with `+k` past the cap (`used/cap` for big caps).
pub fn dots(state: &State, g: GateName) -> String {
    let cap = state.caps.get(g) as usize;
    let running = state
        .current_gate
        .as_ref()
        .filter(|c| c.gate == g)
        .map(|c| c.round);
    let used = running
        .or(state.last_round(g).map(|r| r.round))
        .unwrap_or(0) as usize;
    if cap > 8 {
        return format!("{used}/{cap}");
    }
    let mut s = "●".repeat(used.min(cap));
    s.push_str(&"○".repeat(cap.saturating_sub(used)));
    if used > cap {
        s.push_str(&format!("+{}", used - cap));
    }
    s
}
