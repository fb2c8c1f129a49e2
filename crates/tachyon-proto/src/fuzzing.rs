//! Support for the endpoint fuzz target and property test (not a public API).
//!
//! [`run_ops`] reads a sequence of operations from arbitrary bytes — well-formed submessages
//! with hostile field values (DATA, DATA_FRAG, HEARTBEAT, HEARTBEAT_FRAG, GAP, ACKNACK,
//! NACK_FRAG, INFO_DST, INFO_TS), raw garbage, corrupted messages, writes, takes and time
//! jumps — and plays them against a participant with a reliable keyed writer, a reliable
//! KEEP_ALL reader and a best-effort KEEP_LAST reader, all matched with a remote participant.
//! After every operation it checks the invariants and panics when one breaks: resource limits
//! hold, and no reader delivers a sample twice or out of order.

use std::collections::{HashMap, HashSet};

use tachyon_cdr::KeyHash;
use tachyon_wire::{
    Count, DataFragSpec, DataSpec, EntityId, EntityKind, FragmentNumber, FragmentNumberSet, Guid,
    GuidPrefix, Header, InlineQos, Locator, MessageBuilder, PayloadKind, ProtocolVersion,
    SequenceNumber, SequenceNumberSet, Time, VendorId,
};

use crate::endpoint::{ReaderConfig, Reliability, RemoteReader, RemoteWriter, WriterConfig};
use crate::frag::ReassemblyLimits;
use crate::history::{
    Durability, History, Payload, Query, ReaderHistoryConfig, ResourceLimits, Sample,
    WriterHistoryConfig,
};
use crate::participant::{Participant, ParticipantConfig};
use crate::time::{Duration, Instant};
use crate::transmit::TxBuf;
use crate::writer::WriteRequest;

/// Reads fields from the fuzz input; zeros once it runs out.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }
    fn take(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.0.len());
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        a
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// A sequence number biased toward small values (where the interesting things happen),
    /// sometimes huge or non-positive.
    fn sn(&mut self) -> SequenceNumber {
        match self.u8() % 9 {
            0 => SequenceNumber(i64::from(self.u32() as i32)),
            8 => SequenceNumber(i64::MAX - i64::from(self.u8())),
            1 => SequenceNumber(i64::from(self.u32()) << 16),
            _ => SequenceNumber(i64::from(self.u8() % 80)),
        }
    }
}

/// Limits the harness configures, and checks.
const READER_MAX_SAMPLES: usize = 64;
const READER_MAX_INSTANCES: usize = 8;
const OUT_OF_ORDER: usize = 64;
const WRITER_MAX_SAMPLES: usize = 32;
const REASSEMBLY: ReassemblyLimits = ReassemblyLimits {
    max_sample_size: 64 * 1024,
    max_total_bytes: 128 * 1024,
    max_in_progress: 4,
};

/// What a fuzz run did (for the property test to check it exercised something).
#[derive(Clone, Copy, Debug, Default)]
pub struct Outcome {
    /// Operations played.
    pub ops: usize,
    /// Samples the readers delivered and the harness took.
    pub taken: usize,
    /// Datagrams the participant sent.
    pub sent: usize,
}

struct Harness {
    p: Participant,
    now: Instant,
    buf: TxBuf,
    writer: EntityId,
    reliable: EntityId,
    best_effort: EntityId,
    remote: GuidPrefix,
    remote_writer: EntityId,
    remote_reader: EntityId,
    /// Per reader and instance, the last sequence number taken; per reader every one taken.
    last: HashMap<(EntityId, KeyHash), u64>,
    seen: HashSet<(EntityId, u64)>,
    out: Vec<Sample>,
    sent: usize,
    taken: usize,
    marker: u8,
}

fn key(k: u8) -> KeyHash {
    let mut h = [0u8; 16];
    h[0] = k % 12;
    KeyHash(h)
}

impl Harness {
    fn new() -> Harness {
        let mut p = Participant::new(GuidPrefix([1; 12]), ParticipantConfig::default());
        let wcfg = WriterConfig {
            keyed: true,
            history: WriterHistoryConfig {
                history: History::KeepAll,
                limits: ResourceLimits {
                    max_samples: Some(WRITER_MAX_SAMPLES),
                    max_instances: Some(4),
                    max_samples_per_instance: Some(16),
                },
                durability: Durability::TransientLocal,
            },
            nack_response_delay: Duration::from_millis(1),
            ..WriterConfig::default()
        };
        let rcfg = ReaderConfig {
            reliability: Reliability::Reliable,
            keyed: true,
            history: ReaderHistoryConfig {
                history: History::KeepAll,
                limits: ResourceLimits {
                    max_samples: Some(READER_MAX_SAMPLES),
                    max_instances: Some(READER_MAX_INSTANCES),
                    max_samples_per_instance: Some(32),
                },
                ..ReaderHistoryConfig::default()
            },
            durability: Durability::TransientLocal,
            max_out_of_order: OUT_OF_ORDER,
            reassembly: REASSEMBLY,
            deadline: Some(Duration::from_millis(50)),
            ..ReaderConfig::default()
        };
        let becfg = ReaderConfig {
            reliability: Reliability::BestEffort,
            history: ReaderHistoryConfig {
                history: History::KeepLast(2),
                limits: ResourceLimits {
                    max_instances: Some(READER_MAX_INSTANCES),
                    ..ResourceLimits::default()
                },
                ..ReaderHistoryConfig::default()
            },
            time_based_filter: Some(Duration::from_millis(2)),
            ..rcfg.clone()
        };
        let writer = p.create_writer(wcfg).unwrap_or(EntityId::UNKNOWN);
        let reliable = p.create_reader(rcfg).unwrap_or(EntityId::UNKNOWN);
        let best_effort = p.create_reader(becfg).unwrap_or(EntityId::UNKNOWN);
        let remote = GuidPrefix([2; 12]);
        let remote_writer = EntityId::new([0, 1, 2], EntityKind::USER_WRITER_WITH_KEY);
        let remote_reader = EntityId::new([0, 1, 7], EntityKind::USER_READER_WITH_KEY);
        let loc = Locator::udp(([10, 0, 0, 2], 7411).into());
        let now = Instant::ZERO;
        let rw = RemoteWriter {
            guid: Guid::new(remote, remote_writer),
            unicast_locators: vec![loc],
            reliability: Reliability::Reliable,
            durability: Durability::TransientLocal,
            liveliness: crate::endpoint::Liveliness {
                kind: crate::endpoint::LivelinessKind::ManualByTopic,
                lease_duration: Some(Duration::from_millis(100)),
            },
            ownership_strength: 0,
            lifespan: None,
            group: None,
            vendor: tachyon_wire::VendorId::UNKNOWN,
        };
        let _ = p.match_writer(now, reliable, rw.clone());
        let _ = p.match_writer(now, best_effort, rw);
        let _ = p.match_reader(
            now,
            writer,
            RemoteReader {
                guid: Guid::new(remote, remote_reader),
                unicast_locators: vec![loc],
                multicast_locators: vec![],
                reliability: Reliability::Reliable,
                durability: Durability::TransientLocal,
            },
        );
        Harness {
            p,
            now,
            buf: TxBuf::new(65_536),
            writer,
            reliable,
            best_effort,
            remote,
            remote_writer,
            remote_reader,
            last: HashMap::new(),
            seen: HashSet::new(),
            out: Vec::new(),
            sent: 0,
            taken: 0,
            marker: 0,
        }
    }

    /// One operation from the input.
    fn op(&mut self, b: &mut Bytes<'_>) {
        match b.u8() % 12 {
            0..=5 => self.message(b),
            6 => {
                // Raw bytes behind a valid header.
                let n = usize::from(b.u8());
                let mut msg = self.header_bytes();
                msg.extend_from_slice(b.take(n));
                self.p.handle_datagram(self.now, &Locator::INVALID, &msg);
            }
            7 => {
                let ms = u64::from(b.u16() % 2000);
                self.now += Duration::from_millis(ms);
            }
            8 => {
                let len = 12 + usize::from(b.u16() % 4000);
                let mut v = vec![0u8, 1, 0, 0];
                v.resize(len, 0xab);
                let req = WriteRequest::data(key(b.u8() % 6), Time::ZERO, Payload::from(v));
                let _ = self.p.write(self.now, self.writer, req);
            }
            9 => {
                let _ = self.p.assert_writer_liveliness(self.now, self.writer);
            }
            _ => self.take_all(),
        }
        self.drive();
        self.check();
    }

    fn header_bytes(&self) -> Vec<u8> {
        let mut v = b"RTPS".to_vec();
        v.extend_from_slice(&[2, 5, 0x01, 0x0f]);
        v.extend_from_slice(&self.remote.0);
        v
    }

    /// A message of 1..4 submessages with hostile values, possibly corrupted afterwards.
    fn message(&mut self, b: &mut Bytes<'_>) {
        let header = Header {
            protocol_version: ProtocolVersion::V2_5,
            vendor_id: VendorId([0x01, 0x0f]),
            guid_prefix: self.remote,
        };
        let mut raw = vec![0u8; 8192];
        // A message to corrupt carries payloads marked unverifiable (encapsulation options
        // 0x00cc): a flipped sequence number must not look like a duplicate delivery.
        let corrupt = b.u8() % 8 == 0;
        self.marker = if corrupt { 0xcc } else { 0 };
        let len = {
            let Ok(mut mb) = MessageBuilder::new(&mut raw, &header) else {
                return;
            };
            for _ in 0..1 + b.u8() % 4 {
                let _ = self.submessage(b, &mut mb);
            }
            mb.finish()
        };
        raw.truncate(len);
        if corrupt && !raw.is_empty() {
            let at = usize::from(b.u16()) % raw.len();
            raw[at] ^= b.u8() | 1;
        }
        self.p.handle_datagram(self.now, &Locator::INVALID, &raw);
    }

    fn submessage(
        &mut self,
        b: &mut Bytes<'_>,
        mb: &mut MessageBuilder<'_>,
    ) -> Result<(), tachyon_wire::EmitError> {
        let w = self.remote_writer;
        let local_reader = match b.u8() % 4 {
            0 => EntityId::UNKNOWN,
            1 => self.reliable,
            2 => self.best_effort,
            _ => EntityId::new([9, 9, 9], EntityKind::USER_READER_WITH_KEY),
        };
        match b.u8() % 10 {
            0 | 1 => {
                let sn = b.sn();
                let status = match b.u8() % 6 {
                    0 => Some(1),
                    1 => Some(2),
                    2 => Some(3),
                    _ => None,
                };
                let kh = (b.u8() % 4 != 0).then(|| key(b.u8()).0);
                let qos = InlineQos::new(kh, status);
                let mut payload = vec![0u8, 1, 0, self.marker];
                payload.extend_from_slice(&(sn.0 as u64).to_le_bytes());
                payload.resize(12 + usize::from(b.u16() % 600), 0x5a);
                let kind = match (status, b.u8() % 8) {
                    (_, 0) => PayloadKind::None,
                    (Some(_), _) => PayloadKind::Key,
                    (None, _) => PayloadKind::Data,
                };
                mb.info_ts(Some(Time::ZERO))?;
                mb.data(&DataSpec {
                    reader_id: local_reader,
                    writer_id: w,
                    writer_sn: sn,
                    inline_qos: Some(qos.as_bytes()),
                    kind,
                    payload: &payload,
                })
            }
            2 => {
                let sn = b.sn();
                let fragment_size = [1u16, 100, 1024, 1344, 0][usize::from(b.u8() % 5)];
                let sample_size = match b.u8() % 4 {
                    0 => b.u32(),
                    _ => u32::from(b.u16()),
                };
                let start = 1 + u32::from(b.u8() % 40);
                let count = u16::from(b.u8() % 4);
                let mut data = Vec::new();
                // Fragment 1 starts with the sequence number when it can hold it; samples
                // that do not start with an encapsulation header are not checked for order.
                if start == 1 && fragment_size >= 12 {
                    data.extend_from_slice(&[0, 1, 0, self.marker]);
                    data.extend_from_slice(&(sn.0 as u64).to_le_bytes());
                }
                data.resize(usize::from(fragment_size) * usize::from(count), 0x33);
                let kh = key(b.u8());
                let qos = InlineQos::new(Some(kh.0), None);
                mb.data_frag(&DataFragSpec {
                    reader_id: local_reader,
                    writer_id: w,
                    writer_sn: sn,
                    fragment_starting_num: start,
                    fragment_size,
                    sample_size,
                    inline_qos: (start == 1).then_some(qos.as_bytes()),
                    key: false,
                    fragments: &data,
                })
            }
            3 => {
                let (first, last) = (b.sn(), b.sn());
                let count = Count(i32::from(b.u8()));
                let flags = b.u8();
                mb.heartbeat(
                    local_reader,
                    w,
                    first,
                    last,
                    count,
                    flags & 1 != 0,
                    flags & 2 != 0,
                )
            }
            4 => {
                let start = b.sn();
                let mut list = SequenceNumberSet::empty(b.sn());
                for _ in 0..b.u8() % 8 {
                    let off = i64::from(b.u8());
                    list.insert(SequenceNumber(list.base.0.saturating_add(off)));
                }
                mb.gap(local_reader, w, start, &list)
            }
            5 => {
                let (sn, last) = (b.sn(), u32::from(b.u8()));
                mb.heartbeat_frag(
                    local_reader,
                    w,
                    sn,
                    FragmentNumber(last),
                    Count(i32::from(b.u8())),
                )
            }
            6 => {
                let mut state = SequenceNumberSet::empty(b.sn());
                for _ in 0..b.u8() % 8 {
                    let off = i64::from(b.u8());
                    state.insert(SequenceNumber(state.base.0.saturating_add(off)));
                }
                let count = Count(i32::from(b.u8()));
                mb.acknack(
                    self.remote_reader,
                    self.writer,
                    &state,
                    count,
                    b.u8() % 2 == 0,
                )
            }
            7 => {
                let sn = b.sn();
                let mut set = FragmentNumberSet::empty(FragmentNumber(u32::from(b.u8())));
                for _ in 0..b.u8() % 8 {
                    set.insert(FragmentNumber(set.base.0 + u32::from(b.u8())));
                }
                let count = Count(i32::from(b.u8()));
                mb.nack_frag(self.remote_reader, self.writer, sn, &set, count)
            }
            8 => {
                let to = if b.u8() % 2 == 0 {
                    self.p.guid_prefix()
                } else {
                    GuidPrefix([7; 12])
                };
                mb.info_dst(to)
            }
            _ => mb.info_ts(if b.u8() % 2 == 0 {
                None
            } else {
                Some(Time::INVALID)
            }),
        }
    }

    /// Polls outputs until quiet and fires due timers (bounded, so a livelock is a failure).
    fn drive(&mut self) {
        for _ in 0..64 {
            let mut n = 0;
            while self.p.poll_transmit(self.now, &mut self.buf).is_some() {
                n += 1;
                self.sent += 1;
                assert!(n < 100_000, "poll_transmit does not run dry");
            }
            match self.p.poll_timeout() {
                Some(at) if at <= self.now => self.p.handle_timeout(self.now),
                _ => break,
            }
        }
        while self.p.poll_event().is_some() {}
    }

    fn take_all(&mut self) {
        for reader in [self.reliable, self.best_effort] {
            let mut out = std::mem::take(&mut self.out);
            let _ = self.p.take(self.now, reader, &Query::ANY, &mut out);
            for s in &out {
                let Some(d) = &s.data else { continue };
                let Some(sn) = d.get(4..12).and_then(|v| <[u8; 8]>::try_from(v).ok()) else {
                    continue;
                };
                let sn = u64::from_le_bytes(sn);
                // Every DATA built here, and fragment 1 of every DATA_FRAG, starts with the
                // encapsulation header and its own sequence number.
                if d.get(..4) != Some(&[0, 1, 0, 0][..]) {
                    continue;
                }
                assert!(
                    self.seen.insert((reader, sn)),
                    "reader {reader:?} delivered sequence number {sn} twice"
                );
                let last = self
                    .last
                    .entry((reader, s.info.instance_handle))
                    .or_insert(0);
                assert!(sn > *last, "reader {reader:?} delivered {sn} after {last}");
                *last = sn;
                self.taken += 1;
            }
            self.out = out;
        }
    }

    fn check(&self) {
        for reader in [self.reliable, self.best_effort] {
            if let Some(h) = self.p.reader_history(reader) {
                assert!(
                    h.len() <= READER_MAX_SAMPLES,
                    "reader holds {} samples",
                    h.len()
                );
                assert!(h.instance_count() <= READER_MAX_INSTANCES);
            }
            if let Some((_, bytes)) = self.p.reader_reassembly(reader) {
                assert!(
                    bytes <= REASSEMBLY.max_total_bytes,
                    "reassembly holds {bytes}"
                );
            }
            if let Some(n) = self.p.reader_pending(reader) {
                assert!(n <= OUT_OF_ORDER, "{n} samples held out of order");
            }
        }
        if let Some(h) = self.p.writer_history(self.writer) {
            assert!(h.len() <= WRITER_MAX_SAMPLES);
        }
    }
}

/// Plays the operations encoded in `data`; panics if an invariant breaks.
pub fn run_ops(data: &[u8]) -> Outcome {
    let mut h = Harness::new();
    let mut b = Bytes(data);
    let mut ops = 0;
    while !b.is_empty() && ops < 4096 {
        h.op(&mut b);
        ops += 1;
    }
    h.take_all();
    Outcome {
        ops,
        taken: h.taken,
        sent: h.sent,
    }
}
