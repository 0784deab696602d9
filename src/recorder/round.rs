//! What a gate round contributes to `gate.finished`, independent of where
//! it was parsed from (an agent's output, or GATE 0 run here).

use crate::model::event::GateFinished;
use crate::model::*;

/// The parsed content of one gate round.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundInput {
    /// The verdict.
    pub verdict: Verdict,
    /// Rows (floor, criterion or security).
    pub rows: Vec<GateRow>,
    /// Security REPORTED rows.
    pub reported: Vec<ReportedRow>,
    /// SCOPE line.
    pub scope: Option<Scope>,
    /// FLOOR line.
    pub floor: Option<String>,
    /// PROOF line.
    pub proof: Option<String>,
    /// CONTRACT line.
    pub contract: Option<String>,
    /// TOOL line.
    pub tool: Option<String>,
    /// Degraded security run.
    pub degraded: bool,
    /// Why the output is structurally invalid.
    pub structural: Option<String>,
}

impl RoundInput {
    /// A structurally invalid round: verdict ERROR with the reason.
    pub fn structural(why: String) -> Self {
        RoundInput {
            verdict: Verdict { kind: VerdictKind::Error, n: None, reason: Some(format!("structural: {why}")) },
            rows: Vec::new(),
            reported: Vec::new(),
            scope: None,
            floor: None,
            proof: None,
            contract: None,
            tool: None,
            degraded: false,
            structural: Some(why),
        }
    }

    /// The `gate.finished` payload.
    pub fn into_finished(self, gate: GateName, iteration: u32, round: u32, output: Option<String>) -> GateFinished {
        GateFinished {
            gate,
            iteration,
            round,
            verdict: self.verdict,
            degraded: self.degraded,
            rows: self.rows,
            reported: self.reported,
            scope: self.scope,
            floor: self.floor,
            proof: self.proof,
            contract: self.contract,
            tool: self.tool,
            output,
            structural: self.structural,
            extra: Default::default(),
        }
    }
}

/// A GATE 0 round from its rows and verdict.
pub fn floor_round_input(rows: Vec<FloorRow>, verdict: Verdict) -> RoundInput {
    RoundInput {
        verdict,
        rows: rows.into_iter().map(GateRow::Floor).collect(),
        reported: Vec::new(),
        scope: None,
        floor: None,
        proof: None,
        contract: None,
        tool: None,
        degraded: false,
        structural: None,
    }
}
