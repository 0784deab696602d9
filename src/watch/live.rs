//! The live loop's input side, shared by the TUI and headless mode: one
//! channel carrying every input (watch events, keys, ticks, write results),
//! drained whole before each redraw, and the feeds it refreshes.
//!
//! A burst of 500 file writes costs one refresh per pipeline and one frame.
//! Pipelines can be added while the loop runs: those a search of folders
//! finds ([`Live::start_search`]) arrive as an input like any other.

use std::collections::BTreeSet;
use std::sync::Arc;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::discover::{Discovery, RESCAN_EVERY, Scan, SearchProblem};
use super::hub::{How, Hub};
use super::{Feed, FeedUpdate, WatchEvent};
use crate::journal::Pipeline;

/// One input of the live loop. `T` is what the front end adds (keys,
/// ticks, write results...).
#[derive(Debug)]
pub enum Input<T> {
    /// A watcher saw something in pipeline `usize`.
    Watch(usize, WatchEvent),
    /// The search of folders found new pipelines (or folders it cannot list).
    Found(Scan),
    /// A front-end input.
    Other(T),
}

/// Every pipeline being watched, and the channel their watchers feed.
pub struct Live<T> {
    feeds: Vec<Feed>,
    hub: Hub,
    tx: UnboundedSender<Input<T>>,
    rx: UnboundedReceiver<Input<T>>,
    search_problems: Vec<SearchProblem>,
}

/// What one drained batch brought.
#[derive(Debug)]
pub struct Batch<T> {
    /// Per pipeline that was refreshed: its index and what changed.
    pub updates: Vec<(usize, FeedUpdate)>,
    /// Front-end inputs, in arrival order.
    pub others: Vec<T>,
    /// Watcher errors (shown, never fatal).
    pub errors: Vec<String>,
    /// Pipelines the search added since the last batch (their first read
    /// is among `updates`).
    pub added: Vec<usize>,
}

impl<T: Send + 'static> Live<T> {
    /// Starts watching every pipeline (each folder and its parent: one
    /// named may not exist yet). A pipeline that cannot be watched is polled.
    pub fn start(pipelines: Vec<Pipeline>) -> Self {
        let (tx, rx) = unbounded_channel();
        let sink_tx = tx.clone();
        let hub = Hub::new(Arc::new(move |i, ev| {
            let _ = sink_tx.send(Input::Watch(i, ev));
        }));
        let mut live = Live {
            feeds: Vec::new(),
            hub,
            tx,
            rx,
            search_problems: Vec::new(),
        };
        for p in pipelines {
            live.add(p, true);
        }
        live
    }

    /// Adds a pipeline; returns its index. `parent`: watch its parent
    /// folder too (it may be created, deleted or replaced).
    pub fn add(&mut self, pipeline: Pipeline, parent: bool) -> usize {
        let i = self.feeds.len();
        self.hub.add(i, pipeline.dir(), parent);
        self.feeds.push(Feed::new(pipeline));
        i
    }

    /// Searches folders for pipelines: once now (what it finds is added
    /// before this returns), then every [`RESCAN_EVERY`] on a thread of its
    /// own; later finds arrive as [`Input::Found`] and are added by
    /// [`Live::next_batch`]. Pipelines already followed are not added twice.
    pub fn start_search(&mut self, mut discovery: Discovery) {
        for f in &self.feeds {
            discovery.know(f.pipeline().dir());
        }
        let first = discovery.scan();
        self.take_scan(first);
        let tx = self.tx.clone();
        let spawned = std::thread::Builder::new()
            .name("loopwatch-search".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(RESCAN_EVERY);
                    let scan = discovery.scan();
                    if (!scan.new.is_empty() || !scan.problems.is_empty())
                        && tx.send(Input::Found(scan)).is_err()
                    {
                        return;
                    }
                    if tx.is_closed() {
                        return;
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "cannot start the search for new pipelines");
        }
    }

    fn take_scan(&mut self, scan: Scan) -> Vec<usize> {
        self.search_problems.extend(scan.problems);
        scan.new.into_iter().map(|p| self.add(p, false)).collect()
    }

    /// Folders the search could not list.
    pub fn search_problems(&self) -> &[SearchProblem] {
        &self.search_problems
    }

    /// How pipeline `i` is followed (watched, or polled and why).
    pub fn how(&self, i: usize) -> Option<&How> {
        self.hub.how(i)
    }

    /// A sender for front-end inputs (keys, ticks, results of background work).
    pub fn sender(&self) -> UnboundedSender<Input<T>> {
        self.tx.clone()
    }

    /// The feeds.
    pub fn feeds(&self) -> &[Feed] {
        &self.feeds
    }

    /// Feed `i`, to move its position (`None` past the last).
    pub fn feed_mut(&mut self, i: usize) -> Option<&mut Feed> {
        self.feeds.get_mut(i)
    }

    /// True when pipeline `i` is watched by polling (or not at all).
    pub fn is_polling(&self, i: usize) -> bool {
        !matches!(self.hub.how(i), Some(How::Watched))
    }

    /// Reads every pipeline once (start-up).
    pub fn refresh_all(&mut self) -> Vec<(usize, FeedUpdate)> {
        self.feeds
            .iter_mut()
            .enumerate()
            .map(|(i, f)| (i, f.refresh()))
            .collect()
    }

    /// Waits for one input, drains every input already queued, refreshes each
    /// pipeline that may have changed once, and returns the lot. `None` when
    /// every sender is gone.
    pub async fn next_batch(&mut self) -> Option<Batch<T>> {
        let first = self.rx.recv().await?;
        let mut dirty = BTreeSet::new();
        let mut rescan = BTreeSet::new();
        let mut others = Vec::new();
        let mut errors = Vec::new();
        let mut scans = Vec::new();
        let mut take = |input: Input<T>| match input {
            Input::Found(scan) => scans.push(scan),
            Input::Watch(i, WatchEvent::Changed(_)) => {
                dirty.insert(i);
            }
            Input::Watch(i, WatchEvent::Rescan) => {
                dirty.insert(i);
                rescan.insert(i);
            }
            Input::Watch(i, WatchEvent::Error(e)) => {
                dirty.insert(i);
                errors.push(e);
            }
            Input::Other(t) => others.push(t),
        };
        take(first);
        while let Ok(more) = self.rx.try_recv() {
            take(more);
        }
        let mut added = Vec::new();
        for scan in scans {
            added.extend(self.take_scan(scan));
        }
        dirty.extend(added.iter().copied());
        for &i in &rescan {
            if let Some(f) = self.feeds.get(i) {
                let dir = f.pipeline().dir().to_path_buf();
                self.hub.rearm(i, &dir);
            }
        }
        // A rescan means events may have been lost: re-read those pipelines
        // from the start instead of from the last offset.
        let updates = dirty
            .into_iter()
            .filter_map(|i| {
                let feed = self.feeds.get_mut(i)?;
                Some((
                    i,
                    if rescan.contains(&i) {
                        feed.rescan()
                    } else {
                        feed.refresh()
                    },
                ))
            })
            .collect();
        Some(Batch {
            updates,
            others,
            errors,
            added,
        })
    }
}
