//! The loop's other deterministic checks: floor-guard (a weakened quality
//! bar in the diff), evidence-gate (does a test log prove a claim) and
//! triage apply (verify-by-test results into a triage file).
//!
//! Each check has a pure core (text in, typed result out) and a thin layer
//! that reads files or runs git. Never touches the terminal: the CLI prints.

pub mod evidence_gate;
pub mod floor_guard;
pub mod triage;
