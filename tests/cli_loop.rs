//! A whole loop driven through the real binary in a temp worktree, in the
//! order the orchestrator include prescribes; the journal, state.json and
//! `status --json` agree at every step.

use loopwatch::journal::{Pipeline, read_all};
use loopwatch::model::{State, fold};
use serde_json::Value;

#[allow(dead_code)]
#[path = "support/worktree.rs"]
mod worktree;

use worktree::{RUN_START, Worktree, assert_has, decide, record_gate};

/// Checks a command's exit code and that the pipeline stayed consistent.
trait Checked {
    /// Runs a command, checks its exit code, returns stdout.
    fn ok(&self, args: &[&str], code: i32) -> String;
    /// The journal's fold, state.json and `status --json` describe one state.
    fn agree(&self);
}

impl Checked for Worktree {
    fn ok(&self, args: &[&str], code: i32) -> String {
        let stdout = self.lw(args, code);
        self.agree();
        stdout
    }

    fn agree(&self) {
        let p = Pipeline::at(self.root.join(".pipeline"));
        if !p.journal_path().exists() {
            return;
        }
        let batch = read_all(&p.journal_path()).unwrap();
        assert!(batch.problems.is_empty(), "{:?}", batch.problems);
        let folded = fold(&batch.events);
        let on_disk: State =
            serde_json::from_slice(&std::fs::read(p.state_path()).unwrap()).unwrap();
        assert_eq!(
            on_disk, folded,
            "state.json differs from the fold of the journal"
        );
        let out = self.run(&["status", "--json"]);
        let mut v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let o = v.as_object_mut().unwrap();
        let open = o.remove("openHumanGates").unwrap();
        o.remove("problems");
        o.remove("source");
        assert_eq!(
            serde_json::from_value::<State>(v).unwrap(),
            folded,
            "status --json differs"
        );
        let want: Vec<String> = folded
            .open_human_gates()
            .map(|g| g.request.id.clone())
            .collect();
        assert_eq!(open, serde_json::json!(want));
        let code = if want.is_empty() { 0 } else { 10 };
        assert_eq!(out.status.code(), Some(code));
    }
}

fn last_line(s: &str) -> &str {
    s.lines().last().unwrap_or("")
}

#[test]
fn a_whole_loop_with_an_out_of_scope_gate() {
    let w = Worktree::from_fixtures("loop", None);
    let out = w.ok(&RUN_START, 0);
    assert_eq!(last_line(&out), "NEXT: next-gate");
    assert_eq!(w.ok(&["status", "--next"], 0).trim(), "next-gate floor");

    // GATE 0: the reference output on stdout, the recording on stderr.
    let out = w.expect(&["gate0", "run", "contract.md"], 0);
    assert!(String::from_utf8_lossy(&out.stdout).ends_with("GATES — VERDICT: MET\n"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("NEXT: next-gate"));
    w.agree();
    assert_eq!(
        w.ok(&["status", "--next"], 0).trim(),
        "next-gate conformity"
    );

    // GATE 1: ECARTS with a NOT-MET row and an out-of-scope file: the human gate first.
    let out = w.ok(&record_gate("conformity", "conformity-ecarts.txt"), 10);
    assert_has(&out, "human gate opened: hg-1-conformity-1 (out-of-scope)");
    assert_eq!(last_line(&out), "NEXT: human hg-1-conformity-1");
    assert!(
        std::fs::read(w.root.join(".pipeline/gates/1-conformity-1.out"))
            .unwrap()
            .starts_with("VERIFY".as_bytes())
    );

    // A gate recorded out of order is refused and nothing is written.
    let before = std::fs::read(w.root.join(".pipeline/events.jsonl")).unwrap();
    let out = w.ok(&record_gate("security", "security-pass.txt"), 2);
    assert!(out.is_empty());
    assert_eq!(
        std::fs::read(w.root.join(".pipeline/events.jsonl")).unwrap(),
        before
    );

    // await times out while the gate is open, then returns the decision.
    assert_eq!(
        w.ok(&["await", "hg-1-conformity-1", "--timeout", "0.2"], 124),
        ""
    );
    let out = w.ok(
        &decide(
            "hg-1-conformity-1",
            "approve",
            "the Makefile target is part of the change",
        ),
        11,
    );
    assert_has(&out, "decision saved (hg-1-conformity-1: approve)");
    assert_eq!(last_line(&out), "NEXT: dev");
    let out = w.ok(&["await", "hg-1-conformity-1"], 0);
    let d: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(d["id"], "hg-1-conformity-1");
    assert_eq!(d["decision"], "approve");
    assert_eq!(d["reason"], "the Makefile target is part of the change");
    assert!(d["by"].as_str().unwrap().starts_with("dana@"));
    assert!(d["at"].as_str().unwrap().ends_with('Z'));
    let contract = std::fs::read_to_string(w.root.join("contract.md")).unwrap();
    assert!(contract.contains("Makefile [gated "), "{contract}");

    // Deciding twice is refused.
    w.ok(&decide("hg-1-conformity-1", "deny", "changed my mind"), 2);

    // Back to the developer, then the loop replays GATE 0 -> 1 -> 2.
    let out = w.ok(&["record", "dev", "--input", "criterion 2: NOT-MET"], 0);
    assert_eq!(last_line(&out), "NEXT: next-gate");
    w.ok(&["gate0", "run", "contract.md"], 0);
    let out = w.ok(&record_gate("conformity", "conformity-conforme.txt"), 0);
    assert_eq!(last_line(&out), "NEXT: next-gate");
    let out = w.ok(&record_gate("security", "security-pass.txt"), 0);
    assert_eq!(last_line(&out), "NEXT: done");
    assert_eq!(w.ok(&["status", "--next"], 0).trim(), "done complete");
    let out = w.ok(&["record", "run-end", "--status", "complete"], 0);
    assert_eq!(last_line(&out), "NEXT: done");
    let report = std::fs::read_to_string(w.root.join(".pipeline/report.md")).unwrap();
    assert!(report.contains("final status: **complete**"), "{report}");
    assert!(report.contains("approve"), "{report}");

    let p = Pipeline::at(w.root.join(".pipeline"));
    let state = fold(&read_all(&p.journal_path()).unwrap().events);
    assert_eq!(state.review_iterations.len(), 2);
    assert_eq!(state.counters.conformity, 1);
    assert_eq!(state.review_iterations[1].trigger, "ecarts");
}
