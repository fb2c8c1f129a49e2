//! `iceoryx2_ping ping|pong --size N [--duration S] [--warmup S] [--service NAME] [--json PATH]`:
//! a round trip between two processes through iceoryx2 0.10 publish-subscribe, the way its own
//! benchmark measures it (both sides busy-wait on `receive`; no events, no sleeping). The ping
//! loans a slice of `--size` octets, writes a sequence number into it and sends it; the pong
//! receives it and sends a sample of the same size back; the ping records the time from its
//! loan to the pong's arrival. Results in the `tachyon-perf/1` record of bench/SCHEMA.md.

use std::time::{Duration, Instant};

use iceoryx2::prelude::*;

struct Options {
    ping: bool,
    size: usize,
    duration: f64,
    warmup: f64,
    service: String,
    json: Option<String>,
}

fn parse() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let ping = match args.next().as_deref() {
        Some("ping") => true,
        Some("pong") => false,
        _ => return Err("usage: iceoryx2_ping ping|pong --size N [--duration S] [--warmup S] [--service NAME] [--json PATH]".into()),
    };
    let mut o = Options {
        ping,
        size: 32,
        duration: 10.0,
        warmup: 1.0,
        service: "tachyon-bench".into(),
        json: None,
    };
    while let Some(name) = args.next() {
        let value = args.next().ok_or(format!("{name} needs a value"))?;
        let num = |v: &str| v.parse::<f64>().map_err(|e| format!("{name} {v}: {e}"));
        match name.as_str() {
            "--size" => o.size = value.parse().map_err(|e| format!("--size {value}: {e}"))?,
            "--duration" => o.duration = num(&value)?,
            "--warmup" => o.warmup = num(&value)?,
            "--service" => o.service = value,
            "--json" => o.json = Some(value),
            _ => return Err(format!("unknown option {name}")),
        }
    }
    o.size = o.size.max(8);
    Ok(o)
}

type Error = Box<dyn std::error::Error>;

fn main() {
    let o = match parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("iceoryx2_ping: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(&o) {
        eprintln!("iceoryx2_ping: {e}");
        std::process::exit(3);
    }
}

fn run(o: &Options) -> Result<(), Error> {
    set_log_level(LogLevel::Warn);
    let node = NodeBuilder::new().create::<ipc::Service>()?;
    let service = |dir: &str| -> Result<_, Error> {
        let name: ServiceName = format!("{}/{dir}", o.service).as_str().try_into()?;
        Ok(node
            .service_builder(&name)
            .publish_subscribe::<[u8]>()
            .open_or_create()?)
    };
    let (out, back) = if o.ping {
        ("ping", "pong")
    } else {
        ("pong", "ping")
    };
    let (out, back) = (service(out)?, service(back)?);
    let publisher = out
        .publisher_builder()
        .initial_max_slice_len(o.size)
        .create()?;
    let subscriber = back.subscriber_builder().create()?;
    let end = Instant::now() + Duration::from_secs_f64(o.warmup + o.duration);
    if !o.ping {
        // Answer until the time is up (the ping's warm-up, measured part and a margin).
        let end = end + Duration::from_secs(5);
        let mut spins = 0u32;
        while Instant::now() < end {
            spins = spins.wrapping_add(1);
            // SIGTERM (the harness stops the pong that way) is handled by iceoryx2's node:
            // looked at now and then, so the node is dropped and its resources removed.
            if spins % 4096 == 0 && node.wait(Duration::ZERO).is_err() {
                break;
            }
            if let Some(sample) = subscriber.receive()? {
                let answer = publisher.loan_slice_uninit(o.size)?;
                let answer = answer.write_from_slice(sample.payload());
                answer.send()?;
            }
        }
        return Ok(());
    }
    // Wait for the pong (its subscriber and publisher), then measure.
    let matched = Instant::now() + Duration::from_secs(20);
    loop {
        let pongs = out.dynamic_config().number_of_subscribers();
        let pings = back.dynamic_config().number_of_publishers();
        if pongs >= 1 && pings >= 1 {
            break;
        }
        if Instant::now() > matched {
            return Err("no pong within 20 s".into());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut payload = vec![0u8; o.size];
    let mut rtts: Vec<u64> = Vec::with_capacity(1 << 20);
    let start = Instant::now();
    let measure_from = start + Duration::from_secs_f64(o.warmup);
    let end = measure_from + Duration::from_secs_f64(o.duration);
    let mut seq = 0u64;
    let mut lost = 0u64;
    loop {
        let t = Instant::now();
        if t >= end {
            break;
        }
        seq += 1;
        payload[..8].copy_from_slice(&seq.to_le_bytes());
        let sample = publisher.loan_slice_uninit(o.size)?;
        sample.write_from_slice(&payload).send()?;
        let deadline = t + Duration::from_secs(1);
        let arrived = loop {
            if let Some(pong) = subscriber.receive()? {
                let p = pong.payload();
                if p.len() >= 8 && p[..8] == seq.to_le_bytes() {
                    break true;
                }
            } else if Instant::now() > deadline {
                break false;
            }
        };
        if !arrived {
            lost += 1;
            continue;
        }
        if t >= measure_from {
            rtts.push(t.elapsed().as_nanos() as u64);
        }
    }
    let measured = end.duration_since(measure_from).as_secs_f64();
    let record = record(o, &mut rtts, lost, measured);
    match o.json.as_deref() {
        Some("-") | None => println!("{record}"),
        Some(path) => std::fs::write(path, record)?,
    }
    Ok(())
}

/// The `tachyon-perf/1` record (round trips in ns).
fn record(o: &Options, rtts: &mut [u64], lost: u64, seconds: f64) -> String {
    rtts.sort_unstable();
    let n = rtts.len();
    let q = |p: f64| -> String {
        if n == 0 {
            return "null".into();
        }
        let i = ((p * n as f64).ceil() as usize).clamp(1, n) - 1;
        rtts[i].to_string()
    };
    let mean = if n == 0 {
        0.0
    } else {
        rtts.iter().sum::<u64>() as f64 / n as f64
    };
    let var = if n < 2 {
        0.0
    } else {
        rtts.iter().map(|&r| (r as f64 - mean).powi(2)).sum::<f64>() / (n - 1) as f64
    };
    format!(
        "{{\"schema\": \"tachyon-perf/1\", \"implementation\": \"iceoryx2\", \"version\": \"0.10.0\", \
         \"role\": \"ping\", \"config\": {{\"size\": {size}, \"payload_bytes\": {size}, \
         \"reliability\": \"reliable\", \"history\": \"keep-last\", \"depth\": 1, \
         \"transport\": \"shm\", \"busy_poll\": true, \"warmup_s\": {warm}, \"duration_s\": {secs:.3}}}, \
         \"latency\": {{\"count\": {n}, \"lost\": {lost}, \"min\": {min}, \"mean\": {mean:.0}, \
         \"p50\": {p50}, \"p90\": {p90}, \"p99\": {p99}, \"p99_9\": {p999}, \"p99_99\": {p9999}, \
         \"max\": {max}, \"stddev\": {sd:.0}, \"pdv\": null}}, \"histogram\": null, \
         \"throughput\": null, \"timeline\": [], \"process\": {{}}}}",
        size = o.size,
        warm = o.warmup,
        secs = seconds,
        min = q(0.0),
        p50 = q(0.5),
        p90 = q(0.9),
        p99 = q(0.99),
        p999 = q(0.999),
        p9999 = q(0.9999),
        max = q(1.0),
        sd = var.sqrt(),
    )
}
