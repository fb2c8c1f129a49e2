#![allow(dead_code)] // each test uses its part
//! A participant with one reliable reader matched to one remote writer (unicast at
//! 127.0.0.1:7413, of a given vendor and reliability): what the reader tests feed DATA and
//! HEARTBEATs to, and the ACKNACKs it sends.

use tachyon_proto::history::Durability;
use tachyon_proto::{
    Instant, Liveliness, Participant, ParticipantConfig, ReaderConfig, Reliability, RemoteWriter,
    TxBuf,
};
use tachyon_wire::{
    AckNack, Count, EntityId, Guid, GuidPrefix, Header, Locator, MessageBuilder, MessageView,
    ProtocolVersion, SequenceNumber, SubmessageView, VendorId,
};

/// The reader's participant.
pub const READER_PREFIX: GuidPrefix = GuidPrefix([1; 12]);
/// The remote writer.
pub const WRITER_PREFIX: GuidPrefix = GuidPrefix([2; 12]);
pub const WRITER_ID: EntityId = EntityId([0, 0, 1, 2]);

/// Where the remote writer sends from.
pub fn writer_locator() -> Locator {
    Locator::udp(([127, 0, 0, 1], 7413).into())
}

/// The header of a message of the remote writer, of `vendor`.
pub fn writer_header(vendor: VendorId) -> Header {
    Header {
        protocol_version: ProtocolVersion::V2_5,
        vendor_id: vendor,
        guid_prefix: WRITER_PREFIX,
    }
}

/// Adds the remote writer's HEARTBEAT to `reader` (`EntityId::UNKNOWN`: every reader)
/// announcing `first..=last`, Final set (no answer asked for unless something is missing).
pub fn put_heartbeat(
    mb: &mut MessageBuilder<'_>,
    reader: EntityId,
    first: i64,
    last: i64,
    count: i32,
) {
    mb.heartbeat(
        reader,
        WRITER_ID,
        SequenceNumber(first),
        SequenceNumber(last),
        Count(count),
        true,
        false,
    )
    .expect("heartbeat");
}

/// A participant with a reliable reader, matched at time zero to the remote writer of
/// `vendor` offering `reliability`.
pub fn reader_with_writer(vendor: VendorId, reliability: Reliability) -> (Participant, EntityId) {
    let mut p = Participant::new(READER_PREFIX, ParticipantConfig::default());
    let r = p
        .create_reader(ReaderConfig {
            reliability: Reliability::Reliable,
            ..ReaderConfig::default()
        })
        .expect("reader");
    p.match_writer(
        Instant::ZERO,
        r,
        RemoteWriter {
            guid: Guid::new(WRITER_PREFIX, WRITER_ID),
            unicast_locators: vec![writer_locator()],
            reliability,
            durability: Durability::Volatile,
            liveliness: Liveliness::default(),
            ownership_strength: 0,
            lifespan: None,
            group: None,
            vendor,
        },
    )
    .expect("match");
    (p, r)
}

/// The ACKNACKs in everything the participant sends at `now`.
pub fn acknacks_sent(p: &mut Participant, now: Instant) -> Vec<AckNack> {
    let mut buf = TxBuf::new(65_536);
    let mut out = Vec::new();
    while let Some(t) = p.poll_transmit(now, &mut buf) {
        let m = MessageView::new_checked(buf.datagram(&t)).expect("valid message");
        for s in m.submessages() {
            if let Ok(SubmessageView::AckNack(a)) = s {
                out.push(AckNack::parse(&a));
            }
        }
    }
    out
}
