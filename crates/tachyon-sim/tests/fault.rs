//! The node wrappers: `FaultInjector` damages datagrams, `Tracer` records them.

mod common;

use common::{host, ms, numbered, seq_of, Pinger, Sink};
use tachyon_proto::{Destination, Duration, Instant};
use tachyon_sim::{FaultInjector, Faults, Node, Record, RunOutcome, Sim, Tracer};

const N: u32 = 4_000;

/// A pinger (host 1, wrapped by `tx` faults) sending `N` datagrams to a sink (host 2, wrapped by
/// `rx` faults) over a perfect network.
fn run(tx: Faults, rx: Faults) -> (FaultInjector<Pinger>, FaultInjector<Sink>) {
    let mut sim = Sim::new(1);
    let pinger = FaultInjector::new(Pinger::to(host(2), N, 64, ms(1)), 10, Faults::default(), tx);
    let a = sim.add_node(pinger, [host(1)]).expect("fresh");
    let b = sim.add_node(
        FaultInjector::new(Sink::default(), 20, rx, Faults::default()),
        [host(2)],
    );
    let b = b.expect("fresh");
    assert_eq!(sim.run_until_idle(Instant::MAX), RunOutcome::Idle);
    assert_eq!(sim.stats().dropped(), 0, "the network itself is perfect");
    let take = |sim: &mut Sim| -> FaultInjector<Pinger> {
        let p = sim
            .node_mut::<FaultInjector<Pinger>>(a)
            .expect("wrapped pinger");
        std::mem::replace(
            p,
            FaultInjector::new(
                Pinger::to(host(2), 0, 0, ms(1)),
                0,
                Faults::default(),
                Faults::default(),
            ),
        )
    };
    let p = take(&mut sim);
    let s = sim
        .node_mut::<FaultInjector<Sink>>(b)
        .expect("wrapped sink");
    let s = std::mem::replace(
        s,
        FaultInjector::new(Sink::default(), 0, Faults::default(), Faults::default()),
    );
    (p, s)
}

fn near(count: u64, p: f64) -> bool {
    (count as f64 / f64::from(N) - p).abs() < 0.03
}

#[test]
fn drops_incoming_and_outgoing() {
    let drop = Faults {
        drop: 0.2,
        ..Faults::default()
    };
    let (p, s) = run(drop, Faults::default());
    assert!(near(p.tx_stats().dropped, 0.2), "{:?}", p.tx_stats());
    assert_eq!(
        s.inner().received.len() as u64,
        u64::from(N) - p.tx_stats().dropped
    );

    let (_, s) = run(Faults::default(), drop);
    assert!(near(s.rx_stats().dropped, 0.2), "{:?}", s.rx_stats());
    assert_eq!(
        s.inner().received.len() as u64,
        u64::from(N) - s.rx_stats().dropped
    );
}

#[test]
fn duplicates_incoming_and_outgoing() {
    let dup = Faults {
        duplicate: 0.1,
        ..Faults::default()
    };
    let (p, s) = run(dup, Faults::default());
    assert!(near(p.tx_stats().duplicated, 0.1));
    assert_eq!(
        s.inner().received.len() as u64,
        u64::from(N) + p.tx_stats().duplicated
    );

    let (_, s) = run(Faults::default(), dup);
    assert!(near(s.rx_stats().duplicated, 0.1));
    let seqs = s.inner().seqs();
    assert_eq!(seqs.len() as u64, u64::from(N) + s.rx_stats().duplicated);
    assert!(
        seqs.windows(2).all(|w| w[1] >= w[0]),
        "a duplicate arrives right after its original"
    );
}

/// Bits that differ between what was sent and what arrived, by datagram.
fn damaged(sink: &Sink) -> Vec<(u32, usize, usize)> {
    sink.received
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let sent = numbered(i as u32, 64);
            let flipped: u32 = r
                .data
                .iter()
                .zip(&sent)
                .map(|(a, b)| (a ^ b).count_ones())
                .sum();
            (r.data != sent).then_some((flipped, r.data.len(), i))
        })
        .collect()
}

#[test]
fn corruption_flips_exactly_one_bit() {
    let corrupt = Faults {
        corrupt: 0.1,
        ..Faults::default()
    };
    for (tx, rx) in [(corrupt, Faults::default()), (Faults::default(), corrupt)] {
        let (p, s) = run(tx, rx);
        let count = p.tx_stats().corrupted + s.rx_stats().corrupted;
        assert!(near(count, 0.1));
        let bad = damaged(s.inner());
        assert_eq!(bad.len() as u64, count);
        assert!(
            bad.iter().all(|&(bits, len, _)| bits == 1 && len == 64),
            "{bad:?}"
        );
    }
}

#[test]
fn truncation_shortens() {
    let truncate = Faults {
        truncate: 0.1,
        ..Faults::default()
    };
    for (tx, rx) in [(truncate, Faults::default()), (Faults::default(), truncate)] {
        let (p, s) = run(tx, rx);
        let count = p.tx_stats().truncated + s.rx_stats().truncated;
        assert!(near(count, 0.1));
        let short: Vec<&[u8]> = s
            .inner()
            .received
            .iter()
            .map(|r| &r.data[..])
            .filter(|d| d.len() < 64)
            .collect();
        assert_eq!(short.len() as u64, count);
        assert!(
            short.iter().any(|d| d.len() < 4),
            "some are too short to carry a number"
        );
        assert!(short
            .iter()
            .all(|d| seq_of(d).is_none() || numbered(seq_of(d).unwrap_or(0), 64).starts_with(d)));
    }
}

#[test]
fn tracer_records_both_directions() {
    let mut sim = Sim::new(1);
    let a = sim
        .add_node(Tracer::new(Pinger::to(host(2), 3, 16, ms(10))), [host(1)])
        .expect("fresh");
    let b = sim
        .add_node(Tracer::new(Sink::default()), [host(2)])
        .expect("fresh");
    assert_eq!(sim.run_until_idle(Instant::MAX), RunOutcome::Idle);
    let out = sim.node::<Tracer<Pinger>>(a).expect("tracer").records();
    let inn = sim.node::<Tracer<Sink>>(b).expect("tracer").records();
    assert_eq!(out.len(), 3);
    assert_eq!(inn.len(), 3);
    assert_eq!(
        out[1],
        Record::Out {
            time: Instant::ZERO + ms(10),
            destination: Destination::Unicast(host(2)),
            data: numbered(1, 16)
        }
    );
    assert_eq!(
        inn[1],
        Record::In {
            time: Instant::ZERO + ms(11),
            source: host(1),
            destination: host(2),
            data: numbered(1, 16)
        }
    );
    let tracer = sim.node_mut::<Tracer<Sink>>(b).expect("tracer");
    assert_eq!(tracer.inner().received.len(), 3);
    assert_eq!(tracer.take_records().len(), 3);
    assert!(tracer.records().is_empty());
}

#[test]
fn wrappers_pass_timers_through() {
    let inner = Pinger::to(host(2), 2, 8, Duration::from_secs(1));
    let wrapped = Tracer::new(FaultInjector::new(
        inner,
        1,
        Faults::default(),
        Faults::default(),
    ));
    assert_eq!(wrapped.poll_timeout(), Some(Instant::ZERO));
    assert_eq!(wrapped.inner().inner().sent(), 0);
}
