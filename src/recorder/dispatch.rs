//! A dispatch's appends: its `agent.started`, its `agent.finished` with the
//! human gates the rules open for a failed finish (computed under the lock
//! against the state they land on), and a finding lane's transitions
//! around them; alone, or many dispatches' records in one append (the
//! finding lanes' group commit, whose batching lives in the engine).
//!
//! Batching never changes what is recorded: a record whose payloads
//! depend on the state is computed against the state as the batch's
//! earlier records leave it (their events folded provisionally, with the
//! seq they are about to get).

use std::sync::Arc;

use crate::journal::{AppendOptions, Appended, JournalError, Pipeline, append_with};
use crate::model::event::{AgentFinished, AgentRole, AgentStarted, EVENT_VERSION};
use crate::model::rules;
use crate::model::{Event, EventBody, State};
use crate::util::now_rfc3339;

/// Appends `bodies`, then the finish of a dispatch with the human gates the
/// rules open for it, in one append.
pub fn record(
    pipeline: &Pipeline,
    bodies: Vec<EventBody>,
    finish: Option<(&AgentStarted, &AgentFinished)>,
) -> Result<(), JournalError> {
    let r = Record {
        bodies,
        finish: finish.map(|(st, f)| (st.clone(), f.clone())),
        ..Record::default()
    };
    r.write(pipeline)
}

/// One append a dispatch asks for: `bodies`, then the finish of a
/// dispatch with the human gates the rules open for it, then `after`.
#[derive(Debug, Clone, Default)]
pub struct Record {
    /// Written first (a lane's transition, `agent.started`).
    pub bodies: Vec<EventBody>,
    /// The dispatch finished, with its start (for the rules' gates).
    pub finish: Option<(AgentStarted, AgentFinished)>,
    /// Written last (a lane's transition after the finish).
    pub after: Vec<EventBody>,
    /// The end of a failed agent's log ([`super::evidence::log_tail`]), put in the
    /// evidence of any gate its failure opens.
    pub log_tail: Vec<String>,
}

impl Record {
    /// The payloads appended on top of `s`: the gates a failed finish opens
    /// depend on the state (their ids, the failures before), so they are
    /// computed under the lock against the state the events land on.
    pub fn payloads(&self, s: &State) -> Vec<EventBody> {
        let mut out = self.bodies.clone();
        if let Some((st, f)) = &self.finish {
            out.push(EventBody::from(f.clone()));
            // A limited dispatch opens nothing here: the engine waits the
            // limit out, or asks a person, before the next dispatch.
            let limited = self
                .bodies
                .iter()
                .any(|b| matches!(b, EventBody::AgentLimited(l) if l.dispatch == f.dispatch));
            let mut reqs = if limited {
                Vec::new()
            } else {
                rules::gates_for_dispatch(s, st, f)
            };
            if !self.log_tail.is_empty() {
                for r in &mut reqs {
                    r.evidence["logLines"] = serde_json::json!(self.log_tail);
                }
            }
            out.extend(
                rules::assign_ids(s, st.iteration, reqs, gate_scope(st.role))
                    .into_iter()
                    .map(EventBody::from),
            );
        }
        out.extend(self.after.iter().cloned());
        out
    }

    /// Writes the record on its own (no group commit).
    pub fn write(&self, pipeline: &Pipeline) -> Result<(), JournalError> {
        append_with(
            pipeline,
            &AppendOptions::default(),
            |s| Ok(self.payloads(s)),
        )
        .map(|_| ())
    }
}

/// The id scope of the gates a failed dispatch opens (`hg-<i>-<scope>-<n>`).
fn gate_scope(role: AgentRole) -> &'static str {
    match role {
        AgentRole::Reviewer => rules::review::REVIEWER_SUBJECT,
        _ => rules::DEVELOPER_SUBJECT,
    }
}

/// What one request got: its own events (with their seq) and the state
/// after the commit that carried it.
#[derive(Debug, Clone)]
pub struct Committed {
    /// The request's events, in order.
    pub events: Vec<Event>,
    /// The state after the whole commit (as written to `state.json`).
    pub state: Arc<State>,
}

/// One append carrying every record, in order; the results per record
/// (the group commit of the finding lanes).
pub fn commit(pipeline: &Pipeline, records: &[Record]) -> Vec<Result<Committed, JournalError>> {
    let mut counts = Vec::with_capacity(records.len());
    let out = append_with::<_, JournalError>(pipeline, &AppendOptions::default(), |s| {
        Ok(payloads(s, records, &mut counts))
    });
    match out {
        Ok(a) => split(a, &counts),
        Err(JournalError::StateStale {
            path,
            cause,
            appended,
        }) => {
            // Appended, but state.json is stale: every request is told so,
            // with its own events (none of them may be retried).
            let (kind, text) = (cause.kind(), cause.to_string());
            split(*appended, &counts)
                .into_iter()
                .map(|r| {
                    r.and_then(|c| {
                        Err(JournalError::StateStale {
                            path: path.clone(),
                            cause: std::io::Error::new(kind, text.clone()),
                            appended: Box::new(Appended {
                                events: c.events,
                                state: (*c.state).clone(),
                            }),
                        })
                    })
                })
                .collect()
        }
        Err(e) => {
            let mut all: Vec<_> = (1..records.len()).map(|_| Err(same(&e))).collect();
            all.insert(0, Err(e));
            all
        }
    }
}

/// The payloads of `records` on top of `s`, each computed against the
/// state the earlier ones leave (`counts`: how many each made).
fn payloads(s: &State, records: &[Record], counts: &mut Vec<usize>) -> Vec<EventBody> {
    counts.clear();
    if let [only] = records {
        let b = only.payloads(s);
        counts.push(b.len());
        return b;
    }
    let mut state = s.clone();
    let at = now_rfc3339();
    let mut out = Vec::new();
    for (i, r) in records.iter().enumerate() {
        let bodies = r.payloads(&state);
        counts.push(bodies.len());
        if i + 1 < records.len() {
            for body in &bodies {
                let ev = Event {
                    v: EVENT_VERSION,
                    seq: state.seq + 1,
                    at: at.clone(),
                    prev: None,
                    body: body.clone(),
                };
                state.apply(&ev);
            }
            state.finish();
        }
        out.extend(bodies);
    }
    out
}

/// Each record's events out of the append that carried them all.
fn split(a: Appended, counts: &[usize]) -> Vec<Result<Committed, JournalError>> {
    let state = Arc::new(a.state);
    let mut events = a.events.into_iter();
    counts
        .iter()
        .map(|&n| {
            Ok(Committed {
                events: events.by_ref().take(n).collect(),
                state: Arc::clone(&state),
            })
        })
        .collect()
}

/// The error of a failed commit, again, for each other request it carried.
fn same(e: &JournalError) -> JournalError {
    let again = |cause: &std::io::Error| std::io::Error::new(cause.kind(), cause.to_string());
    match e {
        JournalError::Io { op, path, cause } => JournalError::Io {
            op,
            path: path.clone(),
            cause: again(cause),
        },
        JournalError::LockTimeout {
            path,
            waited,
            holder,
        } => JournalError::LockTimeout {
            path: path.clone(),
            waited: *waited,
            holder: *holder,
        },
        JournalError::BadLockTimeout { value, max } => JournalError::BadLockTimeout {
            value: value.clone(),
            max: *max,
        },
        JournalError::NoPipeline { start } => JournalError::NoPipeline {
            start: start.clone(),
        },
        JournalError::NoPipelineAt { dir } => JournalError::NoPipelineAt { dir: dir.clone() },
        JournalError::SeqExhausted { path, last } => JournalError::SeqExhausted {
            path: path.clone(),
            last: *last,
        },
        JournalError::StateStale {
            path,
            cause,
            appended,
        } => JournalError::StateStale {
            path: path.clone(),
            cause: again(cause),
            appended: appended.clone(),
        },
        other => JournalError::io(
            "append to",
            std::path::PathBuf::new(),
            std::io::Error::other(other.to_string()),
        ),
    }
}
