//! `tachyon-bridge`: a Tachyon DDS domain bridged over Zenoh, so two sites whose DDS traffic
//! cannot reach each other (no multicast between them, no route, a WAN) exchange samples
//! through Zenoh routers. `docs/bridge.md` says how to use it and what interoperates.
//!
//! Each DDS topic maps to the key expression `<scope>/<topic name>` (the topic name as is,
//! as `zenoh-plugin-dds` maps it). A sample travels as its serialized bytes (encapsulation
//! header included), untouched; its type name, key hash, kind (data, dispose, unregister) and
//! the writer's reliability and durability go along in the Zenoh attachment, so the bridge
//! at the other end creates a DDS writer of the same type and QoS without knowing the type.
//!
//! - DDS → Zenoh: for each topic a remote DDS writer of this site publishes, the bridge reads
//!   it (a reader of the writer's type name, reliability and durability, KEEP_ALL) and puts
//!   each sample on Zenoh through an advanced publisher that keeps the last `--cache`
//!   samples, so a subscribing bridge that (re)starts gets them, and a lost sample is sent
//!   again.
//! - Zenoh → DDS: one advanced subscriber on `<scope>/**` (history of the publishers it
//!   meets, recovery of missed samples) writes what the other sites publish with a DDS
//!   writer per topic.
//! - The bridge's own readers and writers ignore each other (`ignore_local`), and it ignores
//!   its own Zenoh publications: nothing loops.
//!
//! `--router`: no DDS at all, a Zenoh router the sites' bridges connect to.
#![forbid(unsafe_code)]

mod meta;
mod recover;

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use tachyon::dynamic::RawSample;
use tachyon::{Config, DataReader, DataWriter, DomainParticipant};
use zenoh::qos::CongestionControl;
use zenoh::sample::{Locality, Sample};
use zenoh::Wait;
use zenoh_ext::{
    AdvancedPublisher, AdvancedPublisherBuilderExt, AdvancedSubscriberBuilderExt, CacheConfig,
    HistoryConfig, MissDetectionConfig, RecoveryConfig,
};

use meta::{Kind, Meta};

#[derive(Parser)]
#[command(
    name = "tachyon-bridge",
    version,
    about = "Bridges a Tachyon DDS domain over Zenoh"
)]
struct Args {
    /// The DDS domain
    #[arg(short, long, default_value_t = 0)]
    domain: u32,
    /// Zenoh mode: peer, client or router
    #[arg(short, long, default_value = "peer")]
    mode: String,
    /// Zenoh endpoints to connect to (e.g. tcp/10.0.0.1:7447), repeatable
    #[arg(short = 'e', long)]
    connect: Vec<String>,
    /// Zenoh endpoints to listen on (e.g. tcp/0.0.0.0:7447), repeatable
    #[arg(short, long)]
    listen: Vec<String>,
    /// Key expression prefix of the bridged topics (several domains or systems on one Zenoh
    /// network keep apart by it); empty: the topic name alone
    #[arg(long, default_value = "")]
    scope: String,
    /// Bridge only the topics whose name contains this text (default: every topic)
    #[arg(long)]
    allow: Option<String>,
    /// Samples each topic's publisher keeps for subscribing bridges that (re)start
    #[arg(long, default_value_t = 10_000)]
    cache: usize,
    /// Only a Zenoh router, no DDS
    #[arg(long)]
    router: bool,
    /// Stop after this many seconds (default: at SIGINT or SIGTERM)
    #[arg(long)]
    duration: Option<f64>,
    /// Keep Zenoh's multicast scouting on (default off: the sites are joined by the
    /// endpoints given, not by whatever multicast reaches)
    #[arg(long)]
    scouting: bool,
    /// For tests: the Zenoh subscriber asks the publishers it finds for no history, so what a
    /// (re)started bridge gets of it comes from its own recovery (`recover.rs`) alone
    #[arg(long, hide = true)]
    no_subscriber_history: bool,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tachyon-bridge: {e}");
            ExitCode::from(1)
        }
    }
}

fn zenoh_config(args: &Args) -> Result<zenoh::Config, String> {
    let mode = if args.router {
        "router"
    } else {
        args.mode.as_str()
    };
    if !["peer", "client", "router"].contains(&mode) {
        return Err(format!("--mode {mode}: peer, client or router"));
    }
    let mut c = zenoh::Config::default();
    let set = |c: &mut zenoh::Config, key: &str, value: String| {
        c.insert_json5(key, &value)
            .map_err(|e| format!("zenoh configuration {key} = {value}: {e}"))
    };
    set(&mut c, "mode", format!("\"{mode}\""))?;
    let list = |v: &[String]| {
        let quoted: Vec<String> = v.iter().map(|e| format!("\"{e}\"")).collect();
        format!("[{}]", quoted.join(","))
    };
    if !args.connect.is_empty() {
        set(&mut c, "connect/endpoints", list(&args.connect))?;
    }
    if !args.listen.is_empty() {
        set(&mut c, "listen/endpoints", list(&args.listen))?;
    }
    if !args.scouting {
        set(&mut c, "scouting/multicast/enabled", "false".into())?;
    }
    Ok(c)
}

fn run(args: &Args) -> Result<(), String> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(&stop))
            .map_err(|e| format!("cannot handle signal {signal}: {e}"))?;
    }
    let limit = match args.duration {
        None => None,
        Some(s) if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s)),
        Some(s) => return Err(format!("--duration {s}: give seconds above 0")),
    };
    if args.scope.starts_with('/') || args.scope.ends_with('/') {
        return Err(format!(
            "--scope {:?}: a key expression prefix neither starts nor ends with '/'",
            args.scope
        ));
    }
    let session = zenoh::open(zenoh_config(args)?)
        .wait()
        .map_err(|e| format!("cannot open the Zenoh session: {e}"))?;
    let start = Instant::now();
    let running = || !stop.load(Ordering::Relaxed) && limit.is_none_or(|l| start.elapsed() < l);
    let mode = if args.router {
        "router"
    } else {
        args.mode.as_str()
    };
    println!("zenoh session {} ({mode} mode)", session.zid());
    if args.router {
        while running() {
            std::thread::sleep(Duration::from_millis(100));
        }
        return Ok(());
    }
    let config = Config::from_env().map_err(|e| e.to_string())?;
    let participant = DomainParticipant::with_config(args.domain, &config)
        .map_err(|e| format!("cannot join DDS domain {}: {e}", args.domain))?;
    let mut bridge = Bridge::new(args, session, participant)?;
    println!(
        "bridging DDS domain {} under key expression {:?}",
        args.domain,
        bridge.key_of("<topic>")
    );
    let mut last_scan = None::<Instant>;
    while running() {
        if last_scan.is_none_or(|t| t.elapsed() >= Duration::from_millis(200)) {
            bridge.scan();
            last_scan = Some(Instant::now());
        }
        let moved = bridge.dds_to_zenoh() + bridge.zenoh_to_dds();
        if moved == 0 {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    Ok(())
}

/// A topic this site publishes, read from DDS and put on Zenoh.
struct Outbound {
    reader: DataReader<RawSample>,
    publisher: AdvancedPublisher<'static>,
    meta: Meta,
}

/// A topic another site publishes, written into DDS.
struct Inbound {
    writer: DataWriter<RawSample>,
    /// Samples held until the local readers of the topic matched the new writer (a bridge
    /// that (re)starts gets the other sites' history at once: written before the readers
    /// match, a volatile writer's samples would reach nobody), at most `HOLD` long.
    pending: std::collections::VecDeque<(Kind, RawSample)>,
    pending_bytes: usize,
    created: Instant,
    flowing: bool,
}

/// How long a new inbound route holds samples for its local readers to match.
const HOLD: Duration = Duration::from_secs(2);
/// Most payload bytes an inbound route holds meanwhile (beyond, samples are dropped and
/// logged: the site's readers took too long to match).
const HOLD_BYTES: usize = 64 << 20;

struct Bridge {
    scope: String,
    allow: Option<String>,
    cache: usize,
    session: zenoh::Session,
    participant: DomainParticipant,
    subscriber: zenoh_ext::AdvancedSubscriber<zenoh::handlers::FifoChannelHandler<Sample>>,
    outbound: HashMap<String, Outbound>,
    inbound: HashMap<String, Inbound>,
    /// Topics that cannot be bridged (their name is no key expression), reported once.
    refused: HashMap<String, String>,
    /// The other sites' publishers, and their history where the subscriber missed it.
    recovery: recover::Recovery,
}

impl Bridge {
    fn new(
        args: &Args,
        session: zenoh::Session,
        participant: DomainParticipant,
    ) -> Result<Bridge, String> {
        let all = if args.scope.is_empty() {
            "**".to_owned()
        } else {
            format!("{}/**", args.scope)
        };
        let subscriber = session
            .declare_subscriber(all.clone())
            .recovery(RecoveryConfig::default().heartbeat())
            .subscriber_detection()
            .allowed_origin(Locality::Remote);
        let subscriber = if args.no_subscriber_history {
            subscriber.wait()
        } else {
            subscriber
                .history(HistoryConfig::default().detect_late_publishers())
                .wait()
        }
        .map_err(|e| format!("cannot subscribe to {all}: {e}"))?;
        Ok(Bridge {
            scope: args.scope.clone(),
            allow: args.allow.clone(),
            cache: args.cache.max(1),
            session,
            participant,
            subscriber,
            outbound: HashMap::new(),
            inbound: HashMap::new(),
            refused: HashMap::new(),
            recovery: recover::Recovery::default(),
        })
    }

    fn key_of(&self, topic: &str) -> String {
        if self.scope.is_empty() {
            topic.to_owned()
        } else {
            format!("{}/{topic}", self.scope)
        }
    }

    fn topic_of<'k>(&self, key: &'k str) -> Option<&'k str> {
        if self.scope.is_empty() {
            return Some(key);
        }
        key.strip_prefix(self.scope.as_str())?.strip_prefix('/')
    }

    fn allowed(&self, topic: &str) -> bool {
        self.allow.as_deref().is_none_or(|a| topic.contains(a))
    }

    /// Starts bridging every topic a remote DDS writer of this site publishes.
    fn scan(&mut self) {
        for p in self.participant.discovered_publications() {
            let topic = p.topic_name.clone();
            if self.outbound.contains_key(&topic)
                || self.refused.contains_key(&topic)
                || !self.allowed(&topic)
            {
                continue;
            }
            let meta = Meta::of_publication(&p);
            match self.route_out(&topic, &meta) {
                Ok(o) => {
                    println!(
                        "DDS -> zenoh: topic {topic} ({}, {}) on {}",
                        meta.type_name,
                        meta.qos_label(),
                        self.key_of(&topic)
                    );
                    self.outbound.insert(topic, o);
                }
                Err(e) => {
                    eprintln!("tachyon-bridge: topic {topic} is not bridged: {e}");
                    self.refused.insert(topic, e);
                }
            }
        }
    }

    fn route_out(&self, topic: &str, meta: &Meta) -> Result<Outbound, String> {
        let key = zenoh::key_expr::KeyExpr::try_from(self.key_of(topic))
            .map_err(|e| format!("its name is not a Zenoh key expression ({e})"))?
            .into_owned();
        let t = self
            .participant
            .create_raw_topic(topic, &meta.type_name, meta.keyed)
            .map_err(|e| e.to_string())?;
        let qos = meta.reader_qos();
        let subscriber = self
            .participant
            .create_subscriber_with_qos(meta.partition_qos())
            .map_err(|e| e.to_string())?;
        let reader = subscriber
            .create_datareader(&t, qos)
            .map_err(|e| e.to_string())?;
        let congestion = if meta.reliable {
            CongestionControl::Block
        } else {
            CongestionControl::Drop
        };
        let publisher = self
            .session
            .declare_publisher(key)
            .congestion_control(congestion)
            .cache(CacheConfig::default().max_samples(self.cache))
            .sample_miss_detection(
                MissDetectionConfig::default().heartbeat(Duration::from_millis(500)),
            )
            .publisher_detection()
            .wait()
            .map_err(|e| format!("cannot publish on Zenoh: {e}"))?;
        Ok(Outbound {
            reader,
            publisher,
            meta: meta.clone(),
        })
    }

    /// Puts what the DDS readers received on Zenoh; returns how many samples moved.
    fn dds_to_zenoh(&mut self) -> usize {
        let mut moved = 0;
        for (topic, o) in &self.outbound {
            let samples = match o.reader.take(256) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("tachyon-bridge: take on {topic}: {e}");
                    continue;
                }
            };
            for s in samples {
                let kind = Kind::of(&s.info);
                let bytes = s.data.map(|d| d.bytes).unwrap_or_default();
                let attachment = o.meta.attachment(kind, s.info.instance_handle.0);
                if let Err(e) = o.publisher.put(bytes).attachment(attachment).wait() {
                    eprintln!("tachyon-bridge: put on {topic}: {e}");
                }
                moved += 1;
            }
        }
        moved
    }

    /// Writes what other sites published into DDS; returns how many samples moved.
    fn zenoh_to_dds(&mut self) -> usize {
        let mut ready = Vec::new();
        while let Ok(Some(sample)) = self.subscriber.try_recv() {
            self.recovery.admit(&self.session, sample, &mut ready);
        }
        self.recovery.poll(&mut ready);
        let moved = ready.len();
        for sample in ready {
            let key = sample.key_expr().as_str().to_owned();
            let Some(topic) = self.topic_of(&key).map(str::to_owned) else {
                continue;
            };
            let Some(meta) = sample.attachment().and_then(|a| Meta::parse(&a.to_bytes())) else {
                tracing::warn!(%key, "a sample without the bridge's attachment: dropped");
                continue;
            };
            let (kind, key_hash) = (meta.kind, meta.key_hash);
            if !self.inbound.contains_key(&topic) {
                match self.route_in(&topic, &meta) {
                    Ok(i) => {
                        println!(
                            "zenoh -> DDS: topic {topic} ({}, {}) from {key}",
                            meta.type_name,
                            meta.qos_label()
                        );
                        self.inbound.insert(topic.clone(), i);
                    }
                    Err(e) => {
                        eprintln!("tachyon-bridge: cannot write topic {topic}: {e}");
                        continue;
                    }
                }
            }
            let Some(i) = self.inbound.get_mut(&topic) else {
                continue;
            };
            let raw = RawSample {
                bytes: sample.payload().to_bytes().into_owned(),
                key_hash: tachyon::KeyHash(key_hash),
            };
            if i.pending_bytes + raw.bytes.len() <= HOLD_BYTES {
                i.pending_bytes += raw.bytes.len();
                i.pending.push_back((kind, raw));
            } else {
                tracing::warn!(%topic, "inbound route holds {HOLD_BYTES} bytes: a sample dropped");
            }
        }
        self.flush_inbound();
        moved
    }

    /// Writes what the inbound routes hold, once their local readers matched.
    fn flush_inbound(&mut self) {
        let subscriptions = self.participant.discovered_subscriptions();
        for (topic, i) in &mut self.inbound {
            if i.pending.is_empty() {
                continue;
            }
            if !i.flowing {
                let wanted = subscriptions
                    .iter()
                    .filter(|s| &s.topic_name == topic)
                    .count();
                let matched = i.writer.matched_subscriptions().len();
                i.flowing = (wanted > 0 && matched >= wanted) || i.created.elapsed() >= HOLD;
                if !i.flowing {
                    continue;
                }
            }
            i.pending_bytes = 0;
            while let Some((kind, raw)) = i.pending.pop_front() {
                let result = match kind {
                    Kind::Data => i.writer.write(&raw),
                    Kind::Disposed => i.writer.dispose(&raw),
                    Kind::Unregistered => i.writer.unregister_instance(&raw),
                };
                if let Err(e) = result {
                    eprintln!("tachyon-bridge: write on {topic}: {e}");
                }
            }
        }
    }

    fn route_in(&self, topic: &str, meta: &Meta) -> Result<Inbound, String> {
        let t = self
            .participant
            .create_raw_topic(topic, &meta.type_name, meta.keyed)
            .map_err(|e| e.to_string())?;
        let qos = meta.writer_qos();
        let publisher = self
            .participant
            .create_publisher_with_qos(meta.partition_qos_pub())
            .map_err(|e| e.to_string())?;
        let writer = publisher
            .create_datawriter(&t, qos)
            .map_err(|e| e.to_string())?;
        Ok(Inbound {
            writer,
            pending: std::collections::VecDeque::new(),
            pending_bytes: 0,
            created: Instant::now(),
            flowing: false,
        })
    }
}
