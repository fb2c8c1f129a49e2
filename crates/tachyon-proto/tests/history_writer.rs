//! WriterHistory: sequence numbers, KEEP_LAST replacement, KEEP_ALL flow control, instances,
//! acknowledgement release, transient-local retention, lifespan and GAP information.

use tachyon_cdr::KeyHash;
use tachyon_proto::history::{
    AddOutcome, ChangeKind, Durability, History, Limit, NewChange, Payload, ResourceLimits,
    WriteError, WriterHistory, WriterHistoryConfig,
};
use tachyon_proto::Instant;
use tachyon_wire::{SequenceNumber, Time};

fn key(n: u8) -> KeyHash {
    let mut k = [0; 16];
    k[15] = n;
    KeyHash(k)
}

fn sn(n: i64) -> SequenceNumber {
    SequenceNumber(n)
}

fn change(kind: ChangeKind, k: u8, expiry: Option<u64>) -> NewChange {
    NewChange {
        kind,
        instance: key(k),
        source_timestamp: Time::ZERO,
        expiry: expiry.map(Instant::from_nanos),
        payload: Payload::from(vec![k]),
        coherent: None,
    }
}

fn data(k: u8) -> NewChange {
    change(ChangeKind::Alive, k, None)
}

fn history(history: History, limits: ResourceLimits, durability: Durability) -> WriterHistory {
    WriterHistory::new(WriterHistoryConfig {
        history,
        limits,
        durability,
    })
    .expect("test configurations are consistent")
}

fn sns(w: &WriterHistory) -> Vec<i64> {
    w.iter().map(|c| c.sn.0).collect()
}

#[test]
fn sequence_numbers_start_at_one_and_increase() {
    let mut w = history(
        History::KeepAll,
        ResourceLimits::default(),
        Durability::Volatile,
    );
    assert_eq!(w.last_sn(), SequenceNumber::ZERO);
    assert!(w.is_empty() && w.min_sn().is_none());
    for i in 1..=5 {
        let out = w.add_change(data(i as u8)).expect("unlimited");
        assert_eq!(
            out,
            AddOutcome {
                sn: sn(i),
                replaced: None
            }
        );
    }
    assert_eq!(
        (w.min_sn(), w.max_sn(), w.len()),
        (Some(sn(1)), Some(sn(5)), 5)
    );
    assert_eq!(w.get(sn(3)).map(|c| c.payload.as_bytes()), Some(&[3u8][..]));
    assert_eq!(
        w.iter_from(sn(4)).map(|c| c.sn.0).collect::<Vec<_>>(),
        [4, 5]
    );
}

#[test]
fn payloads_are_shared_not_copied() {
    let mut w = history(
        History::KeepAll,
        ResourceLimits::default(),
        Durability::Volatile,
    );
    let p = Payload::from(vec![9; 64]);
    let mut c = data(1);
    c.payload = p.clone();
    let out = w.add_change(c).expect("unlimited");
    assert!(w.get(out.sn).expect("just added").payload.ptr_eq(&p));
}

#[test]
fn keep_last_replaces_oldest_of_the_same_instance() {
    let mut w = history(
        History::KeepLast(2),
        ResourceLimits::default(),
        Durability::Volatile,
    );
    for k in [1, 2, 1, 2] {
        assert_eq!(w.add_change(data(k)).expect("keep last").replaced, None);
    }
    // Instance 1 holds sn 1 and 3: the third write of it replaces sn 1, not instance 2's sn 2.
    let out = w.add_change(data(1)).expect("keep last");
    assert_eq!(
        out,
        AddOutcome {
            sn: sn(5),
            replaced: Some(sn(1))
        }
    );
    assert_eq!(sns(&w), [2, 3, 4, 5]);
    assert_eq!(w.instance_len(&key(1)), 2);
    // The replaced one is reported as missing, so the writer GAPs it.
    assert_eq!(
        w.missing(sn(1), sn(5)).collect::<Vec<_>>(),
        [(sn(1), sn(1))]
    );
}

#[test]
fn keep_all_would_block_and_acknowledgement_releases() {
    let limits = ResourceLimits {
        max_samples: Some(3),
        ..ResourceLimits::default()
    };
    let mut w = history(History::KeepAll, limits, Durability::Volatile);
    for k in 1..=3 {
        w.add_change(data(k)).expect("within limit");
    }
    let blocked = w.add_change(data(4));
    assert_eq!(
        blocked,
        Err(WriteError::WouldBlock {
            limit: Limit::Samples
        })
    );
    assert_eq!(
        w.last_sn(),
        sn(3),
        "a refused change consumes no sequence number"
    );
    assert_eq!(w.remove_acknowledged(sn(2)), 2);
    assert_eq!(sns(&w), [3]);
    assert_eq!(w.add_change(data(4)).expect("room after ack").sn, sn(4));
    assert_eq!(w.acknowledged(), sn(2));
}

#[test]
fn keep_all_per_instance_and_instance_limits_block() {
    let limits = ResourceLimits {
        max_samples: Some(10),
        max_instances: Some(2),
        max_samples_per_instance: Some(2),
    };
    let mut w = history(History::KeepAll, limits, Durability::Volatile);
    w.add_change(data(1)).expect("room");
    w.add_change(data(1)).expect("room");
    assert_eq!(
        w.add_change(data(1)),
        Err(WriteError::WouldBlock {
            limit: Limit::SamplesPerInstance
        })
    );
    w.add_change(data(2)).expect("second instance");
    assert_eq!(
        w.add_change(data(3)),
        Err(WriteError::WouldBlock {
            limit: Limit::Instances
        })
    );
    assert_eq!(
        w.register_instance(key(3)),
        Err(WriteError::WouldBlock {
            limit: Limit::Instances
        })
    );
    // Unregistering instance 2 and having everything acknowledged forgets it.
    w.add_change(change(ChangeKind::NotAliveUnregistered, 2, None))
        .expect("room");
    w.remove_acknowledged(w.last_sn());
    assert_eq!(w.instance_count(), 1);
    assert_eq!(w.register_instance(key(3)), Ok(key(3)));
}

#[test]
fn register_unregister_dispose_and_lookup() {
    let mut w = history(
        History::KeepLast(1),
        ResourceLimits::default(),
        Durability::Volatile,
    );
    assert_eq!(
        w.add_change(change(ChangeKind::NotAliveUnregistered, 1, None)),
        Err(WriteError::NotRegistered)
    );
    assert_eq!(w.register_instance(key(1)), Ok(key(1)));
    assert!(w.is_registered(&key(1)) && w.is_empty());
    assert_eq!(w.lookup_instance(&key(1)), Some(key(1)));
    assert_eq!(w.lookup_instance(&key(2)), None);
    // Dispose auto-registers, like write.
    let d = w
        .add_change(change(ChangeKind::NotAliveDisposed, 2, None))
        .expect("room");
    assert_eq!(
        w.get(d.sn).map(|c| c.kind),
        Some(ChangeKind::NotAliveDisposed)
    );
    assert!(w.is_registered(&key(2)));
    let u = w
        .add_change(change(ChangeKind::NotAliveDisposedUnregistered, 2, None))
        .expect("registered");
    assert_eq!(
        u.replaced,
        Some(d.sn),
        "KEEP_LAST(1): the unregister replaces the dispose"
    );
    assert!(!w.is_registered(&key(2)));
    assert_eq!(
        w.instance_count(),
        2,
        "kept while its unregister is unacknowledged"
    );
    w.remove_acknowledged(u.sn);
    assert_eq!(w.instance_count(), 1);
    assert_eq!(w.lookup_instance(&key(2)), None);
}

#[test]
fn transient_local_keeps_acknowledged_history_for_late_joiners() {
    let mut w = history(
        History::KeepLast(2),
        ResourceLimits::default(),
        Durability::TransientLocal,
    );
    for k in [1, 2, 1, 1, 1, 2, 3] {
        w.add_change(data(k)).expect("keep last");
    }
    assert_eq!(w.remove_acknowledged(w.last_sn()), 0);
    // The last two per instance, in sequence order.
    assert_eq!(sns(&w), [2, 4, 5, 6, 7]);
    // Unregistered instances are released once acknowledged.
    let u = w
        .add_change(change(ChangeKind::NotAliveUnregistered, 3, None))
        .expect("reg");
    w.remove_acknowledged(u.sn);
    assert_eq!(sns(&w), [2, 4, 5, 6]);
    assert_eq!(w.lookup_instance(&key(3)), None);
}

#[test]
fn transient_local_keep_all_evicts_only_acknowledged_changes() {
    let limits = ResourceLimits {
        max_samples: Some(2),
        ..ResourceLimits::default()
    };
    let mut w = history(History::KeepAll, limits, Durability::TransientLocal);
    w.add_change(data(1)).expect("room");
    w.add_change(data(2)).expect("room");
    assert_eq!(
        w.add_change(data(3)),
        Err(WriteError::WouldBlock {
            limit: Limit::Samples
        })
    );
    w.remove_acknowledged(sn(1));
    assert_eq!(
        sns(&w),
        [1, 2],
        "transient-local keeps acknowledged changes"
    );
    let out = w
        .add_change(data(3))
        .expect("evicts the acknowledged change");
    assert_eq!(out.replaced, Some(sn(1)));
    assert_eq!(
        w.add_change(data(4)),
        Err(WriteError::WouldBlock {
            limit: Limit::Samples
        })
    );
}

#[test]
fn lifespan_expiry_removes_and_reports() {
    let mut w = history(
        History::KeepAll,
        ResourceLimits::default(),
        Durability::Volatile,
    );
    w.add_change(change(ChangeKind::Alive, 1, Some(30)))
        .expect("room");
    w.add_change(change(ChangeKind::Alive, 2, Some(10)))
        .expect("room");
    w.add_change(change(ChangeKind::Alive, 3, None))
        .expect("room");
    assert_eq!(w.next_expiry(), Some(Instant::from_nanos(10)));
    let mut removed = Vec::new();
    w.expire(Instant::from_nanos(9), &mut removed);
    assert!(removed.is_empty());
    w.expire(Instant::from_nanos(30), &mut removed);
    assert_eq!(removed, [sn(2), sn(1)]);
    assert_eq!(w.next_expiry(), None);
    assert_eq!(sns(&w), [3]);
    // An acknowledged change leaves the expiry index too.
    w.add_change(change(ChangeKind::Alive, 4, Some(50)))
        .expect("room");
    w.remove_acknowledged(w.last_sn());
    assert_eq!(w.next_expiry(), None);
}

#[test]
fn missing_runs_cover_holes_and_clamp_to_assigned() {
    let mut w = history(
        History::KeepAll,
        ResourceLimits::default(),
        Durability::Volatile,
    );
    let mut removed = Vec::new();
    for i in 1..=8u64 {
        let expiry = [2, 3, 5, 8].contains(&i).then_some(i);
        w.add_change(change(ChangeKind::Alive, 1, expiry))
            .expect("room");
    }
    w.expire(Instant::from_nanos(100), &mut removed);
    let runs: Vec<_> = w.missing(sn(0), sn(100)).collect();
    assert_eq!(runs, [(sn(2), sn(3)), (sn(5), sn(5)), (sn(8), sn(8))]);
    assert_eq!(w.missing(sn(4), sn(4)).count(), 0);
    assert_eq!(w.missing(sn(9), sn(3)).count(), 0);
    let empty = history(
        History::KeepAll,
        ResourceLimits::default(),
        Durability::Volatile,
    );
    assert_eq!(empty.missing(sn(1), sn(10)).count(), 0);
}

#[test]
fn an_unheld_change_is_numbered_and_registered_but_not_kept() {
    let limits = ResourceLimits {
        max_instances: Some(2),
        ..ResourceLimits::default()
    };
    let mut w = history(History::KeepLast(1), limits, Durability::Volatile);
    w.add_change(data(1)).expect("room");
    let c = w.add_unheld(data(1)).expect("room");
    assert_eq!(
        (c.sn, c.instance, c.payload.as_bytes()),
        (sn(2), key(1), &[1u8][..])
    );
    // The held change stays until released; the unheld one never was.
    assert_eq!(sns(&w), vec![1]);
    assert_eq!(w.last_sn(), sn(2));
    assert_eq!(w.add_unheld(data(2)).expect("room").sn, sn(3));
    assert!(w.is_registered(&key(2)));
    assert_eq!(w.instance_count(), 2);
    // max_instances counts instances, held or not.
    assert_eq!(
        w.add_unheld(data(3)),
        Err(WriteError::WouldBlock {
            limit: Limit::Instances
        })
    );
    // Unregistering an instance without held changes forgets it, as a release would.
    let c = w
        .add_unheld(change(ChangeKind::NotAliveUnregistered, 2, None))
        .expect("registered");
    assert_eq!(c.sn, sn(4));
    assert!(!w.is_registered(&key(2)));
    assert_eq!(w.instance_count(), 1);
    assert_eq!(
        w.add_unheld(change(ChangeKind::NotAliveUnregistered, 2, None)),
        Err(WriteError::NotRegistered)
    );
    // Nothing was added to what a release or a late joiner sees.
    assert_eq!(w.remove_acknowledged(sn(4)), 1);
    assert!(w.is_empty());
}

proptest::proptest! {
    /// `get` and `iter_from` find changes by their distance from the oldest where nothing in
    /// between was removed, and by a search where something was: either way what a scan of
    /// the held changes finds, on KEEP_LAST histories of several instances (replacements leave
    /// holes anywhere) and KEEP_ALL ones acknowledged from the front.
    #[test]
    fn lookups_by_sequence_number_agree_with_a_scan(
        depth in proptest::option::of(1usize..4),
        writes in proptest::collection::vec(0u8..4, 1..60),
        acked in 0i64..40,
        probes in proptest::collection::vec(-2i64..70, 1..30),
    ) {
        let kind = depth.map_or(History::KeepAll, History::KeepLast);
        let mut w = history(kind, ResourceLimits::default(), Durability::Volatile);
        for k in writes {
            w.add_change(data(k)).expect("unlimited");
        }
        if depth.is_none() {
            w.remove_acknowledged(sn(acked));
        }
        let held = sns(&w);
        for p in probes {
            let got = w.get(sn(p)).map(|c| c.sn.0);
            proptest::prop_assert_eq!(got, held.iter().copied().find(|&s| s == p));
            let from: Vec<i64> = w.iter_from(sn(p)).map(|c| c.sn.0).collect();
            let want: Vec<i64> = held.iter().copied().filter(|&s| s >= p).collect();
            proptest::prop_assert_eq!(from, want);
        }
    }
}
