//! The reader's output: an ACKNACK per writer when one is due, followed by NACK_FRAGs for the
//! samples it holds only in part.

use tachyon_wire::{Count, Header, MessageBuilder, SequenceNumber, SequenceNumberSet};

use super::proxy::AckFor;
use super::Reader;
use crate::layout;
use crate::time::Instant;
use crate::transmit::{Destination, Transmit};

/// Bytes of a NACK_FRAG with the largest fragment set.
const NACK_FRAG_MAX: usize = 4 + 16 + 8 + 32 + 4;

/// NACK_FRAGs (of 256 fragments each) per sample in one message at most.
const NACK_FRAGS_PER_SAMPLE: usize = 8;

impl Reader {
    /// Whether no ACKNACK is due at `now`: nothing for
    /// [`poll_transmit`](Self::poll_transmit) to do.
    #[inline]
    pub(crate) fn acks_idle(&self, now: Instant) -> bool {
        self.ack_next.map_or(true, |at| now < at)
    }

    /// When the next ACKNACK falls due (`None`: not before something changes).
    pub(crate) fn acks_due_at(&self) -> Option<Instant> {
        self.ack_next
    }

    /// Writes the next ACKNACK (with NACK_FRAGs) into `buf`: the earliest due, so readers
    /// matched with many writers (discovery) serve them in turn.
    pub(crate) fn poll_transmit(
        &mut self,
        now: Instant,
        header: &Header,
        buf: &mut [u8],
    ) -> Option<Transmit> {
        loop {
            let &(at, writer) = self.ack_timers.first()?;
            if at > now {
                return None;
            }
            let Some(pi) = self.proxy_index(&writer) else {
                // Cannot happen (an unmatched proxy's timer leaves with it); never loop on it.
                self.ack_timers.remove(&(at, writer));
                self.ack_next = self.ack_timers.first().map(|&(t, _)| t);
                continue;
            };
            self.set_ack_at(pi, None);
            let Some(dest) = self.proxies[pi].dest else {
                continue;
            };
            let state = self.acknack_state(pi);
            let p = &mut self.proxies[pi];
            let only_hole = p.ack_for == AckFor::Hole;
            p.ack_for = AckFor::Preemptive;
            if only_hole && state.num_bits == 0 {
                // Due for a hole only, which filled meanwhile: nothing to say.
                continue;
            }
            let writer = p.remote.guid;
            // Until the writer's first HEARTBEAT, an ACKNACK asks for one (final flag clear)
            // and is repeated; afterwards one that requests nothing needs no answer.
            let preemptive = p.reliable && p.last_heartbeat.is_none();
            let next = p.next_preemptive_ack(now);
            self.set_ack_at(pi, next);
            let p = &mut self.proxies[pi];
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
            self.put_nack_frags(now, pi, &mut mb);
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

    /// NACK_FRAGs for the partly received samples of writer `pi`, as many as fit: the missing
    /// fragments the writer announced, but not those asked for whose repairs may still come
    /// (`frag_asks`). A set spans 256 fragments; a sample gets up to
    /// [`NACK_FRAGS_PER_SAMPLE`] of them, so a large sample's losses are all asked for at once.
    fn put_nack_frags(&mut self, now: Instant, pi: usize, mb: &mut MessageBuilder<'_>) {
        let p = &mut self.proxies[pi];
        let writer = p.remote.guid;
        let expected = p.expected;
        let highest = p.highest_known;
        let hint = p.frag_hint;
        p.frag_asks.forget_below(expected);
        let mut asks: Vec<(SequenceNumber, tachyon_wire::FragmentNumberSet)> = Vec::new();
        let mut held_back = false;
        for (sn, total) in self.reassembly.in_progress(writer) {
            if sn < expected {
                continue;
            }
            // Fragments not sent yet are not missing: clip to what the writer announced.
            let upto = if sn > highest {
                match hint {
                    Some((hsn, last)) if hsn == sn => last,
                    _ => continue,
                }
            } else {
                total
            };
            let flights = &self.proxies[pi].frag_asks;
            let held = &mut held_back;
            let mut from = 1;
            for _ in 0..NACK_FRAGS_PER_SAMPLE {
                if mb.remaining() < NACK_FRAG_MAX * (asks.len() + 1) {
                    break;
                }
                let Some(set) = self.reassembly.missing_from(writer, sn, from, upto, |n| {
                    let wait = flights.in_flight(now, sn, n);
                    *held |= wait;
                    wait
                }) else {
                    break;
                };
                from = set.base.0.saturating_add(256);
                asks.push((sn, set));
            }
        }
        // Fragments asked for now or held back are asked for again when their hold ends,
        // heartbeat or not (a retransmission timer: the repair or the request may be lost).
        let retry = held_back || !asks.is_empty();
        for (sn, missing) in asks {
            let p = &mut self.proxies[pi];
            p.nack_frag_count = p.nack_frag_count.wrapping_add(1);
            let count = Count(p.nack_frag_count);
            if mb
                .nack_frag(self.guid.entity_id, writer.entity_id, sn, &missing, count)
                .is_ok()
            {
                p.frag_asks.asked(now, sn, missing);
                self.stats.nack_frags_sent += 1;
            }
        }
        if retry {
            if let Some(at) = self.proxies[pi].frag_asks.retry_at(now) {
                self.ack_by(pi, at);
            }
        }
    }
}
