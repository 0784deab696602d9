//! [`Events`]: a run's events, stored once and shared without copying.
//!
//! The events live in chunks behind reference counts. A reader (the app, a
//! replay position) holds a handle on a prefix: handing the events over
//! costs one count per chunk, never a copy of an event. A batch read from
//! the journal becomes a chunk as it is (a long journal read at start is
//! never copied); single events go to an open chunk of at most [`CHUNK`]
//! events, which is copied only when a reader still holds it, so what a
//! reader holds never changes under it.

use std::sync::Arc;

use crate::model::Event;

/// Events of an open chunk at most: small enough that copying it on an
/// append is cheap.
pub const CHUNK: usize = 256;

/// A prefix of a run's events (all of them, for the owner).
#[derive(Debug, Clone, Default)]
pub struct Events {
    chunks: Vec<Arc<Vec<Event>>>,
    /// Index of the first event of each chunk.
    starts: Vec<usize>,
    len: usize,
}

impl Events {
    /// No events.
    pub fn new() -> Self {
        Events::default()
    }

    /// Number of events.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there is no event.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The chunk holding event `i` (`i < len`).
    fn chunk_of(&self, i: usize) -> usize {
        self.starts.partition_point(|s| *s <= i).saturating_sub(1)
    }

    /// The event at `i` (0-based).
    pub fn get(&self, i: usize) -> Option<&Event> {
        if i >= self.len {
            return None;
        }
        let c = self.chunk_of(i);
        self.chunks.get(c)?.get(i - self.starts[c])
    }

    /// The last event.
    pub fn last(&self) -> Option<&Event> {
        self.len.checked_sub(1).and_then(|i| self.get(i))
    }

    /// Every event, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Event> + '_ {
        self.chunks.iter().flat_map(|c| c.iter()).take(self.len)
    }

    /// The events from `start` on.
    pub fn iter_from(&self, start: usize) -> impl Iterator<Item = &Event> + '_ {
        let (first, skip) = if start < self.len {
            let c = self.chunk_of(start);
            (c, start - self.starts[c])
        } else {
            (self.chunks.len(), 0)
        };
        self.chunks
            .iter()
            .skip(first)
            .flat_map(|c| c.iter())
            .skip(skip)
            .take(self.len.saturating_sub(start))
    }

    /// The first `k` events (all of them when `k` is larger), sharing this
    /// handle's chunks.
    pub fn prefix(&self, k: usize) -> Events {
        let len = k.min(self.len);
        let n = if len == 0 {
            0
        } else {
            self.chunk_of(len - 1) + 1
        };
        Events {
            chunks: self.chunks[..n].to_vec(),
            starts: self.starts[..n].to_vec(),
            len,
        }
    }

    /// The number of events with a seq at or below `seq` (events are in seq
    /// order).
    pub fn count_through_seq(&self, seq: u64) -> usize {
        let (mut lo, mut hi) = (0, self.len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.get(mid).is_some_and(|e| e.seq <= seq) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Appends an event. On a prefix handle the events past it are dropped
    /// first (from this handle only; other handles keep theirs).
    pub fn push(&mut self, ev: Event) {
        self.truncate_chunks();
        match self.chunks.last_mut() {
            // Copies the open chunk only when a reader still holds it.
            Some(last) if last.len() < CHUNK => Arc::make_mut(last).push(ev),
            _ => {
                let mut chunk = Vec::with_capacity(CHUNK);
                chunk.push(ev);
                self.starts.push(self.len);
                self.chunks.push(Arc::new(chunk));
            }
        }
        self.len += 1;
    }

    /// Appends a batch: a long one becomes a chunk as it is (no event is
    /// moved or copied), a short one goes event by event.
    pub fn append(&mut self, mut batch: Vec<Event>) {
        if batch.len() < CHUNK {
            batch.into_iter().for_each(|ev| self.push(ev));
            return;
        }
        self.truncate_chunks();
        batch.shrink_to_fit();
        self.starts.push(self.len);
        self.len += batch.len();
        self.chunks.push(Arc::new(batch));
    }

    /// The events as one vector (a copy: for writers and tests).
    pub fn to_vec(&self) -> Vec<Event> {
        self.iter().cloned().collect()
    }

    /// Makes the chunks hold exactly `len` events, so an append goes after them.
    fn truncate_chunks(&mut self) {
        let n = if self.len == 0 {
            0
        } else {
            self.chunk_of(self.len - 1) + 1
        };
        self.chunks.truncate(n);
        self.starts.truncate(n);
        if let (Some(last), Some(start)) = (self.chunks.last_mut(), self.starts.last())
            && start + last.len() > self.len
        {
            Arc::make_mut(last).truncate(self.len - start);
        }
    }
}

impl PartialEq for Events {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl PartialEq<[Event]> for Events {
    fn eq(&self, other: &[Event]) -> bool {
        self.len == other.len() && self.iter().eq(other.iter())
    }
}

impl PartialEq<Vec<Event>> for Events {
    fn eq(&self, other: &Vec<Event>) -> bool {
        *self == other[..]
    }
}

impl Extend<Event> for Events {
    fn extend<I: IntoIterator<Item = Event>>(&mut self, iter: I) {
        self.append(iter.into_iter().collect());
    }
}

impl<'a> IntoIterator for &'a Events {
    type Item = &'a Event;
    type IntoIter = Box<dyn Iterator<Item = &'a Event> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl FromIterator<Event> for Events {
    fn from_iter<I: IntoIterator<Item = Event>>(iter: I) -> Self {
        let mut e = Events::new();
        e.extend(iter);
        e
    }
}

impl From<Vec<Event>> for Events {
    fn from(v: Vec<Event>) -> Self {
        v.into_iter().collect()
    }
}

impl From<&[Event]> for Events {
    fn from(v: &[Event]) -> Self {
        v.iter().cloned().collect()
    }
}

impl From<&Vec<Event>> for Events {
    fn from(v: &Vec<Event>) -> Self {
        v.iter().cloned().collect()
    }
}

impl<const N: usize> From<&[Event; N]> for Events {
    fn from(v: &[Event; N]) -> Self {
        v.iter().cloned().collect()
    }
}

impl From<&Events> for Events {
    fn from(v: &Events) -> Self {
        v.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EventBody;

    fn ev(seq: u64) -> Event {
        Event {
            v: 1,
            seq,
            at: "t".into(),
            prev: None,
            body: EventBody::Note {
                text: format!("n{seq}"),
            },
        }
    }

    fn seqs(e: &Events) -> Vec<u64> {
        e.iter().map(|e| e.seq).collect()
    }

    #[test]
    fn a_prefix_shares_the_chunks_and_never_sees_later_appends() {
        let mut all = Events::new();
        (1..=CHUNK as u64 + 10).for_each(|s| all.push(ev(s)));
        let held = all.prefix(CHUNK + 5);
        assert!(Arc::ptr_eq(&all.chunks[0], &held.chunks[0]));
        all.push(ev(CHUNK as u64 + 11));
        assert_eq!(held.len(), CHUNK + 5);
        assert_eq!(held.last().map(|e| e.seq), Some(CHUNK as u64 + 5));
        assert_eq!(all.len(), CHUNK + 11);
        // The full chunk is still shared; only the open one was copied.
        assert!(Arc::ptr_eq(&all.chunks[0], &held.chunks[0]));
        assert!(!Arc::ptr_eq(&all.chunks[1], &held.chunks[1]));
    }

    #[test]
    fn pushing_on_a_prefix_drops_what_was_past_it() {
        let all: Events = (1..=10).map(ev).collect();
        let mut p = all.prefix(4);
        p.push(ev(5));
        assert_eq!(seqs(&p), vec![1, 2, 3, 4, 5]);
        assert_eq!(all.len(), 10);
        assert_eq!(seqs(&all.prefix(0)), Vec::<u64>::new());
    }

    #[test]
    fn a_long_batch_is_kept_as_it_is_and_shorter_ones_fill_an_open_chunk() {
        let mut e = Events::new();
        e.append((1..=1000).map(ev).collect());
        assert_eq!(e.chunks.len(), 1);
        e.append((1001..=1010).map(ev).collect());
        e.push(ev(1011));
        assert_eq!(e.chunks.len(), 2);
        let held = e.prefix(1005);
        e.append((1012..=1400).map(ev).collect());
        assert_eq!(seqs(&e), (1..=1400).collect::<Vec<_>>());
        assert_eq!(seqs(&held), (1..=1005).collect::<Vec<_>>());
        assert_eq!(e.get(1000).map(|e| e.seq), Some(1001));
        assert_eq!(
            e.iter_from(998).take(4).map(|e| e.seq).collect::<Vec<_>>(),
            vec![999, 1000, 1001, 1002]
        );
        assert!(Arc::ptr_eq(&e.chunks[0], &held.chunks[0]));
    }

    #[test]
    fn lookups_by_position_and_seq() {
        let e: Events = (1..=600).map(|s| ev(s * 2)).collect();
        assert_eq!(e.get(300).map(|e| e.seq), Some(602));
        assert_eq!(e.get(600), None);
        assert_eq!(e.count_through_seq(601), 300);
        assert_eq!(e.count_through_seq(602), 301);
        assert_eq!(e.count_through_seq(0), 0);
        assert_eq!(e.count_through_seq(u64::MAX), 600);
        let from: Vec<u64> = e.iter_from(510).take(3).map(|e| e.seq).collect();
        assert_eq!(from, vec![1022, 1024, 1026]);
        assert_eq!(e.iter_from(600).count(), 0);
        assert_eq!(e.prefix(300).iter_from(250).count(), 50);
    }
}
