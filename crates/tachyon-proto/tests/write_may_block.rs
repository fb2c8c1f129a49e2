//! `Participant::write_may_block` says which writers can be refused a write for now
//! (`WouldBlock`): the runtime keeps a copy of a write request for a retry only for those.
//! It must never say "no" for a writer that then blocks.

use tachyon_cdr::KeyHash;
use tachyon_proto::history::{
    Durability, History, Payload, ResourceLimits, WriteError, WriterHistoryConfig,
};
use tachyon_proto::{
    Error, Instant, Participant, ParticipantConfig, Reliability, RemoteReader, WriteRequest,
    WriterConfig,
};
use tachyon_wire::{EntityId, Guid, GuidPrefix, Locator, Time};

fn reliable_reader() -> RemoteReader {
    RemoteReader {
        guid: Guid {
            prefix: GuidPrefix([2; 12]),
            entity_id: EntityId([0, 0, 1, 7]),
        },
        unicast_locators: vec![Locator::udp(([127, 0, 0, 1], 7402).into())],
        multicast_locators: vec![],
        reliability: Reliability::Reliable,
        durability: Durability::Volatile,
    }
}

/// A reliable writer with `history`, matched with a reliable reader that never acknowledges.
fn writer(history: WriterHistoryConfig) -> (Participant, EntityId) {
    let mut p = Participant::new(GuidPrefix([1; 12]), ParticipantConfig::default());
    let w = p
        .create_writer(WriterConfig {
            reliability: Reliability::Reliable,
            history,
            ..WriterConfig::default()
        })
        .expect("writer");
    p.match_reader(Instant::ZERO, w, reliable_reader())
        .expect("match");
    (p, w)
}

fn history(history: History, limits: ResourceLimits) -> WriterHistoryConfig {
    WriterHistoryConfig {
        history,
        limits,
        ..WriterHistoryConfig::default()
    }
}

fn sample(instance: u8) -> WriteRequest {
    WriteRequest::data(
        KeyHash([instance; 16]),
        Time::ZERO,
        Payload::copy_from_slice(&[0, 1, 0, 0, 7, 7, 7, 7]),
    )
}

/// Writes up to `n` samples over `instances` instances; the first refusal, if any.
fn write_many(p: &mut Participant, w: EntityId, n: usize, instances: u8) -> Option<usize> {
    (0..n).find(|&i| {
        let r = p.write(Instant::ZERO, w, sample(i as u8 % instances));
        matches!(r, Err(Error::Write(WriteError::WouldBlock { .. })))
    })
}

#[test]
fn a_keep_last_writer_without_limits_is_never_refused() {
    let (mut p, w) = writer(history(History::KeepLast(1), ResourceLimits::default()));
    assert!(!p.write_may_block(w));
    assert_eq!(write_many(&mut p, w, 20_000, 50), None);
}

#[test]
fn a_flow_controlled_writer_may_be() {
    let (mut p, w) = writer(history(History::KeepAll, ResourceLimits::default()));
    assert!(p.write_may_block(w), "reliable KEEP_ALL, volatile");
    assert!(
        write_many(&mut p, w, 1_000_000, 1).is_some(),
        "refused once unacknowledged data fills its window"
    );
}

#[test]
fn a_resource_limit_makes_a_writer_one_that_may_be() {
    let limits = ResourceLimits {
        max_instances: Some(2),
        ..ResourceLimits::default()
    };
    let (mut p, w) = writer(history(History::KeepLast(1), limits));
    assert!(p.write_may_block(w));
    assert_eq!(write_many(&mut p, w, 3, 3), Some(2), "the third instance");
    assert!(
        p.write_may_block(EntityId([9, 9, 9, 2])),
        "an unknown writer may"
    );
}
