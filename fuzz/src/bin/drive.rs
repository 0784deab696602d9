//! A stable-toolchain fuzz driver: runs each target on its corpus, then on
//! random mutations of it for a time or an iteration budget, catching
//! panics. Inputs that panic are written under `artifacts/<target>/`;
//! inputs that are new in length or first bytes can be kept in the corpus
//! with `--grow` (bounded per target).
//!
//! `cargo run --release --bin drive -- [TARGET|all] [--seconds S] [--iterations N] [--seed X] [--grow]`

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use loopwatch_fuzz::{TARGETS, run};

/// Largest input the driver builds.
const MAX_INPUT: usize = 64 * 1024;
/// Most corpus files `--grow` keeps per target.
const MAX_CORPUS: usize = 60;

/// Tokens the parsers care about, spliced into inputs.
const TOKENS: &[&[u8]] = &[
    b"\n",
    b"\r\n",
    b"\"",
    b"\\",
    b"{",
    b"}",
    b"[",
    b"]",
    b":",
    b",",
    b"0",
    b"-1",
    b"1e999",
    b"NaN",
    b"null",
    b"\xef\xbb\xbf",
    b"\xff",
    b"\xe2\x80\x94",
    b"\x1b[31m",
    b"\t",
    b"```",
    b"## ",
    b"## ACCEPTANCE CRITERIA\n",
    b"## FILE SCOPE\n",
    b"1. ",
    b"   CHECK: ",
    b"   EXPECT: ",
    b"   EVIDENCE: ",
    b"ABANDON: ",
    b"VERIFY \xe2\x80\x94 VERDICT: ",
    b"SECURITY \xe2\x80\x94 VERDICT: ",
    b"GATES \xe2\x80\x94 VERDICT: ",
    b"CONFORME",
    b"ECARTS(2)",
    b"BLOCK(1)",
    b"PASS",
    b"MET",
    b"NOT-MET",
    b"UNVERIFIABLE",
    b"ABANDONED(1)",
    b"ERROR(x)",
    b"PROOF: ",
    b"FLOOR: ",
    b"SCOPE: ",
    b"OUT-OF-SCOPE: ",
    b"CRITERIA:\n",
    b"BLOCKING:\n",
    b"TOOL: ",
    b"RUNNABLE: 1 of 1 criteria; timeout 120s\n",
    b"\"verdict\":\"VERIFIED\"",
    b"\"evidence\":\"a.rs:1\"",
    b"\"note\":\"\"",
    b"\"id\":\"F1\"",
    b"{\"v\":1,\"seq\":",
    b"\"at\":\"2026-01-01T00:00:00Z\"",
    b"\"type\":\"note\"",
    b"\"type\":\"human.requested\"",
    b"\"type\":\"gate.finished\"",
    b"\"type\":\"human.decided\"",
    b"PIPELINE-FAULT: ",
    b"TAP version 13\n",
    b"# Subtest: ",
    b"ok 1 - ",
    b"not ok 2 - ",
    b" # SKIP",
    b" # TODO",
    b"    ",
    b"\xe2\x9c\x94 ",
    b"\xe2\x9c\x96 ",
    b"\xef\xb9\xa3 ",
    b"\xe2\x96\xb6 ",
    b" (1.5ms)",
    b"\xe2\x84\xb9 tests 1\n",
    b"# tests 1\n",
    b"# pass 1\n",
    b"\xe2\x9c\x96 failing tests:\n",
    b"test at a.test.mjs:1:1\n",
    b"=== test session starts ===\n",
    b"!!!!! KeyboardInterrupt !!!!!\n",
    b"1 passed in 0.1s\n",
    b"Test Suites: 1 passed, 1 total\n",
    b"Tests: 1 passed, 1 total\n",
    b"PASS src/a.test.js\n",
    b"running 1 test\n",
    b"test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out",
    b"ok  \tpkg\t0.1s\n",
    b"   Compiling x v0.1.0\n",
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn mutate(rng: &mut Rng, corpus: &[Vec<u8>]) -> Vec<u8> {
    let mut data = corpus
        .get(rng.below(corpus.len()))
        .cloned()
        .unwrap_or_default();
    for _ in 0..=rng.below(8) {
        let at = rng.below(data.len() + 1);
        match rng.below(9) {
            0 if !data.is_empty() => {
                let i = rng.below(data.len());
                data[i] ^= 1 << rng.below(8);
            }
            1 if !data.is_empty() => {
                let i = rng.below(data.len());
                data[i] = rng.next() as u8;
            }
            2 => data.insert(at, rng.next() as u8),
            3 if !data.is_empty() => {
                let end = (at + 1 + rng.below(16)).min(data.len());
                data.drain(at.min(end)..end);
            }
            4 => {
                let t = TOKENS[rng.below(TOKENS.len())];
                data.splice(at..at, t.iter().copied());
            }
            5 if !data.is_empty() => {
                let start = rng.below(data.len());
                let end = (start + 1 + rng.below(64)).min(data.len());
                let chunk = data[start..end].to_vec();
                for _ in 0..=rng.below(4) {
                    data.splice(at..at, chunk.iter().copied());
                }
            }
            6 => {
                let other = corpus
                    .get(rng.below(corpus.len()))
                    .cloned()
                    .unwrap_or_default();
                let from = rng.below(other.len() + 1);
                data.truncate(at);
                data.extend_from_slice(&other[from..]);
            }
            7 => data.truncate(at),
            _ => {
                let t = TOKENS[rng.below(TOKENS.len())];
                let n = 1 + rng.below(300);
                for _ in 0..n {
                    data.splice(at..at, t.iter().copied());
                }
            }
        }
        data.truncate(MAX_INPUT);
    }
    data
}

fn load(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .filter_map(|p| std::fs::read(&p).ok().map(|b| (p, b)))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn digest(data: &[u8]) -> String {
    let mut h = DefaultHasher::new();
    data.hash(&mut h);
    format!("{:016x}", h.finish())
}

/// Runs one input; the panic message when it panicked.
fn attempt(target: &str, data: &[u8]) -> Option<String> {
    std::panic::catch_unwind(|| run(target, data))
        .err()
        .map(|e| {
            e.downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default()
        })
}

struct Args {
    targets: Vec<String>,
    seconds: Option<f64>,
    iterations: Option<u64>,
    seed: u64,
    grow: bool,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        targets: Vec::new(),
        seconds: None,
        iterations: None,
        seed: 0,
        grow: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--seconds" => {
                a.seconds = Some(
                    value("--seconds")?
                        .parse()
                        .map_err(|e| format!("--seconds: {e}"))?,
                )
            }
            "--iterations" => {
                a.iterations = Some(
                    value("--iterations")?
                        .parse()
                        .map_err(|e| format!("--iterations: {e}"))?,
                )
            }
            "--seed" => {
                a.seed = value("--seed")?
                    .parse()
                    .map_err(|e| format!("--seed: {e}"))?
            }
            "--grow" => a.grow = true,
            "all" => a.targets.extend(TARGETS.iter().map(|s| s.to_string())),
            t if TARGETS.contains(&t) => a.targets.push(t.to_string()),
            other => {
                return Err(format!(
                    "unknown argument {other:?} (targets: {})",
                    TARGETS.join(", ")
                ));
            }
        }
    }
    if a.targets.is_empty() {
        a.targets.extend(TARGETS.iter().map(|s| s.to_string()));
    }
    if a.seed == 0 {
        a.seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
            | 1;
    }
    Ok(a)
}

fn main() -> ExitCode {
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("drive: {e}");
            return ExitCode::from(2);
        }
    };
    std::panic::set_hook(Box::new(|_| {}));
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut crashes = 0;
    for target in &a.targets {
        let dir = root.join("corpus").join(target);
        let files = load(&dir);
        let mut corpus: Vec<Vec<u8>> = files.iter().map(|(_, b)| b.clone()).collect();
        let mut shapes: std::collections::HashSet<(usize, Vec<u8>)> = corpus
            .iter()
            .map(|c| (c.len() / 64, c.iter().take(8).copied().collect()))
            .collect();
        for (p, b) in &files {
            if let Some(msg) = attempt(target, b) {
                crashes += 1;
                println!("{target}: CRASH on corpus file {}: {msg}", p.display());
            }
        }
        let mut rng = Rng(a.seed ^ digest(target.as_bytes()).len() as u64 ^ 0x9e37_79b9_7f4a_7c15);
        let start = Instant::now();
        let budget = a.seconds.map(Duration::from_secs_f64);
        let mut n = 0u64;
        loop {
            if a.iterations.is_some_and(|max| n >= max)
                || budget.is_some_and(|b| start.elapsed() >= b)
            {
                break;
            }
            if a.iterations.is_none() && budget.is_none() && n >= 10_000 {
                break;
            }
            n += 1;
            let data = mutate(&mut rng, &corpus);
            if let Some(msg) = attempt(target, &data) {
                crashes += 1;
                let out = root.join("artifacts").join(target);
                let _ = std::fs::create_dir_all(&out);
                let file = out.join(format!("crash-{}", digest(&data)));
                let _ = std::fs::write(&file, &data);
                println!("{target}: CRASH ({msg}) saved to {}", file.display());
                continue;
            }
            if a.grow && corpus.len() < MAX_CORPUS && data.len() <= 8 * 1024 {
                let shape = (data.len() / 64, data.iter().take(8).copied().collect());
                if shapes.insert(shape) {
                    let _ = std::fs::create_dir_all(&dir);
                    let _ = std::fs::write(dir.join(format!("grown-{}", digest(&data))), &data);
                    corpus.push(data);
                }
            }
        }
        println!(
            "{target}: {} corpus files, {n} mutated inputs in {:.1}s (seed {}), corpus now {}",
            files.len(),
            start.elapsed().as_secs_f64(),
            a.seed,
            corpus.len()
        );
    }
    if crashes > 0 {
        println!("{crashes} crashing inputs");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
