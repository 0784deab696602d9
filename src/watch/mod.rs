//! Filesystem watching → "these paths may have changed".
//!
//! Watches the `.pipeline` folder (never single files: editors and atomic
//! writers replace them) and its parent, so that a pipeline created,
//! deleted, renamed or recreated is picked up again. The watcher only says
//! *which paths* may have changed; readers then trust the disk ([`Feed`]).
//! When the OS watcher cannot be set up, a polling watcher takes over and
//! [`PipelineWatch::is_polling`] says so (the TUI shows a marker).
//!
//! The live loop ([`Live`]) follows all its pipelines through one shared
//! watcher ([`hub`]), polling those past the system's watch limit, and can
//! search folders for pipelines, new ones included ([`discover`]).

pub mod discover;
mod feed;
pub mod hub;
mod live;
mod observed;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use notify::{Config, EventKind, PollWatcher, RecommendedWatcher, RecursiveMode, Watcher};

pub use feed::{Feed, FeedUpdate};
pub use live::{Batch, Input, Live};
pub use observed::{Observed, ObservedLog};

/// What the watcher reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchEvent {
    /// These paths may have changed.
    Changed(Vec<PathBuf>),
    /// Events were lost (overflow) or the pipeline folder came or went: re-read everything.
    Rescan,
    /// The watcher reported an error (shown, never fatal).
    Error(String),
}

/// How often the polling fallback looks.
pub const POLL_INTERVAL: Duration = Duration::from_millis(250);

/// True for the writer lock's file: every take of the lock rewrites it
/// (the holder's pid), so a reader that takes the lock on such an event
/// would wake itself forever; it says nothing about the run.
pub(crate) fn is_writer_lock(path: &Path) -> bool {
    path.file_name() == Some(std::ffi::OsStr::new(crate::journal::WRITER_LOCK))
}

/// A live watch on one pipeline; dropping it stops watching.
pub struct PipelineWatch {
    inner: Arc<Mutex<Inner>>,
    polling: bool,
}

struct Inner {
    watcher: Box<dyn Watcher + Send>,
    dir: PathBuf,
    dir_watched: bool,
}

impl std::fmt::Debug for PipelineWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PipelineWatch")
            .field("polling", &self.polling)
            .finish()
    }
}

impl PipelineWatch {
    /// Starts watching `dir` (a `.pipeline` folder, existing or not) and its
    /// parent; `notify_fn` is called from the watcher's thread.
    pub fn start<F>(dir: &Path, notify_fn: F) -> std::io::Result<Self>
    where
        F: Fn(WatchEvent) + Send + Sync + 'static,
    {
        let notify_fn = Arc::new(notify_fn);
        match Self::start_with(dir, notify_fn.clone(), false) {
            Ok(w) => Ok(w),
            Err(e) => {
                tracing::warn!(error = %e, "filesystem watching failed; polling instead");
                Self::start_with(dir, notify_fn, true)
            }
        }
    }

    /// True when the polling fallback is in use.
    pub fn is_polling(&self) -> bool {
        self.polling
    }

    fn start_with(
        dir: &Path,
        notify_fn: Arc<dyn Fn(WatchEvent) + Send + Sync>,
        polling: bool,
    ) -> std::io::Result<Self> {
        let dir = dir.to_path_buf();
        let name = dir.file_name().map(|n| n.to_os_string());
        let dir_cb = dir.clone();
        let handler = move |res: notify::Result<notify::Event>| {
            let ev = match res {
                Ok(ev) => ev,
                Err(e) => {
                    notify_fn(WatchEvent::Error(e.to_string()));
                    notify_fn(WatchEvent::Rescan);
                    return;
                }
            };
            if ev.need_rescan() {
                notify_fn(WatchEvent::Rescan);
                return;
            }
            if matches!(ev.kind, EventKind::Access(_)) {
                return;
            }
            if !ev.paths.is_empty() && ev.paths.iter().all(|p| is_writer_lock(p)) {
                return;
            }
            let touches_dir = ev.paths.iter().any(|p| {
                p == &dir_cb
                    || (p.file_name().map(|n| n.to_os_string()) == name
                        && p.parent() == dir_cb.parent())
            });
            if touches_dir {
                // The pipeline folder itself came, went or was renamed. Re-arming
                // from this thread would deadlock the watcher: the consumer calls
                // `rearm` when it handles the Rescan.
                notify_fn(WatchEvent::Rescan);
                return;
            }
            notify_fn(WatchEvent::Changed(ev.paths));
        };
        let watcher: Box<dyn Watcher + Send> = if polling {
            Box::new(
                PollWatcher::new(handler, Config::default().with_poll_interval(POLL_INTERVAL))
                    .map_err(to_io)?,
            )
        } else {
            Box::new(RecommendedWatcher::new(handler, Config::default()).map_err(to_io)?)
        };
        let inner = Arc::new(Mutex::new(Inner {
            watcher,
            dir: dir.clone(),
            dir_watched: false,
        }));
        {
            let mut g = inner
                .lock()
                .map_err(|_| std::io::Error::other("watch state poisoned"))?;
            if let Some(parent) = dir.parent().filter(|p| p.is_dir()) {
                g.watcher
                    .watch(parent, RecursiveMode::NonRecursive)
                    .map_err(to_io)?;
            } else if !polling {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "the pipeline's parent folder does not exist",
                ));
            }
            g.rearm();
        }
        Ok(PipelineWatch { inner, polling })
    }

    /// Re-arms the watch on the pipeline folder; call it on every
    /// [`WatchEvent::Rescan`] (never from inside the callback).
    pub fn rearm(&self) {
        if let Ok(mut g) = self.inner.lock() {
            g.rearm();
        }
    }
}

impl Inner {
    fn rearm(&mut self) {
        if self.dir_watched {
            let _ = self.watcher.unwatch(&self.dir);
            self.dir_watched = false;
        }
        if self.dir.is_dir() {
            self.dir_watched = self
                .watcher
                .watch(&self.dir, RecursiveMode::NonRecursive)
                .is_ok();
        }
    }
}

fn to_io(e: notify::Error) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An engine takes the writer lock to read the state on each event: the
    /// lock's own writes must not be one, or it would wake itself forever.
    #[test]
    fn takes_of_the_writer_lock_are_no_event() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(".pipeline");
        std::fs::create_dir_all(&p).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let tx = Mutex::new(tx);
        let _w = PipelineWatch::start(&p, move |ev| {
            if let Ok(tx) = tx.lock() {
                let _ = tx.send(ev);
            }
        })
        .unwrap();
        for pid in 0..20 {
            std::fs::write(p.join("lock"), format!("{pid}\n")).unwrap();
        }
        std::fs::write(p.join("events.jsonl"), "x\n").unwrap();
        let first = rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
        assert_eq!(first, WatchEvent::Changed(vec![p.join("events.jsonl")]));
    }
}
