//! [`Events`]: a run's events, stored once and shared without copying.
//!
//! The events live in fixed-size chunks behind reference counts. A reader
//! (the app, a replay position) holds a handle on a prefix: handing the
//! events over costs one count per chunk, never a copy of an event. The
//! owner appends to the last chunk; when a reader still holds that chunk,
//! only it (at most [`CHUNK`] events) is copied, so what a reader holds
//! never changes under it.

use std::sync::Arc;

use crate::model::Event;

/// Events per chunk: small enough that copying the open chunk on an append
/// is cheap, large enough that a handle on 100,000 events is a few hundred
/// counts.
pub const CHUNK: usize = 256;

/// A prefix of a run's events (all of them, for the owner).
#[derive(Debug, Clone, Default)]
pub struct Events {
    chunks: Vec<Arc<Vec<Event>>>,
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

    /// The event at `i` (0-based).
    pub fn get(&self, i: usize) -> Option<&Event> {
        if i >= self.len {
            return None;
        }
        self.chunks.get(i / CHUNK)?.get(i % CHUNK)
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
        let first = start / CHUNK;
        self.chunks
            .iter()
            .skip(first)
            .flat_map(|c| c.iter())
            .skip(start % CHUNK)
            .take(self.len.saturating_sub(start))
    }

    /// The first `k` events (all of them when `k` is larger), sharing this
    /// handle's chunks.
    pub fn prefix(&self, k: usize) -> Events {
        let len = k.min(self.len);
        Events {
            chunks: self.chunks[..len.div_ceil(CHUNK)].to_vec(),
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
        if self.len.is_multiple_of(CHUNK) {
            let mut chunk = Vec::with_capacity(CHUNK);
            chunk.push(ev);
            self.chunks.push(Arc::new(chunk));
        } else if let Some(last) = self.chunks.last_mut() {
            // Copies the open chunk only when a reader still holds it.
            Arc::make_mut(last).push(ev);
        }
        self.len += 1;
    }

    /// The events as one vector (a copy: for writers and tests).
    pub fn to_vec(&self) -> Vec<Event> {
        self.iter().cloned().collect()
    }

    /// Makes the chunks hold exactly `len` events, so an append goes after them.
    fn truncate_chunks(&mut self) {
        self.chunks.truncate(self.len.div_ceil(CHUNK));
        let tail = self.len % CHUNK;
        if tail > 0
            && let Some(last) = self.chunks.last_mut()
            && last.len() > tail
        {
            Arc::make_mut(last).truncate(tail);
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
        for ev in iter {
            self.push(ev);
        }
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
        let mut all: Events = (1..=CHUNK as u64 + 10).map(ev).collect();
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
