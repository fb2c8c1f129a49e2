//! A toy go-back-N transfer: the simulator supports retransmission-driven protocols, and the
//! table of its results against loss is kept as a snapshot.

mod common;

use common::{host, ms, GbnReceiver, GbnSender};
use tachyon_proto::Instant;
use tachyon_sim::{assert_snapshot, LinkConfig, RunOutcome, Sim, Table};

const PACKETS: u32 = 200;
const SIZE: usize = 1000;

struct Outcome {
    delivered: u32,
    transmissions: u64,
    retransmissions: u64,
    done_at: Instant,
    corrupt: u64,
}

/// Transfers `PACKETS` datagrams over 10 ms, 1 MB/s links with `link` faults in both directions.
fn transfer(seed: u64, link: LinkConfig) -> Outcome {
    let mut sim = Sim::new(seed);
    sim.set_default_link(link.latency(ms(10)).bandwidth(1_000_000));
    let s = sim
        .add_node(GbnSender::new(host(2), PACKETS, SIZE, 8, ms(60)), [host(1)])
        .expect("fresh");
    let r = sim
        .add_node(GbnReceiver::default(), [host(2)])
        .expect("fresh");
    assert_eq!(
        sim.run_until_idle(Instant::ZERO + ms(600_000)),
        RunOutcome::Idle
    );
    let sender = sim.node::<GbnSender>(s).expect("sender");
    let receiver = sim.node::<GbnReceiver>(r).expect("receiver");
    Outcome {
        delivered: receiver.expected,
        transmissions: sender.transmissions,
        retransmissions: sender.retransmissions,
        done_at: sender.done_at.expect("the transfer completes"),
        corrupt: receiver.corrupt,
    }
}

#[test]
fn completes_under_30_percent_loss_with_duplication_and_reordering() {
    let link = LinkConfig::default()
        .loss(0.3)
        .duplicate(0.05)
        .reorder(0.1, ms(15))
        .jitter(ms(2));
    let o = transfer(7, link);
    assert_eq!(o.delivered, PACKETS);
    assert_eq!(o.corrupt, 0);
    assert!(
        o.retransmissions > u64::from(PACKETS) / 2,
        "{} retransmissions",
        o.retransmissions
    );
}

#[test]
fn perfect_link_needs_no_retransmission() {
    let o = transfer(7, LinkConfig::default());
    assert_eq!(
        (o.delivered, o.retransmissions, o.transmissions),
        (PACKETS, 0, u64::from(PACKETS))
    );
    // 200 kB at 1 MB/s is 200 ms of serialization; the window (8 kB per 28 ms round trip)
    // is below the link rate, so the window, not the link, sets the pace.
    assert!(o.done_at > Instant::ZERO + ms(200), "{}", o.done_at);
}

#[test]
fn loss_table_snapshot() {
    let mut table = Table::new([
        "loss",
        "delivered",
        "sent",
        "retransmissions",
        "time",
        "throughput",
    ]);
    for loss in [0.0, 0.01, 0.1, 0.3] {
        let o = transfer(1, LinkConfig::default().loss(loss));
        assert_eq!(o.delivered, PACKETS);
        let secs = o.done_at.as_nanos() as f64 / 1e9;
        let kbps = f64::from(PACKETS) * SIZE as f64 / 1e3 / secs;
        table.row([
            format!("{:.0}%", loss * 100.0),
            o.delivered.to_string(),
            o.transmissions.to_string(),
            o.retransmissions.to_string(),
            format!("{:.3}s", secs),
            format!("{kbps:.1} kB/s"),
        ]);
    }
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/snapshots/reliable_loss.txt"
    );
    assert_snapshot(path, &table.render());
}
