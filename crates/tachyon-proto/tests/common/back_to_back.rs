#![allow(dead_code)] // the bench and the test use different parts
//! One writer and one reader wired back to back in one thread: write → poll_transmit →
//! handle_datagram → take, with the acknowledgements flowing back. Shared by the endpoint
//! benchmark and the allocation test.

use tachyon_cdr::KeyHash;
use tachyon_proto::history::{
    Durability, History, PayloadPool, Query, ReaderHistoryConfig, ResourceLimits, Sample,
    WriterHistoryConfig,
};
use tachyon_proto::{
    Duration, Instant, Liveliness, Participant, ParticipantConfig, ReaderConfig, Reliability,
    RemoteReader, RemoteWriter, TxBuf, WriteRequest, WriterConfig,
};
use tachyon_wire::{EntityId, GuidPrefix, Locator, Time};

pub struct BackToBack {
    pub a: Participant,
    pub b: Participant,
    pub w: EntityId,
    pub r: EntityId,
    buf: TxBuf,
    now: Instant,
    out: Vec<Sample>,
    pool: PayloadPool,
    data: Vec<u8>,
    src: Locator,
}

impl BackToBack {
    /// A writer and a reader, both reliable or both best effort, exchanging `size`-byte samples.
    pub fn new(reliable: bool, size: usize) -> BackToBack {
        let reliability = if reliable {
            Reliability::Reliable
        } else {
            Reliability::BestEffort
        };
        let mut a = Participant::new(GuidPrefix([1; 12]), ParticipantConfig::default());
        let mut b = Participant::new(GuidPrefix([2; 12]), ParticipantConfig::default());
        let wcfg = WriterConfig {
            reliability,
            history: WriterHistoryConfig {
                history: History::KeepAll,
                limits: ResourceLimits {
                    max_samples: Some(1024),
                    ..ResourceLimits::default()
                },
                durability: Durability::Volatile,
            },
            ..WriterConfig::default()
        };
        let rcfg = ReaderConfig {
            reliability,
            history: ReaderHistoryConfig {
                history: History::KeepLast(16),
                ..ReaderHistoryConfig::default()
            },
            ..ReaderConfig::default()
        };
        let w = a.create_writer(wcfg).expect("writer");
        let r = b.create_reader(rcfg.clone()).expect("reader");
        let la = Locator::udp(([127, 0, 0, 1], 7411).into());
        let lb = Locator::udp(([127, 0, 0, 1], 7413).into());
        let now = Instant::ZERO;
        a.match_reader(
            now,
            w,
            RemoteReader {
                guid: b.guid(r),
                unicast_locators: vec![lb],
                multicast_locators: vec![],
                reliability,
                durability: Durability::Volatile,
            },
        )
        .expect("match");
        b.match_writer(
            now,
            r,
            RemoteWriter {
                guid: a.guid(w),
                unicast_locators: vec![la],
                reliability,
                durability: Durability::Volatile,
                liveliness: Liveliness::default(),
                ownership_strength: 0,
                lifespan: None,
                group: None,
                vendor: tachyon_wire::VendorId::UNKNOWN,
            },
        )
        .expect("match");
        let mut data = vec![0u8; size.max(4)];
        data[..4].copy_from_slice(&[0, 1, 0, 0]);
        let mut t = BackToBack {
            a,
            b,
            w,
            r,
            buf: TxBuf::new(65_536),
            now,
            out: Vec::with_capacity(64),
            pool: PayloadPool::new(),
            data,
            src: la,
        };
        t.pump();
        t
    }

    /// The same, the writer matched with a second, unicast-only reader elsewhere (which
    /// never answers: best effort only): every datagram goes to two locators.
    pub fn with_second_reader(size: usize) -> BackToBack {
        let mut t = BackToBack::new(false, size);
        let guid = tachyon_wire::Guid::new(GuidPrefix([3; 12]), t.r);
        let at = Locator::udp(([127, 0, 0, 1], 7415).into());
        t.a.match_reader(
            t.now,
            t.w,
            RemoteReader {
                guid,
                unicast_locators: vec![at],
                multicast_locators: vec![],
                reliability: Reliability::BestEffort,
                durability: Durability::Volatile,
            },
        )
        .expect("match");
        t.pump();
        t
    }

    /// Moves datagrams both ways until both sides are quiet, firing due timers.
    fn pump(&mut self) {
        loop {
            let mut moved = false;
            while let Some(t) = self.a.poll_transmit(self.now, &mut self.buf) {
                self.b
                    .handle_datagram(self.now, &self.src, self.buf.datagram(&t));
                moved = true;
            }
            while let Some(t) = self.b.poll_transmit(self.now, &mut self.buf) {
                self.a
                    .handle_datagram(self.now, &self.src, self.buf.datagram(&t));
                moved = true;
            }
            if self.a.poll_timeout().is_some_and(|t| t <= self.now) {
                self.a.handle_timeout(self.now);
                moved = true;
            }
            if self.b.poll_timeout().is_some_and(|t| t <= self.now) {
                self.b.handle_timeout(self.now);
                moved = true;
            }
            if !moved {
                break;
            }
        }
        while self.a.poll_event().is_some() {}
        while self.b.poll_event().is_some() {}
    }

    /// One sample end to end; returns how many samples the reader took (1).
    pub fn step(&mut self) -> usize {
        self.now += Duration::from_micros(1);
        let mut m = self.pool.alloc(self.data.len());
        m.as_mut_slice().copy_from_slice(&self.data);
        let req = WriteRequest::data(KeyHash::default(), Time::ZERO, m.freeze());
        self.a.write(self.now, self.w, req).expect("write");
        self.pump();
        let n = self
            .b
            .take(self.now, self.r, &Query::ANY, &mut self.out)
            .expect("take");
        self.out.clear();
        n
    }

    /// Samples the writer still holds.
    pub fn writer_held(&self) -> usize {
        self.a.writer_history(self.w).map_or(0, |h| h.len())
    }
}
