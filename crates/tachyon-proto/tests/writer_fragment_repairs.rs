//! How a reliable writer sends and repairs a sample in fragments: a HEARTBEAT_FRAG every 64
//! fragments even when fragments fill their datagrams (then alone, in a datagram of its own);
//! repairs asked for by NACK_FRAG followed, not preceded, by the HEARTBEAT that makes the
//! reader ask for what is still missing; and, while a reader asks for fragments, a periodic
//! heartbeat ten times as often.

use tachyon_cdr::KeyHash;
use tachyon_proto::history::Payload;
use tachyon_proto::{
    Duration, Instant, Participant, Reliability, TxBuf, WriteRequest, WriterConfig,
};
use tachyon_wire::{
    Count, EntityId, FragmentNumber, FragmentNumberSet, GuidPrefix, Header, MessageBuilder,
    MessageView, ProtocolVersion, SequenceNumber, SubmessageView, Time, VendorId,
};

#[path = "common/one_reader.rs"]
mod one_reader;
use one_reader::{reader_locator, writer_with_reader, READER_ID, READER_PREFIX};
/// The largest fragment a writer takes with 1472-octet datagrams. RTPS header, INFO_TS and a
/// DATA_FRAG of one fragment with a key hash inline: 1448 octets, no room left for a
/// HEARTBEAT_FRAG (28).
const FRAGMENT: u16 = 1356;
/// 148 fragments.
const SIZE: usize = 200_000;

fn at(ms: u64) -> Instant {
    Instant::ZERO.saturating_add(Duration::from_millis(ms))
}

fn writer() -> (Participant, EntityId) {
    let (mut p, w) = writer_with_reader(WriterConfig {
        reliability: Reliability::Reliable,
        keyed: true,
        max_datagram: 1472,
        fragment_size: FRAGMENT,
        ..WriterConfig::default()
    });
    let mut buf = TxBuf::new(65_536);
    while p.poll_transmit(Instant::ZERO, &mut buf).is_some() {}
    let mut bytes = vec![0u8; SIZE];
    bytes[1] = 1; // CDR_LE
    let req = WriteRequest::data(
        KeyHash::default(),
        Time::ZERO,
        Payload::copy_from_slice(&bytes),
    );
    p.write(Instant::ZERO, w, req).expect("write");
    (p, w)
}

/// What one datagram holds.
#[derive(Debug, Default)]
struct Datagram {
    /// The fragment numbers of its DATA_FRAGs.
    fragments: Vec<u32>,
    heartbeat: bool,
    /// The last fragment its HEARTBEAT_FRAG announces.
    heartbeat_frag: Option<u32>,
}

fn sent(p: &mut Participant, now: Instant) -> Vec<Datagram> {
    let mut buf = TxBuf::new(65_536);
    let mut out = Vec::new();
    while let Some(t) = p.poll_transmit(now, &mut buf) {
        let m = MessageView::new_checked(buf.datagram(&t)).expect("valid message");
        let mut d = Datagram::default();
        for s in m.submessages() {
            match s.expect("valid submessage") {
                SubmessageView::DataFrag(f) => d.fragments.push(f.fragment_starting_num().0),
                SubmessageView::Heartbeat(_) => d.heartbeat = true,
                SubmessageView::HeartbeatFrag(h) => {
                    d.heartbeat_frag = Some(h.last_fragment_num().0)
                }
                _ => {}
            }
        }
        out.push(d);
    }
    out
}

fn nack_frag(writer: EntityId, missing: &[u32], count: i32) -> Vec<u8> {
    let header = Header {
        protocol_version: ProtocolVersion::V2_5,
        vendor_id: VendorId::TACHYON,
        guid_prefix: READER_PREFIX,
    };
    let mut set = FragmentNumberSet::empty(FragmentNumber(missing[0]));
    for &n in missing {
        set.insert(FragmentNumber(n));
    }
    let mut buf = vec![0u8; 256];
    let mut mb = MessageBuilder::new(&mut buf, &header).expect("header");
    mb.info_dst(GuidPrefix([1; 12])).expect("info_dst");
    mb.nack_frag(READER_ID, writer, SequenceNumber(1), &set, Count(count))
        .expect("nack_frag");
    let n = mb.finish();
    buf.truncate(n);
    buf
}

#[test]
fn a_heartbeat_frag_that_does_not_fit_goes_alone_every_64_fragments() {
    let (mut p, _) = writer();
    let out = sent(&mut p, Instant::ZERO);
    let fragments: Vec<u32> = out.iter().flat_map(|d| d.fragments.clone()).collect();
    assert_eq!(
        fragments,
        (1..=148).collect::<Vec<_>>(),
        "every fragment, once, in order"
    );
    assert!(
        out.iter().all(|d| d.fragments.len() <= 1),
        "one fragment fills a datagram"
    );
    let announced: Vec<(usize, u32)> = out
        .iter()
        .enumerate()
        .filter_map(|(i, d)| d.heartbeat_frag.map(|n| (i, n)))
        .collect();
    assert_eq!(
        announced.iter().map(|&(_, n)| n).collect::<Vec<_>>(),
        [64, 128],
        "a HEARTBEAT_FRAG after fragments 64 and 128"
    );
    for &(i, n) in &announced {
        assert!(out[i].fragments.is_empty(), "alone in its datagram");
        assert_eq!(
            out[i - 1].fragments,
            [n],
            "right after the fragment it announces"
        );
    }
    assert!(
        out.last().is_some_and(|d| d.heartbeat),
        "a HEARTBEAT ends the burst"
    );
}

#[test]
fn the_heartbeat_follows_the_last_repair_and_comes_sooner_while_fragments_are_asked() {
    let (mut p, w) = writer();
    let _ = sent(&mut p, Instant::ZERO);
    let from = reader_locator();
    let missing = [3, 9, 10, 40, 77, 100, 101, 102, 140];
    p.handle_datagram(at(1), &from, &nack_frag(w, &missing, 1));
    let out = sent(&mut p, at(1));
    let repaired: Vec<u32> = out.iter().flat_map(|d| d.fragments.clone()).collect();
    assert_eq!(repaired, missing, "each fragment asked for, once");
    let with_heartbeat: Vec<usize> = (0..out.len()).filter(|&i| out[i].heartbeat).collect();
    assert_eq!(
        with_heartbeat,
        [out.len() - 1],
        "one HEARTBEAT, with or after the last repair"
    );
    // The next periodic heartbeat: a tenth of the 100 ms period after the request.
    let next = p.poll_timeout().expect("a heartbeat is due");
    assert_eq!(next, at(11));
    p.handle_timeout(next);
    assert!(sent(&mut p, next).iter().any(|d| d.heartbeat));
}
