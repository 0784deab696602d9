//! Every screen at sizes from 1x1 to 300x100: drawing never panics.

use super::*;

fn screens() -> Vec<App> {
    let evs = events("full-run.events.jsonl");
    let mut out = Vec::new();
    for tab in 1..=6 {
        let (mut a, _) = app(ThemeKind::Dark, &evs);
        press(&mut a, &format!("{tab}j"));
        out.push(a);
    }
    let (mut help, _) = app(ThemeKind::Dark, &evs);
    press(&mut help, "?");
    out.push(help);
    let (mut diff, _) = app(ThemeKind::Dark, &evs);
    press(&mut diff, "d");
    out.push(diff);
    let (mut dialog, clock) = app(ThemeKind::Dark, &evs);
    open_dialog(&mut dialog, &clock);
    press(&mut dialog, "lreason");
    out.push(dialog);
    let (mut runs, _) = app(ThemeKind::Dark, &[]);
    runs.set_runs(vec!["/a".into(), "/b".into()]);
    let _ = runs.on_run_state(1, fold(evs.iter()), &evs);
    out.push(runs);
    let (mut empty, _) = app(ThemeKind::Dark, &[]);
    empty.set_looking_in(Some("/nowhere".into()));
    out.push(empty);
    let (mut replay, _) = app(ThemeKind::Dark, &evs);
    replay.set_replay(Some(ReplayBar {
        event: 1,
        total: 23,
        at: "x".into(),
        iteration: 1,
    }));
    replay.set_problem(Some(Problem {
        file: "e".into(),
        line: None,
        column: None,
        message: "m".into(),
        partial_since: None,
    }));
    out.push(replay);
    out
}

#[test]
fn any_size_from_1x1_to_300x100_draws() {
    let widths = [
        1u16, 2, 3, 5, 8, 13, 20, 21, 40, 79, 80, 81, 99, 100, 120, 159, 160, 200, 300,
    ];
    let heights = [1u16, 2, 3, 4, 5, 6, 8, 12, 23, 24, 25, 48, 100];
    for app in screens() {
        for w in widths {
            for h in heights {
                let buf = draw(&app, w, h);
                assert_eq!((buf.area.width, buf.area.height), (w, h));
            }
        }
    }
}

#[test]
fn shrinking_step_by_step_draws() {
    let screens = screens();
    let mut term = Terminal::new(TestBackend::new(300, 100)).expect("backend");
    for (w, h) in (1..=300u16)
        .rev()
        .step_by(13)
        .zip((1..=100u16).rev().step_by(4).chain(std::iter::repeat(1)))
    {
        term.backend_mut().resize(w, h);
        for app in &screens {
            term.draw(|f| render(f, app)).expect("draw");
        }
    }
}
