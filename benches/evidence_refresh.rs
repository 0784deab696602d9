//! Rechecking a gate's evidence against the worktree, as the decision
//! dialog does when it opens (off the UI thread) and `loopwatch decide`
//! does before it records: an out-of-scope file with a 5,000-line change in
//! a committed worktree of 2,000 files. Measured: the recheck that finds
//! nothing changed, and the one after the file was edited (its hunks
//! recomputed and the change said). Target: under 1 s, so the dialog says
//! "CHANGED" before a person has read its first screen.
//!
//! Run with `cargo bench --bench evidence_refresh`; prints the median and
//! worst of 9 runs (after one that warms the caches) and exits 1 when the
//! target is missed.

mod common;
#[path = "../tests/support/mod.rs"]
mod support;

use std::process::ExitCode;
use std::time::Duration;

use common::{ms, percentile, times};
use support::code::{git, write};

use loopwatch::journal::Pipeline;
use loopwatch::model::event::{HumanRequest, RunInfo};
use loopwatch::model::{EventBody, GateName, Scope, Verdict, VerdictKind};
use loopwatch::parse::GateOutput;
use loopwatch::recorder::Recorder;
use loopwatch::recorder::evidence::{Sources, refresh};

const FILES: usize = 2_000;
const CHANGED: usize = 5_000;
const RUNS: usize = 9;
const TARGET: Duration = Duration::from_secs(1);

fn main() -> ExitCode {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    for i in 0..FILES {
        write(
            root,
            &format!("src/m{}/f{i}.rs", i % 40),
            &format!("pub fn f{i}() {{}}\n"),
        );
    }
    write(root, "big.txt", "seed\n");
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "base"]);
    let rec = Recorder::new(Pipeline::at(root.join(".pipeline")));
    rec.run_start(
        RunInfo {
            id: "bench".into(),
            ..RunInfo::default()
        },
        false,
    )
    .expect("run start");
    let body: String = (0..CHANGED).map(|i| format!("line {i}\n")).collect();
    write(root, "big.txt", &body);
    let mut out = GateOutput::new(GateName::Conformity, Verdict::bare(VerdictKind::Met));
    out.scope = Some(Scope {
        in_scope: 1,
        out_of_scope: vec!["big.txt".into()],
    });
    let appended = rec
        .round(GateName::Conformity, Ok(out), b"VERDICT: MET\n", true)
        .expect("round");
    let req: HumanRequest = appended
        .events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::HumanRequested(r) => Some(HumanRequest::clone(r)),
            _ => None,
        })
        .expect("an out-of-scope gate");
    let pipeline = Pipeline::at(root.join(".pipeline"));
    let sources = Sources::default();
    let same = measure(|| {
        let r = refresh(&pipeline, &sources, &req);
        assert!(r.changes.is_empty(), "{:?}", r.changes);
    });
    write(root, "big.txt", &format!("edited\n{body}"));
    let edited = measure(|| {
        let r = refresh(&pipeline, &sources, &req);
        assert_eq!(r.changes, ["big.txt: edited since the gate opened"]);
    });
    let mut ok = true;
    for (what, (median, worst)) in [("unchanged", same), ("edited", edited)] {
        println!(
            "recheck of a {CHANGED}-line out-of-scope change in {FILES} files, {what}: median {} worst {} (target < {})",
            ms(median),
            ms(worst),
            ms(TARGET)
        );
        ok &= median < TARGET;
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        println!("TARGET MISSED");
        ExitCode::from(1)
    }
}

/// The median and worst of [`RUNS`] rechecks.
fn measure(f: impl FnMut()) -> (Duration, Duration) {
    let mut t = times(RUNS, f);
    (percentile(&mut t, 50.0), percentile(&mut t, 100.0))
}
