//! triage apply (placeholder).
