//! [`Reader`]: the RTPS reader of one DataReader — one [`WriterProxy`] per matched writer,
//! in-order delivery with duplicate suppression (reliable), loss accounting (best effort),
//! reassembly of fragmented samples within limits, ACKNACK / NACK_FRAG, and the reader-side
//! timers (deadline, writer liveliness leases, autopurge, time-based filter).
//!
//! A reliable reader with KEEP_ALL whose cache is full stops delivering and stops acknowledging:
//! the writer keeps the samples and, its own cache filling up, blocks — end-to-end flow control.
//! Taking samples resumes delivery.

mod coherent;
mod frag_asks;
mod inline;
mod proxy;
use proxy::AckFor;
mod send;

use crate::maps::HashMap;
use std::collections::{BTreeSet, VecDeque};

use tachyon_cdr::KeyHash;
use tachyon_wire::{
    DataFragView, DataView, Guid, GuidPrefix, SequenceNumber, SequenceNumberSet, Time,
};

use crate::deadline::Deadlines;
use crate::endpoint::{LivelinessKind, ReaderConfig, Reliability, RemoteWriter};
use crate::event::Event;
use crate::frag::{FragmentInfo, Reassembler, ReassemblyOutcome};
use crate::history::{
    CacheChange, ChangeKind, Durability, History, Payload, PayloadPool, QosError, Query, ReadError,
    ReaderHistory, Sample,
};
use crate::local::LocalSamples;
use crate::shared::{Resolved, Via};
use crate::time::Instant;

use coherent::{Finished, SetParam};
use inline::InlineParams;
use proxy::{FragMeta, Pending, Received, WriterProxy, MAX_SN};

pub(crate) use proxy::Received as ReceivedChange;

use crate::ownership::Owners;

/// Counters of a reader, for diagnostics and the simulator's tables.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReaderStats {
    /// Changes delivered to the cache (data, dispose, unregister).
    pub delivered: u64,
    /// Samples received again after delivery or while already held.
    pub duplicates: u64,
    /// Samples dropped because they were too far ahead of the next expected one.
    pub out_of_window: u64,
    /// Samples lost (best effort: skipped sequence numbers).
    pub lost: u64,
    /// Samples refused by the cache's resource limits.
    pub rejected: u64,
    /// Samples dropped by TIME_BASED_FILTER.
    pub filtered: u64,
    /// Changes dropped by OWNERSHIP EXCLUSIVE: their writer did not own the instance.
    pub not_owner: u64,
    /// Changes dropped by DESTINATION_ORDER BY_SOURCE_TIMESTAMP: older than what the
    /// instance already took.
    pub out_of_order_source: u64,
    /// Samples dropped by the reader's content filter (before the cache).
    pub content_filtered: u64,
    /// DATA / DATA_FRAG that could not be used (no key hash, bad flags, refused fragments).
    pub malformed: u64,
    /// Submessages from writers this reader is not matched with.
    pub unknown_writer: u64,
    /// Out-of-order samples dropped because `max_pending_bytes` were held already (a reliable
    /// writer sends them again).
    pub pending_overflow: u64,
    /// Samples handed by reference (`crate::local`) that the writer no longer kept when their
    /// DATA was handled (a reliable writer sends them again).
    pub by_reference_missed: u64,
    /// ACKNACKs sent.
    pub acknacks_sent: u64,
    /// NACK_FRAGs sent.
    pub nack_frags_sent: u64,
    /// Coherent sets made visible whole (readers with coherent access).
    pub coherent_sets: u64,
    /// Coherent sets dropped because a sample of them did not arrive (GAP, loss, joined
    /// late), or a part of their publisher-wide set did not.
    pub coherent_sets_discarded: u64,
}

/// One writer's part of a publisher-wide coherent set, waiting for the other writers' parts
/// (collected by the participant across the readers of one subscriber).
#[derive(Debug)]
pub(crate) struct SetPart {
    pub writer: Guid,
    pub publisher: crate::history::PublisherSet,
    pub complete: bool,
    pub changes: Vec<Received>,
}

/// How long a hole that a later sample showed may take to fill before an ACKNACK asks for
/// it: a sample that came out of order (another path, a reordering network) is not repaired
/// for nothing, a lost one is asked for within a millisecond even when its writer fell
/// silent after it (its next piggybacked or periodic heartbeat would come up to 100 ms later).
pub const HOLE_WAIT: crate::time::Duration = crate::time::Duration::from_millis(1);

/// Up to this many matched writers, a proxy is found by a scan (faster than hashing for
/// the usual one or two); beyond, through the index.
const LINEAR_LOOKUP: usize = 8;

/// The reader of one DataReader. Owned and driven by the participant.
#[derive(Debug)]
pub(crate) struct Reader {
    guid: Guid,
    config: ReaderConfig,
    history: ReaderHistory,
    proxies: Vec<WriterProxy>,
    /// Where each matched writer is in `proxies`, for readers matched with many (discovery's
    /// builtin readers match every remote participant): a submessage finds its proxy in
    /// constant time.
    index: HashMap<Guid, usize>,
    /// The proxies' scheduled ACKNACKs, earliest first. Every change of a proxy's `ack_at`
    /// goes through [`set_ack_at`](Self::set_ack_at), so the next ACKNACK due, and the
    /// reader's next timer, are found without a pass over every matched writer.
    ack_timers: BTreeSet<(Instant, Guid)>,
    /// The earliest of `ack_timers`, kept beside it: asked after every event, it then costs
    /// no walk down the tree (cold in memory when a process holds thousands of readers).
    ack_next: Option<Instant>,
    /// Some matched writer has a finite liveliness lease (its expiry is a timer).
    leases: bool,
    /// Matched writers that are alive (LIVELINESS_CHANGED's alive_count).
    alive_count: usize,
    /// Payload bytes held in the proxies' `pending` maps.
    pending_bytes: usize,
    reassembly: Reassembler,
    /// Buffers for received payloads, recycled once the application drops its samples.
    pool: PayloadPool,
    /// New data since the last DataAvailable event.
    data_available: bool,
    /// A reliable KEEP_ALL reader whose cache refused a sample: delivery waits for a take.
    blocked: bool,
    /// Some matched writer has a finite lease renewed by any traffic of its participant
    /// (otherwise participant activity needs no scan of the proxies).
    participant_leases: bool,
    /// Some matched writer has a LIFESPAN (otherwise a delivered sample needs no look-up of
    /// its writer's).
    writer_lifespans: bool,
    /// Requested deadline per instance.
    deadlines: Deadlines,
    last_accepted: HashMap<KeyHash, Instant>,
    /// OWNERSHIP EXCLUSIVE: the owner of each instance (`None` for SHARED).
    owners: Option<Owners>,
    /// DESTINATION_ORDER BY_SOURCE_TIMESTAMP: the newest source timestamp each instance took.
    newest_source: HashMap<KeyHash, Time>,
    /// Parts of publisher-wide coherent sets for the participant to assemble.
    parts: Vec<SetPart>,
    /// The subscriber's `begin_access` is in force: whole sets wait in `deferred`.
    access_open: bool,
    deferred: Vec<(Guid, Vec<Received>)>,
    /// The content filter of a reader of a content-filtered topic: samples it refuses are
    /// treated as irrelevant (never cached, never counted against its limits).
    content_filter: Option<crate::filter::Hook>,
    /// The Rust type it reads, registered for writers of this process to share samples of
    /// it as values (`crate::local`).
    shared_type: Option<crate::local::ReaderType>,
    events: VecDeque<Event>,
    stats: ReaderStats,
}

impl Reader {
    /// A reader with no matched writer, or why `config` is inconsistent.
    pub(crate) fn new(guid: Guid, config: ReaderConfig) -> Result<Reader, QosError> {
        let mut history = ReaderHistory::new(config.history)?;
        let deadlines = Deadlines::new(config.deadline);
        let owners = config.exclusive_ownership.then(Owners::default);
        let p = config.presentation;
        history.set_ordered(p.ordered_access && p.access_scope >= crate::qos::AccessScope::Topic);
        Ok(Reader {
            guid,
            history,
            reassembly: Reassembler::new(config.reassembly),
            pool: PayloadPool::new(),
            config,
            proxies: Vec::new(),
            index: HashMap::default(),
            ack_timers: BTreeSet::new(),
            ack_next: None,
            leases: false,
            alive_count: 0,
            pending_bytes: 0,
            data_available: false,
            blocked: false,
            participant_leases: false,
            writer_lifespans: false,
            deadlines,
            last_accepted: HashMap::default(),
            owners,
            newest_source: HashMap::default(),
            parts: Vec::new(),
            access_open: false,
            deferred: Vec::new(),
            content_filter: None,
            shared_type: None,
            events: VecDeque::new(),
            stats: ReaderStats::default(),
        })
    }

    // ---- inputs ----------------------------------------------------------------------------

    /// A DATA from `writer`; `timestamp` from the preceding INFO_TS; `from_tachyon`: the
    /// message came from a Tachyon participant (its vendor-specific parameters are read);
    /// `via`: the transport it came through (a sample by reference can be looked up through
    /// the in-process one, `crate::local`, or resolved through shared memory, `crate::shared`).
    pub(crate) fn handle_data(
        &mut self,
        now: Instant,
        writer: Guid,
        timestamp: Option<Time>,
        d: &DataView<'_>,
        from_tachyon: bool,
        via: Via<'_>,
    ) {
        let sn = d.writer_sn();
        let Some(pi) = self.admit(now, &writer, sn) else {
            return;
        };
        let params = InlineParams::of(d.inline_qos());
        let (key_hash, status) = (params.key_hash(), params.status());
        let set = match coherent::set_param(&params, from_tachyon) {
            SetParam::None => None,
            SetParam::Member(set) => Some(set),
            SetParam::End(group) if d.serialized_payload().is_none() && status == 0 => {
                self.accept(now, pi, sn, Pending::End(group));
                return;
            }
            SetParam::End(_) | SetParam::Malformed if self.config.presentation.coherent_access => {
                self.stats.malformed += 1;
                tracing::debug!(reader = %self.guid, %writer, sn = sn.0,
                    "DATA with an unusable PID_COHERENT_SET");
                self.accept(now, pi, sn, Pending::Gap);
                return;
            }
            // Without coherent access the set parameters do not matter.
            SetParam::End(_) | SetParam::Malformed => None,
        };
        let local_ref = from_tachyon && params.local_sample.is_some();
        let shared_ref = params.shm_sample.filter(|_| from_tachyon);
        let missed = |me: &mut Reader, why: &str| {
            // Not received: a reliable reader asks for it again.
            me.stats.by_reference_missed += 1;
            tracing::debug!(reader = %me.guid, %writer, sn = sn.0, why,
                "sample by reference not available");
        };
        let decoded = match (local_ref, shared_ref, via) {
            (false, None, _) => {
                let payload = d.serialized_payload().unwrap_or(&[]);
                self.decode(key_hash, status, payload, d.is_key(), timestamp)
            }
            (true, None, Via::Intra) => match self.find_local(pi, &writer, sn) {
                Some(p) => self.decode_owned(key_hash, status, p, false, timestamp),
                None => return missed(self, "no longer kept by its writer"),
            },
            (false, Some(reference), Via::Shm(resolver)) => {
                match resolver.map(|r| r.resolve(reference)) {
                    Some(Resolved::Sample(p)) => {
                        self.decode_owned(key_hash, status, p, false, timestamp)
                    }
                    Some(Resolved::Missed(why)) => return missed(self, why),
                    None => return missed(self, "no resolver for shared-memory samples"),
                }
            }
            (true, None, _) => Err("a sample by reference from outside this process"),
            _ => Err("a sample by reference not through shared memory"),
        };
        let decoded = decoded.map(|r| Received { set, ..r });
        self.accept_decoded(now, pi, writer, sn, decoded, "DATA unusable");
    }

    /// The last step of every way a change arrives: a decoded change goes through the
    /// content filter and is accepted; one that could not be decoded is counted malformed,
    /// logged as `what`, and accepted as a gap (so it is neither asked for again nor waited on).
    fn accept_decoded(
        &mut self,
        now: Instant,
        pi: usize,
        writer: Guid,
        sn: SequenceNumber,
        decoded: Result<Received, &'static str>,
        what: &'static str,
    ) {
        let item = match decoded {
            Ok(r) => self.content_filter(r),
            Err(e) => {
                self.stats.malformed += 1;
                tracing::debug!(reader = %self.guid, %writer, sn = sn.0, error = e, "{what}");
                Pending::Gap
            }
        };
        self.accept(now, pi, sn, item);
    }

    /// A change of `writer`, a writer of this reader's own participant, handed over as it
    /// was written (`writer/direct.rs`): what [`handle_data`](Self::handle_data) does with a
    /// DATA carrying it, without the DATA (`keyed`: the writer's topic is keyed, so the DATA
    /// would carry its key hash).
    pub(crate) fn handle_local(
        &mut self,
        now: Instant,
        writer: Guid,
        change: &CacheChange,
        payload: Payload,
        keyed: bool,
    ) {
        let sn = change.sn;
        let Some(pi) = self.admit(now, &writer, sn) else {
            return;
        };
        let status = match change.kind {
            ChangeKind::Alive => 0,
            ChangeKind::NotAliveDisposed => 1,
            ChangeKind::NotAliveUnregistered => 2,
            ChangeKind::NotAliveDisposedUnregistered => 3,
        };
        let is_key = change.kind != ChangeKind::Alive && !payload.is_empty();
        let decoded = self.decode_owned(
            keyed.then_some(change.instance),
            status,
            payload,
            is_key,
            Some(change.source_timestamp),
        );
        self.accept_decoded(now, pi, writer, sn, decoded, "change unusable");
    }

    /// A DATA_FRAG from `writer`.
    pub(crate) fn handle_data_frag(
        &mut self,
        now: Instant,
        writer: Guid,
        timestamp: Option<Time>,
        d: &DataFragView<'_>,
    ) {
        let sn = d.writer_sn();
        let Some(pi) = self.admit(now, &writer, sn) else {
            return;
        };
        if let Some(q) = d.inline_qos() {
            let params = InlineParams::of(Some(q));
            let (key_hash, status) = (params.key_hash(), params.status());
            let set = match coherent::set_param(&params, false) {
                SetParam::Member(set) => Some(set),
                SetParam::None => None,
                SetParam::End(_) | SetParam::Malformed
                    if !self.config.presentation.coherent_access =>
                {
                    None
                }
                SetParam::End(_) | SetParam::Malformed => {
                    self.stats.malformed += 1;
                    tracing::debug!(reader = %self.guid, %writer, sn = sn.0,
                        "DATA_FRAG with an unusable PID_COHERENT_SET");
                    self.accept(now, pi, sn, Pending::Gap);
                    return;
                }
            };
            let max = self.config.reassembly.max_in_progress;
            self.proxies[pi].remember_meta(
                FragMeta {
                    sn,
                    key_hash,
                    status,
                    set,
                },
                max,
            );
        }
        let info = FragmentInfo {
            starting_num: d.fragment_starting_num().0,
            count: d.fragments_in_submessage(),
            fragment_size: d.fragment_size(),
            sample_size: d.sample_size(),
        };
        let outcome = self
            .reassembly
            .handle_fragment(now, writer, sn, info, d.payload());
        // Only fragments the reassembly took (their count checked against the payload).
        if outcome.is_ok() {
            self.proxies[pi]
                .frag_asks
                .received(now, sn, info.starting_num, u32::from(info.count));
        }
        match outcome {
            Ok(ReassemblyOutcome::Complete(bytes)) => {
                let meta = self.proxies[pi].take_meta(sn);
                let (key_hash, status, set) =
                    meta.map_or((None, 0, None), |m| (m.key_hash, m.status, m.set));
                let decoded = self
                    .decode_owned(key_hash, status, bytes, d.is_key(), timestamp)
                    .map(|r| Received { set, ..r });
                let what = "reassembled sample unusable";
                self.accept_decoded(now, pi, writer, sn, decoded, what);
            }
            Ok(ReassemblyOutcome::Incomplete | ReassemblyOutcome::Duplicate) => {}
            Err(e @ crate::frag::ReassemblyError::SampleTooLarge { .. }) => {
                // It will never fit: skip it rather than ask for it forever.
                self.stats.malformed += 1;
                tracing::debug!(reader = %self.guid, %writer, sn = sn.0, error = %e, "DATA_FRAG refused");
                self.accept(now, pi, sn, Pending::Gap);
            }
            Err(e) => {
                self.stats.malformed += 1;
                tracing::debug!(reader = %self.guid, %writer, sn = sn.0, error = %e, "DATA_FRAG refused");
            }
        }
    }

    /// A HEARTBEAT from `writer`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn handle_heartbeat(
        &mut self,
        now: Instant,
        writer: Guid,
        first: SequenceNumber,
        last: SequenceNumber,
        count: i32,
        final_flag: bool,
        liveliness: bool,
    ) {
        let Some(pi) = self.heard_from(now, &writer) else {
            return;
        };
        let volatile_reader = self.config.durability == Durability::Volatile;
        let delay = self.config.heartbeat_response_delay;
        let p = &mut self.proxies[pi];
        if !p.reliable || liveliness || p.last_heartbeat.is_some_and(|c| count <= c) {
            return;
        }
        if first.0 < 1 || last.0 < first.0 - 1 || last.0 > MAX_SN {
            self.stats.malformed += 1;
            tracing::debug!(reader = %self.guid, %writer, first = first.0, last = last.0,
                "HEARTBEAT with an impossible range");
            return;
        }
        p.last_heartbeat = Some(count);
        p.frag_asks.heartbeat(now);
        if !p.synced {
            p.synced = true;
            p.expected = if volatile_reader && p.remote.durability != Durability::Volatile {
                SequenceNumber(last.0 + 1)
            } else {
                first
            };
        }
        p.highest_known = p.highest_known.max(last);
        if first > p.expected {
            // Whatever is older than `first` is no longer available.
            self.advance_to(now, pi, first);
        }
        let p = &self.proxies[pi];
        let missing = p.expected <= p.highest_known
            && (p.expected..=p.highest_known).any_missing(|sn| !p.pending.contains_key(&sn));
        if !final_flag || missing {
            self.ack_by(pi, now + delay);
        }
    }

    /// A HEARTBEAT_FRAG: fragments `1..=last_fragment` of `sn` were sent.
    pub(crate) fn handle_heartbeat_frag(
        &mut self,
        now: Instant,
        writer: Guid,
        sn: SequenceNumber,
        last_fragment: u32,
        count: i32,
    ) {
        let Some(pi) = self.heard_from(now, &writer) else {
            return;
        };
        let delay = self.config.heartbeat_response_delay;
        let window = self.config.max_out_of_order;
        let p = &mut self.proxies[pi];
        if !p.reliable || p.last_heartbeat_frag.is_some_and(|c| count <= c) {
            return;
        }
        p.last_heartbeat_frag = Some(count);
        p.frag_asks.heartbeat(now);
        if p.synced && p.wants(sn, window) {
            p.frag_hint = Some((sn, last_fragment));
            self.ack_by(pi, now + delay);
        }
    }

    /// A GAP: `start..list.base` and the set bits of `list` are irrelevant.
    pub(crate) fn handle_gap(
        &mut self,
        now: Instant,
        writer: Guid,
        start: SequenceNumber,
        list: &SequenceNumberSet,
    ) {
        let Some(pi) = self.heard_from(now, &writer) else {
            return;
        };
        if start.0 < 1 || list.base < start || list.base.0 > MAX_SN {
            self.stats.malformed += 1;
            tracing::debug!(reader = %self.guid, %writer, start = start.0, base = list.base.0,
                "GAP with an impossible range");
            return;
        }
        let p = &mut self.proxies[pi];
        if !p.synced {
            // Nothing delivered yet: the writer starts after the gap.
            if !p.reliable {
                return;
            }
            p.synced = true;
            p.expected = start;
        }
        if !p.reliable {
            // Best effort: skipped numbers covered by a GAP were not lost.
            if start <= p.expected && list.base > p.expected {
                p.expected = list.base;
            }
            return;
        }
        p.highest_known = p
            .highest_known
            .max(SequenceNumber(list.base.0.saturating_sub(1)));
        if start <= p.expected {
            if list.base > p.expected {
                self.advance_to(now, pi, list.base);
            }
        } else {
            let hi = SequenceNumber(list.base.0 - 1);
            let window_end = p
                .expected
                .0
                .saturating_add(self.config.max_out_of_order as i64);
            let mut sn = start;
            while sn <= hi && sn.0 < window_end {
                self.accept(now, pi, sn, Pending::Gap);
                sn = SequenceNumber(sn.0 + 1);
            }
        }
        for sn in list.iter() {
            if self.proxies[pi].wants(sn, self.config.max_out_of_order) {
                self.accept(now, pi, sn, Pending::Gap);
            }
        }
    }

    /// Any message from participant `prefix` arrived: renews the liveliness of its writers
    /// whose liveliness is asserted per participant.
    /// Returns whether it raised an event (a writer came back alive).
    #[inline]
    /// Whether some matched writer's liveliness follows its participant's activity (a lease,
    /// not MANUAL_BY_TOPIC): only then does [`handle_participant_activity`] do anything.
    ///
    /// [`handle_participant_activity`]: Self::handle_participant_activity
    pub(crate) fn follows_participant_leases(&self) -> bool {
        self.participant_leases
    }

    pub(crate) fn handle_participant_activity(&mut self, now: Instant, prefix: GuidPrefix) -> bool {
        // Asked of every reader for every datagram: most follow no participant's lease.
        self.participant_leases && self.renew_participant(now, prefix)
    }

    fn renew_participant(&mut self, now: Instant, prefix: GuidPrefix) -> bool {
        let mut revived = false;
        for i in 0..self.proxies.len() {
            let p = &self.proxies[i];
            if p.remote.guid.prefix == prefix
                && p.remote.liveliness.kind != LivelinessKind::ManualByTopic
            {
                revived |= self.renew(now, i);
            }
        }
        revived
    }

    /// Timers: acknowledgements are sent from `poll_transmit`; here leases, deadlines,
    /// autopurge and abandoned reassemblies.
    pub(crate) fn handle_timeout(&mut self, now: Instant) {
        // Leases: only when a writer has one (not a builtin reader's, one per participant).
        let leased = if self.leases { self.proxies.len() } else { 0 };
        for i in 0..leased {
            let p = &mut self.proxies[i];
            if p.alive && p.lease_expiry.is_some_and(|at| at <= now) {
                p.alive = false;
                self.alive_count = self.alive_count.saturating_sub(1);
                p.lease_expiry = None;
                let writer = p.remote.guid;
                self.history.writer_lost(now, writer);
                if let Some(o) = &mut self.owners {
                    o.writer_gone(writer);
                }
                self.data_available = true;
                self.liveliness_changed(writer, false);
            }
        }
        let (events, reader) = (&mut self.events, self.guid.entity_id);
        let owners = &mut self.owners;
        self.deadlines.fire(now, |instance| {
            if let Some(o) = owners.as_mut() {
                o.deadline_missed(&instance);
            }
            events.push_back(Event::RequestedDeadlineMissed { reader, instance });
        });
        if self.history.next_purge().is_some_and(|at| at <= now) {
            self.history.purge(now);
        }
        self.history.expire(now);
        self.reassembly.expire(now, self.config.reassembly_timeout);
        self.flush_data_available();
    }

    // ---- commands --------------------------------------------------------------------------

    /// Applies the QoS changeable after creation: deadline timers restart with the new
    /// period, the time-based filter applies to samples received from now on, the autopurge
    /// delays at the next purge check.
    pub(crate) fn update(&mut self, now: Instant, u: crate::endpoint::ReaderUpdate) {
        self.config.deadline = u.deadline;
        self.config.time_based_filter = u.time_based_filter;
        if u.time_based_filter.is_none() {
            self.last_accepted.clear();
        }
        self.config.history.lifecycle = u.lifecycle;
        self.history.set_lifecycle(u.lifecycle);
        self.deadlines.set_period(now, u.deadline);
    }

    /// Sets (or removes) the content filter: samples received from now on that it refuses
    /// never reach the cache; dispose and unregister always pass.
    /// The reader reads Rust type `ty`: writers of this process writing it may hand it
    /// their samples as values.
    pub(crate) fn set_shared_type(&mut self, ty: std::any::TypeId) {
        self.shared_type = Some(crate::local::ReaderType::register(self.guid, ty));
    }

    pub(crate) fn set_content_filter(&mut self, filter: Option<crate::filter::SampleFilter>) {
        self.content_filter = filter.map(crate::filter::Hook);
    }

    /// Matches a writer (or updates its locators when already matched).
    pub(crate) fn match_writer(&mut self, now: Instant, remote: RemoteWriter) {
        if let Some(i) = self.proxy_index(&remote.guid) {
            let p = &mut self.proxies[i];
            p.dest = remote.unicast_locators.first().copied();
            if let Some(o) = &mut self.owners {
                o.strength_changed(remote.guid, remote.ownership_strength);
            }
            p.remote = remote;
            self.update_writer_flags();
            return;
        }
        let reliable = self.config.reliability == Reliability::Reliable
            && remote.reliability == Reliability::Reliable;
        // A volatile reader of a transient-local writer starts where the writer is when first
        // heard; a best-effort reader starts with the first sample it gets.
        let synced = reliable
            && !(self.config.durability == Durability::Volatile
                && remote.durability != Durability::Volatile);
        let guid = remote.guid;
        let p = WriterProxy::new(now, remote, self.config.reliability, synced);
        let reliable = p.reliable;
        // The flags of `update_writer_flags`, for one more writer (not a walk over all).
        let liveliness = &p.remote.liveliness;
        self.participant_leases |=
            liveliness.lease_duration.is_some() && liveliness.kind != LivelinessKind::ManualByTopic;
        self.writer_lifespans |= p.remote.lifespan.is_some();
        self.leases |= liveliness.lease_duration.is_some();
        self.alive_count += usize::from(p.alive);
        self.index.insert(guid, self.proxies.len());
        self.proxies.push(p);
        if reliable {
            // A pre-emptive ACKNACK makes the writer announce itself at once (`ack_for` is
            // `Preemptive` in a new proxy).
            self.set_ack_at(self.proxies.len() - 1, Some(now));
        }
        self.events.push_back(Event::SubscriptionMatched {
            reader: self.guid.entity_id,
            remote: guid,
            matched: true,
            current_count: self.proxies.len(),
        });
        // A newly matched writer counts as alive (LIVELINESS_CHANGED alive_count, as every
        // vendor reports it) until its lease says otherwise.
        self.liveliness_changed(guid, true);
    }

    /// Unmatches a writer: its instances lose it as a writer. False if it was unknown.
    pub(crate) fn unmatch_writer(&mut self, now: Instant, writer: &Guid) -> bool {
        let Some(i) = self.proxy_index(writer) else {
            return false;
        };
        self.set_ack_at(i, None);
        let gone = self.proxies.swap_remove(i);
        self.index.remove(writer);
        if let Some(moved) = self.proxies.get(i) {
            self.index.insert(moved.remote.guid, i);
        }
        let was_alive = gone.alive;
        if was_alive {
            self.alive_count = self.alive_count.saturating_sub(1);
        }
        self.pending_bytes = self
            .pending_bytes
            .saturating_sub(gone.pending.values().map(Pending::bytes).sum());
        self.update_writer_flags();
        if was_alive {
            // It leaves alive_count (LIVELINESS_CHANGED), without becoming "not alive".
            self.liveliness_changed(*writer, false);
        }
        self.reassembly.discard_writer(*writer);
        self.history.writer_lost(now, *writer);
        if let Some(o) = &mut self.owners {
            o.writer_gone(*writer);
        }
        self.data_available = true;
        self.events.push_back(Event::SubscriptionMatched {
            reader: self.guid.entity_id,
            remote: *writer,
            matched: false,
            current_count: self.proxies.len(),
        });
        self.flush_data_available();
        true
    }

    /// `read` (keeps the samples, marks them read).
    pub(crate) fn read(
        &mut self,
        query: &Query,
        out: &mut Vec<Sample>,
    ) -> Result<usize, ReadError> {
        self.history.read(query, out)
    }

    /// `take` (removes the samples); a blocked reader resumes delivery.
    /// Whether samples are held back because the cache is full (RESOURCE_LIMITS), until a
    /// take makes room.
    pub(crate) fn is_blocked(&self) -> bool {
        self.blocked
    }

    pub(crate) fn take(
        &mut self,
        clock: impl FnOnce() -> Instant,
        query: &Query,
        out: &mut Vec<Sample>,
    ) -> Result<usize, ReadError> {
        // The time matters only to expire samples by their lifespan and to resume what a
        // full cache held back.
        let now = (self.history.next_expiry().is_some() || self.blocked).then(clock);
        if let Some(now) = now {
            self.history.expire(now);
        }
        let n = self.history.take(query, out)?;
        if let (true, true, Some(now)) = (self.blocked, n > 0, now) {
            self.blocked = false;
            for i in 0..self.proxies.len() {
                self.drain(now, i);
            }
            self.flush_data_available();
        }
        Ok(n)
    }

    // ---- outputs ---------------------------------------------------------------------------

    /// When the next timer or acknowledgement is due.
    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        let acks = self.ack_next;
        // Walked only when some writer has a liveliness lease (builtin readers have one
        // proxy per participant and none).
        let leases = self
            .leases
            .then(|| {
                self.proxies
                    .iter()
                    .filter_map(|p| p.lease_expiry.filter(|_| p.alive))
                    .min()
            })
            .flatten();
        // Strictly after the age limit: `expire` keeps what is exactly `max_age` old.
        let reassembly = self
            .reassembly
            .next_expiry(self.config.reassembly_timeout)
            .and_then(|t| t.checked_add(crate::time::Duration::from_nanos(1)));
        crate::time::earliest([
            self.deadlines.next(),
            self.history.next_purge(),
            self.history.next_expiry(),
            reassembly,
            acks,
            leases,
        ])
    }

    /// The next event.
    pub(crate) fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Whether [`poll_event`](Self::poll_event) has one.
    pub(crate) fn has_events(&self) -> bool {
        !self.events.is_empty()
    }

    // ---- getters ---------------------------------------------------------------------------

    pub(crate) fn guid(&self) -> Guid {
        self.guid
    }

    pub(crate) fn forget_taken_instances(&mut self) {
        self.history.set_forget_taken(true);
    }

    pub(crate) fn history(&self) -> &ReaderHistory {
        &self.history
    }

    pub(crate) fn stats(&self) -> ReaderStats {
        self.stats
    }

    pub(crate) fn reassembly(&self) -> &Reassembler {
        &self.reassembly
    }

    /// Samples held out of order over all writers.
    pub(crate) fn pending_len(&self) -> usize {
        self.proxies.iter().map(|p| p.pending.len()).sum()
    }

    /// Payload bytes held out of order over all writers.
    pub(crate) fn pending_bytes(&self) -> usize {
        self.pending_bytes
    }

    /// Guids of the matched writers.
    pub(crate) fn matched_writers(&self) -> impl Iterator<Item = Guid> + '_ {
        self.proxies.iter().map(|p| p.remote.guid)
    }

    /// Whether this reader is matched with `writer`.
    pub(crate) fn is_matched_with(&self, writer: &Guid) -> bool {
        self.proxy_index(writer).is_some()
    }

    // ---- internals -------------------------------------------------------------------------

    /// Recomputes what the matched writers' QoS asks of the receive path.
    fn update_writer_flags(&mut self) {
        self.participant_leases = self.proxies.iter().any(|p| {
            p.remote.liveliness.lease_duration.is_some()
                && p.remote.liveliness.kind != LivelinessKind::ManualByTopic
        });
        self.writer_lifespans = self.proxies.iter().any(|p| p.remote.lifespan.is_some());
        self.leases = self
            .proxies
            .iter()
            .any(|p| p.remote.liveliness.lease_duration.is_some());
    }

    fn proxy_index(&self, writer: &Guid) -> Option<usize> {
        if self.proxies.len() <= LINEAR_LOOKUP {
            self.proxies.iter().position(|p| p.remote.guid == *writer)
        } else {
            self.index.get(writer).copied()
        }
    }

    /// Schedules (or with `None` cancels) the ACKNACK to proxy `pi`.
    fn set_ack_at(&mut self, pi: usize, at: Option<Instant>) {
        let Some(p) = self.proxies.get_mut(pi) else {
            return;
        };
        if p.ack_at == at {
            return;
        }
        if let Some(old) = p.ack_at {
            self.ack_timers.remove(&(old, p.remote.guid));
        }
        if let Some(new) = at {
            self.ack_timers.insert((new, p.remote.guid));
        }
        p.ack_at = at;
        self.ack_next = self.ack_timers.first().map(|&(t, _)| t);
    }

    /// A sample showed a hole before it that no heartbeat announced (a writer piggybacks one
    /// only now and then, `writer::HEARTBEAT_PIGGYBACK_INTERVAL`): an ACKNACK asks for it
    /// after [`HOLE_WAIT`] (or the heartbeat response delay, if longer), unless the hole
    /// filled by then (a sample that came out of order). One already due for another reason
    /// stays as it is.
    fn ask_for_hole(&mut self, now: Instant, pi: usize) {
        let at = now + self.config.heartbeat_response_delay.max(HOLE_WAIT);
        let Some(p) = self.proxies.get_mut(pi) else {
            return;
        };
        let moot = p.ack_for == AckFor::Preemptive && p.last_heartbeat.is_some();
        match p.ack_at {
            // Due anyway (asked for, or pre-emptive still): it asks for the hole too, by
            // `at` at the latest.
            Some(due) if !moot => {
                if due > at {
                    self.set_ack_at(pi, Some(at));
                }
            }
            _ => {
                p.ack_for = AckFor::Hole;
                self.set_ack_at(pi, Some(at));
            }
        }
    }

    /// An ACKNACK to proxy `pi` is due by `at` (an earlier one stays).
    fn ack_by(&mut self, pi: usize, at: Instant) {
        let Some(p) = self.proxies.get_mut(pi) else {
            return;
        };
        p.ack_for = AckFor::Asked;
        let at = p.ack_at.map_or(at, |a| a.min(at));
        self.set_ack_at(pi, Some(at));
    }

    /// A submessage from `writer` arrived: its matched proxy (renewed), or `None` (counted)
    /// when this reader is not matched with it.
    fn heard_from(&mut self, now: Instant, writer: &Guid) -> Option<usize> {
        let Some(pi) = self.proxy_index(writer) else {
            self.stats.unknown_writer += 1;
            tracing::debug!(reader = %self.guid, %writer, "submessage of an unmatched writer dropped");
            return None;
        };
        self.renew(now, pi);
        Some(pi)
    }

    /// [`heard_from`](Self::heard_from) for a DATA / DATA_FRAG with `sn`: `None` (counted)
    /// also when the sample is not wanted any more.
    fn admit(&mut self, now: Instant, writer: &Guid, sn: SequenceNumber) -> Option<usize> {
        let pi = self.heard_from(now, writer)?;
        if self.proxies[pi].wants(sn, self.config.max_out_of_order) {
            return Some(pi);
        }
        self.count_unwanted(pi, sn);
        None
    }

    fn count_unwanted(&mut self, pi: usize, sn: SequenceNumber) {
        let p = &self.proxies[pi];
        if sn >= p.expected && p.reliable && !p.pending.contains_key(&sn) {
            self.stats.out_of_window += 1;
        } else {
            self.stats.duplicates += 1;
        }
    }

    /// Renews the lease of writer `pi`; a writer that was not alive is alive again.
    /// Renews writer `pi`'s lease; returns whether it came back alive (an event was raised).
    fn renew(&mut self, now: Instant, pi: usize) -> bool {
        let p = &mut self.proxies[pi];
        if let Some(lease) = p.remote.liveliness.lease_duration {
            p.lease_expiry = Some(now + lease);
        }
        if p.alive {
            return false;
        }
        p.alive = true;
        self.alive_count += 1;
        let writer = p.remote.guid;
        self.liveliness_changed(writer, true);
        true
    }

    fn liveliness_changed(&mut self, writer: Guid, alive: bool) {
        let alive_count = self.alive_count;
        debug_assert_eq!(alive_count, self.proxies.iter().filter(|p| p.alive).count());
        self.events.push_back(Event::LivelinessChanged {
            reader: self.guid.entity_id,
            writer,
            alive,
            alive_count,
            not_alive_count: self.proxies.len() - alive_count,
        });
    }

    /// Takes a change (or gap) with sequence number `sn` from writer `pi`.
    fn accept(&mut self, now: Instant, pi: usize, sn: SequenceNumber, item: Pending) {
        let p = &mut self.proxies[pi];
        if !p.synced {
            p.synced = true;
            p.expected = sn;
        }
        // Numbers between what was known of the writer and this one were never heard of.
        let new_hole = sn.0 > p.highest_known.0.saturating_add(1) && sn > p.expected;
        p.highest_known = p.highest_known.max(sn);
        if !p.reliable {
            if sn < p.expected {
                self.stats.duplicates += 1;
                return;
            }
            let lost = u64::try_from(sn.0 - p.expected.0).unwrap_or(0);
            p.expected = SequenceNumber(sn.0 + 1);
            let writer = p.remote.guid;
            self.forget_fragments_below(pi);
            if lost > 0 {
                self.stats.lost += lost;
                self.events.push_back(Event::SampleLost {
                    reader: self.guid.entity_id,
                    writer,
                    count: lost,
                });
                self.proxies[pi].sets.hole();
            }
            // Best effort never blocks: a refused sample is dropped and reported.
            let _ = self.consume(now, pi, sn, item, false);
            self.flush_data_available();
            return;
        }
        if sn < p.expected || p.pending.contains_key(&sn) {
            self.stats.duplicates += 1;
            return;
        }
        if sn != p.expected || self.blocked {
            let bytes = item.bytes();
            if self.pending_bytes + bytes > self.config.max_pending_bytes {
                // Not held, so not acknowledged: the writer repairs it once the hole before
                // it is filled.
                self.stats.pending_overflow += 1;
                tracing::debug!(reader = %self.guid, writer = %p.remote.guid, sn = sn.0,
                    "out-of-order sample dropped: pending bytes limit reached");
                return;
            }
            self.pending_bytes += bytes;
            p.pending.insert(sn, item);
            if new_hole {
                self.ask_for_hole(now, pi);
            }
            self.flush_data_available();
            return;
        }
        // The common case, the next one in order: deliver without touching the pending map.
        if let Err(c) = self.consume(now, pi, sn, item, true) {
            // Held beyond the byte limit if need be: it was accepted already.
            self.pending_bytes += c.payload.len();
            self.proxies[pi].pending.insert(sn, Pending::Change(c));
            self.blocked = true;
            self.flush_data_available();
            return;
        }
        let p = &mut self.proxies[pi];
        p.expected = SequenceNumber(sn.0 + 1);
        if !p.pending.is_empty() {
            self.drain(now, pi);
        }
        self.forget_fragments_below(pi);
        self.flush_data_available();
    }

    /// Writer `pi` is expected next at `expected`: the fragments of what came before are
    /// dropped. A reader that holds no fragment state (most of them) does nothing.
    fn forget_fragments_below(&mut self, pi: usize) {
        let p = &self.proxies[pi];
        if self.reassembly.is_empty() && p.frag_meta.is_empty() && p.frag_hint.is_none() {
            return;
        }
        let (writer, expected) = (p.remote.guid, p.expected);
        self.reassembly.discard_below(writer, expected);
        self.proxies[pi].forget_delivered();
    }

    /// Delivers the pending changes of writer `pi` that are next in order.
    fn drain(&mut self, now: Instant, pi: usize) {
        let writer = self.proxies[pi].remote.guid;
        let mut advanced = false;
        while !self.blocked {
            let p = &mut self.proxies[pi];
            let Some(entry) = p.pending.first_entry() else {
                break;
            };
            if *entry.key() != p.expected {
                break;
            }
            let item = entry.remove();
            self.pending_bytes = self.pending_bytes.saturating_sub(item.bytes());
            let sn = p.expected;
            if let Err(c) = self.consume(now, pi, sn, item, true) {
                // The cache is full (KEEP_ALL): keep it, stop acknowledging past it.
                self.pending_bytes += c.payload.len();
                self.proxies[pi].pending.insert(sn, Pending::Change(c));
                self.blocked = true;
                break;
            }
            let p = &mut self.proxies[pi];
            p.expected = SequenceNumber(sn.0 + 1);
            advanced = true;
        }
        if advanced {
            let expected = self.proxies[pi].expected;
            self.reassembly.discard_below(writer, expected);
            self.proxies[pi].forget_delivered();
        }
    }

    /// Skips writer `pi` forward to `to`: changes already held below it are delivered, the
    /// rest are no longer available.
    fn advance_to(&mut self, now: Instant, pi: usize, to: SequenceNumber) {
        loop {
            let p = &mut self.proxies[pi];
            if p.expected >= to {
                break;
            }
            match p.pending.first_key_value() {
                Some((&sn, _)) if sn < to => {
                    // Jump over the hole to the next held change, then deliver in order.
                    if sn > p.expected {
                        p.sets.hole();
                    }
                    p.expected = sn;
                    self.drain(now, pi);
                    if self.blocked {
                        return;
                    }
                }
                _ => {
                    p.expected = to;
                    p.sets.hole();
                    break;
                }
            }
        }
        self.drain(now, pi);
        self.flush_data_available();
    }

    /// Hands the next change (or hole, or end marker) of writer `pi` in order to the cache:
    /// at once without coherent access, else through the writer's set assembly. `Err` as
    /// [`deliver`](Self::deliver) for a change outside any set.
    fn consume(
        &mut self,
        now: Instant,
        pi: usize,
        sn: SequenceNumber,
        item: Pending,
        reliable: bool,
    ) -> Result<(), Received> {
        let writer = self.proxies[pi].remote.guid;
        if !self.config.presentation.coherent_access {
            return match item {
                Pending::Change(c) => self.deliver(now, writer, c, reliable),
                Pending::Gap | Pending::End(_) => Ok(()),
            };
        }
        match item {
            Pending::Gap => {
                self.proxies[pi].sets.hole();
                Ok(())
            }
            Pending::End(group) => {
                if let Some(f) = self.proxies[pi].sets.end(group) {
                    self.finish(now, pi, f);
                }
                Ok(())
            }
            Pending::Change(c) => {
                let set = c.set;
                let (ended, plain) = self.proxies[pi].sets.change(sn, set, c);
                if let Some(f) = ended {
                    self.finish(now, pi, f);
                }
                match plain {
                    Some(c) => self.deliver(now, writer, c, reliable),
                    None => Ok(()),
                }
            }
        }
    }

    /// A set of writer `pi` ended: commits it when whole, or hands it to the participant
    /// when it is a part of a publisher-wide set of a writer whose group is known.
    fn finish(&mut self, now: Instant, pi: usize, f: Finished) {
        let writer = self.proxies[pi].remote.guid;
        if !f.complete {
            self.stats.coherent_sets_discarded += 1;
            tracing::debug!(reader = %self.guid, %writer, "incomplete coherent set discarded");
        }
        match f.publisher {
            Some(p) if self.proxies[pi].remote.group == Some(p.group) => {
                self.parts.push(SetPart {
                    writer,
                    publisher: p,
                    complete: f.complete,
                    changes: f.changes,
                });
            }
            _ if f.complete => self.commit(now, writer, f.changes),
            _ => {}
        }
    }

    /// Makes a whole set of `writer` visible, or keeps it until the subscriber's access ends.
    pub(crate) fn commit(&mut self, now: Instant, writer: Guid, changes: Vec<Received>) {
        self.stats.coherent_sets += 1;
        if changes.is_empty() {
            return;
        }
        let held: usize = self.deferred.iter().map(|(_, c)| c.len()).sum();
        if self.access_open && held < coherent::MAX_SET_SAMPLES {
            self.deferred.push((writer, changes));
            return;
        }
        for c in changes {
            let _ = self.deliver(now, writer, c, false);
        }
        self.flush_data_available();
    }

    /// The subscriber's `begin_access` (`open`) or last `end_access`: sets made whole while
    /// access is open become visible when it closes.
    pub(crate) fn set_access(&mut self, now: Instant, open: bool) {
        self.access_open = open;
        if !open {
            for (writer, changes) in std::mem::take(&mut self.deferred) {
                for c in changes {
                    let _ = self.deliver(now, writer, c, false);
                }
            }
            self.flush_data_available();
        }
    }

    /// A part of a publisher-wide set was dropped with its set (another part is missing).
    pub(crate) fn part_discarded(&mut self) {
        self.stats.coherent_sets_discarded += 1;
    }

    /// Parts of publisher-wide sets ended since the last call.
    pub(crate) fn take_parts(&mut self) -> Vec<SetPart> {
        std::mem::take(&mut self.parts)
    }

    /// Whether parts of publisher-wide sets wait to be collected.
    pub(crate) fn has_parts(&self) -> bool {
        !self.parts.is_empty()
    }

    /// The reader's configuration.
    pub(crate) fn config(&self) -> &ReaderConfig {
        &self.config
    }

    /// The matched writers of group `group` of participant `prefix`.
    pub(crate) fn writers_of_group(
        &self,
        prefix: GuidPrefix,
        group: tachyon_wire::EntityId,
    ) -> impl Iterator<Item = Guid> + '_ {
        self.proxies
            .iter()
            .filter(move |p| p.remote.guid.prefix == prefix && p.remote.group == Some(group))
            .map(|p| p.remote.guid)
    }

    /// Puts a change into the cache. `Err` gives it back when a reliable KEEP_ALL cache is
    /// full (the caller keeps it and stops acknowledging).
    fn deliver(
        &mut self,
        now: Instant,
        writer: Guid,
        mut c: Received,
        reliable: bool,
    ) -> Result<(), Received> {
        let instance = c.instance;
        if c.set.is_some() && c.kind == ChangeKind::Alive {
            if let Some(f) = &self.content_filter {
                if !(f.0)(&c.payload) {
                    self.stats.content_filtered += 1;
                    return Ok(());
                }
            }
        }
        let mut kind = c.kind;
        if kind != ChangeKind::NotAliveUnregistered && !self.owns(writer, instance) {
            if kind != ChangeKind::NotAliveDisposedUnregistered {
                self.stats.not_owner += 1;
                return Ok(());
            }
            // A non-owner's dispose is dropped, its unregistration still counts.
            kind = ChangeKind::NotAliveUnregistered;
        }
        if self.config.by_source_timestamp
            && kind != ChangeKind::NotAliveUnregistered
            && c.source_timestamp != Time::INVALID
        {
            match self.newest_source.get_mut(&instance) {
                Some(newest) if c.source_timestamp < *newest => {
                    self.stats.out_of_order_source += 1;
                    return Ok(());
                }
                Some(newest) => *newest = c.source_timestamp,
                None => {
                    self.newest_source.insert(instance, c.source_timestamp);
                }
            }
        }
        match kind {
            ChangeKind::Alive => {
                if let Some(min) = self.config.time_based_filter {
                    if self
                        .last_accepted
                        .get(&instance)
                        .is_some_and(|&t| now.saturating_duration_since(t) < min)
                    {
                        self.stats.filtered += 1;
                        return Ok(());
                    }
                }
                let ts = c.source_timestamp;
                let expiry = if self.writer_lifespans {
                    self.remote(writer)
                        .and_then(|r| r.lifespan)
                        .and_then(|d| now.checked_add(d))
                } else {
                    None
                };
                // Moved into the cache, unless a refusal must hand the change back.
                let keeps = reliable && self.config.history.history == History::KeepAll;
                let payload = match keeps {
                    true => c.payload.clone(),
                    false => std::mem::take(&mut c.payload),
                };
                match self
                    .history
                    .insert_expiring(now, writer, instance, ts, payload, expiry)
                {
                    Ok(()) => {
                        if self.config.time_based_filter.is_some() {
                            self.last_accepted.insert(instance, now);
                        }
                        self.deadlines.arm(now, instance);
                    }
                    Err(rej) => {
                        if keeps {
                            return Err(c);
                        }
                        self.stats.rejected += 1;
                        self.events.push_back(Event::SampleRejected {
                            reader: self.guid.entity_id,
                            reason: rej.reason,
                            instance,
                        });
                        return Ok(());
                    }
                }
            }
            ChangeKind::NotAliveDisposed => {
                self.dispose(now, writer, &c);
            }
            ChangeKind::NotAliveUnregistered => {
                self.history
                    .unregister(now, writer, instance, c.source_timestamp);
                self.deadlines.remove(&instance);
                if let Some(o) = &mut self.owners {
                    o.unregistered(&instance, writer);
                }
            }
            ChangeKind::NotAliveDisposedUnregistered => {
                self.dispose(now, writer, &c);
                self.history
                    .unregister(now, writer, instance, c.source_timestamp);
                if let Some(o) = &mut self.owners {
                    o.unregistered(&instance, writer);
                }
            }
        }
        self.stats.delivered += 1;
        self.data_available = true;
        Ok(())
    }

    /// OWNERSHIP: whether a change of `instance` from `writer` is accepted (always with
    /// SHARED ownership); with EXCLUSIVE, `writer` owns the instance when it is.
    fn owns(&mut self, writer: Guid, instance: KeyHash) -> bool {
        let Some(owners) = &mut self.owners else {
            return true;
        };
        let strength = self
            .proxies
            .iter()
            .find(|p| p.remote.guid == writer)
            .map_or(0, |p| p.remote.ownership_strength);
        owners.admit(instance, writer, strength)
    }

    /// What discovery said of matched writer `writer`.
    fn remote(&self, writer: Guid) -> Option<&RemoteWriter> {
        self.proxies
            .iter()
            .find(|p| p.remote.guid == writer)
            .map(|p| &p.remote)
    }

    fn dispose(&mut self, now: Instant, writer: Guid, c: &Received) {
        self.deadlines.remove(&c.instance);
        if let Err(rej) = self
            .history
            .dispose(now, writer, c.instance, c.source_timestamp)
        {
            self.stats.rejected += 1;
            self.events.push_back(Event::SampleRejected {
                reader: self.guid.entity_id,
                reason: rej.reason,
                instance: c.instance,
            });
        }
    }

    /// A received change, or a gap when the content filter refuses its data: an irrelevant
    /// sequence number, acknowledged and skipped like a GAP'd one.
    fn content_filter(&mut self, r: Received) -> Pending {
        if r.set.is_some() {
            // A member of a coherent set: a hole would discard the whole set, so it is
            // filtered when the set is delivered (`deliver`).
            return Pending::Change(r);
        }
        if let Some(f) = &self.content_filter {
            if r.kind == ChangeKind::Alive && !(f.0)(&r.payload) {
                self.stats.content_filtered += 1;
                return Pending::Gap;
            }
        }
        Pending::Change(r)
    }

    fn flush_data_available(&mut self) {
        if std::mem::take(&mut self.data_available) {
            self.events.push_back(Event::DataAvailable {
                reader: self.guid.entity_id,
            });
        }
    }

    /// Sample `sn` that writer `writer` (proxy `pi`) of this process hands by reference,
    /// through the writer's samples found once and kept by the proxy.
    fn find_local(&mut self, pi: usize, writer: &Guid, sn: SequenceNumber) -> Option<Payload> {
        let proxy = self.proxies.get_mut(pi)?;
        if proxy.local.is_none() {
            proxy.local = Some(LocalSamples::of(writer)?);
        }
        proxy.local.as_ref()?.get(sn)
    }

    /// Turns a received payload and its inline QoS into a change for the cache.
    fn decode(
        &self,
        key_hash: Option<KeyHash>,
        status: u32,
        payload: &[u8],
        is_key: bool,
        timestamp: Option<Time>,
    ) -> Result<Received, &'static str> {
        let (kind, instance) =
            self.classify(key_hash, status, payload.is_empty(), is_key, || payload)?;
        Ok(Received {
            kind,
            instance,
            source_timestamp: timestamp.unwrap_or(Time::INVALID),
            payload: if kind == ChangeKind::Alive {
                self.pool.copy_from_slice(payload)
            } else {
                Payload::default()
            },
            set: None,
        })
    }

    /// [`decode`](Self::decode) for a reassembled sample (its buffer is moved, not copied).
    fn decode_owned(
        &self,
        key_hash: Option<KeyHash>,
        status: u32,
        payload: Payload,
        is_key: bool,
        timestamp: Option<Time>,
    ) -> Result<Received, &'static str> {
        let bytes = || payload.as_bytes();
        let (kind, instance) =
            self.classify(key_hash, status, payload.is_empty(), is_key, bytes)?;
        Ok(Received {
            kind,
            instance,
            source_timestamp: timestamp.unwrap_or(Time::INVALID),
            payload: if kind == ChangeKind::Alive {
                payload
            } else {
                Payload::default()
            },
            set: None,
        })
    }

    /// The change's kind and instance. `payload` gives the serialized sample, asked for only
    /// when the key hash must be derived from it (a sample held as its value is serialized
    /// then).
    fn classify<'p>(
        &self,
        key_hash: Option<KeyHash>,
        status: u32,
        empty: bool,
        is_key: bool,
        payload: impl FnOnce() -> &'p [u8],
    ) -> Result<(ChangeKind, KeyHash), &'static str> {
        let kind = match status & 0x3 {
            0 => ChangeKind::Alive,
            1 => ChangeKind::NotAliveDisposed,
            2 => ChangeKind::NotAliveUnregistered,
            _ => ChangeKind::NotAliveDisposedUnregistered,
        };
        if kind == ChangeKind::Alive && (is_key || empty) {
            return Err("DATA without data and without a dispose/unregister status");
        }
        let instance = if !self.config.keyed {
            KeyHash::default()
        } else if let Some(kh) = key_hash {
            kh
        } else {
            self.config
                .key_hash_of
                .as_ref()
                .and_then(|f| f.call(payload(), is_key))
                .ok_or("keyed DATA without key hash, and the key cannot be derived")?
        };
        Ok((kind, instance))
    }
}

/// `any` over a range of sequence numbers, bounded so a bogus announcement cannot make the
/// reader scan billions of numbers.
trait AnyMissing {
    fn any_missing(self, f: impl FnMut(SequenceNumber) -> bool) -> bool;
}

impl AnyMissing for std::ops::RangeInclusive<SequenceNumber> {
    fn any_missing(self, mut f: impl FnMut(SequenceNumber) -> bool) -> bool {
        let (lo, hi) = self.into_inner();
        let hi = hi.0.min(lo.0.saturating_add(256));
        (lo.0..=hi).any(|n| f(SequenceNumber(n)))
    }
}
