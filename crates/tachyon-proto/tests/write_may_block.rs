//! `Participant::write_may_block` says which writers can be refused a write for now
//! (`WouldBlock`): the runtime keeps a copy of a write request for a retry only for those.
//! It must never say "no" for a writer that then blocks.

#[path = "common/one_reader.rs"]
mod one_reader;

use one_reader::writer_with_reader;
use tachyon_cdr::KeyHash;
use tachyon_proto::history::{History, Payload, ResourceLimits, WriteError, WriterHistoryConfig};
use tachyon_proto::{Error, Instant, Participant, Reliability, WriteRequest, WriterConfig};
use tachyon_wire::{EntityId, Time};

/// A reliable writer with `history`, matched with a reliable reader that never acknowledges.
fn writer(history: WriterHistoryConfig) -> (Participant, EntityId) {
    writer_with_reader(WriterConfig {
        reliability: Reliability::Reliable,
        history,
        ..WriterConfig::default()
    })
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
