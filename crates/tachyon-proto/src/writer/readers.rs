//! What a writer keeps about its matched readers as a whole, so that no event walks every
//! reader proxy: a builtin writer has one per remote participant, and during a join every
//! ACKNACK, every look for something to send and every match would otherwise cost O(N)
//! (the simulator at N = 300 spent a third of its time there, `docs/scale.md`).
//!
//! - **Attention**: the proxies that may owe a HEARTBEAT or a repair, in the order they were
//!   flagged. Everything that can give a proxy one (an ACKNACK or NACK_FRAG, the periodic
//!   heartbeat, a match, a change queued for a reader served alone) flags it; the looks for
//!   the next heartbeat or repair walk the flagged ones and drop, from the front, those that
//!   owe nothing any more.
//! - **Floor**: the lowest sequence number acknowledged by a reliable reader and how many
//!   hold it, moved when the last of them acknowledges more (releasing the cache, "is
//!   everything acknowledged", "is there a reliable reader" are then O(1)).
//! - **Unsynced**: reliable readers that have not answered a HEARTBEAT yet.
//! - **Index**: a proxy by reader GUID, above [`LINEAR_LOOKUP`] proxies.

use std::collections::VecDeque;

use tachyon_wire::{Guid, SequenceNumber};

use super::proxy::ReaderProxy;
use super::Writer;
use crate::time::Instant;

/// Up to this many proxies a GUID is found by a linear scan (no hashing).
pub(super) const LINEAR_LOOKUP: usize = 8;

/// Whether `p` may still owe its reader a heartbeat or a repair.
fn owes_something(p: &ReaderProxy) -> bool {
    p.needs_heartbeat || !p.requested.is_empty() || !p.frag_runs.is_empty()
}

/// Flags proxy `i` (when it owes something and is not flagged yet).
pub(super) fn flag(attention: &mut VecDeque<usize>, p: &mut ReaderProxy, i: usize) {
    if !p.flagged && owes_something(p) {
        p.flagged = true;
        attention.push_back(i);
    }
}

impl Writer {
    /// Flags proxy `i`; see [`flag`].
    pub(super) fn flag_proxy(&mut self, i: usize) {
        if let Some(p) = self.proxies.get_mut(i) {
            flag(&mut self.attention, p, i);
        }
    }

    /// Drops from the front of the attention queue the proxies that owe nothing.
    fn prune_attention(&mut self) {
        while let Some(&i) = self.attention.front() {
            match self.proxies.get_mut(i) {
                Some(p) if owes_something(p) => break,
                Some(p) => p.flagged = false,
                None => {}
            }
            self.attention.pop_front();
        }
    }

    /// The first flagged reader that needs a heartbeat of its own.
    pub(super) fn next_heartbeat_proxy(&mut self) -> Option<usize> {
        // After its repairs, if it has some (`send_repairs` adds the heartbeat to the last).
        self.find_flagged(|p| p.needs_heartbeat && p.requested.is_empty() && p.frag_runs.is_empty())
    }

    /// The first flagged reader whose repair is due at `now`.
    pub(super) fn next_repair_proxy(&mut self, now: Instant) -> Option<usize> {
        self.find_flagged(|p| p.repair_due(now))
    }

    /// The first flagged proxy for which `pred` holds. Those that owe nothing are dropped
    /// from the front, and from everywhere when they are most of what a look walked (so a
    /// proxy with a repair pending later does not make every look walk those behind it).
    fn find_flagged(&mut self, pred: impl Fn(&ReaderProxy) -> bool) -> Option<usize> {
        self.prune_attention();
        let mut stale = 0usize;
        let mut walked = 0usize;
        let mut found = None;
        for &i in &self.attention {
            walked += 1;
            match self.proxies.get(i) {
                Some(p) if pred(p) => {
                    found = Some(i);
                    break;
                }
                Some(p) if owes_something(p) => {}
                _ => stale += 1,
            }
        }
        if walked > 16 && stale * 2 > walked {
            let proxies = &mut self.proxies;
            self.attention.retain(|&i| match proxies.get_mut(i) {
                Some(p) if owes_something(p) => true,
                Some(p) => {
                    p.flagged = false;
                    false
                }
                None => false,
            });
        }
        found
    }

    /// When the earliest delayed repair falls due.
    pub(super) fn earliest_repair(&self) -> Option<Instant> {
        self.attention
            .iter()
            .filter_map(|&i| self.proxies.get(i))
            .filter(|p| !p.requested.is_empty() || !p.frag_runs.is_empty())
            .filter_map(|p| p.repair_at)
            .min()
    }

    /// The proxy of `reader`.
    pub(super) fn proxy_index(&self, reader: &Guid) -> Option<usize> {
        if self.proxies.len() <= LINEAR_LOOKUP {
            self.proxies.iter().position(|p| p.remote.guid == *reader)
        } else {
            self.index.get(reader).copied()
        }
    }

    pub(super) fn proxy_mut(&mut self, reader: &Guid) -> Option<&mut ReaderProxy> {
        let i = self.proxy_index(reader)?;
        self.proxies.get_mut(i)
    }

    /// Adds a proxy, indexed and counted (flagged when it owes something).
    pub(super) fn push_proxy(&mut self, p: ReaderProxy) {
        let i = self.proxies.len();
        self.index.insert(p.remote.guid, i);
        if p.is_reliable() {
            if !p.synced {
                self.unsynced += 1;
            }
            self.floor = match self.floor {
                None => Some((p.acked, 1)),
                Some((m, _)) if p.acked < m => Some((p.acked, 1)),
                Some((m, n)) if p.acked == m => Some((m, n + 1)),
                keep => keep,
            };
        }
        self.proxies.push(p);
        self.flag_proxy(i);
    }

    /// Removes proxy `i` (the last one takes its place), keeping the index, the attention
    /// queue and the counts right.
    pub(super) fn remove_proxy(&mut self, i: usize) -> Option<ReaderProxy> {
        if i >= self.proxies.len() {
            return None;
        }
        let last = self.proxies.len() - 1;
        let gone = self.proxies.swap_remove(i);
        self.index.remove(&gone.remote.guid);
        if let Some(moved) = self.proxies.get(i) {
            self.index.insert(moved.remote.guid, i);
        }
        self.attention.retain(|&k| k != i);
        for k in self.attention.iter_mut().filter(|k| **k == last) {
            *k = i;
        }
        self.recount();
        Some(gone)
    }

    /// Reliable reader `i` answered a HEARTBEAT for the first time.
    pub(super) fn proxy_synced(&mut self, i: usize) {
        if let Some(p) = self.proxies.get_mut(i) {
            if !p.synced {
                p.synced = true;
                if p.is_reliable() {
                    self.unsynced = self.unsynced.saturating_sub(1);
                }
            }
        }
    }

    /// Reliable reader `i` acknowledged everything up to `acked` (more than before).
    pub(super) fn proxy_acked(&mut self, i: usize, acked: SequenceNumber) {
        let Some(p) = self.proxies.get_mut(i) else {
            return;
        };
        if acked <= p.acked {
            return;
        }
        let old = p.acked;
        p.acked = acked;
        if !p.is_reliable() {
            return;
        }
        if let Some((m, n)) = &mut self.floor {
            if old == *m {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    self.recount();
                }
            }
        }
    }

    /// Recomputes the floor, the unsynced count and the readers served alone from every
    /// proxy (after a removal, or a change of what a reader is).
    pub(super) fn recount(&mut self) {
        let mut floor: Option<(SequenceNumber, usize)> = None;
        let mut unsynced = 0;
        for p in self.proxies.iter().filter(|p| p.is_reliable()) {
            unsynced += usize::from(!p.synced);
            floor = match floor {
                None => Some((p.acked, 1)),
                Some((m, _)) if p.acked < m => Some((p.acked, 1)),
                Some((m, n)) if p.acked == m => Some((m, n + 1)),
                keep => keep,
            };
        }
        self.floor = floor;
        self.unsynced = unsynced;
        self.served_alone = self.proxies.iter().filter(|p| p.alone()).count();
        self.direct.clear();
        let direct = self.proxies.iter().filter(|p| p.served_directly());
        self.direct.extend(direct.filter_map(|p| {
            Some(super::direct::DirectReader {
                id: p.remote.guid.entity_id,
                slot: p.direct?,
                reliable: p.is_reliable(),
            })
        }));
    }

    /// The lowest sequence number every reliable reader acknowledged (`None`: no reliable
    /// reader is matched).
    pub(super) fn acked_floor(&self) -> Option<SequenceNumber> {
        self.floor.map(|(m, _)| m)
    }
}
