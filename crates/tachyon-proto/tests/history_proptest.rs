//! Random operation sequences: the caches never panic, never exceed their limits, and `take`
//! never returns the same sample twice.

use std::collections::HashSet;

use proptest::prelude::*;
use tachyon_cdr::KeyHash;
use tachyon_proto::history::{
    ChangeKind, Durability, History, InstanceSelector, InstanceStateMask, NewChange, Payload,
    Query, ReaderDataLifecycle, ReaderHistory, ReaderHistoryConfig, ResourceLimits,
    SampleStateMask, ViewStateMask, WriterHistory, WriterHistoryConfig,
};
use tachyon_proto::{Duration, Instant};
use tachyon_wire::{EntityId, EntityKind, Guid, GuidPrefix, SequenceNumber, Time};

fn key(n: u8) -> KeyHash {
    let mut k = [0; 16];
    k[15] = n;
    KeyHash(k)
}

fn writer(n: u8) -> Guid {
    Guid::new(
        GuidPrefix([n; 12]),
        EntityId::new([0, 0, 1], EntityKind::USER_WRITER_WITH_KEY),
    )
}

#[derive(Clone, Debug)]
enum ReaderOp {
    Insert {
        w: u8,
        k: u8,
    },
    Dispose {
        w: u8,
        k: u8,
    },
    Unregister {
        w: u8,
        k: u8,
    },
    WriterLost {
        w: u8,
    },
    Read {
        max: usize,
        masks: (u8, u8, u8),
        next: Option<Option<u8>>,
    },
    Take {
        max: usize,
        masks: (u8, u8, u8),
        next: Option<Option<u8>>,
    },
    Purge,
    Advance {
        nanos: u64,
    },
}

fn reader_op() -> impl Strategy<Value = ReaderOp> {
    let wk = || (0u8..3, 0u8..6);
    let masks = (1u8..4, 1u8..4, 1u8..8);
    let next = proptest::option::of(proptest::option::of(0u8..6));
    prop_oneof![
        4 => wk().prop_map(|(w, k)| ReaderOp::Insert { w, k }),
        1 => wk().prop_map(|(w, k)| ReaderOp::Dispose { w, k }),
        1 => wk().prop_map(|(w, k)| ReaderOp::Unregister { w, k }),
        1 => (0u8..3).prop_map(|w| ReaderOp::WriterLost { w }),
        2 => (0usize..5, masks.clone(), next.clone())
            .prop_map(|(max, masks, next)| ReaderOp::Read { max, masks, next }),
        2 => (0usize..5, masks, next)
            .prop_map(|(max, masks, next)| ReaderOp::Take { max, masks, next }),
        1 => Just(ReaderOp::Purge),
        1 => (0u64..100).prop_map(|nanos| ReaderOp::Advance { nanos }),
    ]
}

/// A mask type built from its raw bits through the public constants only.
fn masks(bits: (u8, u8, u8)) -> (SampleStateMask, ViewStateMask, InstanceStateMask) {
    let pick = |b: u8, i: u8| b & i != 0;
    let mut s = None;
    for (i, m) in [(1, SampleStateMask::READ), (2, SampleStateMask::NOT_READ)] {
        if pick(bits.0, i) {
            s = Some(s.map_or(m, |x| x | m));
        }
    }
    let mut v = None;
    for (i, m) in [(1, ViewStateMask::NEW), (2, ViewStateMask::NOT_NEW)] {
        if pick(bits.1, i) {
            v = Some(v.map_or(m, |x| x | m));
        }
    }
    let mut n = None;
    for (i, m) in [
        (1, InstanceStateMask::ALIVE),
        (2, InstanceStateMask::NOT_ALIVE_DISPOSED),
        (4, InstanceStateMask::NOT_ALIVE_NO_WRITERS),
    ] {
        if pick(bits.2, i) {
            n = Some(n.map_or(m, |x| x | m));
        }
    }
    (
        s.unwrap_or(SampleStateMask::ANY),
        v.unwrap_or(ViewStateMask::ANY),
        n.unwrap_or(InstanceStateMask::ANY),
    )
}

fn limits() -> impl Strategy<Value = (History, ResourceLimits)> {
    let opt = |lo: usize, hi: usize| proptest::option::of(lo..hi);
    (any::<bool>(), 1usize..4, opt(4, 12), opt(1, 5), opt(3, 5)).prop_map(
        |(keep_all, depth, max_samples, max_instances, per)| {
            let history = if keep_all {
                History::KeepAll
            } else {
                History::KeepLast(depth)
            };
            (
                history,
                ResourceLimits {
                    max_samples,
                    max_instances,
                    max_samples_per_instance: per,
                },
            )
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn reader_respects_limits_and_takes_each_sample_once(
        (history, limits) in limits(),
        delays in (proptest::option::of(0u64..50), proptest::option::of(0u64..50)),
        ops in proptest::collection::vec(reader_op(), 0..200),
    ) {
        let lifecycle = ReaderDataLifecycle {
            autopurge_nowriter_samples_delay: delays.0.map(Duration::from_nanos),
            autopurge_disposed_samples_delay: delays.1.map(Duration::from_nanos),
        };
        let Ok(mut r) = ReaderHistory::new(ReaderHistoryConfig { history, limits, lifecycle }) else {
            return Ok(());
        };
        let mut now = Instant::ZERO;
        let mut next_id = 0u32;
        let mut taken = HashSet::new();
        let mut out = Vec::new();
        for op in ops {
            match op {
                ReaderOp::Insert { w, k } => {
                    next_id += 1;
                    let payload = Payload::from(next_id.to_be_bytes().to_vec());
                    let _ = r.insert_sample(now, writer(w), key(k), Time::ZERO, payload);
                }
                ReaderOp::Dispose { w, k } => {
                    let _ = r.dispose(now, writer(w), key(k), Time::ZERO);
                }
                ReaderOp::Unregister { w, k } => r.unregister(now, writer(w), key(k), Time::ZERO),
                ReaderOp::WriterLost { w } => r.writer_lost(now, writer(w)),
                ReaderOp::Read { max, masks: m, next } | ReaderOp::Take { max, masks: m, next } => {
                    let (s, v, i) = masks(m);
                    let sel = next.map_or(InstanceSelector::Any, |n| {
                        InstanceSelector::NextAfter(n.map(key))
                    });
                    let q = Query::ANY.max_samples(max).states(s, v, i).instances(sel);
                    let is_take = matches!(op, ReaderOp::Take { .. });
                    let n = if is_take { r.take(&q, &mut out) } else { r.read(&q, &mut out) };
                    prop_assert_eq!(n, Ok(out.len()));
                    prop_assert!(out.len() <= max);
                    if matches!(sel, InstanceSelector::NextAfter(_)) {
                        prop_assert!(out.windows(2).all(|p| p[0].info.instance_handle == p[1].info.instance_handle));
                    }
                    for smp in &out {
                        prop_assert!(s.contains(smp.info.sample_state));
                        prop_assert!(v.contains(smp.info.view_state));
                        prop_assert!(i.contains(smp.info.instance_state));
                        prop_assert_eq!(smp.info.valid_data, smp.data.is_some());
                        if let (true, Some(d)) = (is_take, &smp.data) {
                            prop_assert!(taken.insert(d.as_bytes().to_vec()), "taken twice");
                        }
                    }
                }
                ReaderOp::Purge => r.purge(now),
                ReaderOp::Advance { nanos } => now += Duration::from_nanos(nanos),
            }
            prop_assert!(limits.max_samples.map_or(true, |m| r.len() <= m));
            prop_assert!(limits.max_instances.map_or(true, |m| r.instance_count() <= m));
            for k in 0..6 {
                let held = r.instance_len(&key(k));
                prop_assert!(limits.max_samples_per_instance.map_or(true, |m| held <= m));
                if let History::KeepLast(d) = history {
                    prop_assert!(held <= d);
                }
            }
            if let Some(at) = r.next_purge() {
                prop_assert!(at >= Instant::ZERO);
            }
        }
    }
}

#[derive(Clone, Debug)]
enum WriterOp {
    Add {
        kind: u8,
        k: u8,
        lifespan: Option<u64>,
    },
    Register {
        k: u8,
    },
    Ack {
        back: u8,
    },
    Expire,
    Advance {
        nanos: u64,
    },
}

fn writer_op() -> impl Strategy<Value = WriterOp> {
    prop_oneof![
        5 => (0u8..4, 0u8..6, proptest::option::of(0u64..100))
            .prop_map(|(kind, k, lifespan)| WriterOp::Add { kind, k, lifespan }),
        1 => (0u8..6).prop_map(|k| WriterOp::Register { k }),
        2 => (0u8..5).prop_map(|back| WriterOp::Ack { back }),
        1 => Just(WriterOp::Expire),
        1 => (0u64..50).prop_map(|nanos| WriterOp::Advance { nanos }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn writer_respects_limits_and_orders_sequence_numbers(
        (history, limits) in limits(),
        transient_local in any::<bool>(),
        ops in proptest::collection::vec(writer_op(), 0..200),
    ) {
        let durability = if transient_local { Durability::TransientLocal } else { Durability::Volatile };
        let Ok(mut w) = WriterHistory::new(WriterHistoryConfig { history, limits, durability }) else {
            return Ok(());
        };
        let mut now = Instant::ZERO;
        let mut last = SequenceNumber::ZERO;
        let mut removed = Vec::new();
        for op in ops {
            match op {
                WriterOp::Add { kind, k, lifespan } => {
                    let kind = [
                        ChangeKind::Alive,
                        ChangeKind::NotAliveDisposed,
                        ChangeKind::NotAliveUnregistered,
                        ChangeKind::NotAliveDisposedUnregistered,
                    ][usize::from(kind)];
                    let change = NewChange {
                        kind,
                        instance: key(k),
                        source_timestamp: Time::ZERO,
                        expiry: lifespan.map(|l| now + Duration::from_nanos(l)),
                        payload: Payload::from(vec![k]),
                        coherent: None,
                    };
                    if let Ok(out) = w.add_change(change) {
                        prop_assert_eq!(out.sn.0, last.0 + 1);
                        last = out.sn;
                        if let Some(gone) = out.replaced {
                            prop_assert!(w.get(gone).is_none());
                        }
                    }
                }
                WriterOp::Register { k } => { let _ = w.register_instance(key(k)); }
                WriterOp::Ack { back } => {
                    w.remove_acknowledged(SequenceNumber(last.0 - i64::from(back)));
                }
                WriterOp::Expire => {
                    removed.clear();
                    w.expire(now, &mut removed);
                    for sn in &removed {
                        prop_assert!(w.get(*sn).is_none());
                    }
                    prop_assert!(w.next_expiry().map_or(true, |at| at > now));
                }
                WriterOp::Advance { nanos } => now += Duration::from_nanos(nanos),
            }
            prop_assert_eq!(w.last_sn(), last);
            prop_assert!(limits.max_samples.map_or(true, |m| w.len() <= m));
            prop_assert!(limits.max_instances.map_or(true, |m| w.instance_count() <= m));
            let sns: Vec<_> = w.iter().map(|c| c.sn).collect();
            prop_assert!(sns.windows(2).all(|p| p[0] < p[1]));
            prop_assert_eq!(w.min_sn(), sns.first().copied());
            // Held and missing sequence numbers partition 1..=last.
            let missing: u64 = w.missing(SequenceNumber(1), last)
                .map(|(a, b)| (b.0 - a.0 + 1) as u64)
                .sum();
            prop_assert_eq!(missing + sns.len() as u64, last.0 as u64);
            for k in 0..6 {
                let held = w.instance_len(&key(k));
                prop_assert!(limits.max_samples_per_instance.map_or(true, |m| held <= m));
                if let History::KeepLast(d) = history {
                    prop_assert!(held <= d);
                }
            }
        }
    }
}
