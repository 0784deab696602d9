//! Every gate of the loop, in one place: who judges it (GATE 0 is
//! loopwatch's own; GATE 1 and 2 an agent with the inputs the loop names)
//! and how its output is read into a round. `loopwatch record gate` and
//! the engine both go through [`Gate::read`], so a gate's output means the
//! same whoever recorded it.

use crate::model::GateName;
use crate::model::event::{AgentRole, RunInfo};
use crate::model::rules;
use crate::parse::{self, Structural};

use super::RoundResult;

/// A gate.
#[derive(Debug, Clone, Copy)]
pub struct Gate {
    /// Its name.
    pub name: GateName,
    /// The agent that judges it; `None` for GATE 0, which loopwatch runs.
    pub judge: Option<Judge>,
    read: fn(&str, &[u8]) -> RoundResult,
}

/// The agent that judges a gate.
#[derive(Debug, Clone, Copy)]
pub struct Judge {
    /// Its role in `loopwatch.toml`.
    pub role: AgentRole,
    /// Its inputs, from the run (PROTOCOL §5b).
    pub input: fn(&RunInfo) -> String,
}

const FLOOR: Gate = Gate {
    name: GateName::Floor,
    judge: None,
    read: |name, raw| parse::parse_gate0_report(name, raw).map(|r| r.to_gate_output()),
};

const CONFORMITY: Gate = Gate {
    name: GateName::Conformity,
    judge: Some(Judge {
        role: AgentRole::Verifier,
        input: rules::verifier_input,
    }),
    read: parse::parse_conformity,
};

const SECURITY: Gate = Gate {
    name: GateName::Security,
    judge: Some(Judge {
        role: AgentRole::Auditor,
        input: rules::auditor_input,
    }),
    read: parse::parse_security,
};

impl Gate {
    /// The gate named `name`.
    pub fn of(name: GateName) -> &'static Gate {
        match name {
            GateName::Floor => &FLOOR,
            GateName::Conformity => &CONFORMITY,
            GateName::Security => &SECURITY,
        }
    }

    /// Reads an output of this gate (`input` names it in messages): the
    /// round, or why it is structurally invalid.
    pub fn read(&self, input: &str, raw: &[u8]) -> RoundResult {
        (self.read)(input, raw)
    }

    /// A round whose judge failed before answering: structural, saying why.
    pub fn failed(&self, input: &str, why: String) -> RoundResult {
        Err(Structural::new(
            input,
            parse::StructuralKind::AgentFailed,
            None,
            why,
        ))
    }
}
