//! The one terminal guard: raw mode, alternate screen, bracketed paste and
//! focus events on (mouse reporting only when asked for: the TUI asks for
//! none, so the terminal's own text selection keeps working), the window
//! title saved; everything restored exactly once on drop, on panic (before
//! the previous hook prints), on SIGTERM/SIGHUP/SIGINT and around a Ctrl-Z
//! suspend.

use std::io::{self, Stdout, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, DisableMouseCapture, EnableBracketedPaste,
    EnableFocusChange, EnableMouseCapture,
};
use ratatui::crossterm::terminal::{self, EnterAlternateScreen, LeaveAlternateScreen};
use ratatui::crossterm::{cursor, execute};

/// The terminal type the TUI draws on.
pub type Tui = Terminal<CrosstermBackend<Stdout>>;

static ACTIVE: AtomicBool = AtomicBool::new(false);
static HOOK: Mutex<bool> = Mutex::new(false);

/// Holds the terminal in TUI mode; restores it when dropped.
#[derive(Debug)]
pub struct TerminalGuard {
    _private: (),
}

impl TerminalGuard {
    /// Puts the terminal in TUI mode and returns the guard and a terminal to draw on.
    pub fn enter(mouse: bool) -> io::Result<(TerminalGuard, Tui)> {
        install_panic_hook();
        setup(mouse)?;
        let terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
        Ok((TerminalGuard { _private: () }, terminal))
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

fn setup(mouse: bool) -> io::Result<()> {
    terminal::enable_raw_mode()?;
    let mut out = io::stdout();
    // The title stack keeps the title the terminal had: restored on exit.
    out.write_all(crate::notify::terminal::PUSH_TITLE)?;
    execute!(
        out,
        EnterAlternateScreen,
        EnableBracketedPaste,
        EnableFocusChange,
        cursor::Hide
    )?;
    if mouse {
        execute!(out, EnableMouseCapture)?;
    }
    ACTIVE.store(true, Ordering::SeqCst);
    Ok(())
}

/// Restores the terminal if it is in TUI mode; does nothing the second time.
pub fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let mut out = io::stdout();
        // Best effort: the terminal may already be gone (closed pty).
        let _ = execute!(
            out,
            DisableMouseCapture,
            DisableFocusChange,
            DisableBracketedPaste,
            LeaveAlternateScreen,
            cursor::Show
        );
        let _ = out.write_all(crate::notify::terminal::POP_TITLE);
        let _ = terminal::disable_raw_mode();
        let _ = out.flush();
    }
}

/// True while the terminal is in TUI mode.
pub fn is_active() -> bool {
    ACTIVE.load(Ordering::SeqCst)
}

/// Puts the terminal back in TUI mode after another program had it (the
/// pager); the caller then clears and redraws everything.
pub fn take_back(mouse: bool) -> io::Result<()> {
    setup(mouse)
}

/// Ctrl-Z: restore the terminal, stop the process, and on resume put the
/// terminal back (the caller then clears and redraws everything).
pub fn suspend(mouse: bool) -> io::Result<()> {
    restore();
    rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::TSTP)
        .map_err(io::Error::from)?;
    setup(mouse)
}

fn install_panic_hook() {
    let Ok(mut installed) = HOOK.lock() else {
        return;
    };
    if *installed {
        return;
    }
    *installed = true;
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        // A panic anywhere while the TUI owns the terminal (drawing, or a
        // background task) ends the program: restore the terminal once,
        // print the message on the restored screen, exit. Carrying on would
        // draw on a terminal that is no longer in TUI mode.
        restore();
        previous(info);
        std::process::exit(101);
    }));
}
