//! One 4 MiB sample (3121 fragments) through a lossy 1 Gbit/s link: the reader asks for each
//! lost fragment about once, and the sample arrives within a small multiple of the lossless
//! time. Before the reader held back fragments whose repairs were on their way
//! (`reader/frag_asks.rs`), every HEARTBEAT_FRAG asked for them again: at 10 % loss the writer
//! resent 2.8–3.3 times the sample and the sample took 3.7–4.3 times the lossless time; at
//! 30 %, 66–96 times.
//!
//! Times here are the simulator's (virtual, deterministic), not the machine's.

mod dds;

use dds::*;
use tachyon_proto::{Duration, Instant, WriterConfig};
use tachyon_sim::{Host, LinkConfig, RunOutcome, Sim};

const SIZE: usize = 4 << 20;

struct Outcome {
    /// When the reader took the sample, in milliseconds.
    ms: f64,
    fragments: u64,
    resent: u64,
    nack_frags: u64,
}

fn one(seed: u64, loss: f64) -> Outcome {
    let mut sim = Sim::new(seed);
    sim.set_default_link(
        LinkConfig::ideal(Duration::from_micros(50))
            .loss(loss)
            .bandwidth(125_000_000),
    );
    let wcfg = WriterConfig {
        max_datagram: 1472,
        fragment_size: 1344,
        ..reliable_keep_all_writer(4)
    };
    let rcfg = reliable_keep_all_reader();
    let Linked { wp, w, rp, r } = linked(&wcfg, &rcfg);
    let wn = add_host(&mut sim, 1, wp, Source::new(w, 1, |_| SIZE));
    let rn = add_host(&mut sim, 2, rp, Sink::new(r));
    host_mut::<Source>(&mut sim, wn).drive(Instant::ZERO);
    assert_eq!(sim.run_until_idle(secs(600)), RunOutcome::Idle);
    let src: &Host<Source> = host(&sim, wn);
    let sink: &Host<Sink> = host(&sim, rn);
    assert_eq!(
        (sink.app.received, sink.app.corrupt),
        (1, 0),
        "the sample arrives whole"
    );
    let ws = src.participant.writer_stats(w).expect("writer");
    Outcome {
        ms: sink.app.last_at.as_nanos() as f64 / 1e6,
        fragments: ws.fragments_sent,
        resent: ws.fragments_resent,
        nack_frags: ws.nack_frags_received,
    }
}

#[test]
fn a_large_sample_through_loss_is_repaired_about_once() {
    let lossless = one(1, 0.0);
    assert_eq!(lossless.resent, 0);
    // (loss, the most resent per fragment sent, the longest time against the lossless one)
    for (loss, resent_max, slower_max) in [(0.1, 0.25, 2.0), (0.3, 0.65, 6.0)] {
        for seed in 1..=5 {
            let o = one(seed, loss);
            println!(
                "loss {loss}, seed {seed}: {:.1} ms ({:.2}x lossless), {} of {} fragments \
                 resent, {} NACK_FRAGs",
                o.ms,
                o.ms / lossless.ms,
                o.resent,
                o.fragments,
                o.nack_frags
            );
            assert!(
                (o.resent as f64) < resent_max * o.fragments as f64,
                "loss {loss}, seed {seed}: {} fragments resent for {} sent",
                o.resent,
                o.fragments
            );
            assert!(
                o.ms < slower_max * lossless.ms,
                "loss {loss}, seed {seed}: {:.1} ms against {:.1} ms without loss",
                o.ms,
                lossless.ms
            );
        }
    }
}
