//! The command line of `tachyon perf`: the same options for every mode (and for the Fast DDS
//! and raw-UDP programs the harness runs next to it, see `bench/README.md`).

use clap::{Args, ValueEnum};
use tachyon::qos::{DurabilityKind, History};

use crate::stats::RunConfig;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// Send pings, measure round trips (ddsperf `ping`).
    Ping,
    /// Answer pings (ddsperf `pong`).
    Pong,
    /// Publish data as fast as allowed (ddsperf `pub`).
    Pub,
    /// Receive data, measure throughput and losses (ddsperf `sub`).
    Sub,
    /// Ping and pong in one process: two participants.
    Intra,
    /// A writer and a reader in one process (two participants, or one with
    /// `--same-participant`); one thread writes a sample and takes it, and measures both.
    WriteTake,
    /// A discovery storm: announce `--participants` fake participants by SPDP (no DDS
    /// participant of its own), then stop.
    Storm,
    /// One process of a discovery-at-scale run (`bench/join.py`): `--endpoints` writers and
    /// readers; prints when every one is matched, then stays until stopped.
    Join,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Ping => "ping",
            Mode::Pong => "pong",
            Mode::Pub => "pub",
            Mode::Sub => "sub",
            Mode::Intra => "intra",
            Mode::WriteTake => "write-take",
            Mode::Storm => "storm",
            Mode::Join => "join",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TypeKind {
    /// ddsperf's KeyedSeq: sequence number, key, `size` octets.
    Simple,
    /// A sequence of structs holding a string and integers, about `size` octets.
    Complex,
    /// Sequence number and `size` − 8 octets, no key.
    Unkeyed,
    /// A fixed-size type of exactly `size` bytes (32, 1024, 65536, 1048576 or 4194304):
    /// sequence number, key, an array of octets. With `--loan` only.
    Fixed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Reliability {
    Reliable,
    BestEffort,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum HistoryKind {
    KeepLast,
    KeepAll,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Durability {
    Volatile,
    TransientLocal,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Delivery {
    /// Answer or count in `on_data_available`, on the participant's driver thread.
    Listener,
    /// An application thread waits on a WaitSet, takes and answers.
    Waitset,
    /// An application thread takes in a loop and never sleeps (busy polling: the lowest
    /// latency, a vCPU per polling thread; in `intra`, ping and pong are two such threads).
    Poll,
}

/// storm: the builtin endpoints the fake participants announce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FakeEndpoints {
    /// Those of a full participant (SPDP, SEDP, participant message): the real participants
    /// match their SEDP writers and readers with each fake one and send it their endpoints,
    /// heartbeats and liveliness, which it never acknowledges.
    Full,
    /// SPDP only: the real participants keep track of the fake ones and match nothing.
    Spdp,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TransportKind {
    /// Every transport: in-process between participants of this process (`perf intra`),
    /// shared memory to other processes of this host, UDP to other hosts and vendors.
    Auto,
    /// Kernel UDP sockets only (the in-process transport and shared memory left out).
    Udp,
    /// The in-process transport only (no UDP): `perf intra` and `write-take` alone.
    Intra,
    /// Shared memory for user data (the in-process transport left out, so participants of
    /// one process use it too); discovery still goes over UDP. Needs the default thread
    /// model (`threads.mode = "threads"`).
    Shm,
    /// AF_XDP for user data to on-link neighbours (on `--xdp-interface`, `[xdp]` of the
    /// configuration file, or the interface the UDP transport chooses), kernel UDP for
    /// discovery; the in-process transport and shared
    /// memory left out. Needs root or the capabilities `docs/xdp.md` lists.
    Xdp,
}

impl TransportKind {
    /// Its name on the command line and in the record.
    pub fn name(self) -> &'static str {
        match self {
            TransportKind::Auto => "auto",
            TransportKind::Udp => "udp",
            TransportKind::Intra => "intra",
            TransportKind::Shm => "shm",
            TransportKind::Xdp => "xdp",
        }
    }
}

/// `tachyon perf MODE [OPTIONS]`.
#[derive(Args, Clone, Debug)]
pub struct PerfArgs {
    /// What this process does.
    #[arg(value_enum)]
    pub mode: Mode,
    /// DDS domain id.
    #[arg(long, default_value_t = 0)]
    pub domain: u32,
    /// Octets of payload, the sequence number and key's 12 included (ddsperf's `size`):
    /// 0 (no more than those 12) or at least 12.
    #[arg(long, default_value_t = 0)]
    pub size: u32,
    /// Sample type.
    #[arg(long = "type", value_enum, default_value = "simple")]
    pub type_kind: TypeKind,
    #[arg(long, value_enum, default_value = "reliable")]
    pub reliability: Reliability,
    /// History of the endpoints used (default: keep-last for ping/pong, keep-all for data).
    #[arg(long, value_enum)]
    pub history: Option<HistoryKind>,
    /// Depth of a keep-last history (default 1 for ping/pong, as ddsperf; 100 for data).
    #[arg(long)]
    pub depth: Option<u32>,
    #[arg(long, value_enum, default_value = "volatile")]
    pub durability: Durability,
    /// Number of instances (key values) data is written to, in turn.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub keys: u32,
    /// How received samples reach the benchmark.
    #[arg(long, value_enum, default_value = "listener")]
    pub delivery: Delivery,
    /// Pings or samples per second (absent: as fast as possible; a ping waits for its pong).
    #[arg(long)]
    pub rate: Option<f64>,
    /// Samples written back to back at each tick of `--rate`.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub burst: u32,
    /// pub: send every sample at once instead of batching (by default samples wait up to
    /// 1 ms to fill a datagram, and each burst of `--rate` is flushed: what ddsperf's `pub`
    /// does with `dds_write_set_batch`).
    #[arg(long)]
    pub no_batch: bool,
    /// Seconds measured, after the warm-up (pong and pub: seconds to run in all).
    #[arg(long, default_value_t = 10.0)]
    pub duration: f64,
    /// Stop after this many measured round trips (ping, intra) or samples (sub).
    #[arg(long)]
    pub count: Option<u64>,
    /// Seconds at the start whose results are discarded.
    #[arg(long, default_value_t = 1.0)]
    pub warmup: f64,
    /// Seconds a ping (or an intra write) waits for its answer before it counts as lost
    /// and the next is sent. Raise it for large samples on lossy links, where repairing
    /// a sample can take longer than a second.
    #[arg(long, default_value_t = 1.0)]
    pub lost_after: f64,
    /// write-take: the writer and the reader in one participant (as HDDS's
    /// `latency_benchmark` has them; the sample is handed to the reader directly), not in two
    /// (a DATA through the in-process transport).
    #[arg(long)]
    pub same_participant: bool,
    /// Readers to wait for before starting (ping: pongs answering each ping).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub subscribers: u32,
    /// Seconds to wait for them; exit status 1 when they do not all come.
    #[arg(long, default_value_t = 10.0)]
    pub match_timeout: f64,
    /// No multicast: discovery and data by unicast only.
    #[arg(long)]
    pub unicast: bool,
    /// Pin the benchmark's threads (application and driver) to this CPU.
    #[arg(long)]
    pub cpu: Option<u16>,
    /// SCHED_FIFO priority (1–99) of the benchmark's threads that carry what is measured
    /// (needs CAP_SYS_NICE): the measuring application thread and the participant's receive
    /// threads (its driver in `driver` mode); with `--critical` its critical receive thread
    /// instead, so a bulk writer's acknowledgements and discovery stay below it.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=99))]
    pub rt_priority: Option<u8>,
    /// Busy polling (`busy_poll` of `[threads.receive]` and `[threads.critical]`, or of
    /// `[threads.driver]` in `driver` mode): the threads that receive user data ask their
    /// sockets without blocking for up to this long (`50us`, `1ms`) before they block.
    /// Spends CPU to save the wake-up of a blocked thread; only worth it with a CPU per
    /// spinning thread.
    #[arg(long, value_parser = parse_busy_poll)]
    pub busy_poll: Option<std::time::Duration>,
    /// How long the threads that receive user data watch their sources before they block,
    /// while that catches datagrams (`spin` of `[threads.receive]` and `[threads.critical]`,
    /// `threads` mode; and `[shm] spin`, shared memory's doorbell). Absent: the defaults, 20
    /// µs (none for SCHED_FIFO receive threads); `0us`: block at once, as Cyclone DDS and
    /// Fast DDS do. `--busy-poll` replaces it.
    #[arg(long, value_parser = parse_spin)]
    pub spin: Option<std::time::Duration>,
    #[arg(long, value_enum, default_value = "auto")]
    pub transport: TransportKind,
    /// `--transport xdp`: the interface of the AF_XDP socket (instead of `[xdp] interface`
    /// in the configuration file; neither: the interface the UDP transport chooses). With `--critical`, the critical traffic alone goes
    /// through it; with `--busy-poll`, its receive thread spins on the RX ring.
    #[arg(long)]
    pub xdp_interface: Option<String>,
    /// `--transport xdp`: the queue of the AF_XDP socket (`[xdp] queue`; a queue reserved by
    /// `tachyon xdp setup`).
    #[arg(long)]
    pub xdp_queue: Option<u32>,
    /// ping and pong: write loaned samples in place and take them in place (`--type
    /// fixed`; between processes with `--transport shm`, nothing is copied or serialized).
    #[arg(long)]
    pub loan: bool,
    /// Write the result (bench/SCHEMA.md) to this file, `-` for standard output.
    #[arg(long)]
    pub json: Option<String>,
    /// No line per second (the table at the end is still printed, on standard error).
    #[arg(long)]
    pub quiet: bool,
    /// Make the ping and pong writers critical: TRANSPORT_PRIORITY above the participant's
    /// `threads.critical_priority`, which is set to 10 unless the configuration file sets it.
    #[arg(long)]
    pub critical: bool,
    /// ping: also write samples of this size (as `--size`) as fast as flow control allows,
    /// from a thread of their own, with a RELIABLE KEEP_ALL writer of the same participant on
    /// `--bulk-topic` (to a `sub --topic` of another process), while pinging.
    #[arg(long)]
    pub bulk_size: Option<u32>,
    /// ping: the topic of `--bulk-size`'s writer (default `DDSPerfRBulkKS` for the simple
    /// type, the ping topic's family with `Bulk` otherwise).
    #[arg(long)]
    pub bulk_topic: Option<String>,
    /// pub, sub: the data topic's name instead of ddsperf's. The process is then a plain
    /// participant with that one writer or reader (none of ddsperf's endpoints, no ddsperf
    /// USER_DATA), so it takes no part in other processes' pings.
    #[arg(long)]
    pub topic: Option<String>,
    /// storm: fake participants announced.
    #[arg(long, default_value_t = 1000)]
    pub participants: u32,
    /// storm: seconds between two announcements of one participant (the announcements of
    /// all are spread evenly over this period).
    #[arg(long, default_value_t = 1.0)]
    pub announce_period: f64,
    /// storm: lease duration the fake participants announce, in seconds.
    #[arg(long, default_value_t = 10.0)]
    pub lease: f64,
    /// storm: SPDP unicast ports of participant indices 0 to this on 127.0.0.1 get every
    /// announcement (besides the multicast port unless `--unicast`), as Tachyon's own
    /// discovery sends them.
    #[arg(long, default_value_t = 9)]
    pub max_participant_index: u32,
    /// storm: the builtin endpoints the fake participants announce.
    #[arg(long, value_enum, default_value = "full")]
    pub fake_endpoints: FakeEndpoints,
    /// join: this process's index, below `--processes`.
    #[arg(long, default_value_t = 0)]
    pub index: u32,
    /// join: processes of the run.
    #[arg(long, default_value_t = 2)]
    pub processes: u32,
    /// join: endpoints of this process, half writers and half readers.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub endpoints: u32,
}

/// Most fake participants `storm` announces (one socket each).
pub const MAX_STORM_PARTICIPANTS: u32 = 10_000;

impl PerfArgs {
    /// How long a ping waits for its answer before it counts as lost (`--lost-after`).
    pub fn lost_after(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.lost_after)
    }

    pub fn reliable(&self) -> bool {
        self.reliability == Reliability::Reliable
    }

    pub fn durability_kind(&self) -> DurabilityKind {
        match self.durability {
            Durability::Volatile => DurabilityKind::Volatile,
            Durability::TransientLocal => DurabilityKind::TransientLocal,
        }
    }

    fn history_for(&self, default_kind: HistoryKind, default_depth: u32) -> History {
        match self.history.unwrap_or(default_kind) {
            HistoryKind::KeepAll => History::KeepAll,
            HistoryKind::KeepLast => {
                History::KeepLast(self.depth.unwrap_or(default_depth) as usize)
            }
        }
    }

    /// Ping and pong endpoints: keep-last 1 unless told otherwise (ddsperf's choice).
    pub fn ping_history(&self) -> History {
        self.history_for(HistoryKind::KeepLast, 1)
    }

    /// Data endpoints: keep-all unless told otherwise (ddsperf's default).
    pub fn data_history(&self) -> History {
        self.history_for(HistoryKind::KeepAll, 100)
    }

    /// The configuration as the JSON record states it.
    pub fn run_config(&self, payload_bytes: u64) -> RunConfig {
        let history = match self.mode {
            Mode::Pub | Mode::Sub | Mode::WriteTake => self.data_history(),
            _ => self.ping_history(),
        };
        let (history, depth) = match history {
            History::KeepAll => ("keep-all", 0),
            History::KeepLast(d) => ("keep-last", d as u32),
        };
        RunConfig {
            size: self.size,
            payload_bytes,
            type_: match self.type_kind {
                TypeKind::Simple => "simple",
                TypeKind::Complex => "complex",
                TypeKind::Unkeyed => "unkeyed",
                TypeKind::Fixed => "fixed",
            }
            .to_owned(),
            reliability: match self.reliability {
                Reliability::Reliable => "reliable",
                Reliability::BestEffort => "best-effort",
            }
            .to_owned(),
            history: history.to_owned(),
            depth,
            durability: match self.durability {
                Durability::Volatile => "volatile",
                Durability::TransientLocal => "transient-local",
            }
            .to_owned(),
            keys: self.keys,
            rate: self.rate,
            burst: self.burst,
            delivery: match self.delivery {
                Delivery::Listener => "listener",
                Delivery::Waitset => "waitset",
                Delivery::Poll => "poll",
            }
            .to_owned(),
            multicast: !self.unicast,
            subscribers: self.subscribers,
            warmup_s: self.warmup,
            duration_s: self.duration,
            topic: self.topic.clone(),
            busy_poll_us: self.busy_poll.map(|d| d.as_secs_f64() * 1e6),
            spin_us: self.spin.map(|d| d.as_secs_f64() * 1e6),
            transport: self.transport.name().to_owned(),
            ..RunConfig::default()
        }
    }

    /// Checks what clap cannot.
    pub fn validate(&self) -> Result<(), String> {
        if self.duration.is_nan() || self.duration <= 0.0 {
            return Err(format!("--duration {}: must be above 0", self.duration));
        }
        if self.warmup.is_nan() || self.warmup < 0.0 {
            return Err(format!("--warmup {}: must be 0 or more", self.warmup));
        }
        if !(self.lost_after > 0.0 && self.lost_after <= 3600.0) {
            return Err(format!(
                "--lost-after {}: must be above 0 and at most 3600 seconds",
                self.lost_after
            ));
        }
        if let Some(r) = self.rate {
            if !(r > 0.0 && r.is_finite()) {
                return Err(format!(
                    "--rate {r}: must be above 0 (omit it for unlimited)"
                ));
            }
        }
        if (1..12).contains(&self.size) {
            return Err(format!(
                "--size {}: too small for the sequence number and key (0, or 12 and more)",
                self.size
            ));
        }
        if self.loan != (self.type_kind == TypeKind::Fixed) {
            return Err("--loan and --type fixed go together".into());
        }
        if self.loan {
            if !matches!(self.mode, Mode::Ping | Mode::Pong) {
                return Err("--loan applies to ping and pong".into());
            }
            if !super::loan::SIZES.contains(&self.size) {
                return Err(format!(
                    "--type fixed --size {}: the fixed types are of {:?} bytes",
                    self.size,
                    super::loan::SIZES
                ));
            }
            if self.delivery == Delivery::Waitset {
                return Err("--loan: --delivery listener or poll".into());
            }
        }
        if self.depth == Some(0) {
            return Err("--depth 0: a keep-last history holds at least 1 sample".into());
        }
        if self.history == Some(HistoryKind::KeepAll) && self.depth.is_some() {
            return Err("--depth applies to --history keep-last only".into());
        }
        if let Some(b) = self.bulk_size {
            if self.mode != Mode::Ping {
                return Err("--bulk-size applies to ping only".into());
            }
            if (1..12).contains(&b) {
                return Err(format!(
                    "--bulk-size {b}: too small for the sequence number and key (0, or 12 and more)"
                ));
            }
        }
        if self.bulk_topic.is_some() && self.bulk_size.is_none() {
            return Err("--bulk-topic needs --bulk-size".into());
        }
        if self.topic.is_some() && !matches!(self.mode, Mode::Pub | Mode::Sub) {
            return Err("--topic applies to pub and sub only (ping: --bulk-topic)".into());
        }
        if self.transport == TransportKind::Intra
            && !matches!(self.mode, Mode::Intra | Mode::WriteTake)
        {
            return Err(format!(
                "--transport intra reaches only participants of this process: it applies to \
                 `tachyon perf intra` and `write-take`, not {} (use auto or udp)",
                self.mode.name()
            ));
        }
        if self.same_participant && self.mode != Mode::WriteTake {
            return Err("--same-participant applies to write-take only".into());
        }
        if (self.xdp_interface.is_some() || self.xdp_queue.is_some())
            && self.transport != TransportKind::Xdp
        {
            return Err("--xdp-interface and --xdp-queue need --transport xdp".into());
        }
        if self.topic.as_deref().is_some_and(str::is_empty) {
            return Err("--topic: a topic name cannot be empty".into());
        }
        if self.mode == Mode::Storm {
            if !(1..=MAX_STORM_PARTICIPANTS).contains(&self.participants) {
                return Err(format!(
                    "--participants {}: from 1 to {MAX_STORM_PARTICIPANTS}",
                    self.participants
                ));
            }
            if !(self.announce_period > 0.0 && self.announce_period.is_finite()) {
                return Err(format!(
                    "--announce-period {}: must be above 0",
                    self.announce_period
                ));
            }
            if !(self.lease > 0.0 && self.lease < f64::from(i32::MAX)) {
                return Err(format!("--lease {}: must be above 0", self.lease));
            }
        }
        Ok(())
    }
}

/// `--spin`: a duration with its unit, from `0us` (block at once) to `10ms` (the longest
/// `spin` the configuration file takes).
fn parse_spin(text: &str) -> Result<std::time::Duration, String> {
    let d = parse_duration(text)?;
    if d > std::time::Duration::from_millis(10) {
        return Err(format!("{} is out of range (0us to 10ms)", text.trim()));
    }
    Ok(d)
}

/// `--busy-poll`: a duration with its unit, `ns`, `us`, `ms` or `s` (`50us`, `1.5ms`).
fn parse_busy_poll(text: &str) -> Result<std::time::Duration, String> {
    let d = parse_duration(text)?;
    if d.is_zero() || d > std::time::Duration::from_secs(1) {
        return Err(format!(
            "{} is out of range (more than zero, at most 1 s)",
            text.trim()
        ));
    }
    Ok(d)
}

/// A duration with its unit, `ns`, `us`, `ms` or `s` (`50us`, `1.5ms`).
fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| format!("expected a duration with a unit, like 50us or 1ms, found {t:?}"))?;
    let (number, unit) = t.split_at(split);
    let n: f64 = number
        .parse()
        .map_err(|_| format!("expected a number before the unit, found {t:?}"))?;
    let scale = match unit {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        _ => return Err(format!("unknown unit {unit:?} (expected ns, us, ms or s)")),
    };
    std::time::Duration::try_from_secs_f64(n * scale).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: PerfArgs,
    }

    fn parse(args: &[&str]) -> PerfArgs {
        Cli::try_parse_from(std::iter::once("perf").chain(args.iter().copied()))
            .expect("options parse")
            .args
    }

    #[test]
    fn a_critical_ping_with_a_bulk_writer() {
        let a = parse(&[
            "ping",
            "--critical",
            "--bulk-size",
            "65536",
            "--bulk-topic",
            "Bulk",
            "--rate",
            "1000",
        ]);
        assert!(a.critical);
        assert_eq!(a.bulk_size, Some(65_536));
        assert_eq!(a.bulk_topic.as_deref(), Some("Bulk"));
        assert_eq!(a.validate(), Ok(()));
        assert!(!parse(&["pong"]).critical);
        assert_eq!(parse(&["pong", "--critical"]).validate(), Ok(()));
    }

    #[test]
    fn bulk_options_belong_to_ping() {
        let e = parse(&["pong", "--bulk-size", "1024"])
            .validate()
            .unwrap_err();
        assert!(e.contains("ping only"), "{e}");
        let e = parse(&["ping", "--bulk-size", "5"]).validate().unwrap_err();
        assert!(e.contains("too small"), "{e}");
        let e = parse(&["ping", "--bulk-topic", "B"])
            .validate()
            .unwrap_err();
        assert!(e.contains("needs --bulk-size"), "{e}");
    }

    #[test]
    fn a_topic_for_pub_and_sub_only() {
        let a = parse(&["sub", "--topic", "DDSPerfRBulkKS", "--size", "65536"]);
        assert_eq!(a.validate(), Ok(()));
        assert_eq!(
            a.run_config(65_536).topic.as_deref(),
            Some("DDSPerfRBulkKS")
        );
        assert_eq!(parse(&["pub", "--topic", "T"]).validate(), Ok(()));
        assert!(parse(&["ping", "--topic", "T"]).validate().is_err());
        assert!(parse(&["sub", "--topic", ""]).validate().is_err());
        assert_eq!(parse(&["sub"]).run_config(0).topic, None);
    }

    #[test]
    fn transports() {
        assert_eq!(parse(&["ping"]).transport, TransportKind::Auto);
        assert_eq!(parse(&["intra"]).run_config(0).transport, "auto");
        let a = parse(&["intra", "--transport", "intra"]);
        assert_eq!(a.validate(), Ok(()));
        assert_eq!(a.run_config(0).transport, "intra");
        assert_eq!(parse(&["ping", "--transport", "udp"]).validate(), Ok(()));
        let a = parse(&["write-take", "--transport", "intra"]);
        assert_eq!((a.mode, a.validate()), (Mode::WriteTake, Ok(())));
        let e = parse(&["pong", "--transport", "intra"])
            .validate()
            .unwrap_err();
        assert!(e.contains("only participants of this process"), "{e}");
    }

    #[test]
    fn storm_defaults_and_bounds() {
        let a = parse(&["storm", "--domain", "7", "--duration", "5"]);
        assert_eq!(a.mode, Mode::Storm);
        assert_eq!(a.participants, 1000);
        assert_eq!(a.announce_period, 1.0);
        assert_eq!(a.lease, 10.0);
        assert_eq!(a.max_participant_index, 9);
        assert_eq!(a.fake_endpoints, FakeEndpoints::Full);
        assert_eq!(
            parse(&["storm", "--fake-endpoints", "spdp"]).fake_endpoints,
            FakeEndpoints::Spdp
        );
        assert_eq!(a.validate(), Ok(()));
        for bad in [
            &["storm", "--participants", "0"][..],
            &["storm", "--participants", "10001"],
            &["storm", "--announce-period", "0"],
            &["storm", "--lease=-1"],
        ] {
            assert!(parse(bad).validate().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn busy_poll_takes_a_duration_with_its_unit() {
        assert_eq!(
            parse_busy_poll("50us"),
            Ok(std::time::Duration::from_micros(50))
        );
        assert_eq!(
            parse_busy_poll("1.5ms"),
            Ok(std::time::Duration::from_micros(1500))
        );
        assert!(parse_busy_poll("50").unwrap_err().contains("unit"));
        assert!(parse_busy_poll("0us").unwrap_err().contains("range"));
        assert!(parse_busy_poll("2s").unwrap_err().contains("range"));
        assert!(parse_busy_poll("5 parsecs").is_err());
    }

    #[test]
    fn spin_takes_zero_to_ten_milliseconds() {
        assert_eq!(parse_spin("0us"), Ok(std::time::Duration::ZERO));
        assert_eq!(parse_spin("20us"), Ok(std::time::Duration::from_micros(20)));
        assert_eq!(parse_spin("10ms"), Ok(std::time::Duration::from_millis(10)));
        assert!(parse_spin("11ms").unwrap_err().contains("0us to 10ms"));
        assert!(parse_spin("20").unwrap_err().contains("unit"));
    }
}
