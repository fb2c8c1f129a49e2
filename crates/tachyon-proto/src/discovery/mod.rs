//! Discovery (RTPS 2.5 8.5): SPDP finds participants, SEDP their writers and readers, and the
//! participant-message topic carries liveliness. It sits on the same [`Participant`] as user
//! endpoints: the SEDP and participant-message writers and readers are ordinary reliable,
//! transient-local endpoints with well-known entity ids; SPDP is a stateless best-effort writer
//! and reader driven from here (`spdp.rs`).
//!
//! What discovery decides, it carries out with the participant's own commands: a remote reader
//! that matches a local writer becomes `match_reader`, a lost participant `unmatch_*` of all its
//! endpoints. The application announces its endpoints with [`Participant::announce_writer`] /
//! [`Participant::announce_reader`]; everything else is automatic.
//!
//! Limits ([`DiscoveryConfig::max_participants`], `max_remote_endpoints`) bound what a flood of
//! announcements can allocate; what is refused is counted in [`DiscoveryStats`].

mod client;
pub mod data;
mod intern;
mod liveliness;
mod older_types;
mod sedp;
mod server;
mod spdp;
mod types;

use crate::maps::HashMap;
use std::collections::VecDeque;

use tachyon_cdr::KeyHash;
use tachyon_wire::{EntityId, Guid, GuidPrefix, Locator, Reach, Time};

use crate::endpoint::{Reliability, WriterConfig};
use crate::event::Event;
use crate::history::{
    Durability, History, ReaderHistoryConfig, ResourceLimits, WriterHistoryConfig,
};
use crate::time::{Duration, Instant};
use crate::{Participant, ReaderConfig};

pub(crate) use client::sample_identity;
pub use client::{fastdds_server_prefix, PID_FASTDDS_SAMPLE_IDENTITY};
pub use data::{
    builtin_endpoints, DataError, ParticipantData, ParticipantMessage, ProductVersion,
    PublicationData, SubscriptionData,
};
pub use types::{TypeFetch, TypeStats};

/// A discovery server this participant is a client of (Fast DDS's discovery-server
/// protocol, `discovery/client.rs`): its GUID prefix and the locators it listens on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiscoveryServer {
    /// The server's GUID prefix (a Fast DDS 2.x server's: [`fastdds_server_prefix`]).
    pub prefix: GuidPrefix,
    /// Where it listens (its metatraffic unicast locators).
    pub locators: Vec<Locator>,
}

/// What discovery needs to know about this participant and its network.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiscoveryConfig {
    /// The DDS domain id (announced; participants of other domains are ignored).
    pub domain_id: u32,
    /// DOMAIN_TAG (announced when non-empty; must be equal to match).
    pub domain_tag: String,
    /// How long others keep this participant without hearing from it (default 10 s).
    pub lease_duration: Duration,
    /// Period of SPDP announcements (default 3 s, well inside the lease).
    pub announce_period: Duration,
    /// Announcements sent at `initial_announce_period` after start, before the period applies
    /// (default 5 at 100 ms: fast discovery even when the first datagrams are lost).
    pub initial_announcements: u32,
    /// Period of the initial announcements.
    pub initial_announce_period: Duration,
    /// Where SPDP announcements go: the multicast group and/or the unicast peer list.
    pub spdp_destinations: Vec<Locator>,
    /// This participant's metatraffic unicast locators (SEDP, liveliness).
    pub metatraffic_unicast: Vec<Locator>,
    /// Its metatraffic multicast locators.
    pub metatraffic_multicast: Vec<Locator>,
    /// Its default unicast locators (user data).
    pub default_unicast: Vec<Locator>,
    /// Its default multicast locators.
    pub default_multicast: Vec<Locator>,
    /// Whether remote multicast locators may be used as destinations (false when the chosen
    /// interface cannot multicast).
    pub use_multicast: bool,
    /// The locators this participant's transports reach, most preferred first: of each
    /// remote list, only the locators of the first rule that covers any of them are used
    /// (default: UDPv4 only). So each matched pair uses the best transport both sides have.
    pub reach: Vec<Reach>,
    /// Most remote participants kept; further ones are ignored (and counted).
    pub max_participants: usize,
    /// Most remote writers plus readers kept over all participants.
    pub max_remote_endpoints: usize,
    /// USER_DATA of the participant.
    pub user_data: Vec<u8>,
    /// ENTITY_NAME announced, if any.
    pub entity_name: Option<String>,
    /// PROPERTY_LIST announced (name, value), such as where the participant runs.
    pub properties: Vec<(String, String)>,
    /// Wall-clock time at `Instant::ZERO`, for source timestamps of discovery data (the
    /// protocol reads no clock; the runtime supplies it).
    pub wall_clock_at_zero: Duration,
    /// Discovery servers to be a client of (default none: simple discovery). With servers,
    /// SPDP goes to them only and SEDP runs with them only (`discovery/client.rs`).
    pub servers: Vec<DiscoveryServer>,
    /// This participant is a discovery server (`discovery/server.rs`): its clients announce
    /// themselves to it, and it relays what they announce. Its GUID prefix should be a
    /// server's ([`fastdds_server_prefix`]), which is how Fast DDS clients know it.
    pub server: bool,
}

impl Default for DiscoveryConfig {
    fn default() -> DiscoveryConfig {
        DiscoveryConfig {
            domain_id: 0,
            domain_tag: String::new(),
            lease_duration: Duration::from_secs(10),
            announce_period: Duration::from_secs(3),
            initial_announcements: 5,
            initial_announce_period: Duration::from_millis(100),
            spdp_destinations: Vec::new(),
            metatraffic_unicast: Vec::new(),
            metatraffic_multicast: Vec::new(),
            default_unicast: Vec::new(),
            default_multicast: Vec::new(),
            use_multicast: true,
            reach: vec![Reach::kind(Locator::KIND_UDPV4)],
            max_participants: 1024,
            max_remote_endpoints: 65_536,
            user_data: Vec::new(),
            entity_name: None,
            properties: Vec::new(),
            wall_clock_at_zero: Duration::ZERO,
            servers: Vec::new(),
            server: false,
        }
    }
}

/// Counters of discovery.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiscoveryStats {
    /// SPDP announcements sent (each destination counts once).
    pub spdp_sent: u64,
    /// SPDP samples received (own loopback included).
    pub spdp_received: u64,
    /// Builtin-topic samples that did not decode.
    pub malformed: u64,
    /// Participants of another domain or domain tag.
    pub other_domain: u64,
    /// Participants ignored because `max_participants` was reached.
    pub participants_refused: u64,
    /// Endpoints ignored because `max_remote_endpoints` was reached.
    pub endpoints_refused: u64,
    /// Endpoints announced by participants not (or no longer) known.
    pub orphan_endpoints: u64,
    /// Participants removed because their lease expired.
    pub leases_expired: u64,
    /// SPDP samples waiting in the inbox were dropped because it was full.
    pub inbox_overflow: u64,
}

/// Why a remote participant was removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParticipantLostReason {
    /// Nothing was heard from it within its lease duration.
    LeaseExpired,
    /// It announced its deletion.
    Deleted,
}

/// A discovered participant: its announcement and when its lease ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteParticipant {
    /// The last announcement received.
    pub data: ParticipantData,
    /// When it is removed unless heard from again (`None`: infinite lease, or known through
    /// a discovery server, which announces its end).
    pub lease_expiry: Option<Instant>,
    /// Known through a discovery server's relay rather than its own announcements.
    pub relayed: bool,
}

/// The discovery state of a participant.
#[derive(Debug)]
pub(crate) struct Discovery {
    pub(crate) config: DiscoveryConfig,
    spdp: spdp::Announcer,
    /// SPDP samples received, waiting to be processed after the datagram.
    inbox: VecDeque<spdp::Received>,
    participants: HashMap<GuidPrefix, RemoteParticipant>,
    /// Remote endpoints, boxed: the table's slack then costs a pointer per slot, not a
    /// whole record (`PublicationData` is over 700 bytes).
    publications: HashMap<Guid, Box<PublicationData>>,
    subscriptions: HashMap<Guid, Box<SubscriptionData>>,
    local_publications: HashMap<EntityId, PublicationData>,
    local_subscriptions: HashMap<EntityId, SubscriptionData>,
    /// The distinct QoS and type information of remote endpoints, shared by them.
    writer_qos: intern::Interner<crate::qos::DataWriterQos>,
    reader_qos: intern::Interner<crate::qos::DataReaderQos>,
    type_infos: intern::Interner<tachyon_xtypes::TypeInformation>,
    /// Local topics (name, type name) and how many times each was added: remote endpoints
    /// on their names with other types raise INCONSISTENT_TOPIC.
    local_topics: HashMap<(String, String), usize>,
    /// Participants that announced their deletion, until when their late announcements are
    /// ignored (oldest first).
    deleted: VecDeque<(GuidPrefix, Instant)>,
    /// A lower bound of the earliest lease expiry.
    lease_check: Option<Instant>,
    /// The participant whose lease the last datagram renewed, and until when another of its
    /// datagrams need not renew it again ([`RENEW_GRANULE`]).
    renewed: Option<(GuidPrefix, Instant)>,
    liveliness: liveliness::State,
    /// The type library and TypeLookup state.
    types: types::TypeState,
    /// Endpoints announced before their participant, oldest first.
    orphans: VecDeque<sedp::Orphan>,
    /// The discovery servers this participant is a client of, if any.
    client: Option<client::Client>,
    /// The server state, when this participant is a discovery server.
    server: Option<server::Server>,
    events: VecDeque<Event>,
    /// The locators of remote endpoints that have a less preferred way to them, that way,
    /// and whose they are ([`LocatorAlternates`]).
    alternates: HashMap<Locator, (GuidPrefix, Vec<Locator>)>,
    /// Those not yet taken ([`Participant::poll_locator_alternates`]).
    alternates_news: VecDeque<LocatorAlternates>,
    stats: DiscoveryStats,
}

/// A locator a remote participant announced, of the transport discovery chose for it, and
/// the unicast locators of the next transport both sides have that the same announcement
/// named (a same-host participant's shared-memory locator, and its UDP ones). A transport
/// that finds it cannot reach a locator after all (shared memory: no channel left in the
/// writer's segment, the reader's table of incoming segments full, a segment that cannot be
/// opened) has the datagram sent there instead, so the pair loses nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocatorAlternates {
    /// Whose locators these are.
    pub participant: GuidPrefix,
    /// The locator chosen.
    pub locator: Locator,
    /// Where to send instead.
    pub alternates: Vec<Locator>,
}

/// Most SPDP samples buffered between two processing passes.
const INBOX_LIMIT: usize = 256;

/// The longest a participant's lease is not renewed again after a datagram renewed it.
const RENEW_GRANULE: Duration = Duration::from_millis(1);

/// How long after renewing a lease of `lease` its renewal may be skipped: [`RENEW_GRANULE`],
/// or a 1024th of a shorter lease.
fn renew_granule(lease: Duration) -> Duration {
    RENEW_GRANULE.min(lease / 1024)
}

impl Participant {
    /// A participant with discovery: SPDP announcements to `discovery.spdp_destinations`,
    /// SEDP and liveliness builtin endpoints, matching of announced endpoints.
    pub fn with_discovery(
        prefix: GuidPrefix,
        config: crate::ParticipantConfig,
        discovery: DiscoveryConfig,
    ) -> Participant {
        let mut p = Participant::new(prefix, config);
        p.create_builtin_endpoints(!discovery.servers.is_empty() || discovery.server);
        // What the SEDP writers leave out for the peers they serve alone (`older_types`); a
        // discovery server serves every client alone through the same transcoder, unchanged.
        let unreadable = older_types::Unreadable::default();
        for writer in [
            EntityId::SEDP_PUBLICATIONS_WRITER,
            EntityId::SEDP_SUBSCRIPTIONS_WRITER,
        ] {
            let _ = p.set_writer_transcoder(writer, Some(unreadable.transcoder()));
        }
        let client = client::Client::new(&discovery.servers);
        if client.is_some() {
            p.create_pdp_reader();
            for server in &discovery.servers {
                p.prematch_server(Instant::ZERO, server);
            }
        }
        let server = discovery.server.then(server::Server::default);
        if server.is_some() {
            p.create_server_endpoints();
        }
        let me = spdp::own_data(prefix, p.config.vendor_id, &discovery);
        let mut announcer = spdp::Announcer::new(me, &discovery);
        if client.is_some() {
            announcer.set_reliable();
        }
        if server.is_some() {
            // A server announces through its reliable PDP writer only.
            announcer.silence();
        }
        p.discovery = Some(Box::new(Discovery {
            spdp: announcer,
            client,
            server,
            config: discovery,
            inbox: VecDeque::new(),
            participants: HashMap::default(),
            publications: HashMap::default(),
            subscriptions: HashMap::default(),
            local_publications: HashMap::default(),
            local_subscriptions: HashMap::default(),
            writer_qos: intern::Interner::default(),
            reader_qos: intern::Interner::default(),
            type_infos: intern::Interner::default(),
            local_topics: HashMap::default(),
            deleted: VecDeque::new(),
            lease_check: None,
            renewed: None,
            liveliness: liveliness::State::default(),
            types: types::TypeState::with_unreadable(unreadable),
            orphans: VecDeque::new(),
            events: VecDeque::new(),
            alternates: HashMap::default(),
            alternates_news: VecDeque::new(),
            stats: DiscoveryStats::default(),
        }));
        p
    }

    /// Announces the deletion of this participant (SPDP dispose to every known participant
    /// and destination, SEDP disposal of every announced endpoint). Poll transmits afterwards
    /// to send them, then drop the participant.
    pub fn shutdown(&mut self, now: Instant) {
        let Some(d) = self.discovery.as_ref() else {
            return;
        };
        let writers: Vec<EntityId> = d.local_publications.keys().copied().collect();
        let readers: Vec<EntityId> = d.local_subscriptions.keys().copied().collect();
        for w in writers {
            self.retract_writer(now, w);
        }
        for r in readers {
            self.retract_reader(now, r);
        }
        let Some(mut d) = self.discovery.take() else {
            return;
        };
        if d.server.is_some() {
            let me = self.prefix;
            self.server_participant_gone(now, &mut d, me);
        } else {
            d.spdp.announce_deletion();
        }
        self.discovery = Some(d);
    }

    /// Changes the participant's USER_DATA (DDS `DomainParticipant::set_qos`) and announces
    /// it at once through SPDP, so every remote participant sees it (its DCPSParticipant
    /// data is updated). Does nothing without discovery.
    pub fn set_user_data(&mut self, user_data: Vec<u8>) {
        let Some(d) = self.discovery.as_mut() else {
            return;
        };
        // A discovery-server client announces to its servers only, which relay it.
        let known = d
            .participants
            .values()
            .filter(|_| d.client.is_none())
            .map(|p| usable(&d.config.reach, &p.data.metatraffic_unicast, false))
            .filter(|l| !l.is_empty())
            .collect();
        d.config.user_data.clone_from(&user_data);
        if d.spdp.set_user_data(user_data, known) {
            if let Some(c) = d.client.as_mut() {
                d.spdp.next_sn();
                c.announce_to_all(true);
            }
            if let Some(s) = d.server.as_mut() {
                s.announce_now();
            }
        }
    }

    // ---- getters ---------------------------------------------------------------------------

    /// Remote participants discovered and alive.
    pub fn discovered_participants(&self) -> impl Iterator<Item = &RemoteParticipant> {
        self.discovery.iter().flat_map(|d| d.participants.values())
    }

    /// Remote writers discovered (DCPSPublication).
    pub fn discovered_publications(&self) -> impl Iterator<Item = &PublicationData> {
        self.discovery
            .iter()
            .flat_map(|d| d.publications.values().map(|p| &**p))
    }

    /// Remote readers discovered (DCPSSubscription).
    pub fn discovered_subscriptions(&self) -> impl Iterator<Item = &SubscriptionData> {
        self.discovery
            .iter()
            .flat_map(|d| d.subscriptions.values().map(|s| &**s))
    }

    /// A discovered participant by prefix.
    pub fn discovered_participant(&self, prefix: &GuidPrefix) -> Option<&RemoteParticipant> {
        self.discovery.as_ref()?.participants.get(prefix)
    }

    /// A discovered remote writer.
    pub fn discovered_publication(&self, guid: &Guid) -> Option<&PublicationData> {
        self.discovery
            .as_ref()?
            .publications
            .get(guid)
            .map(|p| &**p)
    }

    /// A discovered remote reader.
    pub fn discovered_subscription(&self, guid: &Guid) -> Option<&SubscriptionData> {
        self.discovery
            .as_ref()?
            .subscriptions
            .get(guid)
            .map(|s| &**s)
    }

    /// What is announced now of local writer `writer` (the last
    /// [`announce_writer`](Self::announce_writer)), e.g. to change its QoS and announce it
    /// again.
    pub fn local_publication(&self, writer: EntityId) -> Option<&PublicationData> {
        self.discovery.as_ref()?.local_publications.get(&writer)
    }

    /// What is announced now of every local writer.
    pub fn local_publications(&self) -> impl Iterator<Item = &PublicationData> {
        self.discovery
            .iter()
            .flat_map(|d| d.local_publications.values())
    }

    /// What is announced now of every local reader.
    pub fn local_subscriptions(&self) -> impl Iterator<Item = &SubscriptionData> {
        self.discovery
            .iter()
            .flat_map(|d| d.local_subscriptions.values())
    }

    /// What is announced now of local reader `reader`.
    pub fn local_subscription(&self, reader: EntityId) -> Option<&SubscriptionData> {
        self.discovery.as_ref()?.local_subscriptions.get(&reader)
    }

    /// Discovery counters (all zero without discovery).
    pub fn discovery_stats(&self) -> DiscoveryStats {
        self.discovery.as_ref().map(|d| d.stats).unwrap_or_default()
    }

    /// The discovery configuration (its limits among others).
    pub fn discovery_config(&self) -> Option<&DiscoveryConfig> {
        self.discovery.as_ref().map(|d| &d.config)
    }

    /// The discovery configuration, to change limits or destinations while running (SPDP
    /// data already announced is not changed).
    pub fn discovery_config_mut(&mut self) -> Option<&mut DiscoveryConfig> {
        self.discovery.as_mut().map(|d| &mut d.config)
    }

    /// What this participant announces in SPDP.
    pub fn own_participant_data(&self) -> Option<&ParticipantData> {
        self.discovery.as_ref().map(|d| d.spdp.data())
    }

    // ---- internals -------------------------------------------------------------------------

    /// The builtin endpoints; `with_servers`: SEDP data carries its sample identity, as
    /// discovery servers require.
    fn create_builtin_endpoints(&mut self, with_servers: bool) {
        let writer = |history| WriterConfig {
            reliability: Reliability::Reliable,
            history: WriterHistoryConfig {
                history,
                limits: ResourceLimits::default(),
                durability: Durability::TransientLocal,
            },
            keyed: true,
            // Both sides match at once: the HEARTBEAT answering a reader's pre-emptive
            // ACKNACK crosses the repair its first request brought, and asks for it again.
            // Not answering requests for what just went out halves discovery's traffic.
            repair_suppression: BUILTIN_REPAIR_SUPPRESSION,
            ..WriterConfig::default()
        };
        let reader = builtin_reader();
        for id in [
            EntityId::SEDP_PUBLICATIONS_WRITER,
            EntityId::SEDP_SUBSCRIPTIONS_WRITER,
            EntityId::PARTICIPANT_MESSAGE_WRITER,
        ] {
            let config = WriterConfig {
                sample_identity: with_servers && sedp::is_sedp(id),
                ..writer(History::KeepLast(1))
            };
            // The builtin configurations are valid by construction.
            let _ = self.insert_writer(id, config);
        }
        // TypeLookup (XTypes 7.6.3.3.4): keyless, reliable, volatile request and reply
        // endpoints; a writer keeps its last messages until they are acknowledged.
        for id in [
            EntityId::TYPE_LOOKUP_REQUEST_WRITER,
            EntityId::TYPE_LOOKUP_REPLY_WRITER,
        ] {
            let mut w = writer(History::KeepLast(TYPE_LOOKUP_DEPTH));
            w.history.durability = Durability::Volatile;
            w.keyed = false;
            let _ = self.insert_writer(id, w);
        }
        for id in [
            EntityId::TYPE_LOOKUP_REQUEST_READER,
            EntityId::TYPE_LOOKUP_REPLY_READER,
        ] {
            let _ = self.insert_reader(
                id,
                ReaderConfig {
                    durability: Durability::Volatile,
                    keyed: false,
                    ..reader.clone()
                },
            );
        }
        type KeyOf = fn(&[u8], bool) -> Option<tachyon_cdr::KeyHash>;
        let readers: [(EntityId, KeyOf); 3] = [
            (
                EntityId::SEDP_PUBLICATIONS_READER,
                sedp::publication_key as _,
            ),
            (
                EntityId::SEDP_SUBSCRIPTIONS_READER,
                sedp::subscription_key as _,
            ),
            (
                EntityId::PARTICIPANT_MESSAGE_READER,
                liveliness::message_key as _,
            ),
        ];
        for (id, key) in readers {
            let _ = self.insert_reader(
                id,
                ReaderConfig {
                    key_hash_of: Some(crate::endpoint::KeyHashFn::new(key)),
                    ..reader.clone()
                },
            );
        }
    }

    /// The reliable PDP reader of a discovery-server client (`discovery/client.rs`).
    fn create_pdp_reader(&mut self) {
        fn participant_key(payload: &[u8], _is_key: bool) -> Option<KeyHash> {
            data::participant_guid_from_key(payload).map(|g| guid_key(&g))
        }
        let _ = self.insert_reader(
            EntityId::SPDP_READER,
            ReaderConfig {
                key_hash_of: Some(crate::endpoint::KeyHashFn::new(participant_key)),
                ..builtin_reader()
            },
        );
    }

    /// Matches the reliable PDP reader with participant `prefix`'s PDP writer (a discovery
    /// server's at its client, a client's at its server).
    fn match_pdp_writer(
        &mut self,
        now: Instant,
        prefix: GuidPrefix,
        locators: Vec<Locator>,
        vendor: tachyon_wire::VendorId,
    ) {
        let _ = self.match_writer(
            now,
            EntityId::SPDP_READER,
            crate::endpoint::RemoteWriter {
                guid: Guid::new(prefix, EntityId::SPDP_WRITER),
                unicast_locators: locators,
                reliability: Reliability::Reliable,
                durability: Durability::TransientLocal,
                liveliness: crate::endpoint::Liveliness::default(),
                ownership_strength: 0,
                lifespan: None,
                group: None,
                vendor,
            },
        );
    }

    /// Runs discovery after inputs: processes received SPDP samples and builtin-reader data.
    ///
    /// Only datagrams that carried builtin-endpoint traffic pay for it: user data skips it.
    pub(crate) fn run_discovery(&mut self, now: Instant) {
        if !std::mem::take(&mut self.builtin_input) {
            return;
        }
        self.builtin_datagrams = self.builtin_datagrams.wrapping_add(1);
        let Some(mut d) = self.discovery.take() else {
            return;
        };
        while let Some(rx) = d.inbox.pop_front() {
            self.handle_spdp(now, &mut d, rx);
        }
        if d.client.is_some() || d.server.is_some() {
            self.drain_pdp(now, &mut d);
        }
        self.drain_sedp(now, &mut d);
        self.drain_liveliness(now, &mut d);
        self.drain_typelookup(now, &mut d);
        self.discovery = Some(d);
    }

    /// A datagram from `prefix` arrived: its participant's lease is renewed.
    pub(crate) fn renew_lease(&mut self, now: Instant, prefix: GuidPrefix) {
        let Some(d) = self.discovery.as_mut() else {
            return;
        };
        // A stream of datagrams from one participant renews its lease once per granule, not
        // at each (a look-up of the participant and a sum of times a datagram): its lease
        // ends at most a granule early.
        if d.renewed
            .is_some_and(|(p, until)| p == prefix && now < until)
        {
            return;
        }
        if let Some(p) = d.participants.get_mut(&prefix) {
            if !p.relayed {
                let lease = p.data.lease_duration;
                p.lease_expiry = lease.and_then(|l| now.checked_add(l));
                d.renewed = lease.and_then(|l| Some((prefix, now.checked_add(renew_granule(l))?)));
            }
        }
    }

    /// Discovery timers: announcements, lease expiry, automatic liveliness.
    pub(crate) fn discovery_timeout(&mut self, now: Instant) {
        let Some(mut d) = self.discovery.take() else {
            return;
        };
        if d.lease_check.is_some_and(|t| t <= now) {
            self.expire_leases(now, &mut d);
        }
        self.liveliness_timeout(now, &mut d);
        self.retry_type_requests(now, &mut d);
        self.server_timeout(now, &mut d);
        self.discovery = Some(d);
    }

    /// When discovery next needs `handle_timeout`.
    pub(crate) fn discovery_poll_timeout(&self) -> Option<Instant> {
        let d = self.discovery.as_ref()?;
        [
            d.spdp.next_due(),
            d.lease_check,
            d.liveliness.next_due(),
            d.types.next_due(),
            Participant::server_due(d),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Whether [`discovery_poll_event`](Self::discovery_poll_event) has one.
    pub(crate) fn discovery_has_events(&self) -> bool {
        self.discovery
            .as_ref()
            .is_some_and(|d| !d.events.is_empty())
    }

    /// The next discovery event.
    pub(crate) fn discovery_poll_event(&mut self) -> Option<Event> {
        self.discovery.as_mut()?.events.pop_front()
    }

    /// The next locator of a remote participant found to have a less preferred way to it
    /// (or that way changed), in the order found; see [`LocatorAlternates`]. A participant's
    /// are forgotten when it is lost ([`Event::ParticipantLost`]).
    pub fn poll_locator_alternates(&mut self) -> Option<LocatorAlternates> {
        self.discovery.as_mut()?.alternates_news.pop_front()
    }

    fn expire_leases(&mut self, now: Instant, d: &mut Discovery) {
        let expired: Vec<GuidPrefix> = d
            .participants
            .iter()
            .filter(|(_, p)| p.lease_expiry.is_some_and(|t| t <= now))
            .map(|(k, _)| *k)
            .collect();
        for prefix in expired {
            d.stats.leases_expired += 1;
            self.remove_participant(now, d, prefix, ParticipantLostReason::LeaseExpired);
        }
        d.lease_check = d.participants.values().filter_map(|p| p.lease_expiry).min();
    }

    /// Removes a participant and everything it had: its endpoints are unmatched from ours.
    fn remove_participant(
        &mut self,
        now: Instant,
        d: &mut Discovery,
        prefix: GuidPrefix,
        reason: ParticipantLostReason,
    ) {
        if d.participants.remove(&prefix).is_none() {
            return;
        }
        tracing::debug!(participant = %prefix, ?reason, "participant lost");
        d.alternates.retain(|_, (p, _)| *p != prefix);
        d.alternates_news.retain(|a| a.participant != prefix);
        let pubs: Vec<Guid> = d
            .publications
            .keys()
            .filter(|g| g.prefix == prefix)
            .copied()
            .collect();
        for g in pubs {
            self.remove_publication(now, d, g);
        }
        let subs: Vec<Guid> = d
            .subscriptions
            .keys()
            .filter(|g| g.prefix == prefix)
            .copied()
            .collect();
        for g in subs {
            self.remove_subscription(now, d, g);
        }
        self.unmatch_builtin(now, prefix);
        d.types.unreadable.set_peer(prefix, false);
        self.server_participant_gone(now, d, prefix);
        if let Some(c) = d.client.as_mut() {
            if let Some(server) = c.server(&prefix).cloned() {
                // Matched anew: a restarted server numbers its announcements from 1 again.
                c.server_lost(&prefix);
                let writer = Guid::new(prefix, EntityId::SPDP_WRITER);
                let _ = self.unmatch_writer(now, EntityId::SPDP_READER, &writer);
                self.prematch_server(now, &server);
            }
        }
        if reason == ParticipantLostReason::Deleted {
            // An announcement it sent before its dispose may still arrive after it (through
            // another socket, multicast versus unicast): it must not bring it back.
            if d.deleted.len() >= d.config.max_participants.max(1) {
                d.deleted.pop_front();
            }
            d.deleted
                .push_back((prefix, now.checked_add(DELETED_QUARANTINE).unwrap_or(now)));
        }
        d.events.push_back(Event::ParticipantLost {
            participant: prefix,
            reason,
        });
    }

    /// A source timestamp for discovery data.
    fn discovery_time(d: &Discovery, now: Instant) -> Time {
        let t = d
            .config
            .wall_clock_at_zero
            .saturating_add(Duration::from_nanos(now.as_nanos()));
        let seconds = i32::try_from(t.as_secs()).unwrap_or(i32::MAX);
        let fraction = ((u64::from(t.subsec_nanos()) << 32) / 1_000_000_000) as u32;
        Time { seconds, fraction }
    }
}

/// The configuration of the reliable builtin readers.
fn builtin_reader() -> ReaderConfig {
    ReaderConfig {
        reliability: Reliability::Reliable,
        history: ReaderHistoryConfig {
            history: History::KeepAll,
            limits: ResourceLimits {
                max_samples: Some(BUILTIN_READER_SAMPLES),
                ..ResourceLimits::default()
            },
            ..ReaderHistoryConfig::default()
        },
        durability: Durability::TransientLocal,
        keyed: true,
        ..ReaderConfig::default()
    }
}

/// How long the announcements of a participant that announced its deletion are ignored.
const DELETED_QUARANTINE: Duration = Duration::from_secs(5);

/// Most samples a builtin reader holds before it is drained (flow control beyond).
const BUILTIN_READER_SAMPLES: usize = 4096;

/// TypeLookup messages a writer keeps until acknowledged.
const TYPE_LOOKUP_DEPTH: usize = 32;

/// Requests to a builtin writer for samples it sent this recently are taken for a crossed
/// HEARTBEAT, not a loss (the reader is asked again afterwards).
const BUILTIN_REPAIR_SUPPRESSION: Duration = Duration::from_millis(10);

/// The key hash of an entity: its GUID's 16 bytes (RTPS 2.5 9.6.3.3).
pub(crate) fn guid_key(guid: &Guid) -> KeyHash {
    let mut k = [0u8; 16];
    k[..12].copy_from_slice(&guid.prefix.0);
    k[12..].copy_from_slice(&guid.entity_id.0);
    KeyHash(k)
}

/// The GUID a key hash names.
pub(crate) fn key_guid(key: &KeyHash) -> Guid {
    let mut prefix = [0u8; 12];
    prefix.copy_from_slice(&key.0[..12]);
    let mut id = [0u8; 4];
    id.copy_from_slice(&key.0[12..]);
    Guid::new(GuidPrefix(prefix), EntityId(id))
}

/// Most locators of one list used as destinations. A real participant announces a handful
/// (one per interface); an announcement with thousands would make every heartbeat and SEDP
/// sample a flood to addresses of the announcer's choosing.
pub(crate) const MAX_USABLE_LOCATORS: usize = 16;

/// The usable locators of a list: those of the most preferred rule of `reach` that covers
/// any of them (other kinds are other vendors' transports, or ours out of reach: another
/// host's shared memory), UDPv4 ones with a valid port, multicast only where it can be used,
/// at most [`MAX_USABLE_LOCATORS`].
pub(crate) fn usable(reach: &[Reach], locators: &[Locator], multicast: bool) -> Vec<Locator> {
    usable_by(reach, locators, multicast).0
}

/// [`usable`], and the index in `reach` of the rule chosen (`reach.len()` when none).
fn usable_by(reach: &[Reach], locators: &[Locator], multicast: bool) -> (Vec<Locator>, usize) {
    let valid = |l: &&Locator| {
        (l.kind != Locator::KIND_UDPV4 || (l.port != 0 && l.port <= 0xffff))
            && (multicast || !is_multicast(l))
    };
    let Some(rule) = reach
        .iter()
        .position(|r| locators.iter().filter(valid).any(|l| r.covers(l)))
    else {
        return (Vec::new(), reach.len());
    };
    let usable: Vec<Locator> = locators
        .iter()
        .filter(valid)
        .filter(|l| reach[rule].covers(l))
        .take(MAX_USABLE_LOCATORS)
        .copied()
        .collect();
    if locators.len() > MAX_USABLE_LOCATORS && usable.len() == MAX_USABLE_LOCATORS {
        tracing::debug!(
            announced = locators.len(),
            used = MAX_USABLE_LOCATORS,
            "locator list truncated"
        );
    }
    (usable, rule)
}

/// The usable unicast and multicast locators of an endpoint: multicast only of the
/// transport its unicast locators chose (that transport's groups: a link's AF_XDP transport
/// sends to them too), so one pair never uses two transports.
pub(crate) fn usable_pair(
    reach: &[Reach],
    unicast: &[Locator],
    multicast: &[Locator],
    use_multicast: bool,
) -> (Vec<Locator>, Vec<Locator>) {
    let (u, m, _) = pair(reach, unicast, multicast, use_multicast, false);
    (u, m)
}

/// [`usable_pair`], and the unicast locators of the next rule of `reach` after the chosen
/// one that covers any (the way to the same endpoint if its chosen transport cannot reach
/// it after all: [`LocatorAlternates`]).
pub(crate) fn usable_pair_alternates(
    reach: &[Reach],
    unicast: &[Locator],
    multicast: &[Locator],
    use_multicast: bool,
) -> (Vec<Locator>, Vec<Locator>, Vec<Locator>) {
    pair(reach, unicast, multicast, use_multicast, true)
}

/// [`usable_pair`]'s choice; the alternates only when asked for (empty otherwise).
fn pair(
    reach: &[Reach],
    unicast: &[Locator],
    multicast: &[Locator],
    use_multicast: bool,
    alternates: bool,
) -> (Vec<Locator>, Vec<Locator>, Vec<Locator>) {
    let (u, rule) = usable_by(reach, unicast, false);
    if u.is_empty() {
        return (u, usable_by(reach, multicast, use_multicast).0, Vec::new());
    }
    let m = match reach.get(rule) {
        Some(r) => usable_by(std::slice::from_ref(r), multicast, use_multicast).0,
        None => Vec::new(),
    };
    let alternates = match reach.get(rule + 1..).filter(|_| alternates) {
        Some(rest) => usable_by(rest, unicast, false).0,
        None => Vec::new(),
    };
    (u, m, alternates)
}

/// Whether a UDPv4 locator names a multicast group.
pub(crate) fn is_multicast(l: &Locator) -> bool {
    l.is_ipv4_multicast()
}

impl Discovery {
    /// The content filter reader `reader` announced (a local one when its prefix is
    /// `local`), if any.
    pub(crate) fn announced_filter(
        &self,
        local: GuidPrefix,
        reader: &Guid,
    ) -> Option<&tachyon_wire::parameter::ContentFilterProperty> {
        let data = if reader.prefix == local {
            self.local_subscriptions.get(&reader.entity_id)
        } else {
            self.subscriptions.get(reader).map(|s| &**s)
        };
        data?.content_filter.as_ref()
    }

    /// Notes that `chosen` (locators of `participant`, of one transport) can also be
    /// reached at `alternates`, telling the runtime when that is news.
    pub(crate) fn note_alternates(
        &mut self,
        participant: GuidPrefix,
        chosen: &[Locator],
        alternates: &[Locator],
    ) {
        if alternates.is_empty() {
            return;
        }
        for l in chosen {
            let known = self
                .alternates
                .get(l)
                .is_some_and(|(p, a)| *p == participant && a == alternates);
            if known {
                continue;
            }
            self.alternates
                .insert(*l, (participant, alternates.to_vec()));
            self.alternates_news.push_back(LocatorAlternates {
                participant,
                locator: *l,
                alternates: alternates.to_vec(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn udp(port: u32, a: u8) -> Locator {
        Locator {
            kind: Locator::KIND_UDPV4,
            port,
            address: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, a, 0, 0, 1],
        }
    }

    fn vendor(kind: i32, scope: u8) -> Locator {
        let mut address = [0; 16];
        address[0] = scope;
        Locator {
            kind,
            port: 0,
            address,
        }
    }

    const SHM: i32 = 0x0054_4302;

    #[test]
    fn udp_only_keeps_valid_udp_locators() {
        let reach = [Reach::kind(Locator::KIND_UDPV4)];
        let list = [vendor(SHM, 1), udp(0, 10), udp(7411, 10), udp(70_000, 10)];
        assert_eq!(usable(&reach, &list, false), vec![udp(7411, 10)]);
        assert_eq!(usable(&reach, &[udp(7401, 239)], false), vec![]);
        assert_eq!(
            usable(&reach, &[udp(7401, 239)], true),
            vec![udp(7401, 239)]
        );
        assert_eq!(usable(&[], &list, true), vec![], "nothing reaches");
    }

    /// Shared memory of host 1 (locators whose address starts with 1), then UDP.
    fn shm_then_udp() -> [Reach; 2] {
        let shm_here = Reach {
            kind: SHM,
            address_prefix: vec![1],
            multicast: false,
        };
        [shm_here, Reach::kind(Locator::KIND_UDPV4)]
    }

    #[test]
    fn the_most_preferred_transport_in_reach_wins_per_list() {
        let reach = shm_then_udp();
        let same_host = [udp(7411, 10), vendor(SHM, 1)];
        assert_eq!(usable(&reach, &same_host, false), vec![vendor(SHM, 1)]);
        let other_host = [udp(7411, 10), vendor(SHM, 2)];
        assert_eq!(usable(&reach, &other_host, false), vec![udp(7411, 10)]);
        // Multicast only of the transport the unicast locators chose.
        let (u, m) = usable_pair(&reach, &same_host, &[udp(7401, 239)], true);
        assert_eq!((u, m), (vec![vendor(SHM, 1)], vec![]));
        let (u, m) = usable_pair(&reach, &other_host, &[udp(7401, 239)], true);
        assert_eq!((u, m), (vec![udp(7411, 10)], vec![udp(7401, 239)]));
        let (u, m) = usable_pair(&reach, &[], &[udp(7401, 239)], true);
        assert_eq!(
            (u, m),
            (vec![], vec![udp(7401, 239)]),
            "multicast-only endpoints"
        );
    }

    #[test]
    fn a_chosen_transport_has_the_next_one_in_reach_as_its_alternate() {
        let reach = shm_then_udp();
        let same_host = [udp(7411, 10), vendor(SHM, 1), udp(7411, 11)];
        let (u, _, alt) = usable_pair_alternates(&reach, &same_host, &[], true);
        assert_eq!(u, vec![vendor(SHM, 1)]);
        assert_eq!(alt, vec![udp(7411, 10), udp(7411, 11)], "the UDP ones");
        // UDP chosen: nothing after it.
        let other_host = [udp(7411, 10), vendor(SHM, 2)];
        let (u, _, alt) = usable_pair_alternates(&reach, &other_host, &[], true);
        assert_eq!((u, alt), (vec![udp(7411, 10)], vec![]));
        // Shared memory only: no way after it.
        let (_, _, alt) = usable_pair_alternates(&reach, &[vendor(SHM, 1)], &[], true);
        assert!(alt.is_empty());
    }

    #[test]
    fn a_link_transport_keeps_the_groups_it_sends_to_and_others_keep_theirs() {
        let link = |multicast| Reach {
            kind: Locator::KIND_UDPV4,
            address_prefix: [&[0u8; 12][..], &[10]].concat(),
            multicast,
        };
        let group = [udp(7401, 239)];
        // AF_XDP that sends to groups: an on-link pair keeps its group, through the ring.
        let reach = [link(true), Reach::kind(Locator::KIND_UDPV4)];
        let (u, m) = usable_pair(&reach, &[udp(7411, 10)], &group, true);
        assert_eq!((u, m), (vec![udp(7411, 10)], vec![udp(7401, 239)]));
        // An off-link pair (kernel UDP) keeps it too: its transport reaches groups as well.
        let (u, m) = usable_pair(&reach, &[udp(7411, 11)], &group, true);
        assert_eq!((u, m), (vec![udp(7411, 11)], vec![udp(7401, 239)]));
        // AF_XDP that leaves groups to the kernel: the on-link pair goes unicast only.
        let reach = [link(false), Reach::kind(Locator::KIND_UDPV4)];
        let (u, m) = usable_pair(&reach, &[udp(7411, 10)], &group, true);
        assert_eq!((u, m), (vec![udp(7411, 10)], vec![]));
        let (u, m) = usable_pair(&reach, &[udp(7411, 11)], &group, true);
        assert_eq!((u, m), (vec![udp(7411, 11)], vec![udp(7401, 239)]));
    }
}
