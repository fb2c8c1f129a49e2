//! The QoS of each DCPS entity, with the spec's defaults and by-value builders:
//! `DataWriterQos::default().reliable().keep_all().transient_local()`.

use super::policy::*;
use crate::time::Duration;

/// QoS of a DataWriter (and what SEDP announces about it, together with its publisher's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataWriterQos {
    /// DURABILITY (default VOLATILE).
    pub durability: DurabilityKind,
    /// DURABILITY_SERVICE.
    pub durability_service: DurabilityService,
    /// DEADLINE period (default infinite).
    pub deadline: Option<Duration>,
    /// LATENCY_BUDGET duration (default 0).
    pub latency_budget: Duration,
    /// LIVELINESS (default AUTOMATIC, infinite lease).
    pub liveliness: Liveliness,
    /// RELIABILITY (default RELIABLE, 100 ms).
    pub reliability: ReliabilityQos,
    /// DESTINATION_ORDER (default BY_RECEPTION_TIMESTAMP).
    pub destination_order: DestinationOrderKind,
    /// HISTORY (default KEEP_LAST(1)).
    pub history: History,
    /// RESOURCE_LIMITS (default unlimited).
    pub resource_limits: ResourceLimits,
    /// TRANSPORT_PRIORITY (default 0).
    pub transport_priority: i32,
    /// LIFESPAN duration (default infinite).
    pub lifespan: Option<Duration>,
    /// USER_DATA.
    pub user_data: Vec<u8>,
    /// OWNERSHIP (default SHARED).
    pub ownership: OwnershipKind,
    /// OWNERSHIP_STRENGTH (default 0).
    pub ownership_strength: i32,
    /// WRITER_DATA_LIFECYCLE `autodispose_unregistered_instances` (default true).
    pub autodispose_unregistered_instances: bool,
    /// DATA_REPRESENTATION offered, in preference order; the writer writes with the first.
    /// Empty: chosen from the type by the runtime — XCDR1 then XCDR2 for `@final` types
    /// (written as XCDR1, which Cyclone DDS 0.10 and Fast DDS 2.9 both read and match), XCDR2
    /// for `@appendable` and `@mutable` ones (what Cyclone DDS requires of them).
    pub representation: Vec<DataRepresentation>,
}

impl Default for DataWriterQos {
    /// The DDS defaults. DATA_REPRESENTATION is left empty: the runtime chooses it from the
    /// type (see [`DataWriterQos::representation`]).
    fn default() -> DataWriterQos {
        DataWriterQos {
            durability: DurabilityKind::Volatile,
            durability_service: DurabilityService::default(),
            deadline: None,
            latency_budget: Duration::ZERO,
            liveliness: Liveliness::default(),
            reliability: ReliabilityQos::RELIABLE,
            destination_order: DestinationOrderKind::ByReceptionTimestamp,
            history: History::KeepLast(1),
            resource_limits: ResourceLimits::default(),
            transport_priority: 0,
            lifespan: None,
            user_data: Vec::new(),
            ownership: OwnershipKind::Shared,
            ownership_strength: 0,
            autodispose_unregistered_instances: true,
            representation: Vec::new(),
        }
    }
}

/// QoS of a DataReader.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataReaderQos {
    /// DURABILITY requested (default VOLATILE).
    pub durability: DurabilityKind,
    /// DEADLINE period requested (default infinite).
    pub deadline: Option<Duration>,
    /// LATENCY_BUDGET (default 0).
    pub latency_budget: Duration,
    /// LIVELINESS requested (default AUTOMATIC, infinite lease).
    pub liveliness: Liveliness,
    /// RELIABILITY requested (default BEST_EFFORT).
    pub reliability: ReliabilityQos,
    /// DESTINATION_ORDER (default BY_RECEPTION_TIMESTAMP).
    pub destination_order: DestinationOrderKind,
    /// HISTORY (default KEEP_LAST(1)).
    pub history: History,
    /// RESOURCE_LIMITS (default unlimited).
    pub resource_limits: ResourceLimits,
    /// USER_DATA.
    pub user_data: Vec<u8>,
    /// OWNERSHIP (default SHARED).
    pub ownership: OwnershipKind,
    /// TIME_BASED_FILTER minimum separation (default 0).
    pub time_based_filter: Duration,
    /// READER_DATA_LIFECYCLE (default infinite delays).
    pub reader_data_lifecycle: ReaderDataLifecycle,
    /// DATA_REPRESENTATION accepted. Empty: the runtime accepts XCDR1 and XCDR2 (it decodes
    /// both, whatever the type's extensibility).
    pub representation: Vec<DataRepresentation>,
    /// TYPE_CONSISTENCY_ENFORCEMENT (default ALLOW_TYPE_COERCION).
    pub type_consistency: TypeConsistencyKind,
}

impl Default for DataReaderQos {
    fn default() -> DataReaderQos {
        DataReaderQos {
            durability: DurabilityKind::Volatile,
            deadline: None,
            latency_budget: Duration::ZERO,
            liveliness: Liveliness::default(),
            reliability: ReliabilityQos::BEST_EFFORT,
            destination_order: DestinationOrderKind::ByReceptionTimestamp,
            history: History::KeepLast(1),
            resource_limits: ResourceLimits::default(),
            user_data: Vec::new(),
            ownership: OwnershipKind::Shared,
            time_based_filter: Duration::ZERO,
            reader_data_lifecycle: ReaderDataLifecycle::default(),
            representation: Vec::new(),
            type_consistency: TypeConsistencyKind::AllowTypeCoercion,
        }
    }
}

/// QoS of a Topic (the defaults writers and readers of it start from).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopicQos {
    /// TOPIC_DATA.
    pub topic_data: Vec<u8>,
    /// DURABILITY.
    pub durability: DurabilityKind,
    /// DURABILITY_SERVICE.
    pub durability_service: DurabilityService,
    /// DEADLINE.
    pub deadline: Option<Duration>,
    /// LATENCY_BUDGET.
    pub latency_budget: Duration,
    /// LIVELINESS.
    pub liveliness: Liveliness,
    /// RELIABILITY (`None`: BEST_EFFORT for readers, RELIABLE for writers, as the spec's
    /// entity defaults say).
    pub reliability: Option<ReliabilityQos>,
    /// DESTINATION_ORDER.
    pub destination_order: DestinationOrderKind,
    /// HISTORY.
    pub history: History,
    /// RESOURCE_LIMITS.
    pub resource_limits: ResourceLimits,
    /// TRANSPORT_PRIORITY.
    pub transport_priority: i32,
    /// LIFESPAN.
    pub lifespan: Option<Duration>,
    /// OWNERSHIP.
    pub ownership: OwnershipKind,
    /// DATA_REPRESENTATION (`None`: the writer/reader defaults).
    pub representation: Option<Vec<DataRepresentation>>,
}

/// QoS of a Publisher.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PublisherQos {
    /// PRESENTATION.
    pub presentation: Presentation,
    /// PARTITION names (may hold `*`, `?` and `[...]` wildcards); empty is the default
    /// partition `""`.
    pub partition: Vec<String>,
    /// GROUP_DATA.
    pub group_data: Vec<u8>,
    /// ENTITY_FACTORY `autoenable_created_entities` is always true in Tachyon.
    pub entity_factory_autoenable: EntityFactory,
}

/// QoS of a Subscriber.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SubscriberQos {
    /// PRESENTATION.
    pub presentation: Presentation,
    /// PARTITION names (wildcards allowed); empty is the default partition.
    pub partition: Vec<String>,
    /// GROUP_DATA.
    pub group_data: Vec<u8>,
    /// ENTITY_FACTORY.
    pub entity_factory_autoenable: EntityFactory,
}

/// QoS of a DomainParticipant.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DomainParticipantQos {
    /// USER_DATA, announced in SPDP.
    pub user_data: Vec<u8>,
    /// ENTITY_FACTORY.
    pub entity_factory_autoenable: EntityFactory,
}

/// ENTITY_FACTORY: whether created entities are enabled at once (default true).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EntityFactory(pub bool);

impl Default for EntityFactory {
    fn default() -> EntityFactory {
        EntityFactory(true)
    }
}

macro_rules! builders {
    ($t:ty) => {
        impl $t {
            /// RELIABILITY RELIABLE.
            pub fn reliable(mut self) -> Self {
                self.reliability.kind = Reliability::Reliable;
                self
            }
            /// RELIABILITY BEST_EFFORT.
            pub fn best_effort(mut self) -> Self {
                self.reliability.kind = Reliability::BestEffort;
                self
            }
            /// HISTORY KEEP_LAST(depth).
            pub fn keep_last(mut self, depth: usize) -> Self {
                self.history = History::KeepLast(depth);
                self
            }
            /// HISTORY KEEP_ALL.
            pub fn keep_all(mut self) -> Self {
                self.history = History::KeepAll;
                self
            }
            /// DURABILITY.
            pub fn durability(mut self, kind: DurabilityKind) -> Self {
                self.durability = kind;
                self
            }
            /// DURABILITY TRANSIENT_LOCAL.
            pub fn transient_local(self) -> Self {
                self.durability(DurabilityKind::TransientLocal)
            }
            /// DEADLINE period.
            pub fn deadline(mut self, period: Duration) -> Self {
                self.deadline = Some(period);
                self
            }
            /// LIVELINESS kind and lease.
            pub fn liveliness(mut self, kind: LivelinessKind, lease: Option<Duration>) -> Self {
                self.liveliness = Liveliness {
                    kind,
                    lease_duration: lease,
                };
                self
            }
            /// RESOURCE_LIMITS.
            pub fn resource_limits(mut self, limits: ResourceLimits) -> Self {
                self.resource_limits = limits;
                self
            }
            /// OWNERSHIP.
            pub fn ownership(mut self, kind: OwnershipKind) -> Self {
                self.ownership = kind;
                self
            }
            /// DESTINATION_ORDER.
            pub fn destination_order(mut self, kind: DestinationOrderKind) -> Self {
                self.destination_order = kind;
                self
            }
            /// DATA_REPRESENTATION, in preference order.
            pub fn representation(mut self, reprs: &[DataRepresentation]) -> Self {
                self.representation = reprs.to_vec();
                self
            }
            /// USER_DATA.
            pub fn user_data(mut self, data: &[u8]) -> Self {
                self.user_data = data.to_vec();
                self
            }
            /// LATENCY_BUDGET.
            pub fn latency_budget(mut self, d: Duration) -> Self {
                self.latency_budget = d;
                self
            }
        }
    };
}

builders!(DataWriterQos);
builders!(DataReaderQos);

impl DataWriterQos {
    /// LIFESPAN.
    pub fn lifespan(mut self, d: Duration) -> Self {
        self.lifespan = Some(d);
        self
    }
    /// OWNERSHIP_STRENGTH.
    pub fn ownership_strength(mut self, s: i32) -> Self {
        self.ownership_strength = s;
        self
    }
    /// TRANSPORT_PRIORITY.
    pub fn transport_priority(mut self, p: i32) -> Self {
        self.transport_priority = p;
        self
    }
    /// WRITER_DATA_LIFECYCLE.
    pub fn autodispose_unregistered_instances(mut self, on: bool) -> Self {
        self.autodispose_unregistered_instances = on;
        self
    }
    /// The writer QoS a topic's QoS implies (DDS `copy_from_topic_qos`).
    pub fn from_topic(t: &TopicQos) -> DataWriterQos {
        let d = DataWriterQos::default();
        DataWriterQos {
            durability: t.durability,
            durability_service: t.durability_service,
            deadline: t.deadline,
            latency_budget: t.latency_budget,
            liveliness: t.liveliness,
            reliability: t.reliability.unwrap_or(d.reliability),
            destination_order: t.destination_order,
            history: t.history,
            resource_limits: t.resource_limits,
            transport_priority: t.transport_priority,
            lifespan: t.lifespan,
            ownership: t.ownership,
            representation: t.representation.clone().unwrap_or(d.representation),
            ..d
        }
    }
}

impl DataReaderQos {
    /// TIME_BASED_FILTER minimum separation.
    pub fn time_based_filter(mut self, d: Duration) -> Self {
        self.time_based_filter = d;
        self
    }
    /// READER_DATA_LIFECYCLE.
    pub fn reader_data_lifecycle(mut self, l: ReaderDataLifecycle) -> Self {
        self.reader_data_lifecycle = l;
        self
    }
    /// The reader QoS a topic's QoS implies (DDS `copy_from_topic_qos`).
    pub fn from_topic(t: &TopicQos) -> DataReaderQos {
        let d = DataReaderQos::default();
        DataReaderQos {
            durability: t.durability,
            deadline: t.deadline,
            latency_budget: t.latency_budget,
            liveliness: t.liveliness,
            reliability: t.reliability.unwrap_or(d.reliability),
            destination_order: t.destination_order,
            history: t.history,
            resource_limits: t.resource_limits,
            ownership: t.ownership,
            representation: t.representation.clone().unwrap_or(d.representation),
            ..d
        }
    }
}

impl PublisherQos {
    /// PARTITION names.
    pub fn partition<S: AsRef<str>>(mut self, names: &[S]) -> Self {
        self.partition = names.iter().map(|s| s.as_ref().to_owned()).collect();
        self
    }
    /// PRESENTATION.
    pub fn presentation(mut self, p: Presentation) -> Self {
        self.presentation = p;
        self
    }
}

impl SubscriberQos {
    /// PARTITION names.
    pub fn partition<S: AsRef<str>>(mut self, names: &[S]) -> Self {
        self.partition = names.iter().map(|s| s.as_ref().to_owned()).collect();
        self
    }
    /// PRESENTATION.
    pub fn presentation(mut self, p: Presentation) -> Self {
        self.presentation = p;
        self
    }
}
