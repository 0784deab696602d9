//! Decisions under faults: the writer killed at every point of an
//! out-of-scope approval (contract edit, then append), a pipeline that
//! cannot be written, and three people deciding the same gate at once (two
//! TUIs and `loopwatch decide`). Nothing is half-written, nothing is
//! decided twice, and what was said to be saved is in the journal once.

mod support;

use support::hardening as hardening_support;

use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use hardening_support::{CONTRACT, Rng, Worktree};
use loopwatch::contract::{ScopeEdit, gate_path, today_local};
use loopwatch::journal::{Pipeline, PipelineLock, read_all};
use loopwatch::model::event::HumanDecision;
use loopwatch::model::{EventBody, fold};
use loopwatch::recorder::{RecordError, Recorder, Refusal};
use loopwatch::tui::app::Tab;
use loopwatch::tui::config::{Config, ThemeKind};
use loopwatch::tui::dialog::Phase;
use loopwatch::tui::{App, DecisionRequest, Effect, ManualClock};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

const SUBJECT: &str = "Makefile";

/// Decisions recorded for `id`: (decision, reason, by).
fn decisions(p: &Pipeline, id: &str) -> Vec<(String, String, String)> {
    let batch = read_all(&p.journal_path()).unwrap();
    batch
        .events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::HumanDecided(d) if d.id == id => {
                Some((d.decision.to_string(), d.reason.clone(), d.by.clone()))
            }
            _ => None,
        })
        .collect()
}

/// The journal reads with no problem; returns whether a partial last line is left.
fn journal_clean(p: &Pipeline) -> bool {
    let batch = read_all(&p.journal_path()).unwrap();
    assert!(batch.problems.is_empty(), "{:?}", batch.problems);
    batch.partial
}

/// The contract parses (GATE 0 status gives its usual verdict) and is the
/// old bytes, or the old bytes with `SUBJECT` tagged once (returns which).
fn contract_state(root: &Path, old: &[u8]) -> bool {
    let path = root.join(CONTRACT);
    let now = std::fs::read(&path).unwrap();
    let outcome = loopwatch::gate0::status(&path, &Default::default());
    assert_eq!(
        outcome.verdict.to_string(),
        "PENDING(1)",
        "{}",
        String::from_utf8_lossy(&outcome.report)
    );
    if now == old {
        return false;
    }
    let ScopeEdit::Changed(want) =
        gate_path(old, SUBJECT, &today_local(), Some(&reason_of_tag(&now))).unwrap()
    else {
        panic!("the fixture has no tag yet");
    };
    assert_eq!(
        String::from_utf8_lossy(&now),
        String::from_utf8_lossy(&want)
    );
    true
}

/// The reason written after the tag (whichever writer's it was).
fn reason_of_tag(contract: &[u8]) -> String {
    let text = String::from_utf8_lossy(contract);
    let line = text
        .lines()
        .find(|l| l.contains("[gated "))
        .expect("a tagged line");
    line.split(" — ").nth(1).unwrap_or_default().to_string()
}

#[test]
fn sigkill_at_any_point_of_an_approval_loses_nothing_and_decides_once() {
    let template = Worktree::new();
    template.start_run();
    let id = template.ask_out_of_scope(SUBJECT);
    let old = std::fs::read(template.root.join(CONTRACT)).unwrap();
    let tp = template.pipeline();
    let mut rng = Rng::from_env();
    let (mut untouched, mut tagged_only, mut saved_silent, mut printed, mut repaired) =
        (0, 0, 0, 0, 0);
    for trial in 0..200 {
        let w = Worktree::new();
        let p = w.pipeline();
        std::fs::create_dir(p.dir()).unwrap();
        std::fs::copy(tp.journal_path(), p.journal_path()).unwrap();
        std::fs::copy(tp.state_path(), p.state_path()).unwrap();
        let reason = format!("trial {trial} needs the build file");
        let mut child = w
            .command(&["decide", &id, "approve", "--reason", &reason])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng.below(15_000)));
        let _ = child.kill();
        let out = child.wait_with_output().unwrap();
        let said_saved = String::from_utf8_lossy(&out.stdout).contains("decision saved");

        if journal_clean(&p) {
            repaired += 1;
        }
        let recorded = decisions(&p, &id);
        assert!(recorded.len() <= 1, "trial {trial}: {recorded:?}");
        if said_saved {
            assert_eq!(
                recorded.len(),
                1,
                "trial {trial}: said saved but not in the journal"
            );
        }
        let tagged = contract_state(&w.root, &old);
        if !recorded.is_empty() {
            assert!(
                tagged,
                "trial {trial}: a recorded approval must have tagged the contract first"
            );
        }
        match (tagged, recorded.len(), said_saved) {
            (false, 0, _) => untouched += 1,
            (true, 0, _) => tagged_only += 1,
            (_, _, false) => saved_silent += 1,
            _ => printed += 1,
        }

        // The next writer repairs a partial line and the gate is decided once.
        let retry = w.output(&["decide", &id, "approve", "--reason", "second try"]);
        let stdout = String::from_utf8_lossy(&retry.stdout);
        let stderr = String::from_utf8_lossy(&retry.stderr);
        if recorded.is_empty() {
            assert!(
                stdout.contains("decision saved"),
                "trial {trial}: {stdout} {stderr}"
            );
        } else {
            assert_eq!(retry.status.code(), Some(2), "trial {trial}");
            assert!(
                stderr.contains(&format!("{id} was already decided: approve by ")),
                "trial {trial}: {stderr}"
            );
        }
        assert!(
            !journal_clean(&p),
            "trial {trial}: the retry left a partial line"
        );
        assert_eq!(decisions(&p, &id).len(), 1, "trial {trial}");
        assert!(contract_state(&w.root, &old), "trial {trial}");
        let state: loopwatch::model::State =
            serde_json::from_slice(&std::fs::read(p.state_path()).unwrap()).unwrap();
        assert_eq!(
            state,
            fold(&read_all(&p.journal_path()).unwrap().events),
            "trial {trial}: state.json"
        );
    }
    eprintln!(
        "200 kills: {untouched} before any write, {tagged_only} contract tagged but not appended, \
         {saved_silent} appended but killed before printing, {printed} printed; {repaired} partial lines repaired"
    );
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

/// An app on the pipeline's current state with the newest gate's dialog
/// open, `option` chosen and `reason` typed; returns the confirmed request.
fn confirm_in_app(w: &Worktree, option: char, reason: &str) -> (App, DecisionRequest) {
    let snap = loopwatch::journal::snapshot(&w.pipeline())
        .unwrap()
        .unwrap();
    let clock = ManualClock::new("2026-11-02T10:30:00Z".parse().unwrap());
    let mut app = App::new(
        Config::default(),
        ThemeKind::NoColor,
        Box::new(clock.clone()),
        w.pipeline().dir().to_path_buf(),
    );
    let _ = app.on_state(snap.state, &snap.events);
    for k in [key(KeyCode::Char('4')), key(KeyCode::Char('g'))] {
        assert_eq!(app.on_key(&k), vec![]);
    }
    // Opening the dialog asks whether its evidence is still current.
    let opened = app.on_key(&key(KeyCode::Enter));
    assert!(
        matches!(&opened[..], [loopwatch::tui::Effect::CheckEvidence(_)]),
        "{opened:?}"
    );
    assert_eq!(app.tab(), Tab::Gates);
    assert!(app.dialog().is_some(), "no dialog opened");
    clock.advance(Duration::from_millis(400));
    let _ = app.on_key(&key(KeyCode::Char(option)));
    for c in reason.chars() {
        let _ = app.on_key(&key(KeyCode::Char(c)));
    }
    match app.on_key(&ctrl('s')).as_slice() {
        [Effect::WriteDecision(req)] => {
            let req = req.clone();
            (app, req)
        }
        other => panic!("no write: {other:?}"),
    }
}

/// What the event loop does with a confirmed request.
fn write(p: &Pipeline, req: &DecisionRequest) -> Result<(), RecordError> {
    let d = HumanDecision {
        id: req.id.clone(),
        decision: req.decision,
        reason: req.reason.clone(),
        by: loopwatch::util::user_at_host(),
        evidence_hash: req.evidence_hash.clone(),
        contract_edit: None,
        note: None,
        extra: Default::default(),
    };
    Recorder::new(p.clone())
        .decide_on(d, req.evidence.as_bytes())
        .map(|_| ())
}

/// The error a dialog shows, in its words.
fn failed(app: &App) -> Option<String> {
    match &app.dialog()?.phase {
        Phase::Failed(e) => Some(e.to_string()),
        _ => None,
    }
}

fn screen(app: &App) -> String {
    let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(220, 50)).unwrap();
    term.draw(|f| loopwatch::tui::view::render(f, app)).unwrap();
    let buf = term.backend().buffer().clone();
    (0..buf.area.height)
        .map(|y| {
            (0..buf.area.width)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
                + "\n"
        })
        .collect()
}

#[test]
fn a_held_lock_or_an_unwritable_journal_refuses_the_decision_whole_and_a_retry_works() {
    let w = Worktree::new();
    w.start_run();
    let id = w.ask_out_of_scope(SUBJECT);
    let p = w.pipeline();
    let journal = std::fs::read(p.journal_path()).unwrap();
    let contract = std::fs::read(w.root.join(CONTRACT)).unwrap();
    let unchanged = || {
        assert_eq!(std::fs::read(p.journal_path()).unwrap(), journal);
        assert_eq!(std::fs::read(w.root.join(CONTRACT)).unwrap(), contract);
    };

    // Root ignores file modes, so chmod 0555/0444 would not stop this
    // writer; a lock held by another process and a journal that is a
    // directory fail for root too.
    let lock = PipelineLock::acquire(&p.lock_path(), Duration::from_secs(1)).unwrap();
    let out = w
        .command(&["decide", &id, "approve", "--reason", "held lock"])
        .env("LOOPWATCH_LOCK_TIMEOUT", "0.2")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let want = format!(
        "loopwatch: {} is held by pid {} and was not released within 0.",
        p.lock_path().display(),
        std::process::id()
    );
    assert!(
        stderr.starts_with(&want) && stderr.ends_with("s; retry, or check that process\n"),
        "{stderr}"
    );
    unchanged();
    drop(lock);

    // A TUI has its dialog confirmed when the fault appears.
    let (mut app, req) = confirm_in_app(&w, 'a', "tui reason kept");
    let aside = w.root.join("events.jsonl.aside");
    std::fs::rename(p.journal_path(), &aside).unwrap();
    std::fs::create_dir(p.journal_path()).unwrap();
    let out = w.output(&["decide", &id, "approve", "--reason", "journal is a folder"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "loopwatch: read {}: the journal is not a regular file\n",
            p.journal_path().display()
        )
    );

    // The TUI meets the same fault: the dialog stays open, says why, keeps the reason.
    let err = write(&p, &req).unwrap_err();
    assert!(matches!(err, RecordError::Journal(_)), "{err:?}");
    let err = {
        let said = err.to_string();
        app.on_write_result(Err(err));
        said
    };
    assert_eq!(failed(&app).as_ref(), Some(&err));
    assert_eq!(app.dialog().unwrap().reason, "tui reason kept");
    let text = screen(&app);
    assert!(
        text.contains(&format!("NOT SAVED: open {}", p.dir().display())),
        "{text}"
    );
    assert!(
        err.ends_with("events.jsonl: Is a directory (os error 21)"),
        "{err}"
    );
    assert!(text.contains("tui reason kept"), "{text}");

    std::fs::remove_dir(p.journal_path()).unwrap();
    std::fs::rename(&aside, p.journal_path()).unwrap();
    unchanged();

    // Fault removed: the retry from the dialog is saved.
    let retry = match app.on_key(&ctrl('s')).as_slice() {
        [Effect::WriteDecision(r)] => r.clone(),
        other => panic!("no retry: {other:?}"),
    };
    assert_eq!(retry.reason, "tui reason kept");
    app.on_write_result(write(&p, &retry));
    assert!(app.dialog().is_none());
    assert_eq!(
        app.status(),
        Some(format!("decision saved ({id}: approve)").as_str())
    );
    assert_eq!(
        decisions(&p, &id),
        vec![(
            "approve".into(),
            "tui reason kept".into(),
            loopwatch::util::user_at_host()
        )]
    );
    assert!(
        std::fs::read_to_string(w.root.join(CONTRACT))
            .unwrap()
            .contains("- Makefile [gated ")
    );
    // And the command line now hears that it is decided.
    let out = w.output(&["decide", &id, "deny", "--reason", "too late"]);
    support::assert_failed(&out, 2, "was already decided: approve by ");
}

#[test]
fn two_tuis_and_the_cli_deciding_one_gate_record_exactly_one_decision() {
    let w = Worktree::new();
    w.start_run();
    let p = w.pipeline();
    let (mut by_a, mut by_b, mut by_cli) = (0, 0, 0);
    for round in 0..50 {
        let subject = format!("generated/file-{round}.txt");
        let id = w.ask_out_of_scope(&subject);
        let reasons = [
            format!("tui-a round {round}"),
            format!("tui-b round {round}"),
            format!("cli round {round}"),
        ];
        let (app_a, req_a) = confirm_in_app(&w, 'a', &reasons[0]);
        let (app_b, req_b) = confirm_in_app(&w, 'x', &reasons[1]);
        assert_eq!(
            (req_a.id.as_str(), req_b.id.as_str()),
            (id.as_str(), id.as_str())
        );
        let go = Arc::new(Barrier::new(3));
        let tui = |mut app: App, req: DecisionRequest| {
            let (go, p) = (go.clone(), p.clone());
            std::thread::spawn(move || {
                go.wait();
                let r = write(&p, &req);
                let said = r.as_ref().map(|_| ()).map_err(|e| {
                    assert!(
                        matches!(e, RecordError::Refused(Refusal::AlreadyDecided { .. })),
                        "{e:?}"
                    );
                    e.to_string()
                });
                app.on_write_result(r);
                (app, said)
            })
        };
        let a = tui(app_a, req_a);
        let b = tui(app_b, req_b);
        let cli = w
            .command(&["decide", &id, "approve", "--reason", &reasons[2]])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        go.wait();
        let (app_a, ra) = a.join().unwrap();
        let (app_b, rb) = b.join().unwrap();
        let cli = cli.wait_with_output().unwrap();

        let recorded = decisions(&p, &id);
        assert_eq!(recorded.len(), 1, "round {round}: {recorded:?}");
        let (decision, reason, by) = &recorded[0];
        let winner = reasons
            .iter()
            .position(|r| r == reason)
            .expect("a known reason");
        let refusal = format!("{id} was already decided: {decision} by {by} at ");
        let named = |msg: &str| msg.contains(&refusal) && msg.ends_with(&format!("({reason})"));
        for (i, (r, app)) in [(ra, app_a), (rb, app_b)].into_iter().enumerate() {
            if i == winner {
                assert_eq!(r, Ok(()));
                assert!(app.dialog().is_none());
            } else {
                let msg = r.unwrap_err();
                assert!(named(&msg), "round {round}: {msg}");
                assert_eq!(failed(&app), Some(msg));
            }
        }
        let stderr = String::from_utf8_lossy(&cli.stderr);
        if winner == 2 {
            assert!(String::from_utf8_lossy(&cli.stdout).contains("decision saved"));
        } else {
            assert_eq!(cli.status.code(), Some(2), "round {round}: {stderr}");
            assert!(named(stderr.trim_end()), "round {round}: {stderr}");
        }
        match winner {
            0 => by_a += 1,
            1 => by_b += 1,
            _ => by_cli += 1,
        }
    }
    assert!(!journal_clean(&p));
    let contract = std::fs::read_to_string(w.root.join(CONTRACT)).unwrap();
    let approvals = by_a + by_cli;
    assert_eq!(contract.matches("[gated ").count(), approvals, "{contract}");
    eprintln!("50 three-way races: tui-a won {by_a}, tui-b {by_b}, cli {by_cli}");
}

#[test]
fn a_partial_line_left_by_a_crashed_writer_is_repaired_by_the_next_decision() {
    let w = Worktree::new();
    w.start_run();
    let id = w.ask_out_of_scope(SUBJECT);
    let p = w.pipeline();
    let before = std::fs::read(p.journal_path()).unwrap();
    let torn = b"{\"v\":1,\"seq\":4,\"at\":\"2026-11-02T10:00:00Z\",\"type\":\"human.dec";
    std::fs::OpenOptions::new()
        .append(true)
        .open(p.journal_path())
        .unwrap()
        .write_all(torn)
        .unwrap();
    assert!(
        journal_clean(&p),
        "the torn line reads as partial, not as a problem"
    );
    let out = w.output(&["decide", &id, "deny", "--reason", "after a crash"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("decision saved"),
        "{out:?}"
    );
    let after = std::fs::read(p.journal_path()).unwrap();
    assert!(after.starts_with(&before) && !after[before.len()..].starts_with(torn));
    assert!(!journal_clean(&p));
    assert_eq!(
        decisions(&p, &id),
        vec![(
            "deny".into(),
            "after a crash".into(),
            format!("hardening@{}", host())
        )]
    );
}

fn host() -> String {
    let user_at_host = loopwatch::util::user_at_host();
    user_at_host
        .split_once('@')
        .map(|(_, h)| h.to_string())
        .unwrap_or_default()
}
