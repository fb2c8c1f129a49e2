//! Same seed, same run; different seed, different run; runs end.

mod common;

use common::{at_ms, group, host, ms, GbnReceiver, GbnSender, Pinger, Sink};
use tachyon_proto::{Destination, Instant, Transmit, TxBuf};
use tachyon_sim::{
    trace_digest, LinkConfig, Node, RunOutcome, Sim, SimConfig, TraceEvent, TraceKind,
};
use tachyon_wire::Locator;

/// A busy scenario: lossy, jittery, duplicating, reordering, fragmenting, multicast and a
/// retransmitting transfer, all at once.
fn scenario(seed: u64) -> Vec<TraceEvent> {
    let mut sim = Sim::with_config(SimConfig {
        seed,
        trace: true,
        ..SimConfig::default()
    });
    sim.set_default_link(
        LinkConfig::ideal(ms(2))
            .jitter(ms(1))
            .loss(0.1)
            .duplicate(0.05)
            .reorder(0.1, ms(5))
            .mtu(500)
            .bandwidth(2_000_000),
    );
    sim.add_node(GbnSender::new(host(2), 50, 1200, 4, ms(30)), [host(1)])
        .expect("fresh");
    sim.add_node(GbnReceiver::default(), [host(2)])
        .expect("fresh");
    let mcast = Pinger::new(Destination::Multicast(group(1)), 30, 100, ms(3));
    sim.add_node(mcast, [host(3)]).expect("fresh");
    for n in 4..7 {
        let id = sim.add_node(Sink::default(), [host(n)]).expect("fresh");
        sim.join(id, group(1)).expect("known");
    }
    assert_eq!(sim.run_until_idle(at_ms(60_000)), RunOutcome::Idle);
    sim.take_trace()
}

#[test]
fn same_seed_same_trace() {
    let (a, b) = (scenario(1), scenario(1));
    assert!(a.len() > 500, "the scenario is busy: {} events", a.len());
    assert!(a.iter().any(|e| e.kind == TraceKind::Duplicate));
    assert!(a.iter().any(|e| e.kind == TraceKind::Timeout));
    assert_eq!(a, b);
    assert_eq!(trace_digest(&a), trace_digest(&b));
}

#[test]
fn different_seed_different_trace() {
    let (a, b) = (scenario(1), scenario(2));
    assert_ne!(a, b);
    assert_ne!(trace_digest(&a), trace_digest(&b));
}

#[test]
fn tracing_off_records_nothing() {
    let mut sim = Sim::new(1);
    sim.add_node(Pinger::to(host(2), 3, 8, ms(1)), [host(1)])
        .expect("fresh");
    sim.add_node(Sink::default(), [host(2)]).expect("fresh");
    assert_eq!(sim.run_until_idle(Instant::MAX), RunOutcome::Idle);
    assert!(sim.trace().is_empty());
    sim.set_tracing(true);
    sim.add_node(Pinger::to(host(2), 1, 8, ms(1)), [host(3)])
        .expect("fresh");
    assert_eq!(sim.run_until_idle(Instant::MAX), RunOutcome::Idle);
    let kinds: Vec<TraceKind> = sim.trace().iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        [TraceKind::Timeout, TraceKind::Send, TraceKind::Deliver]
    );
    assert_eq!(
        sim.trace()[0].to_string(),
        "0.003000000s timeout    n2 len=0 #00000000"
    );
}

/// A node with a periodic timer that never stops (a heartbeat).
struct Heartbeat {
    next: Instant,
    beats: u32,
}

impl Node for Heartbeat {
    fn handle_datagram(&mut self, _: Instant, _: &Locator, _: &Locator, _: &[u8]) {}
    fn handle_timeout(&mut self, now: Instant) {
        if now >= self.next {
            self.beats += 1;
            self.next = now + ms(100);
        }
    }
    fn poll_transmit(&mut self, _: Instant, _: &mut TxBuf) -> Option<Transmit> {
        None
    }
    fn poll_timeout(&self) -> Option<Instant> {
        Some(self.next)
    }
}

/// A broken node whose timer is always due and never moves.
struct Livelock;

impl Node for Livelock {
    fn handle_datagram(&mut self, _: Instant, _: &Locator, _: &Locator, _: &[u8]) {}
    fn handle_timeout(&mut self, _: Instant) {}
    fn poll_transmit(&mut self, _: Instant, _: &mut TxBuf) -> Option<Transmit> {
        None
    }
    fn poll_timeout(&self) -> Option<Instant> {
        Some(Instant::ZERO)
    }
}

#[test]
fn run_until_idle_stops_at_the_limit_with_a_periodic_timer() {
    let mut sim = Sim::new(1);
    let h = sim
        .add_node(
            Heartbeat {
                next: Instant::ZERO,
                beats: 0,
            },
            [host(1)],
        )
        .expect("fresh");
    assert_eq!(sim.run_until_idle(at_ms(1_000)), RunOutcome::Idle);
    assert_eq!(
        sim.node::<Heartbeat>(h).expect("heartbeat").beats,
        10,
        "t = 0, 100, …, 900 ms"
    );
    assert_eq!(sim.now(), at_ms(900));
}

#[test]
fn run_until_moves_the_clock_and_step_walks_events() {
    let mut sim = Sim::new(1);
    let h = sim
        .add_node(
            Heartbeat {
                next: Instant::ZERO,
                beats: 0,
            },
            [host(1)],
        )
        .expect("fresh");
    assert_eq!(sim.step(), Some(Instant::ZERO));
    assert_eq!(sim.step(), Some(at_ms(100)));
    assert_eq!(sim.run_until(at_ms(250)), RunOutcome::Deadline);
    assert_eq!(
        (
            sim.now(),
            sim.node::<Heartbeat>(h).expect("heartbeat").beats
        ),
        (at_ms(250), 3)
    );
    assert_eq!(sim.run_for(ms(100)), RunOutcome::Deadline);
    assert_eq!(sim.now(), at_ms(350));

    let mut empty = Sim::new(1);
    assert_eq!(empty.step(), None);
    assert_eq!(empty.run_until(at_ms(5)), RunOutcome::Idle);
    assert_eq!(empty.now(), at_ms(5));
}

#[test]
fn a_livelocked_node_is_reported_not_spun_on_forever() {
    let mut sim = Sim::with_config(SimConfig {
        max_events_per_instant: 1_000,
        ..SimConfig::default()
    });
    sim.add_node(Livelock, [host(1)]).expect("fresh");
    assert_eq!(sim.run_until_idle(at_ms(10)), RunOutcome::Stalled);
    assert_eq!(sim.run_until(at_ms(10)), RunOutcome::Stalled);
}

#[test]
fn datagrams_in_flight_past_the_limit_are_a_deadline() {
    let mut sim = Sim::new(1);
    sim.set_default_link(LinkConfig::ideal(ms(50)));
    sim.add_node(Pinger::to(host(2), 1, 8, ms(1)), [host(1)])
        .expect("fresh");
    sim.add_node(Sink::default(), [host(2)]).expect("fresh");
    assert_eq!(sim.run_until_idle(at_ms(10)), RunOutcome::Deadline);
    assert_eq!(sim.in_flight(), 1);
    assert_eq!(sim.run_until_idle(at_ms(100)), RunOutcome::Idle);
    assert_eq!(sim.in_flight(), 0);
}
