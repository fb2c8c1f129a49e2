//! The in-process path, `write` → `take_into` on one thread between two participants,
//! allocates nothing per sample in steady state, counted by an instrumented global allocator
//! (its own test binary: only this test's threads allocate in it).

mod common;

use std::time::Duration;

use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use std::alloc::System;
use tachyon::prelude::*;
use tachyon::{ParticipantSettings, TransportSettings};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[derive(DdsType, Debug, Clone, PartialEq, Default)]
#[dds(name = "test::Octets")]
struct Octets {
    seq: u64,
    data: Vec<u8>,
}

/// Participants of this process only (no UDP), announcing rarely: once their first
/// announcements are over (five, 100 ms apart, which allocate as they are sent and
/// received), nothing but the samples runs while the allocations are counted.
fn participant() -> DomainParticipant {
    let settings = ParticipantSettings {
        transports: TransportSettings {
            no_udp: true,
            ..TransportSettings::default()
        },
        announce_period: Some(Duration::from_secs(60)),
        lease_duration: Some(Duration::from_secs(300)),
        ..ParticipantSettings::default()
    };
    DomainParticipant::with_settings(0, &settings).expect("participant")
}

#[test]
fn write_then_take_into_allocates_nothing_per_sample() {
    let created = std::time::Instant::now();
    let (a, b) = (participant(), participant());
    let w = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter(
            &a.create_topic::<Octets>("octets").expect("topic"),
            DataWriterQos::default().best_effort().keep_last(1),
        )
        .expect("writer");
    let r = b
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(
            &b.create_topic::<Octets>("octets").expect("topic"),
            DataReaderQos::default().best_effort().keep_last(1),
        )
        .expect("reader");
    common::wait_matched(&w, &r);
    for size in [32usize, 1024] {
        let mut sample = Octets {
            seq: 0,
            data: vec![7; size],
        };
        let mut taken = Vec::new();
        let step = |sample: &mut Octets, taken: &mut Vec<_>| {
            sample.seq += 1;
            w.write(sample).expect("write");
            // Handed over on this thread: there at once (a spin covers the rare sample
            // another thread of the writer's participant delivers).
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
        assert_eq!(allocs, 0, "{size} B: {allocs} allocations over {n} samples");
    }
}
