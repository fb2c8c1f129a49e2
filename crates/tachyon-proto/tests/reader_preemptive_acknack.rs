//! A reliable reader's pre-emptive ACKNACK: sent when a writer is matched, with the Final flag
//! clear (it asks for a HEARTBEAT), repeated once a second (less often later) until the
//! writer's first HEARTBEAT, and in the form the writer's vendor answers at once: bitmap base 0
//! for Fast DDS and RTI Connext, 1 (the spec's) for everyone else.

use tachyon_proto::{Duration, Instant, Reliability};
use tachyon_wire::{EntityId, GuidPrefix, MessageBuilder, SequenceNumber, VendorId};

#[path = "common/one_writer.rs"]
mod one_writer;
use one_writer::{acknacks_sent, put_heartbeat, reader_with_writer as reader, writer_header};

fn heartbeat(reader: EntityId, first: i64, last: i64, count: i32) -> Vec<u8> {
    let header = writer_header(VendorId::FAST_DDS);
    let mut buf = vec![0u8; 256];
    let mut mb = MessageBuilder::new(&mut buf, &header).expect("header");
    mb.info_dst(GuidPrefix([1; 12])).expect("info_dst");
    put_heartbeat(&mut mb, reader, first, last, count);
    let n = mb.finish();
    buf.truncate(n);
    buf
}

fn at(ms: u64) -> Instant {
    Instant::ZERO + Duration::from_millis(ms)
}

#[test]
fn the_preemptive_acknack_repeats_every_second_until_a_heartbeat() {
    let (mut p, r) = reader(VendorId::CYCLONE_DDS, Reliability::Reliable);
    let first = acknacks_sent(&mut p, at(0));
    assert_eq!(first.len(), 1, "one on matching");
    let a = first[0];
    assert!(!a.is_final, "it asks for a HEARTBEAT");
    assert_eq!(a.reader_sn_state.base, SequenceNumber(1), "the spec's form");
    assert_eq!(a.reader_sn_state.num_bits, 0);
    assert!(
        acknacks_sent(&mut p, at(999)).is_empty(),
        "not before a second"
    );
    let again = acknacks_sent(&mut p, at(1000));
    assert_eq!(again.len(), 1, "repeated after a second");
    assert!(again[0].count.0 > a.count.0, "with a new count");
    assert!(!again[0].is_final);

    // The writer's HEARTBEAT: nothing written. The reader is in sync; no more pre-emptives.
    let from = one_writer::writer_locator();
    p.handle_datagram(at(1500), &from, &heartbeat(r, 1, 0, 1));
    let _ = acknacks_sent(&mut p, at(2000));
    for s in 3..30 {
        assert!(
            acknacks_sent(&mut p, at(s * 1000)).is_empty(),
            "nothing to say at {s} s"
        );
    }
}

#[test]
fn fast_dds_writers_get_the_form_they_answer() {
    let (mut p, _) = reader(VendorId::FAST_DDS, Reliability::Reliable);
    let a = acknacks_sent(&mut p, at(0));
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].reader_sn_state.base, SequenceNumber(0));
    assert_eq!(a[0].reader_sn_state.num_bits, 0);
    assert!(!a[0].is_final);
}

#[test]
fn the_repeats_slow_down_and_stop() {
    let (mut p, _) = reader(VendorId::TACHYON, Reliability::Reliable);
    let mut sent = Vec::new();
    for ms in (0..=400_000).step_by(500) {
        if !acknacks_sent(&mut p, at(ms)).is_empty() {
            sent.push(ms / 1000);
        }
    }
    let within = |lo: u64, hi: u64| sent.iter().filter(|&&s| (lo..hi).contains(&s)).count();
    assert_eq!(within(0, 10), 10, "every second at first: {sent:?}");
    assert!((24..=26).contains(&within(10, 60)), "every 2 s: {sent:?}");
    assert!((11..=13).contains(&within(60, 120)), "every 5 s: {sent:?}");
    assert!(
        (17..=19).contains(&within(120, 300)),
        "every 10 s: {sent:?}"
    );
    assert_eq!(within(310, 401), 0, "then never: {sent:?}");
}

#[test]
fn a_best_effort_writer_gets_no_acknack() {
    let (mut p, _) = reader(VendorId::FAST_DDS, Reliability::BestEffort);
    for s in 0..5 {
        assert!(acknacks_sent(&mut p, at(s * 1000)).is_empty());
    }
}
