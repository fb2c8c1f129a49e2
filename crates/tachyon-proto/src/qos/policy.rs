//! The DCPS QoS policies (DDS 1.4 section 2.2.3) as plain Rust values with the spec's defaults.
//!
//! Policies that already shape a protocol component live next to it and are re-exported here:
//! [`History`], [`ResourceLimits`], [`ReaderDataLifecycle`] (history caches), [`Reliability`]
//! and [`Liveliness`] (endpoints). `None` in a duration field means DURATION_INFINITE.

use crate::time::Duration;

pub use crate::endpoint::{Liveliness, LivelinessKind, Reliability};
pub use crate::history::{History, ReaderDataLifecycle, ResourceLimits};

/// DURABILITY kind, ordered from weakest to strongest (the request-offered order).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DurabilityKind {
    /// Nothing is kept for late joiners.
    #[default]
    Volatile,
    /// The writer keeps its history for late-joining readers.
    TransientLocal,
    /// A durability service keeps data beyond the writer (not provided by Tachyon: treated as
    /// TRANSIENT_LOCAL by the writer, advertised as requested).
    Transient,
    /// As TRANSIENT, surviving restarts (same remark).
    Persistent,
}

/// RELIABILITY: kind plus how long a reliable `write` may block when the history is full.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReliabilityQos {
    /// BEST_EFFORT or RELIABLE.
    pub kind: Reliability,
    /// `max_blocking_time` (default 100 ms).
    pub max_blocking_time: Duration,
}

impl ReliabilityQos {
    /// RELIABLE with the default 100 ms blocking time (the writer default).
    pub const RELIABLE: ReliabilityQos = ReliabilityQos {
        kind: Reliability::Reliable,
        max_blocking_time: Duration::from_millis(100),
    };
    /// BEST_EFFORT (the reader and topic default).
    pub const BEST_EFFORT: ReliabilityQos = ReliabilityQos {
        kind: Reliability::BestEffort,
        max_blocking_time: Duration::from_millis(100),
    };
}

/// OWNERSHIP kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OwnershipKind {
    /// Every writer updates every instance.
    #[default]
    Shared,
    /// Each instance is owned by its strongest live writer.
    Exclusive,
}

/// DESTINATION_ORDER kind, ordered from weakest to strongest.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DestinationOrderKind {
    /// Samples are ordered as they are received.
    #[default]
    ByReceptionTimestamp,
    /// Samples are ordered by their source timestamp.
    BySourceTimestamp,
}

/// PRESENTATION access scope, ordered from weakest to strongest.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AccessScope {
    /// Coherence and order per instance.
    #[default]
    Instance,
    /// Across the instances of one writer/reader.
    Topic,
    /// Across all writers of a publisher / readers of a subscriber.
    Group,
}

/// PRESENTATION.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Presentation {
    /// Scope of coherent and ordered access.
    pub access_scope: AccessScope,
    /// Coherent sets are delivered all or nothing.
    pub coherent_access: bool,
    /// Order is kept across the scope.
    pub ordered_access: bool,
}

impl Presentation {
    /// Whether what the group's endpoints do is tied together: coherent sets (which a
    /// subscriber assembles across a publisher's writers) or GROUP-scope order.
    pub fn spans_group(&self) -> bool {
        self.coherent_access || (self.ordered_access && self.access_scope == AccessScope::Group)
    }
}

/// DURABILITY_SERVICE (advertised only: Tachyon has no durability service).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DurabilityService {
    /// `service_cleanup_delay` (default 0).
    pub service_cleanup_delay: Duration,
    /// History of the service (default KEEP_LAST(1)).
    pub history: History,
    /// Resource limits of the service (default unlimited).
    pub limits: ResourceLimits,
}

impl Default for DurabilityService {
    fn default() -> DurabilityService {
        DurabilityService {
            service_cleanup_delay: Duration::ZERO,
            history: History::KeepLast(1),
            limits: ResourceLimits::default(),
        }
    }
}

/// A data representation identifier (DataRepresentationId_t).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataRepresentation {
    /// XCDR version 1 (id 0), the default when a peer advertises nothing.
    Xcdr1,
    /// XML (id 1): advertised by no one we interoperate with; never offered.
    Xml,
    /// XCDR version 2 (id 2).
    Xcdr2,
}

impl DataRepresentation {
    /// The wire identifier.
    pub fn id(self) -> i16 {
        match self {
            DataRepresentation::Xcdr1 => 0,
            DataRepresentation::Xml => 1,
            DataRepresentation::Xcdr2 => 2,
        }
    }

    /// The XCDR version of this representation (`None` for XML).
    pub fn xcdr_version(self) -> Option<tachyon_cdr::XcdrVersion> {
        match self {
            DataRepresentation::Xcdr1 => Some(tachyon_cdr::XcdrVersion::Xcdr1),
            DataRepresentation::Xcdr2 => Some(tachyon_cdr::XcdrVersion::Xcdr2),
            DataRepresentation::Xml => None,
        }
    }

    /// The representation a writer offering `offered` writes: the first (XTypes 7.6.3.1.1),
    /// XCDR1 when the list is empty (as an absent DATA_REPRESENTATION means).
    pub fn written(offered: &[DataRepresentation]) -> DataRepresentation {
        offered
            .first()
            .copied()
            .unwrap_or(DataRepresentation::Xcdr1)
    }

    /// The representation of a wire identifier, `None` for unknown ones.
    pub fn from_id(id: i16) -> Option<DataRepresentation> {
        match id {
            0 => Some(DataRepresentation::Xcdr1),
            1 => Some(DataRepresentation::Xml),
            2 => Some(DataRepresentation::Xcdr2),
            _ => None,
        }
    }
}

/// TYPE_CONSISTENCY_ENFORCEMENT kind (XTypes 7.6.3.4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TypeConsistencyKind {
    /// Types must be the same.
    DisallowTypeCoercion,
    /// Assignable types match (the default).
    #[default]
    AllowTypeCoercion,
}

/// TYPE_CONSISTENCY_ENFORCEMENT (XTypes 7.6.3.4): how a reader's type must relate to the
/// types of the writers it matches. Applies when both sides announce TypeInformation;
/// otherwise type names are compared (or, with `force_type_validation`, nothing matches).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TypeConsistency {
    /// DISALLOW: the same type only; ALLOW (default): any assignable type.
    pub kind: TypeConsistencyKind,
    /// Sequence bounds do not matter (default true).
    pub ignore_sequence_bounds: bool,
    /// String bounds do not matter (default true).
    pub ignore_string_bounds: bool,
    /// Members with the same id may be named differently (default false).
    pub ignore_member_names: bool,
    /// A writer's type may not have members this reader's lacks (default false).
    pub prevent_type_widening: bool,
    /// Writers that announce no TypeInformation do not match (default false).
    pub force_type_validation: bool,
}

impl Default for TypeConsistency {
    fn default() -> TypeConsistency {
        TypeConsistency::allow()
    }
}

impl TypeConsistency {
    /// ALLOW_TYPE_COERCION with the XTypes defaults (bounds ignored, names compared).
    pub const fn allow() -> TypeConsistency {
        TypeConsistency {
            kind: TypeConsistencyKind::AllowTypeCoercion,
            ignore_sequence_bounds: true,
            ignore_string_bounds: true,
            ignore_member_names: false,
            prevent_type_widening: false,
            force_type_validation: false,
        }
    }

    /// DISALLOW_TYPE_COERCION: the same type only (the options are implied, as Cyclone DDS
    /// reads them: bounds and names count, widening prevented).
    pub const fn disallow() -> TypeConsistency {
        TypeConsistency {
            kind: TypeConsistencyKind::DisallowTypeCoercion,
            ignore_sequence_bounds: false,
            ignore_string_bounds: false,
            ignore_member_names: false,
            prevent_type_widening: true,
            force_type_validation: false,
        }
    }

    /// The five option octets of PID_TYPE_CONSISTENCY_ENFORCEMENT.
    pub fn options(&self) -> [u8; 5] {
        [
            u8::from(self.ignore_sequence_bounds),
            u8::from(self.ignore_string_bounds),
            u8::from(self.ignore_member_names),
            u8::from(self.prevent_type_widening),
            u8::from(self.force_type_validation),
        ]
    }

    /// The policy a parameter carries: `options` when it has them (any non-zero octet is
    /// true), else the defaults of `kind`. DISALLOW implies its options, as Cyclone DDS reads
    /// it, except `force_type_validation`.
    pub fn from_wire(kind: TypeConsistencyKind, options: Option<[u8; 5]>) -> TypeConsistency {
        let base = match kind {
            TypeConsistencyKind::DisallowTypeCoercion => TypeConsistency::disallow(),
            TypeConsistencyKind::AllowTypeCoercion => TypeConsistency::allow(),
        };
        let Some(o) = options else { return base };
        match kind {
            TypeConsistencyKind::DisallowTypeCoercion => TypeConsistency {
                force_type_validation: o[4] != 0,
                ..base
            },
            TypeConsistencyKind::AllowTypeCoercion => TypeConsistency {
                kind,
                ignore_sequence_bounds: o[0] != 0,
                ignore_string_bounds: o[1] != 0,
                ignore_member_names: o[2] != 0,
                prevent_type_widening: o[3] != 0,
                force_type_validation: o[4] != 0,
            },
        }
    }
}

/// Why a QoS value cannot be used (DDS INCONSISTENT_POLICY), naming the policy.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InconsistentQos {
    /// A cache-shaping combination (history/resource limits) is invalid.
    History(crate::history::QosError),
    /// TIME_BASED_FILTER minimum separation longer than the DEADLINE period.
    TimeBasedFilterExceedsDeadline,
    /// An empty DATA_REPRESENTATION list.
    NoDataRepresentation,
    /// A partition name that is empty or contains a NUL character.
    BadPartition(String),
}

impl std::fmt::Display for InconsistentQos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InconsistentQos::History(e) => write!(f, "HISTORY/RESOURCE_LIMITS: {e}"),
            InconsistentQos::TimeBasedFilterExceedsDeadline => f.write_str(
                "TIME_BASED_FILTER minimum_separation is longer than the DEADLINE period",
            ),
            InconsistentQos::NoDataRepresentation => {
                f.write_str("DATA_REPRESENTATION lists no representation")
            }
            InconsistentQos::BadPartition(p) => {
                write!(f, "PARTITION name {p:?} contains a NUL character")
            }
        }
    }
}

impl std::error::Error for InconsistentQos {}
