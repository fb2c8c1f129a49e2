#![allow(dead_code)] // each test uses its part
//! A participant with one writer matched to one reliable remote reader (unicast at
//! 127.0.0.1:7413): what the writer tests feed ACKNACKs and NACK_FRAGs to.

use tachyon_proto::history::Durability;
use tachyon_proto::{
    Instant, Participant, ParticipantConfig, Reliability, RemoteReader, WriterConfig,
};
use tachyon_wire::{EntityId, Guid, GuidPrefix, Locator};

/// The writer's participant.
pub const WRITER_PREFIX: GuidPrefix = GuidPrefix([1; 12]);
/// The remote reader.
pub const READER_PREFIX: GuidPrefix = GuidPrefix([2; 12]);
pub const READER_ID: EntityId = EntityId([0, 0, 1, 7]);

/// Where the remote reader listens (and what its datagrams come from).
pub fn reader_locator() -> Locator {
    Locator::udp(([127, 0, 0, 1], 7413).into())
}

/// A participant with a writer of `config`, matched at time zero to the reliable, volatile
/// remote reader.
pub fn writer_with_reader(config: WriterConfig) -> (Participant, EntityId) {
    let mut p = Participant::new(WRITER_PREFIX, ParticipantConfig::default());
    let w = p.create_writer(config).expect("writer");
    p.match_reader(
        Instant::ZERO,
        w,
        RemoteReader {
            guid: Guid::new(READER_PREFIX, READER_ID),
            unicast_locators: vec![reader_locator()],
            multicast_locators: vec![],
            reliability: Reliability::Reliable,
            durability: Durability::Volatile,
        },
    )
    .expect("match");
    (p, w)
}
