//! A note to the developer typed in the decision dialog of `loopwatch
//! run` (a field of its own, reached with ctrl-n) reaches the developer's
//! next dispatch under its own heading.

use super::support::engine::Project;
use super::support::{assert_has, serial};
use super::{line, run_session};

#[test]
fn a_note_typed_in_the_dialog_is_in_the_developers_next_input() {
    let _serial = serial();
    let p = Project::scripted();
    let s = run_session(&p, &[]);
    // The scripted developer's second change touches a Makefile outside
    // FILE SCOPE: the run waits on its out-of-scope gate.
    s.wait_for("the out-of-scope gate", |sc| {
        line(sc, 1).starts_with(" ⚑ WAITING ON YOU")
    });
    s.send(&["n"]);
    s.wait_for("the gate selected on the Gates tab", |sc| {
        sc.lines().any(|l| l.starts_with("›⚑ WAITING ON YOU   hg-"))
    });
    s.send(&["Enter"]);
    // The dialog's own option lines (the Gates tab's detail pane names the
    // options too), drawn as ready.
    s.wait_for("the dialog, its keys ready", |sc| {
        sc.contains("[x] deny — ") && sc.contains("options:") && !sc.contains("options (a moment)")
    });
    // Deny: the file goes back to the developer, and the note with it.
    s.send(&["x"]);
    s.type_text("no Makefile in this change");
    s.wait_for("the reason typed", |sc| {
        sc.contains("reason: no Makefile in this change")
    });
    s.send(&["C-n"]);
    s.wait_for("the note field", |sc| {
        sc.contains("note to the developer: ▏")
    });
    s.type_text("build with the existing build.sh, not make");
    s.wait_for("the note typed", |sc| {
        sc.contains("note to the developer: build with the existing build.sh, not make▏")
    });
    // The reason is kept while the note is typed.
    let screen = s.screen();
    assert_has(&screen, "reason: no Makefile in this change");
    s.send(&["C-s"]);

    // The developer dispatched after the decision.
    let after = |e: &[serde_json::Value]| {
        let decided = e.iter().find(|e| e["type"] == "human.decided")?["seq"].as_u64()?;
        e.iter()
            .find(|e| {
                e["type"] == "agent.started"
                    && e["role"] == "developer"
                    && e["seq"].as_u64().is_some_and(|s| s > decided)
            })
            .cloned()
    };
    let evs = p.wait_for("the developer's next dispatch", |e| after(e).is_some());
    let started = after(&evs).unwrap();
    let decided = evs.iter().find(|e| e["type"] == "human.decided").unwrap();
    assert_eq!(decided["decision"], "deny");
    assert_eq!(
        decided["note"],
        "build with the existing build.sh, not make"
    );
    let input = std::fs::read_to_string(p.pipeline().join(started["input"].as_str().unwrap()))
        .expect("the developer's input");
    let id = decided["id"].as_str().unwrap();
    assert_has(
        &input,
        "  out-of-scope: Makefile — denied by a person: remove the change\n",
    );
    assert!(
        input.contains(&format!(
            "NOTE FROM tester@{} ({id} deny):\nbuild with the existing build.sh, not make\n",
            decided["by"]
                .as_str()
                .unwrap()
                .trim_start_matches("tester@")
        )),
        "{input}"
    );
}
