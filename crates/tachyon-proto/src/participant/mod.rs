//! [`Participant`]: one DomainParticipant's protocol state — its local writers and readers,
//! which remote endpoints they are matched with, the message receiver, and the polled outputs
//! of all of them.
//!
//! Matching is a command here ([`Participant::match_reader`], [`Participant::match_writer`]):
//! discovery (SPDP/SEDP, the next layer) decides *what* matches and calls them, as the
//! application can in a static configuration. The builtin discovery endpoints will be ordinary
//! writers and readers of this participant, created with their well-known entity ids.

mod coherent;
mod filter;
pub mod lanes;
mod pack;
mod receive;
mod representation;
mod sharing;
mod slots;

use crate::maps::HashMap;

use tachyon_cdr::KeyHash;
use tachyon_wire::{
    EntityId, EntityKind, Guid, GuidPrefix, Header, Locator, ProtocolVersion, SequenceNumber,
    VendorId,
};

use crate::endpoint::{
    ReaderConfig, ReaderUpdate, RemoteReader, RemoteWriter, WriterConfig, WriterUpdate,
};
use crate::event::Event;
use crate::frag::ReassemblyStats;
use crate::history::{
    CacheChange, QosError, Query, ReadError, ReaderHistory, Sample, WriteError, WriterHistory,
};
use crate::layout;
use crate::reader::{Reader, ReaderStats};
use crate::time::{earliest_of, Instant};
use crate::transmit::{Transmit, TxBuf};
use crate::writer::{DirectReader, WriteRequest, Writer, WriterStats};
use slots::Slots;

/// Participant-wide settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParticipantConfig {
    /// Most local writers plus readers.
    pub max_endpoints: usize,
    /// Vendor id written in every message header.
    pub vendor_id: VendorId,
}

impl Default for ParticipantConfig {
    fn default() -> ParticipantConfig {
        ParticipantConfig {
            max_endpoints: 4096,
            vendor_id: VendorId::TACHYON,
        }
    }
}

/// Why a participant operation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// No local writer has this entity id.
    UnknownWriter(EntityId),
    /// No local reader has this entity id.
    UnknownReader(EntityId),
    /// The endpoint's QoS is inconsistent (DDS: INCONSISTENT_POLICY).
    Qos(QosError),
    /// The fragment size does not fit the largest datagram with the RTPS overhead.
    FragmentTooLarge {
        /// Configured fragment size.
        fragment_size: u16,
        /// Configured largest datagram.
        max_datagram: usize,
    },
    /// `max_endpoints` local endpoints exist already.
    TooManyEndpoints,
    /// The writer's history refused the change.
    Write(WriteError),
    /// The reader could not run the query.
    Read(ReadError),
    /// The participant was created without discovery (`Participant::new`); use
    /// `Participant::with_discovery` or match endpoints statically.
    NoDiscovery,
    /// `end_coherent_set` without an open coherent set (DDS: PRECONDITION_NOT_MET).
    NoCoherentSet,
    /// An endpoint with this entity id exists already (a lane's endpoint created twice).
    DuplicateEndpoint(EntityId),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::UnknownWriter(id) => write!(f, "no local writer with entity id {id:?}"),
            Error::UnknownReader(id) => write!(f, "no local reader with entity id {id:?}"),
            Error::Qos(e) => write!(f, "inconsistent QoS: {e}"),
            Error::FragmentTooLarge {
                fragment_size,
                max_datagram,
            } => write!(
                f,
                "fragment size {fragment_size} plus RTPS overhead does not fit the largest \
                 datagram of {max_datagram} bytes; lower fragment_size or raise max_datagram"
            ),
            Error::TooManyEndpoints => f.write_str("the participant's endpoint limit is reached"),
            Error::Write(e) => write!(f, "write refused: {e}"),
            Error::Read(e) => write!(f, "read refused: {e}"),
            Error::NoDiscovery => f.write_str(
                "this participant runs no discovery: create it with Participant::with_discovery \
                 or match endpoints with match_reader/match_writer",
            ),
            Error::DuplicateEndpoint(id) => {
                write!(f, "an endpoint with entity id {id:?} exists already")
            }
            Error::NoCoherentSet => f.write_str(
                "no coherent set is open: call begin_coherent_changes before \
                 end_coherent_changes",
            ),
        }
    }
}

impl std::error::Error for Error {}

impl From<WriteError> for Error {
    fn from(e: WriteError) -> Error {
        Error::Write(e)
    }
}

/// Counters of what the participant received.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParticipantStats {
    /// Datagrams handed to `handle_datagram`.
    pub datagrams_received: u64,
    /// Datagrams dropped whole: no valid RTPS header, or a submessage whose length runs past
    /// the end of the datagram.
    pub malformed_datagrams: u64,
    /// Submessages that failed their checks (the rest of their message was dropped).
    pub malformed_submessages: u64,
    /// Submessages interpreted.
    pub submessages_received: u64,
    /// Submessages after an INFO_DST naming another participant.
    pub not_for_us: u64,
    /// Submessages for no matched local endpoint.
    pub unknown_destination: u64,
    /// Datagrams sent.
    pub datagrams_sent: u64,
    /// Discovery messages sent in another message's datagram (`participant/pack.rs`): each
    /// is a datagram not sent.
    pub messages_packed: u64,
}

impl ParticipantStats {
    /// Adds another participant state's counts (a lane's) to these.
    pub fn add(&mut self, o: &ParticipantStats) {
        self.datagrams_received += o.datagrams_received;
        self.malformed_datagrams += o.malformed_datagrams;
        self.malformed_submessages += o.malformed_submessages;
        self.submessages_received += o.submessages_received;
        self.not_for_us += o.not_for_us;
        self.unknown_destination += o.unknown_destination;
        self.datagrams_sent += o.datagrams_sent;
        self.messages_packed += o.messages_packed;
    }
}

/// Which timers [`Participant::handle_timeout_of`] serves, so a runtime can run them in
/// priority order (DESIGN.md section 3). Every timer belongs to exactly one class, by the
/// endpoint that owns it; [`Participant::handle_timeout`] serves all three.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TimerClass {
    /// Timers of user writers whose TRANSPORT_PRIORITY is above the threshold set with
    /// [`Participant::set_critical_priority`]: heartbeats, repairs, lifespan, deadlines,
    /// liveliness lease.
    Critical,
    /// Timers of the other user writers and of user readers: heartbeats, acknack replies,
    /// repairs, lifespan, deadlines, liveliness leases.
    User,
    /// Discovery and housekeeping: SPDP announcements, remote lease checks, participant
    /// liveliness, and the timers of the builtin (SEDP, participant message) endpoints.
    Discovery,
}

impl TimerClass {
    /// The classes in priority order.
    pub const ALL: [TimerClass; 3] = [
        TimerClass::Critical,
        TimerClass::User,
        TimerClass::Discovery,
    ];

    fn index(self) -> usize {
        self as usize
    }
}

/// When each [`TimerClass`] is next due ([`Participant::poll_timeouts`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimerDeadlines([Option<Instant>; 3]);

impl TimerDeadlines {
    /// When `class` is next due, if it has a timer.
    pub fn get(&self, class: TimerClass) -> Option<Instant> {
        self.0[class.index()]
    }

    /// The earliest deadline of any class (what [`Participant::poll_timeout`] returns).
    pub fn earliest(&self) -> Option<Instant> {
        self.0.iter().flatten().min().copied()
    }

    fn add(&mut self, class: TimerClass, at: Option<Instant>) {
        let slot = &mut self.0[class.index()];
        *slot = earliest_of(*slot, at);
    }
}

/// Totals over every local reader, builtin (discovery) readers included: what they dropped and
/// what they hold now. A snapshot for diagnostics ([`Participant::readers_summary`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadersSummary {
    /// Readers summed over.
    pub readers: usize,
    /// The readers' counters, summed.
    pub stats: ReaderStats,
    /// The readers' reassembly counters, summed.
    pub reassembly: ReassemblyStats,
    /// Samples being reassembled from fragments now.
    pub reassembly_in_progress: usize,
    /// Bytes reassembly holds now (storage and bookkeeping).
    pub reassembly_bytes: usize,
    /// Samples held out of order, waiting for an earlier one.
    pub pending_samples: usize,
    /// Payload bytes of those samples.
    pub pending_bytes: usize,
}

impl ReadersSummary {
    /// Adds another summary's counts (a lane's readers) to this one.
    pub fn add(&mut self, other: &ReadersSummary) {
        let (s, t) = (other.stats, &mut self.stats);
        add_reader_stats(t, &s);
        let (s, t) = (other.reassembly, &mut self.reassembly);
        t.completed += s.completed;
        t.rejected += s.rejected;
        t.abandoned += s.abandoned;
        self.readers += other.readers;
        self.reassembly_in_progress += other.reassembly_in_progress;
        self.reassembly_bytes += other.reassembly_bytes;
        self.pending_samples += other.pending_samples;
        self.pending_bytes += other.pending_bytes;
    }

    fn add_reader(&mut self, r: &Reader) {
        let (s, t) = (r.stats(), &mut self.stats);
        add_reader_stats(t, &s);
        let (s, t) = (r.reassembly().stats(), &mut self.reassembly);
        t.completed += s.completed;
        t.rejected += s.rejected;
        t.abandoned += s.abandoned;
        self.readers += 1;
        self.reassembly_in_progress += r.reassembly().len();
        self.reassembly_bytes += r.reassembly().allocated_bytes();
        self.pending_samples += r.pending_len();
        self.pending_bytes += r.pending_bytes();
    }
}

fn add_reader_stats(t: &mut ReaderStats, s: &ReaderStats) {
    t.delivered += s.delivered;
    t.duplicates += s.duplicates;
    t.out_of_window += s.out_of_window;
    t.lost += s.lost;
    t.rejected += s.rejected;
    t.filtered += s.filtered;
    t.malformed += s.malformed;
    t.unknown_writer += s.unknown_writer;
    t.pending_overflow += s.pending_overflow;
    t.by_reference_missed += s.by_reference_missed;
    t.acknacks_sent += s.acknacks_sent;
    t.nack_frags_sent += s.nack_frags_sent;
    t.coherent_sets += s.coherent_sets;
    t.coherent_sets_discarded += s.coherent_sets_discarded;
}

/// The protocol state of one participant. Sans-IO: see the crate documentation for the order
/// of its methods.
#[derive(Debug)]
pub struct Participant {
    pub(crate) prefix: GuidPrefix,
    pub(crate) header: Header,
    pub(crate) config: ParticipantConfig,
    writers: Slots<Writer>,
    readers: Slots<Reader>,
    writer_ids: HashMap<EntityId, usize>,
    reader_ids: HashMap<EntityId, usize>,
    /// For each matched remote writer, the local readers (indices) matched with it.
    routes: HashMap<Guid, Vec<usize>>,
    /// Resolves samples handed by reference through shared memory (`crate::shared`).
    resolver: crate::shared::ResolverSlot,
    next_key: u32,
    /// Whether the transmit scan asks a reader next (writers and readers take turns).
    tx_reader_turn: bool,
    /// The readers a write hands its change to directly (reused, `serve_directly`).
    direct_scratch: Vec<DirectReader>,
    /// The writer written last and its slot (`writer_slot`), the reader taken from last and
    /// its slot (`reader_index`): found again without a look-up.
    last_writer: (EntityId, usize),
    last_reader: (EntityId, usize),
    /// The readers that follow a participant's lease (`Reader::follows_participant_leases`),
    /// the only ones a participant's activity concerns; `None` after a match, an unmatch or
    /// a reader's deletion, found again at the next activity (`participant_activity`).
    lease_readers: Option<Vec<usize>>,
    /// How many readers have coherent access (PRESENTATION `coherent_access`): only they
    /// can hold parts of publisher-wide coherent sets (`assemble_sets` looks for those after
    /// every datagram, and at no reader when this is zero).
    coherent_readers: usize,
    /// When an endpoint that left the transmit queue with nothing to send could find
    /// something without being changed (the earliest such time): all are queued again then.
    tx_recheck_at: Option<Instant>,
    /// Packs the builtin endpoints' messages per destination.
    packer: pack::Packer,
    /// Writers whose priority is above this are [`TimerClass::Critical`].
    critical_above: Option<i32>,
    pub(crate) stats: ParticipantStats,
    /// The last datagram carried submessages of builtin (discovery) writers.
    pub(crate) builtin_input: bool,
    /// Datagrams that carried builtin-endpoint submessages, so far.
    pub(crate) builtin_datagrams: u64,
    /// SPDP/SEDP state, when the participant runs discovery.
    pub(crate) discovery: Option<Box<crate::discovery::Discovery>>,
    /// Local publishers' coherent sets.
    publisher_sets: HashMap<EntityId, coherent::PublisherSets>,
    /// Remote publishers' coherent sets waiting for parts, per local subscriber.
    remote_sets: HashMap<coherent::RemoteKey, coherent::RemoteSets>,
    /// Endpoints of this participant kept in another protocol state (`lanes`).
    siblings: lanes::Siblings,
}

impl Participant {
    /// A participant with GUID prefix `prefix` and no endpoints.
    pub fn new(prefix: GuidPrefix, config: ParticipantConfig) -> Participant {
        Participant {
            prefix,
            header: Header {
                protocol_version: ProtocolVersion::V2_5,
                vendor_id: config.vendor_id,
                guid_prefix: prefix,
            },
            config,
            writers: Slots::default(),
            readers: Slots::default(),
            writer_ids: HashMap::default(),
            reader_ids: HashMap::default(),
            routes: HashMap::default(),
            next_key: 1,
            tx_reader_turn: false,
            direct_scratch: Vec::new(),
            last_writer: (EntityId::UNKNOWN, usize::MAX),
            last_reader: (EntityId::UNKNOWN, usize::MAX),
            lease_readers: None,
            coherent_readers: 0,
            tx_recheck_at: None,
            packer: pack::Packer::default(),
            critical_above: None,
            stats: ParticipantStats::default(),
            builtin_input: false,
            builtin_datagrams: 0,
            discovery: None,
            publisher_sets: HashMap::default(),
            remote_sets: HashMap::default(),
            siblings: lanes::Siblings::default(),
            resolver: crate::shared::ResolverSlot::default(),
        }
    }

    // ---- inputs ----------------------------------------------------------------------------

    /// Gives this participant what resolves samples handed by reference through shared
    /// memory ([`crate::shared`]); without one, such a DATA is not received (and repaired
    /// by value when reliable).
    pub fn set_sample_resolver(
        &mut self,
        resolver: std::sync::Arc<dyn crate::shared::SampleResolver>,
    ) {
        self.resolver = crate::shared::ResolverSlot(Some(resolver));
    }

    /// A datagram arrived from `source`.
    pub fn handle_datagram(&mut self, now: Instant, source: &Locator, data: &[u8]) {
        use crate::shared::Via;
        // Lent out of the participant for the datagram (nothing in `receive` looks at it
        // there), not cloned: a clone and its drop were two atomic read-modify-writes per
        // shared-memory datagram.
        let resolver = match source.kind {
            Locator::KIND_TACHYON_SHM => std::mem::take(&mut self.resolver),
            _ => crate::shared::ResolverSlot::default(),
        };
        let via = match source.kind {
            Locator::KIND_TACHYON_INTRA => Via::Intra,
            Locator::KIND_TACHYON_SHM => Via::Shm(resolver.0.as_deref()),
            _ => Via::Other,
        };
        self.receive(now, data, via);
        if resolver.0.is_some() {
            self.resolver = resolver;
        }
        self.run_discovery(now);
    }

    /// Timers are due (a spurious call does nothing).
    pub fn handle_timeout(&mut self, now: Instant) {
        self.discovery_timeout(now);
        for w in self.writers.iter_mut() {
            w.handle_timeout(now);
        }
        for r in self.readers.iter_mut() {
            r.handle_timeout(now);
        }
    }

    /// The timers of one class are due (a spurious call does nothing). Calling it for every
    /// class does what [`handle_timeout`](Self::handle_timeout) does, in another order.
    pub fn handle_timeout_of(&mut self, now: Instant, class: TimerClass) {
        if class == TimerClass::Discovery {
            self.discovery_timeout(now);
        }
        let critical = self.critical_above;
        for w in self.writers.iter_mut() {
            if writer_class(w, critical) == class {
                w.handle_timeout(now);
            }
        }
        for r in self.readers.iter_mut() {
            if reader_class(r) == class {
                r.handle_timeout(now);
            }
        }
    }

    // ---- commands --------------------------------------------------------------------------

    /// Creates a writer; returns its entity id (its handle).
    pub fn create_writer(&mut self, config: WriterConfig) -> Result<EntityId, Error> {
        check_fragmenting(&config)?;
        let kind = if config.keyed {
            EntityKind::USER_WRITER_WITH_KEY
        } else {
            EntityKind::USER_WRITER_NO_KEY
        };
        let id = self.allocate_id(kind)?;
        self.insert_writer(id, config)?;
        Ok(id)
    }

    /// Creates a writer with a given entity id (the builtin ones).
    pub(crate) fn insert_writer(
        &mut self,
        id: EntityId,
        config: WriterConfig,
    ) -> Result<(), Error> {
        let w = Writer::new(Guid::new(self.prefix, id), config).map_err(Error::Qos)?;
        let i = self.writers.push(w);
        self.writer_ids.insert(id, i);
        Ok(())
    }

    /// Creates a reader; returns its entity id (its handle).
    pub fn create_reader(&mut self, config: ReaderConfig) -> Result<EntityId, Error> {
        let kind = if config.keyed {
            EntityKind::USER_READER_WITH_KEY
        } else {
            EntityKind::USER_READER_NO_KEY
        };
        let id = self.allocate_id(kind)?;
        self.insert_reader(id, config)?;
        Ok(id)
    }

    /// Creates a reader with a given entity id (the builtin ones).
    pub(crate) fn insert_reader(
        &mut self,
        id: EntityId,
        config: ReaderConfig,
    ) -> Result<(), Error> {
        let mut r = Reader::new(Guid::new(self.prefix, id), config).map_err(Error::Qos)?;
        if id.kind().is_builtin() {
            // Discovery keeps its own state of every remote participant and endpoint: the
            // builtin readers hold only what waits to be taken.
            r.forget_taken_instances();
        }
        self.coherent_readers += usize::from(r.config().presentation.coherent_access);
        let i = self.readers.push(r);
        self.reader_ids.insert(id, i);
        Ok(())
    }

    /// Deletes a writer (its readers are unmatched first; with discovery, its announcement is
    /// withdrawn).
    pub fn delete_writer(&mut self, now: Instant, id: EntityId) -> Result<(), Error> {
        self.retract_writer(now, id);
        if self.forget_lane_endpoint(id) {
            return Ok(());
        }
        let i = self
            .writer_ids
            .remove(&id)
            .ok_or(Error::UnknownWriter(id))?;
        self.writers.remove(i);
        Ok(())
    }

    /// Deletes a reader (with discovery, its announcement is withdrawn).
    pub fn delete_reader(&mut self, now: Instant, id: EntityId) -> Result<(), Error> {
        self.retract_reader(now, id);
        if self.forget_lane_endpoint(id) {
            return Ok(());
        }
        let i = self
            .reader_ids
            .remove(&id)
            .ok_or(Error::UnknownReader(id))?;
        if self
            .readers
            .get(i)
            .is_some_and(|r| r.config().presentation.coherent_access)
        {
            self.coherent_readers = self.coherent_readers.saturating_sub(1);
        }
        self.readers.remove(i);
        self.lease_readers = None;
        for routes in self.routes.values_mut() {
            routes.retain(|&r| r != i);
        }
        self.routes.retain(|_, r| !r.is_empty());
        if !self.remote_sets.is_empty() {
            self.resolve_sets(now);
        }
        Ok(())
    }

    /// Matches local writer `writer` with a reader (discovery found one).
    pub fn match_reader(
        &mut self,
        now: Instant,
        writer: EntityId,
        remote: RemoteReader,
    ) -> Result<(), Error> {
        if self.siblings.is_sibling(writer) {
            self.queue_for_lane(lanes::LaneCommand::MatchReader { writer, remote });
            return Ok(());
        }
        // A reader of this very protocol state is handed new changes directly.
        let direct = (remote.guid.prefix == self.prefix)
            .then(|| self.reader_ids.get(&remote.guid.entity_id).copied())
            .flatten();
        let reader = remote.guid;
        let w = self
            .writer_mut(writer)
            .ok_or(Error::UnknownWriter(writer))?;
        w.match_reader(now, remote);
        if let Some(slot) = direct {
            w.set_reader_direct(&reader, slot);
        }
        Ok(())
    }

    /// Unmatches a reader from local writer `writer` (it went away or no longer matches).
    pub fn unmatch_reader(&mut self, writer: EntityId, remote: &Guid) -> Result<bool, Error> {
        let reader = *remote;
        if self.queue_for_lane(lanes::LaneCommand::UnmatchReader { writer, reader }) {
            return Ok(true);
        }
        Ok(self
            .writer_mut(writer)
            .ok_or(Error::UnknownWriter(writer))?
            .unmatch_reader(remote))
    }

    /// Matches local reader `reader` with a writer.
    pub fn match_writer(
        &mut self,
        now: Instant,
        reader: EntityId,
        remote: RemoteWriter,
    ) -> Result<(), Error> {
        if self.siblings.is_sibling(reader) {
            self.queue_for_lane(lanes::LaneCommand::MatchWriter { reader, remote });
            return Ok(());
        }
        let i = self.reader_index(reader)?;
        let guid = remote.guid;
        let r = self
            .readers
            .get_mut(i)
            .ok_or(Error::UnknownReader(reader))?;
        r.match_writer(now, remote);
        self.lease_readers = None;
        let routes = self.routes.entry(guid).or_default();
        if !routes.contains(&i) {
            routes.push(i);
        }
        Ok(())
    }

    /// Unmatches a writer from local reader `reader`.
    pub fn unmatch_writer(
        &mut self,
        now: Instant,
        reader: EntityId,
        remote: &Guid,
    ) -> Result<bool, Error> {
        let writer = *remote;
        if self.queue_for_lane(lanes::LaneCommand::UnmatchWriter { reader, writer }) {
            return Ok(true);
        }
        let i = self.reader_index(reader)?;
        let r = self
            .readers
            .get_mut(i)
            .ok_or(Error::UnknownReader(reader))?;
        let was = r.unmatch_writer(now, remote);
        self.lease_readers = None;
        if let Some(routes) = self.routes.get_mut(remote) {
            routes.retain(|&x| x != i);
            if routes.is_empty() {
                self.routes.remove(remote);
            }
        }
        if !self.remote_sets.is_empty() {
            // Sets waiting for a part of this writer are decided without it.
            self.resolve_sets(now);
        }
        Ok(was)
    }

    /// Changes the QoS of local writer `writer` that DDS lets change after creation
    /// (DEADLINE, LIFESPAN, TRANSPORT_PRIORITY). Re-announce it with
    /// [`announce_writer`](Self::announce_writer) so others see the change.
    pub fn update_writer(
        &mut self,
        now: Instant,
        writer: EntityId,
        update: WriterUpdate,
    ) -> Result<(), Error> {
        self.writer_mut(writer)
            .ok_or(Error::UnknownWriter(writer))?
            .update(now, update);
        Ok(())
    }

    /// Changes the QoS of local reader `reader` that DDS lets change after creation
    /// (DEADLINE, TIME_BASED_FILTER, READER_DATA_LIFECYCLE). Re-announce it with
    /// [`announce_reader`](Self::announce_reader) so others see the change.
    pub fn update_reader(
        &mut self,
        now: Instant,
        reader: EntityId,
        update: ReaderUpdate,
    ) -> Result<(), Error> {
        self.reader_mut(reader)
            .ok_or(Error::UnknownReader(reader))?
            .update(now, update);
        Ok(())
    }

    /// Writers whose TRANSPORT_PRIORITY is above `threshold` have their timers in
    /// [`TimerClass::Critical`] (`None`, the default: no writer does).
    pub fn set_critical_priority(&mut self, threshold: Option<i32>) {
        self.critical_above = threshold;
    }

    /// Whether a write of `writer` may be refused for now (`WouldBlock`: flow control of a
    /// reliable KEEP_ALL writer, or a RESOURCE_LIMITS limit reached). A caller that retries
    /// after waiting keeps a copy of its request only then: a KEEP_LAST writer without
    /// limits (the usual one) takes it as it is. An unknown writer may.
    pub fn write_may_block(&self, writer: EntityId) -> bool {
        self.writer(writer).map_or(true, Writer::may_block)
    }

    /// Writes a change (data, dispose or unregister) with writer `writer`.
    ///
    /// `Err(Error::Write(WriteError::WouldBlock { .. }))` is flow control: the history is full
    /// until readers acknowledge; retry after the next inputs.
    pub fn write(
        &mut self,
        now: Instant,
        writer: EntityId,
        req: WriteRequest,
    ) -> Result<SequenceNumber, Error> {
        let i = *self
            .writer_ids
            .get(&writer)
            .ok_or(Error::UnknownWriter(writer))?;
        self.last_writer = (writer, i);
        let group = self.writers.get(i).and_then(|w| self.group_member(w));
        // Touched, not queued: a writer with only readers it serves directly (or none) has
        // nothing for the transmit scan after a write.
        let w = self
            .writers
            .get_mut_touched(i)
            .ok_or(Error::UnknownWriter(writer))?;
        let sn = w.write_in_set(now, req, group.map(|(_, g)| g))?;
        if w.may_send() {
            self.writers.requeue(i);
        }
        let Some(w) = self.writers.get_mut_quiet(i) else {
            return Ok(sn);
        };
        if let Some(change) = w.take_direct_change() {
            self.serve_directly(now, i, change);
        }
        if let Some((publisher, g)) = group {
            self.group_member_written(publisher, g);
        }
        Ok(sn)
    }

    /// Hands `change`, just written by the writer in slot `w`, to the readers of this
    /// participant it serves directly (`writer/direct.rs`): what receiving its DATA would do.
    /// The last of them gets the change's payload itself, the others a copy of its handle
    /// (each copy and its drop two atomic read-modify-writes).
    fn serve_directly(&mut self, now: Instant, w: usize, mut change: CacheChange) {
        let mut readers = std::mem::take(&mut self.direct_scratch);
        readers.clear();
        let Some(writer) = self.writers.get(w) else {
            self.direct_scratch = readers;
            return;
        };
        let keyed = writer.config().keyed;
        let guid = writer.guid();
        readers.extend_from_slice(writer.direct_readers());
        let last = readers.len().saturating_sub(1);
        for (k, d) in readers.iter().enumerate() {
            let Some(i) = self.direct_slot(d) else {
                continue;
            };
            // A handed-over change gives the reader something to send only when it makes an
            // acknowledgement due: the transmit scan looks at it only then.
            if let Some(r) = self.readers.get_mut_touched(i) {
                let payload = match k == last {
                    true => std::mem::take(&mut change.payload),
                    false => change.payload.clone(),
                };
                r.handle_local(now, guid, &change, payload, keyed);
                if r.acks_due_at().is_some() {
                    self.readers.requeue(i);
                }
            }
        }
        self.direct_scratch = readers;
        // As a datagram of this participant's would have shown it active.
        self.participant_activity(now, self.prefix);
        if self
            .writers
            .get_mut_quiet(w)
            .is_some_and(|w| w.served_directly(now))
        {
            self.writers.requeue(w);
        }
    }

    /// The slot of a reader served directly: the one the writer knows, unless another reader
    /// took it since (then looked up by id).
    fn direct_slot(&self, d: &DirectReader) -> Option<usize> {
        match self.readers.get(d.slot) {
            Some(r) if r.guid().entity_id == d.id => Some(d.slot),
            _ => self.reader_ids.get(&d.id).copied(),
        }
    }

    /// Participant `source` showed it is active (a datagram of it, or, for this one, a
    /// change handed over): the readers following its lease renew it. Only those are asked
    /// (a walk over every reader per datagram otherwise).
    pub(crate) fn participant_activity(&mut self, now: Instant, source: GuidPrefix) {
        let readers = &mut self.readers;
        let list = self.lease_readers.get_or_insert_with(|| {
            let following = readers
                .iter_indexed()
                .filter(|(_, r)| r.follows_participant_leases());
            following.map(|(i, _)| i).collect()
        });
        readers.for_each_of(list, |r| r.handle_participant_activity(now, source));
    }

    /// When writer `writer`, or a reader it hands its changes to directly, next needs
    /// [`handle_timeout`](Self::handle_timeout): what a write to it can have changed (a
    /// reader's deadline or lifespan timer starts with the sample it is handed).
    pub fn writer_timeout(&self, writer: EntityId) -> Option<Instant> {
        let w = self.writer(writer)?;
        let mut t = w.poll_timeout();
        for d in w.direct_readers() {
            let r = self.direct_slot(d).and_then(|i| self.readers.get(i));
            t = earliest_of(t, r.and_then(Reader::poll_timeout));
        }
        t
    }

    /// Sends what write batching holds back in `writer` at the next
    /// [`poll_transmit`](Self::poll_transmit) (`WriterConfig::batch_delay`).
    pub fn flush_writer(&mut self, writer: EntityId) -> Result<(), Error> {
        self.writer_mut(writer)
            .ok_or(Error::UnknownWriter(writer))?
            .flush_batch();
        Ok(())
    }

    /// Registers an instance with writer `writer`.
    pub fn register_instance(
        &mut self,
        writer: EntityId,
        instance: KeyHash,
    ) -> Result<KeyHash, Error> {
        Ok(self
            .writer_mut(writer)
            .ok_or(Error::UnknownWriter(writer))?
            .register_instance(instance)?)
    }

    /// Asserts the liveliness of one writer (MANUAL_BY_TOPIC).
    pub fn assert_writer_liveliness(
        &mut self,
        now: Instant,
        writer: EntityId,
    ) -> Result<(), Error> {
        self.writer_mut(writer)
            .ok_or(Error::UnknownWriter(writer))?
            .assert_liveliness(now);
        Ok(())
    }

    /// Asserts the liveliness of the participant: every MANUAL_BY_PARTICIPANT writer.
    pub fn assert_liveliness(&mut self, now: Instant) {
        self.send_manual_assertion(now);
        for w in self.writers.iter_mut() {
            if w.config().liveliness.kind == crate::endpoint::LivelinessKind::ManualByParticipant {
                w.assert_liveliness(now);
            }
        }
    }

    /// `read` on reader `reader` into `out` (cleared first).
    pub fn read(
        &mut self,
        reader: EntityId,
        query: &Query,
        out: &mut Vec<Sample>,
    ) -> Result<usize, Error> {
        self.reader_mut(reader)
            .ok_or(Error::UnknownReader(reader))?
            .read(query, out)
            .map_err(Error::Read)
    }

    /// `take` on reader `reader` into `out` (cleared first).
    pub fn take(
        &mut self,
        now: Instant,
        reader: EntityId,
        query: &Query,
        out: &mut Vec<Sample>,
    ) -> Result<usize, Error> {
        self.take_timed(|| now, reader, query, out)
    }

    /// [`take`](Self::take), the time asked of `clock` only if the take depends on it: when
    /// the reader holds samples with a lifespan (some may have expired) or its full cache held
    /// deliveries back (a take resumes them). A reader of neither kind, the usual one, is
    /// taken from without reading a clock (a `clock_gettime` costs about as much as a tenth
    /// of an in-process write and take).
    pub fn take_timed(
        &mut self,
        clock: impl FnOnce() -> Instant,
        reader: EntityId,
        query: &Query,
        out: &mut Vec<Sample>,
    ) -> Result<usize, Error> {
        let i = self.reader_index(reader)?;
        self.last_reader = (reader, i);
        // A take sends nothing and raises no event, unless it unblocks a reader whose cache
        // was full (samples held back are delivered, acknowledgements become due): only then
        // is the reader queued for the next flush (`has_output`).
        let r = self
            .readers
            .get_mut_quiet(i)
            .ok_or(Error::UnknownReader(reader))?;
        let blocked = r.is_blocked();
        let n = r.take(clock, query, out).map_err(Error::Read)?;
        if blocked {
            self.readers.requeue(i);
        }
        Ok(n)
    }

    /// Whether a flush ([`poll_transmits`](Self::poll_transmits), [`poll_event`](Self::poll_event))
    /// could find anything: some endpoint was reached since the last one, or SPDP has
    /// something to send. `false` after a call that left everything as it was (a take of
    /// a reader that was not blocked); timers aside, which `poll_timeout` tells.
    pub fn has_output(&self) -> bool {
        !(self.writers.is_quiet() && self.readers.is_quiet()) || self.spdp_pending()
    }

    /// Whether [`poll_transmits`](Self::poll_transmits) at `now` could find a datagram: one
    /// packed earlier, an SPDP announcement due, or a queued endpoint (or the time to queue
    /// them all again). `false` lets a caller skip lending a buffer for nothing (a write to
    /// readers of this participant only, a take).
    pub fn may_transmit(&self, now: Instant) -> bool {
        self.writers.queued() + self.readers.queued() > 0
            || self.packer.has_ready()
            || self.tx_recheck_at.is_some_and(|t| t <= now)
            || self.spdp_due(now)
    }

    // ---- outputs ---------------------------------------------------------------------------

    /// The next datagram to send, written into `buf`.
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut TxBuf) -> Option<Transmit> {
        self.poll_transmit_into(now, buf.as_mut_slice())
    }

    /// The next datagram to send, written into the start of `buf` (a buffer a transport
    /// lent, written in place): [`Transmit::len`] bytes of it. Nothing longer than
    /// `buf.len()` is written, so lend at least the largest datagram configured.
    pub fn poll_transmit_into(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        self.next_transmit(now, buf)
    }

    /// Every datagram due now, each written into a buffer `lend` gives and handed to `sink`
    /// with its [`Transmit`]: what calling [`poll_transmit_into`](Self::poll_transmit_into)
    /// until `None` does. Only endpoints changed since they last had nothing to send are
    /// asked (`participant/slots.rs`), so a flush after one sample looks at the endpoint it concerned and
    /// a burst of N datagrams costs N steps plus one look at each changed endpoint (a
    /// discovery storm makes thousands, each builtin endpoint has a proxy per participant).
    /// Returns the buffer lent last and not used.
    pub fn poll_transmits<B: AsMut<[u8]>>(
        &mut self,
        now: Instant,
        mut lend: impl FnMut() -> B,
        mut sink: impl FnMut(B, Transmit),
    ) -> B {
        let mut buf = lend();
        while let Some(t) = self.next_transmit(now, buf.as_mut()) {
            sink(buf, t);
            buf = lend();
        }
        buf
    }

    /// The next datagram: what an earlier packing pass left, SPDP, then the queued
    /// endpoints, writers and readers in turn; one that sends goes to the back of its queue
    /// (no endpoint starves the others), one with nothing to send leaves it. A message of a
    /// builtin endpoint starts a packing pass: the messages the builtin endpoints queued after
    /// it have ready are gathered into one datagram per destination (`participant/pack.rs`).
    fn next_transmit(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        if let Some(t) = self.packer.pop_into(buf) {
            self.stats.datagrams_sent += 1;
            return Some(t);
        }
        if self.discovery.is_some() {
            if let Some(t) = self.poll_spdp_transmit(now, buf) {
                self.stats.datagrams_sent += 1;
                return Some(t);
            }
        }
        let (t, builtin) = self.next_endpoint_transmit(now, buf, false)?;
        if builtin && self.builtin_queued_next() {
            self.packer.add(&t, buf);
            let mut scratch = std::mem::take(&mut self.packer.scratch);
            scratch.resize(buf.len(), 0);
            for _ in 1..pack::PACK_PASS {
                match self.next_endpoint_transmit(now, &mut scratch, true) {
                    Some((t, _)) => self.packer.add(&t, &scratch),
                    None => break,
                }
            }
            self.packer.scratch = scratch;
            let before = self.packer.packed;
            self.packer.finish();
            self.stats.messages_packed += self.packer.packed - before;
            let t = self.packer.pop_into(buf)?;
            self.stats.datagrams_sent += 1;
            return Some(t);
        }
        self.stats.datagrams_sent += 1;
        Some(t)
    }

    /// Whether the endpoint asked next is a builtin one (a packing pass stops at a user
    /// endpoint: its data is not held back or copied).
    fn builtin_queued_next(&self) -> bool {
        let writer = self.writers.front_queued().map(|w| w.map(Writer::guid));
        let reader = self.readers.front_queued().map(|r| r.map(Reader::guid));
        let next = match self.tx_reader_turn {
            true => reader.or(writer),
            false => writer.or(reader),
        };
        // An emptied slot leaves the queue without sending: not a reason to stop.
        next.is_some_and(|g| g.map_or(true, |g| g.entity_id.kind().is_builtin()))
    }

    /// The next message of the queued endpoints (see [`next_transmit`](Self::next_transmit)),
    /// and whether a builtin endpoint wrote it; with `builtin_only`, `None` as soon as the
    /// endpoint whose turn it is is a user endpoint.
    fn next_endpoint_transmit(
        &mut self,
        now: Instant,
        buf: &mut [u8],
        builtin_only: bool,
    ) -> Option<(Transmit, bool)> {
        if self.tx_recheck_at.is_some_and(|t| t <= now) {
            self.tx_recheck_at = None;
            self.writers.mark_all();
            self.readers.mark_all();
        }
        while self.writers.queued() + self.readers.queued() > 0 {
            if builtin_only && !self.builtin_queued_next() {
                return None;
            }
            let reader_turn = self.tx_reader_turn;
            self.tx_reader_turn = !reader_turn;
            let t = if reader_turn {
                let Some((i, r)) = self.readers.next_queued() else {
                    continue;
                };
                match r {
                    Some(r) => {
                        let t = match r.acks_idle(now) {
                            true => None,
                            false => r.poll_transmit(now, &self.header, buf),
                        };
                        if t.is_none() {
                            self.tx_recheck_at = earliest_of(self.tx_recheck_at, r.acks_due_at());
                        }
                        t.map(|t| (t, i, r.guid().entity_id))
                    }
                    None => None,
                }
            } else {
                let Some((i, w)) = self.writers.next_queued() else {
                    continue;
                };
                match w {
                    Some(w) => {
                        let t = match w.wants_to_send(now) {
                            true => w.poll_transmit(now, &self.header, buf),
                            false => None,
                        };
                        if t.is_none() {
                            self.tx_recheck_at = earliest_of(self.tx_recheck_at, w.recheck_at());
                        }
                        t.map(|t| (t, i, w.guid().entity_id))
                    }
                    None => None,
                }
            };
            if let Some((t, i, id)) = t {
                match reader_turn {
                    true => self.readers.requeue(i),
                    false => match self.writers.get_mut_touched(i) {
                        // All sent, and nothing owed: out of the queue at once (asking it
                        // again would walk its readers to find nothing).
                        Some(w) if w.sent_all(now) => {
                            self.tx_recheck_at = earliest_of(self.tx_recheck_at, w.recheck_at());
                        }
                        _ => self.writers.requeue(i),
                    },
                }
                return Some((t, id.kind().is_builtin()));
            }
        }
        None
    }

    /// The one locator every new sample of writer `writer` goes to, if there is one (one
    /// matched reader, or readers of one participant reached at one locator).
    pub fn writer_sole_destination(&self, writer: EntityId) -> Option<&Locator> {
        self.writer(writer).and_then(Writer::sole_destination)
    }

    /// The next datagram of writer `writer`, written into `buf` as the transmit scan would
    /// write it at that writer's turn — but only when every new sample of the writer goes to
    /// one locator ([`writer_sole_destination`](Self::writer_sole_destination); else `None`,
    /// and nothing is built): for a caller that sends a write's own DATA at once, before the
    /// scan (the runtime, `State::send_written`). A writer with more to send stays
    /// queued for the scan; one with nothing more leaves the queue, as the scan would take
    /// it out after asking it again.
    pub fn poll_writer_transmit(
        &mut self,
        now: Instant,
        writer: EntityId,
        buf: &mut [u8],
    ) -> Option<Transmit> {
        let i = self.writer_slot(writer)?;
        self.writers.get(i)?.sole_destination()?;
        let w = self.writers.get_mut_touched(i)?;
        if !w.wants_to_send(now) {
            return None;
        }
        let t = w.poll_transmit(now, &self.header, buf);
        if t.is_none() || !w.wants_to_send(now) {
            self.tx_recheck_at = earliest_of(self.tx_recheck_at, w.recheck_at());
            self.writers.unqueue_last(i);
        }
        if t.is_some() {
            self.stats.datagrams_sent += 1;
        }
        t
    }

    /// When `handle_timeout` should next be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let w = self.writers.iter().filter_map(Writer::poll_timeout);
        let r = self.readers.iter().filter_map(Reader::poll_timeout);
        w.chain(r).chain(self.discovery_poll_timeout()).min()
    }

    /// The earliest deadline of the user endpoints changed (reached mutably) since the last
    /// call: for a thread that handled user data and must know whether it armed a timer
    /// before the one the timers thread sleeps until. The others' deadlines did not move
    /// since that thread (or an earlier call) saw them. Forgets the changes.
    pub fn changed_user_poll_timeout(&mut self) -> Option<Instant> {
        let mut earliest: Option<Instant> = None;
        self.writers.take_changed(|w| {
            if writer_class(w, None) != TimerClass::Discovery {
                earliest = earliest_of(earliest, w.poll_timeout());
            }
        });
        self.readers.take_changed(|r| {
            if reader_class(r) != TimerClass::Discovery {
                earliest = earliest_of(earliest, r.poll_timeout());
            }
        });
        earliest
    }

    /// How many received datagrams carried submessages of builtin (discovery) endpoints.
    pub fn builtin_datagrams(&self) -> u64 {
        self.builtin_datagrams
    }

    /// When each timer class next needs [`handle_timeout_of`](Self::handle_timeout_of), in
    /// one pass over the endpoints.
    pub fn poll_timeouts(&self) -> TimerDeadlines {
        let mut d = TimerDeadlines::default();
        for w in self.writers.iter() {
            d.add(writer_class(w, self.critical_above), w.poll_timeout());
        }
        for r in self.readers.iter() {
            d.add(reader_class(r), r.poll_timeout());
        }
        d.add(TimerClass::Discovery, self.discovery_poll_timeout());
        d
    }

    /// Whether [`poll_event`](Self::poll_event), [`poll_lane_command`](Self::poll_lane_command)
    /// or [`poll_participant_activity`](Self::poll_participant_activity) may have something:
    /// false means a flush would find nothing to settle (a write to remote readers only).
    pub fn has_pending_events(&self) -> bool {
        self.discovery_has_events()
            || self.siblings.has_news()
            || self.writers.any_touched(Writer::has_events)
            || self.readers.any_touched(Reader::has_events)
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<Event> {
        if let Some(e) = self.discovery_poll_event() {
            return Some(e);
        }
        // Events of the builtin endpoints are discovery's business, not the application's.
        // Only endpoints reached mutably since their events were last taken can have new ones
        // (`slots.rs`): writers first, then readers, each in index order.
        self.writers
            .next_user_event(
                |w| w.guid().entity_id.kind().is_builtin(),
                Writer::poll_event,
            )
            .or_else(|| {
                let builtin = |r: &Reader| r.guid().entity_id.kind().is_builtin();
                self.readers.next_user_event(builtin, Reader::poll_event)
            })
    }

    // ---- getters ---------------------------------------------------------------------------

    /// This participant's GUID prefix.
    pub fn guid_prefix(&self) -> GuidPrefix {
        self.prefix
    }

    /// The full GUID of a local endpoint.
    pub fn guid(&self, id: EntityId) -> Guid {
        Guid::new(self.prefix, id)
    }

    /// Receive counters.
    pub fn stats(&self) -> ParticipantStats {
        self.stats
    }

    /// The history cache of a writer.
    pub fn writer_history(&self, writer: EntityId) -> Option<&WriterHistory> {
        self.writer(writer).map(Writer::history)
    }

    /// Counters of a writer.
    pub fn writer_stats(&self, writer: EntityId) -> Option<WriterStats> {
        self.writer(writer).map(Writer::stats)
    }

    /// Whether every reliable reader of `writer` acknowledged everything up to `sn`
    /// (the condition `wait_for_acknowledgments` waits for).
    pub fn is_acknowledged(&self, writer: EntityId, sn: SequenceNumber) -> Option<bool> {
        self.writer(writer).map(|w| w.is_acknowledged(sn))
    }

    /// Whether every reliable reader of `writer` acknowledged everything written so far.
    pub fn all_acknowledged(&self, writer: EntityId) -> Option<bool> {
        self.writer(writer)
            .map(|w| w.is_acknowledged(w.history().last_sn()))
    }

    /// A thread waits until every reliable reader of `writer` acknowledged what it wrote:
    /// the writer asks them now (a HEARTBEAT without the Final flag, in the next
    /// [`poll_transmit`](Self::poll_transmit)) rather than at its next periodic heartbeat.
    pub fn request_acknowledgments(&mut self, writer: EntityId, now: Instant) {
        if let Some(w) = self.writer_mut(writer) {
            w.request_acknowledgments(now);
        }
    }

    /// Readers matched with `writer`.
    pub fn matched_readers(&self, writer: EntityId) -> Vec<Guid> {
        self.writer(writer)
            .map(|w| w.matched_readers().collect())
            .unwrap_or_default()
    }

    /// Writers matched with `reader`.
    pub fn matched_writers(&self, reader: EntityId) -> Vec<Guid> {
        self.reader(reader)
            .map(|r| r.matched_writers().collect())
            .unwrap_or_default()
    }

    /// The history cache of a reader.
    pub fn reader_history(&self, reader: EntityId) -> Option<&ReaderHistory> {
        self.reader(reader).map(Reader::history)
    }

    /// Counters of a reader.
    pub fn reader_stats(&self, reader: EntityId) -> Option<ReaderStats> {
        self.reader(reader).map(Reader::stats)
    }

    /// Reassembly counters and bytes held by a reader.
    pub fn reader_reassembly(&self, reader: EntityId) -> Option<(ReassemblyStats, usize)> {
        self.reader(reader)
            .map(|r| (r.reassembly().stats(), r.reassembly().allocated_bytes()))
    }

    /// Counters and holdings of every local reader, summed (builtin readers included).
    pub fn readers_summary(&self) -> ReadersSummary {
        let mut sum = ReadersSummary::default();
        for r in self.readers.iter() {
            sum.add_reader(r);
        }
        sum
    }

    /// Samples a reader holds out of order (waiting for an earlier one).
    pub fn reader_pending(&self, reader: EntityId) -> Option<usize> {
        self.reader(reader).map(Reader::pending_len)
    }

    /// Whether local reader `reader` is matched with `writer`.
    pub fn reader_matched_with(&self, reader: EntityId, writer: &Guid) -> bool {
        self.reader(reader)
            .is_some_and(|r| r.is_matched_with(writer))
    }

    // ---- internals -------------------------------------------------------------------------

    fn allocate_id(&mut self, kind: EntityKind) -> Result<EntityId, Error> {
        let live = self.writer_ids.len() + self.reader_ids.len() + self.siblings.len();
        // Keys stay below 2^23: the top bit marks a lane's endpoints (`lanes::is_lane_id`).
        if live >= self.config.max_endpoints || self.next_key >= 1 << 23 {
            return Err(Error::TooManyEndpoints);
        }
        let k = self.next_key.to_be_bytes();
        self.next_key += 1;
        Ok(EntityId::new([k[1], k[2], k[3]], kind))
    }

    /// The slot of local writer `id`: the one written last without a look-up (the
    /// runtime asks for its timers right after the write).
    fn writer_slot(&self, id: EntityId) -> Option<usize> {
        let still = |i| self.writers.get(i).map(Writer::guid);
        remembered_slot(self.last_writer, id, still).or_else(|| self.writer_ids.get(&id).copied())
    }

    fn writer(&self, id: EntityId) -> Option<&Writer> {
        self.writers.get(self.writer_slot(id)?)
    }

    fn writer_mut(&mut self, id: EntityId) -> Option<&mut Writer> {
        let i = self.writer_slot(id)?;
        self.writers.get_mut(i)
    }

    fn reader(&self, id: EntityId) -> Option<&Reader> {
        let i = *self.reader_ids.get(&id)?;
        self.readers.get(i)
    }

    /// The slot of local reader `reader`.
    /// The one taken from last is found without a look-up (a reader polled by `take`).
    fn reader_index(&self, reader: EntityId) -> Result<usize, Error> {
        let still = |i| self.readers.get(i).map(Reader::guid);
        if let Some(i) = remembered_slot(self.last_reader, reader, still) {
            return Ok(i);
        }
        self.reader_ids
            .get(&reader)
            .copied()
            .ok_or(Error::UnknownReader(reader))
    }

    fn reader_mut(&mut self, id: EntityId) -> Option<&mut Reader> {
        let i = *self.reader_ids.get(&id)?;
        self.readers.get_mut(i)
    }
}

/// The timer class of a writer: builtin ones are discovery, user ones critical when their
/// priority is above the threshold.
fn writer_class(w: &Writer, critical_above: Option<i32>) -> TimerClass {
    if w.guid().entity_id.kind().is_builtin() {
        TimerClass::Discovery
    } else if critical_above.is_some_and(|t| w.config().priority > t) {
        TimerClass::Critical
    } else {
        TimerClass::User
    }
}

/// The timer class of a reader (readers have no TRANSPORT_PRIORITY).
fn reader_class(r: &Reader) -> TimerClass {
    if r.guid().entity_id.kind().is_builtin() {
        TimerClass::Discovery
    } else {
        TimerClass::User
    }
}

/// The largest inline QoS a change carries (key hash, status info, sentinel).
const MAX_INLINE_QOS: usize = 32;

/// The largest inline QoS of a sample in a coherent set (key hash, status info,
/// PID_COHERENT_SET, PID_GROUP_COHERENT_SET, PID_GROUP_SEQ_NUM, sentinel).
pub const MAX_COHERENT_INLINE_QOS: usize = 68;

/// A DATA_FRAG of one fragment, with INFO_DST, INFO_TS and inline QoS, must fit a datagram.
fn check_fragmenting(config: &WriterConfig) -> Result<(), Error> {
    let qos = if config.coherent_sets {
        MAX_COHERENT_INLINE_QOS
    } else {
        MAX_INLINE_QOS
    };
    let needed = layout::HEADER
        + layout::INFO_DST
        + layout::INFO_TS
        + layout::data_frag(qos, usize::from(config.fragment_size));
    if config.fragment_size == 0 || needed > config.max_datagram {
        return Err(Error::FragmentTooLarge {
            fragment_size: config.fragment_size,
            max_datagram: config.max_datagram,
        });
    }
    Ok(())
}

/// The slot remembered for an endpoint (`last`: its id and slot) when it is `id`'s and the
/// slot still holds it (`guid_at`: the GUID of the endpoint in a slot); slots are reused
/// after a deletion.
fn remembered_slot(
    last: (EntityId, usize),
    id: EntityId,
    guid_at: impl Fn(usize) -> Option<Guid>,
) -> Option<usize> {
    let (last_id, i) = last;
    (last_id == id && guid_at(i).is_some_and(|g| g.entity_id == id)).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Payload;
    use crate::time::Duration;
    use tachyon_wire::Time;

    fn writer(p: &mut Participant, priority: i32, deadline_ms: u64) -> EntityId {
        let config = WriterConfig {
            deadline: Some(Duration::from_millis(deadline_ms)),
            priority,
            ..WriterConfig::default()
        };
        let id = p.create_writer(config).expect("writer");
        let req = WriteRequest::data(KeyHash::default(), Time::ZERO, Payload::from(vec![0u8; 4]));
        p.write(Instant::ZERO, id, req).expect("write");
        id
    }

    fn missed(p: &mut Participant) -> Vec<EntityId> {
        std::iter::from_fn(|| p.poll_event())
            .filter_map(|e| match e {
                Event::OfferedDeadlineMissed { writer, .. } => Some(writer),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn an_updated_writer_restarts_its_deadlines_and_changes_its_class() {
        let at = |ms| Instant::ZERO + Duration::from_millis(ms);
        let mut p = Participant::new(GuidPrefix([4; 12]), ParticipantConfig::default());
        p.set_critical_priority(Some(10));
        let w = writer(&mut p, 0, 10);
        assert_eq!(p.poll_timeout(), Some(at(10)));
        let update = WriterUpdate {
            deadline: Some(Duration::from_millis(100)),
            lifespan: None,
            priority: 11,
        };
        p.update_writer(at(5), w, update).expect("update");
        assert_eq!(p.poll_timeouts().get(TimerClass::Critical), Some(at(105)));
        p.handle_timeout(at(30));
        assert!(
            missed(&mut p).is_empty(),
            "the period restarted with the new length"
        );
        p.handle_timeout(at(105));
        assert_eq!(missed(&mut p), vec![w]);
        let update = WriterUpdate {
            deadline: None,
            ..update
        };
        p.update_writer(at(110), w, update).expect("update");
        assert_eq!(p.poll_timeout(), None);
        let unknown = EntityId::new([9, 9, 9], EntityKind::USER_WRITER_WITH_KEY);
        assert!(p.update_writer(at(110), unknown, update).is_err());
    }

    #[test]
    fn timers_are_classed_by_the_writer_priority_and_served_per_class() {
        let mut p = Participant::new(GuidPrefix([3; 12]), ParticipantConfig::default());
        p.set_critical_priority(Some(10));
        let critical = writer(&mut p, 11, 20);
        let plain = writer(&mut p, 10, 10);
        let d = p.poll_timeouts();
        let at = |ms| Some(Instant::ZERO + Duration::from_millis(ms));
        assert_eq!(d.get(TimerClass::Critical), at(20));
        assert_eq!(d.get(TimerClass::User), at(10));
        assert_eq!(d.get(TimerClass::Discovery), None);
        assert_eq!(d.earliest(), p.poll_timeout());

        let now = Instant::ZERO + Duration::from_millis(30);
        p.handle_timeout_of(now, TimerClass::Discovery);
        assert!(missed(&mut p).is_empty(), "no discovery timer here");
        p.handle_timeout_of(now, TimerClass::Critical);
        assert_eq!(missed(&mut p), vec![critical]);
        p.handle_timeout_of(now, TimerClass::User);
        assert_eq!(missed(&mut p), vec![plain]);

        // Without a threshold every user writer is of the user class.
        p.set_critical_priority(None);
        assert_eq!(p.poll_timeouts().get(TimerClass::Critical), None);
    }
}
