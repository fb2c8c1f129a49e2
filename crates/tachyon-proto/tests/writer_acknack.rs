//! How a reliable writer answers ACKNACKs that request nothing: a reader that clears the Final
//! flag (a pre-emptive ACKNACK, as Cyclone DDS's readers send until a writer's HEARTBEAT puts
//! them in sync) gets a HEARTBEAT back, even when the writer has written nothing or the reader
//! has everything; a final ACKNACK gets none.

use tachyon_proto::{Instant, Participant, Reliability, TxBuf, WriterConfig};
use tachyon_wire::{
    Count, EntityId, GuidPrefix, Header, MessageBuilder, MessageView, ProtocolVersion,
    SequenceNumber, SequenceNumberSet, SubmessageView, VendorId,
};

#[path = "common/one_reader.rs"]
mod one_reader;
use one_reader::{reader_locator, writer_with_reader, READER_ID, READER_PREFIX};

fn writer() -> (Participant, EntityId) {
    writer_with_reader(WriterConfig {
        reliability: Reliability::Reliable,
        ..WriterConfig::default()
    })
}

/// Heartbeats in everything the participant sends now.
fn heartbeats_sent(p: &mut Participant, now: Instant) -> usize {
    let mut buf = TxBuf::new(65_536);
    let mut n = 0;
    while let Some(t) = p.poll_transmit(now, &mut buf) {
        let m = MessageView::new_checked(buf.datagram(&t)).expect("valid message");
        n += m
            .submessages()
            .filter(|s| matches!(s, Ok(SubmessageView::Heartbeat(_))))
            .count();
    }
    n
}

fn acknack(writer: EntityId, count: i32, final_flag: bool) -> Vec<u8> {
    acknack_from(writer, SequenceNumber(1), count, final_flag)
}

/// An ACKNACK acknowledging everything before `base`.
fn acknack_from(writer: EntityId, base: SequenceNumber, count: i32, final_flag: bool) -> Vec<u8> {
    let header = Header {
        protocol_version: ProtocolVersion::V2_5,
        vendor_id: VendorId::TACHYON,
        guid_prefix: READER_PREFIX,
    };
    let mut buf = vec![0u8; 256];
    let mut mb = MessageBuilder::new(&mut buf, &header).expect("header");
    mb.info_dst(GuidPrefix([1; 12])).expect("info_dst");
    let state = SequenceNumberSet {
        base,
        num_bits: 0,
        bitmap: [0; 8],
    };
    mb.acknack(READER_ID, writer, &state, Count(count), final_flag)
        .expect("acknack");
    let n = mb.finish();
    buf.truncate(n);
    buf
}

#[test]
fn a_preemptive_acknack_is_answered_with_a_heartbeat() {
    let (mut p, w) = writer();
    let now = Instant::ZERO;
    let _ = heartbeats_sent(&mut p, now);
    let from = reader_locator();
    p.handle_datagram(now, &from, &acknack(w, 1, false));
    assert_eq!(
        heartbeats_sent(&mut p, now),
        1,
        "non-final ACKNACK, nothing written"
    );
    p.handle_datagram(now, &from, &acknack(w, 2, true));
    assert_eq!(heartbeats_sent(&mut p, now), 0, "final ACKNACK: no answer");
    p.handle_datagram(now, &from, &acknack(w, 3, false));
    assert_eq!(
        heartbeats_sent(&mut p, now),
        1,
        "asked again, answered again"
    );
}

#[test]
fn a_silent_reader_gets_heartbeats_until_it_answers_one() {
    // Cyclone DDS's volatile readers that learn of a writer after its first HEARTBEAT start
    // from whatever sample reaches them first; periodic HEARTBEATs until the reader answers
    // one put it in sync before data flows.
    let (mut p, w) = writer();
    let mut now = Instant::ZERO;
    assert_eq!(heartbeats_sent(&mut p, now), 1, "one on matching");
    let from = reader_locator();
    let period = tachyon_proto::Duration::from_millis(100);
    for round in 0..3 {
        now += period;
        p.handle_timeout(now);
        assert_eq!(
            heartbeats_sent(&mut p, now),
            1,
            "silent reader, period {round}"
        );
    }
    // A pre-emptive ACKNACK is answered but does not show the reader heard a HEARTBEAT.
    p.handle_datagram(now, &from, &acknack(w, 0, false));
    assert_eq!(heartbeats_sent(&mut p, now), 1);
    now += period;
    p.handle_timeout(now);
    assert_eq!(heartbeats_sent(&mut p, now), 1, "still not in sync");
    // The answer to a HEARTBEAT: in sync, and nothing unacknowledged, so no more.
    p.handle_datagram(now, &from, &acknack(w, 1, true));
    for _ in 0..3 {
        now += period;
        p.handle_timeout(now);
        assert_eq!(
            heartbeats_sent(&mut p, now),
            0,
            "in sync and nothing to acknowledge"
        );
    }
}

#[test]
fn a_repeated_preemptive_acknack_is_answered_every_time() {
    // Cyclone DDS 0.10 repeats its pre-emptive ACKNACK with count 0, once a second, until a
    // HEARTBEAT arrives after it knows the writer.
    let (mut p, w) = writer();
    let now = Instant::ZERO;
    let _ = heartbeats_sent(&mut p, now);
    let from = reader_locator();
    for round in 0..3 {
        p.handle_datagram(now, &from, &acknack(w, 0, false));
        assert_eq!(heartbeats_sent(&mut p, now), 1, "round {round}");
    }
    p.handle_datagram(now, &from, &acknack(w, 0, true));
    assert_eq!(
        heartbeats_sent(&mut p, now),
        0,
        "a final repeat needs no answer"
    );
}

#[test]
fn a_keep_all_writer_waits_while_too_much_is_unacknowledged() {
    use tachyon_proto::history::{History, Limit, Payload, WriteError, WriterHistoryConfig};
    let (mut p, w) = writer_with_reader(WriterConfig {
        reliability: Reliability::Reliable,
        history: WriterHistoryConfig {
            history: History::KeepAll,
            ..WriterHistoryConfig::default()
        },
        ..WriterConfig::default()
    });
    let sample = || {
        let mut b = vec![0u8; 1024];
        b[1] = 1;
        tachyon_proto::WriteRequest::data(
            Default::default(),
            Default::default(),
            Payload::copy_from_slice(&b),
        )
    };
    let mut written = 0usize;
    let blocked = loop {
        match p.write(Instant::ZERO, w, sample()) {
            Ok(_) => written += 1,
            Err(tachyon_proto::Error::Write(e)) => break e,
            Err(e) => panic!("{e}"),
        }
        assert!(written <= 10_000, "never blocked");
    };
    assert_eq!(
        blocked,
        WriteError::WouldBlock {
            limit: Limit::UnacknowledgedBytes
        }
    );
    assert_eq!(written, tachyon_proto::MAX_UNACKNOWLEDGED_BYTES / 1024);
    // The reader acknowledges everything sent: writing goes on.
    let mut buf = TxBuf::new(65_536);
    while p.poll_transmit(Instant::ZERO, &mut buf).is_some() {}
    let from = reader_locator();
    let next = SequenceNumber(written as i64 + 1);
    p.handle_datagram(Instant::ZERO, &from, &acknack_from(w, next, 1, true));
    assert!(p.write(Instant::ZERO, w, sample()).is_ok());
}

/// Heartbeats sent from `from` to `until`, following the writer's own timers.
fn heartbeats_between(p: &mut Participant, from: Instant, until: Instant) -> (usize, Instant) {
    let mut now = from;
    let mut n = 0;
    while let Some(at) = p.poll_timeout().filter(|&at| at <= until) {
        now = at.max(now);
        p.handle_timeout(now);
        n += heartbeats_sent(p, now);
    }
    (n, now)
}

#[test]
fn heartbeats_to_readers_that_never_answer_back_off_and_an_answer_restores_them() {
    // A reader that never answers (a crashed peer before its lease runs out, or one of a
    // thousand announced participants that never acknowledge) is heartbeaten ten times a
    // second for a second, then ever less often, up to every 8 s.
    let (mut p, w) = writer();
    let start = Instant::ZERO;
    let _ = heartbeats_sent(&mut p, start);
    let secs = |s: u64| Instant::from_nanos(s * 1_000_000_000);
    let (first, _) = heartbeats_between(&mut p, start, secs(1));
    assert_eq!(first, 10, "the configured pace for the first second");
    let (next, now) = heartbeats_between(&mut p, secs(1), secs(60));
    assert!((5..=14).contains(&next), "{next} in the next 59 s, not 590");
    // It answers (asking for the HEARTBEAT it missed): the pace is restored at once.
    let from = reader_locator();
    p.handle_datagram(now, &from, &acknack(w, 1, false));
    let _ = heartbeats_sent(&mut p, now);
    let later = Instant::from_nanos(now.as_nanos() + 500_000_000);
    let (after, _) = heartbeats_between(&mut p, now, later);
    assert!(after >= 4, "{after} in the half second after an answer");
}

/// DATA submessages (new or repaired) in everything the participant sends now.
fn data_sent(p: &mut Participant, now: Instant) -> usize {
    let mut buf = TxBuf::new(65_536);
    let mut n = 0;
    while let Some(t) = p.poll_transmit(now, &mut buf) {
        let m = MessageView::new_checked(buf.datagram(&t)).expect("valid message");
        n += m
            .submessages()
            .filter(|s| matches!(s, Ok(SubmessageView::Data(_))))
            .count();
    }
    n
}

#[test]
fn a_quiet_writer_still_sends_a_delayed_repair_when_it_falls_due() {
    // A writer that found nothing to send stops looking at its readers until something
    // changes (a discovery storm gives builtin writers thousands); a repair delayed by
    // nack_response_delay must still go out when the delay runs out, and not before.
    let delay = tachyon_proto::Duration::from_millis(10);
    let (mut p, w) = writer_with_reader(WriterConfig {
        reliability: Reliability::Reliable,
        nack_response_delay: delay,
        history: tachyon_proto::history::WriterHistoryConfig {
            history: tachyon_proto::history::History::KeepAll,
            ..Default::default()
        },
        ..WriterConfig::default()
    });
    for i in 0..3u8 {
        let req = tachyon_proto::WriteRequest::data(
            tachyon_cdr::KeyHash([0; 16]),
            tachyon_wire::Time::default(),
            tachyon_proto::history::Payload::copy_from_slice(&[0, 1, 0, 0, i, 0, 0, 0]),
        );
        p.write(Instant::ZERO, w, req).expect("write");
    }
    assert_eq!(data_sent(&mut p, Instant::ZERO), 3);
    assert_eq!(data_sent(&mut p, Instant::ZERO), 0, "nothing more: quiet");
    // The reader lost sequence number 2.
    let header = Header {
        protocol_version: ProtocolVersion::V2_5,
        vendor_id: VendorId::TACHYON,
        guid_prefix: READER_PREFIX,
    };
    let mut buf = vec![0u8; 256];
    let mut mb = MessageBuilder::new(&mut buf, &header).expect("header");
    mb.info_dst(GuidPrefix([1; 12])).expect("info_dst");
    let mut bitmap = [0; 8];
    bitmap[0] = 0x8000_0000;
    let state = SequenceNumberSet {
        base: SequenceNumber(2),
        num_bits: 1,
        bitmap,
    };
    mb.acknack(READER_ID, w, &state, Count(1), true)
        .expect("acknack");
    let n = mb.finish();
    let from = reader_locator();
    let t1 = Instant::from_nanos(1_000_000);
    p.handle_datagram(t1, &from, &buf[..n]);
    assert_eq!(data_sent(&mut p, t1), 0, "the repair waits for the delay");
    let due = p.poll_timeout().expect("the delayed repair is a timer");
    assert!(due <= Instant::from_nanos(11_000_000), "{due:?}");
    let before = Instant::from_nanos(5_000_000);
    assert_eq!(
        data_sent(&mut p, before),
        0,
        "still quiet before it falls due"
    );
    assert_eq!(data_sent(&mut p, due), 1, "the repair, once due");
}
