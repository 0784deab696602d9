//! GATE 0, the deterministic floor: parse a contract's acceptance criteria
//! (`status`), run their CHECK: oracles fail-closed and write the evidence
//! back (`run`), byte-compatible with the reference floor.
