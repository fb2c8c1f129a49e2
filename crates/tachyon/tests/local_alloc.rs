//! The paths between participants of one host allocate nothing per sample in steady state,
//! counted by an instrumented global allocator (its own test binary, one test: only its
//! threads allocate in it): `write` → `take_into` on one thread between two participants,
//! through the in-process transport and through shared memory, polling the reader with
//! `take_into` until the sample is there. In process the samples go as values, by
//! reference (`tachyon_cdr::share`, `tachyon_proto::local`), copied member by member into
//! recycled values on both sides. And loans through shared memory: `loan_sample` →
//! `write_loaned` → `take_loaned_into`, in place.

mod common;

use std::time::Duration;

use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use std::alloc::System;
use tachyon::prelude::*;
use tachyon::zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
use tachyon::{ParticipantSettings, TransportSettings};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[derive(DdsType, Debug, Clone, PartialEq, Default)]
#[dds(name = "test::Octets")]
struct Octets {
    seq: u64,
    data: Vec<u8>,
}

/// Participants announcing rarely: once their first announcements are over (five, 100 ms
/// apart, which allocate as they are sent and received), nothing but the samples runs while
/// the allocations are counted. In process: no UDP; through shared memory: no in-process
/// transport (UDP carries discovery).
fn participant(domain: u32, shm: bool) -> DomainParticipant {
    let settings = ParticipantSettings {
        transports: TransportSettings {
            no_udp: !shm,
            no_intra: shm,
            no_shm: !shm,
            ..TransportSettings::default()
        },
        announce_period: Some(Duration::from_secs(60)),
        lease_duration: Some(Duration::from_secs(300)),
        ..ParticipantSettings::default()
    };
    DomainParticipant::with_settings(domain, &settings).expect("participant")
}

/// A best-effort keep-last 1 writer of `a` and reader of `b` on topic "t", matched.
fn best_effort_pair<T: DdsType + for<'de> tachyon::Decode<'de>>(
    a: &DomainParticipant,
    b: &DomainParticipant,
) -> (DataWriter<T>, DataReader<T>) {
    let w = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter(
            &a.create_topic::<T>("t").expect("topic"),
            DataWriterQos::default().best_effort().keep_last(1),
        )
        .expect("writer");
    let r = b
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(
            &b.create_topic::<T>("t").expect("topic"),
            DataReaderQos::default().best_effort().keep_last(1),
        )
        .expect("reader");
    common::wait_matched(&w, &r);
    (w, r)
}

#[test]
fn write_then_take_into_allocates_nothing_per_sample() {
    write_then_take(0, false);
    tachyon_transport::testing::require_isolated_network();
    write_then_take(91, true);
    loan_then_take_loaned(92);
}

#[derive(DdsType, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[repr(C)]
#[dds(name = "test::Frame")]
struct Frame {
    seq: u64,
    body: [u8; 8192],
}

fn loan_then_take_loaned(domain: u32) {
    let created = std::time::Instant::now();
    let (a, b) = (participant(domain, true), participant(domain, true));
    let (w, r) = best_effort_pair::<Frame>(&a, &b);
    let mut taken = Vec::new();
    let mut seq = 0;
    let mut step = || {
        seq += 1;
        let mut loan = w.loan_sample().expect("loan");
        assert!(loan.is_shared_memory());
        loan.seq = seq;
        w.write_loaned(loan).expect("write_loaned");
        loop {
            r.take_loaned_into(&mut taken, usize::MAX).expect("take");
            if taken.iter().any(|s| s.data().is_some_and(|f| f.seq == seq)) {
                break;
            }
            std::hint::spin_loop();
        }
        assert!(taken.iter().all(|s| s.is_in_place()));
        taken.clear(); // the slots go back
    };
    let mut warm = 0;
    while warm < 2_000 || created.elapsed() < Duration::from_millis(1500) {
        step();
        warm += 1;
    }
    let n = 10_000;
    let region = Region::new(GLOBAL);
    for _ in 0..n {
        step();
    }
    let c = region.change();
    let allocs = c.allocations + c.reallocations;
    assert_eq!(allocs, 0, "loans: {allocs} allocations over {n} samples");
    let s = b.statistics().loans;
    assert!(s.held >= 12_000 && s.copied == 0, "{s:?}");
}

fn write_then_take(domain: u32, shm: bool) {
    let path = if shm { "shared memory" } else { "in process" };
    let created = std::time::Instant::now();
    let (a, b) = (participant(domain, shm), participant(domain, shm));
    let (w, r) = best_effort_pair::<Octets>(&a, &b);
    for size in [32usize, 1024, 8192] {
        let mut sample = Octets {
            seq: 0,
            data: vec![7; size],
        };
        let mut taken = Vec::new();
        let step = |sample: &mut Octets, taken: &mut Vec<_>| {
            sample.seq += 1;
            w.write(sample).expect("write");
            // In process handed over on this thread: there at once (polling covers the rare
            // sample another thread of the writer's participant delivers); through shared
            // memory, the reader's receive thread delivers it, and `take_into` polls the
            // empty reader meanwhile: a take that finds nothing keeps the values `taken`
            // held for the next one, so polling allocates nothing either.
            while r.take_into(taken, usize::MAX).expect("take") == 0 {
                std::hint::spin_loop();
            }
        };
        // Warm-up: 2,000 samples, and past the first announcements.
        let mut warm = 0;
        while warm < 2_000 || created.elapsed() < Duration::from_millis(1500) {
            step(&mut sample, &mut taken);
            warm += 1;
        }
        let n = 10_000;
        let region = Region::new(GLOBAL);
        for _ in 0..n {
            step(&mut sample, &mut taken);
        }
        let c = region.change();
        let allocs = c.allocations + c.reallocations;
        assert_eq!(taken.last().and_then(|s| s.data.as_ref()), Some(&sample));
        assert_eq!(
            allocs, 0,
            "{path}, {size} B: {allocs} allocations over {n} samples"
        );
    }
    let s = b.statistics();
    match shm {
        true => assert!(s.shm.datagrams_received >= 24_000, "{:?}", s.shm),
        false => assert_eq!(s.shm.datagrams_received, 0),
    }
    // In process the samples went as values (`tachyon_cdr::share`), never serialized;
    // through shared memory serialized.
    let shared = (w.shared_samples_written(), r.shared_samples_taken());
    match shm {
        true => assert_eq!(shared, (0, 0)),
        false => assert!(shared.0 >= 36_000 && shared.1 >= 36_000, "{shared:?}"),
    }
    assert_eq!(w.late_serializations(), 0);
}
