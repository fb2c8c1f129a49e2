//! RELIABLE + KEEP_ALL between two participants over a lossy, duplicating, reordering network:
//! every sample (fragmented ones included) arrives exactly once, in order, and the writer's
//! cache drains to empty. Also the table of the reliable scenario against loss, as a snapshot.

mod dds;

use dds::*;
use tachyon_proto::{Instant, WriterConfig};
use tachyon_sim::{assert_snapshot, Host, LinkConfig, RunOutcome, Sim, Table};

/// Mixed sizes: mostly small, some just over a datagram, one 256 KiB sample in 500.
fn mixed(i: u64) -> usize {
    match i % 500 {
        499 => 256 * 1024,
        n if n % 50 == 7 => 3000 + (n as usize) * 7,
        n => 16 + (n as usize * 13) % 1200,
    }
}

struct Run {
    delivered: u64,
    disorder: u64,
    corrupt: u64,
    writer_cache: usize,
    done_at: Instant,
    data: u64,
    fragments: u64,
    resent: u64,
    gaps: u64,
    heartbeats: u64,
    acknacks: u64,
    nack_frags: u64,
    bytes: u64,
}

fn run(seed: u64, samples: u64, link: LinkConfig) -> Run {
    let mut sim = Sim::new(seed);
    sim.set_default_link(link);
    let wcfg = WriterConfig {
        nack_suppression: ms(3),
        ..reliable_keep_all_writer(256)
    };
    let rcfg = reliable_keep_all_reader();
    let Linked { wp, w, rp, r } = linked(&wcfg, &rcfg);
    let wn = add_host(&mut sim, 1, wp, Source::new(w, samples, mixed));
    let rn = add_host(&mut sim, 2, rp, Sink::new(r));
    host_mut::<Source>(&mut sim, wn).drive(Instant::ZERO);

    let outcome = sim.run_until_idle(secs(36_000));
    assert_eq!(outcome, RunOutcome::Idle, "the run settles");
    let src: &Host<Source> = host(&sim, wn);
    let sink: &Host<Sink> = host(&sim, rn);
    assert!(src.app.done(), "wrote {} of {samples}", src.app.written);
    let ws = src.participant.writer_stats(w).expect("writer");
    let rs = sink.participant.reader_stats(r).expect("reader");
    let _ = rs;
    Run {
        delivered: sink.app.received,
        disorder: sink.app.disorder,
        corrupt: sink.app.corrupt,
        writer_cache: src.participant.writer_history(w).map_or(0, |h| h.len()),
        done_at: sink.app.last_at,
        data: ws.data_sent,
        fragments: ws.fragments_sent,
        resent: ws.data_resent + ws.fragments_resent,
        gaps: ws.gaps_sent,
        heartbeats: ws.heartbeats_sent,
        acknacks: ws.acknacks_received,
        nack_frags: ws.nack_frags_received,
        bytes: sim.stats().bytes_delivered,
    }
}

fn faulty(loss: f64) -> LinkConfig {
    LinkConfig::ideal(ms(1))
        .jitter(Duration::from_micros(200))
        .loss(loss)
        .duplicate(0.01)
        .reorder(0.02, ms(3))
        .bandwidth(125_000_000)
}

use tachyon_proto::Duration;

fn assert_exactly_once(r: &Run, samples: u64) {
    assert_eq!(r.corrupt, 0);
    assert_eq!(
        r.disorder, 0,
        "duplicates or reordering reached the application"
    );
    assert_eq!(r.delivered, samples, "every sample arrives");
    assert_eq!(r.writer_cache, 0, "the writer's cache drains");
}

#[test]
fn small_stream_without_loss() {
    let r = run(1, 2000, LinkConfig::ideal(ms(1)));
    assert_exactly_once(&r, 2000);
    assert_eq!(r.resent, 0);
}

#[test]
fn small_stream_with_ten_percent_loss() {
    let r = run(2, 2000, faulty(0.10));
    assert_exactly_once(&r, 2000);
    assert!(r.resent > 0);
}

/// The scenario: 100,000 samples of mixed sizes (200 of them 256 KiB, fragmented) at
/// 0, 1, 10 and 30% loss with duplication and reordering; the table is kept as a snapshot.
#[test]
fn hundred_thousand_samples_at_each_loss_rate() {
    let mut t = Table::new([
        "loss",
        "delivered",
        "data",
        "frags",
        "resent",
        "gaps",
        "hb",
        "acknack",
        "nackfrag",
        "time",
        "goodput",
    ]);
    for loss in [0.0, 0.01, 0.10, 0.30] {
        let samples = 100_000;
        let r = run(7, samples, faulty(loss));
        assert_exactly_once(&r, samples);
        let secs = r.done_at.as_nanos() as f64 / 1e9;
        let _ = r.bytes;
        t.row([
            format!("{:.0}%", loss * 100.0),
            r.delivered.to_string(),
            r.data.to_string(),
            r.fragments.to_string(),
            r.resent.to_string(),
            r.gaps.to_string(),
            r.heartbeats.to_string(),
            r.acknacks.to_string(),
            r.nack_frags.to_string(),
            format!("{secs:.3}s"),
            format!("{:.1} MB/s", total_bytes(samples) as f64 / secs / 1e6),
        ]);
    }
    assert_snapshot("tests/snapshots/reliable_endpoints.txt", &t.render());
}

fn total_bytes(samples: u64) -> u64 {
    (0..samples).map(|i| mixed(i) as u64).sum()
}
