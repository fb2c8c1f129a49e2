//! The floor's pub and sub: datagrams as fast as the socket takes them (or at `--rate`, in
//! `--burst`s), counted at the receiver with losses from sequence-number gaps.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use super::{io, result, FloorArgs};
use crate::perf::Failure;
use crate::stats::{live_line, RunResult, ThroughputCounter, Usage};

/// Sends for `--warmup` + `--duration` seconds.
pub fn publish(a: &FloorArgs) -> Result<(), Failure> {
    let any = SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0));
    let ep = a.endpoint(any, "pub")?;
    a.pin();
    let mut out = vec![0x5au8; a.size as usize];
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(a.warmup + a.duration);
    let period = a
        .rate
        .map(|r| Duration::from_secs_f64(f64::from(a.burst) / r));
    let (mut next, mut seq) = (start, 0u64);
    while Instant::now() < end {
        for _ in 0..a.burst {
            out[..8].copy_from_slice(&seq.to_le_bytes());
            match ep.send_to(&out, a.peer) {
                Ok(()) => seq += 1,
                // Nobody listens yet (ICMP port unreachable): go on.
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {}
                Err(e) => return Err(io("send")(e)),
            }
        }
        if let Some(p) = period {
            next += p;
            let now = Instant::now();
            if next > now {
                std::thread::sleep(next - now);
            } else if now - next > Duration::from_millis(100) {
                next = now;
            }
        }
    }
    if !a.quiet {
        let secs = start.elapsed().as_secs_f64();
        eprintln!(
            "pub: sent {seq} datagrams in {secs:.1} s ({:.0}/s)",
            seq as f64 / secs
        );
    }
    Ok(())
}

/// Counts from the first datagram: `--warmup` seconds not counted, then `--duration` seconds.
pub fn subscribe(a: &FloorArgs) -> Result<RunResult, Failure> {
    let ep = a.endpoint(a.bind, "sub")?;
    a.pin();
    let mut buf = vec![0u8; 65_536];
    let mut counter: ThroughputCounter<SocketAddr> = ThroughputCounter::new();
    let mut r = result(a, "sub");
    let first_by = Instant::now() + Duration::from_secs_f64(a.match_timeout);
    let Some((n, from)) = ep.recv_until(&mut buf, first_by).map_err(io("recv"))? else {
        return Err(Failure::NoMatch(format!(
            "nothing arrived on {} within {} s",
            a.bind, a.match_timeout
        )));
    };
    count(&mut counter, &buf[..n], from);
    let first = Instant::now();
    let measure_from = first + Duration::from_secs_f64(a.warmup);
    let end = measure_from + Duration::from_secs_f64(a.duration);
    let mut usage: Option<Usage> = None;
    let (mut next_tick, mut last_tick) = (measure_from + Duration::from_secs(1), measure_from);
    loop {
        let now = Instant::now();
        if usage.is_none() && now >= measure_from {
            counter.reset();
            usage = Some(Usage::now());
        }
        if let Some(u) = usage {
            let done = now >= end || a.count.is_some_and(|c| counter.samples() >= c);
            if now >= next_tick || done {
                let i = counter.end_interval(
                    now.duration_since(measure_from).as_secs_f64(),
                    now.duration_since(last_tick).as_secs_f64(),
                );
                if !a.quiet {
                    eprintln!("{}", live_line("sub", &i));
                }
                r.timeline.push(i);
                last_tick = now;
                next_tick += Duration::from_secs(1);
            }
            if done {
                r.process = u.since();
                let secs = measure_from.elapsed().as_secs_f64();
                r.config.duration_s = secs;
                r.throughput = Some(counter.summary(secs));
                return Ok(r);
            }
        }
        let deadline = next_tick
            .min(end)
            .max(Instant::now() + Duration::from_micros(1));
        if let Some((n, from)) = ep.recv_until(&mut buf, deadline).map_err(io("recv"))? {
            count(&mut counter, &buf[..n], from);
        }
    }
}

/// Counts one datagram: its sequence number is in its first 8 octets.
fn count(c: &mut ThroughputCounter<SocketAddr>, d: &[u8], from: SocketAddr) {
    if d.len() < 8 {
        return;
    }
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    // The counter's sequence numbers are 32-bit (as DDS samples'): it handles wrap-around.
    let seq = u64::from_le_bytes(b) as u32;
    c.record(from, 0, seq, 1, d.len() as u64);
}
