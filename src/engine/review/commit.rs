//! Group commit of the finding lanes' appends: every lane's `finding.lane`
//! transitions and its dispatch's `agent.started` / `agent.finished` go to
//! one committer for the map. Each request pending when a commit starts
//! goes into the same `append_with` (one journal write and fsync, one
//! `state.json`), in the order asked; each request gets back its own
//! events. The commit runs on the blocking pool, so the lanes' children
//! are reaped and their output read while it fsyncs.
//!
//! Batching never changes what is recorded: a request whose payloads
//! depend on the state (the gates a failed dispatch opens) is computed
//! against the state as the batch's earlier requests leave it (their
//! events folded provisionally, with the seq they are about to get). The
//! state is the one under the lock, so an append from outside between two
//! commits (`loopwatch decide`) is seen by the next one.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use tokio::sync::{mpsc, oneshot};

use crate::engine::dispatch::Record;
use crate::journal::{AppendOptions, Appended, JournalError, Pipeline, append_with};
use crate::model::event::EVENT_VERSION;
use crate::model::{Event, EventBody, State};
use crate::util::now_rfc3339;

/// What one request got: its own events (with their seq) and the state
/// after the commit that carried it.
#[derive(Debug, Clone)]
pub struct Committed {
    /// The request's events, in order.
    pub events: Vec<Event>,
    /// The state after the whole commit (as written to `state.json`).
    pub state: Arc<State>,
}

/// What the committer did, once every handle was dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Appends made (journal writes + fsyncs, `state.json` rewrites).
    pub commits: u64,
    /// Requests carried.
    pub requests: u64,
}

type Reply = oneshot::Sender<Result<Committed, JournalError>>;

/// The lanes' side: requests to the committer.
#[derive(Debug, Clone)]
pub struct Group {
    tx: mpsc::UnboundedSender<(Record, Reply)>,
    journal: std::path::PathBuf,
}

impl Group {
    /// Queues `r` at once (its place in the order is taken now); the future
    /// resolves when the commit that carried it is durable, or failed.
    pub fn submit(&self, r: Record) -> BoxFuture<'static, Result<Committed, JournalError>> {
        let (reply, rx) = oneshot::channel();
        let sent = self.tx.send((r, reply));
        let journal = self.journal.clone();
        Box::pin(async move {
            if sent.is_err() {
                return Err(gone(journal));
            }
            rx.await.unwrap_or_else(|_| Err(gone(journal)))
        })
    }
}

/// The committer of `pipeline`'s appends: the handle to submit with, and
/// the future that commits (it ends once every handle was dropped).
pub fn group(pipeline: Pipeline) -> (Group, impl Future<Output = Stats>) {
    let (tx, mut rx) = mpsc::unbounded_channel::<(Record, Reply)>();
    let journal = pipeline.journal_path();
    let journal_path = journal.clone();
    let committer = async move {
        let mut stats = Stats::default();
        while let Some(first) = rx.recv().await {
            let mut batch = vec![first];
            while let Ok(more) = rx.try_recv() {
                batch.push(more);
            }
            let (records, replies): (Vec<Record>, Vec<Reply>) = batch.into_iter().unzip();
            stats.commits += 1;
            stats.requests += records.len() as u64;
            let p = pipeline.clone();
            let n = replies.len();
            let done = tokio::task::spawn_blocking(move || commit(&p, &records))
                .await
                .unwrap_or_else(|e| (0..n).map(|_| Err(panicked(&journal_path, &e))).collect());
            for (reply, r) in replies.into_iter().zip(done) {
                // A lane that is gone does not need its answer.
                let _ = reply.send(r);
            }
        }
        stats
    };
    (Group { tx, journal }, committer)
}

/// One append carrying every record, in order; the results per record.
fn commit(pipeline: &Pipeline, records: &[Record]) -> Vec<Result<Committed, JournalError>> {
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

/// The committer stopped before it answered (the map was dropped).
fn gone(journal: std::path::PathBuf) -> JournalError {
    JournalError::io(
        "commit to",
        journal,
        std::io::Error::other("the committer stopped before the append"),
    )
}

/// The blocking task of a commit panicked or was cancelled.
fn panicked(journal: &std::path::Path, e: &tokio::task::JoinError) -> JournalError {
    JournalError::io(
        "commit to",
        journal,
        std::io::Error::other(format!("the commit did not finish: {e}")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::{append, read_all};
    use crate::model::rules::green::tests::developer;
    use serde_json::Value;

    fn note(t: &str) -> EventBody {
        EventBody::Note { text: t.into() }
    }

    fn fixed(bodies: Vec<EventBody>) -> Record {
        Record {
            bodies,
            ..Record::default()
        }
    }

    /// Two developer dispatches that fail: the second finish opens a gate.
    fn two_failures() -> Vec<Record> {
        let mut out = Vec::new();
        for n in 1..=3 {
            let (started, failed) = developer(n, 1, 1);
            out.push(fixed(vec![EventBody::from(started.clone())]));
            out.push(Record {
                finish: Some((started, failed)),
                after: vec![note(&format!("after {n}"))],
                ..Record::default()
            });
        }
        out
    }

    fn pipeline() -> (tempfile::TempDir, Pipeline) {
        let d = tempfile::tempdir().unwrap();
        let p = Pipeline::at(d.path().join(".pipeline"));
        (d, p)
    }

    /// Submits every record before the committer first runs, then lets it
    /// run to its end.
    fn run_batch(
        p: &Pipeline,
        records: Vec<Record>,
    ) -> (Vec<Result<Committed, JournalError>>, Stats) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let (group, committer) = group(p.clone());
            let pending: Vec<_> = records.into_iter().map(|r| group.submit(r)).collect();
            drop(group);
            let (results, stats) =
                futures_util::future::join(futures_util::future::join_all(pending), committer)
                    .await;
            (results, stats)
        })
    }

    /// The journal's lines without their `at`.
    fn bodies(p: &Pipeline) -> Vec<Value> {
        read_all(&p.journal_path())
            .unwrap()
            .events
            .iter()
            .map(|e| {
                let mut v = e.to_value();
                v.as_object_mut().unwrap().remove("at");
                v
            })
            .collect()
    }

    #[test]
    fn requests_pending_together_are_one_append_in_their_order() {
        let (_d, p) = pipeline();
        append(&p, &AppendOptions::default(), vec![note("before")]).unwrap();
        let records = vec![
            fixed(vec![note("a1"), note("a2")]),
            fixed(vec![note("b")]),
            fixed(vec![note("c")]),
        ];
        let (results, stats) = run_batch(&p, records);
        assert_eq!(
            stats,
            Stats {
                commits: 1,
                requests: 3
            }
        );
        let seqs: Vec<Vec<u64>> = results
            .iter()
            .map(|r| r.as_ref().unwrap().events.iter().map(|e| e.seq).collect())
            .collect();
        assert_eq!(seqs, [vec![2, 3], vec![4], vec![5]]);
        let events = read_all(&p.journal_path()).unwrap().events;
        let texts: Vec<_> = events
            .iter()
            .map(|e| match &e.body {
                EventBody::Note { text } => text.as_str(),
                _ => "?",
            })
            .collect();
        assert_eq!(texts, ["before", "a1", "a2", "b", "c"]);
        // One append: one time for the whole batch, state.json at its end.
        assert!(events[1..].iter().all(|e| e.at == events[1].at));
        for r in &results {
            assert_eq!(r.as_ref().unwrap().state.seq, 5);
        }
        let on_disk: State =
            serde_json::from_slice(&std::fs::read(p.state_path()).unwrap()).unwrap();
        assert_eq!(on_disk.seq, 5);
    }

    #[test]
    fn a_batch_records_exactly_what_one_append_per_request_records() {
        let (_a, alone) = pipeline();
        for r in two_failures() {
            let (res, stats) = run_batch(&alone, vec![r]);
            assert_eq!(stats.commits, 1);
            res.into_iter().for_each(|r| drop(r.unwrap()));
        }
        let (_b, grouped) = pipeline();
        let (res, stats) = run_batch(&grouped, two_failures());
        assert_eq!(
            stats,
            Stats {
                commits: 1,
                requests: 6
            }
        );
        assert_eq!(bodies(&grouped), bodies(&alone));
        // The failures after the first each opened their gate, with the
        // id it has when recorded alone, in the append of its finish.
        let gates: Vec<(u64, String)> = res
            .iter()
            .flat_map(|r| r.as_ref().unwrap().events.iter())
            .filter_map(|e| match &e.body {
                EventBody::HumanRequested(h) => Some((e.seq, h.id.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(gates.len(), 2, "{gates:?}");
        assert_ne!(gates[0].1, gates[1].1);
        let fourth = &res[3].as_ref().unwrap().events;
        assert!(matches!(fourth[1].body, EventBody::HumanRequested(_)));
        let state = &res[5].as_ref().unwrap().state;
        assert_eq!(state.open_human_gates().count(), 2);
    }

    #[test]
    fn an_append_from_outside_between_commits_is_seen_by_the_next() {
        let (_d, p) = pipeline();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let records = two_failures();
        let (gate_seq, last) = rt.block_on(async {
            let (group, committer) = group(p.clone());
            let lanes = async {
                let mut it = records.into_iter();
                for r in it.by_ref().take(4) {
                    group.submit(r).await.unwrap();
                }
                // Another writer (`loopwatch decide`) between two commits.
                let outside = append(&p, &AppendOptions::default(), vec![note("outside")])
                    .unwrap()
                    .events[0]
                    .seq;
                let mut last = None;
                for r in it {
                    last = Some(group.submit(r).await.unwrap());
                }
                drop(group);
                (outside, last.unwrap())
            };
            futures_util::future::join(lanes, committer).await.0
        });
        let first_after = last.events[0].seq;
        assert!(gate_seq < first_after);
        assert_eq!(
            last.state.seq,
            read_all(&p.journal_path()).unwrap().events.len() as u64
        );
        let events = read_all(&p.journal_path()).unwrap().events;
        let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, (1..=events.len() as u64).collect::<Vec<_>>());
        assert_eq!(
            events
                .iter()
                .filter(|e| matches!(e.body, EventBody::HumanRequested(_)))
                .count(),
            2
        );
    }

    #[test]
    fn a_failed_commit_fails_every_request_in_it() {
        let (_d, p) = pipeline();
        std::fs::create_dir_all(p.journal_path()).unwrap();
        let (results, stats) = run_batch(&p, vec![fixed(vec![note("a")]), fixed(vec![note("b")])]);
        assert_eq!(stats.commits, 1);
        assert_eq!(results.len(), 2);
        for r in results {
            let e = r.unwrap_err();
            let journal = p.journal_path().display().to_string();
            assert!(e.to_string().contains(&journal), "names the journal: {e}");
        }
    }
}
