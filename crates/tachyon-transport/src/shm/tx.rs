//! The sending side: this participant's slots and the channels of its segment, one per
//! (reader participant, port) it sends to.
//!
//! Everything a sender needs to know about what it published is kept here, in private
//! memory: which slot each ring entry names and how many readers still hold each slot. The
//! only number it reads back from shared memory is a reader's `head`, checked against what
//! it published; so a hostile reader can lose its own data, never make this side reuse a
//! slot early for anyone else or index outside the segment.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::layout::{channel, INLINE_SLOT};
use super::segment::Segment;

/// How often a channel whose reader does not move is checked for a dead reader.
pub(crate) const LIVENESS_PERIOD: Duration = Duration::from_millis(100);

/// One channel of our segment.
#[derive(Debug)]
pub(crate) struct TxChannel {
    /// The reader's segment (its doorbells and incoming table).
    pub reader: Arc<Segment>,
    pub port: u32,
    /// Next ring index to publish.
    pub tail: u32,
    /// Oldest ring index the reader has not released (as last read and checked).
    pub head: u32,
    /// The slot of each published ring entry (`entries[i & mask]`; [`INLINE_SLOT`] for one
    /// that holds its datagram itself).
    pub entries: Vec<u32>,
    /// When the reader's liveness was last checked, and its head then.
    pub checked: (Instant, u32),
}

/// The sending state of a participant.
#[derive(Debug)]
pub(crate) struct Tx {
    pub free_small: Vec<u32>,
    pub free_large: Vec<u32>,
    /// Readers still holding each slot.
    pub refs: Vec<u16>,
    pub channels: Vec<Option<TxChannel>>,
    /// The channel of each (reader token, port).
    pub by_dest: HashMap<(u64, u32), u32, foldhash::fast::RandomState>,
    /// Readers that could not be reached, and when to try again.
    pub failed: std::collections::HashMap<u64, Instant>,
    /// When the channels were last swept (the coarse clock, `map::coarse_now`).
    pub last_sweep: Duration,
}

/// What [`Tx::reclaim`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reclaim {
    Ok,
    /// The reader's head is not a ring index we published: the channel is closed.
    Corrupt,
}

impl Tx {
    pub(crate) fn new(own: &Segment) -> Tx {
        let l = &own.layout;
        // Popped from the end: the lowest slots first, so a light load touches few pages.
        let free_small = (0..l.p.small_count).rev().collect();
        let free_large = (l.p.small_count..l.slots()).rev().collect();
        Tx {
            free_small,
            free_large,
            refs: vec![0; l.slots() as usize],
            channels: (0..l.p.channels).map(|_| None).collect(),
            by_dest: HashMap::default(),
            failed: std::collections::HashMap::new(),
            last_sweep: super::map::coarse_now(),
        }
    }

    /// A free slot for `len` bytes: a small one if it fits, else a large one.
    pub(crate) fn alloc(&mut self, own: &Segment, len: usize) -> Option<u32> {
        if len <= own.layout.p.small_size as usize {
            if let Some(s) = self.free_small.pop() {
                return Some(s);
            }
        }
        if len <= own.layout.p.large_size as usize {
            return self.free_large.pop();
        }
        None
    }

    /// One reader less holds slot `s`; the last one frees it. An entry that held its
    /// datagram itself ([`INLINE_SLOT`]) holds no slot.
    pub(crate) fn release(&mut self, own: &Segment, s: u32) {
        if s == INLINE_SLOT {
            return;
        }
        let Some(r) = self.refs.get_mut(s as usize) else {
            return;
        };
        *r = r.saturating_sub(1);
        if *r == 0 {
            if own.layout.is_small(s) {
                self.free_small.push(s);
            } else {
                self.free_large.push(s);
            }
        }
    }

    /// Frees the slots channel `c`'s reader has released since we last looked.
    pub(crate) fn reclaim(&mut self, own: &Segment, c: u32) -> Reclaim {
        // Taken out while its slots are released (no copy of its entries), put back after.
        let Some(mut ch) = self.channels.get_mut(c as usize).and_then(Option::take) else {
            return Reclaim::Ok;
        };
        let head = own
            .channel_u32(c, channel::HEAD)
            .map(|h| h.load(Ordering::Acquire));
        let result = match head {
            Some(head) if head.wrapping_sub(ch.head) <= ch.tail.wrapping_sub(ch.head) => {
                let mask = own.layout.p.ring - 1;
                while ch.head != head {
                    let slot = ch.entries[(ch.head & mask) as usize];
                    self.release(own, slot);
                    ch.head = ch.head.wrapping_add(1);
                }
                Reclaim::Ok
            }
            _ => Reclaim::Corrupt,
        };
        self.channels[c as usize] = Some(ch);
        result
    }

    /// Closes channel `c`: its slots are freed, its reader forgotten.
    pub(crate) fn close(&mut self, own: &Segment, c: u32) {
        let Some(ch) = self.channels.get_mut(c as usize).and_then(Option::take) else {
            return;
        };
        let mask = own.layout.p.ring - 1;
        let mut i = ch.head;
        while i != ch.tail {
            let slot = ch.entries[(i & mask) as usize];
            self.release(own, slot);
            i = i.wrapping_add(1);
        }
        self.by_dest.remove(&(ch.reader.token, ch.port));
        if let Some(r) = own.channel_reader(c) {
            r.store(0, Ordering::Release);
        }
    }
}
