//! Round-trip latency between two processes: `ping` writes a sample on topic "Ping" and waits
//! for `pong` to write it back on "Pong"; RELIABLE KEEP_LAST(1) both ways, as Cyclone DDS's
//! `ddsperf ping`/`pong` do. `ping` also reports how long discovery took: from creating its
//! participant until its writer and reader both matched the other side's.
//!
//! ```sh
//! cargo run --release -p tachyon --example pingpong -- pong &
//! cargo run --release -p tachyon --example pingpong -- ping [--size 32] [--count 10000] [--warmup 1000]
//! ```
//! (`bench/pingpong.sh` runs it next to `ddsperf` in a private network namespace.)

use std::time::Instant;

use tachyon::prelude::*;
use tachyon::{InstanceStateMask, SampleStateMask, ViewStateMask, WaitSet};

/// One ping: a sequence number and filler up to the requested size.
#[derive(DdsType, Debug, Clone)]
#[dds(name = "tachyon::PingPong")]
struct PingPong {
    seq: u64,
    payload: Vec<u8>,
}

struct Options {
    ping: bool,
    size: usize,
    count: usize,
    warmup: usize,
    domain: u32,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let o = options()?;
    let started = Instant::now();
    let participant = DomainParticipant::new(o.domain)?;
    let (out_name, in_name) = if o.ping {
        ("Ping", "Pong")
    } else {
        ("Pong", "Ping")
    };
    let out_topic = participant.create_topic::<PingPong>(out_name)?;
    let in_topic = participant.create_topic::<PingPong>(in_name)?;
    let writer = participant
        .create_publisher()?
        .create_datawriter(&out_topic, DataWriterQos::default().reliable().keep_last(1))?;
    let reader = participant
        .create_subscriber()?
        .create_datareader(&in_topic, DataReaderQos::default().reliable().keep_last(1))?;
    let unread = reader.create_readcondition(
        SampleStateMask::NOT_READ,
        ViewStateMask::ANY,
        InstanceStateMask::ANY,
    );
    let mut waitset = WaitSet::new();
    waitset.attach_condition(&unread)?;

    // Discovery: both of our endpoints matched the other process's.
    let end = Instant::now() + Duration::from_secs(30);
    while writer.get_publication_matched_status().current_count == 0
        || reader.get_subscription_matched_status().current_count == 0
    {
        if Instant::now() > end {
            return Err("no peer matched within 30 s".into());
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    let discovery = started.elapsed();

    if !o.ping {
        eprintln!("pong: matched after {discovery:?}; answering");
        loop {
            match waitset.wait(Duration::from_secs(10)) {
                Ok(_) => {}
                Err(Error::Timeout) => return Ok(()),
                Err(e) => return Err(e.into()),
            }
            for s in reader.take_w_condition(&unread, usize::MAX)? {
                if let Some(p) = s.data {
                    writer.write(&p)?;
                }
            }
        }
    }

    // The pong's reader may match a moment after our writer did: ping until it answers.
    let mut sample = PingPong {
        seq: 0,
        payload: vec![0x5a; o.size.saturating_sub(12)],
    };
    let mut rtts = Vec::with_capacity(o.count);
    let total = o.warmup + o.count;
    let mut seq = 0u64;
    while rtts.len() < o.count {
        seq += 1;
        sample.seq = seq;
        let sent = Instant::now();
        writer.write(&sample)?;
        let answered = loop {
            match waitset.wait(Duration::from_millis(500)) {
                Ok(_) => {}
                Err(Error::Timeout) => break false,
                Err(e) => return Err(e.into()),
            }
            let got = reader.take_w_condition(&unread, usize::MAX)?;
            if got
                .iter()
                .any(|s| s.data.as_ref().is_some_and(|p| p.seq == seq))
            {
                break true;
            }
        };
        if answered && seq as usize > total - o.count {
            rtts.push(sent.elapsed());
        }
    }
    report(&o, discovery, &mut rtts);
    Ok(())
}

fn report(o: &Options, discovery: Duration, rtts: &mut [Duration]) {
    rtts.sort_unstable();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let at = |q: f64| us(rtts[((rtts.len() as f64 - 1.0) * q).round() as usize]);
    let mean = rtts.iter().map(|d| us(*d)).sum::<f64>() / rtts.len() as f64;
    println!("discovery {:.1} ms", discovery.as_secs_f64() * 1e3);
    println!(
        "size {} count {} rtt_us min {:.1} mean {:.1} p50 {:.1} p90 {:.1} p99 {:.1} p99.9 {:.1} max {:.1}",
        o.size,
        rtts.len(),
        at(0.0),
        mean,
        at(0.5),
        at(0.9),
        at(0.99),
        at(0.999),
        at(1.0)
    );
}

fn options() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let ping = match args.next().as_deref() {
        Some("ping") => true,
        Some("pong") => false,
        other => return Err(format!("usage: pingpong ping|pong [--size N] [--count N] [--warmup N] [--domain D] (got {other:?})")),
    };
    let mut o = Options {
        ping,
        size: 32,
        count: 10_000,
        warmup: 1_000,
        domain: 0,
    };
    while let Some(flag) = args.next() {
        let v = args.next().ok_or(format!("{flag} needs a value"))?;
        let n: usize = v
            .parse()
            .map_err(|_| format!("{flag}: not a number: {v}"))?;
        match flag.as_str() {
            "--size" => o.size = n,
            "--count" => o.count = n.max(1),
            "--warmup" => o.warmup = n,
            "--domain" => o.domain = u32::try_from(n).map_err(|_| "--domain too large")?,
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    Ok(o)
}
