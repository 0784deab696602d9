//! Opening a decision dialog whose evidence is a 5,000-line hunk: the time
//! from the Enter key on the gate to the first frame drawn (the evidence
//! lines built and sanitised, their hash, the dialog drawn at 160x48), and
//! of one scroll step with its frame. Target: opening under 50 ms.
//!
//! Run with `cargo bench --bench gate_dialog`; prints the median and worst
//! of 15 runs and exits 1 when the target is missed.

mod common;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use common::{ms, percentile};
use loopwatch::model::{EventBody, HumanGateKind};
use loopwatch::tui::testkit::{PAST_GUARD, app_with, ch, ev, key, request, run_started};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::KeyCode;

const LINES: usize = 5_000;
const RUNS: usize = 15;
const TARGET: Duration = Duration::from_millis(50);

fn main() -> ExitCode {
    let mut code = vec![
        "--- a/src/big.rs".to_string(),
        "+++ b/src/big.rs".into(),
        format!("@@ -1,0 +1,{LINES} @@"),
    ];
    code.extend((0..LINES).map(|i| format!("+    let value_{i} = compute({i}, \"some text\");")));
    let events = vec![
        ev(1, run_started()),
        ev(
            2,
            EventBody::IterationStarted {
                iteration: 1,
                trigger: "initial".into(),
            },
        ),
        ev(
            3,
            request(
                "hg-1-conformity-1",
                HumanGateKind::OutOfScope,
                serde_json::json!({"paths": ["src/big.rs"], "code": code}),
            ),
        ),
    ];
    let mut open = Vec::new();
    let mut scroll = Vec::new();
    for _ in 0..RUNS {
        let (mut app, clock) = app_with(&events);
        let mut term = Terminal::new(TestBackend::new(160, 48)).expect("test backend");
        app.on_key(&ch('4'));
        let t = Instant::now();
        app.on_key(&key(KeyCode::Enter));
        term.draw(|f| loopwatch::tui::view::render(f, &app))
            .expect("draw");
        open.push(t.elapsed());
        assert!(
            app.dialog().is_some_and(|d| d.evidence.len() > LINES),
            "the dialog holds the hunk"
        );
        clock.advance(PAST_GUARD);
        let t = Instant::now();
        app.on_key(&key(KeyCode::PageDown));
        term.draw(|f| loopwatch::tui::view::render(f, &app))
            .expect("draw");
        scroll.push(t.elapsed());
    }
    let (open_median, open_worst) = (percentile(&mut open, 50.0), percentile(&mut open, 100.0));
    let (scroll_median, scroll_worst) = (
        percentile(&mut scroll, 50.0),
        percentile(&mut scroll, 100.0),
    );
    println!(
        "open a dialog with a {LINES}-line hunk: median {} worst {} (target < {})",
        ms(open_median),
        ms(open_worst),
        ms(TARGET)
    );
    println!(
        "scroll a page with its frame:         median {} worst {}",
        ms(scroll_median),
        ms(scroll_worst)
    );
    if open_median < TARGET {
        ExitCode::SUCCESS
    } else {
        println!("target missed");
        ExitCode::FAILURE
    }
}
