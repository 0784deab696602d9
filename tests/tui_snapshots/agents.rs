//! The agents of `loopwatch run` on screen: the running one in the header
//! with its elapsed time from the injected clock, and the tokens and cost
//! in the Gates tab (an unknown cost reads `$?`, never `$0`).

use super::*;

/// The full run, then three dispatches: a priced developer, an unpriced
/// verifier, and an auditor still running since 08:43:55.
fn with_agents(finish_auditor: bool) -> Vec<Event> {
    let mut evs = events("full-run.events.jsonl");
    let mut lines = vec![
        r#"{"v":1,"seq":24,"at":"2026-12-01T08:43:30Z","type":"agent.started","dispatch":1,"role":"developer","iteration":2,"adapter":"claude","pid":41,"pgid":41,"inputSha256":"sha256:00","log":"agents/1-developer.log"}"#,
        r#"{"v":1,"seq":25,"at":"2026-12-01T08:43:40Z","type":"agent.finished","dispatch":1,"role":"developer","exitCode":0,"durationMs":10000,"tokensIn":12300,"tokensOut":4500,"costUsd":0.0123}"#,
        r#"{"v":1,"seq":26,"at":"2026-12-01T08:43:41Z","type":"agent.started","dispatch":2,"role":"verifier","iteration":2,"gate":"conformity","round":2,"adapter":"generic","pid":42,"pgid":42,"inputSha256":"sha256:01","log":"agents/2-verifier.log"}"#,
        r#"{"v":1,"seq":27,"at":"2026-12-01T08:43:50Z","type":"agent.finished","dispatch":2,"role":"verifier","exitCode":0,"durationMs":9000,"tokensIn":800,"tokensOut":90,"costUsd":null}"#,
        r#"{"v":1,"seq":28,"at":"2026-12-01T08:43:55Z","type":"agent.started","dispatch":3,"role":"auditor","iteration":2,"gate":"security","round":2,"adapter":"claude","pid":43,"pgid":43,"inputSha256":"sha256:02","log":"agents/3-auditor.log"}"#,
    ];
    if finish_auditor {
        lines.push(r#"{"v":1,"seq":29,"at":"2026-12-01T08:44:30Z","type":"agent.finished","dispatch":3,"role":"auditor","exitCode":0,"durationMs":35000,"tokensIn":2000,"tokensOut":100,"costUsd":0.002}"#);
    }
    evs.extend(
        lines
            .into_iter()
            .map(|l| Event::parse_line(l.as_bytes()).expect("valid agent event")),
    );
    evs
}

fn header_line(a: &App) -> String {
    let buf = draw(a, 160, 24);
    (0..160)
        .map(|x| buf[(x, 1)].symbol().to_string())
        .collect::<String>()
}

#[test]
fn header_and_gates_tab_with_agents() {
    snap("agents_gates", |t| {
        let (mut a, _clock) = app(t, &with_agents(false));
        press(&mut a, "4");
        assert_eq!(a.tab(), Tab::Gates);
        a
    });
}

#[test]
fn the_running_agent_is_timed_by_the_clock_and_leaves_when_it_finishes() {
    let (a, clock) = app(ThemeKind::NoColor, &with_agents(false));
    let line = header_line(&a);
    assert_has(&line, "▶ auditor · GATE 2 round 2 · iter 2 · #3 · 1m05s");
    clock.advance(Duration::from_secs(3600));
    assert_has(&header_line(&a), "#3 · 1h01m");

    let (a, _clock) = app(ThemeKind::NoColor, &with_agents(true));
    assert!(!header_line(&a).contains('▶'), "{}", header_line(&a));
}

#[test]
fn an_unknown_cost_is_never_shown_as_zero() {
    let evs = with_agents(false);
    // The verifier alone: its cost is unknown.
    let only_verifier: Vec<Event> = evs
        .iter()
        .filter(|e| e.seq < 24 || e.seq == 26 || e.seq == 27)
        .cloned()
        .collect();
    let (mut a, _clock) = app(ThemeKind::NoColor, &only_verifier);
    press(&mut a, "4");
    let buf = draw(&a, 160, 24);
    let text = frame_text(&buf);
    assert_has(&text, "GATE 1: 800 in / 90 out · $?");
    assert!(!text.contains("$0"), "{text}");
}

#[test]
fn the_running_agents_log_comes_first_and_is_followed_as_it_grows() {
    use loopwatch::tui::Effect;
    let log = std::path::Path::new("/work/proj/.pipeline/agents/3-auditor.log");
    let (mut a, _clock) = app(ThemeKind::NoColor, &with_agents(false));
    // Not followed outside the Logs tab.
    assert_eq!(a.on_tick(), vec![]);
    press(&mut a, "6");
    let text = frame_text(&draw(&a, 160, 48));
    let first = text
        .lines()
        .find(|l| l.starts_with('›'))
        .expect("a selected row");
    assert!(
        first.contains("agents/3-auditor.log")
            && first.contains("iter 2 agent #3 auditor GATE 2 round 2 · running"),
        "{text}"
    );
    let developer = text.find("agents/1-developer.log").expect("listed");
    assert!(text.find("agents/2-verifier.log").expect("listed") < developer);

    assert_eq!(a.on_tick(), vec![Effect::LoadLog(log.to_path_buf())]);
    // One read at a time.
    assert_eq!(a.on_tick(), vec![]);
    a.on_log_loaded(log, Ok(b"reading src/\n\x1b[31mstep one\x1b[0m\n".to_vec()));
    let text = frame_text(&draw(&a, 160, 48));
    assert_has(&text, "step one");
    assert!(!text.contains('\u{1b}'), "{text}");
    // The next tick reads it again: what was appended shows.
    assert_eq!(a.on_tick(), vec![Effect::LoadLog(log.to_path_buf())]);
    a.on_log_loaded(
        log,
        Ok(b"reading src/\nstep one\nstep two: report.rs\n".to_vec()),
    );
    assert!(frame_text(&draw(&a, 160, 48)).contains("step two: report.rs"));

    // Once it finished, nothing is followed.
    let (mut done, _clock) = app(ThemeKind::NoColor, &with_agents(true));
    press(&mut done, "6");
    assert_eq!(done.on_tick(), vec![]);
}

/// [`with_agents`] finished, the verifier driven by Codex (the developer
/// and the auditor by Claude Code).
fn with_clis() -> Vec<Event> {
    with_agents(true)
        .into_iter()
        .map(|e| {
            let line = e
                .to_line()
                .replace("\"adapter\":\"generic\"", "\"adapter\":\"codex\"");
            Event::parse_line(line.as_bytes()).expect("valid event")
        })
        .collect()
}

/// The Logs tab with row `down` selected and its log read from the
/// recorded session `fixture`.
fn logs_with(theme: ThemeKind, down: usize, rel: &str, fixture: &str) -> App {
    let (mut a, _clock) = app(theme, &with_clis());
    press(&mut a, "6");
    press(&mut a, &"j".repeat(down));
    let _ = a.on_key(&KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    let bytes = std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/engine")
            .join(fixture),
    )
    .expect("a recorded session");
    a.on_log_loaded(&PathBuf::from("/work/proj/.pipeline").join(rel), Ok(bytes));
    a
}

#[test]
fn a_claude_log_reads_as_a_transcript() {
    snap("logs_claude_transcript", |t| {
        logs_with(
            t,
            0,
            "agents/3-auditor.log",
            "claude-verifier-refused.jsonl",
        )
    });
}

#[test]
fn a_codex_log_reads_as_a_transcript() {
    snap("logs_codex_transcript", |t| {
        logs_with(t, 1, "agents/2-verifier.log", "codex-verifier.jsonl")
    });
    // Every tool call on one line, its result shortened, no raw JSON.
    let a = logs_with(
        ThemeKind::NoColor,
        1,
        "agents/2-verifier.log",
        "codex-verifier.jsonl",
    );
    let text = frame_text(&draw(&a, 160, 48));
    assert!(
        text.contains("→ $ cargo test --offline -q\n  ← exit 0 · running 1 test… ("),
        "{text}"
    );
    assert_has(&text, "■ turn completed · 200 in / 40 out");
    assert!(!text.contains("{\"type\""), "{text}");
}

#[test]
fn o_opens_the_selected_log_whole_in_the_pager() {
    use loopwatch::parse::agent_stream::Format;
    use loopwatch::tui::Effect;
    use loopwatch::tui::pager::PagerRequest;
    let (mut a, _clock) = app(ThemeKind::NoColor, &with_clis());
    // Not a log: said so.
    assert_eq!(type_text(&mut a, "o"), vec![]);
    assert!(frame_text(&draw(&a, 80, 24)).contains("o shows a log: select one on the Logs tab"));
    press(&mut a, "6j");
    assert_eq!(
        type_text(&mut a, "o"),
        vec![Effect::OpenPager(PagerRequest {
            pipeline: PathBuf::from("/work/proj/.pipeline"),
            rel: "agents/2-verifier.log".into(),
            format: Some(Format::CodexJson),
        })]
    );
    a.on_pager_closed("agents/2-verifier.log closed".into());
    assert!(frame_text(&draw(&a, 80, 24)).contains("agents/2-verifier.log closed"));
}

#[test]
fn the_header_keeps_what_matters_at_80_columns() {
    snap("header_narrow", |t| {
        let (a, clock) = app(t, &with_agents(false));
        // No event for 11 minutes: the stale warning.
        clock.advance(Duration::from_secs(11 * 60));
        a
    });
    let (a, clock) = app(ThemeKind::NoColor, &with_agents(false));
    clock.advance(Duration::from_secs(11 * 60));
    let buf = draw(&a, 80, 24);
    let line: String = (0..80).map(|x| buf[(x, 1)].symbol().to_string()).collect();
    for must in ["⚑ WAITING ON YOU", "▶ auditor #3", "⚠ ", "⚑ 1"] {
        assert!(line.contains(must), "{must} missing at 80 columns: {line}");
    }
    assert!(!line.trim_end().ends_with('…'), "{line}");
    // With room, everything in full.
    let buf = draw(&a, 200, 24);
    let wide: String = (0..200).map(|x| buf[(x, 1)].symbol().to_string()).collect();
    assert_has(&wide, "▶ auditor · GATE 2 round 2 · iter 2 · #3 · ");
    assert_has(&wide, "⚑ 1 waiting on you (n)");
}

/// [`with_agents`] finished, started with a budget whose dollar limit the
/// developer's and the auditor's dispatches reached, and the `budget` gate
/// that opened before the next dispatch.
fn with_budget() -> Vec<Event> {
    let mut evs: Vec<Event> = with_agents(true)
        .into_iter()
        .map(|e| {
            if e.seq != 1 {
                return e;
            }
            let line = e.to_line().replace(
                "\"worktree\":\".\"",
                "\"worktree\":\".\",\"budget\":{\"usd\":0.0143,\"wall\":3600,\"developer.tokens\":20000}",
            );
            Event::parse_line(line.as_bytes()).expect("a run with a budget")
        })
        .collect();
    evs.push(
        Event::parse_line(br#"{"v":1,"seq":30,"at":"2026-12-01T08:44:31Z","type":"human.requested","id":"hg-2-budget-1","kind":"budget","iteration":2,"subject":"usd","summary":"budget usd: spent $0.0143+? of $0.0143: the next dispatch (developer) waits for a person (raise adds $0.0143)","options":["raise","stop"],"evidence":{"key":"usd","spent":"$0.0143+?","limit":"$0.0143","raiseBy":"$0.0143"}}"#)
            .expect("a budget gate"),
    );
    evs
}

#[test]
fn the_gates_tab_shows_the_budget_and_the_rounds() {
    snap("gates_budget", |t| {
        let (mut a, _clock) = app(t, &with_budget());
        press(&mut a, "4");
        assert_eq!(a.tab(), Tab::Gates);
        a
    });
    let (mut a, _clock) = app(ThemeKind::NoColor, &with_budget());
    press(&mut a, "4");
    let text = frame_text(&draw(&a, 160, 48));
    // Spent / limit, the unknown cost never zero.
    assert!(
        text.contains("budget · usd $0.0143+? / $0.0143 · wall 54s / 1h 0m · developer.tokens 16800 tokens / 20000 tokens"),
        "{text}"
    );
    // The header: spent / limit (the first limit when the line is full).
    let header = text.lines().nth(1).unwrap_or_default();
    assert_has(header, "usd $0.0143+? / $0.0143");
    // Each gate's failing rows per round, and what each round spent.
    assert_has(
        &text,
        "GATE 0: 1 → 0 ABANDONED(1) · fixed 1 · new 0 · spend no agent → $0.0123",
    );
}

#[test]
fn a_usage_limit_nobody_answered_yet_shows_waiting_with_its_time() {
    let mut evs = with_agents(true);
    evs.push(
        Event::parse_line(br#"{"v":1,"seq":30,"at":"2026-12-01T08:44:31Z","type":"agent.started","dispatch":4,"role":"verifier","iteration":2,"gate":"conformity","round":3,"adapter":"claude","pid":44,"pgid":44,"inputSha256":"sha256:03","log":"agents/4-verifier.log"}"#)
            .expect("a start"),
    );
    evs.push(
        Event::parse_line(r#"{"v":1,"seq":31,"at":"2026-12-01T08:44:40Z","type":"agent.limited","dispatch":4,"role":"verifier","until":"2026-12-01T09:30:00Z","message":"You've hit your limit · resets 9:30am (UTC)"}"#.as_bytes())
            .expect("a limit"),
    );
    evs.push(
        Event::parse_line(br#"{"v":1,"seq":32,"at":"2026-12-01T08:44:40Z","type":"agent.finished","dispatch":4,"role":"verifier","exitCode":1,"durationMs":900,"costUsd":null,"error":"usage limit reached: You've hit your limit"}"#)
            .expect("a finish"),
    );
    let (a, _clock) = app(ThemeKind::NoColor, &evs);
    let line = header_line(&a);
    assert_has(&line, "⏸ verifier #4 usage limit · waiting until 09:30");
    // The timeline says it too.
    let limited = evs.iter().find(|e| e.seq == 31).expect("the limit");
    let (said, _) = loopwatch::tui::rows::timeline::summary(limited);
    assert_eq!(
        said,
        "verifier #4 hit a usage limit (resets 2026-12-01T09:30:00Z): You've hit your limit · resets 9:30am (UTC)"
    );
}
