//! The floor's ping: one datagram, its echo, the round trip on this thread's monotonic clock;
//! then the next. An echo missing for 1 s is a loss. With `--rate`, a second thread sends on
//! schedule (sleeping, as precise as the kernel's high-resolution timers) while this one
//! records whatever comes back: a socket's receive timeout counts in scheduler ticks, too
//! coarse to pace by.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::socket::Endpoint;
use super::{io, result, FloorArgs};
use crate::perf::Failure;
use crate::stats::{live_line, LatencyRecorder, RunResult, Usage};

/// Pings remembered for matching their echoes.
const RING: usize = 1 << 14;

/// When each recent ping left, by `seq % RING`; shared by the sending and receiving threads.
struct Ledger {
    base: Instant,
    seq: Vec<AtomicU64>,
    at_ns: Vec<AtomicU64>,
    /// Pings sent since the warm-up ended.
    measured: AtomicU64,
    measuring: AtomicBool,
}

impl Ledger {
    fn new() -> Ledger {
        Ledger {
            base: Instant::now(),
            seq: (0..RING).map(|_| AtomicU64::new(u64::MAX)).collect(),
            at_ns: (0..RING).map(|_| AtomicU64::new(0)).collect(),
            measured: AtomicU64::new(0),
            measuring: AtomicBool::new(false),
        }
    }

    /// Records that ping `seq` leaves now.
    fn sending(&self, seq: u64) {
        let i = seq as usize % RING;
        let ns = self.base.elapsed().as_nanos() as u64;
        self.at_ns[i].store(ns, Ordering::Relaxed);
        self.seq[i].store(seq, Ordering::Release);
        if self.measuring.load(Ordering::Relaxed) {
            self.measured.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The round trip of the echo of `seq` arriving at `now`, once per ping.
    fn answered(&self, seq: u64, now: Instant) -> Option<u64> {
        let i = seq as usize % RING;
        if self.seq[i].load(Ordering::Acquire) != seq {
            return None;
        }
        self.seq[i].store(u64::MAX, Ordering::Relaxed);
        let sent = self.at_ns[i].load(Ordering::Relaxed);
        Some((now.duration_since(self.base).as_nanos() as u64).saturating_sub(sent))
    }
}

fn send(ep: &Endpoint, out: &mut [u8], seq: u64, peer: SocketAddr) -> std::io::Result<()> {
    out[..8].copy_from_slice(&seq.to_le_bytes());
    ep.send_to(out, peer)
}

/// The sequence number in the first 8 octets of a datagram.
fn seq_of(d: &[u8]) -> Option<u64> {
    let b: [u8; 8] = d.get(..8)?.try_into().ok()?;
    Some(u64::from_le_bytes(b))
}

pub fn run(a: &FloorArgs, role: &str) -> Result<RunResult, Failure> {
    let any = SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0));
    let ep = a.endpoint(any, "ping")?;
    a.pin();
    let mut out = vec![0x5au8; a.size as usize];
    let mut buf = vec![0u8; 65_536];

    // First contact: resend every 100 ms until the pong answers.
    let started = Instant::now();
    loop {
        send(&ep, &mut out, 0, a.peer).map_err(io("send"))?;
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

    let ledger = Arc::new(Ledger::new());
    let stop = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let measure_from = start + Duration::from_secs_f64(a.warmup);
    let end = measure_from + Duration::from_secs_f64(a.duration);
    let pacer = match a.rate {
        Some(rate) => Some(spawn_pacer(a, rate, &ep, &ledger, &stop)?),
        None => None,
    };
    let mut rec = LatencyRecorder::new();
    let mut r = result(a, role);
    let mut usage: Option<Usage> = None;
    let (mut next_tick, mut last_tick) = (measure_from + Duration::from_secs(1), measure_from);
    // Back to back (no --rate): the newest ping, and whether its echo is still out.
    let (mut seq, mut outstanding, mut last_sent) = (0u64, false, start);
    loop {
        let now = Instant::now();
        if usage.is_none() && now >= measure_from {
            rec.reset();
            ledger.measuring.store(true, Ordering::Relaxed);
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
        if pacer.is_none()
            && (!outstanding || now.duration_since(last_sent) >= Duration::from_secs(1))
        {
            seq += 1;
            ledger.sending(seq);
            send(&ep, &mut out, seq, a.peer).map_err(io("send"))?;
            (outstanding, last_sent) = (true, Instant::now());
        }
        let deadline = if pacer.is_none() {
            (last_sent + Duration::from_secs(1)).min(next_tick)
        } else {
            next_tick
        };
        if let Some((n, _)) = ep.recv_until(&mut buf, deadline).map_err(io("recv"))? {
            let got = Instant::now();
            if let Some(s) = seq_of(&buf[..n]) {
                if let Some(rtt) = ledger.answered(s, got) {
                    rec.record(rtt);
                    if s == seq {
                        outstanding = false;
                    }
                }
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    if let Some(p) = pacer {
        let _ = p.join();
    }
    let sent = ledger.measured.load(Ordering::Relaxed);
    rec.lost(sent.saturating_sub(rec.count() + 1));
    r.config.duration_s = measure_from.elapsed().as_secs_f64().min(a.duration);
    r.latency = Some(rec.summary());
    r.histogram = rec.buckets();
    Ok(r)
}

/// The sending thread of `--rate`: a ping every 1/rate s until `stop`.
fn spawn_pacer(
    a: &FloorArgs,
    rate: f64,
    ep: &Endpoint,
    ledger: &Arc<Ledger>,
    stop: &Arc<AtomicBool>,
) -> Result<std::thread::JoinHandle<()>, Failure> {
    let ep = ep.try_clone().map_err(io("cannot share the ping socket"))?;
    let (ledger, stop) = (Arc::clone(ledger), Arc::clone(stop));
    let (peer, size, pin) = (a.peer, a.size as usize, a.clone());
    std::thread::Builder::new()
        .name("floor-pacer".into())
        .spawn(move || {
            pin.pin();
            let period = Duration::from_secs_f64(1.0 / rate);
            let mut out = vec![0x5au8; size];
            let (mut next, mut seq) = (Instant::now(), 0u64);
            while !stop.load(Ordering::Relaxed) {
                seq += 1;
                ledger.sending(seq);
                if send(&ep, &mut out, seq, peer).is_err() {
                    return;
                }
                next += period;
                let now = Instant::now();
                if next > now {
                    std::thread::sleep(next - now);
                } else if now - next > Duration::from_millis(100) {
                    next = now;
                }
            }
        })
        .map_err(io("cannot start the pacing thread"))
}
