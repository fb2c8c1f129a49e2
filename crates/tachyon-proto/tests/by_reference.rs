//! Samples handed by reference between participants of one process (`tachyon_proto::local`):
//! to in-process locators a large sample's DATA carries no payload, and the reader keeps the
//! writer's buffer; the same DATA from anywhere else is refused and counted, and one whose
//! sample the writer no longer keeps is not taken as received. And samples in shared memory
//! (`tachyon_proto::shared`): to shared-memory locators a DATA carries the payload's reference,
//! which the reader's resolver turns back into the bytes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tachyon_cdr::KeyHash;
use tachyon_proto::history::{
    Durability, History, Payload, Query, SharedBytes, WriterHistoryConfig,
};
use tachyon_proto::local::{BY_REFERENCE_MIN, MAX_SAMPLES};
use tachyon_proto::shared::{Resolved, SampleResolver};
use tachyon_proto::{
    Destination, Instant, Liveliness, Participant, ParticipantConfig, ReaderConfig, Reliability,
    RemoteReader, RemoteWriter, TxBuf, WriteRequest, WriterConfig,
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

/// A locator of the shared-memory transport.
fn shm(participant: u8) -> Locator {
    Locator {
        kind: Locator::KIND_TACHYON_SHM,
        ..in_process(participant)
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
    pair_on(n, in_process, Reliability::BestEffort)
}

/// A writer (prefix `n`) and reader of `reliability` matched through the locators `at` gives.
fn pair_on(n: u8, at: fn(u8) -> Locator, reliability: Reliability) -> Pair {
    let mut a = Participant::new(GuidPrefix([n; 12]), ParticipantConfig::default());
    let w = a
        .create_writer(WriterConfig {
            reliability,
            history: WriterHistoryConfig {
                history: History::KeepLast(1),
                durability: Durability::Volatile,
                ..WriterHistoryConfig::default()
            },
            ..WriterConfig::default()
        })
        .expect("writer");
    let (b, r) = reader_of(&mut a, w, n, n + 1, at, reliability);
    Pair {
        a,
        b,
        w,
        r,
        buf: TxBuf::new(65_536),
    }
}

/// A participant of prefix `m` with a reader of `reliability` matched with writer `w` of `a`
/// (prefix `n`) through the locators `at` gives.
fn reader_of(
    a: &mut Participant,
    w: EntityId,
    n: u8,
    m: u8,
    at: fn(u8) -> Locator,
    reliability: Reliability,
) -> (Participant, EntityId) {
    let mut b = Participant::new(GuidPrefix([m; 12]), ParticipantConfig::default());
    let r = b
        .create_reader(ReaderConfig {
            reliability,
            ..ReaderConfig::default()
        })
        .expect("reader");
    let now = Instant::ZERO;
    a.match_reader(
        now,
        w,
        RemoteReader {
            guid: b.guid(r),
            unicast_locators: vec![at(m)],
            multicast_locators: vec![],
            reliability,
            durability: Durability::Volatile,
        },
    )
    .expect("match reader");
    b.match_writer(
        now,
        r,
        RemoteWriter {
            guid: a.guid(w),
            unicast_locators: vec![at(n)],
            reliability,
            durability: Durability::Volatile,
            liveliness: Liveliness::default(),
            ownership_strength: 0,
            lifespan: None,
            group: None,
            vendor: tachyon_wire::VendorId::TACHYON,
        },
    )
    .expect("match writer");
    (b, r)
}

impl Pair {
    /// Writes a sample of `size` bytes (encapsulation header, then `fill`); returns its
    /// datagrams.
    fn write(&mut self, size: usize, fill: u8) -> Vec<Vec<u8>> {
        self.write_payload(Payload::from(sample(size, fill)))
    }

    fn write_payload(&mut self, payload: Payload) -> Vec<Vec<u8>> {
        let req = WriteRequest::data(KeyHash::default(), Time::ZERO, payload);
        self.a.write(Instant::ZERO, self.w, req).expect("write");
        self.transmits(Instant::ZERO)
    }

    fn transmits(&mut self, now: Instant) -> Vec<Vec<u8>> {
        self.transmits_to(now).into_iter().map(|(_, d)| d).collect()
    }

    /// The datagrams the writer sends now, with their destinations.
    fn transmits_to(&mut self, now: Instant) -> Vec<(Destination, Vec<u8>)> {
        let mut out = Vec::new();
        while let Some(t) = self.a.poll_transmit(now, &mut self.buf) {
            out.push((t.destination.clone(), self.buf.datagram(&t).to_vec()));
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

/// `size` bytes: an encapsulation header, then `fill`.
fn sample(size: usize, fill: u8) -> Vec<u8> {
    let mut bytes = vec![fill; size];
    bytes[..4].copy_from_slice(&[0, 1, 0, 0]);
    bytes
}

/// A sample "in shared memory": its bytes, and a reference naming it.
struct InShm {
    bytes: Vec<u8>,
    reference: [u8; 8],
}

impl SharedBytes for InShm {
    fn bytes(&self) -> &[u8] {
        &self.bytes
    }
    fn reference(&self) -> Option<&[u8]> {
        Some(&self.reference)
    }
    fn release(&mut self) {}
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

/// Resolves the references it knows; counts what it was asked.
#[derive(Default)]
struct Resolver {
    known: Mutex<HashMap<Vec<u8>, Payload>>,
    asked: Mutex<Vec<Vec<u8>>>,
}

impl SampleResolver for Resolver {
    fn resolve(&self, reference: &[u8]) -> Resolved {
        self.asked.lock().unwrap().push(reference.to_vec());
        match self.known.lock().unwrap().get(reference) {
            Some(p) => Resolved::Sample(p.clone()),
            None => Resolved::Missed("unknown"),
        }
    }
}

fn shared_payload(size: usize, fill: u8, id: u8) -> Payload {
    Payload::from_shared(Box::new(InShm {
        bytes: sample(size, fill),
        reference: [id; 8],
    }))
}

#[test]
fn a_sample_in_shared_memory_goes_as_its_reference_to_shared_memory_readers() {
    let mut p = pair_on(40, shm, Reliability::BestEffort);
    let resolver = Arc::new(Resolver::default());
    p.b.set_sample_resolver(resolver.clone());
    let payload = shared_payload(1 << 20, 5, 1);
    resolver
        .known
        .lock()
        .unwrap()
        .insert(vec![1; 8], payload.clone());
    let datagrams = p.write_payload(payload.clone());
    assert_eq!(datagrams.len(), 1, "one datagram, no fragments");
    assert!(datagrams[0].len() < 200, "{} bytes", datagrams[0].len());
    p.b.handle_datagram(Instant::ZERO, &shm(40), &datagrams[0]);
    assert_eq!(*resolver.asked.lock().unwrap(), vec![vec![1u8; 8]]);
    let mut got = Vec::new();
    p.b.take(Instant::ZERO, p.r, &Query::ANY, &mut got)
        .expect("take");
    let held = got[0].data.as_ref().expect("data");
    assert!(
        held.ptr_eq(&payload),
        "the resolver's payload itself, not a copy"
    );
    // A payload without a reference goes by value, whatever the transport; a small one too.
    let plain = p.write(64 * 1024, 6);
    assert!(plain.len() > 1, "fragmented by value");
}

#[test]
fn a_shared_reference_elsewhere_is_malformed_and_a_miss_is_repaired_by_value() {
    // Through the in-process transport or UDP, the parameter means nothing.
    let mut p = pair_on(50, shm, Reliability::BestEffort);
    let resolver = Arc::new(Resolver::default());
    p.b.set_sample_resolver(resolver.clone());
    for from in [in_process(50), Locator::udp(([127, 0, 0, 1], 7411).into())] {
        let datagrams = p.write_payload(shared_payload(4096, 1, 2));
        p.b.handle_datagram(Instant::ZERO, &from, &datagrams[0]);
    }
    assert!(p.take().is_empty());
    assert_eq!(p.b.reader_stats(p.r).expect("reader").malformed, 2);
    assert!(resolver.asked.lock().unwrap().is_empty());

    // Reliable: a reference the resolver cannot resolve is not received; the repair the
    // reader asks for comes by value.
    let mut p = pair_on(60, shm, Reliability::Reliable);
    let resolver = Arc::new(Resolver::default());
    p.b.set_sample_resolver(resolver.clone());
    let mut now = Instant::ZERO;
    let mut to_b = p.write_payload(shared_payload(256, 9, 3));
    let mut got = Vec::new();
    for _ in 0..50 {
        for d in to_b.drain(..) {
            p.b.handle_datagram(now, &shm(60), &d);
        }
        got.extend(p.take());
        if !got.is_empty() {
            break;
        }
        now += tachyon_proto::Duration::from_millis(100);
        p.a.handle_timeout(now);
        p.b.handle_timeout(now);
        let mut buf = TxBuf::new(65_536);
        while let Some(t) = p.b.poll_transmit(now, &mut buf) {
            p.a.handle_datagram(now, &shm(61), buf.datagram(&t));
        }
        to_b = p.transmits(now);
    }
    assert_eq!(got, vec![sample(256, 9)], "repaired by value");
    let stats = p.b.reader_stats(p.r).expect("reader");
    assert_eq!((stats.by_reference_missed, stats.malformed), (1, 0));
}

/// A UDP locator of participant `n`.
fn udp(n: u8) -> Locator {
    Locator::udp(([127, 0, 0, n], 7411).into())
}

#[test]
fn shared_memory_readers_get_the_reference_while_others_get_the_bytes() {
    let mut p = pair_on(70, shm, Reliability::BestEffort);
    let (mut c, rc) = reader_of(&mut p.a, p.w, 70, 72, udp, Reliability::BestEffort);
    let resolver = Arc::new(Resolver::default());
    p.b.set_sample_resolver(resolver.clone());
    let payload = shared_payload(64 * 1024, 4, 7);
    resolver
        .known
        .lock()
        .unwrap()
        .insert(vec![7; 8], payload.clone());
    let goes_to = |d: &Destination, l: Locator| match d {
        Destination::Unicast(u) => *u == l,
        Destination::Many(ls) => ls.contains(&l),
        Destination::Multicast(_) => false,
    };
    // A sample not in shared memory: one datagram to both; then one in shared memory: in
    // fragments to UDP only, then its reference, small, to shared memory only.
    for (payload, size, to_udp_n) in [
        (Payload::from(sample(100, 2)), 100, 1),
        (payload, 64 * 1024, 2),
    ] {
        let req = WriteRequest::data(KeyHash::default(), Time::ZERO, payload);
        p.a.write(Instant::ZERO, p.w, req).expect("write");
        let sent = p.transmits_to(Instant::ZERO);
        let to_udp: Vec<&Vec<u8>> = sent
            .iter()
            .filter(|(d, _)| goes_to(d, udp(72)))
            .map(|(_, d)| d)
            .collect();
        let to_shm: Vec<&Vec<u8>> = sent
            .iter()
            .filter(|(d, _)| goes_to(d, shm(71)))
            .map(|(_, d)| d)
            .collect();
        assert!(
            to_udp.len() >= to_udp_n,
            "{size} B: {} datagrams to UDP",
            to_udp.len()
        );
        assert_eq!(to_shm.len(), 1, "{size} B: one datagram to shared memory");
        assert!(
            to_shm[0].len() < 200,
            "{size} B: {} bytes to shared memory",
            to_shm[0].len()
        );
        for d in &to_udp {
            c.handle_datagram(Instant::ZERO, &udp(70), d);
        }
        p.b.handle_datagram(Instant::ZERO, &shm(70), to_shm[0]);
        let mut got_c = Vec::new();
        c.take(Instant::ZERO, rc, &Query::ANY, &mut got_c)
            .expect("take");
        let got_c: Vec<usize> = got_c
            .iter()
            .filter_map(|s| s.data.as_ref().map(|p| p.len()))
            .collect();
        assert_eq!(got_c, vec![size], "by value over UDP");
        assert_eq!(
            p.take().iter().map(Vec::len).collect::<Vec<_>>(),
            vec![size]
        );
    }
    assert_eq!(
        *resolver.asked.lock().unwrap(),
        vec![vec![7u8; 8]],
        "one reference resolved"
    );
}
