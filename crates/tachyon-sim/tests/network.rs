//! The link model: latency, jitter, loss, duplication, reordering, MTU, bandwidth, queue limit,
//! multicast and routing.

mod common;

use common::{at_ms, group, host, ms, seq_of, Pinger, Sink};
use tachyon_proto::{Destination, Duration, Instant};
use tachyon_sim::{LinkConfig, NodeId, RunOutcome, Sim, SimError};

/// A pinger on host 1 sending to a sink on host 2 over `link`.
fn pair(
    seed: u64,
    link: LinkConfig,
    count: u32,
    size: usize,
    period: Duration,
) -> (Sim, NodeId, NodeId) {
    let mut sim = Sim::new(seed);
    sim.set_default_link(link);
    let a = sim
        .add_node(Pinger::to(host(2), count, size, period), [host(1)])
        .expect("fresh locator");
    let b = sim
        .add_node(Sink::default(), [host(2)])
        .expect("fresh locator");
    (sim, a, b)
}

fn sink(sim: &Sim, id: NodeId) -> &Sink {
    sim.node::<Sink>(id).expect("node is a Sink")
}

fn idle(sim: &mut Sim) {
    assert_eq!(sim.run_until_idle(Instant::MAX), RunOutcome::Idle);
}

#[test]
fn latency_is_exact_and_locators_are_reported() {
    let (mut sim, _, b) = pair(1, LinkConfig::ideal(ms(5)), 3, 32, ms(10));
    idle(&mut sim);
    let got = &sink(&sim, b).received;
    let times: Vec<Instant> = got.iter().map(|r| r.time).collect();
    assert_eq!(times, [at_ms(5), at_ms(15), at_ms(25)]);
    assert_eq!((got[0].source, got[0].destination), (host(1), host(2)));
    assert_eq!(sink(&sim, b).seqs(), [0, 1, 2]);
    assert_eq!(sim.now(), at_ms(25));
}

#[test]
fn jitter_stays_within_bounds() {
    let link = LinkConfig::ideal(ms(5)).jitter(ms(2));
    let (mut sim, _, b) = pair(2, link, 200, 32, ms(10));
    idle(&mut sim);
    let delays: Vec<Duration> = sink(&sim, b)
        .received
        .iter()
        .map(|r| r.time - at_ms(10 * u64::from(seq_of(&r.data).expect("numbered"))))
        .collect();
    assert_eq!(delays.len(), 200);
    assert!(
        delays.iter().all(|d| (ms(5)..=ms(7)).contains(d)),
        "{delays:?}"
    );
    assert!(
        delays.iter().any(|d| *d != delays[0]),
        "jitter must vary the delay"
    );
}

#[test]
fn loss_rate_matches_configuration() {
    let (mut sim, a, b) = pair(3, LinkConfig::default().loss(0.2), 10_000, 16, ms(1));
    idle(&mut sim);
    let s = *sim.stats();
    assert_eq!(s.sent, 10_000);
    assert_eq!(s.delivered + s.lost, s.sent);
    assert_eq!(sink(&sim, b).received.len() as u64, s.delivered);
    let rate = s.lost as f64 / s.sent as f64;
    assert!((rate - 0.2).abs() < 0.015, "loss rate {rate}");
    let link = sim.link_stats(a, b);
    assert_eq!(
        (link.sent, link.delivered, link.lost),
        (s.sent, s.delivered, s.lost)
    );
    assert_eq!(sim.link_stats(b, a).sent, 0);
    assert_eq!(sim.node_stats(a).expect("node").lost, s.lost);
    assert_eq!(sim.node_stats(b).expect("node").delivered, s.delivered);
}

#[test]
fn duplication_rate_matches_configuration() {
    let (mut sim, _, b) = pair(4, LinkConfig::default().duplicate(0.25), 4_000, 16, ms(1));
    idle(&mut sim);
    let s = *sim.stats();
    assert_eq!(s.delivered, s.sent + s.duplicated);
    let rate = s.duplicated as f64 / s.sent as f64;
    assert!((rate - 0.25).abs() < 0.03, "duplication rate {rate}");
    let seqs = sink(&sim, b).seqs();
    let mut unique = seqs.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), 4_000, "every datagram arrives at least once");
    assert_eq!(seqs.len() as u64, s.delivered);
}

#[test]
fn reordering_is_observed_only_when_configured() {
    let (mut sim, _, b) = pair(5, LinkConfig::default(), 500, 16, ms(1));
    idle(&mut sim);
    assert_eq!(sink(&sim, b).inversions(), 0);

    let link = LinkConfig::default().reorder(0.2, ms(20));
    let (mut sim, _, b) = pair(5, link, 500, 16, ms(1));
    idle(&mut sim);
    assert_eq!(
        sink(&sim, b).received.len(),
        500,
        "reordering loses nothing"
    );
    assert!(
        sink(&sim, b).inversions() > 20,
        "inversions: {}",
        sink(&sim, b).inversions()
    );
    assert!(sim.stats().reordered > 50);
}

#[test]
fn a_datagram_above_the_mtu_is_lost_when_any_fragment_is() {
    // 3500 bytes over a 1000-byte MTU: 4 fragments, each lost with p = 0.1.
    let link = LinkConfig::default().mtu(1000).loss(0.1);
    let (mut sim, _, _) = pair(6, link.clone(), 5_000, 3_500, ms(1));
    idle(&mut sim);
    let s = *sim.stats();
    assert_eq!((s.lost, s.delivered + s.lost_fragment), (0, s.sent));
    let rate = s.lost_fragment as f64 / s.sent as f64;
    let expected = 1.0 - 0.9f64.powi(4);
    assert!(
        (rate - expected).abs() < 0.03,
        "fragmented loss rate {rate}, expected {expected}"
    );

    // Exactly one MTU is still one fragment.
    let (mut sim, _, _) = pair(6, link, 5_000, 1_000, ms(1));
    idle(&mut sim);
    let s = *sim.stats();
    assert_eq!(s.lost_fragment, 0);
    let rate = s.lost as f64 / s.sent as f64;
    assert!(
        (rate - 0.1).abs() < 0.02,
        "single-fragment loss rate {rate}"
    );
}

#[test]
fn oversize_datagrams_are_dropped() {
    let (mut sim, _, b) = pair(7, LinkConfig::default().max_datagram(1000), 3, 1001, ms(1));
    idle(&mut sim);
    assert_eq!(sim.stats().oversize, 3);
    assert!(sink(&sim, b).received.is_empty());
    assert_eq!(sim.stats().dropped(), 3);
}

#[test]
fn bandwidth_serializes_datagrams() {
    // 1 MB/s: a 1000-byte datagram takes 1 ms on the wire; ten sent at once arrive 1 ms apart.
    let link = LinkConfig::ideal(ms(1)).bandwidth(1_000_000);
    let (mut sim, _, b) = pair(8, link, 10, 1000, Duration::ZERO);
    idle(&mut sim);
    let times: Vec<Instant> = sink(&sim, b).received.iter().map(|r| r.time).collect();
    let expected: Vec<Instant> = (1..=10).map(|k| at_ms(1 + k)).collect();
    assert_eq!(times, expected);
}

#[test]
fn queue_limit_tail_drops() {
    let link = LinkConfig::ideal(ms(10)).queue_limit(3_000);
    let (mut sim, _, b) = pair(9, link, 10, 1000, Duration::ZERO);
    idle(&mut sim);
    assert_eq!(
        sink(&sim, b).seqs(),
        [0, 1, 2],
        "the first three fit, the tail is dropped"
    );
    assert_eq!(sim.stats().queue_full, 7);

    // Spaced out, nothing is ever queued behind the limit.
    let link = LinkConfig::ideal(ms(10)).queue_limit(3_000);
    let (mut sim, _, b) = pair(9, link, 10, 1000, ms(5));
    idle(&mut sim);
    assert_eq!(sink(&sim, b).received.len(), 10);
}

#[test]
fn slow_reader_link_only_slows_that_reader() {
    let mut sim = Sim::new(10);
    sim.set_default_link(LinkConfig::ideal(ms(1)));
    let w = sim.add_node(
        Pinger::new(Destination::Multicast(group(1)), 20, 1000, Duration::ZERO),
        [host(1)],
    );
    let w = w.expect("fresh");
    let fast = sim.add_node(Sink::default(), [host(2)]).expect("fresh");
    let slow = sim.add_node(Sink::default(), [host(3)]).expect("fresh");
    for n in [fast, slow] {
        sim.join(n, group(1)).expect("known node");
    }
    sim.set_link(w, slow, LinkConfig::ideal(ms(1)).bandwidth(100_000))
        .expect("known nodes");
    idle(&mut sim);
    let last = |id| sink(&sim, id).received.last().expect("received").time;
    assert_eq!(last(fast), at_ms(1));
    assert_eq!(last(slow), at_ms(1 + 200), "20 kB at 100 kB/s");
    assert_eq!(sim.link_config(w, slow).bandwidth, Some(100_000));
    assert_eq!(sim.link_config(slow, w).bandwidth, None);
}

#[test]
fn multicast_reaches_every_member_but_the_sender() {
    let mut sim = Sim::new(11);
    let sender = Pinger::new(Destination::Multicast(group(7)), 5, 16, ms(1));
    let s = sim.add_node(sender, [host(1)]).expect("fresh");
    let members: Vec<NodeId> = (2..=4)
        .map(|n| sim.add_node(Sink::default(), [host(n)]).expect("fresh"))
        .collect();
    let outsider = sim.add_node(Sink::default(), [host(9)]).expect("fresh");
    for &m in members.iter().chain([&s]) {
        sim.join(m, group(7)).expect("known node");
    }
    idle(&mut sim);
    for &m in &members {
        assert_eq!(sink(&sim, m).seqs(), [0, 1, 2, 3, 4]);
        assert!(sink(&sim, m)
            .received
            .iter()
            .all(|r| r.destination == group(7) && r.source == host(1)));
    }
    assert!(sink(&sim, outsider).received.is_empty());
    assert_eq!((sim.stats().transmits, sim.stats().sent), (5, 15));

    sim.leave(members[0], group(7)).expect("known node");
    assert_eq!(
        sim.join(NodeId(99), group(7)),
        Err(SimError::UnknownNode(NodeId(99)))
    );
}

#[test]
fn multicast_copies_are_lost_independently() {
    let mut sim = Sim::new(12);
    sim.set_default_link(LinkConfig::default().loss(0.5));
    let sender = Pinger::new(Destination::Multicast(group(1)), 200, 16, ms(1));
    sim.add_node(sender, [host(1)]).expect("fresh");
    let a = sim.add_node(Sink::default(), [host(2)]).expect("fresh");
    let b = sim.add_node(Sink::default(), [host(3)]).expect("fresh");
    sim.join(a, group(1)).expect("known");
    sim.join(b, group(1)).expect("known");
    idle(&mut sim);
    assert_ne!(sink(&sim, a).seqs(), sink(&sim, b).seqs());
}

#[test]
fn many_destinations_and_unknown_locators() {
    let mut sim = Sim::new(13);
    let to = Destination::Many([host(2), host(3), host(42)].into());
    let p = sim
        .add_node(Pinger::new(to, 2, 16, ms(1)), [host(1)])
        .expect("fresh");
    let a = sim.add_node(Sink::default(), [host(2)]).expect("fresh");
    let b = sim.add_node(Sink::default(), [host(3)]).expect("fresh");
    idle(&mut sim);
    assert_eq!(sink(&sim, a).seqs(), [0, 1]);
    assert_eq!(sink(&sim, b).seqs(), [0, 1]);
    assert_eq!(sim.stats().no_route, 2);
    assert_eq!(sim.node_stats(p).expect("node").no_route, 2);
}

#[test]
fn building_mistakes_are_errors() {
    let mut sim = Sim::new(14);
    sim.add_node(Sink::default(), [host(1)]).expect("fresh");
    assert_eq!(
        sim.add_node(Sink::default(), [host(1)]).err(),
        Some(SimError::LocatorInUse(host(1)))
    );
    assert_eq!(
        sim.add_node(Sink::default(), []).err(),
        Some(SimError::NoLocator)
    );
    let two = sim
        .add_node(Sink::default(), [host(2), host(3)])
        .expect("fresh");
    assert_eq!(sim.locators(two), [host(2), host(3)]);
    assert_eq!(sim.join(two, host(1)), Err(SimError::LocatorInUse(host(1))));
    assert!(sim.node::<Pinger>(two).is_none(), "wrong type");
    assert_eq!(sim.node_count(), 2);
}
