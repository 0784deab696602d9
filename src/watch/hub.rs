//! One filesystem watcher for every pipeline the live loop follows: one
//! inotify instance and one thread, one watch per `.pipeline` folder (and,
//! for a pipeline named on the command line, one on its parent, so that it
//! is seen when it is created, deleted or replaced). A watcher per pipeline
//! would spend an inotify instance and a thread each, and the system allows
//! few instances (128 by default).
//!
//! When the system's watch limit is reached (inotify's ENOSPC), or the
//! watcher cannot be had at all, the pipelines left are polled: every
//! [`POLL_EVERY`], one thread looks at their `events.jsonl`, `state.json`
//! and folder (length, modification time, inode) and reports what moved.
//! [`Hub::how`] says which way each pipeline is followed.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use notify::{Config, EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use super::WatchEvent;

/// How often polled pipelines are looked at.
pub const POLL_EVERY: Duration = Duration::from_millis(500);

/// How a pipeline is followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum How {
    /// A filesystem watch on its folder.
    Watched,
    /// Polled, and why (the watch limit, the watch refused).
    Polled(String),
}

/// Where a pipeline's events are sent: `(index, event)`.
pub type Sink = Arc<dyn Fn(usize, WatchEvent) + Send + Sync>;

/// What the watcher's thread needs to route an event to its pipeline.
#[derive(Default)]
struct Routes {
    /// Pipeline folder → index.
    dirs: HashMap<PathBuf, usize>,
    /// Parent folder → (the pipeline folder's name, index).
    parents: HashMap<PathBuf, Vec<(OsString, usize)>>,
}

/// The polled pipelines and what was last seen of each.
#[derive(Default)]
struct Polled {
    list: Vec<(usize, PathBuf, Stamp)>,
    running: bool,
}

/// What a poll compares of the folder, the journal and the foreign state:
/// length, modification time, and identity (inode and birth time: an inode
/// number can be reused at once by a folder made anew).
type Stamp = [Option<(u64, SystemTime, (u64, Option<SystemTime>))>; 3];

/// The shared watcher.
pub struct Hub {
    watcher: Option<Mutex<RecommendedWatcher>>,
    /// Why there is no watcher.
    no_watcher: Option<String>,
    routes: Arc<Mutex<Routes>>,
    polled: Arc<Mutex<Polled>>,
    how: Vec<How>,
    sink: Sink,
    /// Watches taken so far (the test limit counts them).
    taken: usize,
    limit: Option<usize>,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub").field("how", &self.how).finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic on another thread leaves the data as it was: keep going.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Hub {
    /// A hub sending each pipeline's events to `sink`.
    pub fn new(sink: Sink) -> Hub {
        let routes: Arc<Mutex<Routes>> = Arc::default();
        let (r, s) = (routes.clone(), sink.clone());
        let made = RecommendedWatcher::new(
            move |res: notify::Result<notify::Event>| route(&r, &s, res),
            Config::default(),
        );
        let (watcher, no_watcher) = match made {
            Ok(w) => (Some(Mutex::new(w)), None),
            Err(e) => {
                tracing::warn!(error = %e, "filesystem watching unavailable; polling");
                (None, Some(format!("filesystem watching unavailable: {e}")))
            }
        };
        Hub {
            watcher,
            no_watcher,
            routes,
            polled: Arc::default(),
            how: Vec::new(),
            sink,
            taken: 0,
            limit: test_limit(),
        }
    }

    /// Follows pipeline `index` at `dir` (indexes come in order: 0, 1, ...);
    /// with `parent`, its parent folder is watched too.
    pub fn add(&mut self, index: usize, dir: &Path, parent: bool) {
        let how = match self.watch_all(index, dir, parent) {
            Ok(()) => How::Watched,
            Err(why) => {
                self.poll(index, dir);
                How::Polled(why)
            }
        };
        if self.how.len() <= index {
            self.how.resize(index + 1, How::Watched);
        }
        self.how[index] = how;
    }

    /// How pipeline `index` is followed.
    pub fn how(&self, index: usize) -> Option<&How> {
        self.how.get(index)
    }

    /// Watches the folder again (it was deleted, replaced or created).
    pub fn rearm(&mut self, index: usize, dir: &Path) {
        if self.how.get(index) != Some(&How::Watched) {
            return;
        }
        if let Some(w) = &self.watcher {
            let mut w = lock(w);
            let _ = w.unwatch(dir);
            if dir.is_dir() {
                let _ = w.watch(dir, RecursiveMode::NonRecursive);
            }
        }
    }

    fn watch_all(&mut self, index: usize, dir: &Path, parent: bool) -> Result<(), String> {
        if self.watcher.is_none() {
            return Err(self.no_watcher.clone().unwrap_or_default());
        }
        {
            // Routes first, never under the watcher's lock: its thread takes
            // the routes' lock for every event.
            let mut r = lock(&self.routes);
            r.dirs.insert(dir.to_path_buf(), index);
            if parent && let (Some(p), Some(name)) = (dir.parent(), dir.file_name()) {
                r.parents
                    .entry(p.to_path_buf())
                    .or_default()
                    .push((name.to_os_string(), index));
            }
        }
        // The parent is watched before the folder is looked at: a folder
        // created between the two is then either seen by that look or
        // reported by the parent's watch, never missed by both.
        let parent_dir = dir.parent().filter(|p| parent && p.is_dir());
        if let Some(p) = parent_dir {
            self.watch_one(p)?;
        }
        if dir.is_dir() {
            self.watch_one(dir)?;
        } else if parent_dir.is_none() {
            return Err(format!("{} does not exist yet", dir.display()));
        }
        Ok(())
    }

    fn watch_one(&mut self, path: &Path) -> Result<(), String> {
        let Some(w) = &self.watcher else {
            return Err(self.no_watcher.clone().unwrap_or_default());
        };
        if self.limit.is_some_and(|l| self.taken >= l) {
            return Err(limit_message());
        }
        match lock(w).watch(path, RecursiveMode::NonRecursive) {
            Ok(()) => {
                self.taken += 1;
                Ok(())
            }
            Err(e) if matches!(e.kind, notify::ErrorKind::MaxFilesWatch) => Err(limit_message()),
            Err(e) => Err(format!("cannot watch {}: {e}", path.display())),
        }
    }

    fn poll(&mut self, index: usize, dir: &Path) {
        lock(&self.routes).dirs.remove(dir);
        let mut p = lock(&self.polled);
        p.list.push((index, dir.to_path_buf(), stamp(dir)));
        if p.running {
            return;
        }
        p.running = true;
        let (polled, sink) = (self.polled.clone(), self.sink.clone());
        let spawned = std::thread::Builder::new()
            .name("loopwatch-poll".into())
            .spawn(move || poll_loop(&polled, &sink));
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "cannot start the polling thread");
            p.running = false;
        }
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        // Ends the polling thread at its next look.
        lock(&self.polled).running = false;
    }
}

fn limit_message() -> String {
    "the system's inotify watch limit is reached (fs.inotify.max_user_watches)".into()
}

/// Test hook, not a setting: under the `testkit` feature (the build the
/// integration tests use), `LOOPWATCH_TEST_WATCH_LIMIT=N` makes every watch
/// after the first N fail as the system's limit does, so the polling
/// fallback can be tested without exhausting the machine's real limit.
fn test_limit() -> Option<usize> {
    #[cfg(feature = "testkit")]
    {
        std::env::var("LOOPWATCH_TEST_WATCH_LIMIT")
            .ok()
            .and_then(|v| v.parse().ok())
    }
    #[cfg(not(feature = "testkit"))]
    {
        None
    }
}

fn poll_loop(polled: &Mutex<Polled>, sink: &Sink) {
    loop {
        std::thread::sleep(POLL_EVERY);
        let mut changed = Vec::new();
        {
            let mut p = lock(polled);
            if !p.running {
                return;
            }
            for (i, dir, last) in &mut p.list {
                let now = stamp(dir);
                if now != *last {
                    // The folder itself came, went or was replaced: re-read all.
                    let ev = if now[0].map(|s| s.2) != last[0].map(|s| s.2) {
                        WatchEvent::Rescan
                    } else {
                        WatchEvent::Changed(vec![dir.clone()])
                    };
                    *last = now;
                    changed.push((*i, ev));
                }
            }
        }
        for (i, ev) in changed {
            sink(i, ev);
        }
    }
}

fn stamp(dir: &Path) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    let one = |p: &Path| {
        std::fs::metadata(p).ok().map(|m| {
            (
                m.len(),
                m.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                (m.ino(), m.created().ok()),
            )
        })
    };
    [
        one(dir),
        one(&dir.join("events.jsonl")),
        one(&dir.join("state.json")),
    ]
}

/// Runs on the watcher's thread: which pipeline an event is about.
fn route(routes: &Mutex<Routes>, sink: &Sink, res: notify::Result<notify::Event>) {
    let ev = match res {
        Ok(ev) => ev,
        Err(e) => {
            let r = lock(routes);
            let mut hit = false;
            for p in &e.paths {
                if let Some(&i) = r.dirs.get(p) {
                    hit = true;
                    sink(i, WatchEvent::Error(e.to_string()));
                    sink(i, WatchEvent::Rescan);
                }
            }
            if !hit {
                tracing::warn!(error = %e, "watcher error");
            }
            return;
        }
    };
    if matches!(ev.kind, EventKind::Access(_)) {
        return;
    }
    let r = lock(routes);
    if ev.need_rescan() {
        // Events were lost: every pipeline is read again.
        for &i in r.dirs.values() {
            sink(i, WatchEvent::Rescan);
        }
        return;
    }
    for p in &ev.paths {
        if let Some(&i) = r.dirs.get(p) {
            // The pipeline folder itself came, went or was renamed; the
            // consumer re-arms (never from this thread: it would deadlock).
            sink(i, WatchEvent::Rescan);
            continue;
        }
        let Some(parent) = p.parent() else { continue };
        if let Some(&i) = r.dirs.get(parent) {
            if super::is_writer_lock(p) {
                continue;
            }
            sink(i, WatchEvent::Changed(vec![p.clone()]));
        } else if let (Some(list), Some(name)) = (r.parents.get(parent), p.file_name()) {
            for (n, i) in list {
                if n == name {
                    sink(*i, WatchEvent::Rescan);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    fn hub(limit: Option<usize>) -> (Hub, mpsc::Receiver<(usize, WatchEvent)>) {
        let (tx, rx) = mpsc::channel();
        let tx = Mutex::new(tx);
        let mut h = Hub::new(Arc::new(move |i, ev| {
            let _ = lock(&tx).send((i, ev));
        }));
        h.limit = limit;
        (h, rx)
    }

    /// Waits (at most 10 s) for an event of pipeline `i` matching `want`.
    fn expect(rx: &mpsc::Receiver<(usize, WatchEvent)>, i: usize, want: fn(&WatchEvent) -> bool) {
        let end = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let left = end.saturating_duration_since(std::time::Instant::now());
            match rx.recv_timeout(left) {
                Ok((j, ev)) if j == i && want(&ev) => return,
                Ok(_) => {}
                Err(e) => panic!("no matching event for pipeline {i}: {e}"),
            }
        }
    }

    #[test]
    fn each_pipeline_gets_its_own_events_through_one_watcher() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a/.pipeline"), d.path().join("b/.pipeline"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let (mut h, rx) = hub(None);
        h.add(0, &a, false);
        h.add(1, &b, false);
        assert_eq!(
            (h.how(0), h.how(1)),
            (Some(&How::Watched), Some(&How::Watched))
        );
        std::fs::write(b.join("events.jsonl"), "x\n").unwrap();
        expect(&rx, 1, |ev| matches!(ev, WatchEvent::Changed(_)));
        std::fs::write(a.join("events.jsonl"), "x\n").unwrap();
        expect(&rx, 0, |ev| matches!(ev, WatchEvent::Changed(_)));
    }

    #[test]
    fn takes_of_the_writer_lock_are_no_event() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a/.pipeline");
        std::fs::create_dir_all(&p).unwrap();
        let (mut h, rx) = hub(None);
        h.add(0, &p, false);
        for pid in 0..20 {
            std::fs::write(p.join("lock"), format!("{pid}\n")).unwrap();
        }
        std::fs::write(p.join("events.jsonl"), "x\n").unwrap();
        // Events keep their order: the first one is the journal's.
        let (_, first) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(first, WatchEvent::Changed(vec![p.join("events.jsonl")]));
    }

    #[test]
    fn a_named_pipeline_created_later_is_seen_through_its_parent() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("wt/.pipeline");
        std::fs::create_dir_all(d.path().join("wt")).unwrap();
        let (mut h, rx) = hub(None);
        h.add(0, &p, true);
        std::fs::create_dir_all(&p).unwrap();
        expect(&rx, 0, |ev| *ev == WatchEvent::Rescan);
        h.rearm(0, &p);
        std::fs::write(p.join("events.jsonl"), "x\n").unwrap();
        expect(&rx, 0, |ev| matches!(ev, WatchEvent::Changed(_)));
    }

    #[test]
    fn past_the_limit_pipelines_are_polled_and_say_why() {
        let d = tempfile::tempdir().unwrap();
        let dirs: Vec<PathBuf> = (0..3)
            .map(|i| d.path().join(format!("{i}/.pipeline")))
            .collect();
        for p in &dirs {
            std::fs::create_dir_all(p).unwrap();
        }
        let (mut h, rx) = hub(Some(1));
        for (i, p) in dirs.iter().enumerate() {
            h.add(i, p, false);
        }
        assert_eq!(h.how(0), Some(&How::Watched));
        for i in 1..3 {
            assert!(
                matches!(h.how(i), Some(How::Polled(why)) if why.contains("watch limit")),
                "{:?}",
                h.how(i)
            );
        }
        std::fs::write(dirs[2].join("events.jsonl"), "x\n").unwrap();
        expect(&rx, 2, |ev| matches!(ev, WatchEvent::Changed(_)));
        // The folder replaced: everything is read again.
        std::fs::remove_dir_all(&dirs[1]).unwrap();
        std::fs::create_dir_all(&dirs[1]).unwrap();
        expect(&rx, 1, |ev| *ev == WatchEvent::Rescan);
    }
}
