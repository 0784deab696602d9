//! Questions the run answers about a finding and about its end, asked by
//! the TUI, the report and the rules alike (one answer each): the triage
//! bucket of a finding, its verify-by-test result, whether its repro test
//! is kept red, the rank of a severity, and whether a person accepted a
//! partial delivery.

use super::event::VerifyResult;
use super::state::{Iteration, State};
use super::types::{Finding, VerifyOutcome};

/// A triage bucket of a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bucket {
    /// Accepted (must be fixed).
    Accepted,
    /// Deferred.
    Deferred,
    /// Rejected.
    Rejected,
}

impl Bucket {
    /// The bucket named `accepted`, `deferred` or `rejected`.
    pub fn from_name(name: &str) -> Option<Bucket> {
        match name {
            "accepted" => Some(Bucket::Accepted),
            "deferred" => Some(Bucket::Deferred),
            "rejected" => Some(Bucket::Rejected),
            _ => None,
        }
    }
}

impl Iteration {
    /// The verify-by-test result of finding `id`, if it was attempted.
    pub fn verification_of(&self, id: &str) -> Option<&VerifyResult> {
        self.verifications.iter().find(|v| v.finding == id)
    }

    /// True when the repro test of finding `id` is kept red.
    pub fn is_red(&self, id: &str) -> bool {
        self.verify_by_test
            .as_ref()
            .is_some_and(|s| s.red_tests.iter().any(|t| t.issue == id))
    }

    /// The triage bucket of a finding, when known: recorded with the
    /// triage, else named by the finding itself (`bucket` or `triage`),
    /// else implied by its verify-by-test result (not reproduced: deferred;
    /// confirmed or inconclusive: accepted).
    pub fn bucket_of(&self, f: &Finding) -> Option<Bucket> {
        let recorded = self
            .triage
            .as_ref()
            .and_then(|t| t.buckets.as_ref())
            .and_then(|b| b.bucket_of(&f.id));
        let named = recorded.or_else(|| {
            ["bucket", "triage"]
                .iter()
                .find_map(|k| f.extra.get(*k).and_then(|v| v.as_str()))
        });
        if let Some(b) = named.and_then(Bucket::from_name) {
            return Some(b);
        }
        match self.verification_of(&f.id).map(|v| v.result) {
            Some(VerifyOutcome::NotReproduced) => Some(Bucket::Deferred),
            Some(VerifyOutcome::Confirmed | VerifyOutcome::Inconclusive) => Some(Bucket::Accepted),
            _ => None,
        }
    }
}

/// The rank of a severity word, most severe first: blocking/critical 0,
/// major/high 1, minor/medium 2, nit/low 3, anything else 4.
pub fn severity_rank(severity: &str) -> u8 {
    match severity.to_ascii_lowercase().as_str() {
        "blocking" | "critical" => 0,
        "major" | "high" => 1,
        "minor" | "medium" => 2,
        "nit" | "low" => 3,
        _ => 4,
    }
}

impl State {
    /// True when a person accepted an abandonment as a partial delivery:
    /// a run that then passes every gate ends `partial`, not `complete`.
    pub fn accepted_partial(&self) -> bool {
        // A decision or an expiry whose action accepts the partial delivery.
        self.human_gates
            .iter()
            .any(|g| g.effect() == Some(crate::model::kinds::Effect::PartialDelivery))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severities_rank_most_severe_first_whatever_the_case() {
        let ranks: Vec<u8> = ["Critical", "blocking", "HIGH", "minor", "nit", "style"]
            .iter()
            .map(|s| severity_rank(s))
            .collect();
        assert_eq!(ranks, vec![0, 0, 1, 2, 3, 4]);
    }

    #[test]
    fn bucket_names_are_exact() {
        assert_eq!(Bucket::from_name("deferred"), Some(Bucket::Deferred));
        assert_eq!(Bucket::from_name("Deferred"), None);
    }
}
