//! Pipelines the benchmark runs against, written through the same event
//! types the recorder writes: a long run (many iterations, many findings),
//! a quiet run, and a run whose repro test log is 1 GiB.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use loopwatch::model::event::{HumanRequest, RunInfo, VerifyResult};
use loopwatch::model::*;
use loopwatch::tui::testkit::iteration_started;
use serde_json::json;

/// A worktree with a `.pipeline` folder inside a temp dir (removed on drop).
pub struct Worktree {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Worktree {
    /// An empty worktree with its `.pipeline` folder.
    pub fn new() -> anyhow::Result<Worktree> {
        let tmp = tempfile::Builder::new()
            .prefix("loopwatch-bench-")
            .tempdir()
            .context("temp dir")?;
        let root = tmp.path().join("wt");
        std::fs::create_dir_all(root.join(".pipeline")).context("create .pipeline")?;
        Ok(Worktree { _tmp: tmp, root })
    }

    /// The worktree root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Its `.pipeline` folder.
    pub fn pipeline_dir(&self) -> PathBuf {
        self.root.join(".pipeline")
    }

    /// Its journal.
    pub fn journal(&self) -> PathBuf {
        self.pipeline_dir().join("events.jsonl")
    }

    /// Writes `events` as the journal (one line each).
    pub fn write_journal(&self, events: &[Event]) -> anyhow::Result<u64> {
        let path = self.journal();
        let mut f =
            std::io::BufWriter::new(std::fs::File::create(&path).context("create journal")?);
        for ev in events {
            writeln!(f, "{}", ev.to_line()).context("write journal")?;
        }
        f.flush().context("flush journal")?;
        Ok(std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0))
    }
}

/// Events of a run of `iterations` iterations with `findings` findings each,
/// one repro log per iteration, and a human gate left open at the end.
pub fn long_run(iterations: u32, findings: usize) -> Vec<Event> {
    let mut out = Vec::new();
    let mut push = |body: EventBody| {
        let seq = out.len() as u64 + 1;
        out.push(Event {
            v: 1,
            seq,
            at: format!(
                "2026-11-02T{:02}:{:02}:{:02}Z",
                8 + seq / 3600,
                (seq / 60) % 60,
                seq % 60
            ),
            prev: None,
            body,
        });
    };
    push(run_started());
    for it in 1..=iterations {
        push(iteration_started(
            it,
            if it == 1 { "initial" } else { "ecarts" },
        ));
        let list = (0..findings).map(|k| finding(it, k)).collect();
        push(EventBody::FindingsVerified {
            iteration: it,
            findings: list,
        });
        push(EventBody::from(verify_result(
            it,
            &format!("F{it}-0"),
            &format!("verify-{it}.test.log"),
        )));
        push(EventBody::Note {
            text: format!("iteration {it} handed back"),
        });
    }
    push(open_gate(iterations));
    out
}

/// Events of a short, quiet run: started, one iteration, one open human gate.
pub fn quiet_run() -> Vec<Event> {
    let bodies = vec![
        run_started(),
        iteration_started(1, "initial"),
        EventBody::Note {
            text: "waiting".into(),
        },
        open_gate(1),
    ];
    number(bodies)
}

/// A run whose only verify-by-test log, `verify-1.test.log`, is `size`
/// bytes: sparse (created in no time, read like any file) but for its last
/// MiB, which is test output lines ending with the result line.
pub fn big_log_run(wt: &Worktree, size: u64) -> anyhow::Result<()> {
    use std::io::{Seek, SeekFrom};
    let log = wt.pipeline_dir().join("verify-1.test.log");
    let mut text = String::new();
    let mut n = 0;
    while text.len() < (1 << 20) {
        n += 1;
        text.push_str(&format!("test parser::tests::case_{n:06} ... ok\n"));
    }
    text.push_str("test result: FAILED. 0 passed; 1 failed\n");
    let mut f = std::fs::File::create(&log).context("create the big log")?;
    f.set_len(size).context("size the big log")?;
    f.seek(SeekFrom::Start(size - text.len() as u64))
        .context("seek the big log")?;
    f.write_all(text.as_bytes()).context("write the big log")?;
    let bodies = vec![
        run_started(),
        iteration_started(1, "initial"),
        EventBody::FindingsVerified {
            iteration: 1,
            findings: vec![finding(1, 0)],
        },
        EventBody::from(verify_result(1, "F1-0", "verify-1.test.log")),
    ];
    wt.write_journal(&number(bodies))?;
    Ok(())
}

fn number(bodies: Vec<EventBody>) -> Vec<Event> {
    bodies
        .into_iter()
        .enumerate()
        .map(|(i, body)| Event {
            v: 1,
            seq: i as u64 + 1,
            at: format!("2026-11-02T09:00:{:02}Z", i % 60),
            prev: None,
            body,
        })
        .collect()
}

fn run_started() -> EventBody {
    EventBody::RunStarted {
        run: Box::new(RunInfo {
            id: "2026-11-02-bench-0900".into(),
            flow: "feat".into(),
            branch: "feature/bench".into(),
            contract: "contracts/2026-11-02-bench-0900.md".into(),
            diff: "main..HEAD".into(),
            test: "cargo test".into(),
            worktree: ".".into(),
            ..RunInfo::default()
        }),
        tree: None,
        tree_missing: None,
    }
}

fn finding(it: u32, k: usize) -> Finding {
    let severity = ["blocking", "major", "minor", "nit"][k % 4];
    let verdict = [
        FindingVerdict::Verified,
        FindingVerdict::False,
        FindingVerdict::Unverifiable,
    ][k % 3];
    Finding {
        id: format!("F{it}-{k}"),
        severity: severity.into(),
        path: format!("src/module_{}.rs", k % 17),
        lines: format!("{}-{}", 10 + k, 20 + k),
        claim: format!(
            "the parser accepts a trailing comma in list {k} and silently drops the last element"
        ),
        verdict,
        evidence: format!(
            "src/module_{}.rs:{}: let items = split(input);",
            k % 17,
            12 + k
        ),
        note: String::new(),
        extra: Default::default(),
    }
}

fn verify_result(it: u32, finding: &str, log: &str) -> VerifyResult {
    VerifyResult {
        iteration: it,
        finding: finding.into(),
        result: VerifyOutcome::Confirmed,
        test_ref: format!("tests::repro_{}", finding.replace('-', "_").to_lowercase()),
        file: "tests/repro.rs".into(),
        log: log.into(),
        note: String::new(),
        evidence_gate: Some("failed".into()),
        extra: Default::default(),
    }
}

fn open_gate(it: u32) -> EventBody {
    EventBody::from(HumanRequest {
        id: format!("hg-{it}-conformity-1"),
        kind: HumanGateKind::Unverifiable,
        gate: Some(GateName::Conformity),
        iteration: it,
        subject: "criterion 3".into(),
        summary: "criterion 3 cannot be checked against the working tree".into(),
        options: HumanGateKind::Unverifiable.options().to_vec(),
        evidence: json!({"paths": ["src/lib.rs"]}),
        expires: None,
        extra: Default::default(),
    })
}
