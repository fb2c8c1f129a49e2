//! How `spy echo`, `hz` and `watch` subscribe to a topic they did not declare: with a reader
//! whose QoS every discovered writer of the topic can serve (as `ros2 topic echo` adapts its
//! QoS to the publishers), in the partitions the writers publish in.

use tachyon::qos::{DataReaderQos, DurabilityKind, OwnershipKind, Reliability, SubscriberQos};
use tachyon::DomainParticipant;
use tachyon_wire::EntityKind;

use super::snapshot::Snapshot;
use crate::perf::Failure;

/// What the writers of a topic say about how to read it.
pub struct Plan {
    /// The type name most writers announce.
    pub type_name: String,
    /// Whether the writers' topic is keyed (their entity kind: Fast DDS does not match a
    /// reader of another kind).
    pub keyed: bool,
    pub reader: DataReaderQos,
    pub subscriber: SubscriberQos,
    /// Writers the reader cannot match (another ownership kind than the others'), and why.
    pub unmatched: Vec<String>,
}

/// The reader QoS for the writers of `topic` now known; `Err(NoMatch)` when there is none.
pub fn plan(snap: &Snapshot, topic: &str, domain: u32) -> Result<Plan, Failure> {
    let writers: Vec<_> = snap
        .writers
        .iter()
        .filter(|w| w.topic_name == topic)
        .collect();
    let Some(first) = writers.first() else {
        return Err(Failure::NoMatch(format!(
            "no writer of topic {topic:?} was discovered on domain {domain} (listen longer \
             with --wait?)"
        )));
    };
    // Reliable when every writer is (a best-effort reader gets a reliable writer's samples
    // too); TRANSIENT_LOCAL when every writer keeps samples for late joiners.
    let reliable = writers
        .iter()
        .all(|w| w.qos.reliability.kind == Reliability::Reliable);
    let durable = writers
        .iter()
        .all(|w| w.qos.durability >= DurabilityKind::TransientLocal);
    let exclusive = writers
        .iter()
        .filter(|w| w.qos.ownership == OwnershipKind::Exclusive)
        .count();
    let ownership = if exclusive * 2 > writers.len() {
        OwnershipKind::Exclusive
    } else {
        OwnershipKind::Shared
    };
    let unmatched = writers
        .iter()
        .filter(|w| w.qos.ownership != ownership)
        .map(|w| format!("writer {} has {:?} ownership", w.key.0, w.qos.ownership))
        .collect();
    let mut reader = DataReaderQos::default().keep_last(1000);
    reader = if reliable {
        reader.reliable()
    } else {
        reader.best_effort()
    };
    if durable {
        reader = reader.transient_local();
    }
    reader.ownership = ownership;
    // Every partition a writer publishes in ("" the default one).
    let mut partition: Vec<String> = Vec::new();
    for w in &writers {
        let names = if w.partition.is_empty() {
            vec![String::new()]
        } else {
            w.partition.clone()
        };
        for n in names {
            if !partition.contains(&n) {
                partition.push(n);
            }
        }
    }
    if partition == [String::new()] {
        partition.clear();
    }
    let keyed = first.key.0.entity_id.kind() == EntityKind::USER_WRITER_WITH_KEY;
    Ok(Plan {
        type_name: first.type_name.clone(),
        keyed,
        reader,
        subscriber: SubscriberQos {
            partition,
            ..SubscriberQos::default()
        },
        unmatched,
    })
}

/// Warns on standard error about writers the reader will not match.
pub fn warn_unmatched(plan: &Plan) {
    for why in &plan.unmatched {
        eprintln!("warning: {why}: not read");
    }
}

/// Creates the subscriber of `plan`.
pub fn subscriber(p: &DomainParticipant, plan: &Plan) -> Result<tachyon::Subscriber, Failure> {
    p.create_subscriber_with_qos(plan.subscriber.clone())
        .map_err(Failure::dds)
}
