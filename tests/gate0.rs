//! Conformance suite of `loopwatch gate0`: the real binary on one fixture
//! per behaviour, asserting the exact stdout, the exit code and the
//! contract's bytes afterwards.
//!
//! Fixtures live in `tests/fixtures/gate0/`: `<case>.md` is the contract,
//! `<case>.out` the expected stdout, `<case>.after` the expected file after
//! the command (absent: the file must be unchanged). Each case runs in a
//! fresh folder holding the contract as `contract.md`, which is also the
//! path given on the command line and the current directory of the checks.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use assert_cmd::Command;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gate0")
}

fn loopwatch(dir: &Path, timeout: Option<&str>) -> Command {
    let mut cmd = Command::cargo_bin("loopwatch").unwrap();
    cmd.current_dir(dir).env_remove("GATES_TIMEOUT");
    if let Some(t) = timeout {
        cmd.env("GATES_TIMEOUT", t);
    }
    cmd
}

/// Runs one fixture and asserts stdout, exit code, file bytes and empty
/// stderr; returns the folder it ran in for further checks.
fn case(name: &str, mode: &str, timeout: Option<&str>, exit: i32) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let contract = dir.path().join("contract.md");
    let original = fs::read(fixtures().join(format!("{name}.md"))).unwrap();
    fs::write(&contract, &original).unwrap();
    let out = loopwatch(dir.path(), timeout)
        .args(["gate0", mode, "contract.md"])
        .output()
        .unwrap();
    let want = fs::read(fixtures().join(format!("{name}.out"))).unwrap();
    assert_bytes(&out.stdout, &want, &format!("{name}: stdout"));
    assert_eq!(out.status.code(), Some(exit), "{name}: exit code");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{name}: stderr");
    let after = fixtures().join(format!("{name}.after"));
    let want_file = if after.exists() {
        fs::read(after).unwrap()
    } else {
        original
    };
    assert_bytes(
        &fs::read(&contract).unwrap(),
        &want_file,
        &format!("{name}: file"),
    );
    dir
}

/// `got` is `want` byte for byte (compared as text first, for a readable diff).
fn assert_bytes(got: &[u8], want: &[u8], what: &str) {
    assert_eq!(
        String::from_utf8_lossy(got),
        String::from_utf8_lossy(want),
        "{what}"
    );
    assert_eq!(got, want, "{what}: bytes");
}

fn sentinel(dir: &tempfile::TempDir) -> bool {
    dir.path().join("sentinel").exists()
}

/// One test per fixture: `test: fixture, mode, GATES_TIMEOUT, exit code`,
/// and with `ran` whether its check must have run (its sentinel exists).
macro_rules! cases {
    ($(
        $test:ident: $name:literal, $mode:literal, $timeout:expr, $exit:literal
        $(, ran: $ran:literal)?;
    )*) => {$(
        #[test]
        fn $test() {
            let _dir = case($name, $mode, $timeout, $exit);
            $(assert_eq!(sentinel(&_dir), $ran, "the check ran");)?
        }
    )*};
}

cases! {
    met_writes_evidence: "met", "run", None, 0;
    nonzero_exit_with_marker_is_unmet: "nonzero_with_marker", "run", None, 2;
    marker_absent_is_unmet: "marker_absent", "run", None, 2;
    timeout_is_unmet: "timeout", "run", Some("1"), 2;
    all_manual_passes_through: "all_manual", "run", None, 0;
    run_executes_positive_control: "run_executes", "run", None, 0, ran: true;
    status_never_executes: "status_never_executes", "status", None, 2, ran: false;
    fenced_criterion_is_invisible: "fenced", "run", None, 0, ran: false;
    one_bad_criterion_stops_all: "bad_criterion_stops_all", "run", None, 2, ran: false;
    duplicate_id_orphans_what_follows: "duplicate_orphan", "run", None, 2, ran: false;
    attribute_outside_a_criterion: "orphan_attribute", "run", None, 2;
    unindented_attribute: "unindented", "run", None, 2;
    check_without_expect: "check_without_expect", "run", None, 2, ran: false;
    expect_without_check: "expect_without_check", "run", None, 2;
    runnable_without_evidence_line: "no_evidence_line", "run", None, 2;
    abandon_unknown_criterion: "abandon_unknown", "run", None, 2;
    abandon_blank_reason: "abandon_blank", "run", None, 2;
    no_criteria: "no_criteria", "run", None, 2;
    abandoned_exits_3: "abandoned", "run", None, 3;
    status_met_recorded_and_pending: "status_recorded", "status", None, 2;
    crlf_contract_keeps_its_line_endings: "crlf", "run", None, 0;
    missing_final_newline_stays_missing: "no_final_newline", "run", None, 0;
    byte_order_mark_stays: "bom", "run", None, 0;
    evidence_cut_at_140_characters_on_a_multibyte_boundary: "truncation_multibyte", "run", None, 0;
    exit_124_is_not_a_timeout: "exit_124", "run", None, 2;
    killed_by_signal_reports_128_plus_signo: "killed_by_signal", "run", None, 2;
    mixed_states_indentation_and_last_attribute_wins: "mixed_run", "run", None, 2;
    contract_changed_during_run_is_not_overwritten: "changed_during_run", "run", None, 2;
}

#[test]
fn timeout_kills_the_whole_process_group() {
    let dir = case("process_group", "run", Some("1"), 2);
    let pids = fs::read_to_string(dir.path().join("bg.pid")).unwrap();
    let pids: Vec<u32> = pids.lines().map(|l| l.trim().parse().unwrap()).collect();
    assert_eq!(pids.len(), 2);
    assert_eq!(
        survivors(&pids),
        Vec::<u32>::new(),
        "processes outlived the timed-out check"
    );
}

#[test]
fn interrupt_kills_the_running_check_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let contract = dir.path().join("contract.md");
    let original = "## ACCEPTANCE CRITERIA\n1. waits\n   CHECK: sleep 1000 & echo $! > bg.pid; wait\n   EXPECT: x\n   EVIDENCE: pending\n";
    fs::write(&contract, original).unwrap();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("loopwatch"))
        .current_dir(dir.path())
        .env_remove("GATES_TIMEOUT")
        .args(["gate0", "run", "contract.md"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid_file = dir.path().join("bg.pid");
    let deadline = Instant::now() + Duration::from_secs(10);
    while fs::read_to_string(&pid_file).map_or(true, |s| !s.ends_with('\n'))
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let bg: u32 = fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let me = rustix::process::Pid::from_raw(i32::try_from(child.id()).unwrap()).unwrap();
    rustix::process::kill_process(me, rustix::process::Signal::INT).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "loopwatch: interrupted: checks stopped, evidence not written\n"
    );
    assert_eq!(fs::read_to_string(&contract).unwrap(), original);
    assert_eq!(
        survivors(&[bg]),
        Vec::<u32>::new(),
        "the check outlived the interrupt"
    );
}

/// The pids still running (not zombies) after up to 3 s; kills those.
fn survivors(pids: &[u32]) -> Vec<u32> {
    let alive = |pid: u32| match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    };
    let deadline = Instant::now() + Duration::from_secs(3);
    while pids.iter().any(|&p| alive(p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left: Vec<u32> = pids.iter().copied().filter(|&p| alive(p)).collect();
    for &p in &left {
        let _ = std::process::Command::new("kill")
            .arg("-9")
            .arg(p.to_string())
            .status();
    }
    left
}

fn one_liner(args: &[&str], timeout: Option<&str>, want: &str) {
    run_in_scratch(args, timeout, want, 2);
}

fn run_in_scratch(args: &[&str], timeout: Option<&str>, want: &str, exit: i32) {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("c.md"), "## ACCEPTANCE CRITERIA\n1. x\n").unwrap();
    let out = loopwatch(dir.path(), timeout)
        .arg("gate0")
        .args(args)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), want, "{args:?}");
    assert_eq!(out.status.code(), Some(exit), "{args:?}");
}

const USAGE: &str = "GATES — VERDICT: ERROR(usage: loopwatch gate0 {status|run} <contract-path>)\n";

#[test]
fn usage_errors() {
    one_liner(&[], None, USAGE);
    one_liner(&["run"], None, USAGE);
    one_liner(&["status", "c.md", "extra"], None, USAGE);
    one_liner(&["frobnicate", "c.md"], None, USAGE);
    one_liner(&["c.md"], None, USAGE);
}

#[test]
fn unreadable_contract() {
    one_liner(
        &["run", "nope.md"],
        None,
        "GATES — VERDICT: ERROR(contract unreadable: nope.md)\n",
    );
    one_liner(
        &["status", ""],
        None,
        "GATES — VERDICT: ERROR(contract unreadable: )\n",
    );
}

#[test]
fn folder_is_unreadable() {
    one_liner(
        &["status", "."],
        None,
        "GATES — VERDICT: ERROR(contract unreadable: .)\n",
    );
}

/// On a terminal, control characters from the contract are shown, never
/// sent (run through `script`, which gives the command a pseudo-terminal;
/// the terminal turns each `\n` into `\r\n`).
#[test]
fn terminal_output_escapes_control_characters() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("c.md"),
        "## ACCEPTANCE CRITERIA\n1. esc \x1b[31mred\x1b[0m and \u{202e} rtl\n",
    )
    .unwrap();
    let bin = assert_cmd::cargo::cargo_bin("loopwatch");
    let out = std::process::Command::new("script")
        .current_dir(dir.path())
        .env_remove("GATES_TIMEOUT")
        .args([
            "-qec",
            &format!("{} gate0 status c.md", bin.display()),
            "/dev/null",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "GATES — c.md (status)\r\n  1   MANUAL        esc \u{241b}[31mred\u{241b}[0m and <U+202E> rtl\r\n\
         RUNNABLE: 0 of 1 criteria; timeout 120s\r\nGATES — VERDICT: MET\r\n"
    );
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn invalid_timeout_is_a_usage_error() {
    one_liner(
        &["run", "c.md"],
        Some("5x"),
        "GATES — VERDICT: ERROR(usage: GATES_TIMEOUT must be seconds with an optional s, m, h or d suffix, got '5x')\n",
    );
}

#[test]
fn timeout_label_is_printed_as_given() {
    run_in_scratch(
        &["status", "c.md"],
        Some("1.5m"),
        "GATES — c.md (status)\n  1   MANUAL        x\nRUNNABLE: 0 of 1 criteria; timeout 1.5ms\nGATES — VERDICT: MET\n",
        0,
    );
}

/// `status` over the real contracts of the shared corpus, when present.
#[test]
fn status_over_the_corpus() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/contracts");
    let Ok(entries) = fs::read_dir(&corpus) else {
        return;
    };
    let mut seen = 0;
    for entry in entries {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let before = fs::read(&path).unwrap();
        let out = loopwatch(&corpus, None)
            .arg("gate0")
            .arg("status")
            .arg(&path)
            .output()
            .unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        let last = stdout.lines().last().unwrap_or_default();
        let code = out.status.code();
        let verdict_ok = match code {
            Some(0) => last == "GATES — VERDICT: MET",
            Some(2) => {
                last.starts_with("GATES — VERDICT: PENDING(")
                    || last.starts_with("GATES — VERDICT: ERROR(")
            }
            Some(3) => last.starts_with("GATES — VERDICT: ABANDONED("),
            _ => false,
        };
        assert!(
            verdict_ok,
            "{}: exit {code:?}, last line {last:?}",
            path.display()
        );
        assert_eq!(
            fs::read(&path).unwrap(),
            before,
            "{}: status wrote",
            path.display()
        );
        seen += 1;
    }
    assert!(seen > 0, "the corpus folder holds no contract");
}

/// Values `timeout(1)` rejects (the reference then fails every check with
/// exit 125) and forms it takes that are no plain duration: each a usage
/// error before any check runs (docs/protocol.md §7).
#[test]
fn timeout_values_outside_plain_notation_are_usage_errors() {
    for bad in [
        "-1", "1,5", "nan", "5 ", " 5", "inf", "1e3", "0x10", "+5", "5S",
    ] {
        one_liner(
            &["run", "c.md"],
            Some(bad),
            &format!(
                "GATES — VERDICT: ERROR(usage: GATES_TIMEOUT must be seconds with an optional s, m, h or d suffix, got '{bad}')\n"
            ),
        );
    }
    for good in ["0", "1d", ".5", "2."] {
        run_in_scratch(
            &["status", "c.md"],
            Some(good),
            &format!(
                "GATES — c.md (status)\n  1   MANUAL        x\nRUNNABLE: 0 of 1 criteria; timeout {good}s\nGATES — VERDICT: MET\n"
            ),
            0,
        );
    }
}

/// A Latin-1 criterion and check are parsed and run (a bash regex in a
/// UTF-8 locale skips such lines); the bytes are printed as they are and
/// kept in the contract, the check's own invalid UTF-8 becomes U+FFFD.
#[test]
fn latin1_contract_lines_are_parsed_run_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let contract = dir.path().join("c.md");
    let before: &[u8] = b"# \xe9t\xe9\n## ACCEPTANCE CRITERIA\n1. Caf\xe9 total\n   CHECK: printf 'caf\\351 OK'\n   EXPECT: OK\n   EVIDENCE: pending\n";
    fs::write(&contract, before).unwrap();
    let out = loopwatch(dir.path(), None)
        .args(["gate0", "run", "c.md"])
        .output()
        .unwrap();
    assert_eq!(
        out.stdout,
        b"GATES \xe2\x80\x94 c.md (run)\n  1   MET           Caf\xe9 total\nRUNNABLE: 1 of 1 criteria; timeout 120s\nGATES \xe2\x80\x94 VERDICT: MET\n"
    );
    assert_eq!(out.status.code(), Some(0));
    let want: &[u8] = b"# \xe9t\xe9\n## ACCEPTANCE CRITERIA\n1. Caf\xe9 total\n   CHECK: printf 'caf\\351 OK'\n   EXPECT: OK\n   EVIDENCE: MET exit=0 marker-found :: caf\xef\xbf\xbd OK\n";
    assert_bytes(&fs::read(&contract).unwrap(), want, "the contract");
}
