//! Discovery in the simulator: SPDP finds participants over a multicast group, SEDP matches
//! writers and readers by topic, type, partition and QoS, leases expire, deletions are
//! announced, and a flood of fake participants is bounded.

mod dds;

use dds::*;
use tachyon_proto::discovery::{
    DiscoveryConfig, ParticipantData, ParticipantLostReason, PublicationData, SubscriptionData,
};
use tachyon_proto::qos::{DataReaderQos, DataWriterQos, DurabilityKind, QosPolicyId};
use tachyon_proto::{
    Duration, Event, Instant, Participant, ParticipantConfig, Reliability, Transmit, TxBuf,
};
use tachyon_sim::{udp4, App, Host, LinkConfig, Node, NodeId, Sim};
use tachyon_wire::{
    DataSpec, EntityId, Guid, GuidPrefix, Header, InlineQos, Locator, MessageBuilder, PayloadKind,
    ProtocolVersion, SequenceNumber, VendorId,
};

/// Runs the simulation for `d` (idle or not).
fn run(sim: &mut Sim, d: Duration) {
    let _ = sim.run_for(d);
}

/// The SPDP multicast group and port of domain 0.
fn spdp_group() -> Locator {
    udp4([239, 255, 0, 1], 7400)
}

fn prefix(n: u8) -> GuidPrefix {
    let mut p = [0u8; 12];
    p[0] = 0x01;
    p[1] = 0xf0;
    p[11] = n;
    GuidPrefix(p)
}

fn config(n: u8) -> DiscoveryConfig {
    DiscoveryConfig {
        spdp_destinations: vec![spdp_group()],
        metatraffic_unicast: vec![locator(n)],
        default_unicast: vec![locator(n)],
        ..DiscoveryConfig::default()
    }
}

fn discovering(n: u8) -> Participant {
    Participant::with_discovery(prefix(n), ParticipantConfig::default(), config(n))
}

/// Adds host `n` to the simulator and to the SPDP group.
fn add<A: App>(sim: &mut Sim, n: u8, p: Participant, app: A) -> NodeId {
    let id = add_host(sim, n, p, app);
    sim.join(id, spdp_group()).expect("group");
    id
}

fn publication(topic: &str, qos: DataWriterQos) -> PublicationData {
    let mut p = PublicationData::new(Guid::UNKNOWN, topic, "Payload");
    p.qos = qos.into();
    p
}

fn subscription(topic: &str, qos: DataReaderQos) -> SubscriptionData {
    let mut s = SubscriptionData::new(Guid::UNKNOWN, topic, "Payload");
    s.qos = qos.into();
    s
}

/// A writer on `n` announced on `topic` with `qos`, writing `total` samples.
fn source(n: u8, topic: &str, qos: DataWriterQos, total: u64) -> (Participant, Source) {
    let mut p = discovering(n);
    let cfg = tachyon_proto::WriterConfig {
        reliability: qos.reliability.kind,
        history: tachyon_proto::history::WriterHistoryConfig {
            history: qos.history,
            limits: qos.resource_limits,
            durability: if qos.durability >= DurabilityKind::TransientLocal {
                tachyon_proto::history::Durability::TransientLocal
            } else {
                tachyon_proto::history::Durability::Volatile
            },
        },
        ..tachyon_proto::WriterConfig::default()
    };
    let w = p.create_writer(cfg).expect("writer");
    p.announce_writer(Instant::ZERO, w, publication(topic, qos))
        .expect("announce");
    let mut src = Source::new(w, total, |_| 64);
    // A volatile writer's samples reach only readers matched when they are written: start
    // writing once discovery is done.
    src.next_at = Instant::ZERO + ms(500);
    (p, src)
}

/// A reader on `n` announced on `topic` with `qos`.
fn sink(n: u8, topic: &str, qos: DataReaderQos) -> (Participant, Sink) {
    let mut p = discovering(n);
    let cfg = tachyon_proto::ReaderConfig {
        reliability: qos.reliability.kind,
        durability: if qos.durability >= DurabilityKind::TransientLocal {
            tachyon_proto::history::Durability::TransientLocal
        } else {
            tachyon_proto::history::Durability::Volatile
        },
        history: tachyon_proto::history::ReaderHistoryConfig {
            history: qos.history,
            ..Default::default()
        },
        ..tachyon_proto::ReaderConfig::default()
    };
    let r = p.create_reader(cfg.clone()).expect("reader");
    p.announce_reader(Instant::ZERO, r, subscription(topic, qos))
        .expect("announce");
    (p, Sink::new(r))
}

fn reliable_writer() -> DataWriterQos {
    DataWriterQos::default().reliable().keep_all()
}

fn reliable_reader() -> DataReaderQos {
    DataReaderQos::default().reliable().keep_all()
}

#[test]
fn participants_discover_each_other_and_match_endpoints() {
    let mut sim = Sim::new(1);
    sim.set_default_link(LinkConfig::ideal(ms(1)));
    let (wp, src) = source(1, "Square", reliable_writer(), 100);
    let (rp, snk) = sink(2, "Square", reliable_reader());
    let (other, _) = sink(3, "Circle", reliable_reader());
    let w = add(&mut sim, 1, wp, src);
    let r = add(&mut sim, 2, rp, snk);
    let o = add(&mut sim, 3, other, Sink::default());
    run(&mut sim, Duration::from_secs(2));

    for (id, n) in [(w, 1), (r, 2)] {
        let p = match n {
            1 => &host::<Source>(&sim, id).participant,
            _ => &host::<Sink>(&sim, id).participant,
        };
        assert_eq!(
            p.discovered_participants().count(),
            2,
            "host {n} sees both others"
        );
    }
    let sink = &host::<Sink>(&sim, r).app;
    assert_eq!(
        sink.matched, 1,
        "the Square reader matched the Square writer"
    );
    assert_eq!(sink.received, 100, "every sample arrived");
    assert_eq!(sink.disorder, 0);
    assert_eq!(
        host::<Sink>(&sim, o).app.matched,
        0,
        "Circle matches nothing"
    );
    let src = &host::<Source>(&sim, w);
    assert_eq!(src.participant.discovered_subscriptions().count(), 2);
    assert!(src.app.events.iter().any(|e| matches!(
        e,
        Event::PublicationMatched {
            current_count: 1,
            ..
        }
    )));
}

#[test]
fn discovery_time_is_a_few_round_trips() {
    let mut sim = Sim::new(2);
    sim.set_default_link(LinkConfig::ideal(ms(1)));
    let (wp, src) = source(1, "T", reliable_writer(), 0);
    let (rp, snk) = sink(2, "T", reliable_reader());
    add(&mut sim, 1, wp, src);
    let r = add(&mut sim, 2, rp, snk);
    let mut matched_at = None;
    while sim.now() < Instant::ZERO + Duration::from_secs(1) {
        if sim.step().is_none() {
            break;
        }
        if matched_at.is_none() && host::<Sink>(&sim, r).app.matched == 1 {
            matched_at = Some(sim.now());
        }
    }
    let at = matched_at.expect("matched within a second");
    // SPDP both ways, then SEDP data + heartbeat/acknack: a handful of 1 ms hops.
    assert!(at <= Instant::ZERO + ms(20), "matched at {at:?}");
}

#[test]
fn incompatible_qos_is_reported_on_both_sides_naming_the_policy() {
    let mut sim = Sim::new(3);
    sim.set_default_link(LinkConfig::ideal(ms(1)));
    let (wp, src) = source(1, "T", DataWriterQos::default().best_effort(), 0);
    let (rp, snk) = sink(
        2,
        "T",
        DataReaderQos::default()
            .reliable()
            .durability(DurabilityKind::TransientLocal),
    );
    let w = add(&mut sim, 1, wp, src);
    let r = add(&mut sim, 2, rp, snk);
    run(&mut sim, Duration::from_secs(1));
    let offered = host::<Source>(&sim, w)
        .app
        .events
        .iter()
        .find_map(|e| match e {
            Event::OfferedIncompatibleQos { policies, .. } => Some(policies.clone()),
            _ => None,
        })
        .expect("writer told");
    assert_eq!(
        offered,
        vec![QosPolicyId::Durability, QosPolicyId::Reliability]
    );
    let requested = host::<Sink>(&sim, r)
        .app
        .events
        .iter()
        .find_map(|e| match e {
            Event::RequestedIncompatibleQos { policies, .. } => Some(policies.clone()),
            _ => None,
        })
        .expect("reader told");
    assert_eq!(requested, offered);
    assert_eq!(host::<Sink>(&sim, r).app.matched, 0);
}

#[test]
fn transient_local_late_joiner_gets_history() {
    let mut sim = Sim::new(4);
    sim.set_default_link(LinkConfig::ideal(ms(1)));
    let qos = DataWriterQos::default()
        .reliable()
        .keep_last(10)
        .transient_local();
    let (wp, src) = source(1, "T", qos, 10);
    add(&mut sim, 1, wp, src);
    run(&mut sim, Duration::from_secs(1));
    let (rp, snk) = sink(
        2,
        "T",
        DataReaderQos::default()
            .reliable()
            .keep_all()
            .transient_local(),
    );
    let r = add(&mut sim, 2, rp, snk);
    run(&mut sim, Duration::from_secs(1));
    assert_eq!(host::<Sink>(&sim, r).app.received, 10);
}

#[test]
fn lease_expiry_removes_a_silent_participant_and_its_writers() {
    let mut sim = Sim::new(5);
    sim.set_default_link(LinkConfig::ideal(ms(1)));
    let qos = reliable_writer().liveliness(
        tachyon_proto::LivelinessKind::Automatic,
        Some(Duration::from_secs(2)),
    );
    let (wp, src) = source(1, "T", qos, 0);
    let (rp, snk) = sink(2, "T", reliable_reader());
    let w = add(&mut sim, 1, wp, src);
    let r = add(&mut sim, 2, rp, snk);
    run(&mut sim, Duration::from_secs(5));
    assert_eq!(
        host::<Sink>(&sim, r).app.matched,
        1,
        "alive while announcing"
    );
    // The writer's host goes silent (a killed process): nothing it sends arrives.
    sim.set_link(w, r, LinkConfig::ideal(ms(1)).loss(1.0))
        .expect("link");
    let cut = sim.now();
    run(&mut sim, Duration::from_secs(12));
    let p = &host::<Sink>(&sim, r);
    assert_eq!(p.participant.discovered_participants().count(), 0);
    assert_eq!(p.app.matched, 0, "the writer was unmatched");
    let lost = p.app.events.iter().any(|e| {
        matches!(
            e,
            Event::ParticipantLost {
                reason: ParticipantLostReason::LeaseExpired,
                ..
            }
        )
    });
    assert!(lost, "participant lost by lease expiry");
    let liveliness_lost = p
        .app
        .events
        .iter()
        .any(|e| matches!(e, Event::LivelinessChanged { alive: false, .. }));
    assert!(liveliness_lost, "the writer's liveliness was lost first");
    let _ = cut;
}

#[test]
fn deleted_participant_is_removed_at_once() {
    let mut sim = Sim::new(6);
    sim.set_default_link(LinkConfig::ideal(ms(1)));
    let (wp, src) = source(1, "T", reliable_writer(), 0);
    let (rp, snk) = sink(2, "T", reliable_reader());
    let w = add(&mut sim, 1, wp, src);
    let r = add(&mut sim, 2, rp, snk);
    run(&mut sim, Duration::from_secs(1));
    assert_eq!(host::<Sink>(&sim, r).app.matched, 1);
    let now = sim.now();
    host_mut::<Source>(&mut sim, w).participant.shutdown(now);
    run(&mut sim, ms(100));
    let p = &host::<Sink>(&sim, r);
    assert_eq!(p.app.matched, 0);
    assert!(p.app.events.iter().any(|e| matches!(
        e,
        Event::ParticipantLost {
            reason: ParticipantLostReason::Deleted,
            ..
        }
    )));
}

#[test]
fn deleting_a_writer_unmatches_it_remotely() {
    let mut sim = Sim::new(7);
    sim.set_default_link(LinkConfig::ideal(ms(1)));
    let (wp, src) = source(1, "T", reliable_writer(), 0);
    let writer = src.writer;
    let (rp, snk) = sink(2, "T", reliable_reader());
    let w = add(&mut sim, 1, wp, src);
    let r = add(&mut sim, 2, rp, snk);
    run(&mut sim, Duration::from_secs(1));
    assert_eq!(host::<Sink>(&sim, r).app.matched, 1);
    let now = sim.now();
    host_mut::<Source>(&mut sim, w)
        .participant
        .delete_writer(now, writer)
        .expect("delete");
    run(&mut sim, ms(200));
    let p = &host::<Sink>(&sim, r);
    assert_eq!(p.app.matched, 0);
    assert_eq!(p.participant.discovered_publications().count(), 0);
    assert_eq!(p.participant.discovered_participants().count(), 1);
}

#[test]
fn partitions_decide_matching_with_wildcards() {
    let mut sim = Sim::new(8);
    sim.set_default_link(LinkConfig::ideal(ms(1)));
    let mut wp = discovering(1);
    let cfg = tachyon_proto::WriterConfig::default();
    let w = wp.create_writer(cfg).expect("writer");
    let mut pubd = publication("T", reliable_writer());
    pubd.partition = vec!["sensors/left".into()];
    wp.announce_writer(Instant::ZERO, w, pubd)
        .expect("announce");
    let mut readers = Vec::new();
    for (n, part) in [(2u8, "sensors/*"), (3, "actuators"), (4, "sensors/l?ft")] {
        let mut rp = discovering(n);
        let r = rp
            .create_reader(tachyon_proto::ReaderConfig::default())
            .expect("reader");
        let mut s = subscription("T", DataReaderQos::default());
        s.partition = vec![part.into()];
        rp.announce_reader(Instant::ZERO, r, s).expect("announce");
        readers.push(add(&mut sim, n, rp, Sink::new(r)));
    }
    add(&mut sim, 1, wp, Source::new(w, 0, |_| 64));
    run(&mut sim, Duration::from_secs(1));
    let matched: Vec<usize> = readers
        .iter()
        .map(|&id| host::<Sink>(&sim, id).app.matched)
        .collect();
    assert_eq!(matched, vec![1, 0, 1]);
}

#[test]
fn a_writer_and_a_reader_of_one_participant_match_each_other() {
    let mut sim = Sim::new(9);
    sim.set_default_link(LinkConfig::ideal(ms(1)));
    let (mut p, src) = source(1, "T", reliable_writer(), 20);
    let r = p
        .create_reader(tachyon_proto::ReaderConfig {
            reliability: Reliability::Reliable,
            ..Default::default()
        })
        .expect("reader");
    p.announce_reader(Instant::ZERO, r, subscription("T", reliable_reader()))
        .expect("announce");
    // Loopback: the host's own locator delivers to itself.
    assert_eq!(p.matched_writers(r).len(), 1);
    assert_eq!(p.matched_readers(src.writer).len(), 1);
}

/// Sends `count` SPDP announcements of distinct fake participants, `per_tick` every ms.
struct Flood {
    next: u32,
    count: u32,
    at: Instant,
}

impl Node for Flood {
    fn handle_datagram(&mut self, _: Instant, _: &Locator, _: &Locator, _: &[u8]) {}
    fn handle_timeout(&mut self, now: Instant) {
        self.at = now;
    }
    fn poll_transmit(&mut self, now: Instant, buf: &mut TxBuf) -> Option<Transmit> {
        if self.next >= self.count || now < self.at {
            return None;
        }
        let mut pfx = [0xee; 12];
        pfx[8..].copy_from_slice(&self.next.to_be_bytes());
        self.next += 1;
        if self.next % 100 == 0 {
            self.at = now + ms(1);
        }
        let mut data = ParticipantData::new(GuidPrefix(pfx), VendorId([0x01, 0x99]));
        data.domain_id = Some(0);
        data.metatraffic_unicast = vec![udp4([10, 0, 0, 99], 7411)];
        data.builtin_endpoints = u32::MAX;
        let payload = data.to_payload();
        let header = Header {
            protocol_version: ProtocolVersion::V2_5,
            vendor_id: VendorId([0x01, 0x99]),
            guid_prefix: GuidPrefix(pfx),
        };
        let mut mb = MessageBuilder::new(buf.as_mut_slice(), &header).ok()?;
        let qos = InlineQos::new(None, None);
        mb.data(&DataSpec {
            reader_id: EntityId::SPDP_READER,
            writer_id: EntityId::SPDP_WRITER,
            writer_sn: SequenceNumber(1),
            inline_qos: Some(qos.as_bytes()),
            kind: PayloadKind::Data,
            payload: &payload,
        })
        .ok()?;
        Some(Transmit {
            destination: tachyon_proto::Destination::Multicast(spdp_group()),
            len: mb.finish(),
            priority: 0,
        })
    }
    fn poll_timeout(&self) -> Option<Instant> {
        (self.next < self.count).then_some(self.at)
    }
}

#[test]
fn a_flood_of_fake_participants_is_bounded_and_real_traffic_flows() {
    let mut sim = Sim::new(10);
    sim.set_default_link(LinkConfig::ideal(ms(1)));
    let limit = 200;
    let (mut rp, snk) = sink(2, "T", reliable_reader());
    if let Some(c) = rp.discovery_config_mut() {
        c.max_participants = limit;
    }
    let r = add(&mut sim, 2, rp, snk);
    let f = sim
        .add_node(
            Flood {
                next: 0,
                count: 10_000,
                at: Instant::ZERO,
            },
            [udp4([10, 0, 0, 99], 7411)],
        )
        .expect("flood node");
    let _ = f;
    let (wp, src) = source(1, "T", reliable_writer(), 500);
    add(&mut sim, 1, wp, src);
    run(&mut sim, Duration::from_secs(3));
    let p = &host::<Sink>(&sim, r);
    let stats = p.participant.discovery_stats();
    assert_eq!(p.participant.discovered_participants().count(), limit);
    assert!(
        stats.participants_refused >= 10_000 - limit as u64,
        "{stats:?}"
    );
    // The genuine writer was discovered before the table filled, or retried after: its
    // participant keeps announcing; here it came first.
    assert_eq!(p.app.received, 500, "real traffic kept flowing");
}

#[allow(dead_code)]
fn unused(_: Host<Idle>) {}
use tachyon_sim::Idle;

#[test]
fn a_reannounced_endpoint_is_rematched_on_both_sides() {
    let mut sim = Sim::new(11);
    sim.set_default_link(LinkConfig::ideal(ms(1)));
    let offered = |d| reliable_writer().deadline(ms(d));
    let (wp, src) = source(1, "T", offered(50), 0);
    let writer = src.writer;
    let (rp, snk) = sink(2, "T", reliable_reader().deadline(ms(100)));
    let reader = snk.reader;
    let w = add(&mut sim, 1, wp, src);
    let r = add(&mut sim, 2, rp, snk);
    run(&mut sim, Duration::from_secs(1));
    assert_eq!(host::<Sink>(&sim, r).app.matched, 1);
    assert_eq!(
        host::<Source>(&sim, w)
            .participant
            .matched_readers(writer)
            .len(),
        1
    );
    let incompatible = |sim: &Sim| {
        let offered = host::<Source>(sim, w)
            .app
            .events
            .iter()
            .filter(|e| matches!(e, Event::OfferedIncompatibleQos { policies, .. } if policies == &[QosPolicyId::Deadline]))
            .count();
        let requested = host::<Sink>(sim, r)
            .app
            .events
            .iter()
            .filter(|e| matches!(e, Event::RequestedIncompatibleQos { policies, .. } if policies == &[QosPolicyId::Deadline]))
            .count();
        (offered, requested)
    };
    assert_eq!(incompatible(&sim), (0, 0));

    // The writer offers a deadline looser than requested: both sides unmatch and say why.
    let now = sim.now();
    host_mut::<Source>(&mut sim, w)
        .participant
        .announce_writer(now, writer, publication("T", offered(200)))
        .expect("re-announce");
    run(&mut sim, ms(200));
    assert_eq!(host::<Sink>(&sim, r).app.matched, 0);
    assert_eq!(
        host::<Source>(&sim, w)
            .participant
            .matched_readers(writer)
            .len(),
        0
    );
    assert_eq!(incompatible(&sim), (1, 1));
    let seen = host::<Sink>(&sim, r)
        .participant
        .discovered_publications()
        .map(|p| p.qos.deadline)
        .collect::<Vec<_>>();
    assert_eq!(seen, vec![Some(ms(200))]);

    // Tightened again: matched again.
    let now = sim.now();
    host_mut::<Source>(&mut sim, w)
        .participant
        .announce_writer(now, writer, publication("T", offered(100)))
        .expect("re-announce");
    run(&mut sim, ms(200));
    assert_eq!(host::<Sink>(&sim, r).app.matched, 1);
    assert_eq!(
        host::<Source>(&sim, w)
            .participant
            .matched_readers(writer)
            .len(),
        1
    );

    // The reader moves to another partition: unrelated, unmatched without a QoS complaint.
    let now = sim.now();
    let mut s = subscription("T", reliable_reader().deadline(ms(100)));
    s.partition = vec!["elsewhere".into()];
    host_mut::<Sink>(&mut sim, r)
        .participant
        .announce_reader(now, reader, s)
        .expect("re-announce");
    run(&mut sim, ms(200));
    assert_eq!(host::<Sink>(&sim, r).app.matched, 0);
    assert_eq!(
        host::<Source>(&sim, w)
            .participant
            .matched_readers(writer)
            .len(),
        0
    );
    assert_eq!(incompatible(&sim), (1, 1));
}
