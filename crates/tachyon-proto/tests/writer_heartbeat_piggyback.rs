//! What a reliable writer sends with new data: to one reader by unicast (a multicast group is
//! for several), and a piggybacked HEARTBEAT that asks for an acknowledgement (Final flag
//! clear) only every `ack_request_interval` (4/5 of the heartbeat period), when the history is
//! half full or when a thread waits for acknowledgements, so a steady stream does not draw one
//! ACKNACK per sample; one that asks for nothing rides along at most every
//! `HEARTBEAT_PIGGYBACK_INTERVAL`, or when the burst skipped sequence numbers.

use tachyon_cdr::KeyHash;
use tachyon_proto::history::{Durability, History, Payload, ResourceLimits, WriterHistoryConfig};
use tachyon_proto::{
    ack_request_interval, Destination, Duration, Instant, Participant, ParticipantConfig,
    Reliability, RemoteReader, TxBuf, WriteRequest, WriterConfig, HEARTBEAT_PIGGYBACK_INTERVAL,
};
use tachyon_wire::{EntityId, Guid, GuidPrefix, Locator, MessageView, SubmessageView, Time};

fn reader(n: u8, multicast: bool) -> RemoteReader {
    RemoteReader {
        guid: Guid {
            prefix: GuidPrefix([n; 12]),
            entity_id: EntityId([0, 0, 1, 7]),
        },
        unicast_locators: vec![Locator::udp(([127, 0, 0, 1], 7400 + u16::from(n)).into())],
        multicast_locators: if multicast {
            vec![Locator::udp(([239, 255, 0, 1], 7401).into())]
        } else {
            vec![]
        },
        reliability: Reliability::Reliable,
        durability: Durability::Volatile,
    }
}

fn writer(history: WriterHistoryConfig, readers: &[RemoteReader]) -> (Participant, EntityId) {
    let mut p = Participant::new(GuidPrefix([1; 12]), ParticipantConfig::default());
    let w = p
        .create_writer(WriterConfig {
            reliability: Reliability::Reliable,
            history,
            ..WriterConfig::default()
        })
        .expect("writer");
    for r in readers {
        p.match_reader(Instant::ZERO, w, r.clone()).expect("match");
    }
    // Whatever matching queued (heartbeats to new readers) is not what is measured.
    let mut buf = TxBuf::new(65_536);
    while p.poll_transmit(Instant::ZERO, &mut buf).is_some() {}
    (p, w)
}

/// Writes one sample at `now`; returns where its datagram went and whether the piggybacked
/// heartbeat asks for an acknowledgement.
fn write(p: &mut Participant, w: EntityId, now: Instant) -> (Destination, bool) {
    let (d, hb) = write_burst(p, w, now, 1);
    (d, hb.expect("a heartbeat ends the burst").0)
}

/// Writes `n` samples at `now`, then sends: where the datagram went and its heartbeat, if
/// any (whether it asks for an acknowledgement, its first and last sequence numbers).
fn write_burst(
    p: &mut Participant,
    w: EntityId,
    now: Instant,
    n: usize,
) -> (Destination, Option<(bool, i64, i64)>) {
    for _ in 0..n {
        let req = WriteRequest::data(
            KeyHash::default(),
            Time::ZERO,
            Payload::copy_from_slice(&[0, 1, 0, 0, 7, 7, 7, 7]),
        );
        p.write(now, w, req).expect("write");
    }
    let mut buf = TxBuf::new(65_536);
    let t = p.poll_transmit(now, &mut buf).expect("the data goes out");
    let m = MessageView::new_checked(buf.datagram(&t)).expect("valid message");
    let hb = m.submessages().find_map(|s| match s {
        Ok(SubmessageView::Heartbeat(h)) => Some((!h.is_final(), h.first_sn().0, h.last_sn().0)),
        _ => None,
    });
    assert!(
        p.poll_transmit(now, &mut buf).is_none(),
        "one datagram per burst"
    );
    (t.destination, hb)
}

/// A KEEP_LAST(`depth`) history, the rest default.
fn keep_last(depth: usize) -> WriterHistoryConfig {
    WriterHistoryConfig {
        history: History::KeepLast(depth),
        ..WriterHistoryConfig::default()
    }
}

fn us(n: u64) -> Instant {
    Instant::ZERO.saturating_add(Duration::from_micros(n))
}

fn ms(n: u64) -> Instant {
    Instant::ZERO.saturating_add(Duration::from_millis(n))
}

#[test]
fn acknowledgements_are_asked_for_once_per_interval_in_a_steady_stream() {
    let (mut p, w) = writer(keep_last(10), &[reader(2, true)]);
    let period = WriterConfig::default().heartbeat_period;
    assert_eq!(period, Duration::from_millis(100));
    assert_eq!(ack_request_interval(period), Duration::from_millis(80));
    let (_, first) = write(&mut p, w, ms(1));
    let (_, second) = write(&mut p, w, ms(2));
    let (_, third) = write(&mut p, w, ms(80));
    let (_, after_interval) = write(&mut p, w, ms(81));
    let (_, next) = write(&mut p, w, ms(82));
    assert_eq!(
        (first, second, third, after_interval, next),
        (true, false, false, true, false)
    );
}

/// The datagram `p` sends now, if any: whether its HEARTBEAT asks for acknowledgements.
fn heartbeat_sent(p: &mut Participant, now: Instant) -> Option<bool> {
    let mut buf = TxBuf::new(65_536);
    let t = p.poll_transmit(now, &mut buf)?;
    let m = MessageView::new_checked(buf.datagram(&t)).expect("valid message");
    let asks = m.submessages().find_map(|s| match s {
        Ok(SubmessageView::Heartbeat(h)) => Some(!h.is_final()),
        _ => None,
    });
    asks
}

#[test]
fn a_thread_waiting_for_acknowledgements_gets_them_asked_for_at_once() {
    let (mut p, w) = writer(keep_last(10), &[reader(2, false)]);
    assert!(write(&mut p, w, ms(1)).1, "the first write asks");
    assert!(
        !write(&mut p, w, ms(2)).1,
        "the next, a millisecond later, does not"
    );
    // Nothing more to send until the periodic heartbeat, a period after the first write.
    assert_eq!(heartbeat_sent(&mut p, ms(3)), None);
    // wait_for_acknowledgments: the heartbeat that asks goes now.
    p.request_acknowledgments(w, ms(3));
    assert_eq!(heartbeat_sent(&mut p, ms(3)), Some(true));
    assert_eq!(heartbeat_sent(&mut p, ms(3)), None, "one heartbeat");
    // The next write's piggybacked heartbeat asks again (the request reset the interval).
    assert!(write(&mut p, w, ms(4)).1);
}

#[test]
fn nothing_is_asked_for_when_everything_is_acknowledged() {
    let (mut p, w) = writer(WriterHistoryConfig::default(), &[reader(2, false)]);
    p.request_acknowledgments(w, ms(1));
    assert_eq!(heartbeat_sent(&mut p, ms(1)), None);
}

#[test]
fn a_keep_all_history_half_full_asks_every_time() {
    let keep_all = WriterHistoryConfig {
        history: History::KeepAll,
        limits: ResourceLimits {
            max_samples: Some(4),
            ..ResourceLimits::default()
        },
        durability: Durability::Volatile,
    };
    let (mut p, w) = writer(keep_all, &[reader(2, false)]);
    let asks: Vec<bool> = (0..3).map(|_| write(&mut p, w, ms(1)).1).collect();
    // 1 held: first request; 2 held (half of 4): asks again; 3 held: still.
    assert_eq!(asks, [true, true, true]);
}

#[test]
fn one_reader_gets_unicast_and_several_share_the_multicast_group() {
    let h = WriterHistoryConfig::default();
    let (mut one, w) = writer(h, &[reader(2, true)]);
    let (d, _) = write(&mut one, w, ms(1));
    assert_eq!(
        d,
        Destination::Unicast(Locator::udp(([127, 0, 0, 1], 7402).into()))
    );
    let (mut two, w) = writer(h, &[reader(2, true), reader(3, true)]);
    let (d, _) = write(&mut two, w, ms(1));
    assert_eq!(
        d,
        Destination::Multicast(Locator::udp(([239, 255, 0, 1], 7401).into()))
    );
    let (mut apart, w) = writer(h, &[reader(2, false), reader(3, false)]);
    let (d, _) = write(&mut apart, w, ms(1));
    assert!(
        matches!(d, Destination::Many(ref l) if l.len() == 2),
        "{d:?}"
    );
}

#[test]
fn a_heartbeat_that_asks_nothing_rides_along_at_most_every_interval() {
    let (mut p, w) = writer(keep_last(10), &[reader(2, false)]);
    assert_eq!(HEARTBEAT_PIGGYBACK_INTERVAL, Duration::from_micros(100));
    let hb = |p: &mut Participant, t: u64| write_burst(p, w, us(t), 1).1;
    // The first asks for an acknowledgement (and so carries a heartbeat).
    assert_eq!(hb(&mut p, 1_000), Some((true, 1, 1)));
    // A ping-pong's pace: no heartbeat on the samples within 100 µs of the last one.
    assert_eq!(hb(&mut p, 1_002), None);
    assert_eq!(hb(&mut p, 1_050), None);
    assert_eq!(hb(&mut p, 1_099), None);
    // 100 µs after the last: a final one, announcing everything sent.
    assert_eq!(hb(&mut p, 1_100), Some((false, 1, 5)));
    assert_eq!(hb(&mut p, 1_150), None);
    // Within the acknowledgement interval, a final one after 100 µs again.
    assert_eq!(hb(&mut p, 6_000), Some((false, 1, 7)));
    assert_eq!(hb(&mut p, 6_010), None);
    // Once it is over, it asks again, whatever the pace.
    assert_eq!(hb(&mut p, 81_000), Some((true, 1, 9)));
    assert_eq!(hb(&mut p, 81_010), None);
}

#[test]
fn a_burst_that_skips_numbers_ends_with_a_heartbeat() {
    // KEEP_LAST 1: the second of two samples written before the send replaces the first,
    // which is never sent; the heartbeat says it is gone (its first is the second's number).
    let (mut p, w) = writer(keep_last(1), &[reader(2, false)]);
    assert_eq!(write_burst(&mut p, w, us(1_000), 1).1, Some((true, 1, 1)));
    assert_eq!(write_burst(&mut p, w, us(1_010), 1).1, None);
    assert_eq!(
        write_burst(&mut p, w, us(1_020), 2).1,
        Some((false, 4, 4)),
        "sample 3 was replaced before it was sent"
    );
}
