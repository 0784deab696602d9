//! The event loop: one channel of inputs (file changes, keys, paste,
//! resize, a 1 s tick for the age counter, results of background writes),
//! drained whole, then one frame. Effects the app asks for are performed
//! here, off the drawing path: decisions are written on a blocking thread
//! and their result comes back as an input.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

use std::sync::atomic::Ordering;

use ratatui::crossterm::event::{Event as TermEvent, KeyCode, KeyEventKind, KeyModifiers};
use tokio::signal::unix::{SignalKind, signal};

use super::app::App;
use super::config::Config;
use super::effect::Effect;
use super::input::Keys;
use super::looked;
use super::terminal::{self, TerminalGuard};
use super::{SystemClock, view};
use crate::journal::Pipeline;
use crate::watch::discover::Discovery;
use crate::watch::{Batch, Live};

use super::controller::{Controller, Ui};
pub use super::replay::{ReplayStart, move_target, show_position, start_position};

/// Opens the live view on these pipelines.
pub fn run_live(pipelines: Vec<Pipeline>) -> anyhow::Result<ExitCode> {
    run(pipelines, None, None, false)
}

/// Opens the run list on these pipelines and those `search` finds (now and
/// while watching).
pub fn run_fleet(pipelines: Vec<Pipeline>, search: Discovery) -> anyhow::Result<ExitCode> {
    run(pipelines, Some(search), None, false)
}

/// Opens the live view on a run whose engine runs in this process: leaving
/// stops it, so `q` asks first.
pub fn run_live_engine(pipeline: Pipeline) -> anyhow::Result<ExitCode> {
    run(vec![pipeline], None, None, true)
}

/// Opens the replay of one pipeline.
pub fn run_replay(pipeline: Pipeline, start: ReplayStart) -> anyhow::Result<ExitCode> {
    run(vec![pipeline], None, Some(start), false)
}

fn run(
    pipelines: Vec<Pipeline>,
    search: Option<Discovery>,
    replay: Option<ReplayStart>,
    owns_engine: bool,
) -> anyhow::Result<ExitCode> {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        anyhow::bail!(
            "the TUI needs a terminal (for scripts use `loopwatch watch --headless`, `loopwatch status`)"
        );
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let replaying = replay.is_some();
        let (mut app, mut live, mut ctl) = open(pipelines, search, replay, owns_engine)?;
        let mut test_panic = render_panics_for_tests();
        let (_guard, mut term) = TerminalGuard::enter(false)?;
        let mut keys = spawn_inputs(&live);
        term.draw(|f| view::render(f, &app))?;
        let mut title = String::new();
        let mut armed_wake: Option<jiff::Timestamp> = None;
        set_title(&app, &mut title);
        if !replaying {
            ctl.send_due_notices(&live);
        }
        while let Some(batch) = live.next_batch().await {
            let (redraw, others) = take_batch(&mut app, &mut live, &mut ctl, batch);
            let mut asked = Asked::default();
            for input in others {
                let effects = on_input(&mut app, input, &mut asked)?;
                perform(
                    &mut app, &mut live, &mut ctl, &mut keys, effects, &mut asked,
                )
                .await?;
            }
            if asked.quit {
                break;
            }
            if !replaying {
                ctl.send_due_notices(&live);
            }
            if asked.full_redraw {
                // Clear by "resizing" to the current size, not `Terminal::clear`:
                // that one asks the terminal where the cursor is, and after a
                // resume the answer could be lost to the key reader, ending the
                // TUI with "the cursor position could not be read".
                let size = term.size()?;
                term.resize(size.into())?;
                title.clear();
            }
            wake_when_armed(&app, &live, &mut armed_wake);
            if !redraw && !asked.full_redraw {
                continue;
            }
            // The terminal may be gone (closed pty): stop instead of spinning.
            let panic_now = std::mem::take(&mut test_panic);
            if term.draw(|f| draw(f, &app, panic_now)).is_err() {
                break;
            }
            set_title(&app, &mut title);
        }
        if !replaying {
            let dirs: Vec<std::path::PathBuf> = live
                .feeds()
                .iter()
                .map(|f| f.pipeline().dir().to_path_buf())
                .collect();
            looked::save(&dirs, &app.looked_marks());
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// The app, its live loop and its controller on `pipelines` (and what
/// `search` finds), read once; in replay at `replay`, else with the digest
/// of what happened since the last look.
fn open(
    pipelines: Vec<Pipeline>,
    search: Option<Discovery>,
    replay: Option<ReplayStart>,
    owns_engine: bool,
) -> anyhow::Result<(App, Live<Ui>, Controller)> {
    let config = load_config();
    let theme = config.theme.resolve(
        std::env::var("NO_COLOR").ok().as_deref(),
        std::env::var("COLORFGBG").ok().as_deref(),
    );
    let mut app = App::new(
        config,
        theme,
        Box::new(SystemClock),
        pipelines
            .first()
            .map(|p| p.dir().to_path_buf())
            .unwrap_or_default(),
    );
    app.set_owns_engine(owns_engine);
    let mut live: Live<Ui> = Live::start(pipelines.clone());
    let fleet = search.is_some();
    if let Some(d) = search {
        let roots = d.roots().to_vec();
        live.start_search(d);
        app.set_fleet(roots);
        for f in live.feeds() {
            app.add_run(f.pipeline().dir().to_path_buf());
        }
    } else if pipelines.len() > 1 {
        app.set_runs(pipelines.iter().map(|p| p.dir().to_path_buf()).collect());
    }
    let pipelines: Vec<Pipeline> = live.feeds().iter().map(|f| f.pipeline().clone()).collect();
    let notifier = crate::notify::Notifier {
        hook: app.config.shared.on_human_gate.clone(),
        settings: app.config.shared.notify.clone(),
    };
    let mut ctl = Controller::new(pipelines.clone(), notifier);
    if fleet || pipelines.len() > 1 {
        ctl.show_how(&mut app, &live);
    }
    let initial = live.refresh_all();
    ctl.apply_updates(&mut app, &mut live, initial, true);
    match replay {
        // Replay reads nothing of its own: it is a position in what the
        // live feed has just read.
        Some(start) => ctl.enter_replay(&mut app, &mut live, start)?,
        None => {
            let marks: Vec<Option<u64>> = pipelines.iter().map(|p| looked::read(p.dir())).collect();
            app.digest_since_last_look(&marks);
        }
    }
    Ok((app, live, ctl))
}

/// Applies a batch's updates and runs added; whether a frame is due, and
/// the batch's other inputs.
fn take_batch(
    app: &mut App,
    live: &mut Live<Ui>,
    ctl: &mut Controller,
    batch: Batch<Ui>,
) -> (bool, Vec<Ui>) {
    let Batch {
        updates,
        others,
        errors,
        added,
    } = batch;
    if !errors.is_empty() {
        tracing::warn!(?errors, "watcher errors");
    }
    // A frame only when something on screen may have changed: a
    // state, a run added, an input other than the tick, or the tick
    // while the screen shows a clock (ages, elapsed times).
    let mut redraw = !added.is_empty()
        || updates.iter().any(|(_, u)| u.changed)
        || others.iter().any(|o| !matches!(o, Ui::Tick))
        || (!others.is_empty() && app.shows_clock());
    if !added.is_empty() || ctl.search_problems_changed(live) {
        ctl.add_runs(app, live, &added);
        redraw = true;
    }
    ctl.apply_updates(app, live, updates, false);
    (redraw, others)
}

/// What the inputs of a batch asked of the loop besides their effects.
#[derive(Debug, Default)]
struct Asked {
    /// Leave.
    quit: bool,
    /// Draw the whole screen again (after a resize, a resume, the pager).
    full_redraw: bool,
}

/// Hands one input to the app; the effects it asks for.
fn on_input(app: &mut App, input: Ui, asked: &mut Asked) -> anyhow::Result<Vec<Effect>> {
    Ok(match input {
        Ui::Term(TermEvent::Key(k)) if k.kind != KeyEventKind::Release => {
            if k.code == KeyCode::Char('z') && k.modifiers.contains(KeyModifiers::CONTROL) {
                terminal::suspend(false)?;
                asked.full_redraw = true;
                Vec::new()
            } else {
                app.on_key(&k)
            }
        }
        Ui::Term(TermEvent::Paste(text)) => {
            app.on_paste(&text);
            Vec::new()
        }
        Ui::Term(TermEvent::Resize(w, h)) => {
            app.on_resize(w, h);
            asked.full_redraw = true;
            Vec::new()
        }
        Ui::Term(TermEvent::FocusLost) => {
            app.on_focus_lost();
            Vec::new()
        }
        Ui::Term(TermEvent::FocusGained) => {
            app.on_focus_gained();
            Vec::new()
        }
        Ui::Tick => app.on_tick(),
        Ui::Redraw => Vec::new(),
        Ui::Term(_) => Vec::new(),
        Ui::TermClosed | Ui::Quit => {
            asked.quit = true;
            Vec::new()
        }
        Ui::WriteDone(r) => {
            app.on_write_result(r);
            Vec::new()
        }
        Ui::LogLoaded(p, r) => {
            app.on_log_loaded(&p, r);
            Vec::new()
        }
        Ui::Notified(id, r) => {
            app.on_notified(&id, r);
            Vec::new()
        }
        Ui::CodeLoaded(from, to, r) => {
            app.on_code_loaded(from, to, r);
            Vec::new()
        }
        Ui::EvidenceChecked(id, against, apply, r) => {
            app.on_evidence_checked(&id, &against, apply, r);
            Vec::new()
        }
    })
}

/// Performs the effects the app asked for: the pager here (it takes the
/// terminal), the rest through the controller.
async fn perform(
    app: &mut App,
    live: &mut Live<Ui>,
    ctl: &mut Controller,
    keys: &mut Keys,
    effects: Vec<Effect>,
    asked: &mut Asked,
) -> anyhow::Result<()> {
    for e in effects {
        match e {
            Effect::OpenPager(req) => {
                let status = page(keys, req).await?;
                app.on_pager_closed(status);
                asked.full_redraw = true;
            }
            e => {
                if ctl.perform(app, live, e) {
                    asked.quit = true;
                }
            }
        }
    }
    Ok(())
}

/// A dialog whose keys do not count yet is drawn again the moment they do
/// (one wake per opening).
fn wake_when_armed(app: &App, live: &Live<Ui>, armed_wake: &mut Option<jiff::Timestamp>) {
    if let Some(at) = app.dialog_arms_at()
        && *armed_wake != Some(at)
    {
        *armed_wake = Some(at);
        let wait = jiff::Timestamp::now().duration_until(at);
        let wait = Duration::try_from(wait).unwrap_or_default();
        let tx = live.sender();
        tokio::spawn(async move {
            tokio::time::sleep(wait).await;
            let _ = tx.send(crate::watch::Input::Other(Ui::Redraw));
        });
    }
}

/// Writes the window title when it changed (the waiting count, the run).
fn set_title(app: &App, last: &mut String) {
    use std::io::Write;
    let now = app.title();
    if now != *last {
        let mut out = std::io::stdout();
        let _ = out
            .write_all(&crate::notify::terminal::set_title(&now))
            .and_then(|()| out.flush());
        *last = now;
    }
}

/// Draws one frame of the loop.
fn draw(frame: &mut ratatui::Frame, app: &App, test_panic: bool) {
    if test_panic {
        panic!("LOOPWATCH_TEST_PANIC=render: a test-only panic inside rendering");
    }
    view::render(frame, app);
}

/// Test-only, not a feature: with `LOOPWATCH_TEST_PANIC=render` in the
/// environment (read once, at start) the second frame panics inside
/// rendering, so the end-to-end tests can check that a panic restores the
/// terminal exactly once before its message is printed.
fn render_panics_for_tests() -> bool {
    std::env::var_os("LOOPWATCH_TEST_PANIC").is_some_and(|v| v == "render")
}

fn load_config() -> Config {
    Config::load_user().unwrap_or_else(|e| {
        let mut c = Config::default();
        c.warnings.push(format!("{e} (defaults in use)"));
        c
    })
}

/// Starts the tasks that feed the loop: terminal events, the 1 s tick,
/// signals; the handle of the key reader.
fn spawn_inputs(live: &Live<Ui>) -> Keys {
    let keys = Keys::spawn(live);
    // A pty closed under the TUI shows only as a hangup on stdin (the
    // terminal events reader does not end on it): watch for it apart.
    let tx = live.sender();
    std::thread::spawn(move || {
        if wait_for_hangup() {
            let _ = tx.send(crate::watch::Input::Other(Ui::TermClosed));
        }
    });
    let tx = live.sender();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tick.tick().await;
            if tx.send(crate::watch::Input::Other(Ui::Tick)).is_err() {
                break;
            }
        }
    });
    for kind in [
        SignalKind::terminate(),
        SignalKind::hangup(),
        SignalKind::interrupt(),
    ] {
        let tx = live.sender();
        let away = keys.away();
        if let Ok(mut sig) = signal(kind) {
            tokio::spawn(async move {
                while sig.recv().await.is_some() {
                    // A Ctrl-C typed in the pager is the pager's.
                    if kind == SignalKind::interrupt() && away.load(Ordering::SeqCst) {
                        continue;
                    }
                    let _ = tx.send(crate::watch::Input::Other(Ui::Quit));
                    break;
                }
            });
        }
    }
    keys
}

/// `o`: the TUI steps aside (keys, screen) for the pager, then comes back;
/// what the status line says after.
async fn page(keys: &mut Keys, req: crate::tui::pager::PagerRequest) -> std::io::Result<String> {
    keys.step_aside().await;
    terminal::restore();
    let pager = std::env::var("PAGER").ok();
    // Waited for off the loop's thread: an engine in this process goes on.
    let status =
        tokio::task::spawn_blocking(move || crate::tui::pager::open(&req, pager.as_deref()))
            .await
            .unwrap_or_else(|e| format!("the pager did not finish: {e}"));
    let back = terminal::take_back(false);
    keys.resume();
    back.map(|()| status)
}

/// Blocks until the terminal on stdin hangs up (true), or polling it fails
/// (false). Polling for no event at all wakes only on a hangup or an error.
fn wait_for_hangup() -> bool {
    use rustix::event::{PollFd, PollFlags, poll};
    let stdin = std::io::stdin();
    loop {
        let mut fds = [PollFd::new(&stdin, PollFlags::empty())];
        match poll(&mut fds, None) {
            Ok(_)
                if fds[0]
                    .revents()
                    .intersects(PollFlags::HUP | PollFlags::ERR | PollFlags::NVAL) =>
            {
                return true;
            }
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(_) => return false,
        }
    }
}
