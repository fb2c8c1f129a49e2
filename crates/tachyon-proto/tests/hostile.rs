//! Hostile input at the protocol level: what a flood can make a participant hold stays within
//! its limits, and what it refuses is counted.

use tachyon_proto::discovery::{DiscoveryConfig, ParticipantData};
use tachyon_proto::endpoint::{Liveliness, Reliability, RemoteWriter};
use tachyon_proto::history::Durability;
use tachyon_proto::{Duration, Instant, Participant, ParticipantConfig, ReaderConfig};
use tachyon_wire::{
    DataSpec, EntityId, Guid, GuidPrefix, Header, InlineQos, Locator, MessageBuilder, PayloadKind,
    ProtocolVersion, SequenceNumber, VendorId,
};

fn header(prefix: GuidPrefix) -> Header {
    Header {
        protocol_version: ProtocolVersion::V2_5,
        vendor_id: VendorId::TACHYON,
        guid_prefix: prefix,
    }
}

fn data(
    prefix: GuidPrefix,
    writer: EntityId,
    reader: EntityId,
    sn: i64,
    payload: &[u8],
) -> Vec<u8> {
    let mut buf = vec![0u8; 65_000];
    let qos = InlineQos::new(Some([7; 16]), None);
    let mut mb = MessageBuilder::new(&mut buf, &header(prefix)).expect("header fits");
    mb.data(&DataSpec {
        reader_id: reader,
        writer_id: writer,
        writer_sn: SequenceNumber(sn),
        inline_qos: Some(qos.as_bytes()),
        kind: PayloadKind::Data,
        payload,
    })
    .expect("DATA fits");
    let n = mb.finish();
    buf.truncate(n);
    buf
}

fn udp(port: u16) -> Locator {
    Locator::udp(std::net::SocketAddr::from(([127, 0, 0, 1], port)))
}

fn source() -> Locator {
    udp(7411)
}

/// A writer sending everything but its first sample (or a spoofer using its GUID): the
/// out-of-order samples held are bounded in bytes, the rest dropped and counted, and once the
/// hole is filled the writer's repairs deliver everything.
#[test]
fn out_of_order_samples_are_bounded_in_bytes() {
    let mut p = Participant::new(GuidPrefix([1; 12]), ParticipantConfig::default());
    let limit = 64 * 1024;
    let reader = p
        .create_reader(ReaderConfig {
            reliability: Reliability::Reliable,
            keyed: true,
            max_pending_bytes: limit,
            ..ReaderConfig::default()
        })
        .expect("reader");
    let wprefix = GuidPrefix([2; 12]);
    let wid = EntityId::new([0, 0, 1], tachyon_wire::EntityKind::USER_WRITER_WITH_KEY);
    let now = Instant::ZERO;
    p.match_writer(
        now,
        reader,
        RemoteWriter {
            guid: Guid::new(wprefix, wid),
            unicast_locators: vec![source()],
            reliability: Reliability::Reliable,
            durability: Durability::Volatile,
            liveliness: Liveliness::default(),
            ownership_strength: 0,
            lifespan: None,
            group: None,
            vendor: tachyon_wire::VendorId::UNKNOWN,
        },
    )
    .expect("match");
    let payload = {
        let mut v = vec![0u8; 8 * 1024];
        v[..4].copy_from_slice(&[0, 1, 0, 0]);
        v
    };
    // sn 1 is missing: 2..=100 wait, 8 KiB each, 800 KiB in all.
    for sn in 2..=100 {
        p.handle_datagram(
            now,
            &source(),
            &data(wprefix, wid, EntityId::UNKNOWN, sn, &payload),
        );
        let s = p.readers_summary();
        assert!(
            s.pending_bytes <= limit,
            "{} bytes pending",
            s.pending_bytes
        );
    }
    let s = p.readers_summary();
    assert_eq!(s.pending_samples, 8);
    assert_eq!(s.stats.pending_overflow, 91);
    // The hole is filled, the writer repairs the rest: everything arrives, once, in order.
    for sn in 1..=100 {
        p.handle_datagram(
            now,
            &source(),
            &data(wprefix, wid, EntityId::UNKNOWN, sn, &payload),
        );
    }
    let s = p.readers_summary();
    assert_eq!(s.pending_samples, 0);
    assert_eq!(s.pending_bytes, 0);
    assert_eq!(p.reader_stats(reader).expect("reader").delivered, 100);
}

fn spdp(prefix: GuidPrefix, locators: u16) -> Vec<u8> {
    let mut d = ParticipantData::new(prefix, VendorId::TACHYON);
    d.domain_id = Some(0);
    d.lease_duration = Some(Duration::from_secs(100));
    d.metatraffic_unicast = (0..locators).map(|i| udp(10_000 + i)).collect();
    data(
        prefix,
        EntityId::SPDP_WRITER,
        EntityId::SPDP_READER,
        1,
        &d.to_payload(),
    )
}

/// A flood of announcements from distinct participants: the table stops at `max_participants`,
/// the rest is counted, the participant known first stays, and a participant announcing
/// hundreds of locators is sent to at most a few of them.
#[test]
fn participant_flood_stops_at_the_limit() {
    let config = DiscoveryConfig {
        max_participants: 8,
        ..DiscoveryConfig::default()
    };
    let mut p =
        Participant::with_discovery(GuidPrefix([1; 12]), ParticipantConfig::default(), config);
    let real = GuidPrefix([9; 12]);
    let now = Instant::ZERO;
    p.handle_datagram(now, &source(), &spdp(real, 500));
    for i in 0..10_000u32 {
        let mut prefix = [0xee; 12];
        prefix[..4].copy_from_slice(&i.to_be_bytes());
        let locators = if i < 8 { 500 } else { 1 };
        p.handle_datagram(now, &source(), &spdp(GuidPrefix(prefix), locators));
    }
    assert_eq!(p.discovered_participants().count(), 8);
    assert!(p.discovered_participant(&real).is_some());
    let stats = p.discovery_stats();
    assert_eq!(stats.participants_refused, 10_000 - 7);
    // Each known participant gets a directed announcement: to at most a few of its 500
    // locators, not to all of them.
    let mut buf = tachyon_proto::TxBuf::new(tachyon_proto::DEFAULT_MAX_DATAGRAM);
    let mut most = 0;
    while let Some(t) = p.poll_transmit(now, &mut buf) {
        let n = match t.destination {
            tachyon_proto::Destination::Many(v) => v.len(),
            _ => 1,
        };
        most = most.max(n);
    }
    assert!(most <= 16, "{most} destinations in one transmit");
}

/// Fragments of a sample that never completes, from a matched (or spoofed) writer: held within
/// the reassembly budget, then dropped when the reader's own timer says they are too old, with
/// no other traffic or timer needed.
#[test]
fn a_never_completing_sample_expires_on_the_readers_timer() {
    let mut p = Participant::new(GuidPrefix([1; 12]), ParticipantConfig::default());
    let reader = p
        .create_reader(ReaderConfig {
            reliability: Reliability::BestEffort,
            reassembly_timeout: Duration::from_secs(2),
            ..ReaderConfig::default()
        })
        .expect("reader");
    let wprefix = GuidPrefix([2; 12]);
    let wid = EntityId::new([0, 0, 1], tachyon_wire::EntityKind::USER_WRITER_NO_KEY);
    let now = Instant::ZERO;
    p.match_writer(
        now,
        reader,
        RemoteWriter {
            guid: Guid::new(wprefix, wid),
            unicast_locators: vec![source()],
            reliability: Reliability::BestEffort,
            durability: Durability::Volatile,
            liveliness: Liveliness::default(),
            ownership_strength: 0,
            lifespan: None,
            group: None,
            vendor: tachyon_wire::VendorId::UNKNOWN,
        },
    )
    .expect("match");
    let fragment = vec![7u8; 1024];
    for n in 1..100u32 {
        let mut buf = vec![0u8; 4096];
        let mut mb = MessageBuilder::new(&mut buf, &header(wprefix)).expect("header");
        mb.data_frag(&tachyon_wire::DataFragSpec {
            reader_id: EntityId::UNKNOWN,
            writer_id: wid,
            writer_sn: SequenceNumber(1),
            fragment_starting_num: n,
            fragment_size: 1024,
            sample_size: 4 * 1024 * 1024,
            inline_qos: None,
            key: false,
            fragments: &fragment,
        })
        .expect("DATA_FRAG");
        let len = mb.finish();
        p.handle_datagram(now, &source(), &buf[..len]);
    }
    let s = p.readers_summary();
    assert_eq!(s.reassembly_in_progress, 1);
    assert!(s.reassembly_bytes > 0);
    let due = p
        .poll_timeout()
        .expect("the partial sample's expiry is a timer");
    assert!(
        due > Instant::ZERO
            .checked_add(Duration::from_secs(2))
            .expect("time")
    );
    p.handle_timeout(due);
    let s = p.readers_summary();
    assert_eq!(s.reassembly_in_progress, 0);
    assert_eq!(s.reassembly_bytes, 0);
    assert_eq!(s.reassembly.abandoned, 1);
    assert_eq!(p.poll_timeout(), None);
}
