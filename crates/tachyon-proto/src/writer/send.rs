//! The writer's output: new data to every reader (packed, or in fragments), repairs and GAPs
//! to one reader, heartbeats. Everything is written straight into the caller's buffer.

use tachyon_wire::{
    DataFragSpec, DataSpec, EntityId, FragmentNumber, Guid, Header, Locator, MessageBuilder,
    PayloadKind, PlainData, SequenceNumber, SequenceNumberSet,
};

use super::proxy::{FragRun, ReaderProxy};
use super::{Writer, HEARTBEAT, HEARTBEAT_FRAG, INFO_DST, INFO_TS};
use crate::history::{CacheChange, ChangeKind};
use crate::layout;
use crate::layout::ByRef;
use crate::local::{LocalSamples, BY_REFERENCE_MIN};
use crate::time::Instant;
use crate::transmit::{Destination, Transmit};
use crate::WriterStats;

/// Where new data goes: the one unicast locator when every reader is reached there; else one
/// multicast group every reader listens on; else each reader's first unicast locator (once
/// per distinct locator). Readers of another representation than the writer's are served
/// alone (`transcode` module), those of the writer's own participant directly (`direct`
/// module): both are left out.
pub(super) fn fanout(all: &[ReaderProxy]) -> Option<Destination> {
    let proxies = || all.iter().filter(|p| !p.alone());
    let first = proxies().next()?;
    // One destination (one reader, or readers of one participant): unicast. A multicast
    // send would also wake every other member of the group on the way, this process's
    // own sockets included (multicast loopback), for nothing.
    if let Some(d) = first.dest {
        if proxies().all(|p| p.dest == Some(d)) {
            return Some(Destination::Unicast(d));
        }
    }
    let shared = first
        .remote
        .multicast_locators
        .iter()
        .find(|m| proxies().all(|p| p.remote.multicast_locators.contains(m)));
    if let Some(m) = shared {
        return Some(Destination::Multicast(*m));
    }
    // Each distinct unicast locator once (a set: a builtin writer has a reader per
    // participant, and this runs at every match).
    let mut seen = crate::maps::HashSet::default();
    let locs: Vec<Locator> = proxies()
        .filter_map(|p| p.dest)
        .filter(|l| seen.insert(*l))
        .collect();
    match locs.len() {
        0 => None,
        1 => Some(Destination::Unicast(locs[0])),
        _ => Some(Destination::Many(locs.into())),
    }
}

/// A GAP with an empty list (what a run of filtered-out samples takes).
const GAP: usize = 4 + 16 + 12;

/// Bytes of fragments of `change` that fit in `room` bytes left in a datagram.
fn fragments_that_fit(room: usize, qos: usize, fragment_size: u16) -> u32 {
    let fixed = INFO_TS + layout::data_frag(qos, 0);
    let per = room.saturating_sub(fixed) / usize::from(fragment_size.max(1));
    u32::try_from(per).unwrap_or(u32::MAX)
}

impl Writer {
    /// The writer's entity id when its samples carry their identity inline
    /// (`WriterConfig::sample_identity`, `layout::inline_qos_with`).
    fn identity(&self) -> Option<EntityId> {
        self.config.sample_identity.then_some(self.guid.entity_id)
    }

    /// Writes the next datagram into `buf`: new data first, then repairs, then heartbeats.
    pub(crate) fn poll_transmit(
        &mut self,
        now: Instant,
        header: &Header,
        buf: &mut [u8],
    ) -> Option<Transmit> {
        let max = self.config.max_datagram.min(buf.len());
        let out = &mut buf[..max];
        if let Some(t) = self.send_shm_echo(header, out) {
            return Some(t);
        }
        if let Some(t) = self.send_new(now, header, out) {
            return Some(t);
        }
        if let Some(t) = self.send_repairs(now, header, out) {
            return Some(t);
        }
        let t = self.send_heartbeats(header, out);
        if t.is_none() {
            self.become_quiet();
        }
        t
    }

    /// New data to every reader: as many whole samples as fit, or the next fragments of a
    /// sample too large for one datagram; a heartbeat ends the burst.
    fn send_new(&mut self, now: Instant, header: &Header, out: &mut [u8]) -> Option<Transmit> {
        let last = self.history.last_sn();
        if self.next_new > last {
            self.batch_sent();
            return None;
        }
        if self.holding(now) {
            return None;
        }
        let mut dest = self.fanout.clone()?;
        let reach = reach(&dest);
        // Readers of shared memory among others: a sample in shared memory goes to the
        // others by value, then to them as its reference (`send_shm_echo`).
        let split = self.fanout_split.clone();
        let mut mb = MessageBuilder::new(out, header).ok()?;
        let mut wrote = false;
        if !self.config.nack_suppression.is_zero()
            && self.pushed.back().map_or(true, |&(at, _)| at < now)
        {
            self.pushed.push_back((now, self.next_new));
        }
        if let Some((sn, last_fragment)) = self.hbfrag_due.take() {
            if sn == self.next_new && self.next_fragment > 0 {
                self.put_heartbeat_frag(&mut mb, sn, last_fragment)?;
                return Some(Transmit {
                    destination: dest,
                    len: mb.finish(),
                    priority: self.config.priority,
                });
            }
        }
        // A run of samples no reader's content filter wants, announced by one GAP.
        let mut gap_from: Option<SequenceNumber> = None;
        // Numbers this burst skips without a GAP (replaced or expired before they were
        // sent): its heartbeat says they are gone.
        let mut skipped = false;
        while self.next_new <= last {
            // Borrowed, not cloned (a clone was an `Arc` increment and decrement of its
            // payload per sample): what it is written with takes the writer's fields apart.
            let Some(change) = self.history.iter_from(self.next_new).next() else {
                self.next_new = SequenceNumber(last.0 + 1);
                break;
            };
            let sn = change.sn;
            if change.sn != self.next_new {
                // Replaced (KEEP_LAST) or expired before it was sent.
                self.next_new = change.sn;
                skipped = true;
                self.next_fragment = 0;
            }
            if self.all_filtered && self.next_fragment == 0 && !self.wanted(change) {
                if gap_from.is_none() {
                    if mb.remaining() < GAP {
                        break;
                    }
                    gap_from = Some(change.sn);
                }
                self.stats.filtered_out += 1;
                self.next_new = SequenceNumber(change.sn.0 + 1);
                wrote = true;
                continue;
            }
            let echo = split
                .as_ref()
                .filter(|_| by_reference(Reach::Shm, change).is_ref());
            if let Some((others, _)) = echo {
                if wrote || gap_from.is_some() {
                    break; // alone in its datagram, which goes to the others only
                }
                dest = others.clone();
            }
            if let Some(from) = gap_from.take() {
                put_gap(
                    &mut mb,
                    self.guid.entity_id,
                    from,
                    self.next_new,
                    &mut self.stats,
                )?;
            }
            let by_ref = by_reference(reach, change);
            // The usual change (alive, by value, at most a key hash inline) is written in one
            // step; any other builds its parameter list.
            let plain =
                layout::plain_inline_qos(self.config.keyed, self.identity(), change, by_ref);
            let qos = match plain {
                Some(_) => None,
                None => layout::inline_qos_with(self.config.keyed, self.identity(), change, by_ref),
            };
            let qos_len = match plain {
                Some(key_hash) => layout::plain_qos_len(key_hash),
                None => qos.as_ref().map_or(0, |q| q.as_bytes().len()),
            };
            let whole = INFO_TS + layout::data(qos_len, on_wire(change, by_ref));
            if self.next_fragment == 0 && whole <= mb.remaining() {
                if let Some(key_hash) = plain {
                    mb.info_ts_and_data(&PlainData {
                        time: change.source_timestamp,
                        reader_id: EntityId::UNKNOWN,
                        writer_id: self.guid.entity_id,
                        writer_sn: change.sn,
                        key_hash,
                        payload: &change.payload,
                    })
                    .ok()?;
                } else {
                    let to = DataTo {
                        reader: EntityId::UNKNOWN,
                        readers: self.fanout_readers(),
                        writer: self.guid,
                    };
                    put_data(
                        &mut mb,
                        &to,
                        change,
                        by_ref,
                        qos.as_ref(),
                        &mut self.stats,
                        &mut self.local,
                    )
                    .ok()?;
                }
                self.stats.data_sent += 1;
                self.next_new = SequenceNumber(change.sn.0 + 1);
                wrote = true;
                if let Some((_, shm)) = echo {
                    self.shm_echo = Some((shm.clone(), change.sn));
                    break;
                }
                continue;
            }
            if wrote {
                break;
            }
            // Too large for a datagram of its own: the next fragments.
            let first = self.next_fragment.max(1);
            let total = fragment_total(change, self.config.fragment_size);
            let room = fragments_that_fit(mb.remaining(), qos_len, self.config.fragment_size);
            let count = room.min(total + 1 - first).max(1);
            self.put_fragments(&mut mb, EntityId::UNKNOWN, change, first, count)
                .ok()?;
            self.stats.fragments_sent += u64::from(count);
            self.fragments_since_hbfrag += count;
            let next = first + count;
            if next > total {
                self.next_fragment = 0;
                self.next_new = SequenceNumber(change.sn.0 + 1);
                // Its last fragment: the reference follows.
                if let Some((_, shm)) = echo {
                    self.shm_echo = Some((shm.clone(), change.sn));
                }
            } else {
                self.next_fragment = next;
                let every = self.config.heartbeat_frag_interval;
                if every > 0 && self.fragments_since_hbfrag >= every && self.has_reliable() {
                    self.fragments_since_hbfrag = 0;
                    if mb.remaining() >= HEARTBEAT_FRAG {
                        self.put_heartbeat_frag(&mut mb, sn, next - 1)?;
                    } else {
                        // Fragments fill their datagrams (the fragment size is chosen so):
                        // it goes in one of its own, next.
                        self.hbfrag_due = Some((sn, next - 1));
                    }
                }
            }
            wrote = true;
            break;
        }
        if let Some(from) = gap_from.take() {
            self.put_gap(&mut mb, from)?;
        }
        if !wrote {
            return None;
        }
        if self.next_new > last {
            self.batch_sent();
        }
        let ask = self.next_new > last && self.has_reliable() && self.ack_wanted(now);
        if self.next_new > last && self.has_reliable() && self.piggyback_due(now, ask, skipped) {
            // End of the burst: tell the reliable readers what was sent, asking them to
            // acknowledge only now and then.
            if mb.remaining() >= HEARTBEAT {
                self.put_heartbeat_asking(&mut mb, EntityId::UNKNOWN, None, false, ask)
                    .ok()?;
                if ask {
                    self.ack_requested_at = Some(now);
                }
                self.piggybacked_at = Some(now);
            } else {
                self.heartbeat_now = true;
            }
        }
        if !self.has_reliable() {
            self.release();
        }
        Some(Transmit {
            destination: dest,
            len: mb.finish(),
            priority: self.config.priority,
        })
    }

    /// The reference of a sample in shared memory to the shared-memory readers, after its
    /// bytes went to the others (`send_new`); nothing when it is no longer kept (a reliable
    /// reader then gets it repaired by value).
    fn send_shm_echo(&mut self, header: &Header, out: &mut [u8]) -> Option<Transmit> {
        let (to, sn) = self.shm_echo.take()?;
        let change = self.history.get(sn).cloned();
        let result = (|| {
            let change = change?;
            let by_ref = by_reference(Reach::Shm, &change);
            if !by_ref.is_ref() {
                return None;
            }
            let mut mb = MessageBuilder::new(out, header).ok()?;
            let qos = layout::inline_qos_with(self.config.keyed, self.identity(), &change, by_ref);
            self.put_data(&mut mb, EntityId::UNKNOWN, &change, by_ref, qos.as_ref())
                .ok()?;
            self.stats.data_sent += 1;
            // The burst's heartbeat went to the others: the shared-memory readers get theirs.
            if self.next_new > self.history.last_sn()
                && self.has_reliable()
                && mb.remaining() >= HEARTBEAT
            {
                self.put_heartbeat_asking(&mut mb, EntityId::UNKNOWN, None, false, false)
                    .ok()?;
            }
            Some(Transmit {
                destination: to,
                len: mb.finish(),
                priority: self.config.priority,
            })
        })();
        if !self.has_reliable() {
            self.release();
        }
        result
    }

    /// Answers the requests of the first reader whose repair is due: data it lacks, GAPs for
    /// what it cannot have, then a heartbeat addressed to it.
    fn send_repairs(&mut self, now: Instant, header: &Header, out: &mut [u8]) -> Option<Transmit> {
        let i = self.next_repair_proxy(now)?;
        let Some(dest) = self.proxies[i].dest else {
            // Nowhere to send a repair: drop the requests, the reader will ask again.
            let p = &mut self.proxies[i];
            p.requested.clear();
            p.frag_runs.clear();
            p.repair_at = None;
            return None;
        };
        let reader = self.proxies[i].remote.guid;
        let mut mb = MessageBuilder::new(out, header).ok()?;
        mb.info_dst(reader.prefix).ok()?;
        let last = self.history.last_sn();
        let mut wrote = false;
        while let Some(&sn) = self.proxies[i].requested.first() {
            let p = &self.proxies[i];
            if p.transcode.is_some() && p.frag_runs.front().is_some_and(|r| r.sn < sn) {
                // An earlier sample is still going out in fragments: it goes first. A reader
                // served alone gets its new data this way, and a best-effort one drops a
                // sample older than the newest it has. (Repairs to other readers keep their
                // order: whole samples first.)
                break;
            }
            let first_relevant = self.proxies[i].first_relevant;
            if sn > last {
                self.proxies[i].requested.clear();
                break;
            }
            let held = if sn >= first_relevant {
                self.history.get(sn).cloned()
            } else {
                None
            };
            let held = match held {
                Some(c)
                    if c.kind == ChangeKind::Alive
                        && c.coherent.is_none()
                        && !self.proxies[i].wants(&c.payload) =>
                {
                    // Its content filter refuses it: irrelevant to this reader.
                    self.stats.filtered_out += 1;
                    None
                }
                other => other.and_then(|c| self.for_reader(i, c)),
            };
            let Some(change) = held else {
                // Not available to this reader: one GAP covers the whole unavailable run.
                let end = self.unavailable_run_end(sn, first_relevant, last);
                let list = SequenceNumberSet::empty(SequenceNumber(end.0 + 1));
                if layout::gap(&list) > mb.remaining() {
                    break;
                }
                mb.gap(reader.entity_id, self.guid.entity_id, sn, &list)
                    .ok()?;
                self.stats.gaps_sent += 1;
                let p = &mut self.proxies[i];
                p.requested = p.requested.split_off(&list.base);
                wrote = true;
                continue;
            };
            // Repairs go by value to shared memory: what a reader could not resolve once
            // it may not resolve again.
            let by_ref = if dest.kind == Locator::KIND_TACHYON_INTRA
                && self.proxies[i].transcode.is_none()
            {
                by_reference(Reach::Intra, &change)
            } else {
                ByRef::No
            };
            let qos = layout::inline_qos_with(self.config.keyed, self.identity(), &change, by_ref);
            let qos_len = qos.as_ref().map_or(0, |q| q.as_bytes().len());
            if INFO_TS + layout::data(qos_len, on_wire(&change, by_ref)) <= mb.remaining() {
                self.put_data(&mut mb, reader.entity_id, &change, by_ref, qos.as_ref())
                    .ok()?;
                self.stats.data_resent += 1;
                let window = self.config.repair_suppression;
                self.proxies[i].note_repair(now, sn, window);
                self.proxies[i].requested.remove(&sn);
                wrote = true;
                continue;
            }
            if wrote {
                break;
            }
            // A fragmented sample: resend all its fragments, a datagram at a time.
            let total = fragment_total(&change, self.config.fragment_size);
            let p = &mut self.proxies[i];
            p.requested.remove(&sn);
            p.frag_runs.retain(|r| r.sn != sn);
            p.frag_runs.push_front(FragRun {
                sn,
                first: 1,
                last: total,
            });
            break;
        }
        if !wrote {
            wrote = self.send_fragment_run(i, &mut mb)?;
        }
        let p = &mut self.proxies[i];
        if p.requested.is_empty() && p.frag_runs.is_empty() {
            p.repair_at = None;
            p.needs_heartbeat |= p.is_reliable();
        }
        if p.transcode.is_some() && !p.is_reliable() {
            // A best-effort reader served alone had what was kept for it.
            self.release();
        }
        if !wrote {
            return None;
        }
        // The heartbeat follows the last repair, not the first: a reader that answers it
        // before the repairs are in asks for them again (Cyclone DDS's readers then wait for
        // the next periodic heartbeat).
        let p = &self.proxies[i];
        let served = p.requested.is_empty() && p.frag_runs.is_empty();
        if p.needs_heartbeat && served && mb.remaining() >= HEARTBEAT {
            self.proxies[i].needs_heartbeat = false;
            let liveliness = std::mem::take(&mut self.proxies[i].liveliness_due);
            // New data to a reader served alone asks for acknowledgements as the fan-out's
            // piggybacked heartbeat does (now and then); a repair always asks.
            let ask = self.proxies[i].transcode.is_none() || self.ack_wanted(now);
            self.put_heartbeat_asking(&mut mb, reader.entity_id, Some(i), liveliness, ask)
                .ok()?;
            if ask && self.proxies[i].transcode.is_some() {
                self.ack_requested_at = Some(now);
            }
        }
        Some(Transmit {
            destination: Destination::Unicast(dest),
            len: mb.finish(),
            priority: self.config.priority,
        })
    }

    /// A HEARTBEAT_FRAG to every reader: fragments `1..=last_fragment` of `sn` were sent.
    fn put_heartbeat_frag(
        &mut self,
        mb: &mut MessageBuilder<'_>,
        sn: SequenceNumber,
        last_fragment: u32,
    ) -> Option<()> {
        self.heartbeat_frag_count = self.heartbeat_frag_count.wrapping_add(1);
        let c = tachyon_wire::Count(self.heartbeat_frag_count);
        let w = self.guid.entity_id;
        mb.heartbeat_frag(EntityId::UNKNOWN, w, sn, FragmentNumber(last_fragment), c)
            .ok()?;
        self.stats.heartbeat_frags_sent += 1;
        Some(())
    }

    /// Sends the next fragments of proxy `i`'s first fragment run; `Some(false)` if none could
    /// be sent (the run's sample is gone: the reader gets a GAP when it asks again).
    fn send_fragment_run(&mut self, i: usize, mb: &mut MessageBuilder<'_>) -> Option<bool> {
        while let Some(run) = self.proxies[i].frag_runs.front().copied() {
            let relevant = run.sn >= self.proxies[i].first_relevant;
            let change = self.history.get(run.sn).filter(|_| relevant).cloned();
            let Some(change) = change.and_then(|c| self.for_reader(i, c)) else {
                self.proxies[i].frag_runs.pop_front();
                continue;
            };
            let total = fragment_total(&change, self.config.fragment_size);
            let last = run.last.min(total);
            if run.first > last {
                self.proxies[i].frag_runs.pop_front();
                continue;
            }
            let qos =
                layout::inline_qos_with(self.config.keyed, self.identity(), &change, ByRef::No);
            let qos_len = qos.as_ref().map_or(0, |q| q.as_bytes().len());
            let room = fragments_that_fit(mb.remaining(), qos_len, self.config.fragment_size);
            let count = room.min(last + 1 - run.first).max(1);
            let reader = self.proxies[i].remote.guid.entity_id;
            self.put_fragments(mb, reader, &change, run.first, count)
                .ok()?;
            self.stats.fragments_resent += u64::from(count);
            let front = self.proxies[i].frag_runs.front_mut()?;
            front.first = run.first + count;
            if front.first > last {
                self.proxies[i].frag_runs.pop_front();
            }
            return Some(true);
        }
        Some(false)
    }

    /// Heartbeats: to every reader when one is due, else to one reader that needs its own.
    fn send_heartbeats(&mut self, header: &Header, out: &mut [u8]) -> Option<Transmit> {
        if self.heartbeat_now {
            self.heartbeat_now = false;
            let liveliness = std::mem::take(&mut self.heartbeat_liveliness);
            if let Some(dest) = self.fanout.clone() {
                if self.has_reliable() || liveliness {
                    let mut mb = MessageBuilder::new(out, header).ok()?;
                    self.put_heartbeat(&mut mb, EntityId::UNKNOWN, None, liveliness)
                        .ok()?;
                    for p in self.proxies.iter_mut().filter(|p| !p.alone()) {
                        p.needs_heartbeat = false;
                    }
                    return Some(Transmit {
                        destination: dest,
                        len: mb.finish(),
                        priority: self.config.priority,
                    });
                }
            }
        }
        loop {
            let i = self.next_heartbeat_proxy()?;
            self.proxies[i].needs_heartbeat = false;
            let Some(dest) = self.proxies[i].dest else {
                continue;
            };
            let reader = self.proxies[i].remote.guid;
            let mut mb = MessageBuilder::new(out, header).ok()?;
            if mb.remaining() < INFO_DST + HEARTBEAT {
                return None;
            }
            mb.info_dst(reader.prefix).ok()?;
            let liveliness = std::mem::take(&mut self.proxies[i].liveliness_due);
            self.put_heartbeat(&mut mb, reader.entity_id, Some(i), liveliness)
                .ok()?;
            return Some(Transmit {
                destination: Destination::Unicast(dest),
                len: mb.finish(),
                priority: self.config.priority,
            });
        }
    }

    /// The last sequence number of the run starting at `sn` that this reader cannot have.
    fn unavailable_run_end(
        &self,
        sn: SequenceNumber,
        first_relevant: SequenceNumber,
        last: SequenceNumber,
    ) -> SequenceNumber {
        let mut end = if sn < first_relevant {
            SequenceNumber(first_relevant.0 - 1).min(last)
        } else {
            sn
        };
        loop {
            let next = SequenceNumber(end.0 + 1);
            if next > last {
                return end;
            }
            match self.history.missing(next, last).next() {
                Some((from, to)) if from == next => end = to,
                _ => return end,
            }
        }
    }

    /// Whether some matched reader's content filter wants `change` (dispose and unregister
    /// go to everyone, and so do members of coherent sets: a GAP inside a set would make
    /// readers discard it, so their readers filter them on their side).
    fn wanted(&self, change: &CacheChange) -> bool {
        change.kind != ChangeKind::Alive
            || change.coherent.is_some()
            || self.proxies.iter().any(|p| p.wants(&change.payload))
    }

    /// A GAP to every reader: `from` up to the next sample to send are irrelevant.
    fn put_gap(&mut self, mb: &mut MessageBuilder<'_>, from: SequenceNumber) -> Option<()> {
        put_gap(
            mb,
            self.guid.entity_id,
            from,
            self.next_new,
            &mut self.stats,
        )
    }

    /// A DATA of `change` to `reader` ([`put_data`]).
    fn put_data(
        &mut self,
        mb: &mut MessageBuilder<'_>,
        reader: EntityId,
        change: &CacheChange,
        by_ref: ByRef<'_>,
        qos: Option<&tachyon_wire::builder::InlineQos>,
    ) -> Result<(), tachyon_wire::EmitError> {
        let to = DataTo {
            reader,
            readers: match reader {
                EntityId::UNKNOWN => self.fanout_readers(),
                _ => 1,
            },
            writer: self.guid,
        };
        put_data(
            mb,
            &to,
            change,
            by_ref,
            qos,
            &mut self.stats,
            &mut self.local,
        )
    }

    /// How many readers a DATA to all (the fan-out's) reaches: every matched one but those
    /// served alone.
    fn fanout_readers(&self) -> u32 {
        let n = self.proxies.len().saturating_sub(self.served_alone);
        u32::try_from(n).unwrap_or(u32::MAX)
    }

    fn put_fragments(
        &self,
        mb: &mut MessageBuilder<'_>,
        reader: EntityId,
        change: &CacheChange,
        first: u32,
        count: u32,
    ) -> Result<(), tachyon_wire::EmitError> {
        let size = usize::from(self.config.fragment_size);
        let len = change.payload.as_bytes().len();
        let first = first.max(1);
        let start = ((first - 1) as usize).saturating_mul(size).min(len);
        let end = (first.saturating_add(count).saturating_sub(1) as usize)
            .saturating_mul(size)
            .min(len);
        let qos = layout::inline_qos_with(self.config.keyed, self.identity(), change, ByRef::No);
        mb.info_ts(Some(change.source_timestamp))?;
        mb.data_frag(&DataFragSpec {
            reader_id: reader,
            writer_id: self.guid.entity_id,
            writer_sn: change.sn,
            fragment_starting_num: first,
            fragment_size: self.config.fragment_size,
            sample_size: u32::try_from(len).unwrap_or(u32::MAX),
            inline_qos: qos.as_ref().map(|q| q.as_bytes()),
            key: layout::payload_kind(change) == PayloadKind::Key,
            fragments: change.payload.get(start..end).unwrap_or(&[]),
        })
    }

    /// Appends a HEARTBEAT for every reader (`proxy` None) or for one. The final flag is set
    /// when nothing is outstanding for the readers it addresses.
    fn put_heartbeat(
        &mut self,
        mb: &mut MessageBuilder<'_>,
        reader: EntityId,
        proxy: Option<usize>,
        liveliness: bool,
    ) -> Result<(), tachyon_wire::EmitError> {
        self.put_heartbeat_asking(mb, reader, proxy, liveliness, true)
    }

    /// [`put_heartbeat`](Self::put_heartbeat), with the final flag also set when `ask` is
    /// false: readers answer only if they miss something.
    fn put_heartbeat_asking(
        &mut self,
        mb: &mut MessageBuilder<'_>,
        reader: EntityId,
        proxy: Option<usize>,
        liveliness: bool,
        ask: bool,
    ) -> Result<(), tachyon_wire::EmitError> {
        let (mut first, last) = self.heartbeat_range();
        let outstanding = match proxy.and_then(|i| self.proxies.get(i)) {
            Some(p) => {
                // A volatile reader matched late starts where it became relevant.
                first = first.max(p.first_relevant).min(SequenceNumber(last.0 + 1));
                // A reader that never answered must answer, even when there is nothing to
                // acknowledge (an empty writer): else it stays out of sync and is sent a
                // heartbeat forever.
                p.acked < last || (p.is_reliable() && !p.synced)
            }
            None => self.wants_heartbeats(),
        };
        let count = self.next_heartbeat_count();
        let requests_ack = outstanding && ask;
        mb.heartbeat(
            reader,
            self.guid.entity_id,
            first,
            last,
            count,
            !requests_ack,
            liveliness,
        )?;

        self.stats.heartbeats_sent += 1;
        Ok(())
    }
}

/// A GAP from `writer` to every reader: `from` up to `next_new` are irrelevant. A function
/// of the writer's fields, not a method: the sample being sent stays borrowed from its
/// history meanwhile.
fn put_gap(
    mb: &mut MessageBuilder<'_>,
    writer: EntityId,
    from: SequenceNumber,
    next_new: SequenceNumber,
    stats: &mut WriterStats,
) -> Option<()> {
    let list = SequenceNumberSet::empty(next_new);
    mb.gap(EntityId::UNKNOWN, writer, from, &list).ok()?;
    stats.gaps_sent += 1;
    Some(())
}

/// Whom a DATA goes to ([`put_data`]).
struct DataTo {
    /// The reader it addresses (ENTITYID_UNKNOWN: all of them).
    reader: EntityId,
    /// How many readers that is (who looks a sample kept for this process up).
    readers: u32,
    /// The writer.
    writer: Guid,
}

/// A DATA of `change`; `by_ref`: the sample handed by reference (`crate::local`: kept in
/// `local` for the readers of this process to look up; `crate::shared`: in a shared-memory
/// slot); `qos`: its inline QoS (`layout::inline_qos_with` of the same, built once by the
/// caller, which measured it). A function of the writer's fields, not a method: the change
/// stays borrowed from its history meanwhile.
fn put_data(
    mb: &mut MessageBuilder<'_>,
    to: &DataTo,
    change: &CacheChange,
    by_ref: ByRef<'_>,
    qos: Option<&tachyon_wire::builder::InlineQos>,
    stats: &mut WriterStats,
    local: &mut Option<std::sync::Arc<LocalSamples>>,
) -> Result<(), tachyon_wire::EmitError> {
    mb.info_ts(Some(change.source_timestamp))?;
    mb.data(&DataSpec {
        reader_id: to.reader,
        writer_id: to.writer.entity_id,
        writer_sn: change.sn,
        inline_qos: qos.map(|q| q.as_bytes()),
        kind: if by_ref.is_ref() {
            PayloadKind::None
        } else {
            layout::payload_kind(change)
        },
        payload: if by_ref.is_ref() {
            &[]
        } else {
            &change.payload
        },
    })?;
    if by_ref.is_ref() {
        stats.data_by_reference += 1;
    }
    if by_ref == ByRef::Local {
        let writer = to.writer;
        local
            .get_or_insert_with(|| LocalSamples::register(writer))
            .keep(change.sn, &change.payload, to.readers);
    }
    Ok(())
}

/// Whether every locator of `dest` is in this process (the in-process transport's).
/// Which transport every locator of `dest` belongs to, when it is one for all.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reach {
    Intra,
    Shm,
    Mixed,
}

fn reach(dest: &Destination) -> Reach {
    let of = |l: &Locator| match l.kind {
        Locator::KIND_TACHYON_INTRA => Reach::Intra,
        Locator::KIND_TACHYON_SHM => Reach::Shm,
        _ => Reach::Mixed,
    };
    match dest {
        Destination::Unicast(l) => of(l),
        Destination::Many(ls) => match ls.split_first() {
            Some((first, rest)) if rest.iter().all(|l| of(l) == of(first)) => of(first),
            _ => Reach::Mixed,
        },
        Destination::Multicast(_) => Reach::Mixed,
    }
}

/// `dest` split into the locators of other transports and those of shared memory, when it
/// has both.
pub(super) fn split_shm(dest: &Destination) -> Option<(Destination, Destination)> {
    let Destination::Many(ls) = dest else {
        return None;
    };
    let (shm, others): (Vec<Locator>, Vec<Locator>) =
        ls.iter().partition(|l| l.kind == Locator::KIND_TACHYON_SHM);
    let many = |mut v: Vec<Locator>| match v.len() {
        1 => v.pop().map(Destination::Unicast),
        _ => Some(Destination::Many(v.into())),
    };
    if shm.is_empty() || others.is_empty() {
        return None;
    }
    Some((many(others)?, many(shm)?))
}

/// How `change`, to destinations that are all `reach`, is carried: to readers of this
/// process, by reference when it has [`BY_REFERENCE_MIN`] bytes and more (smaller ones are
/// copied faster than looked up) or is held as its value (readers of the writer's type take
/// it without decoding; others have it serialized); to readers of shared memory, by reference when it lies in
/// a shared-memory slot (a loaned sample).
fn by_reference(reach: Reach, change: &CacheChange) -> ByRef<'_> {
    if change.kind != ChangeKind::Alive || change.is_coherent_end() {
        return ByRef::No;
    }
    match reach {
        Reach::Intra
            if change.payload.len() >= BY_REFERENCE_MIN
                || change.payload.shared_sample().is_some() =>
        {
            ByRef::Local
        }
        Reach::Shm => change
            .payload
            .shared_reference()
            .map_or(ByRef::No, ByRef::Shared),
        _ => ByRef::No,
    }
}

/// The payload bytes a DATA of `change` carries.
fn on_wire(change: &CacheChange, by_ref: ByRef<'_>) -> usize {
    if by_ref.is_ref() {
        0
    } else {
        // The bytes themselves (a sample held as a value is serialized here: it goes by
        // value), so what is measured is what is sent.
        change.payload.as_bytes().len()
    }
}

/// How many fragments `change` is cut into.
fn fragment_total(change: &CacheChange, fragment_size: u16) -> u32 {
    let n = change
        .payload
        .as_bytes()
        .len()
        .div_ceil(usize::from(fragment_size.max(1)));
    u32::try_from(n.max(1)).unwrap_or(u32::MAX)
}
