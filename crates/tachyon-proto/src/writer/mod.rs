//! [`Writer`]: the RTPS writer of one DataWriter — best-effort and reliable readers alike, one
//! [`ReaderProxy`] per matched reader, the history cache, heartbeats, repairs, GAPs,
//! fragmentation, flow control, lifespan, deadline and liveliness timers.
//!
//! New data goes once to every matched reader (one multicast send when they share a group);
//! repairs and GAPs go to the reader that asked, after the NACK response delay. A HEARTBEAT is
//! piggybacked on the last datagram of a burst (at most every
//! [`HEARTBEAT_PIGGYBACK_INTERVAL`], unless it asks for acknowledgements or the burst skipped
//! sequence numbers), sent periodically while a reliable reader has not acknowledged
//! everything, and addressed to a reader after its repairs. Its final flag is set when
//! nothing is outstanding, and on a piggybacked one also when an acknowledgement was asked
//! for less than [`ACK_REQUEST_INTERVAL`] ago and the history is less than half full: readers
//! then answer only if they miss something (as Cyclone DDS does), so a steady stream of
//! samples does not draw an ACKNACK each. Losses are still found at once: a Tachyon reader
//! asks for a hole as soon as a later sample shows it (others by the next heartbeat);
//! acknowledgements come at least every interval, every periodic heartbeat, and before a
//! KEEP_ALL history can fill up.

mod direct;
pub(crate) use direct::DirectReader;
mod proxy;
mod readers;
mod send;
mod transcode;

use std::collections::VecDeque;

use tachyon_cdr::KeyHash;
use tachyon_wire::{
    Count, FragmentNumberSet, Guid, Locator, SequenceNumber, SequenceNumberSet, Time,
};

use crate::deadline::Deadlines;
use crate::endpoint::{LivelinessKind, Reliability, RemoteReader, WriterConfig};
use crate::event::Event;
use crate::history::{
    ChangeKind, Coherence, Durability, GroupMember, NewChange, Payload, PublisherSet, QosError,
    WriteError, WriterHistory,
};
use crate::layout;
use crate::maps::HashMap;
use crate::time::Instant;
use crate::transmit::Destination;

pub(crate) use proxy::ReaderProxy;
pub use transcode::Transcoder;

/// How often a HEARTBEAT piggybacked on new data asks for acknowledgements (unless the
/// history is filling up, or a thread waits for them): once four fifths of the heartbeat
/// period (80 ms by default) passed since the last request. That is Cyclone DDS's rule (its
/// piggybacked heartbeat asks once a write comes 4/5 of its 100 ms heartbeat interval after
/// the one before; in a steady stream its periodic heartbeat and the fill level of its
/// history ask). Asked every 5 ms, as until 2026-11-28, a ping-pong on one vCPU exchanged
/// 400 ACKNACKs a second, each a datagram more to send, receive and handle: 0.20–0.24 % of
/// its round trips took 6–11 µs longer (Cyclone DDS's 0.02 %); at 80 ms, 0.02–0.06 %.
pub fn ack_request_interval(heartbeat_period: crate::time::Duration) -> crate::time::Duration {
    heartbeat_period.saturating_mul(4) / 5
}

/// How often a builtin (discovery) writer's piggybacked HEARTBEAT asks for acknowledgements:
/// every 5 ms, Cyclone DDS's minimum heartbeat interval. Discovery data is rare and bursty,
/// and a prompt acknowledgement completes a burst that lost a datagram sooner (in the
/// simulated discovery of 30 participants through a server at 2 % loss, matching took 123
/// ms; 201 ms at the user writers' interval).
pub const BUILTIN_ACK_REQUEST_INTERVAL: crate::time::Duration =
    crate::time::Duration::from_millis(5);

/// A burst of new data that asks for no acknowledgement carries a HEARTBEAT only if none
/// ended a burst for this long (Cyclone DDS's rule): a ping-pong or a fast stream of single
/// samples does not pay a heartbeat per sample on both ends. A reader finds a loss by the
/// next sample's sequence number all the same (`reader::accept` asks for the hole at once);
/// a burst that skips numbers (KEEP_LAST replaced them before they were sent) always ends
/// with one, which says they are gone.
pub const HEARTBEAT_PIGGYBACK_INTERVAL: crate::time::Duration =
    crate::time::Duration::from_micros(100);

/// Flow control of a reliable KEEP_ALL, VOLATILE writer: a write waits (`WouldBlock`, which
/// `DataWriter::write` turns into waiting up to `max_blocking_time`) while its history holds
/// this many payload octets not acknowledged by every reliable reader, so a fast writer cannot
/// overrun a slow reader's socket buffer into losses and repairs (Cyclone DDS's writer-history
/// high-water mark is 500 kB). With large samples the bound is four of the largest written,
/// so a few are always in flight. Acknowledgements are asked for once half of it is out.
pub const MAX_UNACKNOWLEDGED_BYTES: usize = 2 << 20;

/// What batching counts per sample beyond its payload: INFO_TS, the DATA header and inline
/// QoS, roughly.
const BATCH_OVERHEAD: usize = 48;

/// A change the application writes: data, or a dispose/unregister of an instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteRequest {
    /// What the change does to its instance.
    pub kind: ChangeKind,
    /// The instance (key hash; all-zero for unkeyed topics).
    pub instance: KeyHash,
    /// Source timestamp.
    pub source_timestamp: Time,
    /// Serialized data (encapsulation header included); for dispose/unregister the serialized
    /// key, or empty.
    pub payload: Payload,
}

impl WriteRequest {
    /// New data for `instance`.
    pub fn data(instance: KeyHash, source_timestamp: Time, payload: Payload) -> WriteRequest {
        WriteRequest {
            kind: ChangeKind::Alive,
            instance,
            source_timestamp,
            payload,
        }
    }
}

/// Counters of a writer, for diagnostics and the simulator's tables.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriterStats {
    /// DATA submessages sent with new data.
    pub data_sent: u64,
    /// DATA_FRAG fragments sent with new data.
    pub fragments_sent: u64,
    /// DATA submessages (new or resent) whose sample went by reference to readers of this
    /// process ([`crate::local`]).
    pub data_by_reference: u64,
    /// DATA submessages resent on request.
    pub data_resent: u64,
    /// Changes handed directly to readers of the writer's own participant, once per reader
    /// (no DATA: `writer/direct.rs`).
    pub changes_direct: u64,
    /// Fragments resent on request.
    pub fragments_resent: u64,
    /// GAP submessages sent.
    pub gaps_sent: u64,
    /// HEARTBEAT submessages sent (piggybacked, periodic and directed).
    pub heartbeats_sent: u64,
    /// HEARTBEAT_FRAG submessages sent.
    pub heartbeat_frags_sent: u64,
    /// ACKNACKs processed.
    pub acknacks_received: u64,
    /// NACK_FRAGs processed.
    pub nack_frags_received: u64,
    /// ACKNACK / NACK_FRAG dropped as duplicates, stale or from unknown readers.
    pub acknacks_ignored: u64,
    /// Samples not sent because no matched reader's content filter wanted them (a GAP told
    /// the readers instead), plus repairs answered with a GAP for the same reason.
    pub filtered_out: u64,
    /// Content filters announced by matched readers that this writer could not use (an
    /// unknown filter class, an expression that does not fit its type): those readers get
    /// every sample and filter on their side.
    pub remote_filters_refused: u64,
    /// Samples converted for a reader of another representation (`transcode` module).
    pub transcoded: u64,
    /// Samples that could not be converted for such a reader (it got a GAP).
    pub transcode_failures: u64,
}

/// Periodic heartbeats no reader answered before the period starts to double (a second at the
/// default 100 ms: a link losing 30 % each way loses an answer half the time, ten in a row
/// about once in a thousand; at five the snapshot of `tests/reliable_stream.rs` took 15 % longer
/// at 30 % loss).
const QUIET_HEARTBEATS: u32 = 10;

/// The longest period the back-off reaches (Cyclone DDS's heartbeat interval also stops at
/// 8 s).
const MAX_HEARTBEAT_PERIOD: crate::time::Duration = crate::time::Duration::from_secs(8);

/// The writer of one DataWriter. Owned and driven by the participant.
#[derive(Debug)]
pub(crate) struct Writer {
    guid: Guid,
    config: WriterConfig,
    history: WriterHistory,
    proxies: Vec<ReaderProxy>,
    /// Where new data goes: every matched reader.
    fanout: Option<Destination>,
    /// The first sequence number not yet sent to every reader.
    next_new: SequenceNumber,
    /// Next fragment (1-based) of `next_new` when it is being sent in fragments, else 0.
    next_fragment: u32,
    fragments_since_hbfrag: u32,
    /// A HEARTBEAT_FRAG that did not fit after its fragments (sample, last fragment sent):
    /// it goes alone, before the next fragments.
    hbfrag_due: Option<(SequenceNumber, u32)>,
    heartbeat_count: i32,
    heartbeat_frag_count: i32,
    /// When the periodic heartbeat fires next.
    heartbeat_at: Option<Instant>,
    /// When a HEARTBEAT last asked the readers to acknowledge (final flag clear).
    ack_requested_at: Option<Instant>,
    /// When a HEARTBEAT last ended a burst of new data ([`HEARTBEAT_PIGGYBACK_INTERVAL`]).
    piggybacked_at: Option<Instant>,
    /// Batching: octets of new data written but not sent yet (an estimate, datagram overhead
    /// included), and until when it may wait for more.
    unsent_bytes: usize,
    batch_until: Option<Instant>,
    /// The largest payload written (flow control keeps room for four).
    largest_payload: usize,
    /// A heartbeat to every reader is due at the next poll (and whether it asserts liveliness).
    heartbeat_now: bool,
    /// A sample in shared memory sent by value to readers of other transports, whose
    /// reference is still to go to the shared-memory readers (`send::send_shm_echo`).
    shm_echo: Option<(Destination, SequenceNumber)>,
    /// `fanout` split into the locators of other transports and those of shared memory,
    /// when it has both (kept with it, so a send allocates nothing to split it).
    fanout_split: Option<(Destination, Destination)>,
    /// Proxies that may owe a heartbeat or a repair, oldest flag first (`readers.rs`).
    attention: VecDeque<usize>,
    /// Proxy index by reader GUID (used above `readers::LINEAR_LOOKUP` proxies).
    index: HashMap<Guid, usize>,
    /// The lowest sequence number acknowledged by a reliable reader, and how many hold it.
    floor: Option<(SequenceNumber, usize)>,
    /// Reliable readers that have not answered a HEARTBEAT yet.
    unsynced: usize,
    /// Readers outside the fan-out: served alone (another representation, `transcode`) or
    /// directly (`direct`).
    served_alone: usize,
    /// The readers served directly, and the change written last for them until the
    /// participant takes it (`direct` module).
    direct: Vec<direct::DirectReader>,
    direct_out: Option<crate::history::CacheChange>,
    /// When a heartbeat last asked the reliable readers served directly to acknowledge.
    direct_ack_requested_at: Option<Instant>,
    /// Periodic heartbeats since the last ACKNACK from any reader (or the last write): past
    /// [`QUIET_HEARTBEATS`] the period doubles, up to [`MAX_HEARTBEAT_PERIOD`].
    silent_heartbeats: u32,
    heartbeat_liveliness: bool,
    /// Highest sequence number released from the cache as acknowledged.
    released: SequenceNumber,
    /// Offered deadline per instance.
    deadlines: Deadlines,
    /// Manual liveliness: when the lease runs out, and whether that was reported.
    lease_expiry: Option<Instant>,
    liveliness_lost: bool,
    expired: Vec<SequenceNumber>,
    /// (when, first sequence number) of recent new-data datagrams, for NACK suppression.
    pushed: VecDeque<(Instant, SequenceNumber)>,
    /// A coherent set is open on this writer (its publisher's `begin_coherent_changes`),
    /// with the sequence number of its first sample once one is written.
    open_set: Option<Option<SequenceNumber>>,
    /// Builds the filters matched readers announce (set by the typed API).
    filter_factory: Option<crate::filter::FactoryHook>,
    /// Every matched reader has a content filter: new data nobody wants goes out as a GAP.
    all_filtered: bool,
    /// Converts samples for readers of another representation (set by the typed API).
    transcoder: Option<transcode::TranscodeHook>,
    /// Samples handed by reference to readers of this process (created at the first).
    local: Option<std::sync::Arc<crate::local::LocalSamples>>,
    /// The Rust type the typed API writes, when it can share samples as values, and whether
    /// it may now: every matched reader is in this process and reads that type
    /// (`crate::local::ReaderType`), so none needs the bytes.
    sharing: Option<(
        std::any::TypeId,
        std::sync::Arc<std::sync::atomic::AtomicBool>,
    )>,
    /// Set when [`poll_transmit`](Self::poll_transmit) found nothing to send: no reader is
    /// owed a heartbeat, and no delayed repair falls due before the instant it holds
    /// (`Some(None)`: none is pending). Everything that can change what the readers are owed
    /// clears it ([`touch`](Self::touch)), so until then [`wants_to_send`](Self::wants_to_send)
    /// and [`poll_timeout`](Self::poll_timeout) need not look at every reader again: a
    /// discovery storm gives each builtin writer a reader per announced participant, and
    /// every flush of the participant asks every writer.
    quiet: Option<Option<Instant>>,
    /// How long after a request for acknowledgements a piggybacked HEARTBEAT asks again
    /// ([`ack_request_interval`], [`BUILTIN_ACK_REQUEST_INTERVAL`]).
    ack_interval: crate::time::Duration,
    events: VecDeque<Event>,
    stats: WriterStats,
}

impl Writer {
    /// A writer with no matched reader, or why `config` is inconsistent.
    pub(crate) fn new(guid: Guid, config: WriterConfig) -> Result<Writer, QosError> {
        let history = WriterHistory::new(config.history)?;
        let ack_interval = match guid.entity_id.kind().is_builtin() {
            true => BUILTIN_ACK_REQUEST_INTERVAL,
            false => ack_request_interval(config.heartbeat_period),
        };
        Ok(Writer {
            ack_interval,
            guid,
            config,
            history,
            proxies: Vec::new(),
            fanout: None,
            next_new: SequenceNumber(1),
            next_fragment: 0,
            fragments_since_hbfrag: 0,
            hbfrag_due: None,
            heartbeat_count: 0,
            heartbeat_frag_count: 0,
            heartbeat_at: None,
            ack_requested_at: None,
            piggybacked_at: None,
            unsent_bytes: 0,
            batch_until: None,
            largest_payload: 0,
            heartbeat_now: false,
            shm_echo: None,
            fanout_split: None,
            attention: VecDeque::new(),
            index: HashMap::default(),
            floor: None,
            unsynced: 0,
            served_alone: 0,
            direct: Vec::new(),
            direct_out: None,
            direct_ack_requested_at: None,
            silent_heartbeats: 0,
            heartbeat_liveliness: false,
            released: SequenceNumber::ZERO,
            deadlines: Deadlines::new(config.deadline),
            lease_expiry: None,
            liveliness_lost: false,
            expired: Vec::new(),
            pushed: VecDeque::new(),
            open_set: None,
            filter_factory: None,
            all_filtered: false,
            transcoder: None,
            local: None,
            sharing: None,
            quiet: None,
            events: VecDeque::new(),
            stats: WriterStats::default(),
        })
    }

    // ---- inputs ----------------------------------------------------------------------------

    /// An ACKNACK from `reader`: everything below `state.base` is acknowledged, the set bits
    /// are requested again.
    pub(crate) fn handle_acknack(
        &mut self,
        now: Instant,
        reader: Guid,
        state: &SequenceNumberSet,
        count: Count,
        final_flag: bool,
    ) {
        self.touch();
        let last = self.history.last_sn();
        let delay = self.config.nack_response_delay;
        let window = self.config.repair_suppression;
        let fresh = self.recently_sent(now);
        let Some(i) = self.proxy_index(&reader) else {
            self.stats.acknacks_ignored += 1;
            return;
        };
        let p = &mut self.proxies[i];
        if !p.is_reliable() {
            self.stats.acknacks_ignored += 1;
            return;
        }
        // NACK suppression is about what the fan-out just sent; a reader served alone (or
        // directly) is not in it.
        let fresh = if p.alone() {
            SequenceNumber(i64::MAX)
        } else {
            fresh
        };
        if p.last_acknack.is_some_and(|c| count.0 <= c) {
            // Stale or repeated: it changes nothing. But Cyclone DDS repeats its pre-emptive
            // ACKNACK (requesting nothing, Final flag clear) with count 0 until a HEARTBEAT
            // puts it in sync, so that one is still answered, with a HEARTBEAT only. A
            // duplicated request for repairs was served when it first came.
            if !final_flag && state.num_bits == 0 {
                p.needs_heartbeat = true;
                self.flag_proxy(i);
            }
            self.stats.acknacks_ignored += 1;
            return;
        }
        p.last_acknack = Some(count.0);
        // A reader cannot acknowledge what was never written.
        let base = SequenceNumber(state.base.0.clamp(1, last.0.saturating_add(1)));
        if final_flag || state.num_bits > 0 {
            self.proxy_synced(i);
        }
        self.proxy_acked(i, SequenceNumber(base.0 - 1));
        let p = &mut self.proxies[i];
        p.drop_requests_below(base);
        let mut asked = false;
        let mut suppressed = false;
        let repaired = p.repaired_within(now, window);
        for sn in state.iter().filter(|&sn| sn >= base && sn <= last) {
            if sn >= fresh || repaired.is_some_and(|upto| sn <= upto) {
                suppressed = true;
                continue;
            }
            // A whole-sample request replaces fragment requests for it.
            p.frag_runs.retain(|r| r.sn != sn);
            p.requested.insert(sn);
            asked = true;
        }
        if asked {
            p.repair_at.get_or_insert(now + delay);
        } else if !final_flag {
            // A reader that clears the Final flag wants a HEARTBEAT back: one that has not got
            // everything must learn what there is, and a pre-emptive ACKNACK (nothing written
            // yet, or the reader does not know this writer's range) asks to be put in sync.
            // Cyclone DDS's readers wait for exactly that before they accept data reliably.
            p.needs_heartbeat = true;
        }
        self.flag_proxy(i);
        self.stats.acknacks_received += 1;
        // A reader answers: the periodic heartbeat goes back to its configured pace, at once
        // if it had backed off.
        if self.silent_heartbeats > QUIET_HEARTBEATS {
            let at = now + self.config.heartbeat_period;
            self.heartbeat_at = self.heartbeat_at.map(|h| h.min(at));
        }
        self.silent_heartbeats = 0;
        if suppressed {
            // Ask again once what was in flight has had time to arrive.
            let at = now + self.config.nack_suppression.max(window);
            self.heartbeat_at = Some(self.heartbeat_at.map_or(at, |h| h.min(at)));
        }
        self.release();
    }

    /// A NACK_FRAG from `reader` asking for fragments of `sn`.
    pub(crate) fn handle_nack_frag(
        &mut self,
        now: Instant,
        reader: Guid,
        sn: SequenceNumber,
        missing: &FragmentNumberSet,
        count: Count,
    ) {
        self.touch();
        let fresh = self.recently_sent(now);
        let in_history = self.history.get(sn).is_some();
        let delay = self.config.nack_response_delay;
        let Some(i) = self.proxy_index(&reader) else {
            self.stats.acknacks_ignored += 1;
            return;
        };
        let p = &mut self.proxies[i];
        // NACK suppression is about what the fan-out just sent (not a reader served alone).
        let held = in_history && (p.alone() || sn < fresh);
        if !p.is_reliable() || p.last_nack_frag.is_some_and(|c| count.0 <= c) {
            self.stats.acknacks_ignored += 1;
            return;
        }
        p.last_nack_frag = Some(count.0);
        if held && sn > p.acked && sn >= p.first_relevant && !p.requested.contains(&sn) {
            p.request_fragments(sn, missing);
            p.repair_at.get_or_insert(now + delay);
            self.flag_proxy(i);
            self.hasten_heartbeat(now);
        }
        self.stats.nack_frags_received += 1;
    }

    /// Timers: periodic heartbeat, lifespan, deadline and liveliness lease.
    pub(crate) fn handle_timeout(&mut self, now: Instant) {
        self.touch();
        if self.heartbeat_at.is_some_and(|at| at <= now) {
            self.heartbeat_at = None;
            let last = self.history.last_sn();
            if self.unacknowledged() {
                self.periodic_heartbeat(last);
            }
            if self.unsynced > 0 || self.served_alone > 0 {
                let attention = &mut self.attention;
                for (i, p) in self.proxies.iter_mut().enumerate().filter(|(_, p)| {
                    p.is_reliable() && (!p.synced || (p.alone() && p.acked < last))
                }) {
                    // Readers outside the fan-out hear the periodic heartbeat addressed to
                    // them.
                    p.needs_heartbeat = true;
                    readers::flag(attention, p, i);
                }
            }
            if self.wants_heartbeats() {
                self.silent_heartbeats = self.silent_heartbeats.saturating_add(1);
                self.heartbeat_at = Some(now + self.backed_off_heartbeat_period());
            }
        }
        if self.history.next_expiry().is_some_and(|at| at <= now) {
            let mut expired = std::mem::take(&mut self.expired);
            expired.clear();
            self.history.expire(now, &mut expired);
            self.expired = expired;
        }
        let (events, writer) = (&mut self.events, self.guid.entity_id);
        self.deadlines.fire(now, |instance| {
            events.push_back(Event::OfferedDeadlineMissed { writer, instance });
        });
        if let Some(at) = self.lease_expiry.filter(|&at| at <= now) {
            if !self.liveliness_lost {
                self.liveliness_lost = true;
                self.events.push_back(Event::LivelinessLost {
                    writer: self.guid.entity_id,
                });
            }
            let _ = at;
            self.lease_expiry = None;
        }
    }

    /// The periodic heartbeat while some reader lacks an acknowledgement: one to the fan-out,
    /// unless it is a list of unicast locators longer than the number of readers behind.
    /// Such a heartbeat costs a datagram per locator and asks every reader for an ACKNACK,
    /// those in sync included: while a hundred participants join, a builtin writer's fan-out
    /// lists a hundred locators and a few readers lag (bench/join.py measured 100 datagrams
    /// per remote participant before). The readers behind then get one each (packed with the
    /// other builtin endpoints' messages to the same participant).
    fn periodic_heartbeat(&mut self, last: SequenceNumber) {
        let listed = match &self.fanout {
            Some(Destination::Many(locs)) => locs.len(),
            _ => 0,
        };
        let behind = |p: &proxy::ReaderProxy| {
            p.is_reliable() && !p.alone() && p.dest.is_some() && p.acked < last
        };
        if listed == 0 || self.proxies.iter().filter(|p| behind(p)).count() >= listed {
            self.heartbeat_now = true;
            return;
        }
        let attention = &mut self.attention;
        for (i, p) in self.proxies.iter_mut().enumerate() {
            if behind(p) {
                p.needs_heartbeat = true;
                readers::flag(attention, p, i);
            }
        }
    }

    // ---- commands --------------------------------------------------------------------------

    /// Opens a coherent set: what is written until [`end_set`](Self::end_set) is one set.
    pub(crate) fn begin_set(&mut self) {
        self.touch();
        self.open_set.get_or_insert(None);
    }

    /// Whether a coherent set is open and has a sample.
    pub(crate) fn set_written(&self) -> bool {
        matches!(self.open_set, Some(Some(_)))
    }

    /// Whether a coherent set is open.
    pub(crate) fn set_open(&self) -> bool {
        self.open_set.is_some()
    }

    /// Closes the open coherent set; with `publisher`, writes its end marker (also when this
    /// writer wrote nothing in it, so subscribers learn its part is empty).
    pub(crate) fn end_set(
        &mut self,
        now: Instant,
        group_set: Option<SequenceNumber>,
        publisher: Option<PublisherSet>,
    ) -> Result<Option<SequenceNumber>, WriteError> {
        self.touch();
        let Some(first) = self.open_set.take() else {
            return Ok(None);
        };
        let Some(publisher) = publisher else {
            return Ok(None);
        };
        let outcome = self.history.add_change(NewChange {
            kind: ChangeKind::Alive,
            instance: KeyHash::default(),
            source_timestamp: Time::INVALID,
            expiry: None,
            payload: Payload::default(),
            coherent: Some(Coherence::End {
                set: first,
                group_set,
                publisher,
            }),
        })?;
        self.queued(now, outcome.sn, 0);
        Ok(Some(outcome.sn))
    }

    /// Whether a write may be refused for now with `WouldBlock`
    /// ([`Participant::write_may_block`](crate::Participant::write_may_block)): flow
    /// controlled, or a resource limit set (the only sources of it).
    pub(crate) fn may_block(&self) -> bool {
        let limits = &self.history.config().limits;
        self.flow_controlled()
            || limits.max_samples.is_some()
            || limits.max_instances.is_some()
            || limits.max_samples_per_instance.is_some()
    }

    /// Adds a change to the history and queues it for every matched reader. In an open
    /// coherent set it is a member of it; `group` is its group numbering (GROUP scope).
    pub(crate) fn write_in_set(
        &mut self,
        now: Instant,
        req: WriteRequest,
        group: Option<GroupMember>,
    ) -> Result<SequenceNumber, WriteError> {
        // New data alone leaves `quiet` as it was: `wants_to_send` looks at it before
        // `quiet`, and what owes a reader a repair or a heartbeat of its own (`queued` for
        // the readers served alone, `served_directly`) says so itself.
        let kind = req.kind;
        let instance = req.instance;
        let payload_len = req.payload.len();
        self.largest_payload = self.largest_payload.max(payload_len);
        if self.flow_controlled() && self.history.bytes() >= self.max_unacknowledged() {
            return Err(WriteError::WouldBlock {
                limit: crate::history::Limit::UnacknowledgedBytes,
            });
        }
        let coherent = self.open_set.map(|first| Coherence::Member {
            set: first.unwrap_or(SequenceNumber(self.history.last_sn().0.saturating_add(1))),
            group,
        });
        let change = NewChange {
            kind,
            instance,
            source_timestamp: req.source_timestamp,
            expiry: self.config.lifespan.map(|d| now + d),
            payload: req.payload,
            coherent,
        };
        let sn = if self.keeps_nothing() {
            // Nobody could ask for it again: numbered and registered, not held, and the
            // readers served directly get the change itself.
            let change = self.history.add_unheld(change)?;
            let sn = change.sn;
            if !self.direct.is_empty() {
                self.direct_out = Some(change);
            }
            sn
        } else {
            let sn = self.history.add_change(change)?.sn;
            if !self.direct.is_empty() {
                // Before `queued` may release it (nobody else to send it to).
                self.direct_out = self.history.get(sn).cloned();
            }
            sn
        };
        if let Some(first) = &mut self.open_set {
            first.get_or_insert(sn);
        }
        self.queued(now, sn, payload_len);
        if kind == ChangeKind::Alive {
            self.deadlines.arm(now, instance);
        } else {
            self.deadlines.remove(&instance);
        }
        self.renew_lease(now);
        Ok(sn)
    }

    /// Whether a new change needs no place in the history: a volatile writer whose only
    /// readers are best-effort ones of its participant, served directly (or none), outside a
    /// coherent set. Nothing would ever send it, repair it or give it to a late joiner.
    fn keeps_nothing(&self) -> bool {
        self.history.config().durability == Durability::Volatile
            && self.open_set.is_none()
            && self.fanout.is_none()
            && self.shm_echo.is_none()
            && self.proxies.len() == self.direct.len()
            && self.direct.iter().all(|d| !d.reliable)
    }

    /// A change was added to the history: send it (or consider it sent when nobody listens).
    fn queued(&mut self, now: Instant, sn: SequenceNumber, payload_len: usize) {
        // Readers outside the fan-out (another representation) get it on their own, at once.
        let mut alone = false;
        if self.served_alone > 0 {
            let attention = &mut self.attention;
            for (i, p) in self.proxies.iter_mut().enumerate() {
                if p.transcode.is_some() {
                    p.requested.insert(sn);
                    p.repair_at = Some(p.repair_at.map_or(now, |at| at.min(now)));
                    readers::flag(attention, p, i);
                    alone = true;
                }
            }
            if alone {
                self.touch();
            }
        }
        if self.fanout.is_none() {
            // Nobody in the fan-out: the change is "sent" to it as soon as it is written.
            self.next_new = SequenceNumber(sn.0 + 1);
            self.release();
        } else if let Some(delay) = self.config.batch_delay {
            self.unsent_bytes += payload_len + BATCH_OVERHEAD;
            self.batch_until.get_or_insert(now + delay);
        }
        // New data: readers that answer get it announced at the configured pace again.
        self.silent_heartbeats = 0;
        let direct = !self.direct.is_empty();
        if (self.fanout.is_some() || alone || direct)
            && self.has_reliable()
            && self.heartbeat_at.is_none()
        {
            self.heartbeat_at = Some(now + self.config.heartbeat_period);
        }
    }

    /// Registers an instance without writing it.
    pub(crate) fn register_instance(&mut self, instance: KeyHash) -> Result<KeyHash, WriteError> {
        self.touch();
        self.history.register_instance(instance)
    }

    /// Asserts the writer's liveliness: renews a manual lease and tells readers with a
    /// liveliness HEARTBEAT.
    pub(crate) fn assert_liveliness(&mut self, now: Instant) {
        self.touch();
        self.renew_lease(now);
        self.heartbeat_now = true;
        self.heartbeat_liveliness = true;
        let attention = &mut self.attention;
        for (i, p) in self.proxies.iter_mut().enumerate() {
            if p.alone() {
                // Outside the fan-out: told by a heartbeat of its own.
                p.needs_heartbeat = true;
                p.liveliness_due = true;
                readers::flag(attention, p, i);
            }
        }
    }

    /// Applies the QoS changeable after creation: deadline timers restart with the new
    /// period, lifespan and priority apply to what is written and sent from now on.
    pub(crate) fn update(&mut self, now: Instant, u: crate::endpoint::WriterUpdate) {
        self.touch();
        self.config.deadline = u.deadline;
        self.config.lifespan = u.lifespan;
        self.config.priority = u.priority;
        self.deadlines.set_period(now, u.deadline);
    }

    /// Matches a reader (or updates its locators when already matched).
    pub(crate) fn match_reader(&mut self, now: Instant, remote: RemoteReader) {
        self.touch();
        if let Some(p) = self.proxy_mut(&remote.guid) {
            p.dest = remote.unicast_locators.first().copied();
            p.remote = remote;
            self.recount();
            self.refresh_fanout();
            return;
        }
        let wants_history = remote.reliability == Reliability::Reliable
            && remote.durability == Durability::TransientLocal
            && self.config.history.durability == Durability::TransientLocal;
        let acked = if wants_history {
            SequenceNumber::ZERO
        } else {
            SequenceNumber(self.next_new.0 - 1)
        };
        let guid = remote.guid;
        let mut p = ReaderProxy::new(remote, acked);
        if p.is_reliable() {
            // Tell it where the writer stands, so it can ask for what it lacks.
            p.needs_heartbeat = true;
        }
        self.push_proxy(p);
        self.fanout_added(self.proxies.len() - 1);
        self.update_all_filtered();
        if self.wants_heartbeats() && self.heartbeat_at.is_none() {
            self.heartbeat_at = Some(now + self.config.heartbeat_period);
        }
        self.events.push_back(Event::PublicationMatched {
            writer: self.guid.entity_id,
            remote: guid,
            matched: true,
            current_count: self.proxies.len(),
        });
    }

    /// Unmatches a reader; what was kept only for it is released. False if it was unknown.
    pub(crate) fn unmatch_reader(&mut self, reader: &Guid) -> bool {
        self.touch();
        let Some(i) = self.proxy_index(reader) else {
            return false;
        };
        self.remove_proxy(i);
        self.refresh_fanout();
        self.update_all_filtered();
        if self.fanout.is_none() {
            self.fanout_emptied();
        }
        self.release();
        self.events.push_back(Event::PublicationMatched {
            writer: self.guid.entity_id,
            remote: *reader,
            matched: false,
            current_count: self.proxies.len(),
        });
        true
    }

    /// Nobody is left in the fan-out: what it had not sent is "sent" (a reader served alone
    /// has it queued), and the next new sample starts afresh.
    /// Recomputes where new data goes (after the readers changed).
    fn refresh_fanout(&mut self) {
        self.fanout = send::fanout(&self.proxies);
        self.fanout_split = self.fanout.as_ref().and_then(send::split_shm);
        self.update_sharing();
    }

    /// The typed API writes Rust type `ty`, whose samples it can share as values; returns
    /// the flag saying whether it may now (kept up to date as readers come and go).
    pub(crate) fn share_samples(
        &mut self,
        ty: std::any::TypeId,
    ) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
        let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        self.sharing = Some((ty, flag.clone()));
        self.update_sharing();
        flag
    }

    /// Whether samples may go as values: every matched reader is reached in this process,
    /// in the writer's representation, and reads the writer's Rust type. (No reader at all
    /// qualifies too: one that matches later and needs bytes has them serialized then.)
    fn update_sharing(&self) {
        let Some((ty, flag)) = &self.sharing else {
            return;
        };
        let on = self.proxies.iter().all(|p| {
            p.transcode.is_none()
                && p.dest
                    .is_some_and(|d| d.kind == tachyon_wire::Locator::KIND_TACHYON_INTRA)
                && crate::local::ReaderType::of(&p.remote.guid) == Some(*ty)
        });
        flag.store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// Where new data goes once proxy `i` joined, without a walk over every reader when
    /// the answer follows from the old one (a builtin writer gains a reader per participant):
    /// a multicast group the newcomer also listens on stays; a unicast locator that is also
    /// the newcomer's stays; a list of locators gains the newcomer's (adding a reader never
    /// makes a shared group or a single locator appear). Otherwise everything is recomputed.
    fn fanout_added(&mut self, i: usize) {
        self.update_sharing();
        let Some(p) = self.proxies.get(i) else {
            return;
        };
        if p.alone() {
            return;
        }
        match (&mut self.fanout, p.dest) {
            (Some(Destination::Multicast(m)), _) if p.remote.multicast_locators.contains(m) => {}
            (Some(Destination::Unicast(u)), Some(d)) if *u == d => {}
            (Some(Destination::Many(_)), None) => {}
            (Some(Destination::Many(locs)), Some(d)) => {
                if !locs.contains(&d) {
                    *locs = locs.iter().copied().chain([d]).collect();
                    let shm = |l: &tachyon_wire::Locator| {
                        l.kind == tachyon_wire::Locator::KIND_TACHYON_SHM
                    };
                    match &mut self.fanout_split {
                        Some((others, shared)) => {
                            let side = if shm(&d) { shared } else { others };
                            match side {
                                Destination::Many(v) => *v = v.iter().copied().chain([d]).collect(),
                                Destination::Unicast(one) => {
                                    *side = Destination::Many([*one, d].into())
                                }
                                Destination::Multicast(_) => {
                                    self.fanout_split =
                                        self.fanout.as_ref().and_then(send::split_shm);
                                }
                            }
                        }
                        // One kind so far: a split appears only with a locator of the other.
                        None if locs.first().is_some_and(|f| shm(f) != shm(&d)) => {
                            self.fanout_split = self.fanout.as_ref().and_then(send::split_shm);
                        }
                        None => {}
                    }
                }
            }
            _ => self.refresh_fanout(),
        }
    }

    fn fanout_emptied(&mut self) {
        self.next_new = SequenceNumber(self.history.last_sn().0 + 1);
        self.next_fragment = 0;
        self.batch_sent();
    }

    /// Sets (or removes) what builds the filters of readers announcing one.
    pub(crate) fn set_filter_factory(
        &mut self,
        factory: Option<crate::filter::RemoteFilterFactory>,
    ) {
        self.filter_factory = factory.map(crate::filter::FactoryHook);
    }

    /// Applies matched reader `reader`'s announced content filter (`None`: it has none):
    /// samples written from now on that it refuses are not sent to it. A filter this writer
    /// cannot build is counted and logged; that reader then filters alone.
    pub(crate) fn set_reader_filter(
        &mut self,
        reader: &Guid,
        property: Option<&tachyon_wire::parameter::ContentFilterProperty>,
    ) {
        self.touch();
        let filter = match (property, &self.filter_factory) {
            (Some(p), Some(factory)) => match (factory.0)(p) {
                Ok(f) => Some(crate::filter::Hook(f)),
                Err(e) => {
                    self.stats.remote_filters_refused += 1;
                    tracing::debug!(writer = %self.guid, %reader, error = %e,
                        expression = %p.filter_expression, "reader's content filter not applied");
                    None
                }
            },
            _ => None,
        };
        if let Some(p) = self.proxy_mut(reader) {
            p.filter = filter;
        }
        self.update_all_filtered();
    }

    /// Whether matched reliable reader `reader` answered one of this writer's HEARTBEATs
    /// (`None`: no such reliable reader).
    pub(crate) fn reader_synced(&self, reader: &Guid) -> Option<bool> {
        let i = self.proxy_index(reader)?;
        let p = &self.proxies[i];
        p.is_reliable().then_some(p.synced)
    }

    /// Gives matched reader `reader` a filter of the writer's choosing (`None`: none), as a
    /// discovery server scopes what it relays to each client by topic
    /// (`discovery/server.rs`).
    pub(crate) fn set_reader_sample_filter(
        &mut self,
        reader: &Guid,
        filter: Option<crate::filter::SampleFilter>,
    ) {
        self.touch();
        if let Some(p) = self.proxy_mut(reader) {
            p.filter = filter.map(crate::filter::Hook);
        }
        self.update_all_filtered();
    }

    fn update_all_filtered(&mut self) {
        self.all_filtered =
            !self.proxies.is_empty() && self.proxies.iter().all(|p| p.filter.is_some());
    }

    /// Sends what batching holds back at the next poll (`DataWriter::flush`).
    pub(crate) fn flush_batch(&mut self) {
        self.touch();
        self.batch_until = None;
    }

    /// Whether batching holds new data back at `now`: the delay has not run out and less than
    /// a datagram's worth is waiting.
    pub(crate) fn holding(&self, now: Instant) -> bool {
        self.batch_until.is_some_and(|t| now < t) && self.unsent_bytes < self.config.max_datagram
    }

    /// Everything new was sent: the batch starts afresh.
    fn batch_sent(&mut self) {
        self.unsent_bytes = 0;
        self.batch_until = None;
    }

    // ---- outputs ---------------------------------------------------------------------------

    /// When [`handle_timeout`](Self::handle_timeout) or a delayed repair is next due.
    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        let repairs = match self.quiet {
            Some(until) => until,
            None => self.earliest_repair(),
        };
        crate::time::earliest([
            self.heartbeat_at,
            self.batch_until,
            self.history.next_expiry(),
            self.deadlines.next(),
            self.lease_expiry.filter(|_| !self.liveliness_lost),
            repairs,
        ])
    }

    /// Whether the writer has anyone to send something to: a reader it does not serve
    /// directly, or a heartbeat or batch pending. `false` leaves it out of the transmit scan
    /// after a write.
    pub(crate) fn may_send(&self) -> bool {
        self.proxies.len() > self.direct.len()
            || self.fanout.is_some()
            || self.shm_echo.is_some()
            || self.heartbeat_now
            || self.batch_until.is_some()
    }

    /// After a datagram of new data: whether [`wants_to_send`](Self::wants_to_send) would
    /// say `false` now, told without looking at the readers (`quiet` says they owe nothing
    /// yet). `false` when that is not known this way.
    pub(crate) fn sent_all(&self, now: Instant) -> bool {
        let new = self.next_new <= self.history.last_sn() && self.fanout.is_some();
        (!new || self.holding(now))
            && !self.heartbeat_now
            && self.shm_echo.is_none()
            && self
                .quiet
                .is_some_and(|until| until.map_or(true, |t| now < t))
    }

    /// The one locator every new sample goes to, when that is all this writer sends new
    /// data to (no shared-memory reference to follow, no split between shared memory and
    /// the network): where a caller may send a write's own DATA at once
    /// (`Participant::poll_writer_transmit`).
    pub(crate) fn sole_destination(&self) -> Option<&Locator> {
        match (&self.fanout, &self.fanout_split, &self.shm_echo) {
            (Some(Destination::Unicast(l)), None, None) => Some(l),
            _ => None,
        }
    }

    /// Whether something is ready to send at `now` (without building it). A look at every
    /// reader that finds nothing makes the writer quiet until something changes.
    pub(crate) fn wants_to_send(&mut self, now: Instant) -> bool {
        if (self.next_new <= self.history.last_sn() && self.fanout.is_some() && !self.holding(now))
            || self.heartbeat_now
            || self.shm_echo.is_some()
        {
            return true;
        }
        if let Some(until) = self.quiet {
            if until.map_or(true, |t| now < t) {
                return false;
            }
        }
        if self.next_heartbeat_proxy().is_some() || self.next_repair_proxy(now).is_some() {
            return true;
        }
        self.quiet = Some(self.earliest_repair());
        false
    }

    /// After [`wants_to_send`](Self::wants_to_send) or `poll_transmit` found nothing: when
    /// asking again could find something though nothing changed (a delayed repair falls due,
    /// a batch stops waiting); `None`: not before something changes.
    pub(crate) fn recheck_at(&self) -> Option<Instant> {
        let repairs = match self.quiet {
            Some(until) => until,
            None => self.earliest_repair(),
        };
        let batch = self
            .batch_until
            .filter(|_| self.next_new <= self.history.last_sn());
        [repairs, batch].into_iter().flatten().min()
    }

    /// Something may have changed what the readers are owed: [`quiet`](Self::quiet) no
    /// longer holds.
    fn touch(&mut self) {
        self.quiet = None;
    }

    /// `poll_transmit` found nothing to send at all: quiet until the earliest delayed repair,
    /// unless a reader is still owed a heartbeat (it did not fit).
    pub(super) fn become_quiet(&mut self) {
        if self.next_heartbeat_proxy().is_some() {
            return;
        }
        self.quiet = Some(self.earliest_repair());
    }

    /// The period until the next periodic heartbeat: the configured one while readers answer;
    /// doubled for every heartbeat past [`QUIET_HEARTBEATS`] that none answered, up to
    /// [`MAX_HEARTBEAT_PERIOD`]. Readers that never answer (a crashed peer not yet timed out,
    /// or a flood of announced participants that never acknowledge: a discovery storm) then
    /// cost a heartbeat every few seconds instead of ten a second each. Any ACKNACK, or a
    /// write, restores the configured period.
    fn backed_off_heartbeat_period(&self) -> crate::time::Duration {
        let base = self.config.heartbeat_period;
        let doublings = self
            .silent_heartbeats
            .saturating_sub(QUIET_HEARTBEATS)
            .min(16);
        base.saturating_mul(1 << doublings)
            .min(MAX_HEARTBEAT_PERIOD.max(base))
    }

    /// A reader asked for fragments: the next periodic heartbeat comes after a tenth of the
    /// period, not the whole. The heartbeat that follows the repairs makes the reader ask for
    /// what is still missing; when it or the answer is lost, the reader would otherwise wait
    /// a whole period per round (Cyclone DDS's readers ask for 256 fragments a round, so a
    /// 4 MiB sample through 10 % loss takes about a dozen rounds).
    fn hasten_heartbeat(&mut self, now: Instant) {
        let at = now + self.config.heartbeat_period / 10;
        self.heartbeat_at = Some(self.heartbeat_at.map_or(at, |h| h.min(at)));
    }

    /// A thread waits for every reliable reader to acknowledge (`wait_for_acknowledgments`):
    /// the periodic heartbeat, which asks them, goes now instead of at its time (up to a
    /// heartbeat period away, since a steady stream asks only now and then), and the next
    /// piggybacked one asks too. Nothing when everything is acknowledged.
    pub(crate) fn request_acknowledgments(&mut self, now: Instant) {
        if !self.has_reliable() || !self.unacknowledged() {
            return;
        }
        self.ack_requested_at = None;
        self.direct_ack_requested_at = None;
        self.heartbeat_at = Some(now);
        self.handle_timeout(now);
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

    /// The writer's GUID.
    pub(crate) fn guid(&self) -> Guid {
        self.guid
    }

    pub(crate) fn config(&self) -> &WriterConfig {
        &self.config
    }

    pub(crate) fn history(&self) -> &WriterHistory {
        &self.history
    }

    pub(crate) fn stats(&self) -> WriterStats {
        self.stats
    }

    /// Guids of the matched readers.
    pub(crate) fn matched_readers(&self) -> impl Iterator<Item = Guid> + '_ {
        self.proxies.iter().map(|p| p.remote.guid)
    }

    /// Whether every matched reliable reader acknowledged every change up to `sn`
    /// (`wait_for_acknowledgments`).
    pub(crate) fn is_acknowledged(&self, sn: SequenceNumber) -> bool {
        self.acked_floor().map_or(true, |floor| floor >= sn)
    }

    /// Whether a reliable reader still lacks an acknowledgement of some change.
    pub(crate) fn unacknowledged(&self) -> bool {
        let last = self.history.last_sn();
        self.acked_floor().is_some_and(|floor| floor < last)
    }

    /// The flow-control bound: [`MAX_UNACKNOWLEDGED_BYTES`], or four of the largest sample.
    fn max_unacknowledged(&self) -> usize {
        MAX_UNACKNOWLEDGED_BYTES.max(self.largest_payload.saturating_mul(4))
    }

    /// Whether the writer's flow control applies: reliable readers, KEEP_ALL (KEEP_LAST
    /// replaces instead of waiting) and VOLATILE (a TRANSIENT_LOCAL history keeps acknowledged
    /// samples, which are not in flight).
    fn flow_controlled(&self) -> bool {
        let c = self.history.config();
        self.has_reliable()
            && c.history == crate::history::History::KeepAll
            && c.durability == Durability::Volatile
    }

    /// Whether a HEARTBEAT piggybacked now should ask for acknowledgements: none was asked
    /// for within the writer's interval ([`ack_request_interval`], a builtin writer's
    /// [`BUILTIN_ACK_REQUEST_INTERVAL`]), or the history is half full (a KEEP_ALL writer
    /// blocks when it is full, so acknowledgements must free it before).
    fn ack_wanted(&self, now: Instant) -> bool {
        self.ack_wanted_since(self.ack_requested_at, now)
    }

    /// Whether the HEARTBEAT that may end a burst of new data goes with it: it asks for
    /// acknowledgements (`ask`), the burst skipped sequence numbers, or none ended a burst
    /// for [`HEARTBEAT_PIGGYBACK_INTERVAL`].
    fn piggyback_due(&self, now: Instant, ask: bool, skipped: bool) -> bool {
        ask || skipped
            || self.piggybacked_at.map_or(true, |t| {
                now.saturating_duration_since(t) >= HEARTBEAT_PIGGYBACK_INTERVAL
            })
    }

    /// [`ack_wanted`](Self::ack_wanted), the last request made at `asked`.
    fn ack_wanted_since(&self, asked: Option<Instant>, now: Instant) -> bool {
        let interval_over = asked.map_or(true, |t| {
            now.saturating_duration_since(t) >= self.ack_interval
        });
        let limits = &self.history.config().limits;
        let filling = [limits.max_samples, limits.max_samples_per_instance]
            .into_iter()
            .flatten()
            .any(|max| self.history.len() * 2 >= max)
            || (self.flow_controlled() && self.history.bytes() * 2 >= self.max_unacknowledged());
        interval_over || filling
    }

    /// Whether periodic heartbeats are needed: something is unacknowledged, or a reliable
    /// reader has not answered a HEARTBEAT yet.
    fn wants_heartbeats(&self) -> bool {
        self.unacknowledged() || self.unsynced > 0
    }

    // ---- internals -------------------------------------------------------------------------

    fn has_reliable(&self) -> bool {
        self.floor.is_some()
    }

    /// Releases from the cache what every reader has: acknowledged by the reliable ones, sent
    /// to the best-effort ones (those served alone: what is still queued for them is kept).
    fn release(&mut self) {
        let alone = if self.served_alone > 0 {
            &self.proxies[..]
        } else {
            &[]
        };
        let queued_alone = alone
            .iter()
            .filter(|p| p.transcode.is_some())
            .flat_map(|p| {
                let runs = p.frag_runs.iter().map(|r| r.sn);
                p.requested.first().copied().into_iter().chain(runs)
            })
            .min();
        let sent = SequenceNumber(self.next_new.0 - 1);
        let sent = queued_alone.map_or(sent, |sn| sent.min(SequenceNumber(sn.0 - 1)));
        // A reference still to go to shared-memory readers keeps its sample.
        let sent = self
            .shm_echo
            .as_ref()
            .map_or(sent, |(_, sn)| sent.min(SequenceNumber(sn.0 - 1)));
        let acked = self.acked_floor().unwrap_or(sent).min(sent);
        if acked > self.released {
            self.released = acked;
            self.history.remove_acknowledged(acked);
        }
    }

    /// The first sequence number sent within the NACK suppression duration before `now`
    /// (requests for it and later ones are ignored); forgets older pushes.
    fn recently_sent(&mut self, now: Instant) -> SequenceNumber {
        let window = self.config.nack_suppression;
        while let Some(&(at, _)) = self.pushed.front() {
            if now.saturating_duration_since(at) < window {
                break;
            }
            self.pushed.pop_front();
        }
        self.pushed
            .front()
            .map_or(SequenceNumber(i64::MAX), |&(_, sn)| sn)
    }

    fn renew_lease(&mut self, now: Instant) {
        let l = self.config.liveliness;
        if l.kind != LivelinessKind::Automatic {
            if let Some(lease) = l.lease_duration {
                self.lease_expiry = Some(now + lease);
                self.liveliness_lost = false;
            }
        }
    }

    /// The HEARTBEAT range: first held (or one past the last when empty), last written.
    fn heartbeat_range(&self) -> (SequenceNumber, SequenceNumber) {
        // Never announce what has not been sent yet (it is still queued as new data).
        let last = self
            .history
            .last_sn()
            .min(SequenceNumber(self.next_new.0 - 1));
        let first = self
            .history
            .min_sn()
            .unwrap_or(SequenceNumber(last.0 + 1))
            .min(SequenceNumber(last.0 + 1));
        (first, last)
    }

    fn next_heartbeat_count(&mut self) -> Count {
        self.heartbeat_count = self.heartbeat_count.wrapping_add(1);
        Count(self.heartbeat_count)
    }
}

/// Sizes the writer checks before writing (re-exported for the send module).
pub(crate) use layout::{HEARTBEAT, HEARTBEAT_FRAG, INFO_DST, INFO_TS};
