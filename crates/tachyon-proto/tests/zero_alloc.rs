//! The steady-state path write → poll_transmit → handle_datagram → take allocates nothing,
//! best effort and reliable, 32 B and 1 KiB, counted by an instrumented global allocator.

#[path = "common/back_to_back.rs"]
mod back_to_back;

use back_to_back::BackToBack;
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use std::alloc::System;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Allocations over `n` samples after `warm` samples of warm-up.
fn allocations(reliable: bool, size: usize) -> (usize, usize) {
    measure(BackToBack::new(reliable, size))
}

/// Allocations over `n` samples of `t` after warm-up.
fn measure(mut t: BackToBack) -> (usize, usize) {
    for _ in 0..2000 {
        assert_eq!(t.step(), 1);
    }
    let n = 10_000;
    let region = Region::new(GLOBAL);
    for _ in 0..n {
        assert_eq!(t.step(), 1);
    }
    let c = region.change();
    // Acknowledgements are asked for every 5 ms or when the history (1024) is half full:
    // the cache stays bounded, draining at each acknowledgement.
    assert!(
        t.writer_held() <= 512,
        "the writer's cache drains as samples are acknowledged: {} held",
        t.writer_held()
    );
    (c.allocations + c.reallocations, n)
}

// One test so no other test thread allocates while a region is measured.
#[test]
fn no_allocation_per_sample_in_steady_state() {
    // The instrument works: an allocation in a region is counted.
    let region = Region::new(GLOBAL);
    let v: Vec<u8> = Vec::with_capacity(std::hint::black_box(100));
    assert!(region.change().allocations >= 1);
    drop(v);
    // And so does the path without pooling (the reference the pools are measured against).
    let region = Region::new(GLOBAL);
    let p = tachyon_proto::history::Payload::copy_from_slice(&[1, 2, 3]);
    assert!(region.change().allocations >= 1);
    drop(p);

    for (reliable, size) in [(false, 32), (false, 1024), (true, 32), (true, 1024)] {
        let (allocs, n) = allocations(reliable, size);
        assert_eq!(
            allocs,
            0,
            "{} {size} B: {allocs} allocations over {n} samples",
            if reliable { "reliable" } else { "best effort" }
        );
    }
    // A writer whose readers share no multicast group: each datagram goes to a list of
    // locators, which a datagram shares with the writer (not copied per datagram).
    let (allocs, n) = measure(BackToBack::with_second_reader(32));
    assert_eq!(
        allocs, 0,
        "two unicast readers: {allocs} allocations over {n} samples"
    );
}
