//! Samples handed by reference between participants of one process (`tachyon_proto::local`):
//! to in-process locators a large sample's DATA carries no payload, and the reader keeps the
//! writer's buffer; the same DATA from anywhere else is refused and counted, and one whose
//! sample the writer no longer keeps is not taken as received.

use tachyon_cdr::KeyHash;
use tachyon_proto::history::{Durability, History, Payload, Query, WriterHistoryConfig};
use tachyon_proto::local::{BY_REFERENCE_MIN, MAX_SAMPLES};
use tachyon_proto::{
    Instant, Liveliness, Participant, ParticipantConfig, ReaderConfig, Reliability, RemoteReader,
    RemoteWriter, TxBuf, WriteRequest, WriterConfig,
};
use tachyon_wire::{EntityId, GuidPrefix, Locator, Time};

/// A locator of the in-process transport (its kind is what counts).
fn in_process(participant: u8) -> Locator {
    Locator {
        kind: Locator::KIND_TACHYON_INTRA,
        port: 1,
        address: [participant; 16],
    }
}

struct Pair {
    a: Participant,
    b: Participant,
    w: EntityId,
    r: EntityId,
    buf: TxBuf,
}

/// A best-effort writer (prefix `n`) and reader matched through in-process locators.
fn pair(n: u8) -> Pair {
    let mut a = Participant::new(GuidPrefix([n; 12]), ParticipantConfig::default());
    let mut b = Participant::new(GuidPrefix([n + 1; 12]), ParticipantConfig::default());
    let w = a
        .create_writer(WriterConfig {
            reliability: Reliability::BestEffort,
            history: WriterHistoryConfig {
                history: History::KeepLast(1),
                durability: Durability::Volatile,
                ..WriterHistoryConfig::default()
            },
            ..WriterConfig::default()
        })
        .expect("writer");
    let r = b
        .create_reader(ReaderConfig {
            reliability: Reliability::BestEffort,
            ..ReaderConfig::default()
        })
        .expect("reader");
    let now = Instant::ZERO;
    a.match_reader(
        now,
        w,
        RemoteReader {
            guid: b.guid(r),
            unicast_locators: vec![in_process(n + 1)],
            multicast_locators: vec![],
            reliability: Reliability::BestEffort,
            durability: Durability::Volatile,
        },
    )
    .expect("match reader");
    b.match_writer(
        now,
        r,
        RemoteWriter {
            guid: a.guid(w),
            unicast_locators: vec![in_process(n)],
            reliability: Reliability::BestEffort,
            durability: Durability::Volatile,
            liveliness: Liveliness::default(),
            ownership_strength: 0,
            lifespan: None,
            group: None,
            vendor: tachyon_wire::VendorId::TACHYON,
        },
    )
    .expect("match writer");
    Pair {
        a,
        b,
        w,
        r,
        buf: TxBuf::new(65_536),
    }
}

impl Pair {
    /// Writes a sample of `size` bytes (encapsulation header, then `fill`); returns its
    /// datagrams.
    fn write(&mut self, size: usize, fill: u8) -> Vec<Vec<u8>> {
        let mut bytes = vec![fill; size];
        bytes[..4].copy_from_slice(&[0, 1, 0, 0]);
        let req = WriteRequest::data(KeyHash::default(), Time::ZERO, Payload::from(bytes));
        self.a.write(Instant::ZERO, self.w, req).expect("write");
        let mut out = Vec::new();
        while let Some(t) = self.a.poll_transmit(Instant::ZERO, &mut self.buf) {
            out.push(self.buf.datagram(&t).to_vec());
        }
        out
    }

    fn take(&mut self) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        self.b
            .take(Instant::ZERO, self.r, &Query::ANY, &mut out)
            .expect("take");
        out.into_iter()
            .filter_map(|s| s.data.map(|p| p.as_bytes().to_vec()))
            .collect()
    }
}

#[test]
fn a_large_sample_in_process_goes_by_reference_and_is_not_copied() {
    let mut p = pair(10);
    let size = 1 << 20;
    let datagrams = p.write(size, 7);
    assert_eq!(datagrams.len(), 1, "one datagram, no fragments");
    assert!(datagrams[0].len() < 200, "{} bytes", datagrams[0].len());
    let stats = p.a.writer_stats(p.w).expect("writer");
    assert_eq!((stats.data_by_reference, stats.fragments_sent), (1, 0));
    p.b.handle_datagram(Instant::ZERO, &in_process(10), &datagrams[0]);
    let got = p.take();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].len(), size);
    assert!(got[0][4..].iter().all(|&b| b == 7));
    // A sample below the threshold is copied as ever.
    let small = p.write(BY_REFERENCE_MIN - 1, 3);
    assert!(
        small.iter().map(Vec::len).sum::<usize>() > BY_REFERENCE_MIN,
        "{:?}",
        small.iter().map(Vec::len).collect::<Vec<_>>()
    );
    for d in &small {
        p.b.handle_datagram(Instant::ZERO, &in_process(10), d);
    }
    let got = p.take();
    assert_eq!(got.len(), 1, "{:?}", p.b.reader_stats(p.r));
    assert_eq!(got[0].len(), BY_REFERENCE_MIN - 1);
}

#[test]
fn a_reference_from_outside_the_process_is_refused_and_counted() {
    let mut p = pair(20);
    let datagrams = p.write(64 * 1024, 1);
    let udp = Locator::udp(([127, 0, 0, 1], 7411).into());
    p.b.handle_datagram(Instant::ZERO, &udp, &datagrams[0]);
    assert!(p.take().is_empty());
    assert_eq!(p.b.reader_stats(p.r).expect("reader").malformed, 1);
}

#[test]
fn a_sample_the_writer_no_longer_keeps_is_not_received() {
    let mut p = pair(30);
    let first = p.write(8 * 1024, 1);
    for i in 0..MAX_SAMPLES {
        let _ = p.write(8 * 1024, (i % 200) as u8 + 2);
    }
    p.b.handle_datagram(Instant::ZERO, &in_process(30), &first[0]);
    assert!(p.take().is_empty());
    let stats = p.b.reader_stats(p.r).expect("reader");
    assert_eq!((stats.by_reference_missed, stats.malformed), (1, 0));
}
