//! DDS applications for simulated hosts: a writing [`Source`] and a taking [`Sink`] that checks
//! every sample it gets arrives once, in order, intact.
#![allow(dead_code)] // each test binary uses a different subset

use tachyon_cdr::KeyHash;
use tachyon_proto::history::{
    ChangeKind, Durability, History, InstanceState, Payload, Query, ReaderHistoryConfig,
    ResourceLimits, Sample, WriteError, WriterHistoryConfig,
};
use tachyon_proto::{
    Duration, Error, Event, Instant, Participant, ParticipantConfig, ReaderConfig, Reliability,
    RemoteReader, RemoteWriter, WriteRequest, WriterConfig,
};
use tachyon_sim::{udp4, App, Host, NodeId, Sim};
use tachyon_wire::{EntityId, Guid, GuidPrefix, Locator, Time};

/// The unicast locator of host `n`.
pub fn locator(n: u8) -> Locator {
    udp4([10, 0, 0, n], 7411)
}

/// The multicast group readers may share.
pub fn group() -> Locator {
    udp4([239, 255, 0, 1], 7401)
}

pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

pub fn secs(n: u64) -> Instant {
    Instant::ZERO + Duration::from_secs(n)
}

/// A participant on host `n`.
pub fn participant(n: u8) -> Participant {
    let mut p = [0u8; 12];
    p[0] = 0x01;
    p[1] = 0xf0;
    p[11] = n;
    Participant::new(GuidPrefix(p), ParticipantConfig::default())
}

/// The wire timestamp of `now` (the simulated wall clock starts at the epoch).
pub fn timestamp(now: Instant) -> Time {
    let n = now.as_nanos();
    Time {
        seconds: i32::try_from(n / 1_000_000_000).unwrap_or(i32::MAX),
        fraction: (((n % 1_000_000_000) << 32) / 1_000_000_000) as u32,
    }
}

/// The instance handle of key `k` (a fake key hash: the key in the first bytes).
pub fn instance(k: u32) -> KeyHash {
    let mut h = [0u8; 16];
    h[..4].copy_from_slice(&k.to_be_bytes());
    KeyHash(h)
}

/// A payload of `size` bytes (at least 12, rounded up to a multiple of 4 as CDR payloads are:
/// DATA pads its submessage to 4 bytes) carrying index `i`, with a checkable pattern.
pub fn payload(i: u64, size: usize) -> Payload {
    let size = size.max(12).div_ceil(4) * 4;
    let mut v = Vec::with_capacity(size);
    v.extend_from_slice(&[0, 1, 0, 0]); // CDR_LE encapsulation
    v.extend_from_slice(&i.to_le_bytes());
    v.extend((12..size).map(|j| (i as usize).wrapping_mul(31).wrapping_add(j) as u8));
    Payload::from(v)
}

/// The index a [`payload`] carries, or `None` if it is corrupt.
pub fn check(p: &[u8]) -> Option<u64> {
    let i = u64::from_le_bytes(p.get(4..12)?.try_into().ok()?);
    let ok = p[12..]
        .iter()
        .enumerate()
        .all(|(j, &b)| b == (i as usize).wrapping_mul(31).wrapping_add(j + 12) as u8);
    ok.then_some(i)
}

/// The reader's view of a writer on host `n`.
pub fn remote_writer(guid: Guid, n: u8, cfg: &WriterConfig) -> RemoteWriter {
    RemoteWriter {
        guid,
        unicast_locators: vec![locator(n)],
        reliability: cfg.reliability,
        durability: cfg.history.durability,
        liveliness: cfg.liveliness,
        ownership_strength: 0,
        lifespan: None,
        group: None,
        vendor: tachyon_wire::VendorId::UNKNOWN,
    }
}

/// The writer's view of a reader on host `n`.
pub fn remote_reader(guid: Guid, n: u8, cfg: &ReaderConfig, multicast: bool) -> RemoteReader {
    RemoteReader {
        guid,
        unicast_locators: vec![locator(n)],
        multicast_locators: if multicast { vec![group()] } else { vec![] },
        reliability: cfg.reliability,
        durability: cfg.durability,
    }
}

pub fn reliable_keep_all_writer(window: usize) -> WriterConfig {
    WriterConfig {
        reliability: Reliability::Reliable,
        history: WriterHistoryConfig {
            history: History::KeepAll,
            limits: ResourceLimits {
                max_samples: Some(window),
                ..ResourceLimits::default()
            },
            durability: Durability::Volatile,
        },
        ..WriterConfig::default()
    }
}

pub fn reliable_keep_all_reader() -> ReaderConfig {
    ReaderConfig {
        reliability: Reliability::Reliable,
        history: ReaderHistoryConfig {
            history: History::KeepAll,
            ..ReaderHistoryConfig::default()
        },
        ..ReaderConfig::default()
    }
}

/// Writes `total` samples as fast as flow control lets it (or one per `interval`).
pub struct Source {
    pub writer: EntityId,
    pub total: u64,
    pub written: u64,
    pub size_of: fn(u64) -> usize,
    pub instance_of: fn(u64) -> u32,
    pub interval: Option<Duration>,
    pub next_at: Instant,
    /// Times `write` said "would block".
    pub blocked: u64,
    /// The last write would have blocked: wait for an input (an acknowledgement), not a timer.
    pub waiting: bool,
    pub last_sn: i64,
    /// Every event the writer's participant reported.
    pub events: Vec<Event>,
}

impl Source {
    pub fn new(writer: EntityId, total: u64, size_of: fn(u64) -> usize) -> Source {
        Source {
            writer,
            total,
            written: 0,
            size_of,
            instance_of: |_| 0,
            interval: None,
            next_at: Instant::ZERO,
            blocked: 0,
            waiting: false,
            last_sn: 0,
            events: Vec::new(),
        }
    }

    pub fn done(&self) -> bool {
        self.written == self.total
    }
}

impl App for Source {
    fn on_event(&mut self, _: Instant, _: &mut Participant, event: Event) {
        self.events.push(event);
    }

    fn run(&mut self, now: Instant, p: &mut Participant) {
        while self.written < self.total && now >= self.next_at {
            let i = self.written;
            let req = WriteRequest::data(
                instance((self.instance_of)(i)),
                timestamp(now),
                payload(i, (self.size_of)(i)),
            );
            match p.write(now, self.writer, req) {
                Ok(sn) => {
                    self.waiting = false;
                    self.written += 1;
                    self.last_sn = sn.0;
                    if let Some(d) = self.interval {
                        self.next_at = now + d;
                    }
                }
                Err(Error::Write(WriteError::WouldBlock { .. })) => {
                    self.blocked += 1;
                    self.waiting = true;
                    return;
                }
                Err(e) => panic!("write failed: {e}"),
            }
        }
    }

    fn next_wake(&self) -> Option<Instant> {
        (self.interval.is_some() && self.written < self.total && !self.waiting)
            .then_some(self.next_at)
    }
}

/// Takes every sample on DATA_AVAILABLE (or, when slow, a few per period) and checks them.
#[derive(Default)]
pub struct Sink {
    pub reader: EntityId,
    /// Valid samples taken.
    pub received: u64,
    /// Index of the last sample taken.
    pub last: Option<u64>,
    /// Samples taken that were not after the previous one (duplicates or out of order).
    pub disorder: u64,
    /// Samples whose content did not match their index.
    pub corrupt: u64,
    /// SAMPLE_LOST counts.
    pub lost: u64,
    /// Instance-state changes seen (invalid samples): (instance, state).
    pub state_changes: Vec<(KeyHash, InstanceState)>,
    /// Indices taken, when recording.
    pub record: Option<Vec<u64>>,
    /// Slow reader: take at most `take_max` every `take_every`.
    pub take_every: Option<Duration>,
    pub take_max: usize,
    pub take_at: Instant,
    pub matched: usize,
    /// When the last valid sample was taken.
    pub last_at: Instant,
    /// Most samples one take returned.
    pub max_batch: usize,
    /// Every event other than DATA_AVAILABLE.
    pub events: Vec<Event>,
    buf: Vec<Sample>,
}

impl Sink {
    pub fn new(reader: EntityId) -> Sink {
        Sink {
            reader,
            ..Sink::default()
        }
    }

    pub fn recording(mut self) -> Sink {
        self.record = Some(Vec::new());
        self
    }

    pub fn slow(mut self, every: Duration, max: usize) -> Sink {
        self.take_every = Some(every);
        self.take_max = max;
        self
    }

    fn take(&mut self, now: Instant, p: &mut Participant, max: usize) {
        let mut buf = std::mem::take(&mut self.buf);
        p.take(now, self.reader, &Query::ANY.max_samples(max), &mut buf)
            .expect("take");
        self.max_batch = self.max_batch.max(buf.len());
        for s in &buf {
            let Some(data) = &s.data else {
                self.state_changes
                    .push((s.info.instance_handle, s.info.instance_state));
                continue;
            };
            let Some(i) = check(data) else {
                self.corrupt += 1;
                continue;
            };
            if self.last.is_some_and(|l| i <= l) {
                self.disorder += 1;
            }
            self.last = Some(i);
            self.received += 1;
            self.last_at = now;
            if let Some(r) = &mut self.record {
                r.push(i);
            }
        }
        self.buf = buf;
    }
}

impl App for Sink {
    fn on_event(&mut self, now: Instant, p: &mut Participant, event: Event) {
        if !matches!(event, Event::DataAvailable { .. }) {
            self.events.push(event.clone());
        }
        match event {
            Event::DataAvailable { .. } if self.take_every.is_none() => {
                self.take(now, p, usize::MAX)
            }
            Event::SampleLost { count, .. } => self.lost += count,
            Event::SubscriptionMatched { current_count, .. } => self.matched = current_count,
            _ => {}
        }
    }

    fn run(&mut self, now: Instant, p: &mut Participant) {
        if let Some(every) = self.take_every {
            if now >= self.take_at {
                self.take(now, p, self.take_max);
                self.take_at = now + every;
            }
        }
    }

    fn next_wake(&self) -> Option<Instant> {
        self.take_every.map(|_| self.take_at)
    }
}

/// Adds a host running `app` at address `n`.
pub fn add_host<A: App>(sim: &mut Sim, n: u8, participant: Participant, app: A) -> NodeId {
    sim.add_node(Host::new(participant, app), [locator(n)])
        .expect("fresh host")
}

pub fn host<A: App>(sim: &Sim, id: NodeId) -> &Host<A> {
    sim.node::<Host<A>>(id).expect("host of that type")
}

pub fn host_mut<A: App>(sim: &mut Sim, id: NodeId) -> &mut Host<A> {
    sim.node_mut::<Host<A>>(id).expect("host of that type")
}

/// A writer on host 1 and a reader on host 2, created and matched with each other.
pub struct Linked {
    pub wp: Participant,
    pub w: EntityId,
    pub rp: Participant,
    pub r: EntityId,
}

/// Creates a [`Linked`] writer and reader with these configurations (unicast).
pub fn linked(wcfg: &WriterConfig, rcfg: &ReaderConfig) -> Linked {
    let (mut wp, mut rp) = (participant(1), participant(2));
    let w = wp.create_writer(*wcfg).expect("writer");
    let r = rp.create_reader(rcfg.clone()).expect("reader");
    connect(
        Instant::ZERO,
        &mut wp,
        w,
        1,
        wcfg,
        &mut rp,
        r,
        2,
        rcfg,
        false,
    );
    Linked { wp, w, rp, r }
}

/// Matches writer `w` on host `wn` with reader `r` on host `rn` in both directions.
#[allow(clippy::too_many_arguments)]
pub fn connect(
    now: Instant,
    wp: &mut Participant,
    w: EntityId,
    wn: u8,
    wcfg: &WriterConfig,
    rp: &mut Participant,
    r: EntityId,
    rn: u8,
    rcfg: &ReaderConfig,
    multicast: bool,
) {
    let wg = wp.guid(w);
    let rg = rp.guid(r);
    wp.match_reader(now, w, remote_reader(rg, rn, rcfg, multicast))
        .expect("writer exists");
    rp.match_writer(now, r, remote_writer(wg, wn, wcfg))
        .expect("reader exists");
}

/// A change that disposes or unregisters instance `k`.
pub fn instance_change(kind: ChangeKind, k: u32, now: Instant) -> WriteRequest {
    WriteRequest {
        kind,
        instance: instance(k),
        source_timestamp: timestamp(now),
        payload: Payload::default(),
    }
}
