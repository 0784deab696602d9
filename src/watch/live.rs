//! The live loop's input side, shared by the TUI and headless mode: one
//! channel carrying every input (watch events, keys, ticks, write results),
//! drained whole before each redraw, and the feeds it refreshes.
//!
//! A burst of 500 file writes costs one refresh per pipeline and one frame.

use std::collections::BTreeSet;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::{Feed, FeedUpdate, PipelineWatch, WatchEvent};
use crate::journal::Pipeline;

/// One input of the live loop. `T` is what the front end adds (keys,
/// ticks, write results...).
#[derive(Debug)]
pub enum Input<T> {
    /// A watcher saw something in pipeline `usize`.
    Watch(usize, WatchEvent),
    /// A front-end input.
    Other(T),
}

/// Every pipeline being watched, and the channel their watchers feed.
pub struct Live<T> {
    feeds: Vec<Feed>,
    watches: Vec<Option<PipelineWatch>>,
    tx: UnboundedSender<Input<T>>,
    rx: UnboundedReceiver<Input<T>>,
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
}

impl<T: Send + 'static> Live<T> {
    /// Starts watching every pipeline (a watcher failure falls back to
    /// polling; a pipeline that cannot be watched at all is still read on
    /// every refresh).
    pub fn start(pipelines: Vec<Pipeline>) -> Self {
        let (tx, rx) = unbounded_channel();
        let mut watches = Vec::new();
        for (i, p) in pipelines.iter().enumerate() {
            let tx = tx.clone();
            let w = PipelineWatch::start(p.dir(), move |ev| {
                let _ = tx.send(Input::Watch(i, ev));
            });
            watches.push(
                w.map_err(|e| tracing::warn!(error = %e, dir = %p.dir().display(), "cannot watch"))
                    .ok(),
            );
        }
        Live {
            feeds: pipelines.into_iter().map(Feed::new).collect(),
            watches,
            tx,
            rx,
        }
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
        self.watches
            .get(i)
            .is_none_or(|w| w.as_ref().is_none_or(PipelineWatch::is_polling))
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
        let mut take = |input: Input<T>| match input {
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
        for &i in &rescan {
            if let Some(Some(w)) = self.watches.get(i) {
                w.rearm();
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
        })
    }
}
