//! Two processes appending 1,000 events each through the locked append:
//! 2,000 events with seq 1..=2000, no partial or interleaved line, and a
//! state.json equal to the fold of the journal.

use std::path::Path;
use std::process::Command;

use loopwatch::journal::{AppendOptions, Pipeline, append, read_all};
use loopwatch::model::{EventBody, State, fold};

const PER_WORKER: usize = 1000;

/// Not a test by itself: the child process body, run by `two_processes_append_concurrently`.
#[test]
#[ignore = "run as a child process by two_processes_append_concurrently"]
fn append_worker() {
    let Ok(dir) = std::env::var("LW_WORKER_PIPELINE") else {
        return;
    };
    let name = std::env::var("LW_WORKER_NAME").unwrap_or_default();
    let p = Pipeline::at(dir);
    let o = AppendOptions::default();
    for i in 0..PER_WORKER {
        append(
            &p,
            &o,
            vec![EventBody::Note {
                text: format!("{name}-{i}"),
            }],
        )
        .unwrap();
    }
}

fn spawn_worker(dir: &Path, name: &str) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "append_worker",
            "--ignored",
            "--test-threads=1",
            "-q",
        ])
        .env("LW_WORKER_PIPELINE", dir)
        .env("LW_WORKER_NAME", name)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn two_processes_append_concurrently() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join(".pipeline");
    let mut a = spawn_worker(&dir, "a");
    let mut b = spawn_worker(&dir, "b");
    assert!(a.wait().unwrap().success());
    assert!(b.wait().unwrap().success());

    let p = Pipeline::at(&dir);
    let raw = std::fs::read(p.journal_path()).unwrap();
    assert!(raw.ends_with(b"\n"), "no partial last line");
    let batch = read_all(&p.journal_path()).unwrap();
    assert!(batch.problems.is_empty(), "{:?}", batch.problems);
    assert_eq!(batch.events.len(), 2 * PER_WORKER);
    let seqs: Vec<u64> = batch.events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=(2 * PER_WORKER) as u64).collect::<Vec<_>>());
    // Each worker's notes arrive in its own order: nothing interleaved inside a line.
    for w in ["a", "b"] {
        let mine: Vec<String> = batch
            .events
            .iter()
            .filter_map(|e| match &e.body {
                EventBody::Note { text } if text.starts_with(&format!("{w}-")) => {
                    Some(text.clone())
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            mine,
            (0..PER_WORKER)
                .map(|i| format!("{w}-{i}"))
                .collect::<Vec<_>>()
        );
    }
    let state: State = serde_json::from_slice(&std::fs::read(p.state_path()).unwrap()).unwrap();
    assert_eq!(state, fold(&batch.events));
}
