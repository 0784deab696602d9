//! Replay positions, one set of rules for every past a replay steps
//! through (a journal's events, or the versions of a foreign `state.json`
//! that were observed): where `loopwatch replay` starts and where a replay
//! key moves. Positions count steps applied: 0 is before the first, and a
//! replay shows positions `1..=len`.

/// Where `loopwatch replay` starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayStart {
    /// The first step.
    First,
    /// The event with this seq (for observed states: the version with this number).
    Seq(u64),
    /// The first step of this iteration.
    Iteration(u32),
}

/// A move of the replay position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayMove {
    /// One step back.
    Back,
    /// One step forward.
    Forward,
    /// The first step.
    First,
    /// Back to live (the newest position, leaving replay).
    Live,
    /// The start of the previous iteration.
    PrevIteration,
    /// The start of the next iteration.
    NextIteration,
}

/// A past that can be stepped through.
pub trait Steps {
    /// Number of steps.
    fn len(&self) -> usize;
    /// True when there is no step.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Each iteration's number and the position of its first step (1-based).
    fn iteration_starts(&self) -> Vec<(u32, usize)>;
    /// The number of steps up to and including the one numbered `seq`.
    fn position_of_seq(&self, seq: u64) -> usize;
}

/// The position where replay starts: the first step, the step with a seq,
/// or the first step of an iteration (the first step when that iteration
/// does not exist).
pub fn start_position(past: &impl Steps, start: ReplayStart) -> usize {
    let k = match start {
        ReplayStart::First => 1,
        ReplayStart::Seq(seq) => past.position_of_seq(seq).max(1),
        ReplayStart::Iteration(n) => past
            .iteration_starts()
            .iter()
            .find(|(i, _)| *i == n)
            .map_or(1, |(_, pos)| *pos),
    };
    k.min(past.len())
}

/// Where a replay key moves from position `k`; `None` for
/// [`ReplayMove::Live`] (leave replay).
pub fn move_target(past: &impl Steps, k: usize, m: ReplayMove) -> Option<usize> {
    let target = match m {
        ReplayMove::Back => k.saturating_sub(1).max(1),
        ReplayMove::Forward => k + 1,
        ReplayMove::First => 1,
        ReplayMove::PrevIteration => past
            .iteration_starts()
            .iter()
            .rev()
            .map(|(_, p)| *p)
            .find(|&p| p < k)
            .unwrap_or(1),
        ReplayMove::NextIteration => past
            .iteration_starts()
            .iter()
            .map(|(_, p)| *p)
            .find(|&p| p > k)
            .unwrap_or(past.len()),
        ReplayMove::Live => return None,
    };
    Some(target.min(past.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ten steps; iterations start at steps 1, 4 and 8.
    struct Ten;

    impl Steps for Ten {
        fn len(&self) -> usize {
            10
        }
        fn iteration_starts(&self) -> Vec<(u32, usize)> {
            vec![(1, 1), (2, 4), (3, 8)]
        }
        fn position_of_seq(&self, seq: u64) -> usize {
            usize::try_from(seq).unwrap_or(usize::MAX).min(10)
        }
    }

    #[test]
    fn starts_and_moves_stay_inside_the_past() {
        assert_eq!(start_position(&Ten, ReplayStart::First), 1);
        assert_eq!(start_position(&Ten, ReplayStart::Seq(0)), 1);
        assert_eq!(start_position(&Ten, ReplayStart::Seq(99)), 10);
        assert_eq!(start_position(&Ten, ReplayStart::Iteration(2)), 4);
        assert_eq!(start_position(&Ten, ReplayStart::Iteration(9)), 1);
        assert_eq!(move_target(&Ten, 1, ReplayMove::Back), Some(1));
        assert_eq!(move_target(&Ten, 10, ReplayMove::Forward), Some(10));
        assert_eq!(move_target(&Ten, 5, ReplayMove::PrevIteration), Some(4));
        assert_eq!(move_target(&Ten, 4, ReplayMove::PrevIteration), Some(1));
        assert_eq!(move_target(&Ten, 8, ReplayMove::NextIteration), Some(10));
        assert_eq!(move_target(&Ten, 6, ReplayMove::First), Some(1));
        assert_eq!(move_target(&Ten, 6, ReplayMove::Live), None);
    }
}
