//! A matched reader that reads another representation than its writer writes (an XCDR1-only
//! Fast DDS 2.x reader of an XCDR2 writer) gets every change on its own, converted by the
//! writer's transcoder: new data, repairs and fragments alike, while the other readers keep
//! getting the writer's own bytes through the fan-out. Here the "conversion" is a marker the
//! test can recognise; the typed API converts between XCDR versions.

use std::sync::Arc;

use tachyon_proto::history::{ChangeKind, Durability, History, Payload, WriterHistoryConfig};
use tachyon_proto::qos::DataRepresentation;
use tachyon_proto::{
    Destination, Duration, Instant, Participant, ParticipantConfig, Reliability, RemoteReader,
    Transcoder, TxBuf, WriteRequest, WriterConfig,
};
use tachyon_wire::{
    Count, EntityId, Guid, GuidPrefix, Header, Locator, MessageBuilder, MessageView,
    ProtocolVersion, SequenceNumber, SequenceNumberSet, SubmessageView, Time, VendorId,
};

const WRITER_PREFIX: GuidPrefix = GuidPrefix([1; 12]);
/// A reader of the writer's own representation.
const PLAIN: GuidPrefix = GuidPrefix([2; 12]);
/// A reader of another representation.
const OTHER: GuidPrefix = GuidPrefix([3; 12]);
const READER_ID: EntityId = EntityId([0, 0, 1, 7]);

fn locator(port: u16) -> Locator {
    Locator::udp(([127, 0, 0, 1], port).into())
}

fn port_of(prefix: GuidPrefix) -> u16 {
    if prefix == PLAIN {
        7413
    } else {
        7414
    }
}

/// The test's "conversion": the bytes reversed, behind a marker (lengths stay multiples of
/// 4, as serialized payloads are).
fn converted(bytes: &[u8]) -> Vec<u8> {
    let mut out = b"XC1:".to_vec();
    out.extend(bytes.iter().rev());
    out
}

fn marker_transcoder() -> Transcoder {
    Arc::new(|bytes: &[u8], to: DataRepresentation, _: &Guid| {
        assert_eq!(to, DataRepresentation::Xcdr1);
        Some(converted(bytes))
    })
}

fn remote(prefix: GuidPrefix, reliability: Reliability) -> RemoteReader {
    RemoteReader {
        guid: Guid::new(prefix, READER_ID),
        unicast_locators: vec![locator(port_of(prefix))],
        multicast_locators: vec![],
        reliability,
        durability: Durability::Volatile,
    }
}

/// A writer matched with the given readers; those in `other` read XCDR1 converted.
fn writer(
    config: WriterConfig,
    readers: &[(GuidPrefix, Reliability)],
    transcoder: Option<Transcoder>,
) -> (Participant, EntityId) {
    let mut p = Participant::new(WRITER_PREFIX, ParticipantConfig::default());
    let w = p.create_writer(config).expect("writer");
    p.set_writer_transcoder(w, transcoder).expect("transcoder");
    for &(prefix, reliability) in readers {
        let r = remote(prefix, reliability);
        let guid = r.guid;
        p.match_reader(Instant::ZERO, w, r).expect("match");
        if prefix == OTHER {
            p.set_reader_representation(Instant::ZERO, w, &guid, Some(DataRepresentation::Xcdr1));
        }
    }
    (p, w)
}

/// A reliable writer matched with a reader of each kind, its first heartbeats sent.
fn both_readers(transcoder: Option<Transcoder>) -> (Participant, EntityId) {
    both_readers_with(reliable(), transcoder)
}

/// [`both_readers`] with a writer configured so.
fn both_readers_with(
    config: WriterConfig,
    transcoder: Option<Transcoder>,
) -> (Participant, EntityId) {
    let (mut p, w) = writer(
        config,
        &[
            (PLAIN, Reliability::Reliable),
            (OTHER, Reliability::Reliable),
        ],
        transcoder,
    );
    let _ = sent(&mut p, Instant::ZERO);
    (p, w)
}

/// A writer matched with one best-effort reader of the other representation.
fn best_effort_alone(config: WriterConfig) -> (Participant, EntityId) {
    writer(
        config,
        &[(OTHER, Reliability::BestEffort)],
        Some(marker_transcoder()),
    )
}

fn reliable() -> WriterConfig {
    WriterConfig {
        reliability: Reliability::Reliable,
        keyed: true,
        ..WriterConfig::default()
    }
}

fn sample(p: &mut Participant, w: EntityId, now: Instant, key: u8, bytes: &[u8]) {
    let mut k = [0u8; 16];
    k[0] = key;
    let req = WriteRequest::data(
        tachyon_cdr::KeyHash(k),
        Time {
            seconds: 1,
            fraction: 0,
        },
        Payload::from(bytes.to_vec()),
    );
    p.write(now, w, req).expect("write");
}

/// What one datagram carried to one destination.
#[derive(Debug, Default)]
struct Sent {
    /// (sequence number, payload) of every DATA.
    data: Vec<(i64, Vec<u8>)>,
    /// (sequence number, sample size, first fragment, bytes) of every DATA_FRAG.
    frags: Vec<(i64, u32, u32, Vec<u8>)>,
    /// Sequence numbers starting a GAP.
    gaps: Vec<i64>,
    heartbeats: usize,
    /// Heartbeats with the liveliness flag.
    liveliness: usize,
    /// The sequence number of every DATA and DATA_FRAG, in the order sent.
    order: Vec<i64>,
    /// Whether the DATA were addressed to this reader (INFO_DST and reader id).
    addressed: bool,
}

/// Everything sent at `now`, by destination port.
fn sent(p: &mut Participant, now: Instant) -> std::collections::BTreeMap<u16, Sent> {
    let mut buf = TxBuf::new(65_536);
    let mut out = std::collections::BTreeMap::<u16, Sent>::new();
    while let Some(t) = p.poll_transmit(now, &mut buf) {
        let ports: Vec<u16> = match &t.destination {
            Destination::Unicast(l) => vec![l.port as u16],
            Destination::Many(ls) => ls.iter().map(|l| l.port as u16).collect(),
            other => panic!("unexpected destination {other:?}"),
        };
        let m = MessageView::new_checked(buf.datagram(&t)).expect("valid message");
        for port in ports {
            let s = out.entry(port).or_default();
            for sub in m.submessages() {
                match sub.expect("valid submessage") {
                    SubmessageView::InfoDst(d) => {
                        s.addressed |= d.guid_prefix() == OTHER || d.guid_prefix() == PLAIN;
                    }
                    SubmessageView::Data(d) => {
                        let payload = d.serialized_payload().unwrap_or(&[]).to_vec();
                        s.data.push((d.writer_sn().0, payload));
                        s.order.push(d.writer_sn().0);
                        s.addressed &= d.reader_id() == READER_ID;
                    }
                    SubmessageView::DataFrag(d) => {
                        s.order.push(d.writer_sn().0);
                        s.frags.push((
                            d.writer_sn().0,
                            d.sample_size(),
                            d.fragment_starting_num().0,
                            d.payload().to_vec(),
                        ));
                    }
                    SubmessageView::Gap(g) => s.gaps.push(g.gap_start().0),
                    SubmessageView::Heartbeat(h) => {
                        s.heartbeats += 1;
                        s.liveliness += usize::from(h.liveliness());
                    }
                    _ => {}
                }
            }
        }
    }
    out
}

fn acknack(writer: EntityId, from: GuidPrefix, base: i64, missing: &[i64], count: i32) -> Vec<u8> {
    let header = Header {
        protocol_version: ProtocolVersion::V2_5,
        vendor_id: VendorId::FAST_DDS,
        guid_prefix: from,
    };
    let mut buf = vec![0u8; 256];
    let mut mb = MessageBuilder::new(&mut buf, &header).expect("header");
    mb.info_dst(WRITER_PREFIX).expect("info_dst");
    let mut state = SequenceNumberSet::empty(SequenceNumber(base));
    for &sn in missing {
        assert!(state.insert(SequenceNumber(sn)));
    }
    mb.acknack(READER_ID, writer, &state, Count(count), false)
        .expect("acknack");
    let n = mb.finish();
    buf.truncate(n);
    buf
}

#[test]
fn new_data_goes_converted_to_the_reader_of_another_representation_and_unchanged_to_the_rest() {
    let (mut p, w) = both_readers(Some(marker_transcoder()));
    let now = Instant::ZERO;
    let samples: [&[u8]; 3] = [
        b"\x00\x01\x00\x00one!",
        b"\x00\x01\x00\x00two!",
        b"\x00\x01\x00\x00three!!!",
    ];
    for (i, s) in samples.iter().enumerate() {
        sample(&mut p, w, now, i as u8, s);
    }
    let out = sent(&mut p, now);
    let plain = &out[&7413];
    let other = &out[&7414];
    let want_plain: Vec<(i64, Vec<u8>)> = samples
        .iter()
        .enumerate()
        .map(|(i, s)| (i as i64 + 1, s.to_vec()))
        .collect();
    let want_other: Vec<(i64, Vec<u8>)> = samples
        .iter()
        .enumerate()
        .map(|(i, s)| (i as i64 + 1, converted(s)))
        .collect();
    assert_eq!(
        plain.data, want_plain,
        "the writer's own bytes to its own kind"
    );
    assert_eq!(other.data, want_other, "converted, each once");
    assert!(other.addressed, "sent to that reader alone");
    assert!(other.heartbeats >= 1, "a heartbeat addressed to it follows");
    assert_eq!(p.writer_stats(w).expect("stats").transcoded, 3);
}

#[test]
fn repairs_to_that_reader_are_converted_too() {
    let (mut p, w) = writer(
        reliable(),
        &[(OTHER, Reliability::Reliable)],
        Some(marker_transcoder()),
    );
    let mut now = Instant::ZERO;
    let _ = sent(&mut p, now);
    sample(&mut p, w, now, 1, b"\x00\x01\x00\x00first...");
    sample(&mut p, w, now, 2, b"\x00\x01\x00\x00second..");
    let _ = sent(&mut p, now);
    now += Duration::from_secs(1);
    p.handle_datagram(now, &locator(7414), &acknack(w, OTHER, 1, &[1, 2], 1));
    now += Duration::from_secs(1);
    p.handle_timeout(now);
    let out = sent(&mut p, now);
    assert_eq!(
        out[&7414].data,
        vec![
            (1, converted(b"\x00\x01\x00\x00first...")),
            (2, converted(b"\x00\x01\x00\x00second.."))
        ]
    );
    // Acknowledged: the history lets them go.
    p.handle_datagram(now, &locator(7414), &acknack(w, OTHER, 3, &[], 2));
    assert_eq!(p.writer_history(w).expect("history").len(), 0);
}

#[test]
fn a_large_sample_goes_to_that_reader_in_fragments_of_its_converted_form() {
    let config = WriterConfig {
        max_datagram: 1400,
        fragment_size: 1000,
        ..reliable()
    };
    let (mut p, w) = both_readers_with(config, Some(marker_transcoder()));
    let now = Instant::ZERO;
    let big: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
    sample(&mut p, w, now, 1, &big);
    let out = sent(&mut p, now);
    let reassemble = |s: &Sent, size: usize| {
        let mut bytes = vec![0u8; size];
        for (sn, sample_size, first, data) in &s.frags {
            assert_eq!(*sn, 1);
            assert_eq!(*sample_size as usize, size);
            let at = (*first as usize - 1) * 1000;
            bytes[at..at + data.len()].copy_from_slice(data);
        }
        bytes
    };
    assert_eq!(reassemble(&out[&7413], big.len()), big);
    let want = converted(&big);
    assert_eq!(reassemble(&out[&7414], want.len()), want);
    assert_eq!(
        p.writer_stats(w).expect("stats").transcoded,
        1,
        "converted once for all its fragments"
    );
}

#[test]
fn a_best_effort_reader_served_alone_gets_everything_and_the_history_is_released() {
    let config = WriterConfig {
        reliability: Reliability::BestEffort,
        history: WriterHistoryConfig {
            history: History::KeepAll,
            ..WriterHistoryConfig::default()
        },
        keyed: true,
        ..WriterConfig::default()
    };
    let (mut p, w) = best_effort_alone(config);
    let now = Instant::ZERO;
    for i in 0..5u8 {
        sample(&mut p, w, now, i, &[0, 1, 0, 0, i, 0, 0, 0]);
    }
    let out = sent(&mut p, now);
    let sns: Vec<i64> = out[&7414].data.iter().map(|d| d.0).collect();
    assert_eq!(sns, vec![1, 2, 3, 4, 5]);
    assert_eq!(out[&7414].data[4].1, converted(&[0, 1, 0, 0, 4, 0, 0, 0]));
    assert_eq!(p.writer_history(w).expect("history").len(), 0);
}

#[test]
fn a_dispose_reaches_that_reader_with_the_key_hash_alone() {
    let (mut p, w) = both_readers(Some(marker_transcoder()));
    let now = Instant::ZERO;
    let req = WriteRequest {
        kind: ChangeKind::NotAliveDisposed,
        instance: tachyon_cdr::KeyHash([7; 16]),
        source_timestamp: Time {
            seconds: 1,
            fraction: 0,
        },
        payload: Payload::from(b"\x00\x01\x00\x00key!".to_vec()),
    };
    p.write(now, w, req).expect("dispose");
    let out = sent(&mut p, now);
    assert_eq!(out[&7413].data, vec![(1, b"\x00\x01\x00\x00key!".to_vec())]);
    assert_eq!(out[&7414].data, vec![(1, Vec::new())], "no serialized key");
}

#[test]
fn a_sample_that_cannot_be_converted_becomes_a_gap_for_that_reader() {
    let refusing: Transcoder = Arc::new(|_: &[u8], _, _| None);
    let (mut p, w) = both_readers(Some(refusing));
    let now = Instant::ZERO;
    sample(&mut p, w, now, 1, b"\x00\x01\x00\x00data");
    let out = sent(&mut p, now);
    assert_eq!(out[&7413].data.len(), 1);
    assert!(out[&7414].data.is_empty());
    assert_eq!(out[&7414].gaps, vec![1]);
    assert_eq!(p.writer_stats(w).expect("stats").transcode_failures, 1);
}

#[test]
fn a_large_sample_is_not_overtaken_by_the_next_one() {
    // A best-effort Fast DDS reader drops a sample older than the newest it has: the fragments
    // of a large sample must all go before the sample written after it.
    let config = WriterConfig {
        reliability: Reliability::BestEffort,
        max_datagram: 1400,
        fragment_size: 1000,
        keyed: true,
        ..WriterConfig::default()
    };
    let (mut p, w) = best_effort_alone(config);
    let now = Instant::ZERO;
    let big: Vec<u8> = vec![5; 6000];
    sample(&mut p, w, now, 1, &big);
    // Only the first fragments go before the next write.
    let mut buf = TxBuf::new(65_536);
    assert!(p.poll_transmit(now, &mut buf).is_some());
    sample(&mut p, w, now, 2, b"\x00\x01\x00\x00next");
    sample(&mut p, w, now, 3, &big);
    let out = sent(&mut p, now);
    let order = &out[&7414].order;
    let first_two = order.iter().position(|&sn| sn == 2).expect("sample 2 sent");
    assert!(
        order[..first_two].iter().all(|&sn| sn == 1)
            && order[first_two + 1..].iter().all(|&sn| sn == 3),
        "in sequence order: {order:?}"
    );
    let last_one = out[&7414]
        .frags
        .iter()
        .filter(|f| f.0 == 1)
        .map(|f| f.2)
        .max();
    assert_eq!(
        last_one,
        Some(7),
        "every fragment of sample 1 (6004 octets converted)"
    );
}

#[test]
fn what_the_fan_out_had_not_sent_goes_to_a_reader_that_leaves_it() {
    // Batching holds samples back; the reader then turns out to read another representation.
    let config = WriterConfig {
        batch_delay: Some(Duration::from_millis(10)),
        ..reliable()
    };
    let (mut p, w) = writer(
        config,
        &[(PLAIN, Reliability::Reliable)],
        Some(marker_transcoder()),
    );
    let now = Instant::ZERO;
    let _ = sent(&mut p, now);
    sample(&mut p, w, now, 1, b"\x00\x01\x00\x00held");
    sample(&mut p, w, now, 2, b"\x00\x01\x00\x00back");
    assert!(
        sent(&mut p, now).values().all(|s| s.order.is_empty()),
        "held by batching"
    );
    let reader = Guid::new(PLAIN, READER_ID);
    p.set_reader_representation(now, w, &reader, Some(DataRepresentation::Xcdr1));
    let out = sent(&mut p, now);
    assert_eq!(
        out[&7413].data,
        vec![
            (1, converted(b"\x00\x01\x00\x00held")),
            (2, converted(b"\x00\x01\x00\x00back"))
        ]
    );
    // Later writes go to it alone too, at once (nothing left to batch with).
    sample(&mut p, w, now, 3, b"\x00\x01\x00\x00more");
    let out = sent(&mut p, now);
    assert_eq!(out[&7413].order, vec![3]);
}

#[test]
fn a_liveliness_assertion_reaches_a_reader_served_alone() {
    let config = WriterConfig {
        liveliness: tachyon_proto::Liveliness {
            kind: tachyon_proto::LivelinessKind::ManualByTopic,
            lease_duration: Some(Duration::from_secs(1)),
        },
        ..reliable()
    };
    let (mut p, w) = both_readers_with(config, Some(marker_transcoder()));
    let now = Instant::ZERO;
    p.assert_writer_liveliness(now, w).expect("assert");
    let out = sent(&mut p, now);
    assert_eq!(out[&7413].liveliness, 1, "through the fan-out");
    assert_eq!(out[&7414].liveliness, 1, "addressed to it");
}
