//! Fragmentation and bounded reassembly.

use proptest::prelude::*;
use tachyon_proto::frag::{
    fragments, FragmentInfo, Reassembler, ReassemblyError, ReassemblyLimits, ReassemblyOutcome,
};
use tachyon_proto::{Duration, Instant};
use tachyon_wire::{EntityId, FragmentNumber, Guid, GuidPrefix, SequenceNumber};

fn writer(n: u8) -> Guid {
    Guid {
        prefix: GuidPrefix([n; 12]),
        entity_id: EntityId([0, 0, 1, 0x02]),
    }
}

fn sn(n: u32) -> SequenceNumber {
    SequenceNumber::from_parts(0, n)
}

fn payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 % 251) as u8).collect()
}

/// Feeds `data` cut by `fragments(…)` in the given order; returns the completed sample.
fn feed(r: &mut Reassembler, data: &[u8], size: u16, per: u16, order: &[usize]) -> Option<Vec<u8>> {
    let ranges: Vec<_> = fragments(data.len(), size, per).collect();
    let mut done = None;
    for &i in order {
        let f = ranges[i % ranges.len()];
        let info = FragmentInfo {
            starting_num: f.starting_num,
            count: f.count,
            fragment_size: size,
            sample_size: data.len() as u32,
        };
        match r.handle_fragment(Instant::ZERO, writer(1), sn(1), info, &data[f.start..f.end]) {
            Ok(ReassemblyOutcome::Complete(v)) => {
                assert!(done.is_none(), "completed twice");
                done = Some(v.to_vec());
            }
            Ok(_) => {}
            Err(e) => panic!("{e}"),
        }
    }
    done
}

#[test]
fn in_order_reverse_and_grouped() {
    let data = payload(262_144);
    let n = fragments(data.len(), 1344, 1).count();
    let mut r = Reassembler::new(ReassemblyLimits::default());
    let order: Vec<_> = (0..n).collect();
    assert_eq!(feed(&mut r, &data, 1344, 1, &order).unwrap(), data);
    let rev: Vec<_> = (0..n).rev().collect();
    assert_eq!(feed(&mut r, &data, 1344, 1, &rev).unwrap(), data);
    let grouped: Vec<_> = (0..fragments(data.len(), 1000, 7).count()).collect();
    assert_eq!(feed(&mut r, &data, 1000, 7, &grouped).unwrap(), data);
    assert!(r.is_empty());
    assert_eq!(r.allocated_bytes(), 0);
    assert_eq!(r.stats().completed, 3);
}

#[test]
fn duplicates_and_padding_are_harmless() {
    let data = payload(5000);
    let mut r = Reassembler::new(ReassemblyLimits::default());
    let info = |s, c| FragmentInfo {
        starting_num: s,
        count: c,
        fragment_size: 1000,
        sample_size: 5000,
    };
    let mut padded = data[..1000].to_vec();
    padded.extend_from_slice(&[0xee; 3]); // submessage padding after the fragment
    let at = Instant::ZERO;
    assert_eq!(
        r.handle_fragment(at, writer(1), sn(1), info(1, 1), &padded),
        Ok(ReassemblyOutcome::Incomplete)
    );
    assert_eq!(
        r.handle_fragment(at, writer(1), sn(1), info(1, 1), &padded),
        Ok(ReassemblyOutcome::Duplicate)
    );
    let missing = r.missing(writer(1), sn(1)).unwrap();
    assert_eq!(
        missing.iter().collect::<Vec<_>>(),
        (2..=5).map(FragmentNumber).collect::<Vec<_>>()
    );
    r.handle_fragment(at, writer(1), sn(1), info(4, 2), &data[3000..])
        .unwrap();
    let missing = r.missing(writer(1), sn(1)).unwrap();
    assert_eq!(
        missing.iter().collect::<Vec<_>>(),
        vec![FragmentNumber(2), FragmentNumber(3)]
    );
    let out = r.handle_fragment(at, writer(1), sn(1), info(2, 2), &data[1000..3000]);
    assert_eq!(out, Ok(ReassemblyOutcome::Complete(data.into())));
}

#[test]
fn a_one_gib_announcement_costs_only_what_arrives() {
    let limits = ReassemblyLimits {
        max_sample_size: u32::MAX,
        max_total_bytes: 1024 * 1024,
        max_in_progress: 4,
    };
    let mut r = Reassembler::new(limits);
    let gib = 1u32 << 30;
    let frag = vec![1u8; 1344];
    let info = |n| FragmentInfo {
        starting_num: n,
        count: 1,
        fragment_size: 1344,
        sample_size: gib,
    };
    r.handle_fragment(Instant::ZERO, writer(1), sn(1), info(1), &frag)
        .unwrap();
    // One 64 KiB chunk plus the bookkeeping of a 1 GiB sample (a bit per fragment, an entry
    // per chunk: about 350 KiB).
    assert!(r.allocated_bytes() <= 512 * 1024, "{}", r.allocated_bytes());
    // Fragments scattered over the whole sample: storage grows chunk by chunk until the budget
    // stops it, never beyond.
    let mut rejected = 0;
    for k in 1..200u32 {
        match r.handle_fragment(Instant::ZERO, writer(1), sn(1), info(k * 3000), &frag) {
            Ok(_) => {}
            Err(ReassemblyError::OutOfBudget) => rejected += 1,
            Err(e) => panic!("{e}"),
        }
        assert!(r.allocated_bytes() <= 1024 * 1024);
    }
    assert!(rejected > 0);
    r.discard_writer(writer(1));
    assert_eq!(r.allocated_bytes(), 0);
    assert_eq!(r.stats().abandoned, 1);
    // With the default limits a 1 GiB sample is refused outright.
    let mut r = Reassembler::new(ReassemblyLimits::default());
    assert!(matches!(
        r.handle_fragment(Instant::ZERO, writer(1), sn(1), info(1), &frag),
        Err(ReassemblyError::SampleTooLarge { .. })
    ));
}

#[test]
fn malformed_and_inconsistent_fragments_are_rejected() {
    let mut r = Reassembler::new(ReassemblyLimits::default());
    let at = Instant::ZERO;
    let f = |s, c, fs, ss| FragmentInfo {
        starting_num: s,
        count: c,
        fragment_size: fs,
        sample_size: ss,
    };
    let bytes = [0u8; 100];
    for (info, data) in [
        (f(1, 1, 0, 100), &bytes[..]),
        (f(1, 1, 10, 0), &bytes[..]),
        (f(0, 1, 10, 100), &bytes[..]),
        (f(10, 2, 10, 100), &bytes[..]),
    ] {
        assert!(matches!(
            r.handle_fragment(at, writer(1), sn(1), info, data),
            Err(ReassemblyError::Malformed { .. })
        ));
    }
    assert_eq!(
        r.handle_fragment(at, writer(1), sn(1), f(1, 2, 10, 100), &bytes[..15]),
        Err(ReassemblyError::Truncated {
            needed: 20,
            available: 15
        })
    );
    r.handle_fragment(at, writer(1), sn(1), f(1, 1, 10, 100), &bytes[..10])
        .unwrap();
    assert_eq!(
        r.handle_fragment(at, writer(1), sn(1), f(2, 1, 10, 200), &bytes[..10]),
        Err(ReassemblyError::Inconsistent)
    );
    assert_eq!(r.stats().rejected, 6);
}

#[test]
fn limits_on_partial_samples_and_freeing() {
    let limits = ReassemblyLimits {
        max_in_progress: 2,
        ..ReassemblyLimits::default()
    };
    let mut r = Reassembler::new(limits);
    let info = FragmentInfo {
        starting_num: 1,
        count: 1,
        fragment_size: 10,
        sample_size: 100,
    };
    let d = [0u8; 10];
    for s in 1..=2 {
        r.handle_fragment(Instant::ZERO, writer(1), sn(s), info, &d)
            .unwrap();
    }
    assert_eq!(
        r.handle_fragment(Instant::ZERO, writer(1), sn(3), info, &d),
        Err(ReassemblyError::TooManyInProgress)
    );
    assert_eq!(r.in_progress(writer(1)).count(), 2);
    r.discard_below(writer(1), sn(2));
    assert_eq!(r.len(), 1);
    r.handle_fragment(Instant::from_nanos(10), writer(2), sn(1), info, &d)
        .unwrap();
    r.expire(Instant::from_nanos(15), Duration::from_nanos(7));
    assert_eq!(r.len(), 1);
    assert_eq!(r.in_progress(writer(2)).count(), 1);
}

proptest! {
    #[test]
    fn any_order_with_duplicates_reassembles_the_same_bytes(
        len in 1usize..20_000,
        size in 1u16..3000,
        per in 1u16..5,
        seed in proptest::collection::vec(any::<u16>(), 0..400),
    ) {
        let data = payload(len);
        let n = fragments(len, size, per).count();
        // Every fragment at least once, in an arbitrary order, plus arbitrary duplicates.
        let mut order: Vec<usize> = (0..n).collect();
        for (i, s) in seed.iter().enumerate() {
            let j = *s as usize % n;
            order.swap(i % n, j);
            order.push(j);
        }
        let mut r = Reassembler::new(ReassemblyLimits::default());
        let ranges: Vec<_> = fragments(len, size, per).collect();
        let mut completions = 0;
        for &i in &order {
            let f = ranges[i];
            let info = FragmentInfo {
                starting_num: f.starting_num,
                count: f.count,
                fragment_size: size,
                sample_size: len as u32,
            };
            if let Ok(ReassemblyOutcome::Complete(v)) =
                r.handle_fragment(Instant::ZERO, writer(1), sn(1), info, &data[f.start..f.end])
            {
                prop_assert_eq!(v.as_bytes(), &data[..]);
                completions += 1;
            }
        }
        // After completion, late duplicates start a new partial (the writer would GAP or the
        // reader would discard below its high-water mark); what matters is one completion per
        // full set and bounded memory.
        prop_assert!(completions >= 1);
        prop_assert!(r.allocated_bytes() <= ReassemblyLimits::default().max_total_bytes);
    }
}

/// Tiny fragments of a huge sample: the bitmap (a bit per fragment) is counted against the byte
/// budget, so a handful of DATA_FRAGs cannot allocate megabytes outside the limit.
#[test]
fn bookkeeping_of_tiny_fragments_counts_against_the_budget() {
    let limits = ReassemblyLimits {
        max_sample_size: 256 * 1024 * 1024,
        max_total_bytes: 4 * 1024 * 1024,
        max_in_progress: 64,
    };
    let mut r = Reassembler::new(limits);
    let info = FragmentInfo {
        starting_num: 1,
        count: 1,
        fragment_size: 1,
        sample_size: 256 * 1024 * 1024,
    };
    // Each partial would need a 32 MiB bitmap: refused before anything is allocated.
    let mut refused = 0;
    for k in 1..=64 {
        match r.handle_fragment(Instant::ZERO, writer(1), sn(k), info, &[0]) {
            Err(ReassemblyError::OutOfBudget) => refused += 1,
            other => panic!("{other:?}"),
        }
        assert!(r.allocated_bytes() <= limits.max_total_bytes);
    }
    assert_eq!(refused, 64);
    assert!(r.is_empty());
    // Fragments of 64 bytes of a 16 MiB sample: 32 KiB of bitmap each, counted; the budget
    // stops new partials once it is spent.
    let info = FragmentInfo {
        fragment_size: 64,
        sample_size: 16 * 1024 * 1024,
        ..info
    };
    let mut held = 0;
    for k in 1..=64 {
        if r.handle_fragment(Instant::ZERO, writer(2), sn(k), info, &[0; 64])
            .is_ok()
        {
            held += 1;
        }
        assert!(r.allocated_bytes() <= limits.max_total_bytes);
    }
    assert!(held > 0 && held < 64, "{held}");
    r.discard_writer(writer(2));
    assert_eq!(r.allocated_bytes(), 0);
}
