//! Group commit of the finding lanes' appends: every lane's `finding.lane`
//! transitions and its dispatch's `agent.started` / `agent.finished` go to
//! one committer for the map. Each request pending when a commit starts
//! goes into the same append ([`commit`]: one journal write and fsync, one
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

use futures_util::future::BoxFuture;
use tokio::sync::{mpsc, oneshot};

use crate::journal::{JournalError, Pipeline};
use crate::recorder::dispatch::commit;
pub use crate::recorder::dispatch::{Committed, Record};

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
    use crate::journal::read_all;
    use crate::model::rules::green::tests::developer;
    use crate::model::{EventBody, State};
    use crate::recorder::Recorder;
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
                // The time differs between two journals, and with it the
                // hash of each line the next one names (each journal's
                // chain is checked on its own).
                let mut v = e.to_value();
                v.as_object_mut().unwrap().remove("at");
                v.as_object_mut().unwrap().remove("prev");
                v
            })
            .collect()
    }

    #[test]
    fn requests_pending_together_are_one_append_in_their_order() {
        let (_d, p) = pipeline();
        Recorder::new(p.clone()).note("before".into()).unwrap();
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
        for p in [&grouped, &alone] {
            let bytes = std::fs::read(p.journal_path()).unwrap();
            assert_eq!(crate::journal::check_chain(&bytes).1, []);
        }
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
                let outside = Recorder::new(p.clone())
                    .note("outside".into())
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
