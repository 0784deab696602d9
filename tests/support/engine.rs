//! A throwaway git worktree with a contract, scripted agents and a
//! `loopwatch.toml`, for the tests that drive `loopwatch run --headless`.
//!
//! The agents are stateless: what they do follows from their input and
//! the worktree, so a dispatch redone after a kill does the same thing.
//! Each one saves its stdin and environment, and notes an overlap when an
//! earlier agent of the same pipeline is still alive when it starts.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

// Each test crate uses its own subset.
#[allow(unused_imports)]
pub use super::git::{commit_all, git, git_init, git_status};

pub const CONTRACT: &str = "docs/contract.md";

pub const CONTRACT_TEXT: &str = "# CONTRACT — totals\n- date: 2026-12-01 | flow: feat | branch: main\n- status: active\n\n## REQUEST (verbatim — IMMUTABLE)\n\"The total shows cents.\"\n\n## ACCEPTANCE CRITERIA\n1. The total shows cents.\n   CHECK: grep -q cents src/total.txt && echo CENTS_OK\n   EXPECT: CENTS_OK\n   EVIDENCE: pending\n\n## FILE SCOPE\n- src/total.txt\n";

/// The start of every scripted agent (see [`Project::write_agent`]): the
/// role is its first argument, `$out` is `$TEST_OUT`, `$n` the dispatch
/// number and `$input` its stdin, saved with its `LW_*` environment as
/// `$out/<n>-<role>.stdin` and `.env`. `conforme` and `pass` print a GATE 1
/// CONFORME and a GATE 2 PASS answer.
pub const AGENT_PROLOGUE: &str = r#"#!/usr/bin/env bash
set -u
role=$1
out="$TEST_OUT"
n="$LW_DISPATCH"
input=$(cat)
printf '%s' "$input" >"$out/$n-$role.stdin"
env | grep '^LW_' | sort >"$out/$n-$role.env"
conforme() { printf 'VERIFY — VERDICT: CONFORME\nCONTRACT: %s\nCRITERIA:\n  1. The total shows cents — MET — ran the check\nSCOPE: in-scope 1 files; out-of-scope: none\nFLOOR: clean\nPROOF: read 1 files\n' "$LW_CONTRACT"; }
pass() { printf 'SECURITY — VERDICT: PASS\nTOOL: grep\nSCOPE: 1 files\nBLOCKING:\nREPORTED (non-blocking):\nPROOF: grep on 1 files\n'; }
"#;

/// The scripted agents of `agent.sh`, after [`AGENT_PROLOGUE`].
pub const AGENT: &str = r#"if [ -f "$out/running" ] && kill -0 "$(cat "$out/running")" 2>/dev/null; then
  echo "$n $role overlaps $(cat "$out/running")" >>"$out/violations"
fi
echo $$ >"$out/running"
[ -n "${AGENT_PAUSE:-}" ] && sleep "$AGENT_PAUSE"
case $role in
  developer)
    mkdir -p src
    case $input in
      *REQUEST*) echo "total: 3" >src/total.txt ;;
      *NOT-MET*) echo "total: 3.75 cents; eval \$X" >src/total.txt; echo "all:" >Makefile ;;
      *BLOCKING*) echo "total: 3.75 cents" >src/total.txt ;;
    esac
    echo "done"
    ;;
  verifier)
    if [ -f Makefile ] && ! grep -q 'Makefile \[gated' "$LW_CONTRACT"; then
      printf 'VERIFY — VERDICT: ECARTS(1)\nCONTRACT: %s\nCRITERIA:\n  1. The total shows cents — MET — ran the check\nSCOPE: in-scope 1 files; out-of-scope: Makefile\nFLOOR: clean\nPROOF: read 2 files\n' "$LW_CONTRACT"
    else
      printf 'The verdict:\n\n```\n**VERIFY — VERDICT:** CONFORME\nCONTRACT: %s\nCRITERIA:\n  1. The total shows cents — MET — ran the check\nSCOPE: in-scope 2 files; out-of-scope: none\nFLOOR: clean\nPROOF: read 2 files\n```\n' "$LW_CONTRACT"
    fi
    ;;
  auditor)
    if grep -q eval src/total.txt; then
      printf 'SECURITY — VERDICT: BLOCK(1)\nTOOL: grep\nSCOPE: 1 files\nBLOCKING:\n  1. [HIGH] eval-injection — src/total.txt:1 — eval of input — hint: remove it\nREPORTED (non-blocking):\nPROOF: grep on 1 files\n'
    else
      pass
    fi
    ;;
esac
rm -f "$out/running"
"#;

pub struct Project {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub out: PathBuf,
}

/// A running engine; killed when dropped unwaited (a failed assertion).
pub struct Engine(pub Option<Child>);

impl Engine {
    /// Starts `c` with its stdout and stderr piped.
    pub fn spawn(c: &mut Command) -> Engine {
        let c = c.stdout(Stdio::piped()).stderr(Stdio::piped());
        Engine(Some(c.spawn().expect("spawn")))
    }
    pub fn id(&self) -> u32 {
        self.0.as_ref().map_or(0, Child::id)
    }
    pub fn wait_with_output(mut self) -> Output {
        self.0
            .take()
            .expect("child")
            .wait_with_output()
            .expect("wait")
    }
    pub fn wait(mut self) -> std::process::ExitStatus {
        self.0.take().expect("child").wait().expect("wait")
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_loopwatch"))
}

/// A cargo crate `repro` in `root` whose `src/lib.rs` is `lib` (its
/// `target/` and `Cargo.lock` ignored).
pub fn write_crate(root: &Path, lib: &str) {
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"repro\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    )
    .unwrap();
    std::fs::write(root.join("src/lib.rs"), lib).unwrap();
    std::fs::write(root.join(".gitignore"), "/target\nCargo.lock\n").unwrap();
}

/// Every role of a run with a review stage (the loop's three and the
/// review's two).
pub const REVIEW_ROLES: [&str; 5] = [
    "developer",
    "verifier",
    "auditor",
    "reviewer",
    "finding-verifier",
];

/// `[agents.<role>]` tables, one per role, each running
/// `bash @AGENTS@/<script> <role>` with a minute's timeout.
pub fn agent_tables(script: &str, roles: &[&str]) -> String {
    roles
        .iter()
        .map(|r| {
            format!("[agents.{r}]\ncommand = \"bash @AGENTS@/{script} {r}\"\ntimeout = \"1m\"\n")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl Project {
    /// A worktree with the contract committed and the scripted agents.
    pub fn new(config: &str) -> Project {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("work");
        let out = tmp.path().join("out");
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        git_init(&root);
        std::fs::write(root.join(CONTRACT), CONTRACT_TEXT).unwrap();
        commit_all(&root, "contract");
        let agents = tmp.path().join("agents");
        std::fs::create_dir_all(&agents).unwrap();
        std::fs::write(agents.join("agent.sh"), format!("{AGENT_PROLOGUE}{AGENT}")).unwrap();
        std::fs::write(
            agents.join("verifier.md"),
            "You are the conformity verifier.\n",
        )
        .unwrap();
        std::fs::write(
            root.join("loopwatch.toml"),
            config.replace("@AGENTS@", &agents.display().to_string()),
        )
        .unwrap();
        Project {
            _tmp: tmp,
            root,
            out,
        }
    }

    /// Writes the agent script `name` beside `agent.sh`: [`AGENT_PROLOGUE`],
    /// then `body`.
    pub fn write_agent(&self, name: &str, body: &str) {
        let agents = self.root.parent().unwrap().join("agents");
        std::fs::write(agents.join(name), format!("{AGENT_PROLOGUE}{body}")).unwrap();
    }

    /// The default configuration: the three scripted agents.
    pub fn scripted() -> Project {
        Project::new(SCRIPTED)
    }

    pub fn cmd(&self) -> Command {
        let mut c = Command::new(bin());
        c.current_dir(&self.root)
            .env("TEST_OUT", &self.out)
            .env("LOOPWATCH_USER", "tester")
            .env_remove("LOOPWATCH_PIPELINE");
        c
    }

    /// `loopwatch run --headless`, started (killed if the test fails first).
    pub fn spawn_run(&self, contract: bool) -> Engine {
        let mut c = self.cmd();
        c.arg("run").arg("--headless");
        if contract {
            c.arg(CONTRACT);
        }
        Engine::spawn(&mut c)
    }

    /// Asserts that `out` exited `code`, with its output and the journal.
    pub fn assert_exit(&self, out: &Output, code: i32) {
        assert_eq!(
            out.status.code(),
            Some(code),
            "{}\n{}\n{:#?}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            self.events()
        );
    }

    pub fn run_to_end(&self) -> Output {
        let mut c = self.cmd();
        c.args(["run", "--headless", CONTRACT])
            .output()
            .expect("run")
    }

    pub fn pipeline(&self) -> PathBuf {
        self.root.join(".pipeline")
    }

    /// Every event of the journal as JSON.
    pub fn events(&self) -> Vec<Value> {
        let Ok(text) = std::fs::read_to_string(self.pipeline().join("events.jsonl")) else {
            return Vec::new();
        };
        text.lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    pub fn of_type(&self, t: &str) -> Vec<Value> {
        self.events()
            .into_iter()
            .filter(|e| e["type"] == t)
            .collect()
    }

    /// `.pipeline/triage-<iteration>.json`.
    pub fn triage(&self, iteration: u32) -> Value {
        let path = self.pipeline().join(format!("triage-{iteration}.json"));
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// The events of type `t` whose field `key` is `value`.
    pub fn of_type_where(&self, t: &str, key: &str, value: &str) -> Vec<Value> {
        let mut evs = self.of_type(t);
        evs.retain(|e| e[key] == value);
        evs
    }

    /// The finding ids in one bucket of `.pipeline/triage-<iteration>.json`.
    pub fn triage_ids(&self, iteration: u32, bucket: &str) -> Vec<String> {
        self.triage(iteration)[bucket]
            .as_array()
            .unwrap_or_else(|| panic!("triage-{iteration}.json: no {bucket} array"))
            .iter()
            .map(|f| f["id"].as_str().unwrap().to_string())
            .collect()
    }

    /// Polls until `f` holds on the journal (deadline: a minute).
    pub fn wait_for(&self, what: &str, f: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let mut last = Vec::new();
        let found = poll(Duration::from_secs(60), || {
            last = self.events();
            f(&last)
        });
        assert!(found, "timed out waiting for {what}; journal: {last:#?}");
        last
    }

    /// Polls until `done` holds (deadline: a minute); fails naming `what`.
    pub fn wait_until(&self, what: &str, done: impl FnMut() -> bool) {
        assert!(
            poll(Duration::from_secs(60), done),
            "timed out waiting for {what}"
        );
    }

    /// Polls until a human gate is requested (deadline: a minute); the
    /// first one's `human.requested`.
    pub fn wait_for_gate(&self, what: &str) -> Value {
        let evs = self.wait_for(what, |e| e.iter().any(|e| e["type"] == "human.requested"));
        evs.into_iter()
            .find(|e| e["type"] == "human.requested")
            .expect("a gate")
    }

    /// The ids of the human gates still open.
    pub fn open_gates(&self) -> Vec<String> {
        let evs = self.events();
        let decided: Vec<&Value> = evs
            .iter()
            .filter(|e| e["type"] == "human.decided")
            .map(|e| &e["id"])
            .collect();
        evs.iter()
            .filter(|e| e["type"] == "human.requested" && !decided.contains(&&e["id"]))
            .map(|e| e["id"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    /// `loopwatch decide`; panics with its stderr when it fails.
    pub fn decide(&self, id: &str, decision: &str) -> Output {
        let out = self
            .cmd()
            .args(["decide", id, decision, "--reason", "decided by the test"])
            .output()
            .expect("decide");
        assert!(
            out.status.success() || out.status.code() == Some(13),
            "decide {id} {decision}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// `loopwatch decide <args>`; asserts that the decision was taken (the
    /// exit code, 0 or 10 to 14, says what comes next).
    pub fn decided(&self, args: &[&str]) -> Output {
        let out = self
            .cmd()
            .arg("decide")
            .args(args)
            .output()
            .expect("decide");
        assert!(
            matches!(out.status.code(), Some(0 | 10..=14)),
            "decide {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    pub fn input(&self, name: &str) -> String {
        std::fs::read_to_string(self.pipeline().join("agents").join(format!("{name}.input")))
            .unwrap_or_else(|e| panic!("{name}.input: {e}"))
    }

    pub fn head(&self) -> String {
        git(&self.root, &["rev-parse", "HEAD"]).trim().to_string()
    }

    /// What a scripted agent saved of dispatch `n` (the `n` of its
    /// `agent.started`): `ext` is `stdin` or `env`.
    pub fn saved(&self, n: &Value, role: &str, ext: &str) -> String {
        let path = self.out.join(format!("{n}-{role}.{ext}"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// The pid a scripted agent wrote to `$TEST_OUT/<name>` (waited for:
    /// a minute).
    pub fn pid_in(&self, name: &str) -> u32 {
        let read = || {
            std::fs::read_to_string(self.out.join(name))
                .ok()?
                .trim()
                .parse()
                .ok()
        };
        self.wait_until(name, || read().is_some());
        read().unwrap()
    }

    pub fn violations(&self) -> String {
        std::fs::read_to_string(self.out.join("violations")).unwrap_or_default()
    }

    /// Pids of live processes carrying this pipeline's dispatch marker.
    pub fn marked_processes(&self) -> Vec<u32> {
        let dir = std::fs::canonicalize(self.pipeline()).unwrap_or(self.pipeline());
        let needle = format!("LOOPWATCH_DISPATCH={}#", dir.display());
        live_with_env(&needle)
    }
}

/// Pids of live (not zombie) processes whose environment holds `needle`.
pub fn live_with_env(needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(env) = std::fs::read(e.path().join("environ")) else {
            continue;
        };
        if !env
            .split(|&b| b == 0)
            .any(|kv| kv.starts_with(needle.as_bytes()))
        {
            continue;
        }
        if is_live(pid) {
            out.push(pid);
        }
    }
    out
}

/// Sends `sig` to process `pid`.
pub fn signal(pid: u32, sig: rustix::process::Signal) -> rustix::io::Result<()> {
    let pid = rustix::process::Pid::from_raw(pid as i32).expect("a pid");
    rustix::process::kill_process(pid, sig)
}

/// True while process `pid` runs (it exists and is not a zombie).
pub fn is_live(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().next())
            != Some("Z")
    })
}

pub const SCRIPTED: &str = r#"[run]
test = "true"
max_rounds = 3
grace = "1s"

[agents.developer]
command = "bash @AGENTS@/agent.sh developer"
timeout = "1m"

[agents.verifier]
command = "bash @AGENTS@/agent.sh verifier"
prompt_file = "../agents/verifier.md"
timeout = "1m"

[agents.auditor]
command = "bash @AGENTS@/agent.sh auditor"
timeout = "1m"
"#;

/// Asks `done` every 10 ms until it holds (true) or `within` has passed (false).
pub fn poll(within: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Asserts what every `stagnant` gate of an unchanged developer shows:
/// both rounds, of iterations 1 and 2, each with its tree's id; no file
/// changed but the contract (GATE 0 writes its EVIDENCE lines in between:
/// not the developer's work); the same rows; an unchanged tree as the
/// reason. Returns the two rounds.
pub fn assert_stagnant_unchanged(gate: &Value) -> (Value, Value) {
    assert_eq!(gate["kind"], "stagnant", "{gate:#}");
    let rounds = gate["evidence"]["rounds"].as_array().expect("rounds");
    assert_eq!(rounds.len(), 2, "{gate:#}");
    let (a, b) = (rounds[0].clone(), rounds[1].clone());
    assert_eq!(
        (a["iteration"].as_u64(), b["iteration"].as_u64()),
        (Some(1), Some(2)),
        "{gate:#}"
    );
    for side in [&a, &b] {
        assert!(
            side["tree"].as_str().is_some_and(|t| t.len() == 40),
            "{gate:#}"
        );
    }
    assert_eq!(
        gate["evidence"]["changedFiles"],
        serde_json::json!([]),
        "{gate:#}"
    );
    assert_eq!(a["rows"], b["rows"], "{gate:#}");
    assert!(
        gate["evidence"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("unchanged")),
        "{gate:#}"
    );
    (a, b)
}
