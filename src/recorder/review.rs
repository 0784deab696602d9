//! The review stage's own appends: the findings queued for their lanes
//! (asked of the finding ledger under the lock), and the stage's end with
//! the gates the rules open for it.

use serde_json::Value;

use super::Recorder;
use crate::journal::{Appended, JournalError, append_with};
use crate::model::EventBody;
use crate::model::event::{FindingLane, LaneState};
use crate::model::{ledger, rules};

/// A finding to queue: its id and its item verbatim.
#[derive(Debug, Clone, Copy)]
pub struct Queued<'a> {
    /// Its id.
    pub id: &'a str,
    /// The item (path, lines, claim read from it for the ledger).
    pub item: &'a Value,
}

impl Recorder {
    /// One `finding.lane` per finding, in one append: `queued`, or
    /// `raised-again` with its earlier verdict when the rules find it
    /// settled in an earlier round (the finding ledger, asked under the
    /// journal's lock). The first carries what was normalised to read them.
    pub fn queue_lanes(
        &self,
        iteration: u32,
        findings: &[Queued<'_>],
        project_dir: &str,
        normalized: &[String],
    ) -> Result<Appended, JournalError> {
        append_with::<_, JournalError>(&self.pipeline, &self.opts, |s| {
            Ok(findings
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let (path, lines, claim) = ledger::claim_fields(f.item);
                    let again = ledger::raised_again(
                        s,
                        iteration,
                        ledger::Claim {
                            path: &path,
                            lines: &lines,
                            claim: &claim,
                        },
                    );
                    let state = if again.is_some() {
                        LaneState::RaisedAgain
                    } else {
                        LaneState::Queued
                    };
                    let mut l = FindingLane::new(
                        iteration,
                        f.id,
                        u32::try_from(i).unwrap_or(u32::MAX),
                        state,
                        0,
                    );
                    if let Some(r) = again {
                        l.verdict = Some(r.verdict);
                        l.evidence = Some(r.evidence.clone());
                        l.note = Some(r.sentence());
                        l.raised_again = Some(r);
                    }
                    l.item = Some(f.item.clone());
                    l.project_dir = Some(project_dir.to_string());
                    if i == 0 {
                        l.normalized = normalized.to_vec();
                    }
                    EventBody::from(l)
                })
                .collect())
        })
    }

    /// Records the end of the review of `iteration` (`review.finished`,
    /// with the `cap-reached` gate when the round used the last one), the
    /// rules applied under the journal lock.
    pub fn review_finish(
        &self,
        iteration: u32,
        results: Option<String>,
    ) -> Result<Appended, JournalError> {
        append_with::<_, JournalError>(&self.pipeline, &self.opts, |s| {
            let r = rules::review::finish(s, iteration, results.clone());
            let reqs = rules::review::gates_for_review(s, &r);
            let mut bodies = vec![EventBody::from(r)];
            bodies.extend(
                rules::assign_ids(s, iteration, reqs, rules::review::REVIEW_SUBJECT)
                    .into_iter()
                    .map(EventBody::from),
            );
            Ok(bodies)
        })
    }
}
