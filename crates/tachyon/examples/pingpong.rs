//! Round-trip latency between two processes: `ping` writes a sample on topic "Ping" and waits
//! for `pong` to write it back on "Pong"; RELIABLE KEEP_LAST(1) both ways, as Cyclone DDS's
//! `ddsperf ping`/`pong` do. `ping` also reports how long discovery took: from creating its
//! participant until its writer and reader both matched the other side's.
//!
//! Two ways to receive, as in `ddsperf`: a WaitSet (the default: the application thread
//! waits on a ReadCondition, takes and writes) or `--listener` (the answer is written from
//! `on_data_available`, on the participant's driver thread).
//!
//! ```sh
//! cargo run --release -p tachyon --example pingpong -- pong [--listener] &
//! cargo run --release -p tachyon --example pingpong -- ping [--listener] [--size 32] [--count 10000] [--warmup 1000]
//! ```
//! (`bench/pingpong.sh` runs it next to `ddsperf` in a private network namespace.)

use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Instant;

use tachyon::prelude::*;
use tachyon::{
    DataReaderListener, InstanceStateMask, SampleStateMask, StatusMask, ViewStateMask, WaitSet,
};

/// One ping: a sequence number and filler up to the requested size.
#[derive(DdsType, Debug, Clone)]
#[dds(name = "tachyon::PingPong")]
struct PingPong {
    seq: u64,
    payload: Vec<u8>,
}

struct Options {
    ping: bool,
    listener: bool,
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
    let publisher = participant.create_publisher()?;
    let subscriber = participant.create_subscriber()?;
    let qos_w = DataWriterQos::default().reliable().keep_last(1);
    let qos_r = DataReaderQos::default().reliable().keep_last(1);
    if o.listener {
        return with_listener(&o, started, &publisher, &subscriber, &out_topic, &in_topic);
    }
    let writer = publisher.create_datawriter(&out_topic, qos_w)?;
    let reader = subscriber.create_datareader(&in_topic, qos_r)?;
    let unread = reader.create_readcondition(
        SampleStateMask::NOT_READ,
        ViewStateMask::ANY,
        InstanceStateMask::ANY,
    );
    let mut waitset = WaitSet::new();
    waitset.attach_condition(&unread)?;
    let discovery = matched(&writer, &reader, started)?;

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
        if !answered && !rtts.is_empty() {
            return Err(format!("no answer to ping {seq} within 500 ms").into());
        }
        if answered && seq as usize > total - o.count {
            rtts.push(sent.elapsed());
        }
    }
    report(&o, discovery, &mut rtts);
    Ok(())
}

/// Waits until our writer and reader both matched the other process's; returns how long it
/// took since the participant was created.
fn matched(
    writer: &DataWriter<PingPong>,
    reader: &DataReader<PingPong>,
    started: Instant,
) -> Result<Duration, Box<dyn std::error::Error>> {
    let end = Instant::now() + Duration::from_secs(30);
    while writer.get_publication_matched_status().current_count == 0
        || reader.get_subscription_matched_status().current_count == 0
    {
        if Instant::now() > end {
            return Err("no peer matched within 30 s".into());
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    Ok(started.elapsed())
}

/// The ping's round in flight, shared with its listener.
struct Round {
    seq: u64,
    sent: Instant,
    rtts: Vec<Duration>,
    /// Round trips still to make (warm-up included); 0 when done.
    left: usize,
    warmup_left: usize,
}

/// Answers (pong) or times and re-sends (ping) from `on_data_available`.
struct Responder {
    ping: bool,
    writer: OnceLock<DataWriter<PingPong>>,
    sample: Mutex<PingPong>,
    round: Mutex<Round>,
    done: Condvar,
}

impl DataReaderListener<PingPong> for Responder {
    fn on_data_available(&self, reader: &DataReader<PingPong>) {
        let (Ok(samples), Some(writer)) = (reader.take(usize::MAX), self.writer.get()) else {
            return;
        };
        for p in samples.into_iter().filter_map(|s| s.data) {
            if !self.ping {
                let _ = writer.write(&p);
                continue;
            }
            let mut r = self.round.lock().unwrap_or_else(|e| e.into_inner());
            if p.seq != r.seq || r.left == 0 {
                continue;
            }
            let rtt = r.sent.elapsed();
            if r.warmup_left > 0 {
                r.warmup_left -= 1;
            } else {
                r.rtts.push(rtt);
            }
            r.left -= 1;
            if r.left == 0 {
                self.done.notify_all();
                continue;
            }
            r.seq += 1;
            let mut sample = self.sample.lock().unwrap_or_else(|e| e.into_inner());
            sample.seq = r.seq;
            r.sent = Instant::now();
            let _ = writer.write(&sample);
        }
    }
}

fn with_listener(
    o: &Options,
    started: Instant,
    publisher: &Publisher,
    subscriber: &Subscriber,
    out_topic: &Topic<PingPong>,
    in_topic: &Topic<PingPong>,
) -> Result<(), Box<dyn std::error::Error>> {
    let responder = Arc::new(Responder {
        ping: o.ping,
        writer: OnceLock::new(),
        sample: Mutex::new(PingPong {
            seq: 0,
            payload: vec![0x5a; o.size.saturating_sub(12)],
        }),
        round: Mutex::new(Round {
            seq: 0,
            sent: Instant::now(),
            rtts: Vec::with_capacity(o.count),
            left: 0,
            warmup_left: 0,
        }),
        done: Condvar::new(),
    });
    // The listener writes the answers (the next ping) itself.
    let _ = responder.writer.set(
        publisher.create_datawriter(out_topic, DataWriterQos::default().reliable().keep_last(1))?,
    );
    let reader = subscriber.create_datareader_with_listener(
        in_topic,
        DataReaderQos::default().reliable().keep_last(1),
        responder.clone(),
        StatusMask::DATA_AVAILABLE,
    )?;
    let Some(writer) = responder.writer.get() else {
        return Err("the writer was not set".into());
    };
    let discovery = matched(writer, &reader, started)?;
    if !o.ping {
        eprintln!("pong: matched after {discovery:?}; answering from the listener");
        // Answers until the ping goes away.
        while reader.get_subscription_matched_status().current_count > 0 {
            std::thread::sleep(Duration::from_millis(100));
        }
        return Ok(());
    }
    let total = o.warmup + o.count;
    let mut round = responder.round.lock().unwrap_or_else(|e| e.into_inner());
    round.left = total;
    round.warmup_left = o.warmup;
    // Ping until the pong answers (its reader may match a moment after our writer did), then
    // the listener keeps the rounds going.
    // The listener runs the rounds; this thread only starts them and watches that they go on:
    // a round in flight for 500 ms means the pong has gone.
    let mut seen = u64::MAX;
    while round.left > 0 {
        if round.left == total {
            round.seq += 1;
            round.sent = Instant::now();
            let mut sample = responder.sample.lock().unwrap_or_else(|e| e.into_inner());
            sample.seq = round.seq;
            writer.write(&sample)?;
        }
        let (r, timeout) = responder
            .done
            .wait_timeout(round, Duration::from_millis(500))
            .unwrap_or_else(|e| e.into_inner());
        round = r;
        if timeout.timed_out() && round.left > 0 && round.left < total {
            if round.seq == seen {
                return Err(format!("no answer to ping {} within 500 ms", round.seq).into());
            }
            seen = round.seq;
        }
    }
    let mut rtts = std::mem::take(&mut round.rtts);
    drop(round);
    report(o, discovery, &mut rtts);
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
        other => return Err(format!("usage: pingpong ping|pong [--listener] [--size N] [--count N] [--warmup N] [--domain D] (got {other:?})")),
    };
    let mut o = Options {
        ping,
        listener: false,
        size: 32,
        count: 10_000,
        warmup: 1_000,
        domain: 0,
    };
    while let Some(flag) = args.next() {
        if flag == "--listener" {
            o.listener = true;
            continue;
        }
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
