//! A reliable reader asks for a hole that a later sample shows, without waiting for a
//! HEARTBEAT (writers piggyback one only every `HEARTBEAT_PIGGYBACK_INTERVAL` in a fast
//! stream): after `HOLE_WAIT`, unless the missing sample came meanwhile (out of order), and
//! not again for a hole it already knew of.

use tachyon_proto::{Duration, Instant, Participant, Reliability, HOLE_WAIT};
use tachyon_wire::{DataSpec, EntityId, MessageBuilder, PayloadKind, SequenceNumber, VendorId};

#[path = "common/one_writer.rs"]
mod one_writer;
use one_writer::{acknacks_sent, reader_with_writer, writer_locator as from};
use one_writer::{put_heartbeat, writer_header, WRITER_ID};

fn reader() -> Participant {
    reader_with_writer(VendorId::TACHYON, Reliability::Reliable).0
}

/// A datagram with the DATA of `sn`, and a HEARTBEAT announcing `1..=sn` when `heartbeat`.
fn data(sn: i64, heartbeat: bool) -> Vec<u8> {
    let header = writer_header(VendorId::TACHYON);
    let mut buf = vec![0u8; 512];
    let mut mb = MessageBuilder::new(&mut buf, &header).expect("header");
    mb.data(&DataSpec {
        reader_id: EntityId::UNKNOWN,
        writer_id: WRITER_ID,
        writer_sn: SequenceNumber(sn),
        inline_qos: None,
        kind: PayloadKind::Data,
        payload: &[0, 1, 0, 0, 7, 7, 7, 7],
    })
    .expect("data");
    if heartbeat {
        put_heartbeat(
            &mut mb,
            EntityId::UNKNOWN,
            1,
            sn,
            i32::try_from(sn).unwrap_or(0),
        );
    }
    let n = mb.finish();
    buf.truncate(n);
    buf
}

/// The ACKNACKs the participant sends at `now`: (base, missing numbers).
fn acknacks(p: &mut Participant, now: Instant) -> Vec<(i64, Vec<i64>)> {
    acknacks_sent(p, now)
        .into_iter()
        .map(|a| {
            let set = a.reader_sn_state;
            (set.base.0, set.iter().map(|sn| sn.0).collect())
        })
        .collect()
}

fn us(n: u64) -> Instant {
    Instant::ZERO + Duration::from_micros(n)
}

/// In sync with the writer: samples 1 and 2 received, with a heartbeat; the pre-emptive
/// ACKNACK of the match sent.
fn in_sync() -> Participant {
    let mut p = reader();
    let _ = acknacks(&mut p, us(0));
    p.handle_datagram(us(100), &from(), &data(1, true));
    p.handle_datagram(us(110), &from(), &data(2, false));
    assert!(acknacks(&mut p, us(120)).is_empty(), "nothing missing");
    p
}

#[test]
fn a_hole_a_later_sample_shows_is_asked_for_after_the_wait() {
    assert_eq!(HOLE_WAIT, Duration::from_millis(1));
    let mut p = in_sync();
    // 3 is lost; 4 and 5 come without a heartbeat (the writer's pace is faster than its
    // piggyback interval), and then the writer falls silent.
    p.handle_datagram(us(200), &from(), &data(4, false));
    p.handle_datagram(us(210), &from(), &data(5, false));
    assert!(
        acknacks(&mut p, us(1_199)).is_empty(),
        "not before the wait: the sample may come out of order"
    );
    assert_eq!(acknacks(&mut p, us(1_200)), [(3, vec![3])]);
    // A later sample shows no new hole: no ACKNACK of its own (the repair is under way).
    p.handle_datagram(us(1_300), &from(), &data(6, false));
    assert!(acknacks(&mut p, us(5_000)).is_empty());
    // The repair fills it: all delivered, nothing more to ask.
    p.handle_datagram(us(5_100), &from(), &data(3, false));
    assert!(acknacks(&mut p, us(10_000)).is_empty());
}

#[test]
fn a_sample_that_comes_out_of_order_within_the_wait_is_not_asked_for() {
    let mut p = in_sync();
    p.handle_datagram(us(200), &from(), &data(4, false));
    p.handle_datagram(us(700), &from(), &data(3, false));
    assert!(
        acknacks(&mut p, us(1_200)).is_empty(),
        "the hole filled: nothing to say"
    );
    assert!(acknacks(&mut p, us(50_000)).is_empty());
}

#[test]
fn a_heartbeat_that_shows_the_hole_is_answered_at_once() {
    // The heartbeat path is unchanged: a hole it announces is asked for after the heartbeat
    // response delay (none by default), not after the wait.
    let mut p = in_sync();
    p.handle_datagram(us(200), &from(), &data(4, true));
    assert_eq!(acknacks(&mut p, us(200)), [(3, vec![3])]);
}
