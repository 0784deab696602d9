//! `loopwatch evidence-gate --claim test --status passed|failed --log FILE [--test REF]`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::Globals;
use crate::checks::evidence_gate::{self, Claim, ClaimStatus, LogError};

/// What `evidence-gate --help` says after the options: how logs are read,
/// how `--test` is matched and the cases decided on purpose.
const AFTER_HELP: &str = "\
Reads the output of cargo test, cargo-nextest, pytest, jest, vitest, go test (text or -json),
gradle, xcodebuild or node --test (spec or TAP reporter): the last 8 MiB of the log, colour
codes removed. The claim holds only when the log shows a run in which tests ran, the status
claimed (no failure for `passed`; a failure for `failed`) and, with --test, that very test
with that status. Anything unrecognised is not proof.

--test is matched by full name, or by file and name path: `tests/a.py::Class::test`,
`src/a.test.js::group > name`, `cart/cart_test.go::TestX/sub name`, `src/money.rs::tests::x`.
A one-part name matches a test's last part; `group > name` never matches another group's
test of that name; a pytest name without its `[parameters]` stands for every
parametrization. A name seen with two statuses proves nothing.

Decided cases:
  - A reference with a file part is proven only by lines that name that file: a test under
    the file's `PASS`/`FAIL` header (jest), a line that starts with the file (vitest, pytest),
    the go package of the file's folder, the cargo target the file is in (`Running
    tests/a.rs`; a module file stands for its module path), the JVM or XCTest class the file
    is named after. node names no file: only loopwatch's own run, whose log ends with its
    command, names it.
  - A run cut before its end proves nothing, named test or not, in every runner: a test
    binary without its `test result:` line, a go package without its `ok`/`FAIL` line, a run
    without its summary (pytest, jest, vitest, nextest, node), gradle's `BUILD` line or
    xcodebuild's `** TEST … **` line.
  - An interrupted run (Ctrl-C, pytest's `Interrupted: ...` or any other `!!!` banner but
    -x's `stopping after N failures`) proves nothing, named test or not.
  - A build, compile, import or collection error, or a test file that crashed before its
    tests, is `no test ran` for `passed` and `failed` alike: a repro test that does not
    even build or import reproduces nothing (inconclusive).
  - An error outside the tests means the run failed, even when every test passed:
    vitest's `Errors N error` (unhandled errors) or a suite that failed, jest's `Test suite
    failed to run`, go's `[build failed]` and compile errors, a cargo test binary that
    crashed. `passed` is not proven; `failed` still needs a test that failed.
  - A pytest ERROR (a fixture's setup or teardown failed) is neither a pass nor a failure:
    the test did not run or did not finish. It proves no claim about that test, and no
    `passed` claim about the run.
  - An xfail (an expected failure) is not a failure: `failed` is not proven by it.
  - A coverage threshold unmet (--cov-fail-under) while the tests passed leaves `passed`
    proven even though the command exited 1: the claim is about the tests, coverage is
    another gate's concern. The reason printed says the threshold was not met.
  - Several runs in one log (a re-run appended to the same file): a named test is judged
    by the last run in which it ran; otherwise the last run counts. `passed` is not
    proven while a test that failed in an earlier run has no later pass (a re-run of other
    tests proves nothing about it). The reason printed says which run it judged.";

/// Arguments of `evidence-gate` (the rules are in [`AFTER_HELP`]).
#[derive(Debug, Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct EvidenceGateArgs {
    /// What is claimed (only `test`: a test run).
    #[arg(long, value_enum, value_name = "KIND")]
    pub claim: ClaimKind,
    /// The status claimed.
    #[arg(long, value_enum)]
    pub status: StatusArg,
    /// The test log to check.
    #[arg(long, value_name = "FILE", value_parser = super::output::not_a_folder)]
    pub log: PathBuf,
    /// The test that must appear with that status (`tests/a.rs::name`,
    /// `src/a.test.js::name`, `group > nested`).
    #[arg(long = "test", value_name = "REF")]
    pub test: Option<String>,
}

/// `--claim`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ClaimKind {
    /// A claim about a test run.
    Test,
}

/// `--status`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum StatusArg {
    /// The run (and the named test) passed.
    Passed,
    /// The named test (or some test) failed.
    Failed,
}

/// Exit code of a usage error (a `--log` that is no regular file).
const EXIT_USAGE: u8 = 2;

/// Runs `evidence-gate`: 0 proven, 1 not proven (the reason is printed), 2
/// when `--log` names a folder, a FIFO or a device.
pub fn run(args: EvidenceGateArgs, _globals: &Globals) -> anyhow::Result<ExitCode> {
    let ClaimKind::Test = args.claim;
    let claim = Claim {
        status: match args.status {
            StatusArg::Passed => ClaimStatus::Passed,
            StatusArg::Failed => ClaimStatus::Failed,
        },
        test: args.test,
    };
    let (line, proven) = match evidence_gate::read_log(&args.log) {
        Ok(log) => {
            let verdict = evidence_gate::judge(&log, &claim);
            (verdict.to_string(), verdict.is_proven())
        }
        Err(e @ LogError::NotAFile { .. }) => {
            eprintln!(
                "loopwatch evidence-gate: {}",
                crate::sanitize::terminal_text(e.to_string().as_bytes())
            );
            return Ok(ExitCode::from(EXIT_USAGE));
        }
        Err(e) => (format!("not proven: {e}"), false),
    };
    // The reason quotes test names and paths from the log: control
    // characters are shown as visible symbols, piped or not.
    println!("{}", crate::sanitize::terminal_text(line.as_bytes()));
    Ok(ExitCode::from(if proven { 0 } else { 1 }))
}
