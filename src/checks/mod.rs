//! The loop's other deterministic checks: floor-guard (a weakened quality
//! bar in the diff), evidence-gate (does a test log prove a claim) and
//! triage apply (verify-by-test results into a triage file).
