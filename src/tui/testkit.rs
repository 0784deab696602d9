//! Test helpers, shared by the unit tests and (behind the `testkit`
//! feature, which `cargo test` turns on) the integration tests: states built
//! by folding constructed events, an app on a manual clock, key events.

use std::time::Duration;

use jiff::Timestamp;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::{Value, json};

use crate::model::event::{HumanDecision, HumanRequest, RunInfo};
use crate::model::{Event, EventBody, GateName, HumanGateKind, State, fold};
use crate::tui::app::App;
use crate::tui::clock::ManualClock;
use crate::tui::config::{Config, ThemeKind};

/// The clock's start: 10:30:00 on the day of the constructed events.
pub fn t0() -> Timestamp {
    "2026-11-02T10:30:00Z".parse().expect("valid time")
}

/// An event at `10:00:<seq>`.
pub fn ev(seq: u64, body: EventBody) -> Event {
    Event {
        v: 1,
        seq,
        at: format!("2026-11-02T10:{:02}:{:02}Z", seq / 60, seq % 60),
        prev: None,
        body,
    }
}

/// `run.started`.
pub fn run_started() -> EventBody {
    EventBody::RunStarted {
        run: Box::new(RunInfo {
            id: "2026-11-02-demo-1000".into(),
            flow: "feat".into(),
            contract: "contracts/2026-11-02-demo-1000.md".into(),
            ..RunInfo::default()
        }),
        tree: None,
        tree_missing: None,
    }
}

/// A `human.requested` of a kind, with evidence.
pub fn request(id: &str, kind: HumanGateKind, evidence: Value) -> EventBody {
    EventBody::from(HumanRequest {
        id: id.into(),
        kind,
        gate: Some(GateName::Conformity),
        iteration: 1,
        subject: "Cargo.lock".into(),
        summary: format!("{kind} gate for a test"),
        options: kind.options().to_vec(),
        evidence,
        expires: None,
        extra: Default::default(),
    })
}

/// A `human.decided`.
pub fn decided(id: &str, decision: crate::model::Decision, reason: &str, by: &str) -> EventBody {
    EventBody::from(HumanDecision {
        id: id.into(),
        decision,
        reason: reason.into(),
        by: by.into(),
        evidence_hash: "sha256:00".into(),
        contract_edit: None,
        note: None,
        extra: Default::default(),
    })
}

/// Standard evidence for a request.
pub fn evidence() -> Value {
    json!({"paths": ["Cargo.lock"], "output": "gates/1-conformity-1.out"})
}

/// `iteration.started` of iteration `n`.
pub fn iteration_started(n: u32, trigger: &str) -> EventBody {
    EventBody::IterationStarted {
        iteration: n,
        trigger: trigger.into(),
    }
}

/// Events of a run whose first iteration opened one gate: `run.started`,
/// iteration 1, then `request` at seq 3.
pub fn events_with_request(request: EventBody) -> Vec<Event> {
    vec![
        ev(1, run_started()),
        ev(2, iteration_started(1, "initial")),
        ev(3, request),
    ]
}

/// Events of a run with one open gate of `kind`, id `hg-1-conformity-1`.
pub fn events_with_gate(kind: HumanGateKind) -> Vec<Event> {
    events_with_request(request("hg-1-conformity-1", kind, evidence()))
}

/// The state of some events.
pub fn state_of(events: &[Event]) -> State {
    fold(events.iter())
}

/// An app on a manual clock at [`t0`], fed `events`.
pub fn app_with(events: &[Event]) -> (App, ManualClock) {
    app_on(ThemeKind::NoColor, t0(), "/p/.pipeline", events)
}

/// An app in `theme` on a manual clock at `now`, watching `pipeline`, fed
/// `events` (the default config).
pub fn app_on(
    theme: ThemeKind,
    now: Timestamp,
    pipeline: &str,
    events: &[Event],
) -> (App, ManualClock) {
    let clock = ManualClock::new(now);
    let mut app = App::new(
        Config::default(),
        theme,
        Box::new(clock.clone()),
        pipeline.into(),
    );
    let _ = app.on_state(state_of(events), events);
    (app, clock)
}

/// A key without modifiers.
pub fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

/// A character key.
pub fn ch(c: char) -> KeyEvent {
    key(KeyCode::Char(c))
}

/// Ctrl + a character.
pub fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

/// Types text key by key.
pub fn type_text(app: &mut App, text: &str) -> Vec<crate::tui::Effect> {
    text.chars().flat_map(|c| app.on_key(&ch(c))).collect()
}

/// Past the dialog's key guard.
pub const PAST_GUARD: Duration = Duration::from_millis(350);

/// Records `loopwatch demo --no-tui --speed 1000` into `out` with the
/// binary `bin`, under a git set-up of its own (default branch `main`, no
/// system or user config) and the user `demo`, so the journal is the same
/// on every machine. Returns the command's output; the caller judges it.
pub fn record_demo(bin: &std::path::Path, out: &std::path::Path) -> std::process::Output {
    let git_config = out.with_extension("gitconfig");
    std::fs::write(&git_config, "[init]\n\tdefaultBranch = main\n").expect("write git config");
    std::process::Command::new(bin)
        .args(["demo", "--no-tui", "--speed", "1000", "--out"])
        .arg(out)
        .env("LOOPWATCH_USER", "demo")
        .env("GIT_CONFIG_GLOBAL", &git_config)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run loopwatch demo")
}
