//! One whole `loopwatch run --headless` per runner on a small real project
//! with a bug, through the real binary and the real runner: the scripted
//! reviewer reports findings while the bug is there, the scripted
//! verify-by-test agent writes one repro test per finding (namesakes in
//! other files, nested groups, parametrized ids with spaces and brackets,
//! subtests, odd characters, a repro that does not build, a passing one),
//! loopwatch runs and judges each, the developer fixes the bug once handed
//! the red tests, and loopwatch reruns those (green).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::support::engine::{Project, REVIEW_ROLES, agent_tables, commit_all, poll};

/// tests/fixtures/checks/runners (the runners .ci/run installs).
pub fn runners() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/checks/runners")
}

/// A runner's project and what its agents do.
pub struct Case<'a> {
    /// `[run] test`.
    pub test: &'a str,
    /// The project's files (path, content), committed before the run.
    pub files: &'a [(&'a str, &'a str)],
    /// Links made in the project (path, target), ignored by git.
    pub links: &'a [(&'a str, PathBuf)],
    /// A shell test that succeeds while the bug is there.
    pub buggy: &'a str,
    /// The shell command that fixes the bug.
    pub fix: &'a str,
    /// The repro tests the verify-by-test agent writes, one finding each:
    /// (finding, testRef, content); the file is the testRef's part before `::`.
    pub repros: &'a [(&'a str, &'a str, &'a str)],
    /// The source file the findings are about.
    pub source: &'a str,
}

/// A finished run.
pub struct Finished {
    pub project: Project,
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The scripted agents of a case, after the shared prologue.
fn agent<'a>(case: &Case<'a>) -> String {
    let findings: Vec<Value> = case
        .repros
        .iter()
        .map(|(id, ..)| {
            serde_json::json!({"id": id, "severity": "blocking", "path": case.source,
                "lines": "1", "claim": format!("{id}: the tip is divided by 100")})
        })
        .collect();
    let findings = serde_json::to_string(&findings).unwrap();
    let file_of = |test_ref: &'a str| test_ref.split_once("::").map_or(test_ref, |(f, _)| f);
    let answer: Vec<Value> = case
        .repros
        .iter()
        .map(|(id, test_ref, _)| serde_json::json!({"finding": id, "file": file_of(test_ref), "testRef": test_ref}))
        .collect();
    let answer = serde_json::to_string(&answer).unwrap();
    let mut write = String::new();
    for (_, test_ref, content) in case.repros {
        let file = file_of(test_ref);
        let dir = Path::new(file)
            .parent()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        if !dir.is_empty() {
            write.push_str(&format!("    mkdir -p {}\n", shell_quote(&dir)));
        }
        // Appended: two findings may share a file.
        write.push_str(&format!(
            "    printf '%s' {} >>{}\n",
            shell_quote(content),
            shell_quote(file)
        ));
    }
    format!(
        r#"buggy() {{ {buggy}; }}
findings={findings}
case $role in
  developer)
    mkdir -p src
    echo "total: 3.75 cents" >src/total.txt
    case $input in *"already exists at"*) {fix} ;; esac
    echo done
    ;;
  verifier) conforme ;;
  auditor) pass ;;
  reviewer)
    if buggy; then echo "REVIEW: blocking findings"; echo "$findings"; else echo "REVIEW: clean"; echo "[]"; fi
    ;;
  finding-verifier)
    case $LW_STEP in
      parse) if buggy; then list=$findings; else list='[]'; fi
        printf '{{"findings_list": %s, "project_dir": "%s"}}\n' "$list" "$PWD" ;;
      verify) printf '{{"id":"%s","verdict":"VERIFIED","evidence":"{source}: the tip is divided by 100","note":""}}\n' "$LW_FINDING_ID" ;;
    esac
    ;;
  verify-by-test)
{write}    printf '%s\n' {answer}
    ;;
esac
"#,
        buggy = case.buggy,
        findings = shell_quote(&findings),
        fix = case.fix,
        source = case.source,
        write = write,
        answer = shell_quote(&answer),
    )
}

/// Runs the case to its end (exit 0, run complete).
pub fn run(case: &Case<'_>) -> Finished {
    // One at a time: each builds and runs a real project.
    let _one = crate::support::serial();
    let roles = [REVIEW_ROLES.as_slice(), &["verify-by-test"]].concat();
    let config = format!(
        "[run]\ntest = {}\nmax_rounds = 3\ngrace = \"1s\"\n\n\
         [verify_by_test]\nenabled = true\nmax_findings = 10\nstep_timeout = \"10m\"\n\n{}",
        toml_string(case.test),
        agent_tables("vbt.sh", &roles).replace("timeout = \"1m\"", "timeout = \"3m\"")
    );
    let p = Project::new(&config);
    p.write_agent("vbt.sh", &agent(case));
    for (path, text) in case.files {
        let path = p.root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    for (path, target) in case.links {
        std::os::unix::fs::symlink(target, p.root.join(path)).unwrap();
    }
    commit_all(&p.root, "the project");
    let engine = p.spawn_run(true);
    // The run ends by itself; a gate it opens (the review's rounds used up
    // by findings that stay) would wait for a person forever.
    // A run builds real projects: a longer deadline than `Project::wait_for`'s.
    let mut evs = Vec::new();
    let ended = poll(Duration::from_secs(900), || {
        evs = p.events();
        evs.iter()
            .any(|e| e["type"] == "run.ended" || e["type"] == "human.requested")
    });
    assert!(ended, "the run did not end in time; journal: {evs:#?}");
    assert!(
        !evs.iter().any(|e| e["type"] == "human.requested"),
        "the run opened a human gate; journal: {evs:#?}"
    );
    let out = engine.wait_with_output();
    p.assert_exit(&out, 0);
    assert_eq!(
        p.of_type("run.ended")[0]["status"],
        "complete",
        "{:#?}",
        p.events()
    );
    Finished { project: p }
}

fn toml_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

impl Finished {
    /// (finding, result, note) of each event `kind` of the journal that `keep` keeps.
    fn rows(&self, kind: &str, keep: impl Fn(&Value) -> bool) -> Vec<(String, String, String)> {
        let field = |e: &Value, k: &str| e[k].as_str().unwrap_or_default().to_string();
        self.project
            .of_type(kind)
            .iter()
            .filter(|e| keep(e))
            .map(|e| (field(e, "finding"), field(e, "result"), field(e, "note")))
            .collect()
    }

    /// The verify-by-test result of each finding of iteration 1: (finding,
    /// result, note).
    pub fn results(&self) -> Vec<(String, String, String)> {
        self.rows("verify.result", |r| r["iteration"] == 1)
    }

    /// Asserts each finding's result and that its note says `note`.
    #[track_caller]
    pub fn assert_results(&self, want: &[(&str, &str, &str)]) {
        let got = self.results();
        assert_eq!(got.len(), want.len(), "{got:#?}");
        for ((f, result, note), (gf, gresult, gnote)) in want.iter().zip(&got) {
            assert_eq!(
                (*f, *result),
                (gf.as_str(), gresult.as_str()),
                "{f}: {gnote}\n{got:#?}"
            );
            assert!(gnote.contains(note), "{f}: {note:?} not in {gnote:?}");
        }
    }

    /// The rechecks' results after the developer: (finding, result, note).
    pub fn greens(&self) -> Vec<(String, String, String)> {
        self.rows("verify.green", |_| true)
    }

    /// Asserts that exactly `findings` were rechecked, each green.
    #[track_caller]
    pub fn assert_green(&self, findings: &[&str]) {
        let greens = self.greens();
        let got: Vec<(&str, &str)> = greens
            .iter()
            .map(|(f, r, _)| (f.as_str(), r.as_str()))
            .collect();
        let want: Vec<(&str, &str)> = findings.iter().map(|f| (*f, "green")).collect();
        assert_eq!(got, want, "{greens:#?}");
    }

    /// A log of the pipeline.
    pub fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.project.pipeline().join(name)).unwrap_or_default()
    }
}
