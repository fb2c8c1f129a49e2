//! What describes an endpoint: the QoS-derived configuration of local writers and readers, and
//! what is known about a matched remote one (the record discovery produces).

use std::sync::Arc;

use tachyon_cdr::KeyHash;
use tachyon_wire::{EntityId, Guid, Locator, VendorId};

use crate::frag::{ReassemblyLimits, DEFAULT_FRAGMENT_SIZE};
use crate::history::{Durability, ReaderHistoryConfig, WriterHistoryConfig};
use crate::time::Duration;

/// RELIABILITY kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reliability {
    /// Samples may be lost; nothing is repaired.
    BestEffort,
    /// Lost samples are repaired through HEARTBEAT / ACKNACK / NACK_FRAG.
    #[default]
    Reliable,
}

/// LIVELINESS kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LivelinessKind {
    /// The participant asserts liveliness for its writers by itself.
    #[default]
    Automatic,
    /// The application asserts the whole participant (any writer writing counts too).
    ManualByParticipant,
    /// Each writer is asserted by writing or by `assert_liveliness` on it.
    ManualByTopic,
}

/// LIVELINESS QoS: a kind and a lease (`None` = infinite).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Liveliness {
    /// How liveliness is asserted.
    pub kind: LivelinessKind,
    /// How long a writer stays alive without an assertion.
    pub lease_duration: Option<Duration>,
}

/// Derives an instance handle from a serialized payload when the DATA carried no key hash
/// (the runtime supplies one built from the topic type, `tachyon_cdr::key_hash` of the decoded
/// sample, or from a dynamic type's description). `is_key` says the payload is a key-only
/// serialization.
#[derive(Clone)]
pub struct KeyHashFn(Arc<KeyHashDyn>);

/// The function a [`KeyHashFn`] calls.
type KeyHashDyn = dyn Fn(&[u8], bool) -> Option<KeyHash> + Send + Sync;

impl KeyHashFn {
    /// Wraps `f`.
    pub fn new(f: impl Fn(&[u8], bool) -> Option<KeyHash> + Send + Sync + 'static) -> KeyHashFn {
        KeyHashFn(Arc::new(f))
    }

    /// The instance handle of `payload` (`is_key`: a key-only payload), if it decodes.
    pub fn call(&self, payload: &[u8], is_key: bool) -> Option<KeyHash> {
        (self.0)(payload, is_key)
    }
}

impl core::fmt::Debug for KeyHashFn {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("KeyHashFn")
    }
}

/// The default largest datagram an endpoint builds: a 1500-byte Ethernet MTU minus the IPv4 and
/// UDP headers, so nothing is ever fragmented by IP.
pub const DEFAULT_MAX_DATAGRAM: usize = 1472;

/// Configuration of a local DataWriter (from its QoS and the participant's settings).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriterConfig {
    /// RELIABILITY.
    pub reliability: Reliability,
    /// HISTORY, RESOURCE_LIMITS and DURABILITY.
    pub history: WriterHistoryConfig,
    /// Whether the topic is keyed (entity kind, key hash in inline QoS).
    pub keyed: bool,
    /// How often a HEARTBEAT goes out while reliable readers have not acknowledged everything.
    pub heartbeat_period: Duration,
    /// How long the writer waits after an ACKNACK before repairing (merges requests of several
    /// readers; 0 answers at once).
    pub nack_response_delay: Duration,
    /// Requests for samples first sent less than this long ago are ignored: they are most
    /// likely still in flight (a heartbeat overtook them), not lost. 0 answers every request.
    pub nack_suppression: Duration,
    /// Requests from a reader for samples repaired to it less than this long ago are
    /// ignored too (0: never). For writers whose readers all match at once, as discovery's
    /// do: the HEARTBEAT answering a reader's pre-emptive ACKNACK crosses the repair its
    /// first request brought and asks for it again. A repair genuinely lost is asked for
    /// again after the next HEARTBEAT, so it costs recovery time on lossy links: user writers
    /// leave it at 0.
    pub repair_suppression: Duration,
    /// Largest datagram built (RTPS header included); larger samples go out as DATA_FRAG.
    pub max_datagram: usize,
    /// Fragment size of DATA_FRAG.
    pub fragment_size: u16,
    /// A HEARTBEAT_FRAG follows every this many fragments of a sample (0: never), so readers
    /// ask for lost fragments before the sample is complete.
    pub heartbeat_frag_interval: u32,
    /// LIFESPAN (`None` = infinite).
    pub lifespan: Option<Duration>,
    /// DEADLINE offered (`None` = infinite).
    pub deadline: Option<Duration>,
    /// LIVELINESS offered.
    pub liveliness: Liveliness,
    /// TRANSPORT_PRIORITY, handed to the transport with every datagram.
    pub priority: i32,
    /// Write batching (a Tachyon extension, as Cyclone DDS's `dds_write_set_batch` and RTI's
    /// BATCH): new data waits up to this long for more to fill a datagram, then goes out
    /// together; a full datagram's worth goes at once. `None`: every write is sent at once.
    pub batch_delay: Option<Duration>,
    /// Its publisher's PRESENTATION has `coherent_access`: its samples may carry
    /// coherent-set inline QoS, which the fragment size must leave room for.
    pub coherent_sets: bool,
    /// Every DATA carries the sample's identity (writer GUID, sequence number) in eProsima's
    /// inline parameter 0x800f, which Fast DDS discovery servers require of the discovery
    /// data they receive (discovery writers of a discovery-server client,
    /// `discovery/client.rs`).
    pub sample_identity: bool,
}

impl Default for WriterConfig {
    fn default() -> WriterConfig {
        WriterConfig {
            reliability: Reliability::Reliable,
            history: WriterHistoryConfig::default(),
            keyed: false,
            heartbeat_period: Duration::from_millis(100),
            nack_response_delay: Duration::ZERO,
            nack_suppression: Duration::ZERO,
            repair_suppression: Duration::ZERO,
            max_datagram: DEFAULT_MAX_DATAGRAM,
            fragment_size: DEFAULT_FRAGMENT_SIZE,
            heartbeat_frag_interval: 64,
            lifespan: None,
            deadline: None,
            liveliness: Liveliness::default(),
            priority: 0,
            sample_identity: false,
            batch_delay: None,
            coherent_sets: false,
        }
    }
}

/// Configuration of a local DataReader.
#[derive(Clone, Debug)]
pub struct ReaderConfig {
    /// RELIABILITY requested.
    pub reliability: Reliability,
    /// TRANSPORT_PRIORITY its ACKNACKs are sent with (DDS gives readers none: the runtime
    /// uses its topic's), so a critical reader's answers travel in the critical lane too.
    pub priority: i32,
    /// HISTORY, RESOURCE_LIMITS and READER_DATA_LIFECYCLE of the reader's cache.
    pub history: ReaderHistoryConfig,
    /// DURABILITY requested: a volatile reader does not receive a writer's older samples.
    pub durability: Durability,
    /// Whether the topic is keyed.
    pub keyed: bool,
    /// Instance handle of a payload without inline key hash (keyed topics).
    pub key_hash_of: Option<KeyHashFn>,
    /// How long the reader waits after a HEARTBEAT before answering with an ACKNACK.
    pub heartbeat_response_delay: Duration,
    /// Most samples held out of order per matched writer, waiting for an earlier one.
    pub max_out_of_order: usize,
    /// Most payload bytes held out of order over all matched writers; a reliable sample
    /// beyond it is dropped (and asked for again later), so out-of-order data cannot hold
    /// `max_out_of_order` × 64 KiB per writer.
    pub max_pending_bytes: usize,
    /// Bounds on samples being reassembled from fragments.
    pub reassembly: ReassemblyLimits,
    /// A partially received sample older than this is abandoned.
    pub reassembly_timeout: Duration,
    /// DEADLINE requested (`None` = infinite).
    pub deadline: Option<Duration>,
    /// TIME_BASED_FILTER minimum separation (`None` = every sample).
    pub time_based_filter: Option<Duration>,
    /// OWNERSHIP EXCLUSIVE: each instance takes changes from one writer at a time, its owner
    /// (the strongest writer writing it).
    pub exclusive_ownership: bool,
    /// DESTINATION_ORDER BY_SOURCE_TIMESTAMP: a change older (by source timestamp) than
    /// the newest one the instance took is dropped, so every reader ends with the same value
    /// whatever the arrival order across writers.
    pub by_source_timestamp: bool,
    /// PRESENTATION of its subscriber: with `coherent_access`, coherent sets become visible
    /// whole or not at all; with `ordered_access` and scope TOPIC or GROUP, `read`/`take`
    /// return samples in reception order across instances.
    pub presentation: crate::qos::Presentation,
    /// Its subscriber (readers of one subscriber assemble a remote publisher's coherent sets
    /// together); `EntityId::UNKNOWN` for none.
    pub subscriber: EntityId,
}

impl Default for ReaderConfig {
    fn default() -> ReaderConfig {
        ReaderConfig {
            reliability: Reliability::BestEffort,
            priority: 0,
            history: ReaderHistoryConfig::default(),
            durability: Durability::Volatile,
            keyed: false,
            key_hash_of: None,
            heartbeat_response_delay: Duration::ZERO,
            max_out_of_order: 4096,
            max_pending_bytes: 64 * 1024 * 1024,
            reassembly: ReassemblyLimits::default(),
            reassembly_timeout: Duration::from_secs(10),
            deadline: None,
            time_based_filter: None,
            exclusive_ownership: false,
            by_source_timestamp: false,
            presentation: crate::qos::Presentation::default(),
            subscriber: EntityId::UNKNOWN,
        }
    }
}

impl PartialEq for ReaderConfig {
    fn eq(&self, other: &ReaderConfig) -> bool {
        // Function pointers are compared by presence only: their addresses are not stable.
        self.reliability == other.reliability
            && self.history == other.history
            && self.durability == other.durability
            && self.keyed == other.keyed
            && self.key_hash_of.is_some() == other.key_hash_of.is_some()
            && self.heartbeat_response_delay == other.heartbeat_response_delay
            && self.max_out_of_order == other.max_out_of_order
            && self.max_pending_bytes == other.max_pending_bytes
            && self.reassembly == other.reassembly
            && self.reassembly_timeout == other.reassembly_timeout
            && self.deadline == other.deadline
            && self.time_based_filter == other.time_based_filter
            && self.exclusive_ownership == other.exclusive_ownership
            && self.by_source_timestamp == other.by_source_timestamp
            && self.presentation == other.presentation
            && self.subscriber == other.subscriber
    }
}

/// The part of a [`WriterConfig`] DDS lets the application change after creation
/// (`DataWriter::set_qos`); see [`Participant::update_writer`](crate::Participant::update_writer).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriterUpdate {
    /// DEADLINE offered: each instance's period restarts at the change.
    pub deadline: Option<Duration>,
    /// LIFESPAN of changes written from now on (those already written keep their expiry).
    pub lifespan: Option<Duration>,
    /// TRANSPORT_PRIORITY of datagrams sent from now on.
    pub priority: i32,
}

/// The part of a [`ReaderConfig`] DDS lets the application change after creation
/// (`DataReader::set_qos`); see [`Participant::update_reader`](crate::Participant::update_reader).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReaderUpdate {
    /// DEADLINE requested: each instance's period restarts at the change.
    pub deadline: Option<Duration>,
    /// TIME_BASED_FILTER minimum separation (`None` = every sample), for samples received
    /// from now on.
    pub time_based_filter: Option<Duration>,
    /// READER_DATA_LIFECYCLE autopurge delays (applied at the next purge check).
    pub lifecycle: crate::history::ReaderDataLifecycle,
}

/// A matched remote (or local) reader, as a writer sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteReader {
    /// The reader's GUID.
    pub guid: Guid,
    /// Where directed traffic (repairs, GAPs, heartbeats) goes: the first is used.
    pub unicast_locators: Vec<Locator>,
    /// Multicast groups it listens on; when every matched reader shares one, new data is sent
    /// once to that group.
    pub multicast_locators: Vec<Locator>,
    /// What it requested.
    pub reliability: Reliability,
    /// Whether it wants the writer's history (TRANSIENT_LOCAL or stronger).
    pub durability: Durability,
}

/// A matched remote (or local) writer, as a reader sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteWriter {
    /// The writer's GUID.
    pub guid: Guid,
    /// Where ACKNACK and NACK_FRAG go: the first is used.
    pub unicast_locators: Vec<Locator>,
    /// What it offers.
    pub reliability: Reliability,
    /// Whether it keeps history for late joiners.
    pub durability: Durability,
    /// Its LIVELINESS offer: the reader declares it not alive when the lease runs out.
    pub liveliness: Liveliness,
    /// Its OWNERSHIP_STRENGTH (used by readers with EXCLUSIVE ownership).
    pub ownership_strength: i32,
    /// Its LIFESPAN: a sample it sent leaves the reader's cache this long after reception
    /// (`None`: never).
    pub lifespan: Option<Duration>,
    /// Its publisher (PID_GROUP_ENTITYID), if announced: readers of one subscriber assemble
    /// the coherent sets of one publisher from all its writers.
    pub group: Option<EntityId>,
    /// The implementation it belongs to (its participant's PID_VENDOR_ID): some speak their
    /// own dialect of the protocol (the form of a pre-emptive ACKNACK they answer at once).
    pub vendor: VendorId,
}
