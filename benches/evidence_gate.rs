//! `cargo bench --bench evidence_gate`: how long `judge` takes on a log of
//! the largest size it reads (8 MiB: about 110,000 verbose pytest lines, or
//! 100,000 node spec or jest lines), asking for the last test of the log.

mod common;

use common::median;
use loopwatch::checks::evidence_gate::{Claim, ClaimStatus, MAX_LOG_BYTES, judge};

const RUNS: usize = 5;

fn main() {
    let logs = [
        (
            "pytest -v",
            pytest(),
            "tests/test_cart.py::test_case_109999",
        ),
        ("node --test spec", node(), "group > case 99999"),
        ("jest --verbose", jest(), "src/a.test.js::case 99999"),
    ];
    for (name, log, test) in logs {
        assert!(log.len() as u64 <= MAX_LOG_BYTES, "{name}: log too big");
        let claim = Claim {
            status: ClaimStatus::Passed,
            test: Some(test.to_string()),
        };
        let took = median(RUNS, || assert!(judge(&log, &claim).is_proven(), "{name}"));
        println!(
            "{name}: {} bytes, {} lines, judged in {:.1} ms",
            log.len(),
            log.lines().count(),
            took.as_secs_f64() * 1000.0
        );
    }
}

fn pytest() -> String {
    let mut s =
        "============================= test session starts ==============================\n"
            .to_string();
    for i in 0..110_000 {
        s.push_str(&format!(
            "tests/test_cart.py::test_case_{i} PASSED                     [ 50%]\n"
        ));
    }
    s + "====================== 110000 passed in 12.00s ======================\n"
}

fn node() -> String {
    let mut s = "▶ group\n".to_string();
    for i in 0..100_000 {
        s.push_str(&format!("  ✔ case {i} (0.1ms)\n"));
    }
    s + "✔ group (5ms)\nℹ tests 100000\nℹ suites 1\nℹ pass 100000\nℹ fail 0\nℹ cancelled 0\nℹ skipped 0\nℹ todo 0\nℹ duration_ms 5\n"
}

fn jest() -> String {
    let mut s = "PASS src/a.test.js\n  cart\n".to_string();
    for i in 0..100_000 {
        s.push_str(&format!("    ✓ case {i} (1 ms)\n"));
    }
    s + "\nTest Suites: 1 passed, 1 total\nTests:       100000 passed, 100000 total\n"
}
