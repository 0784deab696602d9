//! `cargo bench --bench gate0`: how long `loopwatch gate0 status` takes on
//! a generated 500-criterion contract, beside bash merely reading the same
//! file with a `while IFS= read -r` loop (the floor of any line-by-line
//! shell parser), and the ratio of the two.

mod common;

use std::process::{Command, Stdio};

use common::{median, ms};
use loopwatch::gate0::{self, Timeout};

const CRITERIA: usize = 500;
const RUNS: usize = 15;

fn main() {
    let dir = tempfile::tempdir().expect("scratch folder");
    let path = dir.path().join("contract.md");
    std::fs::write(&path, contract()).expect("write contract");
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    println!("contract: {CRITERIA} criteria, {size} bytes");

    let binary = median(RUNS, || {
        let status = Command::new(env!("CARGO_BIN_EXE_loopwatch"))
            .args(["gate0", "status"])
            .arg(&path)
            .stdout(Stdio::null())
            .status()
            .expect("run loopwatch");
        assert_eq!(
            status.code(),
            Some(2),
            "status of a pending contract exits 2"
        );
    });
    let library = median(RUNS, || {
        let outcome = gate0::status(&path, &Timeout::default());
        assert_eq!(outcome.rows.len(), CRITERIA);
    });
    let bash = median(RUNS, || {
        let status = Command::new("bash")
            .arg("-c")
            .arg("while IFS= read -r line || [ -n \"$line\" ]; do :; done < \"$1\"")
            .arg("bash")
            .arg(&path)
            .status()
            .expect("run bash");
        assert!(status.success());
    });

    println!("loopwatch gate0 status (process): {}", ms(binary));
    println!("gate0::status (in process):       {}", ms(library));
    println!("bash while-read loop (process):   {}", ms(bash));
    println!(
        "ratio bash loop / loopwatch process: {:.1}x",
        bash.as_secs_f64() / binary.as_secs_f64().max(f64::EPSILON)
    );
}

/// A pending contract: every criterion runnable, with CHECK/EXPECT/EVIDENCE.
fn contract() -> String {
    let mut s = String::from("# CONTRACT — bench\n## REQUEST (verbatim — IMMUTABLE)\nbench\n");
    s.push_str("## ACCEPTANCE CRITERIA\n");
    for i in 1..=CRITERIA {
        s.push_str(&format!(
            "{i}. criterion number {i} holds\n   CHECK: test -e src/file_{i}.rs && echo OK-{i}\n   EXPECT: OK-{i}\n   EVIDENCE: pending\n"
        ));
    }
    s.push_str("## FILE SCOPE\n- src/\n");
    s
}
