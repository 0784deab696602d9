//! `kill -9` of `loopwatch run` while a real CLI waits on the model, then
//! `loopwatch run` again: the CLI died with the engine, its dispatch is
//! recorded interrupted and done afresh, and the run reaches PASS.

use std::path::Path;
use std::time::Duration;

use crate::kit::*;
use crate::support::engine::{poll, signal};
use crate::support::model_server::{Script, Turn};

const ROLES: [&str; 3] = ["developer", "verifier", "auditor"];

fn kill_then_resume(adapter: &str, write: impl FnOnce(&Path) -> Turn) {
    let r = Real::new(&agents(adapter, &ROLES, "3m"), move |root| {
        let write = write(root);
        Script::new()
            // The model never answers the first developer: the engine dies meanwhile.
            .then(Turn::text("too late").after(Duration::from_secs(60)))
            .then(write)
            .then(Turn::text("Implemented the total with cents."))
            .then(Turn::text(&conforme()))
            .then(Turn::text(PASS))
    });
    let engine = r.spawn_run();
    assert!(
        poll(Duration::from_secs(60), || r.server.served() >= 1),
        "the developer never asked the model\n{}",
        r.dump()
    );
    assert!(!r.p.marked_processes().is_empty(), "the CLI runs");
    signal(engine.id(), rustix::process::Signal::KILL).expect("kill -9");
    let _ = engine.wait();
    r.keep(1, "developer", &format!("{adapter}-killed"));
    // The CLI dies with the engine (the parent-death signal of its shim).
    assert!(
        poll(Duration::from_secs(20), || r
            .p
            .marked_processes()
            .is_empty()),
        "the CLI outlived the engine: {:?}",
        r.p.marked_processes()
    );
    let out = r.run_until_done(r.cmd().args(["run", "--headless"]));
    r.assert_exit(&out, 0);
    r.finish();
    assert_eq!(r.verdicts(), ["MET", "CONFORME", "PASS"]);
    let dev = r.finished("developer");
    assert_eq!(dev.len(), 2, "{}", r.dump());
    assert_eq!(dev[0]["interrupted"], true, "{}", dev[0]);
    assert_eq!(dev[1]["exitCode"], 0, "{}", dev[1]);
    assert_eq!(r.p.of_type("run.started").len(), 1);
}

#[test]
#[cfg_attr(
    not(loopwatch_clis),
    ignore = "needs the real Claude Code CLI: .ci/run installs it into target/clis (CI runs this)"
)]
fn kill_9_of_the_engine_during_a_claude_dispatch_then_resume() {
    let _s = crate::support::serial();
    kill_then_resume("claude", write_total);
}

#[test]
#[cfg_attr(
    not(loopwatch_clis),
    ignore = "needs the real Codex CLI: .ci/run installs it into target/clis (CI runs this)"
)]
fn kill_9_of_the_engine_during_a_codex_dispatch_then_resume() {
    let _s = crate::support::serial();
    kill_then_resume("codex", |_| apply_patch_add(TOTAL, "total: 3.75 cents"));
}
