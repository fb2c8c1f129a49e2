//! `tachyon floor`: the raw-UDP floor the benchmark harness compares DDS implementations
//! with — the same payload sizes, the same wake-up methods, the same measuring code
//! (`crate::stats`), and no protocol at all: a ping-pong and a flood on kernel UDP sockets.
//!
//! Each datagram carries its sequence number in its first 8 octets (little-endian); the rest
//! is filler. `--wake blocking` waits in `recv`; `--wake busy-poll` spins on a non-blocking
//! socket, as a spinning DDS receive thread (or an AF_XDP ring) does.
//!
//! `stalls` has no network at all: the machine's own floor under busy-polling, the time it
//! takes a spinning thread's CPU away (`stalls.rs`).

mod echo;
mod flood;
mod ping;
mod socket;
mod stalls;

use std::net::SocketAddr;

use clap::{Args, ValueEnum};

use crate::perf::Failure;
use crate::stats::{emit, RunConfig, RunResult};

/// Largest UDP payload on IPv4.
const MAX_UDP: u32 = 65_507;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FloorMode {
    /// Send a datagram, wait for its echo, record the round trip.
    Ping,
    /// Echo every datagram to its sender.
    Pong,
    /// Send datagrams as fast as possible, or at `--rate`.
    Pub,
    /// Count datagrams, octets and losses (sequence-number gaps).
    Sub,
    /// Ping and pong in one process (two threads).
    Intra,
    /// No network: spin on the clock and record every gap of 2 µs or more, the time the
    /// machine took the CPU away (ticks, interrupts, the host): a busy-polled round trip that
    /// meets one takes about that long, whatever the program.
    Stalls,
}

/// How a receiver waits for the next datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Wake {
    /// A blocking `recv`: the thread sleeps until the kernel wakes it.
    Blocking,
    /// Spin on a non-blocking `recv`: no wake-up, one CPU busy.
    BusyPoll,
}

/// `tachyon floor MODE [OPTIONS]`: the options of `tachyon perf` that apply, and where to
/// send. Datagrams above 65,507 octets do not exist: the harness skips its 1 MiB case here.
#[derive(Args, Clone, Debug)]
pub struct FloorArgs {
    #[arg(value_enum)]
    pub mode: FloorMode,
    /// Octets per datagram (at least 8: the sequence number).
    #[arg(long, default_value_t = 32)]
    pub size: u32,
    #[arg(long, value_enum, default_value = "blocking")]
    pub wake: Wake,
    /// pong and sub: the address to listen on.
    #[arg(long, default_value = "127.0.0.1:7399")]
    pub bind: SocketAddr,
    /// ping and pub: where to send.
    #[arg(long, default_value = "127.0.0.1:7399")]
    pub peer: SocketAddr,
    /// Pings or datagrams per second (absent: as fast as possible).
    #[arg(long)]
    pub rate: Option<f64>,
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub burst: u32,
    /// Seconds measured after the warm-up (pong and pub: seconds to run in all).
    #[arg(long, default_value_t = 10.0)]
    pub duration: f64,
    /// Stop after this many measured round trips (ping) or datagrams (sub).
    #[arg(long)]
    pub count: Option<u64>,
    #[arg(long, default_value_t = 1.0)]
    pub warmup: f64,
    /// Seconds the ping waits for the first echo (exit status 1 without one).
    #[arg(long, default_value_t = 10.0)]
    pub match_timeout: f64,
    /// Send and receive through an AF_XDP socket on this interface (queue 0) instead of the
    /// kernel's UDP stack: the raw AF_XDP floor (root, or the capabilities of docs/xdp.md).
    /// `--wake busy-poll` spins on its RX ring, `blocking` waits in `poll()`.
    #[arg(long)]
    pub xdp_interface: Option<String>,
    /// Pin the threads to this CPU.
    #[arg(long)]
    pub cpu: Option<u16>,
    /// SCHED_FIFO priority (1–99).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=99))]
    pub rt_priority: Option<u8>,
    /// Write the result (bench/SCHEMA.md) to this file, `-` for standard output.
    #[arg(long)]
    pub json: Option<String>,
    /// No line per second.
    #[arg(long)]
    pub quiet: bool,
}

impl FloorArgs {
    fn validate(&self) -> Result<(), String> {
        if self.size < 8 || self.size > MAX_UDP {
            return Err(format!(
                "--size {}: a datagram holds 8 (the sequence number) to {MAX_UDP} octets",
                self.size
            ));
        }
        if self.duration.is_nan() || self.duration <= 0.0 {
            return Err(format!("--duration {}: must be above 0", self.duration));
        }
        if self.warmup.is_nan() || self.warmup < 0.0 {
            return Err(format!("--warmup {}: must be 0 or more", self.warmup));
        }
        if let Some(r) = self.rate {
            if !(r.is_finite() && r > 0.0) {
                return Err(format!(
                    "--rate {r}: must be above 0 (omit it for unlimited)"
                ));
            }
        }
        Ok(())
    }

    fn run_config(&self) -> RunConfig {
        RunConfig {
            size: self.size,
            payload_bytes: u64::from(self.size),
            type_: "raw".into(),
            reliability: "none".into(),
            history: "none".into(),
            depth: 0,
            durability: "none".into(),
            keys: 1,
            rate: self.rate,
            burst: self.burst,
            delivery: match self.wake {
                Wake::Blocking => "blocking",
                Wake::BusyPoll => "busy-poll",
            }
            .into(),
            multicast: false,
            subscribers: 1,
            warmup_s: self.warmup,
            duration_s: self.duration,
            ..RunConfig::default()
        }
    }

    /// The socket of this run bound to `addr`: kernel UDP, or AF_XDP with `--xdp-interface`.
    fn endpoint(&self, addr: SocketAddr, what: &str) -> Result<socket::Endpoint, Failure> {
        match &self.xdp_interface {
            None => socket::Endpoint::bind(addr, self.wake)
                .map_err(|e| Failure::Other(format!("cannot open the {what} socket: {e}"))),
            Some(i) => socket::Endpoint::bind_xdp(addr, self.wake, i).map_err(|e| {
                Failure::Other(format!("cannot open the {what} socket on AF_XDP: {e}"))
            }),
        }
    }

    fn pin(&self) {
        crate::perf::pin_this_thread(self.cpu, self.rt_priority);
    }
}

fn io(what: &str) -> impl Fn(std::io::Error) -> Failure + '_ {
    move |e| Failure::Other(format!("{what}: {e}"))
}

/// Runs `tachyon floor` as the arguments say.
pub fn run(a: &FloorArgs) -> Result<(), Failure> {
    a.validate().map_err(Failure::Usage)?;
    let result = match a.mode {
        FloorMode::Ping => Some(ping::run(a, "ping")?),
        FloorMode::Pong => {
            echo::run(a, None)?;
            None
        }
        FloorMode::Pub => {
            flood::publish(a)?;
            None
        }
        FloorMode::Sub => Some(flood::subscribe(a)?),
        FloorMode::Stalls => Some(stalls::run(a)?),
        FloorMode::Intra => {
            let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let (ea, es) = (a.clone(), std::sync::Arc::clone(&stop));
            let echo = std::thread::Builder::new()
                .name("floor-pong".into())
                .spawn(move || echo::run(&ea, Some(&es)))
                .map_err(io("cannot start the pong thread"))?;
            let r = ping::run(a, "intra");
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            let _ = echo.join();
            Some(r?)
        }
    };
    if let Some(r) = result {
        emit(&r, a.json.as_deref()).map_err(Failure::Other)?;
    }
    Ok(())
}

/// A new result of the floor.
fn result(a: &FloorArgs, role: &str) -> RunResult {
    let name = if a.xdp_interface.is_some() {
        "xdp"
    } else {
        "udp"
    };
    RunResult::new(name, role, a.run_config())
}
