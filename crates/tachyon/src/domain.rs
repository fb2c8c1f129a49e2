//! [`DomainParticipant`]: the entry point — joins a domain, discovers the others, creates
//! topics, publishers and subscribers.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};

use tachyon_cdr::KeyHash;
use tachyon_proto::discovery::DiscoveryConfig;
use tachyon_proto::frag::ReassemblyLimits;
use tachyon_proto::qos::{DomainParticipantQos, PublisherQos, SubscriberQos, TopicQos};
use tachyon_proto::{Duration, Participant, ParticipantConfig, ReaderConfig};
use tachyon_transport::{Transport, UdpConfig, UdpTransport};
use tachyon_wire::{Guid, GuidPrefix, VendorId};

use crate::builtin::{
    BuiltinTopicKey, ParticipantBuiltinTopicData, PublicationBuiltinTopicData,
    SubscriptionBuiltinTopicData,
};
use crate::condition::StatusCondition;
use crate::config::{Config, ThreadMode, ThreadRoles};
use crate::content_filter::ContentFilteredTopic;
use crate::dynamic::{DynamicData, DynamicType, SerializedData};
use crate::error::Error;
use crate::listener::{
    participant_dispatch, topic_dispatch, DomainParticipantListener, PublisherListener,
    SubscriberListener, TopicListener, PARTICIPANT_STATUSES,
};
use crate::publication::Publisher;
use crate::runtime::builtin::{PARTICIPANT_READER, PUBLICATION_READER, SUBSCRIPTION_READER};
use crate::runtime::{lock, ReaderLimits, Runtime, Transports};
use crate::statistics::ParticipantStatistics;
use crate::status::StatusMask;
use crate::subscription::{DataReader, Subscriber};
use crate::topic::{Topic, TypeSupport};
use crate::DdsType;
use tachyon_transport::intra::IntraTransport;
use tachyon_transport::shm::{ShmConfig, ShmTransport};
use tachyon_transport::xdp::{XdpConfig, XdpTransport};

/// How a participant joins its domain: network and discovery settings (zero-config default).
#[derive(Clone, Debug, Default)]
pub struct ParticipantSettings {
    /// The UDP transport: interface, multicast, peers, ports, socket buffers.
    pub udp: UdpConfig,
    /// Transports other than UDP, and whether UDP is used at all.
    pub transports: TransportSettings,
    /// The shared-memory segment: its size and who may open it (the configuration file's
    /// `[shm]`).
    pub shm: ShmConfig,
    /// The AF_XDP transport (the configuration file's `[xdp]`; `None`, the default: off).
    pub xdp: Option<XdpConfig>,
    /// Discovery servers to be a client of (Fast DDS's discovery-server protocol); empty:
    /// simple discovery (multicast and peers). With servers, the participant announces
    /// itself to them only and learns of the others from them.
    pub discovery_servers: Vec<crate::DiscoveryServerAddress>,
    /// Be a discovery server (Fast DDS's protocol; `None`, the default: not one). Its
    /// clients announce themselves to it and learn of each other from it.
    pub discovery_server: Option<crate::ServerRole>,
    /// Lease announced to others (`None`: 10 s).
    pub lease_duration: Option<Duration>,
    /// SPDP announcement period (`None`: 3 s).
    pub announce_period: Option<Duration>,
    /// Most remote participants kept (`None`: 1024). Announcements of further participants
    /// are dropped and counted ([`DiscoveryStats::participants_refused`]) until a known one
    /// leaves or its lease expires; known participants are never evicted for new ones.
    ///
    /// [`DiscoveryStats::participants_refused`]: crate::statistics::DiscoveryStats::participants_refused
    pub max_participants: Option<usize>,
    /// Most remote writers plus readers kept over all remote participants (`None`: 65536).
    pub max_remote_endpoints: Option<usize>,
    /// Bounds on what each DataReader of this participant holds of samples being reassembled
    /// from fragments (`None`: 64 MiB and 64 samples per reader, samples up to 256 MiB).
    pub reassembly: Option<ReassemblyLimits>,
    /// Payload bytes each DataReader holds out of order, waiting for an earlier sample
    /// (`None`: 64 MiB).
    pub max_pending_bytes: Option<usize>,
    /// The thread model: a driver thread (scheduled as `threads.driver` says) or single-thread
    /// mode, and which writers are critical for the executor.
    pub threads: ThreadRoles,
    /// USER_DATA of the participant's QoS: announced to every other participant, which
    /// finds it in its DCPSParticipant builtin topic.
    pub user_data: Vec<u8>,
    /// ENTITY_NAME announced (a name tools such as Cyclone's `ddsls` show).
    pub entity_name: Option<String>,
}

/// Which transports a participant uses besides the default UDP one.
///
/// Each matched writer/reader pair uses the most preferred transport both sides announce
/// ([`Transport::preference`]); other vendors ignore locators of kinds they do not know and
/// use UDP. A transport given here is shared with the participant (it keeps an `Arc`).
#[derive(Clone, Debug, Default)]
pub struct TransportSettings {
    /// Leave UDP out: the participant talks only through `extra` (for tests on
    /// [`tachyon_transport::mem`], or a deployment without IP). Default `false`.
    pub no_udp: bool,
    /// Leave the in-process transport out: participants of this process reach this one
    /// over UDP (or `extra`) like any other. Default `false`: pairs whose two ends live in
    /// one process go through [`tachyon_transport::intra`], user data handled on the
    /// writing thread. The configuration file's `[transports] intra = false`.
    pub no_intra: bool,
    /// Leave shared memory out: participants of other processes of this host are reached
    /// over UDP. Default `false`: in the default thread model (`threads.mode = "threads"`),
    /// pairs whose two ends run on this host, as the same user, go through
    /// [`tachyon_transport::shm`]. The configuration file's `[transports] shm = false`.
    pub no_shm: bool,
    /// Further transports, e.g. a [`MemTransport`](tachyon_transport::mem::MemTransport).
    pub extra: Vec<Arc<dyn Transport>>,
}

/// The factory of DDS: creates participants (`DomainParticipant::new` does the same).
#[derive(Debug, Default)]
pub struct DomainParticipantFactory;

impl DomainParticipantFactory {
    /// The factory.
    pub fn get_instance() -> DomainParticipantFactory {
        DomainParticipantFactory
    }

    /// A participant in `domain_id`, configured as [`DomainParticipant::new`] does.
    pub fn create_participant(&self, domain_id: u32) -> Result<DomainParticipant, Error> {
        DomainParticipant::new(domain_id)
    }
}

/// A member of a DDS domain.
pub struct DomainParticipant {
    pub(crate) runtime: Arc<Runtime>,
    domain_id: u32,
    builtin: BuiltinReaders,
    condition: StatusCondition,
    /// The QoS now; changed by `set_qos` under the state lock.
    qos: Mutex<DomainParticipantQos>,
}

/// The builtin-topic readers, made with the participant so discovery fills them from the
/// start (the builtin subscriber of DDS).
struct BuiltinReaders {
    participants: DataReader<ParticipantBuiltinTopicData>,
    publications: DataReader<PublicationBuiltinTopicData>,
    subscriptions: DataReader<SubscriptionBuiltinTopicData>,
}

impl std::fmt::Debug for DomainParticipant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DomainParticipant")
            .field("domain_id", &self.domain_id)
            .field("guid_prefix", &self.guid_prefix())
            .finish()
    }
}

impl DomainParticipant {
    /// Joins domain `domain_id` configured by the file `TACHYON_CONFIG` names, or with zero
    /// configuration when it is unset: the first multicast-capable interface (or unicast
    /// discovery on the local host where there is none).
    pub fn new(domain_id: u32) -> Result<DomainParticipant, Error> {
        DomainParticipant::with_config(domain_id, &Config::from_env()?)
    }

    /// Joins domain `domain_id` with `config`'s settings for that domain.
    pub fn with_config(domain_id: u32, config: &Config) -> Result<DomainParticipant, Error> {
        if let Some(origin) = config.origin() {
            tracing::debug!(domain = domain_id, config = origin, "configuration loaded");
        }
        DomainParticipant::with_settings(domain_id, &config.settings(domain_id))
    }

    /// Joins domain `domain_id` with explicit settings.
    pub fn with_settings(
        domain_id: u32,
        settings: &ParticipantSettings,
    ) -> Result<DomainParticipant, Error> {
        warn_unapplied_threads(&settings.threads);
        let udp = if settings.transports.no_udp {
            None
        } else {
            let mut config = UdpConfig {
                critical_priority: settings.threads.critical_priority,
                metatraffic_port: settings.discovery_server.map(|s| s.port),
                ..settings.udp.clone()
            };
            // The UDP transport announces the XDP interface's address: its datagrams are
            // the ones the program takes off that interface.
            if let (None, Some(x)) = (&config.interface, &settings.xdp) {
                if !x.interface.is_empty() {
                    config.interface = Some(x.interface.clone());
                }
            }
            Some(Arc::new(UdpTransport::open(domain_id, &config)?))
        };
        let xdp = open_xdp(settings, udp.as_ref())?;
        let intra = if settings.transports.no_intra {
            None
        } else {
            // Datagrams as large as UDP's, so a writer's datagrams fit whichever carries them.
            let max = udp
                .as_ref()
                .map_or(tachyon_transport::MAX_UDP_PAYLOAD, |u| u.max_datagram());
            let critical = settings.threads.critical_priority.is_some();
            Some(IntraTransport::new(domain_id, max, critical)?)
        };
        let shm = open_shm(settings, udp.as_ref())?;
        let transports = Transports::new(udp, xdp, intra, shm, settings.transports.extra.clone())
            .ok_or(Error::NoTransport)?;
        let locators = transports.locators();
        let use_multicast = transports.udp().is_some_and(UdpTransport::uses_multicast);
        let epoch = tachyon_transport::clock::monotonic_nanos();
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let defaults = DiscoveryConfig::default();
        let discovery = DiscoveryConfig {
            domain_id,
            lease_duration: settings.lease_duration.unwrap_or(defaults.lease_duration),
            announce_period: settings.announce_period.unwrap_or(defaults.announce_period),
            max_participants: settings
                .max_participants
                .unwrap_or(defaults.max_participants),
            max_remote_endpoints: settings
                .max_remote_endpoints
                .unwrap_or(defaults.max_remote_endpoints),
            // A discovery-server client announces itself to its servers only.
            spdp_destinations: if settings.discovery_servers.is_empty() {
                locators.spdp_destinations.clone()
            } else {
                Vec::new()
            },
            servers: settings
                .discovery_servers
                .iter()
                .map(|s| tachyon_proto::discovery::DiscoveryServer {
                    prefix: tachyon_proto::discovery::fastdds_server_prefix(s.id),
                    locators: vec![tachyon_wire::Locator::udp(std::net::SocketAddr::V4(
                        s.address,
                    ))],
                })
                .collect(),
            metatraffic_unicast: locators.metatraffic_unicast.clone(),
            metatraffic_multicast: locators.metatraffic_multicast.clone(),
            default_unicast: locators.default_unicast.clone(),
            default_multicast: locators.default_multicast.clone(),
            server: settings.discovery_server.is_some(),
            use_multicast,
            reach: transports.reach(),
            wall_clock_at_zero: wall,
            user_data: settings.user_data.clone(),
            entity_name: settings.entity_name.clone(),
            properties: process_properties(),
            ..defaults
        };
        let prefix = match settings.discovery_server {
            Some(role) => tachyon_proto::discovery::fastdds_server_prefix(role.id),
            None => new_prefix(),
        };
        let names: Vec<&str> = transports.all().iter().map(|t| t.name()).collect();
        match transports.udp() {
            Some(udp) => tracing::info!(
                domain = domain_id,
                participant = %prefix,
                index = ?udp.participant_index(),
                interface = %udp.interface().name,
                multicast = udp.uses_multicast(),
                transports = ?names,
                "participant created"
            ),
            None => tracing::info!(
                domain = domain_id,
                participant = %prefix,
                transports = ?names,
                "participant created without UDP"
            ),
        }
        let mut participant =
            Participant::with_discovery(prefix, ParticipantConfig::default(), discovery);
        let reader_defaults = ReaderConfig::default();
        let limits = ReaderLimits {
            reassembly: settings.reassembly.unwrap_or(reader_defaults.reassembly),
            max_pending_bytes: settings
                .max_pending_bytes
                .unwrap_or(reader_defaults.max_pending_bytes),
        };
        participant.set_critical_priority(settings.threads.critical_priority);
        let runtime = Arc::new(Runtime::start(
            participant,
            transports,
            epoch,
            &settings.threads,
            limits,
        )?);
        // Their statuses were registered before the driver thread started.
        let builtin = BuiltinReaders {
            participants: DataReader::builtin(&runtime, PARTICIPANT_READER),
            publications: DataReader::builtin(&runtime, PUBLICATION_READER),
            subscriptions: DataReader::builtin(&runtime, SUBSCRIPTION_READER),
        };
        let condition =
            StatusCondition::new(Arc::clone(&runtime), tachyon_wire::EntityId::PARTICIPANT);
        Ok(DomainParticipant {
            runtime,
            domain_id,
            builtin,
            condition,
            qos: Mutex::new(DomainParticipantQos {
                user_data: settings.user_data.clone(),
                ..DomainParticipantQos::default()
            }),
        })
    }

    /// The participant's QoS now (DDS `get_qos`): USER_DATA starts as
    /// [`ParticipantSettings::user_data`].
    pub fn get_qos(&self) -> DomainParticipantQos {
        lock(&self.qos).clone()
    }

    /// Changes the participant's QoS (DDS `set_qos`; both its policies are changeable). A
    /// USER_DATA change is announced through SPDP at once, to the discovery destinations and
    /// to every known participant, which sees it in its DCPSParticipant builtin topic.
    pub fn set_qos(&self, qos: DomainParticipantQos) -> Result<(), Error> {
        let sh = &self.runtime.shared;
        if sh.stopped() {
            return Err(Error::AlreadyDeleted);
        }
        let mut st = sh.lock();
        let mut cur = lock(&self.qos);
        if cur.user_data != qos.user_data {
            st.participant.set_user_data(qos.user_data.clone());
        }
        *cur = qos;
        drop(cur);
        let now = sh.now();
        st.flush(sh, now);
        drop(st);
        sh.wake();
        Ok(())
    }

    /// The domain id.
    pub fn domain_id(&self) -> u32 {
        self.domain_id
    }

    /// This participant's GUID prefix.
    pub fn guid_prefix(&self) -> GuidPrefix {
        self.runtime.shared.lock().participant.guid_prefix()
    }

    /// The participant's instance handle: the key hash of its GUID, as other participants
    /// see it on their DCPSParticipant reader (DDS `get_instance_handle`).
    pub fn get_instance_handle(&self) -> KeyHash {
        BuiltinTopicKey(crate::runtime::builtin::participant_guid(
            self.guid_prefix(),
        ))
        .instance_handle()
    }

    /// The participant index the UDP transport chose (it fixes the unicast ports: the
    /// spec's port mapping); `None` without UDP, or when every automatic index
    /// (`0..=max_auto_participant_index`) was taken on this host and the unicast ports were
    /// left to the kernel.
    pub fn participant_index(&self) -> Option<u32> {
        self.runtime
            .shared
            .transports
            .udp()
            .and_then(UdpTransport::participant_index)
    }

    /// Whether the transport uses multicast (configured, or chosen from the interface).
    pub fn uses_multicast(&self) -> bool {
        self.runtime
            .shared
            .transports
            .udp()
            .is_some_and(UdpTransport::uses_multicast)
    }

    /// A topic of type `T` with default QoS.
    pub fn create_topic<T: DdsType>(&self, name: &str) -> Result<Topic<T>, Error> {
        self.create_topic_with_qos(name, TopicQos::default())
    }

    /// A topic of type `T`.
    pub fn create_topic_with_qos<T: DdsType>(
        &self,
        name: &str,
        qos: TopicQos,
    ) -> Result<Topic<T>, Error> {
        Topic::new(&self.runtime, name, TypeSupport::of::<T>(), qos, None)
    }

    /// A topic of type `T` whose `listener` is called for the statuses in `mask`
    /// (INCONSISTENT_TOPIC) from the start. See [`crate::listener`].
    pub fn create_topic_with_listener<T: DdsType>(
        &self,
        name: &str,
        qos: TopicQos,
        listener: Arc<dyn TopicListener>,
        mask: StatusMask,
    ) -> Result<Topic<T>, Error> {
        let dispatch = topic_dispatch(&self.runtime, listener);
        Topic::new(
            &self.runtime,
            name,
            TypeSupport::of::<T>(),
            qos,
            Some((dispatch, mask)),
        )
    }

    /// A content-filtered topic named `name` (DDS `create_contentfilteredtopic`): `topic`
    /// seen through `expression` in the DDS SQL grammar (`color = %0 AND shapesize <= 20`,
    /// see [`tachyon_proto::filter`]), with `parameters` for `%0`, `%1`, … (`'RED'` or
    /// `RED` for strings and enumerators, `20` for numbers). Readers created on it receive
    /// only the samples the filter accepts.
    ///
    /// Errors: [`Error::Filter`] when the expression does not parse, names a member `T`
    /// does not have or cannot compare, uses a parameter not given or one that does not
    /// fit; the message names the column.
    pub fn create_contentfilteredtopic<'a, T: DdsType>(
        &self,
        name: &str,
        topic: &'a Topic<T>,
        expression: &str,
        parameters: &[impl AsRef<str>],
    ) -> Result<ContentFilteredTopic<'a, T>, Error> {
        ContentFilteredTopic::new(&self.runtime, name, topic, expression, parameters)
    }

    /// A publisher whose `listener` is called for the statuses in `mask` of its writers
    /// (those their own listeners do not take). See [`crate::listener`].
    pub fn create_publisher_with_listener(
        &self,
        qos: PublisherQos,
        listener: Arc<dyn PublisherListener>,
        mask: StatusMask,
    ) -> Result<Publisher, Error> {
        let p = self.create_publisher_with_qos(qos)?;
        p.set_listener(Some(listener), mask);
        Ok(p)
    }

    /// A subscriber whose `listener` is called for DATA_ON_READERS and the statuses in
    /// `mask` of its readers (those their own listeners do not take). See
    /// [`crate::listener`].
    pub fn create_subscriber_with_listener(
        &self,
        qos: SubscriberQos,
        listener: Arc<dyn SubscriberListener>,
        mask: StatusMask,
    ) -> Result<Subscriber, Error> {
        let s = self.create_subscriber_with_qos(qos)?;
        s.set_listener(Some(listener), mask);
        Ok(s)
    }

    /// Sets the participant's listener and the statuses it is called for (`None`: removes
    /// it): the statuses of all its entities that neither their own listener nor their
    /// Subscriber's or Publisher's takes. See [`crate::listener`].
    pub fn set_listener(
        &self,
        listener: Option<Arc<dyn DomainParticipantListener>>,
        mask: StatusMask,
    ) {
        let dispatch = listener.map(|l| {
            (
                participant_dispatch(&self.runtime, l),
                mask & PARTICIPANT_STATUSES,
            )
        });
        self.runtime
            .shared
            .set_group_listener(tachyon_wire::EntityId::PARTICIPANT, dispatch);
    }

    /// The participant's StatusCondition (a participant has no status of its own: it never
    /// triggers; every call returns the same condition).
    pub fn get_statuscondition(&self) -> StatusCondition {
        self.condition.clone()
    }

    /// The statuses changed since they were last read (DDS `get_status_changes`).
    pub fn get_status_changes(&self) -> StatusMask {
        self.runtime
            .shared
            .lock()
            .statuses
            .changes(tachyon_wire::EntityId::PARTICIPANT)
    }

    /// A publisher with default QoS.
    pub fn create_publisher(&self) -> Result<Publisher, Error> {
        self.create_publisher_with_qos(PublisherQos::default())
    }

    /// A publisher.
    pub fn create_publisher_with_qos(&self, qos: PublisherQos) -> Result<Publisher, Error> {
        check_partitions(&qos.partition)?;
        Ok(Publisher::new(Arc::clone(&self.runtime), qos))
    }

    /// A subscriber with default QoS.
    pub fn create_subscriber(&self) -> Result<Subscriber, Error> {
        self.create_subscriber_with_qos(SubscriberQos::default())
    }

    /// A subscriber.
    pub fn create_subscriber_with_qos(&self, qos: SubscriberQos) -> Result<Subscriber, Error> {
        check_partitions(&qos.partition)?;
        Ok(Subscriber::new(Arc::clone(&self.runtime), qos))
    }

    /// The DCPSParticipant builtin reader: one instance per remote participant (see
    /// [`crate::builtin`]). Every call returns the same reader (clones share it).
    pub fn builtin_participants_reader(&self) -> DataReader<ParticipantBuiltinTopicData> {
        self.builtin.participants.clone()
    }

    /// The DCPSPublication builtin reader: one instance per remote writer.
    pub fn builtin_publications_reader(&self) -> DataReader<PublicationBuiltinTopicData> {
        self.builtin.publications.clone()
    }

    /// The DCPSSubscription builtin reader: one instance per remote reader.
    pub fn builtin_subscriptions_reader(&self) -> DataReader<SubscriptionBuiltinTopicData> {
        self.builtin.subscriptions.clone()
    }

    /// The remote participants discovered and alive now (a snapshot; the builtin reader
    /// tells what changed).
    pub fn discovered_participants(&self) -> Vec<ParticipantBuiltinTopicData> {
        let st = self.runtime.shared.lock();
        st.participant
            .discovered_participants()
            .map(|p| ParticipantBuiltinTopicData::from(&p.data))
            .collect()
    }

    /// The remote writers discovered now (a snapshot).
    pub fn discovered_publications(&self) -> Vec<PublicationBuiltinTopicData> {
        let st = self.runtime.shared.lock();
        st.participant
            .discovered_publications()
            .map(PublicationBuiltinTopicData::from)
            .collect()
    }

    /// The remote readers discovered now (a snapshot).
    pub fn discovered_subscriptions(&self) -> Vec<SubscriptionBuiltinTopicData> {
        let st = self.runtime.shared.lock();
        st.participant
            .discovered_subscriptions()
            .map(SubscriptionBuiltinTopicData::from)
            .collect()
    }

    /// The instance handles of the remote participants discovered now (DDS
    /// `get_discovered_participants`).
    pub fn get_discovered_participants(&self) -> Vec<KeyHash> {
        let st = self.runtime.shared.lock();
        st.participant
            .discovered_participants()
            .map(|p| {
                BuiltinTopicKey(crate::runtime::builtin::participant_guid(
                    p.data.guid_prefix,
                ))
                .instance_handle()
            })
            .collect()
    }

    /// What is known now of the remote participant `handle` names (its
    /// [`BuiltinTopicKey::instance_handle`]); [`Error::BadInstance`] if it is not (or no
    /// longer) known.
    pub fn get_discovered_participant_data(
        &self,
        handle: KeyHash,
    ) -> Result<ParticipantBuiltinTopicData, Error> {
        let guid = BuiltinTopicKey::from_instance_handle(handle).guid();
        let st = self.runtime.shared.lock();
        st.participant
            .discovered_participant(&guid.prefix)
            .filter(|_| guid.entity_id == tachyon_wire::EntityId::PARTICIPANT)
            .map(|p| ParticipantBuiltinTopicData::from(&p.data))
            .ok_or(Error::BadInstance)
    }

    /// What is known now of the remote writer `handle` names (its GUID's key hash, e.g. a
    /// sample's `publication_handle`); [`Error::BadInstance`] if it is not known.
    pub fn get_discovered_publication_data(
        &self,
        handle: KeyHash,
    ) -> Result<PublicationBuiltinTopicData, Error> {
        let guid = BuiltinTopicKey::from_instance_handle(handle).guid();
        let st = self.runtime.shared.lock();
        st.participant
            .discovered_publication(&guid)
            .map(PublicationBuiltinTopicData::from)
            .ok_or(Error::BadInstance)
    }

    /// What is known now of the remote reader `handle` names; [`Error::BadInstance`] if it
    /// is not known.
    pub fn get_discovered_subscription_data(
        &self,
        handle: KeyHash,
    ) -> Result<SubscriptionBuiltinTopicData, Error> {
        let guid = BuiltinTopicKey::from_instance_handle(handle).guid();
        let st = self.runtime.shared.lock();
        st.participant
            .discovered_subscription(&guid)
            .map(SubscriptionBuiltinTopicData::from)
            .ok_or(Error::BadInstance)
    }

    /// The type of a discovered writer or reader, described from its complete TypeObjects
    /// (names and annotations as its IDL declares them): fetched from the endpoint's
    /// participant with the XTypes TypeLookup service when this participant does not know
    /// them, within `timeout`. What `tachyon spy typeof` prints (as IDL, with
    /// [`tachyon_xtypes::idl::to_idl`]).
    ///
    /// Errors: [`Error::BadParameter`] when no such endpoint was discovered;
    /// [`Error::TypeUnavailable`] when it announces no TypeInformation (Fast DDS 2.x by
    /// default), its participant has no TypeLookup service, or the type cannot be described;
    /// [`Error::Timeout`] when the reply does not come in time.
    pub fn discovered_type(
        &self,
        endpoint: Guid,
        timeout: std::time::Duration,
    ) -> Result<tachyon_cdr::TypeDesc, Error> {
        use tachyon_proto::discovery::TypeFetch;
        let sh = &self.runtime.shared;
        let info = {
            let st = sh.lock();
            let p = &st.participant;
            let (raw, info) = match (
                p.discovered_publication(&endpoint),
                p.discovered_subscription(&endpoint),
            ) {
                (Some(w), _) => (w.type_information.is_some(), w.type_info.clone()),
                (None, Some(r)) => (r.type_information.is_some(), r.type_info.clone()),
                (None, None) => return Err(Error::BadParameter("no such endpoint was discovered")),
            };
            match info {
                Some(i) => i,
                None if raw => {
                    return Err(Error::TypeUnavailable(
                        "its TypeInformation does not decode (Fast DDS 2.x sends a \
                         non-standard form)"
                            .into(),
                    ))
                }
                None => {
                    return Err(Error::TypeUnavailable(
                        "it announces no TypeInformation".into(),
                    ))
                }
            }
        };
        let end = std::time::Instant::now() + timeout;
        loop {
            let mut st = sh.lock();
            let now = sh.now();
            let fetch = st.participant.fetch_type(now, endpoint.prefix, &info);
            if fetch == TypeFetch::Known {
                let lib = st
                    .participant
                    .type_library()
                    .ok_or(Error::PreconditionNotMet("no discovery"))?;
                return tachyon_xtypes::describe(lib, &info.complete.id.id)
                    .map_err(|e| Error::TypeUnavailable(e.to_string()));
            }
            st.flush(sh, now);
            drop(st);
            sh.wake();
            match fetch {
                TypeFetch::NoService => {
                    return Err(Error::TypeUnavailable(
                        "its participant runs no TypeLookup service".into(),
                    ))
                }
                TypeFetch::NoType => {
                    return Err(Error::TypeUnavailable(
                        "its TypeInformation names no complete type".into(),
                    ))
                }
                _ => {}
            }
            if std::time::Instant::now() >= end {
                return Err(Error::Timeout);
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// A topic of the dynamic type `ty` (see [`crate::dynamic`]): its readers and writers
    /// read and write [`DynamicData`], and announce the type's TypeInformation as a derived
    /// type's would.
    pub fn create_dynamic_topic(
        &self,
        name: &str,
        ty: &DynamicType,
    ) -> Result<Topic<DynamicData>, Error> {
        self.create_dynamic_topic_with_qos(name, ty, TopicQos::default())
    }

    /// A topic of the dynamic type `ty` with `qos`.
    pub fn create_dynamic_topic_with_qos(
        &self,
        name: &str,
        ty: &DynamicType,
        qos: TopicQos,
    ) -> Result<Topic<DynamicData>, Error> {
        Topic::new(&self.runtime, name, TypeSupport::dynamic(ty), qos, None)
    }

    /// A topic whose samples are read undecoded ([`SerializedData`]), announced with type
    /// name `type_name` and no TypeInformation (so it matches by name): for a program that
    /// counts or records samples of any type. `keyed` must be what the writers say (Fast
    /// DDS does not match a reader of another topic kind); samples that come without key
    /// hash then share one instance.
    pub fn create_serialized_topic(
        &self,
        name: &str,
        type_name: &str,
        keyed: bool,
    ) -> Result<Topic<SerializedData>, Error> {
        let support = TypeSupport::named(type_name, keyed);
        Topic::new(&self.runtime, name, support, TopicQos::default(), None)
    }

    /// A topic whose samples are written and read as they are ([`RawSample`]: serialized
    /// bytes and key hash), announced with type name `type_name` and no TypeInformation:
    /// for a program that relays samples of a type it does not know (`tachyon-bridge`).
    /// `keyed` must be what the other endpoints of the topic say.
    ///
    /// [`RawSample`]: crate::dynamic::RawSample
    pub fn create_raw_topic(
        &self,
        name: &str,
        type_name: &str,
        keyed: bool,
    ) -> Result<Topic<crate::dynamic::RawSample>, Error> {
        let support = TypeSupport::named(type_name, keyed);
        Topic::new(&self.runtime, name, support, TopicQos::default(), None)
    }

    /// The type of topic `name` as its discovered writers (else readers) announce it,
    /// fetched with TypeLookup ([`discovered_type`](Self::discovered_type)): what a program
    /// that never saw the type subscribes with. Waits up to `timeout` for an endpoint of the
    /// topic to be discovered and its type to arrive.
    ///
    /// Errors: [`Error::TypeUnavailable`] when every endpoint of the topic discovered cannot
    /// describe its type (the message says why: Fast DDS 2.x announces none; give the type
    /// as IDL then); [`Error::Timeout`] when no endpoint of the topic is discovered, or none
    /// answers, in time.
    pub fn find_topic_type(
        &self,
        name: &str,
        timeout: std::time::Duration,
    ) -> Result<DynamicType, Error> {
        let end = std::time::Instant::now() + timeout;
        loop {
            let endpoints: Vec<Guid> = {
                let st = self.runtime.shared.lock();
                let p = &st.participant;
                p.discovered_publications()
                    .filter(|w| w.topic_name == name)
                    .map(|w| w.guid)
                    .chain(
                        p.discovered_subscriptions()
                            .filter(|r| r.topic_name == name)
                            .map(|r| r.guid),
                    )
                    .collect()
            };
            let mut unavailable = None;
            for guid in &endpoints {
                let left = end.saturating_duration_since(std::time::Instant::now());
                match self.discovered_type(*guid, left) {
                    Ok(desc) => return DynamicType::new(desc),
                    Err(Error::TypeUnavailable(why)) => unavailable = Some(why),
                    Err(Error::Timeout) | Err(Error::BadParameter(_)) => {}
                    Err(e) => return Err(e),
                }
            }
            if let Some(why) = unavailable.filter(|_| !endpoints.is_empty()) {
                return Err(Error::TypeUnavailable(format!(
                    "no endpoint of topic {name:?} describes its type ({why})"
                )));
            }
            if std::time::Instant::now() >= end {
                return Err(Error::Timeout);
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// A snapshot of the participant's counters: datagrams received, what was dropped as
    /// malformed or for no local endpoint, what the resource limits refused, and what is held
    /// now for remote entities (participants, endpoints, samples in reassembly).
    pub fn statistics(&self) -> ParticipantStatistics {
        let sh = &self.runtime.shared;
        let transport = sh.transports.stats();
        // The critical lane's receive counters and readers are added to the main lane's.
        let lane = (sh.lane_ids().len() > 1).then(|| {
            let st = sh.lock_lane(crate::runtime::lanes::CRITICAL);
            (st.participant.stats(), st.participant.readers_summary())
        });
        let st = sh.lock();
        let p = &st.participant;
        let (max_participants, max_remote_endpoints) = p
            .discovery_config()
            .map_or((0, 0), |c| (c.max_participants, c.max_remote_endpoints));
        let (mut receive, mut readers) = (p.stats(), p.readers_summary());
        if let Some((r, s)) = lane {
            receive.add(&r);
            readers.add(&s);
        }
        ParticipantStatistics {
            transport,
            intra: sh.transports.intra().map(|t| t.stats()).unwrap_or_default(),
            shm: sh.transports.shm().map(|t| t.stats()).unwrap_or_default(),
            xdp: sh
                .transports
                .xdp()
                .map(|t| t.xdp_stats())
                .unwrap_or_default(),
            loans: sh
                .transports
                .shm()
                .map(|t| t.loans().stats())
                .unwrap_or_default(),
            receive,
            discovery: p.discovery_stats(),
            types: p.type_stats(),
            readers,
            remote_participants: p.discovered_participants().count(),
            max_participants,
            remote_endpoints: p.discovered_publications().count()
                + p.discovered_subscriptions().count(),
            max_remote_endpoints,
            lane_inbox_overflow: sh.inbox_overflow.load(std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// Asserts the liveliness of the participant's MANUAL_BY_PARTICIPANT writers.
    pub fn assert_liveliness(&self) -> Result<(), Error> {
        let sh = &self.runtime.shared;
        // Each lane's writers; the main lane's also sends the participant message.
        for lane in sh.lane_ids().rev() {
            let mut st = sh.lock_lane(lane);
            let now = sh.now();
            st.participant.assert_liveliness(now);
            st.flush(sh, now);
        }
        Ok(())
    }

    /// Single-thread mode (`threads.mode = "single"`): processes what is ready on the
    /// calling thread — datagrams, due timers, listeners — in the executor's priority order,
    /// waiting at most `timeout` for something to arrive or fall due. `Duration::ZERO` never
    /// blocks (call it in a loop to busy-poll). Returns after one round of work, so it may
    /// return before `timeout`; call it again, or use [`spin`](Self::spin).
    ///
    /// Listeners run on this thread, inside this call. Blocking calls of this participant
    /// (`wait_for_acknowledgments`, a WaitSet, a full KEEP_ALL history) make no progress
    /// while nobody runs the participant: from one thread, spin between them instead.
    ///
    /// Errors: `PreconditionNotMet` when the participant has a driver thread or another
    /// thread is running it now; `AlreadyDeleted` after [`close`](Self::close).
    pub fn run_once(&self, timeout: std::time::Duration) -> Result<(), Error> {
        self.runtime.run_once(timeout)
    }

    /// Single-thread mode: runs the participant on the calling thread until `until`
    /// ([`run_once`](Self::run_once) in a loop).
    pub fn spin(&self, until: std::time::Instant) -> Result<(), Error> {
        loop {
            let left = until.saturating_duration_since(std::time::Instant::now());
            self.run_once(left)?;
            if left.is_zero() {
                return Ok(());
            }
        }
    }

    /// The role and kernel id of each of the participant's threads (as `/proc/self/task/<tid>`,
    /// `taskset -p` and `chrt -p` name it): `"driver"` in driver mode; `"timers"` and one
    /// `"receive"` per user-data receive source in threads mode; none in single-thread mode.
    pub fn thread_ids(&self) -> Vec<(&'static str, i32)> {
        self.runtime.thread_ids()
    }

    /// The kernel id of the participant's driver thread (the timers thread in threads mode;
    /// see [`thread_ids`](Self::thread_ids)); `None` in single-thread mode.
    pub fn driver_thread_id(&self) -> Option<i32> {
        self.runtime.thread_id()
    }

    /// Announces the participant's deletion and stops its runtime. Entities created from it
    /// fail with [`Error::AlreadyDeleted`] afterwards. Dropping the participant does the same.
    pub fn close(&self) {
        self.runtime.shutdown();
    }
}

impl Drop for DomainParticipant {
    fn drop(&mut self) {
        self.runtime.shutdown();
    }
}

/// Says which thread settings this runtime does not apply, rather than ignore them silently:
/// `receive` and `timers` have no thread of their own (the driver does both), and in
/// single-thread mode the application's thread is the driver.
fn warn_unapplied_threads(threads: &ThreadRoles) {
    for (role, t) in threads.roles().filter(|(_, t)| !t.is_default()) {
        let why = match (threads.mode, role) {
            (ThreadMode::Driver, "driver")
            | (ThreadMode::Threads, "receive" | "timers")
            | (ThreadMode::Threads, "critical")
                if role != "critical" || threads.critical_priority.is_some() =>
            {
                continue
            }
            (ThreadMode::Threads, "critical") => {
                "without threads.critical_priority there is no critical lane to receive"
            }
            (ThreadMode::Single, _) => {
                "single-thread mode spawns no thread: schedule the thread that calls run_once \
                 yourself"
            }
            (ThreadMode::Driver, _) => {
                "in driver mode the driver thread receives and runs the timers: configure \
                 [threads.driver], or set threads.mode = \"threads\""
            }
            (ThreadMode::Threads, _) => {
                "in threads mode receive threads and a timers thread do the driver's work: \
                 configure [threads.receive] and [threads.timers]"
            }
        };
        tracing::warn!(role, cpus = ?t.cpus, priority = ?t.priority, "thread settings not applied: {why}");
    }
    // Watching before blocking is what a thread receiving user data does before it blocks.
    for (role, t) in threads.roles() {
        let receives =
            threads.mode == ThreadMode::Threads && matches!(role, "receive" | "critical");
        if t.spin.is_some() && !receives {
            tracing::warn!(role, spin = ?t.spin, "spin not applied: only the threads that \
                receive user data watch their sources before blocking ([threads.receive] and \
                [threads.critical] in threads mode); a driver spins with busy_poll");
        }
    }
}

fn check_partitions(names: &[String]) -> Result<(), Error> {
    Ok(tachyon_proto::qos::check_partitions(names)?)
}

/// A GUID prefix unique on this host and across hosts: vendor id, a random host/process part
/// and a per-process counter (so several participants of one process differ).
fn new_prefix() -> GuidPrefix {
    static COUNTER: AtomicU16 = AtomicU16::new(0);
    let mut h = RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    let r = h.finish().to_be_bytes();
    let n = COUNTER.fetch_add(1, Ordering::Relaxed).to_be_bytes();
    let VendorId(v) = VendorId::TACHYON;
    let pid = std::process::id().to_be_bytes();
    GuidPrefix([
        v[0], v[1], r[0], r[1], r[2], r[3], pid[2], pid[3], r[4], r[5], n[0], n[1],
    ])
}

/// The participant's AF_XDP transport, when `[xdp]` is configured. A socket that cannot be
/// set up is an error that names the key and the fix, unless `xdp.fallback` says to go on
/// with kernel UDP (logged).
fn open_xdp(
    settings: &ParticipantSettings,
    udp: Option<&Arc<UdpTransport>>,
) -> Result<Option<XdpTransport>, Error> {
    let Some(config) = &settings.xdp else {
        return Ok(None);
    };
    let Some(udp) = udp else {
        return Err(tachyon_transport::TransportError::Xdp {
            key: "interface",
            message: "the AF_XDP transport needs the UDP transport beside it (for discovery \
                      and what it does not carry): drop `no_udp`"
                .into(),
        }
        .into());
    };
    match XdpTransport::open(config, Arc::clone(udp), settings.threads.critical_priority) {
        Ok(t) => Ok(Some(t)),
        Err(e) if config.fallback => {
            tracing::warn!(error = %e, "AF_XDP unavailable; xdp.fallback = true: kernel UDP");
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}

/// The participant's shared-memory transport, unless the settings leave it out or the thread
/// model cannot serve it (its receive sources need threads of their own: only
/// `threads.mode = "threads"`, the default, has them). A segment that cannot be created is
/// logged (the message names the segment and the fix) and the participant goes on without:
/// UDP still reaches every peer. `[shm]` settings that give no usable segment are an error.
fn open_shm(
    settings: &ParticipantSettings,
    udp: Option<&Arc<UdpTransport>>,
) -> Result<Option<ShmTransport>, Error> {
    if settings.transports.no_shm {
        return Ok(None);
    }
    if settings.threads.mode != crate::config::ThreadMode::Threads {
        tracing::debug!(mode = ?settings.threads.mode,
            "shared memory needs threads.mode = \"threads\"; peers on this host use UDP");
        return Ok(None);
    }
    let max = udp.map_or(tachyon_transport::MAX_UDP_PAYLOAD, |u| u.max_datagram());
    let critical = settings.threads.critical_priority.is_some();
    match ShmTransport::open(&settings.shm, max, critical) {
        Ok(t) => Ok(Some(t)),
        Err(e @ tachyon_transport::TransportError::ShmConfig(_)) => Err(e.into()),
        Err(e) => {
            tracing::warn!(error = %e, "shared memory unavailable; peers on this host use UDP");
            Ok(None)
        }
    }
}

/// Where this participant runs, announced in its PROPERTY_LIST under the names Cyclone DDS
/// uses (`__ProcessName`, `__Pid`, `__Hostname`), so that `tachyon spy ls`, `cyclonedds ps`
/// and other vendors' tools show it. What cannot be found is left out.
fn process_properties() -> Vec<(String, String)> {
    let mut p = Vec::new();
    let name = std::env::current_exe()
        .ok()
        .and_then(|e| e.file_name().map(|n| n.to_string_lossy().into_owned()));
    if let Some(name) = name {
        p.push(("__ProcessName".to_owned(), name));
    }
    p.push(("__Pid".to_owned(), std::process::id().to_string()));
    if let Ok(host) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
        let host = host.trim();
        if !host.is_empty() {
            p.push(("__Hostname".to_owned(), host.to_owned()));
        }
    }
    p
}
