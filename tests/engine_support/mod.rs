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

pub const CONTRACT: &str = "docs/contract.md";

pub const CONTRACT_TEXT: &str = "# CONTRACT — totals\n- date: 2026-12-01 | flow: feat | branch: main\n- status: active\n\n## REQUEST (verbatim — IMMUTABLE)\n\"The total shows cents.\"\n\n## ACCEPTANCE CRITERIA\n1. The total shows cents.\n   CHECK: grep -q cents src/total.txt && echo CENTS_OK\n   EXPECT: CENTS_OK\n   EVIDENCE: pending\n\n## FILE SCOPE\n- src/total.txt\n";

/// The scripted agents: one script, the role as its first argument.
pub const AGENT: &str = r#"#!/usr/bin/env bash
set -u
role=$1
out="$TEST_OUT"
n="$LW_DISPATCH"
input=$(cat)
printf '%s' "$input" >"$out/$n-$role.stdin"
env | grep '^LW_' | sort >"$out/$n-$role.env"
if [ -f "$out/running" ] && kill -0 "$(cat "$out/running")" 2>/dev/null; then
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
      printf 'SECURITY — VERDICT: PASS\nTOOL: grep\nSCOPE: 1 files\nBLOCKING:\nREPORTED (non-blocking):\nPROOF: grep on 1 files\n'
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
    pub fn wrap(c: Child) -> Engine {
        Engine(Some(c))
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

fn git(dir: &Path, args: &[&str]) {
    let st = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("git");
    assert!(st.success(), "git {args:?}");
}

impl Project {
    /// A worktree with the contract committed and the scripted agents.
    pub fn new(config: &str) -> Project {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("work");
        let out = tmp.path().join("out");
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        git(&root, &["init", "-q"]);
        git(&root, &["config", "user.email", "t@example.invalid"]);
        git(&root, &["config", "user.name", "t"]);
        std::fs::write(root.join(CONTRACT), CONTRACT_TEXT).unwrap();
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-qm", "contract"]);
        let agents = tmp.path().join("agents");
        std::fs::create_dir_all(&agents).unwrap();
        std::fs::write(agents.join("agent.sh"), AGENT).unwrap();
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
        Engine(Some(
            c.stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn run"),
        ))
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

    /// The finding ids in one bucket of `.pipeline/triage-<iteration>.json`.
    pub fn triage_ids(&self, iteration: u32, bucket: &str) -> Vec<String> {
        let path = self.pipeline().join(format!("triage-{iteration}.json"));
        let triage: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        triage[bucket]
            .as_array()
            .unwrap_or_else(|| panic!("{}: no {bucket} array", path.display()))
            .iter()
            .map(|f| f["id"].as_str().unwrap().to_string())
            .collect()
    }

    /// Polls until `f` holds on the journal (deadline: a minute).
    pub fn wait_for(&self, what: &str, f: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let evs = self.events();
            if f(&evs) {
                return evs;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; journal: {evs:#?}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
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

    pub fn input(&self, name: &str) -> String {
        std::fs::read_to_string(self.pipeline().join("agents").join(format!("{name}.input")))
            .unwrap_or_else(|e| panic!("{name}.input: {e}"))
    }

    pub fn head(&self) -> String {
        let o = Command::new("git")
            .arg("-C")
            .arg(&self.root)
            .args(["rev-parse", "HEAD"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).trim().to_string()
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
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or("");
        if state != "Z" {
            out.push(pid);
        }
    }
    out
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
