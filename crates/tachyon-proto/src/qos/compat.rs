//! What discovery checks before it matches a writer with a reader: topic and type names,
//! partitions, and request-offered (RxO) compatibility of every policy the spec marks RxO
//! (DDS 1.4 table 2.12), reporting each incompatible policy by its `QosPolicyId_t`.

use super::policy::{DataRepresentation, OwnershipKind};
use crate::discovery::data::{PublicationData, SubscriptionData};
use crate::time::Duration;

/// `QosPolicyId_t`: names a policy in OFFERED/REQUESTED_INCOMPATIBLE_QOS statuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum QosPolicyId {
    /// USER_DATA (1).
    UserData,
    /// DURABILITY (2).
    Durability,
    /// PRESENTATION (3).
    Presentation,
    /// DEADLINE (4).
    Deadline,
    /// LATENCY_BUDGET (5).
    LatencyBudget,
    /// OWNERSHIP (6).
    Ownership,
    /// OWNERSHIP_STRENGTH (7).
    OwnershipStrength,
    /// LIVELINESS (8).
    Liveliness,
    /// TIME_BASED_FILTER (9).
    TimeBasedFilter,
    /// PARTITION (10).
    Partition,
    /// RELIABILITY (11).
    Reliability,
    /// DESTINATION_ORDER (12).
    DestinationOrder,
    /// HISTORY (13).
    History,
    /// RESOURCE_LIMITS (14).
    ResourceLimits,
    /// ENTITY_FACTORY (15).
    EntityFactory,
    /// WRITER_DATA_LIFECYCLE (16).
    WriterDataLifecycle,
    /// READER_DATA_LIFECYCLE (17).
    ReaderDataLifecycle,
    /// TOPIC_DATA (18).
    TopicData,
    /// GROUP_DATA (19).
    GroupData,
    /// TRANSPORT_PRIORITY (20).
    TransportPriority,
    /// LIFESPAN (21).
    Lifespan,
    /// DURABILITY_SERVICE (22).
    DurabilityService,
    /// DATA_REPRESENTATION (23).
    DataRepresentation,
    /// TYPE_CONSISTENCY_ENFORCEMENT (24).
    TypeConsistencyEnforcement,
}

impl QosPolicyId {
    /// The numeric `QosPolicyId_t`.
    pub fn id(self) -> u32 {
        self as u32 + 1
    }

    /// The policy's name as the spec writes it.
    pub fn name(self) -> &'static str {
        match self {
            QosPolicyId::UserData => "USER_DATA",
            QosPolicyId::Durability => "DURABILITY",
            QosPolicyId::Presentation => "PRESENTATION",
            QosPolicyId::Deadline => "DEADLINE",
            QosPolicyId::LatencyBudget => "LATENCY_BUDGET",
            QosPolicyId::Ownership => "OWNERSHIP",
            QosPolicyId::OwnershipStrength => "OWNERSHIP_STRENGTH",
            QosPolicyId::Liveliness => "LIVELINESS",
            QosPolicyId::TimeBasedFilter => "TIME_BASED_FILTER",
            QosPolicyId::Partition => "PARTITION",
            QosPolicyId::Reliability => "RELIABILITY",
            QosPolicyId::DestinationOrder => "DESTINATION_ORDER",
            QosPolicyId::History => "HISTORY",
            QosPolicyId::ResourceLimits => "RESOURCE_LIMITS",
            QosPolicyId::EntityFactory => "ENTITY_FACTORY",
            QosPolicyId::WriterDataLifecycle => "WRITER_DATA_LIFECYCLE",
            QosPolicyId::ReaderDataLifecycle => "READER_DATA_LIFECYCLE",
            QosPolicyId::TopicData => "TOPIC_DATA",
            QosPolicyId::GroupData => "GROUP_DATA",
            QosPolicyId::TransportPriority => "TRANSPORT_PRIORITY",
            QosPolicyId::Lifespan => "LIFESPAN",
            QosPolicyId::DurabilityService => "DURABILITY_SERVICE",
            QosPolicyId::DataRepresentation => "DATA_REPRESENTATION",
            QosPolicyId::TypeConsistencyEnforcement => "TYPE_CONSISTENCY_ENFORCEMENT",
        }
    }
}

impl std::fmt::Display for QosPolicyId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The outcome of comparing a writer and a reader.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MatchOutcome {
    /// They match: the writer's data goes to the reader in this representation.
    Match(DataRepresentation),
    /// Different topic or type, or no common partition: not a candidate (no status).
    NotRelated,
    /// Same topic, type and partition, but these RxO policies are incompatible
    /// (OFFERED/REQUESTED_INCOMPATIBLE_QOS name the first).
    Incompatible(Vec<QosPolicyId>),
}

/// Compares a writer (offered) with a reader (requested) as SEDP matching does.
pub fn check(offered: &PublicationData, requested: &SubscriptionData) -> MatchOutcome {
    check_with(offered, requested, Unannounced::Neither)
}

/// Which side of a pair is a remote endpoint that speaks XCDR1 only and does not announce
/// DATA_REPRESENTATION at all, whatever its application asked: Fast DDS up to 2.x (eProsima's
/// discovery code leaves the parameter out, "TODO - Enable when implement XCDR, XCDR2", and
/// fastcdr 1 reads and writes XCDR1 only). By the spec its silence means XCDR1; by its
/// behaviour it matches anything and exchanges XCDR1. Tachyon meets it there: such a writer's
/// XCDR1 samples go to any Tachyon reader (which decodes either representation, told by each
/// sample's encapsulation header), and such a reader gets XCDR1 from any Tachyon writer (its
/// samples converted when the writer writes XCDR2). Other vendors announce the policy, or
/// speak XCDR1 by default, and are held to the spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unannounced {
    /// Both sides announced (or are held to the spec's default).
    Neither,
    /// The remote writer is such an endpoint.
    Writer,
    /// The remote reader is such an endpoint.
    Reader,
}

/// [`check`], knowing which side (if any) is an XCDR1-only endpoint that announces no
/// DATA_REPRESENTATION ([`Unannounced`]): the representation check then gives XCDR1, the
/// only one that endpoint reads or writes.
pub fn check_with(
    offered: &PublicationData,
    requested: &SubscriptionData,
    unannounced: Unannounced,
) -> MatchOutcome {
    check_typed(offered, requested, unannounced, TypeMatch::ByName)
}

/// What the type check of a pair found (`discovery`'s, from TypeInformation and the type
/// library): the rest of matching depends on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeMatch {
    /// One side announces no usable TypeInformation: type names must be equal.
    ByName,
    /// The reader's type is the writer's, or assignable from it (names need not be equal).
    Compatible,
    /// Not assignable, or not the same type under DISALLOW_TYPE_COERCION, or no
    /// TypeInformation under `force_type_validation`: incompatible TYPE_CONSISTENCY_ENFORCEMENT.
    Incompatible,
    /// A type is not known yet (asked for with TypeLookup): no decision, no status.
    Pending,
}

/// [`check_with`], with the type check already made ([`TypeMatch`]).
pub fn check_typed(
    offered: &PublicationData,
    requested: &SubscriptionData,
    unannounced: Unannounced,
    types: TypeMatch,
) -> MatchOutcome {
    let names = match types {
        TypeMatch::ByName => type_names_match(&offered.type_name, &requested.type_name),
        TypeMatch::Pending => false,
        TypeMatch::Compatible | TypeMatch::Incompatible => true,
    };
    if offered.topic_name != requested.topic_name
        || !names
        || !partitions_match(&offered.partition, &requested.partition)
    {
        return MatchOutcome::NotRelated;
    }
    let (w, r) = (&offered.qos, &requested.qos);
    let mut bad = Vec::new();
    if types == TypeMatch::Incompatible {
        bad.push(QosPolicyId::TypeConsistencyEnforcement);
    }
    if w.durability < r.durability {
        bad.push(QosPolicyId::Durability);
    }
    let (wp, rp) = (&offered.presentation, &requested.presentation);
    if wp.access_scope < rp.access_scope
        || (rp.coherent_access && !wp.coherent_access)
        || (rp.ordered_access && !wp.ordered_access)
    {
        bad.push(QosPolicyId::Presentation);
    }
    if !at_most(w.deadline, r.deadline) {
        bad.push(QosPolicyId::Deadline);
    }
    if w.latency_budget > r.latency_budget {
        bad.push(QosPolicyId::LatencyBudget);
    }
    if w.ownership != r.ownership {
        bad.push(QosPolicyId::Ownership);
    }
    if w.liveliness.kind < r.liveliness.kind
        || !at_most(w.liveliness.lease_duration, r.liveliness.lease_duration)
    {
        bad.push(QosPolicyId::Liveliness);
    }
    if w.reliability.kind < r.reliability.kind {
        bad.push(QosPolicyId::Reliability);
    }
    if w.destination_order < r.destination_order {
        bad.push(QosPolicyId::DestinationOrder);
    }
    let repr = match unannounced {
        Unannounced::Neither => representation(&w.representation, &r.representation),
        Unannounced::Writer | Unannounced::Reader => Some(DataRepresentation::Xcdr1),
    };
    if repr.is_none() {
        bad.push(QosPolicyId::DataRepresentation);
    }
    match repr {
        Some(rep) if bad.is_empty() => MatchOutcome::Match(rep),
        _ => MatchOutcome::Incompatible(bad),
    }
}

/// Whether an exclusive-ownership writer's strength matters: only for EXCLUSIVE.
pub fn is_exclusive(p: &PublicationData) -> bool {
    p.qos.ownership == OwnershipKind::Exclusive
}

/// `offered <= requested` for durations where `None` is infinite.
fn at_most(offered: Option<Duration>, requested: Option<Duration>) -> bool {
    match (offered, requested) {
        (_, None) => true,
        (None, Some(_)) => false,
        (Some(o), Some(r)) => o <= r,
    }
}

/// The representation the writer uses towards this reader: the writer writes with its first
/// offered representation (XTypes 7.6.3.1.1), which the reader must accept. An empty list on
/// either side means XCDR1, as the spec says of an absent DATA_REPRESENTATION.
pub fn representation(
    offered: &[DataRepresentation],
    accepted: &[DataRepresentation],
) -> Option<DataRepresentation> {
    let first = DataRepresentation::written(offered);
    let ok = if accepted.is_empty() {
        first == DataRepresentation::Xcdr1
    } else {
        accepted.contains(&first)
    };
    ok.then_some(first)
}

/// Type names match when they are the same string, as the spec, Cyclone DDS (`strcmp`) and
/// Fast DDS compare them: `ShapeType` and `::ShapeType` differ. When one side announces no
/// TypeInformation this is the whole type check ([`TypeMatch::ByName`]).
pub fn type_names_match(a: &str, b: &str) -> bool {
    a == b
}

/// PARTITION matching: an empty list is the default partition `""`; two names match when
/// equal or when exactly one of them is a wildcard pattern (`*`, `?`, `[...]`) matching the
/// other (DDS 1.4 2.2.3.13).
pub fn partitions_match<A: AsRef<str>, B: AsRef<str>>(a: &[A], b: &[B]) -> bool {
    let default = [""];
    let a: Vec<&str> = if a.is_empty() {
        default.to_vec()
    } else {
        a.iter().map(AsRef::as_ref).collect()
    };
    let b: Vec<&str> = if b.is_empty() {
        default.to_vec()
    } else {
        b.iter().map(AsRef::as_ref).collect()
    };
    a.iter()
        .any(|x| b.iter().any(|y| partition_names_match(x, y)))
}

fn partition_names_match(a: &str, b: &str) -> bool {
    match (is_pattern(a), is_pattern(b)) {
        (false, false) => a == b,
        (true, false) => fnmatch(a.as_bytes(), b.as_bytes()),
        (false, true) => fnmatch(b.as_bytes(), a.as_bytes()),
        // Two patterns never match each other, except identical ones (as Cyclone DDS does).
        (true, true) => a == b,
    }
}

fn is_pattern(s: &str) -> bool {
    s.bytes().any(|c| matches!(c, b'*' | b'?' | b'['))
}

/// POSIX `fnmatch` without flags: `*`, `?`, `[...]` with ranges and `!`/`^` negation, `\`
/// escapes. Linear backtracking on the last `*`, so no input makes it exponential.
pub fn fnmatch(pattern: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        if p < pattern.len() {
            match pattern[p] {
                b'*' => {
                    star = Some((p + 1, n));
                    p += 1;
                    continue;
                }
                b'?' => {
                    p += 1;
                    n += 1;
                    continue;
                }
                b'[' => {
                    if let Some((matched, next)) = class(&pattern[p..], name[n]) {
                        if matched {
                            p += next;
                            n += 1;
                            continue;
                        }
                    } else if name[n] == b'[' {
                        // An unterminated class is a literal '['.
                        p += 1;
                        n += 1;
                        continue;
                    }
                }
                b'\\' if p + 1 < pattern.len() => {
                    if pattern[p + 1] == name[n] {
                        p += 2;
                        n += 1;
                        continue;
                    }
                }
                c => {
                    if c == name[n] {
                        p += 1;
                        n += 1;
                        continue;
                    }
                }
            }
        }
        match star {
            Some((sp, sn)) => {
                p = sp;
                n = sn + 1;
                star = Some((sp, sn + 1));
            }
            None => return false,
        }
    }
    pattern[p.min(pattern.len())..].iter().all(|&c| c == b'*')
}

/// Matches `c` against the bracket expression at the start of `pat`: whether it matched and
/// the expression's length, or `None` when the bracket is not closed.
fn class(pat: &[u8], c: u8) -> Option<(bool, usize)> {
    let mut i = 1;
    let negate = matches!(pat.get(i), Some(b'!' | b'^'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    loop {
        let lo = *pat.get(i)?;
        if lo == b']' && !first {
            return Some((matched != negate, i + 1));
        }
        first = false;
        if pat.get(i + 1) == Some(&b'-') && pat.get(i + 2).is_some_and(|&h| h != b']') {
            let hi = pat[i + 2];
            matched |= lo <= c && c <= hi;
            i += 3;
        } else {
            matched |= lo == c;
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnmatch_basics() {
        assert!(fnmatch(b"*", b""));
        assert!(fnmatch(b"a*", b"abc"));
        assert!(fnmatch(b"a?c", b"abc"));
        assert!(!fnmatch(b"a?c", b"ac"));
        assert!(fnmatch(b"[a-c]x", b"bx"));
        assert!(!fnmatch(b"[!a-c]x", b"bx"));
        assert!(fnmatch(b"*x*y*", b"axbyc"));
        assert!(!fnmatch(b"*x*y*", b"ayb"));
        assert!(fnmatch(b"\\*", b"*"));
        assert!(!fnmatch(b"\\*", b"a"));
        assert!(fnmatch(b"[", b"["));
        // Pathological input stays linear-ish.
        let name = vec![b'a'; 4000];
        let mut pat = b"*a".repeat(50);
        pat.push(b'b');
        assert!(!fnmatch(&pat, &name));
    }

    #[test]
    fn partitions() {
        let none: [&str; 0] = [];
        assert!(partitions_match(&none, &none));
        assert!(partitions_match(&[""], &none));
        assert!(!partitions_match(&["A"], &none));
        assert!(partitions_match(&["A*"], &["Ab"]));
        assert!(partitions_match(&["x", "Ab"], &["A*"]));
        assert!(!partitions_match(&["A*"], &["B*"]));
        assert!(partitions_match(&["A*"], &["A*"]));
        assert!(partitions_match(&["*"], &none));
    }

    #[test]
    fn representations() {
        use DataRepresentation::*;
        assert_eq!(
            representation(&[Xcdr2, Xcdr1], &[Xcdr1, Xcdr2]),
            Some(Xcdr2)
        );
        assert_eq!(representation(&[], &[]), Some(Xcdr1));
        assert_eq!(representation(&[Xcdr2], &[]), None);
        assert_eq!(representation(&[Xcdr1], &[Xcdr2]), None);
    }

    #[test]
    fn an_unannounced_xcdr1_endpoint_matches_in_xcdr1_whatever_the_other_side_asks() {
        use tachyon_wire::Guid;
        use DataRepresentation::*;
        let mut w = PublicationData::new(Guid::UNKNOWN, "Square", "ShapeType");
        let mut r = SubscriptionData::new(Guid::UNKNOWN, "Square", "ShapeType");
        // A Tachyon XCDR2 writer and a Fast DDS 2.x reader that announced nothing.
        std::sync::Arc::make_mut(&mut w.qos).representation = vec![Xcdr2];
        assert_eq!(
            check(&w, &r),
            MatchOutcome::Incompatible(vec![QosPolicyId::DataRepresentation])
        );
        assert_eq!(
            check_with(&w, &r, Unannounced::Reader),
            MatchOutcome::Match(Xcdr1)
        );
        // A Fast DDS 2.x writer that announced nothing and a Tachyon XCDR2-only reader.
        std::sync::Arc::make_mut(&mut w.qos).representation = vec![];
        std::sync::Arc::make_mut(&mut r.qos).representation = vec![Xcdr2];
        assert_eq!(
            check(&w, &r),
            MatchOutcome::Incompatible(vec![QosPolicyId::DataRepresentation])
        );
        assert_eq!(
            check_with(&w, &r, Unannounced::Writer),
            MatchOutcome::Match(Xcdr1)
        );
        // Other policies are still checked.
        std::sync::Arc::make_mut(&mut r.qos).reliability.kind =
            crate::endpoint::Reliability::Reliable;
        std::sync::Arc::make_mut(&mut w.qos).reliability.kind =
            crate::endpoint::Reliability::BestEffort;
        assert_eq!(
            check_with(&w, &r, Unannounced::Writer),
            MatchOutcome::Incompatible(vec![QosPolicyId::Reliability])
        );
    }

    #[test]
    fn type_names() {
        assert!(!type_names_match("::ShapeType", "ShapeType"));
        assert!(type_names_match("A::B", "A::B"));
        assert!(!type_names_match("ShapeType", "Shape"));
    }
}
