//! Journal benchmark: events/s appended through the locked append, time to
//! fold a 100,000-event journal, and wall time of one `loopwatch record`
//! process. Prints figures; asserts nothing about time.

use std::time::{Duration, Instant};

use loopwatch::journal::{AppendOptions, Pipeline, append, read_all};
use loopwatch::model::event::*;
use loopwatch::model::*;

fn main() {
    let d = tempfile::tempdir().expect("temp dir");
    let p = Pipeline::at(d.path().join(".pipeline"));
    let o = AppendOptions::default();

    // 1. Appends, one event per locked append (the orchestrator's pattern).
    let n = 500;
    let t = Instant::now();
    for i in 0..n {
        append(
            &p,
            &o,
            vec![EventBody::Note {
                text: format!("note {i}"),
            }],
        )
        .expect("append");
    }
    let el = t.elapsed();
    println!(
        "append: {n} single-event appends in {:.3}s = {:.0} events/s ({:.2} ms each, fsync included)",
        el.as_secs_f64(),
        n as f64 / el.as_secs_f64(),
        el.as_secs_f64() * 1000.0 / n as f64
    );

    // 2. Fold of a 100,000-event journal (read + parse + fold).
    let big = d.path().join("big.jsonl");
    let written = write_big_journal(&big, 100_000);
    let size = std::fs::metadata(&big).map(|m| m.len()).unwrap_or(0);
    let mut best = Duration::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        let batch = read_all(&big).expect("read");
        let state = fold(&batch.events);
        assert_eq!(state.seq, written);
        best = best.min(t.elapsed());
    }
    println!(
        "fold: 100,000 events ({:.1} MB) read+parsed+folded in {:.1} ms (best of 3)",
        size as f64 / 1e6,
        best.as_secs_f64() * 1000.0
    );

    // 3. The hash chain of the same journal checked (what `verify` and
    // `validate` do first), beside the fold above.
    let bytes = std::fs::read(&big).expect("read");
    let mut best = Duration::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        let (chain, breaks) = loopwatch::journal::check_chain(&bytes);
        assert!(breaks.is_empty(), "{breaks:?}");
        assert_eq!(chain.lines(), written);
        best = best.min(t.elapsed());
    }
    println!(
        "chain: 100,000 lines' hash chain checked in {:.1} ms (best of 3, from memory)",
        best.as_secs_f64() * 1000.0
    );

    // 4. Wall time of one `loopwatch record note` process.
    let bin = env!("CARGO_BIN_EXE_loopwatch");
    let mut times = Vec::new();
    for i in 0..20 {
        let t = Instant::now();
        let st = std::process::Command::new(bin)
            .args(["--pipeline"])
            .arg(p.dir())
            .args(["record", "note", &format!("from a process {i}")])
            .stdout(std::process::Stdio::null())
            .status()
            .expect("spawn");
        assert!(st.success());
        times.push(t.elapsed());
    }
    times.sort();
    println!(
        "record process: p50 {:.2} ms, max {:.2} ms (20 runs, `loopwatch record note`)",
        times[10].as_secs_f64() * 1000.0,
        times[19].as_secs_f64() * 1000.0
    );
}

fn write_big_journal(path: &std::path::Path, n: u64) -> u64 {
    use std::io::Write;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    let mut seq = 0u64;
    // Chained as the write path chains it: each line names the hash of
    // the line before it.
    let mut last: Option<String> = None;
    let mut push = |f: &mut std::io::BufWriter<std::fs::File>, seq: &mut u64, body: EventBody| {
        *seq += 1;
        let ev = Event {
            v: 1,
            seq: *seq,
            at: "2026-11-02T09:15:02Z".into(),
            prev: last.take(),
            body,
        };
        let line = ev.to_line();
        last = Some(loopwatch::journal::line_hash(line.as_bytes()));
        writeln!(f, "{line}").expect("write");
    };
    let mut iteration = 0;
    while seq < n {
        iteration += 1;
        push(
            &mut f,
            &mut seq,
            EventBody::IterationStarted {
                iteration,
                trigger: "ecarts".into(),
            },
        );
        for k in 0..50 {
            if seq >= n {
                break;
            }
            let findings = vec![Finding {
                id: format!("F{k}"),
                severity: "major".into(),
                path: "src/lib.rs".into(),
                lines: "10-20".into(),
                claim: "a claim about the code that is long enough to be realistic".into(),
                verdict: FindingVerdict::Verified,
                evidence: "src/lib.rs:12: let x = y;".into(),
                note: String::new(),
                extra: Default::default(),
            }];
            push(
                &mut f,
                &mut seq,
                EventBody::FindingsVerified {
                    iteration,
                    findings,
                },
            );
        }
        if seq < n {
            push(
                &mut f,
                &mut seq,
                EventBody::Note {
                    text: "between iterations".into(),
                },
            );
        }
    }
    seq
}
