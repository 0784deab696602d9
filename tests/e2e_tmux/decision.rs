//! A human gate decided in the TUI while a scripted orchestrator waits in
//! `loopwatch await`.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process_group};
use serde_json::Value;

use super::support::tmux::{DEADLINE, Session, poll};
use super::support::{serial, worktree::BIN, worktree::Worktree};
use super::{COLS, ROWS, approve_in_dialog, line, wait_frame};

/// A zone whose date differs from UTC's right now (UTC-12 in the UTC
/// morning, UTC+14 in the afternoon), so a date taken in UTC cannot pass.
fn zone_off_utc_today() -> &'static str {
    if jiff::Timestamp::now()
        .to_zoned_datetime(jiff::tz::TimeZone::UTC)
        .hour()
        < 12
    {
        "Etc/GMT+12"
    } else {
        "Pacific/Kiritimati"
    }
}

fn today_in(zone: &str) -> String {
    let tz = jiff::tz::TimeZone::get(zone).unwrap_or_else(|e| panic!("time zone {zone}: {e}"));
    jiff::Timestamp::now()
        .to_zoned_datetime(tz)
        .strftime("%Y-%m-%d")
        .to_string()
}

/// The orchestrator, in a process group of its own; the group (with the
/// `await` it left in the background) is killed if the test fails first.
struct Orchestrator(Child);

impl Orchestrator {
    fn start(w: &Worktree) -> Orchestrator {
        let child = Command::new("bash")
            .arg("orchestrator.sh")
            .current_dir(&w.root)
            .env("LOOPWATCH", BIN)
            .env_remove("LOOPWATCH_PIPELINE")
            .process_group(0)
            .spawn()
            .expect("start the orchestrator");
        Orchestrator(child)
    }

    fn wait(&mut self, within: Duration) -> ExitStatus {
        poll(
            "the orchestrator to finish",
            within,
            || self.0.try_wait().ok().flatten(),
            || "still running".into(),
        )
    }
}

impl Drop for Orchestrator {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait()
            && let Some(pgid) = i32::try_from(self.0.id()).ok().and_then(Pid::from_raw)
        {
            let _ = kill_process_group(pgid, Signal::KILL);
            let _ = self.0.wait();
        }
    }
}

#[test]
fn an_approval_in_the_tui_reaches_the_waiting_orchestrator_and_the_contract() {
    let _serial = serial();
    let w = Worktree::new();
    let zone = zone_off_utc_today();
    let s = Session::start(
        COLS,
        ROWS,
        &format!("exec {}", w.watch_command()),
        &[("TZ", zone), ("LOOPWATCH_USER", "dana")],
    );
    let mut orchestrator = Orchestrator::start(&w);
    let awaiting = w.root.join("awaiting");
    poll(
        "the orchestrator to wait in `await`",
        DEADLINE,
        || awaiting.exists().then_some(()),
        || std::fs::read_to_string(w.root.join("steps.log")).unwrap_or_default(),
    );
    assert_eq!(w.read("awaiting").trim(), "hg-1-conformity-1");
    wait_frame(&s);
    s.wait_for("the open gate", |sc| {
        line(sc, 1).starts_with(" ⚑ WAITING ON YOU")
    });

    s.send(&["n"]);
    s.wait_for("the gate selected on the Gates tab", |sc| {
        line(sc, 5).starts_with("›⚑ WAITING ON YOU   hg-1-conformity-1")
    });
    let reason = "the release script ships with this change";
    approve_in_dialog(&s, "hg-1-conformity-1", reason);

    let status = orchestrator.wait(DEADLINE);
    assert_eq!(status.code(), Some(0), "steps:\n{}", w.read("steps.log"));
    let decision: Value =
        serde_json::from_str(w.read("decision.json").trim()).expect("await printed JSON");
    assert_eq!(decision["id"], "hg-1-conformity-1");
    assert_eq!(decision["decision"], "approve");
    assert_eq!(
        decision["reason"],
        "the release script ships with this change"
    );
    assert!(
        decision["by"]
            .as_str()
            .is_some_and(|b| b.starts_with("dana@")),
        "{decision}"
    );
    assert!(
        decision["at"].as_str().is_some_and(|a| a.ends_with('Z')),
        "{decision}"
    );

    let today = today_in(zone);
    let contract = w.read("contract.md");
    let want =
        format!("- scripts/release.sh [gated {today}] — the release script ships with this change");
    assert!(
        contract.lines().any(|l| l == want),
        "no line {want:?} in:\n{contract}"
    );
    s.wait_for("the saved decision in the status line", |sc| {
        line(sc, ROWS as usize - 1) == " decision saved (hg-1-conformity-1: approve)"
    });
}
