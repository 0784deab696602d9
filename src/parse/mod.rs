//! Readers of foreign text: the agents' gate outputs, finding-verifier
//! verdicts and triage files. Every reader takes hostile input and returns
//! either a typed value or an error naming the input, the line and what was
//! expected. Never does I/O beyond what it is handed, never panics, and reads
//! each line once (regexes are compiled once per process).
//!
//! - [`parse_conformity`]: GATE 1 output (`VERIFY — VERDICT: …`).
//! - [`parse_security`]: GATE 2 output (`SECURITY — VERDICT: …`).
//! - [`parse_gate0_report`]: a GATE 0 report printed by another floor
//!   implementation (`GATES — VERDICT: …`).
//! - [`parse_verdicts`], [`parse_findings`], [`verify_findings`],
//!   [`findings_from_verdicts`]: the finding verifier's JSON and the
//!   verdict-gate rules.
//!
//! - [`agent_stream`]: the event streams of the agent CLIs (Claude Code's
//!   `stream-json`, Codex's `exec --json`), typed, and read as a transcript.
//! - [`holds_verdict`]: whether an agent's message holds a gate's VERDICT line.
//!
//! Every gate reader returns `Result<GateOutput, Structural>`: a
//! [`Structural`] error is a gate that did not follow its format, which the
//! loop treats as a failure of the gate, never as a pass.

pub mod agent_stream;
mod body;
mod conformity;
mod error;
mod finding_verdicts;
mod findings;
mod gate0_report;
mod json;
mod lenient;
pub mod lines;
mod security;
mod verdict;

pub use error::{Structural, StructuralKind};
pub use finding_verdicts::{
    Checked, FAULT_PREFIX, VerdictEntry, check as check_verdict, parse_verdicts,
};
pub use findings::{
    Matching, ReviewFinding, findings_from_verdicts, match_findings, parse_findings,
    verify_findings,
};
pub use gate0_report::{FloorReport, Handoff, Runnable, parse_gate0_report};
pub use json::{JsonInputError, kind_of};
pub use lenient::holds_verdict;

/// Reads a GATE 1 output named `input` (wrappings models add are removed
/// first and named in [`GateOutput::normalized`]).
pub fn parse_conformity(input: &str, text: &[u8]) -> Result<GateOutput, Structural> {
    lenient::read(
        input,
        GateName::Conformity,
        text,
        conformity::parse_conformity,
    )
}

/// Reads a GATE 2 output named `input` (wrappings models add are removed
/// first and named in [`GateOutput::normalized`]).
pub fn parse_security(input: &str, text: &[u8]) -> Result<GateOutput, Structural> {
    lenient::read(input, GateName::Security, text, security::parse_security)
}

use crate::model::{
    Extra, GateName, GateRow, ReportedRow, Scope, Verdict, VerdictKind, event::GateFinished,
};

/// Everything a gate's output says that `gate.finished` records.
#[derive(Debug, Clone, PartialEq)]
pub struct GateOutput {
    /// Which gate printed it.
    pub gate: GateName,
    /// The VERDICT line.
    pub verdict: Verdict,
    /// Criterion rows (GATE 1), BLOCKING rows (GATE 2) or floor rows (GATE 0).
    pub rows: Vec<GateRow>,
    /// GATE 2: the REPORTED (non-blocking) rows.
    pub reported: Vec<ReportedRow>,
    /// The SCOPE line (GATE 2 has no out-of-scope list).
    pub scope: Option<Scope>,
    /// GATE 1: the FLOOR line.
    pub floor: Option<String>,
    /// The PROOF line.
    pub proof: Option<String>,
    /// GATE 1: the CONTRACT line (GATE 0: the report's contract path).
    pub contract: Option<String>,
    /// GATE 2: the TOOL line.
    pub tool: Option<String>,
    /// GATE 2: the tools were absent (`TOOL: … ABSENT/DEGRADED`, or a bare
    /// `DEGRADED` verdict).
    pub degraded: bool,
    /// What was normalised to read the output (see `gate.finished.normalized`).
    pub normalized: Vec<String>,
}

impl GateOutput {
    /// An output holding only its verdict.
    pub fn new(gate: GateName, verdict: Verdict) -> Self {
        GateOutput {
            gate,
            verdict,
            rows: Vec::new(),
            reported: Vec::new(),
            scope: None,
            floor: None,
            proof: None,
            contract: None,
            tool: None,
            degraded: false,
            normalized: Vec::new(),
        }
    }

    /// The `gate.finished` payload of this output; `output` is the path of
    /// the verbatim `.out` file relative to `.pipeline/`.
    pub fn into_finished(self, iteration: u32, round: u32, output: Option<String>) -> GateFinished {
        GateFinished {
            gate: self.gate,
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
            structural: None,
            normalized: self.normalized,
            extra: Extra::new(),
        }
    }
}

impl Structural {
    /// The `gate.finished` payload of a structurally invalid output of
    /// `gate`: what could be read (or an `ERROR(structural)` verdict when the
    /// verdict itself is missing or unreadable), with `structural` set.
    pub fn into_finished(
        self,
        gate: GateName,
        iteration: u32,
        round: u32,
        output: Option<String>,
    ) -> GateFinished {
        let summary = self.summary();
        let normalized = self.normalized.clone();
        let partial = match self.partial {
            Some(p) => *p,
            None => GateOutput::new(
                gate,
                Verdict {
                    kind: VerdictKind::Error,
                    n: None,
                    reason: Some("structural".to_owned()),
                },
            ),
        };
        let mut finished = partial.into_finished(iteration, round, output);
        finished.structural = Some(summary);
        if finished.normalized.is_empty() {
            finished.normalized = normalized;
        }
        finished
    }
}

#[cfg(test)]
mod tests {
    use crate::model::Scope;

    /// A SCOPE line's value: `in_scope` files and the out-of-scope paths.
    pub(super) fn scope(in_scope: u32, out_of_scope: &[&str]) -> Option<Scope> {
        Some(Scope {
            in_scope,
            out_of_scope: out_of_scope.iter().map(|p| p.to_string()).collect(),
        })
    }
}
