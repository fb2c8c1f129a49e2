//! The floor's ping: one datagram, its echo, the round trip on this thread's monotonic clock;
//! then the next (or the next at `--rate`). An echo missing for 1 s is a loss.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use super::socket::Endpoint;
use super::{io, result, FloorArgs};
use crate::perf::Failure;
use crate::stats::{live_line, LatencyRecorder, RunResult, Usage};

/// Pings remembered for matching their echoes.
const RING: usize = 1 << 14;

pub fn run(a: &FloorArgs, role: &str) -> Result<RunResult, Failure> {
    let any = SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0));
    let ep = Endpoint::bind(any, a.wake).map_err(io("cannot open the ping socket"))?;
    a.pin();
    let mut out = vec![0x5au8; a.size as usize];
    let mut buf = vec![0u8; 65_536];
    let mut seq: u64 = 0;
    let send = |ep: &Endpoint, out: &mut [u8], seq: u64| {
        out[..8].copy_from_slice(&seq.to_le_bytes());
        ep.send_to(out, a.peer)
    };

    // First contact: resend every 100 ms until the pong answers.
    let started = Instant::now();
    loop {
        send(&ep, &mut out, seq).map_err(io("send"))?;
        let wait = Instant::now() + Duration::from_millis(100);
        if ep.recv_until(&mut buf, wait).map_err(io("recv"))?.is_some() {
            break;
        }
        if started.elapsed().as_secs_f64() > a.match_timeout {
            return Err(Failure::NoMatch(format!(
                "{} did not answer within {} s",
                a.peer, a.match_timeout
            )));
        }
    }

    let mut rec = LatencyRecorder::new();
    let mut sent = vec![(u64::MAX, None::<Instant>); RING];
    let start = Instant::now();
    let measure_from = start + Duration::from_secs_f64(a.warmup);
    let end = measure_from + Duration::from_secs_f64(a.duration);
    let period = a.rate.map(|r| Duration::from_secs_f64(1.0 / r));
    let mut r = result(a, role);
    let mut usage: Option<Usage> = None;
    let (mut next_tick, mut last_tick) = (measure_from + Duration::from_secs(1), measure_from);
    let (mut sent_measured, mut outstanding) = (0u64, false);
    let mut next_send = start;
    let mut last_sent = start;
    loop {
        let now = Instant::now();
        if usage.is_none() && now >= measure_from {
            rec.reset();
            usage = Some(Usage::now());
        }
        if let Some(u) = usage {
            let done = now >= end || a.count.is_some_and(|c| rec.count() >= c);
            if now >= next_tick || done {
                let i = rec.end_interval(
                    now.duration_since(measure_from).as_secs_f64(),
                    now.duration_since(last_tick).as_secs_f64(),
                );
                if !a.quiet {
                    eprintln!("{}", live_line(role, &i));
                }
                r.timeline.push(i);
                last_tick = now;
                next_tick += Duration::from_secs(1);
            }
            if done {
                r.process = u.since();
                break;
            }
        }
        // Send: on schedule at a fixed rate; else when the last ping was answered or lost.
        let due = match period {
            Some(_) => now >= next_send,
            None => !outstanding || now.duration_since(last_sent) >= Duration::from_secs(1),
        };
        if due {
            seq += 1;
            let at = Instant::now();
            sent[seq as usize % RING] = (seq, Some(at));
            send(&ep, &mut out, seq).map_err(io("send"))?;
            last_sent = at;
            outstanding = true;
            if usage.is_some() {
                sent_measured += 1;
            }
            if let Some(p) = period {
                next_send += p;
                if next_send < at {
                    next_send = at + p;
                }
            }
        }
        let deadline = match period {
            Some(_) => next_send.min(next_tick),
            None => (last_sent + Duration::from_secs(1)).min(next_tick),
        };
        if let Some((n, _)) = ep.recv_until(&mut buf, deadline).map_err(io("recv"))? {
            let got = Instant::now();
            if n >= 8 {
                let mut b = [0u8; 8];
                b.copy_from_slice(&buf[..8]);
                let s = u64::from_le_bytes(b);
                if let (k, Some(at)) = sent[s as usize % RING] {
                    if k == s {
                        rec.record(got.duration_since(at).as_nanos() as u64);
                        sent[s as usize % RING].1 = None;
                        if s == seq {
                            outstanding = false;
                        }
                    }
                }
            }
        }
    }
    let answered = rec.count();
    rec.lost(sent_measured.saturating_sub(answered + u64::from(outstanding)));
    r.config.duration_s = measure_from.elapsed().as_secs_f64().min(a.duration);
    r.latency = Some(rec.summary());
    r.histogram = rec.buckets();
    Ok(r)
}
