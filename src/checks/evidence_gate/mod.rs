//! evidence-gate (placeholder while floor-guard builds).
