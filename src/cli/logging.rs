//! Logging: tracing to a file through tracing-appender (non-blocking; the
//! guard lives as long as `main`), filtered by `LOOPWATCH_LOG` (an
//! EnvFilter, default `warn`). The TUI owns the terminal, so logs never go
//! there; headless commands log to stderr only when `LOOPWATCH_LOG` is set.

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;

/// Starts logging. `owns_terminal`: the command draws a TUI (log to a file only).
pub fn init(owns_terminal: bool) -> Option<WorkerGuard> {
    let requested = std::env::var("LOOPWATCH_LOG")
        .ok()
        .filter(|v| !v.is_empty());
    let filter = EnvFilter::try_new(requested.as_deref().unwrap_or("warn"))
        .unwrap_or_else(|_| EnvFilter::new("warn"));
    if owns_terminal {
        let dir = crate::util::state_dir()?;
        std::fs::create_dir_all(&dir).ok()?;
        let appender = tracing_appender::rolling::never(&dir, "loopwatch.log");
        let (writer, guard) = tracing_appender::non_blocking(appender);
        tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(writer)
            .with_ansi(false)
            .try_init()
            .ok()?;
        return Some(guard);
    }
    if requested.is_some() {
        let (writer, guard) = tracing_appender::non_blocking(std::io::stderr());
        tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(writer)
            .try_init()
            .ok()?;
        return Some(guard);
    }
    None
}
