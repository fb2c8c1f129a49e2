//! A participant that behaves as Cyclone DDS's `ddsperf` does on the wire, so each answers
//! the other:
//!
//! - USER_DATA `DDSPerf:<has data reader>:<pid>:<hostname>` marks a benchmark participant;
//! - ping, pong and data topics `DDSPerf{R,U}{Ping,Pong,Data}KS`, type `KeyedSeq`;
//! - the ping writer and reader, the data writer (and reader, in `sub`) are in the default
//!   partition; pongs for participant P go through a writer in a publisher whose partition
//!   is P's GUID (`xxxxxxxx_xxxxxxxx_xxxxxxxx_xxxxxxxx`), and each participant reads pongs in
//!   a subscriber whose partition is its own GUID;
//! - a pong carries the ping's source timestamp with the lowest bit set (the bit tells a
//!   pong of a ping from a pong of a data sample); the pinger measures on its own clock.
//!
//! Every endpoint `ddsperf` expects of a peer exists (it reports a peer that lacks one), and
//! none matches another of the same participant (`ignore_local`, as `ddsperf`'s
//! `ignorelocal`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use tachyon::config::ThreadMode;
use tachyon::domain::ParticipantSettings;
use tachyon::prelude::*;
use tachyon::qos::{History, TopicQos};
use tachyon::{Config, InstanceState, MulticastMode, Sample, XdpConfig, XdpTraffic};
use tachyon_wire::{EntityId, Guid, GuidPrefix};

use super::options::{Mode, PerfArgs, TransportKind};
use super::types::{topic_name, PerfSample};

/// `ddsperf`'s USER_DATA prefix.
const UDATA_MAGIC: &str = "DDSPerf:";

/// A participant's GUID as `ddsperf` writes it for partition names.
pub fn guid_partition(prefix: GuidPrefix) -> String {
    let g = Guid::new(prefix, EntityId::PARTICIPANT);
    let mut bytes = [0u8; 16];
    bytes[..12].copy_from_slice(&g.prefix.0);
    bytes[12..].copy_from_slice(&g.entity_id.0);
    bytes
        .chunks(4)
        .map(|c| c.iter().map(|b| format!("{b:02x}")).collect::<String>())
        .collect::<Vec<_>>()
        .join("_")
}

/// The USER_DATA a benchmark participant announces.
fn user_data(has_reader: bool) -> Vec<u8> {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_else(|_| "?".to_owned());
    format!(
        "{UDATA_MAGIC}{}:{}:{host}",
        u8::from(has_reader),
        std::process::id()
    )
    .into_bytes()
}

/// Whether USER_DATA is a `ddsperf` participant's: `DDSPerf:<0|1>:<pid>:<host>`.
pub fn is_benchmark_participant(user_data: &[u8]) -> bool {
    let Ok(s) = std::str::from_utf8(user_data) else {
        return false;
    };
    let Some(rest) = s.strip_prefix(UDATA_MAGIC) else {
        return false;
    };
    let mut parts = rest.splitn(3, ':');
    matches!(
        (parts.next(), parts.next(), parts.next()),
        (Some(r), Some(pid), Some(_)) if r.parse::<i32>().is_ok() && pid.parse::<i64>().is_ok()
    )
}

/// A timestamp in nanoseconds since the epoch as a `SystemTime`.
pub fn system_time(ns: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_nanos(ns)
}

/// Now, in nanoseconds since the epoch.
pub fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// The pong writers, one per benchmark participant discovered, created by the discovery
/// thread (never from a listener: creating entities is not for the driver thread).
pub struct PongWriters<T> {
    /// Few (one per ping process): a scan is cheaper than hashing the prefix.
    writers: Mutex<Vec<(GuidPrefix, Arc<DataWriter<T>>)>>,
}

impl<T: PerfSample> PongWriters<T> {
    /// Sets (or, with `None`, removes) the pong writer for participant `prefix`; returns
    /// the one it replaces, to be dropped once the list is unlocked (a writer's deletion
    /// must not wait under the lock `answer` writes with).
    fn replace(
        &self,
        prefix: GuidPrefix,
        writer: Option<Arc<DataWriter<T>>>,
    ) -> Option<Arc<DataWriter<T>>> {
        let mut m = self.writers.lock().ok()?;
        let old = m
            .iter()
            .position(|(p, _)| *p == prefix)
            .map(|i| m.swap_remove(i).1);
        m.extend(writer.map(|w| (prefix, w)));
        old
    }

    /// Answers `pings`: each valid one goes back to its sender's participant with its
    /// source timestamp, lowest bit set. Returns how many were answered.
    pub fn answer(&self, pings: &[Sample<T>]) -> usize {
        // Locked once for the batch, the writers borrowed, not cloned (a lock and a clone
        // per sample are four atomic read-modify-writes of the tool's own per round trip).
        let Ok(writers) = self.writers.lock() else {
            return 0;
        };
        let mut answered = 0;
        for s in pings {
            let Some(data) = &s.data else { continue };
            let prefix = s.info.publication_handle.prefix;
            let Some((_, w)) = writers.iter().find(|(p, _)| *p == prefix) else {
                continue;
            };
            let ts = &s.info.source_timestamp;
            let ns = (u64::try_from(ts.seconds).unwrap_or(0) * 1_000_000_000
                + u64::from(ts.nanos()))
                | 1;
            if w.write_w_timestamp(data, system_time(ns)).is_ok() {
                answered += 1;
            }
        }
        answered
    }
}

/// The QoS every benchmark endpoint has, writer or reader (their builders have the same
/// methods but no trait in common): reliability and durability from the command line, history
/// `$h`, and no matching within the participant.
macro_rules! endpoint_qos {
    ($default:expr, $a:expr, $h:expr) => {{
        let q = $default.ignore_local(true).durability($a.durability_kind());
        let q = if $a.reliable() {
            q.reliable()
        } else {
            q.best_effort()
        };
        match $h {
            History::KeepAll => q.keep_all(),
            History::KeepLast(d) => q.keep_last(d),
        }
    }};
}

/// QoS of the endpoints, from the command line.
pub struct EndpointQos {
    pub ping_writer: DataWriterQos,
    pub ping_reader: DataReaderQos,
    pub data_writer: DataWriterQos,
    pub data_reader: DataReaderQos,
}

impl EndpointQos {
    pub fn from_args(a: &PerfArgs) -> EndpointQos {
        let ping_history = a.ping_history();
        let data_history = a.data_history();
        let writer = |h| endpoint_qos!(DataWriterQos::default(), a, h);
        let reader = |h| endpoint_qos!(DataReaderQos::default(), a, h);
        let mut data_writer = writer(data_history);
        if a.mode == Mode::Pub && !a.no_batch {
            data_writer = data_writer.batch(Duration::from_millis(1));
        }
        EndpointQos {
            ping_writer: writer(ping_history),
            ping_reader: reader(ping_history),
            data_writer,
            data_reader: reader(data_history),
        }
    }
}

/// `threads.critical_priority` that `--critical` sets unless the configuration sets one.
pub const CRITICAL_THRESHOLD: i32 = 10;

/// What `--critical` made critical: the participant's threshold and the TRANSPORT_PRIORITY
/// of the ping and pong writers (one above it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Critical {
    pub threshold: i32,
    pub transport_priority: i32,
}

/// The participant's settings from the command line (and `TACHYON_CONFIG`), with `user_data`;
/// with `--critical`, the critical threshold too.
pub(super) fn participant_settings(
    a: &PerfArgs,
    user_data: Vec<u8>,
) -> Result<(ParticipantSettings, Option<Critical>), Box<dyn std::error::Error>> {
    let config = Config::from_env()?;
    let mut settings = config.settings(a.domain);
    settings.user_data = user_data;
    settings.entity_name = Some(format!("tachyon perf {}", a.mode.name()));
    if a.unicast {
        settings.udp.multicast = MulticastMode::Disabled;
    }
    match a.transport {
        TransportKind::Auto => {}
        TransportKind::Udp => {
            settings.transports.no_intra = true;
            settings.transports.no_shm = true;
        }
        TransportKind::Intra => {
            settings.transports.no_udp = true;
            settings.transports.no_intra = false;
        }
        TransportKind::Shm => {
            if settings.threads.mode != ThreadMode::Threads {
                return Err(
                    "--transport shm needs threads.mode = \"threads\" (the default): \
                            shared memory is served by receive threads of its own"
                        .into(),
                );
            }
            settings.transports.no_intra = true;
            settings.transports.no_shm = false;
        }
        TransportKind::Xdp => {
            settings.transports.no_intra = true;
            settings.transports.no_shm = true;
            let configured = settings.xdp.is_some();
            // Without an interface: the UDP transport's (the one it chooses).
            let x = settings.xdp.get_or_insert_with(XdpConfig::default);
            if let Some(i) = &a.xdp_interface {
                x.interface = i.clone();
            }
            if let Some(q) = a.xdp_queue {
                x.queue = q;
            }
            if !configured || a.xdp_interface.is_some() {
                x.traffic = if a.critical {
                    XdpTraffic::Critical
                } else {
                    XdpTraffic::UserData
                };
            }
            if a.busy_poll.is_some() {
                x.busy_poll = true;
            }
        }
    }
    let threads = &mut settings.threads;
    if let Some(cpu) = a.cpu {
        for role in [
            &mut threads.driver,
            &mut threads.receive,
            &mut threads.timers,
        ] {
            role.cpus = vec![cpu];
        }
    }
    if let Some(p) = a.rt_priority {
        // Only the roles the mode has (a role it lacks is refused with a warning).
        match threads.mode {
            ThreadMode::Threads if a.critical => threads.critical.priority = Some(p),
            ThreadMode::Threads => threads.receive.priority = Some(p),
            ThreadMode::Driver => threads.driver.priority = Some(p),
            ThreadMode::Single => {}
        }
    }
    if let Some(spin) = a.busy_poll {
        // The threads that receive user data; discovery's and the timers' block as usual.
        match threads.mode {
            ThreadMode::Threads => {
                threads.receive.busy_poll = Some(spin);
                threads.critical.busy_poll = Some(spin);
            }
            ThreadMode::Driver => threads.driver.busy_poll = Some(spin),
            ThreadMode::Single => {}
        }
    }
    if let Some(window) = a.spin {
        // Watching before blocking is the receive threads' (threads mode only): their sockets,
        // and shared memory's doorbell (which its transport watches itself).
        threads.receive.spin = Some(window);
        threads.critical.spin = Some(window);
        settings.shm.spin = window;
    }
    let critical = if a.critical {
        let threshold = *settings
            .threads
            .critical_priority
            .get_or_insert(CRITICAL_THRESHOLD);
        Some(Critical {
            threshold,
            transport_priority: threshold.saturating_add(1),
        })
    } else {
        None
    };
    Ok((settings, critical))
}

/// A benchmark participant with every endpoint `ddsperf` has.
pub struct Node<T: PerfSample> {
    /// Shared with the discovery thread; the endpoints below need it alive.
    participant: Arc<DomainParticipant>,
    /// When the participant was created (discovery time is measured from here).
    pub created: Instant,
    pub ping_writer: Arc<DataWriter<T>>,
    pub ping_reader: DataReader<T>,
    pub pong_reader: DataReader<T>,
    pub data_writer: Arc<DataWriter<T>>,
    pub data_reader: Option<DataReader<T>>,
    /// `ping --bulk-size`: a RELIABLE KEEP_ALL writer on `--bulk-topic`, and the topic's name.
    pub bulk_writer: Option<(Arc<DataWriter<T>>, String)>,
    /// `--critical`: the threshold and the ping and pong writers' TRANSPORT_PRIORITY.
    pub critical: Option<Critical>,
    pub pongs: Arc<PongWriters<T>>,
    stop: Arc<AtomicBool>,
    /// Wakes the discovery thread at the node's end.
    stopping: GuardCondition,
    discovery: Option<JoinHandle<()>>,
}

impl<T: PerfSample> Node<T> {
    /// With `--transport xdp`, that datagrams went both ways through the AF_XDP socket (a
    /// peer off the link, or MACs never resolved, would leave everything to the kernel); for
    /// `pub` and `sub`, the way their data goes (best-effort readers send nothing back).
    /// With `--transport shm`, that the pings (or `pub`'s data, or what `sub` received) went
    /// through shared memory: a peer that does not have it (another host or user, shared
    /// memory off, another vendor) is reached over UDP instead, and the figures would not be
    /// what they claim.
    pub fn check_transport(&self, a: &PerfArgs) -> Result<(), String> {
        let (need_sent, need_received) = match a.mode {
            Mode::Pub => (true, false),
            Mode::Sub => (false, true),
            _ => (true, true),
        };
        if a.transport == TransportKind::Xdp {
            let s = self.participant.statistics().xdp;
            eprintln!(
                "{}: AF_XDP sent {} received {} (multicast sent {} received {}) via kernel {} \
                 kernel drops {} ({}, {})",
                a.mode.name(),
                s.sent,
                s.received,
                s.multicast_sent,
                s.multicast_received,
                s.via_kernel,
                s.kernel_drops,
                if s.native { "native" } else { "generic" },
                if s.zero_copy { "zero-copy" } else { "copy" }
            );
            if (need_sent && s.sent == 0) || (need_received && s.received == 0) {
                return Err(format!(
                    "--transport xdp: {} datagrams sent and {} received through the AF_XDP \
                     socket ({} through the kernel): the peer must be on the interface's link",
                    s.sent, s.received, s.via_kernel
                ));
            }
            return Ok(());
        }
        if a.transport != TransportKind::Shm {
            return Ok(());
        }
        let s = self.participant.statistics();
        if (need_sent && s.shm.datagrams_sent == 0)
            || (!need_sent && need_received && s.shm.datagrams_received == 0)
        {
            return Err(format!(
                "--transport shm: no datagram went through shared memory ({} over UDP): the \
                 peers must run on this host, as this user, with shared memory on",
                s.transport.datagrams_sent + s.transport.datagrams_received
            ));
        }
        Ok(())
    }
}

/// The topic of `ping --bulk-size`'s writer: `--bulk-topic`, or the ping topic's family with
/// `Bulk` (`DDSPerfRBulkKS` for the simple type).
pub fn bulk_topic_name<T: PerfSample>(a: &PerfArgs) -> String {
    a.bulk_topic
        .clone()
        .unwrap_or_else(|| topic_name::<T>("Bulk", true))
}

impl<T: PerfSample> Node<T> {
    /// Joins the domain and creates the endpoints; `data_reader` for `sub`.
    pub fn new(a: &PerfArgs, data_reader: bool) -> Result<Node<T>, Box<dyn std::error::Error>> {
        let created = Instant::now();
        let (settings, critical) = participant_settings(a, user_data(data_reader))?;
        let participant = Arc::new(DomainParticipant::with_settings(a.domain, &settings)?);
        let reliable = a.reliable();
        let mut qos = EndpointQos::from_args(a);
        if let Some(c) = critical {
            // The pong writers are made from the same QoS: both directions are critical.
            qos.ping_writer = qos.ping_writer.transport_priority(c.transport_priority);
        }
        // Critical readers are those of critical topics (DDS gives readers no
        // TRANSPORT_PRIORITY): the ping and pong topics, so both directions use the
        // critical lane.
        let topic_qos = TopicQos {
            transport_priority: critical.as_ref().map_or(0, |c| c.transport_priority),
            ..TopicQos::default()
        };
        let ping_topic = participant
            .create_topic_with_qos::<T>(&topic_name::<T>("Ping", reliable), topic_qos.clone())?;
        let pong_topic = participant
            .create_topic_with_qos::<T>(&topic_name::<T>("Pong", reliable), topic_qos)?;
        let data_topic = participant.create_topic::<T>(&topic_name::<T>("Data", reliable))?;
        let publisher = participant.create_publisher()?;
        let subscriber = participant.create_subscriber()?;
        let own = guid_partition(participant.guid_prefix());
        let pong_subscriber =
            participant.create_subscriber_with_qos(SubscriberQos::default().partition(&[own]))?;
        let ping_reader = subscriber.create_datareader(&ping_topic, qos.ping_reader.clone())?;
        let ping_writer = publisher.create_datawriter(&ping_topic, qos.ping_writer.clone())?;
        let data_reader = if data_reader {
            Some(subscriber.create_datareader(&data_topic, qos.data_reader.clone())?)
        } else {
            None
        };
        let data_writer = publisher.create_datawriter(&data_topic, qos.data_writer.clone())?;
        let bulk_writer = if a.bulk_size.is_some() {
            let name = bulk_topic_name::<T>(a);
            let topic = participant.create_topic::<T>(&name)?;
            // Reliable, keep-all, default TRANSPORT_PRIORITY (0): not critical.
            let qos = DataWriterQos::default()
                .ignore_local(true)
                .reliable()
                .keep_all();
            Some((Arc::new(publisher.create_datawriter(&topic, qos)?), name))
        } else {
            None
        };
        // Every pong of a ping is the same instance (key 0): with several peers answering, a
        // keep-last history must hold one per peer, or a pong replaces another before it is
        // taken.
        let mut pong_qos = qos.ping_reader;
        if let History::KeepLast(d) = pong_qos.history {
            pong_qos.history = History::KeepLast(d * a.subscribers.max(1) as usize);
        }
        let pong_reader = pong_subscriber.create_datareader(&pong_topic, pong_qos)?;
        let pongs = Arc::new(PongWriters {
            writers: Mutex::new(Vec::new()),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = GuardCondition::new();
        let discovery = {
            let participant = Arc::clone(&participant);
            let pongs = Arc::clone(&pongs);
            let stop = Arc::clone(&stop);
            let stopping = stopping.clone();
            let qos = qos.ping_writer;
            std::thread::Builder::new()
                .name("perf-discovery".into())
                .spawn(move || {
                    make_pong_writers(&participant, &pong_topic, qos, &pongs, &stop, &stopping)
                })?
        };
        Ok(Node {
            participant,
            created,
            ping_writer: Arc::new(ping_writer),
            ping_reader,
            pong_reader,
            data_reader,
            data_writer: Arc::new(data_writer),
            bulk_writer,
            critical,
            pongs,
            stop,
            stopping,
            discovery: Some(discovery),
        })
    }
}

/// `pub`/`sub --topic`: a plain participant with one data writer or reader on that topic and
/// nothing of `ddsperf`'s (no ping or pong endpoints, no benchmark USER_DATA), so a `ping`
/// of the same domain neither pings it nor waits for its pongs.
pub struct DataNode<T: PerfSample> {
    pub writer: Option<DataWriter<T>>,
    pub reader: Option<DataReader<T>>,
    /// When the participant was created.
    pub created: Instant,
    /// Declared last: dropped after the endpoints.
    #[allow(dead_code)]
    participant: DomainParticipant,
}

impl<T: PerfSample> DataNode<T> {
    /// Joins the domain with a writer (`pub`) or a reader (`sub`) on `topic`.
    pub fn new(
        a: &PerfArgs,
        topic: &str,
        reader: bool,
    ) -> Result<DataNode<T>, Box<dyn std::error::Error>> {
        let created = Instant::now();
        let (settings, _) = participant_settings(a, Vec::new())?;
        let participant = DomainParticipant::with_settings(a.domain, &settings)?;
        let qos = EndpointQos::from_args(a);
        let topic = participant.create_topic::<T>(topic)?;
        let (writer, reader) = if reader {
            let s = participant.create_subscriber()?;
            (None, Some(s.create_datareader(&topic, qos.data_reader)?))
        } else {
            let p = participant.create_publisher()?;
            (Some(p.create_datawriter(&topic, qos.data_writer)?), None)
        };
        Ok(DataNode {
            writer,
            reader,
            created,
            participant,
        })
    }
}

impl<T: PerfSample> DataNode<T> {
    /// One participant with a writer and a reader of `topic` that match each other
    /// (`write-take --same-participant`: no `ignore_local`).
    pub fn pair(a: &PerfArgs, topic: &str) -> Result<DataNode<T>, Box<dyn std::error::Error>> {
        let created = Instant::now();
        let (settings, _) = participant_settings(a, Vec::new())?;
        let participant = DomainParticipant::with_settings(a.domain, &settings)?;
        let qos = EndpointQos::from_args(a);
        let topic = participant.create_topic::<T>(topic)?;
        let p = participant.create_publisher()?;
        let writer = p.create_datawriter(&topic, qos.data_writer.ignore_local(false))?;
        let s = participant.create_subscriber()?;
        let reader = s.create_datareader(&topic, qos.data_reader.ignore_local(false))?;
        Ok(DataNode {
            writer: Some(writer),
            reader: Some(reader),
            created,
            participant,
        })
    }
}

impl<T: PerfSample> Drop for Node<T> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.stopping.set_trigger_value(true);
        if let Some(h) = self.discovery.take() {
            let _ = h.join();
        }
    }
}

/// The discovery thread: a pong writer for every benchmark participant that appears, in a
/// publisher whose partition is that participant's GUID.
fn make_pong_writers<T: PerfSample>(
    participant: &DomainParticipant,
    topic: &Topic<T>,
    qos: DataWriterQos,
    pongs: &PongWriters<T>,
    stop: &AtomicBool,
    stopping: &GuardCondition,
) {
    let reader = participant.builtin_participants_reader();
    // Waits for the reader's news or the node's end, not polled: a poll every 10 ms put 200
    // wake-ups a second of the two processes into a one-vCPU ping-pong's tail (a WaitSet is
    // woken by its own reader's events only, not by the pings).
    let news = reader.create_readcondition(
        SampleStateMask::NOT_READ,
        ViewStateMask::ANY,
        InstanceStateMask::ANY,
    );
    let mut waitset = WaitSet::new();
    if let Err(e) = waitset
        .attach_condition(&news)
        .and_then(|()| waitset.attach_condition(stopping))
    {
        eprintln!("perf: the discovery thread cannot wait: {e}");
        return;
    }
    let mut publishers = HashMap::new();
    while !stop.load(Ordering::Relaxed) {
        // A timeout (or a failed wait) only means another look.
        let _ = waitset.wait(Duration::from_secs(1));
        let samples = match reader.take(usize::MAX) {
            Ok(s) if !s.is_empty() => s,
            _ => continue,
        };
        for s in samples {
            let prefix =
                tachyon::builtin::BuiltinTopicKey::from_instance_handle(s.info.instance_handle)
                    .guid()
                    .prefix;
            match (&s.data, s.info.instance_state) {
                (Some(p), InstanceState::Alive) if is_benchmark_participant(&p.user_data) => {
                    if publishers.contains_key(&prefix) {
                        continue;
                    }
                    let partition = guid_partition(prefix);
                    let made = participant
                        .create_publisher_with_qos(PublisherQos::default().partition(&[partition]))
                        .and_then(|p| Ok((p.create_datawriter(topic, qos.clone())?, p)));
                    match made {
                        Ok((w, p)) => {
                            publishers.insert(prefix, p);
                            let old = pongs.replace(prefix, Some(Arc::new(w)));
                            drop(old);
                        }
                        Err(e) => eprintln!("perf: no pong writer for {prefix}: {e}"),
                    }
                }
                (_, InstanceState::Alive) => {}
                _ => {
                    let old = pongs.replace(prefix, None);
                    drop(old);
                    publishers.remove(&prefix);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_names_are_ddsperfs_guid_strings() {
        let p = GuidPrefix([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0xab, 0xcd]);
        assert_eq!(guid_partition(p), "01020304_05060708_090aabcd_000001c1");
    }

    #[test]
    fn critical_sets_the_threshold_and_a_priority_above_it() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            args: PerfArgs,
        }
        let parse = |v: &[&str]| Cli::try_parse_from(v).unwrap().args;
        if std::env::var_os(tachyon::config::CONFIG_ENV).is_some() {
            return; // a configuration file may set its own threshold
        }
        let (s, c) = participant_settings(&parse(&["perf", "ping", "--critical"]), vec![]).unwrap();
        assert_eq!(s.threads.critical_priority, Some(CRITICAL_THRESHOLD));
        assert_eq!(
            c,
            Some(Critical {
                threshold: CRITICAL_THRESHOLD,
                transport_priority: CRITICAL_THRESHOLD + 1
            })
        );
        let (s, c) = participant_settings(&parse(&["perf", "ping"]), vec![]).unwrap();
        assert_eq!((s.threads.critical_priority, c), (None, None));
    }

    #[test]
    fn benchmark_participants_are_told_by_their_user_data() {
        assert!(is_benchmark_participant(b"DDSPerf:0:4331:vm"));
        assert!(is_benchmark_participant(b"DDSPerf:1:17:host:with:colons"));
        assert!(is_benchmark_participant(&user_data(true)));
        assert!(!is_benchmark_participant(b"DDSPerf:x:1:h"));
        assert!(!is_benchmark_participant(b"DDSPerf:0:1"));
        assert!(!is_benchmark_participant(b"something else"));
        assert!(!is_benchmark_participant(&[0xff, 0xfe]));
    }
}
