//! The reader's output: an ACKNACK per writer when one is due, followed by NACK_FRAGs for the
//! samples it holds only in part.

use tachyon_wire::{
    Count, FragmentNumber, Header, MessageBuilder, SequenceNumber, SequenceNumberSet,
};

use super::Reader;
use crate::layout;
use crate::time::Instant;
use crate::transmit::{Destination, Transmit};

/// Bytes of a NACK_FRAG with the largest fragment set.
const NACK_FRAG_MAX: usize = 4 + 16 + 8 + 32 + 4;

impl Reader {
    /// Whether no ACKNACK is due before some later time: nothing for
    /// [`poll_transmit`](Self::poll_transmit) to do at `now`.
    #[inline]
    pub(crate) fn acks_idle(&self, now: Instant) -> bool {
        self.acks_idle_until.is_some_and(|t| now < t)
    }

    /// After [`poll_transmit`](Self::poll_transmit) found nothing: when the next ACKNACK
    /// falls due (`None`: not before something changes).
    pub(crate) fn acks_due_at(&self) -> Option<Instant> {
        self.acks_idle_until.filter(|&t| t != Instant::MAX)
    }

    /// Writes the next ACKNACK (with NACK_FRAGs) into `buf`.
    pub(crate) fn poll_transmit(
        &mut self,
        now: Instant,
        header: &Header,
        buf: &mut [u8],
    ) -> Option<Transmit> {
        loop {
            if self.acks_idle(now) {
                return None;
            }
            let n = self.proxies.len();
            let Some(pi) = (0..n)
                .map(|k| (self.ack_cursor + k) % n)
                .find(|&i| self.proxies[i].ack_at.is_some_and(|at| at <= now))
            else {
                // Nothing is due before the earliest ACKNACK scheduled.
                let next = self.proxies.iter().filter_map(|p| p.ack_at).min();
                self.acks_idle_until = Some(next.unwrap_or(Instant::MAX));
                return None;
            };
            self.ack_cursor = (pi + 1) % n;
            self.proxies[pi].ack_at = None;
            let Some(dest) = self.proxies[pi].dest else {
                continue;
            };
            let state = self.acknack_state(pi);
            let p = &mut self.proxies[pi];
            let writer = p.remote.guid;
            // Until the writer's first HEARTBEAT, an ACKNACK asks for one (final flag clear)
            // and is repeated; afterwards one that requests nothing needs no answer.
            let preemptive = p.reliable && p.last_heartbeat.is_none();
            p.ack_at = p.next_preemptive_ack(now);
            let mut mb = MessageBuilder::new(&mut *buf, header).ok()?;
            mb.info_dst(writer.prefix).ok()?;
            if layout::acknack(&state) > mb.remaining() {
                return None;
            }
            p.acknack_count = p.acknack_count.wrapping_add(1);
            let count = Count(p.acknack_count);
            let final_flag = state.num_bits == 0 && !preemptive;
            mb.acknack(
                self.guid.entity_id,
                writer.entity_id,
                &state,
                count,
                final_flag,
            )
            .ok()?;
            self.stats.acknacks_sent += 1;
            self.put_nack_frags(pi, &mut mb);
            return Some(Transmit {
                destination: Destination::Unicast(dest),
                len: mb.finish(),
                priority: self.config.priority,
            });
        }
    }

    /// The ACKNACK of writer `pi`: everything before the next expected number is acknowledged;
    /// known numbers neither held nor being reassembled are requested.
    fn acknack_state(&self, pi: usize) -> SequenceNumberSet {
        let p = &self.proxies[pi];
        // Nothing received and nothing heard of: a pre-emptive ACKNACK.
        let nothing = p.expected == SequenceNumber(1) && p.highest_known < p.expected;
        if !p.synced || (nothing && p.last_heartbeat.is_none()) {
            return SequenceNumberSet::empty(SequenceNumber(
                crate::quirks::preemptive_acknack_base(p.remote.vendor),
            ));
        }
        let mut state = SequenceNumberSet::empty(p.expected);
        if p.highest_known < p.expected {
            return state;
        }
        let writer = p.remote.guid;
        let hi = p.highest_known.0.min(p.expected.0 + 255);
        let partial =
            |sn: SequenceNumber| self.reassembly.in_progress(writer).any(|(s, _)| s == sn);
        for n in p.expected.0..=hi {
            let sn = SequenceNumber(n);
            if !p.pending.contains_key(&sn) && !partial(sn) {
                state.insert(sn);
            }
        }
        state
    }

    /// NACK_FRAGs for the partly received samples of writer `pi`, as many as fit.
    fn put_nack_frags(&mut self, pi: usize, mb: &mut MessageBuilder<'_>) {
        let p = &self.proxies[pi];
        let writer = p.remote.guid;
        let expected = p.expected;
        let highest = p.highest_known;
        let hint = p.frag_hint;
        let mut asks: Vec<(SequenceNumber, tachyon_wire::FragmentNumberSet)> = Vec::new();
        for (sn, _total) in self.reassembly.in_progress(writer) {
            if sn < expected || mb.remaining() < NACK_FRAG_MAX * (asks.len() + 1) {
                continue;
            }
            let Some(mut missing) = self.reassembly.missing(writer, sn) else {
                continue;
            };
            // Fragments not sent yet are not missing: clip to what the writer announced.
            if sn > highest {
                match hint {
                    Some((hsn, last)) if hsn == sn => {
                        let mut clipped = tachyon_wire::FragmentNumberSet::empty(missing.base);
                        for n in missing.iter().filter(|n| n.0 <= last) {
                            clipped.insert(FragmentNumber(n.0));
                        }
                        missing = clipped;
                    }
                    _ => continue,
                }
            }
            if missing.num_bits > 0 {
                asks.push((sn, missing));
            }
        }
        for (sn, missing) in asks {
            let p = &mut self.proxies[pi];
            p.nack_frag_count = p.nack_frag_count.wrapping_add(1);
            let count = Count(p.nack_frag_count);
            if mb
                .nack_frag(self.guid.entity_id, writer.entity_id, sn, &missing, count)
                .is_ok()
            {
                self.stats.nack_frags_sent += 1;
            }
        }
    }
}
