//! The QoS of each DCPS entity, with the spec's defaults and by-value builders:
//! `DataWriterQos::default().reliable().keep_all().transient_local()`.

use super::compat::QosPolicyId;
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
    /// Tachyon extension, not sent on the wire (Cyclone DDS's `ignorelocal`): never match
    /// an endpoint of the same participant. Lets a program that both writes and reads a
    /// topic (a benchmark's ping and pong endpoints) not receive its own samples.
    pub ignore_local: bool,
    /// Tachyon extension, not sent on the wire (Cyclone DDS's `dds_write_set_batch`, RTI's
    /// BATCH): new data waits up to this long for more to fill a datagram, and a datagram's
    /// worth goes out at once; `DataWriter::flush` sends what waits. `None` (the default):
    /// every write is sent at once.
    pub batch_delay: Option<Duration>,
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
            ignore_local: false,
            batch_delay: None,
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
    /// TYPE_CONSISTENCY_ENFORCEMENT (default ALLOW_TYPE_COERCION, bounds ignored).
    pub type_consistency: TypeConsistency,
    /// Tachyon extension, not sent on the wire (Cyclone DDS's `ignorelocal`): never match
    /// an endpoint of the same participant. Lets a program that both writes and reads a
    /// topic (a benchmark's ping and pong endpoints) not receive its own samples.
    pub ignore_local: bool,
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
            type_consistency: TypeConsistency::allow(),
            ignore_local: false,
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
            /// Never match endpoints of the same participant (a Tachyon extension, as
            /// Cyclone DDS's `ignorelocal`; not sent on the wire).
            pub fn ignore_local(mut self, on: bool) -> Self {
                self.ignore_local = on;
                self
            }
        }
    };
}

builders!(DataWriterQos);
builders!(DataReaderQos);

impl DataWriterQos {
    /// Write batching with at most `max_delay` of waiting (a Tachyon extension).
    pub fn batch(mut self, max_delay: Duration) -> Self {
        self.batch_delay = Some(max_delay);
        self
    }
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

/// The first policy, in `QosPolicyId` order, among `checks` whose values differ.
fn first_differing(checks: &[(QosPolicyId, bool)]) -> Option<QosPolicyId> {
    checks.iter().find(|(_, same)| !same).map(|(id, _)| *id)
}

impl DataWriterQos {
    /// The first policy DDS does not let change after creation (DDS 1.4 2.2.3, "Changeable"
    /// column) that differs between `self` (the current QoS) and `new`; `None` when `new`
    /// changes only changeable ones (DEADLINE, LATENCY_BUDGET, TRANSPORT_PRIORITY, LIFESPAN,
    /// USER_DATA, OWNERSHIP_STRENGTH, WRITER_DATA_LIFECYCLE).
    pub fn immutable_change(&self, new: &DataWriterQos) -> Option<QosPolicyId> {
        first_differing(&[
            (QosPolicyId::Durability, self.durability == new.durability),
            (QosPolicyId::Ownership, self.ownership == new.ownership),
            (QosPolicyId::Liveliness, self.liveliness == new.liveliness),
            (
                QosPolicyId::Reliability,
                self.reliability == new.reliability,
            ),
            (
                QosPolicyId::DestinationOrder,
                self.destination_order == new.destination_order,
            ),
            (QosPolicyId::History, self.history == new.history),
            (
                QosPolicyId::ResourceLimits,
                self.resource_limits == new.resource_limits,
            ),
            (
                QosPolicyId::DurabilityService,
                self.durability_service == new.durability_service,
            ),
            (
                QosPolicyId::DataRepresentation,
                self.representation == new.representation,
            ),
        ])
    }
}

impl DataReaderQos {
    /// The first policy DDS does not let change after creation that differs between `self`
    /// and `new`; `None` when `new` changes only changeable ones (DEADLINE, LATENCY_BUDGET,
    /// USER_DATA, TIME_BASED_FILTER, READER_DATA_LIFECYCLE).
    pub fn immutable_change(&self, new: &DataReaderQos) -> Option<QosPolicyId> {
        first_differing(&[
            (QosPolicyId::Durability, self.durability == new.durability),
            (QosPolicyId::Ownership, self.ownership == new.ownership),
            (QosPolicyId::Liveliness, self.liveliness == new.liveliness),
            (
                QosPolicyId::Reliability,
                self.reliability == new.reliability,
            ),
            (
                QosPolicyId::DestinationOrder,
                self.destination_order == new.destination_order,
            ),
            (QosPolicyId::History, self.history == new.history),
            (
                QosPolicyId::ResourceLimits,
                self.resource_limits == new.resource_limits,
            ),
            (
                QosPolicyId::DataRepresentation,
                self.representation == new.representation,
            ),
            (
                QosPolicyId::TypeConsistencyEnforcement,
                self.type_consistency == new.type_consistency,
            ),
        ])
    }

    /// Whether the policies are consistent with each other: TIME_BASED_FILTER's minimum
    /// separation may not exceed the DEADLINE period (DDS 1.4 2.2.3.12).
    pub fn check(&self) -> Result<(), InconsistentQos> {
        if self.deadline.is_some_and(|d| d < self.time_based_filter) {
            return Err(InconsistentQos::TimeBasedFilterExceedsDeadline);
        }
        Ok(())
    }
}

impl TopicQos {
    /// The first policy DDS does not let change after creation that differs between `self`
    /// and `new`; `None` when `new` changes only changeable ones (TOPIC_DATA, DEADLINE,
    /// LATENCY_BUDGET, TRANSPORT_PRIORITY, LIFESPAN).
    pub fn immutable_change(&self, new: &TopicQos) -> Option<QosPolicyId> {
        first_differing(&[
            (QosPolicyId::Durability, self.durability == new.durability),
            (QosPolicyId::Ownership, self.ownership == new.ownership),
            (QosPolicyId::Liveliness, self.liveliness == new.liveliness),
            (
                QosPolicyId::Reliability,
                self.reliability == new.reliability,
            ),
            (
                QosPolicyId::DestinationOrder,
                self.destination_order == new.destination_order,
            ),
            (QosPolicyId::History, self.history == new.history),
            (
                QosPolicyId::ResourceLimits,
                self.resource_limits == new.resource_limits,
            ),
            (
                QosPolicyId::DurabilityService,
                self.durability_service == new.durability_service,
            ),
            (
                QosPolicyId::DataRepresentation,
                self.representation == new.representation,
            ),
        ])
    }
}

impl PublisherQos {
    /// The first policy DDS does not let change after creation that differs: PRESENTATION
    /// (PARTITION, GROUP_DATA and ENTITY_FACTORY are changeable).
    pub fn immutable_change(&self, new: &PublisherQos) -> Option<QosPolicyId> {
        first_differing(&[(
            QosPolicyId::Presentation,
            self.presentation == new.presentation,
        )])
    }
}

impl SubscriberQos {
    /// The first policy DDS does not let change after creation that differs: PRESENTATION
    /// (PARTITION, GROUP_DATA and ENTITY_FACTORY are changeable).
    pub fn immutable_change(&self, new: &SubscriberQos) -> Option<QosPolicyId> {
        first_differing(&[(
            QosPolicyId::Presentation,
            self.presentation == new.presentation,
        )])
    }
}

/// Whether PARTITION names can be used: none may contain a NUL character.
pub fn check_partitions(names: &[String]) -> Result<(), InconsistentQos> {
    match names.iter().find(|n| n.contains('\0')) {
        Some(n) => Err(InconsistentQos::BadPartition(n.clone())),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changeable_policies_are_not_immutable_changes() {
        let w = DataWriterQos::default();
        let changed = w
            .clone()
            .deadline(Duration::from_millis(5))
            .lifespan(Duration::from_secs(1))
            .transport_priority(3)
            .ownership_strength(9)
            .user_data(b"x")
            .latency_budget(Duration::from_millis(1))
            .autodispose_unregistered_instances(false);
        assert_eq!(w.immutable_change(&changed), None);
        let bad = changed.clone().best_effort().keep_all();
        assert_eq!(w.immutable_change(&bad), Some(QosPolicyId::Reliability));

        let r = DataReaderQos::default();
        let tbf = r.clone().time_based_filter(Duration::from_millis(10));
        assert_eq!(r.immutable_change(&tbf), None);
        assert_eq!(
            r.immutable_change(&r.clone().transient_local()),
            Some(QosPolicyId::Durability)
        );
        assert_eq!(
            tbf.deadline(Duration::from_millis(5)).check(),
            Err(InconsistentQos::TimeBasedFilterExceedsDeadline)
        );

        let p = PublisherQos::default();
        assert_eq!(p.immutable_change(&p.clone().partition(&["a"])), None);
        let scope = Presentation {
            access_scope: AccessScope::Topic,
            ..Presentation::default()
        };
        assert_eq!(
            p.immutable_change(&p.clone().presentation(scope)),
            Some(QosPolicyId::Presentation)
        );
    }
}
