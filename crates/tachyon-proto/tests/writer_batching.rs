//! Write batching (`WriterConfig::batch_delay`): new data waits up to the delay for more, so
//! several samples share a datagram; a datagram's worth goes at once, and `flush_writer`
//! sends what waits.

use tachyon_cdr::KeyHash;
use tachyon_proto::history::{Durability, History, Payload, WriterHistoryConfig};
use tachyon_proto::{
    Duration, Instant, Participant, ParticipantConfig, Reliability, RemoteReader, TxBuf,
    WriteRequest, WriterConfig,
};
use tachyon_wire::{EntityId, Guid, GuidPrefix, Locator, MessageView, SubmessageView, Time};

fn writer(batch: Duration) -> (Participant, EntityId) {
    let mut p = Participant::new(GuidPrefix([1; 12]), ParticipantConfig::default());
    let w = p
        .create_writer(WriterConfig {
            reliability: Reliability::BestEffort,
            batch_delay: Some(batch),
            history: WriterHistoryConfig {
                history: History::KeepAll,
                ..WriterHistoryConfig::default()
            },
            ..WriterConfig::default()
        })
        .expect("writer");
    let reader = RemoteReader {
        guid: Guid {
            prefix: GuidPrefix([2; 12]),
            entity_id: EntityId([0, 0, 1, 7]),
        },
        unicast_locators: vec![Locator::udp(([127, 0, 0, 1], 7413).into())],
        multicast_locators: vec![],
        reliability: Reliability::BestEffort,
        durability: Durability::Volatile,
    };
    p.match_reader(Instant::ZERO, w, reader).expect("match");
    (p, w)
}

fn write(p: &mut Participant, w: EntityId, now: Instant, len: usize) {
    let mut bytes = vec![0u8; len];
    bytes[1] = 1; // CDR_LE encapsulation
    let req = WriteRequest::data(
        KeyHash::default(),
        Time::ZERO,
        Payload::copy_from_slice(&bytes),
    );
    p.write(now, w, req).expect("write");
}

/// DATA submessages per datagram sent at `now`.
fn sent(p: &mut Participant, now: Instant) -> Vec<usize> {
    let mut buf = TxBuf::new(65_536);
    let mut out = Vec::new();
    while let Some(t) = p.poll_transmit(now, &mut buf) {
        let m = MessageView::new_checked(buf.datagram(&t)).expect("valid message");
        out.push(
            m.submessages()
                .filter(|s| matches!(s, Ok(SubmessageView::Data(_))))
                .count(),
        );
    }
    out
}

fn us(n: u64) -> Instant {
    Instant::ZERO.saturating_add(Duration::from_micros(n))
}

#[test]
fn samples_wait_for_the_delay_then_share_one_datagram() {
    let (mut p, w) = writer(Duration::from_millis(1));
    for i in 0..3 {
        write(&mut p, w, us(i * 10), 40);
        assert!(sent(&mut p, us(i * 10)).is_empty(), "held back");
    }
    assert_eq!(p.poll_timeouts().earliest(), Some(us(1000)));
    p.handle_timeout(us(1000));
    assert_eq!(sent(&mut p, us(1000)), [3]);
    // The next batch starts afresh.
    write(&mut p, w, us(1500), 40);
    assert!(sent(&mut p, us(1500)).is_empty());
    assert_eq!(sent(&mut p, us(2500)), [1]);
}

#[test]
fn a_datagrams_worth_goes_at_once_and_flush_sends_the_rest() {
    let (mut p, w) = writer(Duration::from_secs(1));
    // 1472-octet datagrams: 3 × 600 octets is more than one holds.
    for _ in 0..3 {
        write(&mut p, w, us(0), 600);
    }
    let out = sent(&mut p, us(0));
    assert_eq!(out.iter().sum::<usize>(), 3, "{out:?}");
    assert!(out.len() >= 2);
    write(&mut p, w, us(10), 40);
    assert!(sent(&mut p, us(10)).is_empty());
    p.flush_writer(w).expect("flush");
    assert_eq!(sent(&mut p, us(10)), [1]);
}
