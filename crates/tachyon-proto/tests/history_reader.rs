//! ReaderHistory: KEEP_LAST/KEEP_ALL and rejections, instance lifecycle and generation counts,
//! read vs take, state masks, next-instance order, ranks, writer loss and autopurge.

use tachyon_cdr::KeyHash;
use tachyon_proto::history::{
    History, InstanceSelector, InstanceState, InstanceStateMask, Query, ReadError,
    ReaderDataLifecycle, ReaderHistory, ReaderHistoryConfig, RejectReason, ResourceLimits, Sample,
    SampleState, SampleStateMask, ViewState, ViewStateMask,
};
use tachyon_proto::{Duration, Instant};
use tachyon_wire::{EntityId, EntityKind, Guid, GuidPrefix, Time};

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

fn at(n: u64) -> Instant {
    Instant::from_nanos(n)
}

fn ts(s: i32) -> Time {
    Time {
        seconds: s,
        fraction: 0,
    }
}

fn reader(history: History, limits: ResourceLimits) -> ReaderHistory {
    ReaderHistory::new(ReaderHistoryConfig {
        history,
        limits,
        lifecycle: ReaderDataLifecycle::default(),
    })
    .expect("test configurations are consistent")
}

fn put(r: &mut ReaderHistory, w: u8, k: u8, v: u8) {
    r.insert_sample(at(0), writer(w), key(k), ts(v.into()), vec![v].into())
        .expect("within limits");
}

/// `(instance, first data byte or None)` of each returned sample.
fn ids(out: &[Sample]) -> Vec<(u8, Option<u8>)> {
    out.iter()
        .map(|s| (s.info.instance_handle.0[15], s.data.as_ref().map(|d| d[0])))
        .collect()
}

#[test]
fn keep_last_drops_oldest_per_instance() {
    let mut r = reader(History::KeepLast(2), ResourceLimits::default());
    for (k, v) in [(1, 1), (2, 2), (1, 3), (1, 4), (2, 5)] {
        put(&mut r, 1, k, v);
    }
    let mut out = Vec::new();
    assert_eq!(r.take(&Query::ANY, &mut out), Ok(4));
    assert_eq!(
        ids(&out),
        [(1, Some(3)), (1, Some(4)), (2, Some(2)), (2, Some(5))]
    );
    assert_eq!(r.len(), 0);
}

#[test]
fn keep_all_rejects_with_the_limit_that_was_hit() {
    let limits = ResourceLimits {
        max_samples: Some(3),
        max_instances: Some(2),
        max_samples_per_instance: Some(2),
    };
    let mut r = reader(History::KeepAll, limits);
    put(&mut r, 1, 1, 1);
    put(&mut r, 1, 1, 2);
    let rej = |r: &mut ReaderHistory, k| {
        r.insert_sample(at(0), writer(1), key(k), ts(0), vec![0].into())
            .map_err(|e| e.reason)
    };
    assert_eq!(rej(&mut r, 1), Err(RejectReason::SamplesPerInstanceLimit));
    put(&mut r, 1, 2, 3);
    assert_eq!(rej(&mut r, 3), Err(RejectReason::InstancesLimit));
    assert_eq!(rej(&mut r, 2), Err(RejectReason::SamplesLimit));
    assert_eq!(
        r.instance_count(),
        2,
        "a rejected sample creates no instance"
    );
    let mut out = Vec::new();
    r.take(&Query::ANY.max_samples(1), &mut out).expect("any");
    assert_eq!(rej(&mut r, 2), Ok(()));
}

#[test]
fn read_marks_and_take_removes() {
    let mut r = reader(History::KeepAll, ResourceLimits::default());
    put(&mut r, 1, 1, 1);
    let mut out = Vec::new();
    r.read(&Query::ANY, &mut out).expect("any");
    assert_eq!(out[0].info.sample_state, SampleState::NotRead);
    assert_eq!(out[0].info.view_state, ViewState::New);
    r.read(&Query::ANY, &mut out).expect("any");
    assert_eq!(out.len(), 1, "out is cleared, not appended to");
    assert_eq!(out[0].info.sample_state, SampleState::Read);
    assert_eq!(out[0].info.view_state, ViewState::NotNew);
    put(&mut r, 1, 1, 2);
    let not_read = Query::ANY.states(
        SampleStateMask::NOT_READ,
        ViewStateMask::ANY,
        InstanceStateMask::ANY,
    );
    r.take(&not_read, &mut out).expect("any");
    assert_eq!(ids(&out), [(1, Some(2))]);
    r.take(&Query::ANY, &mut out).expect("any");
    assert_eq!(ids(&out), [(1, Some(1))]);
    assert_eq!(r.take(&Query::ANY, &mut out), Ok(0));
    assert!(r.is_empty());
    assert_eq!(
        r.instance_count(),
        1,
        "an alive instance with a live writer is kept"
    );
}

#[test]
fn state_masks_filter_instances() {
    let mut r = reader(History::KeepAll, ResourceLimits::default());
    put(&mut r, 1, 1, 1);
    put(&mut r, 1, 2, 2);
    r.dispose(at(1), writer(1), key(2), ts(9)).expect("known");
    let mut out = Vec::new();
    let alive = Query::ANY.states(
        SampleStateMask::ANY,
        ViewStateMask::ANY,
        InstanceStateMask::ALIVE,
    );
    r.read(&alive, &mut out).expect("any");
    assert_eq!(ids(&out), [(1, Some(1))]);
    let gone = Query::ANY.states(
        SampleStateMask::ANY,
        ViewStateMask::NEW,
        InstanceStateMask::NOT_ALIVE,
    );
    r.read(&gone, &mut out).expect("any");
    assert_eq!(
        ids(&out),
        [(2, Some(2))],
        "the unread sample carries the dispose"
    );
    assert_eq!(out[0].info.instance_state, InstanceState::NotAliveDisposed);
    r.read(&gone, &mut out).expect("any");
    assert!(out.is_empty(), "no longer NEW");
}

#[test]
fn dispose_after_read_yields_an_invalid_sample() {
    let mut r = reader(History::KeepAll, ResourceLimits::default());
    put(&mut r, 1, 1, 1);
    let mut out = Vec::new();
    r.read(&Query::ANY, &mut out).expect("any");
    r.dispose(at(5), writer(1), key(1), ts(7)).expect("known");
    r.take(&Query::ANY, &mut out).expect("any");
    assert_eq!(ids(&out), [(1, Some(1)), (1, None)]);
    let inv = out[1].info;
    assert!(!inv.valid_data);
    assert_eq!((inv.source_timestamp, inv.reception_time), (ts(7), at(5)));
    assert_eq!(inv.instance_state, InstanceState::NotAliveDisposed);
    assert_eq!(inv.publication_handle, writer(1));
    // Disposed but the writer is still registered: the empty instance is kept.
    assert_eq!(r.instance_count(), 1);
    r.unregister(at(6), writer(1), key(1), ts(8));
    assert_eq!(
        r.instance_count(),
        0,
        "empty, not alive, no writers: forgotten"
    );
}

#[test]
fn dispose_of_unknown_instance_creates_it() {
    let mut r = reader(History::KeepAll, ResourceLimits::default());
    r.dispose(at(1), writer(1), key(4), ts(1))
        .expect("no limit");
    let mut out = Vec::new();
    r.read(&Query::ANY, &mut out).expect("any");
    assert_eq!(ids(&out), [(4, None)]);
    assert_eq!(out[0].info.view_state, ViewState::New);
    r.unregister(at(1), writer(9), key(5), ts(1));
    assert_eq!(
        r.instance_count(),
        1,
        "unregister of an unknown instance is ignored"
    );
}

#[test]
fn generation_counts_view_state_and_ranks() {
    let mut r = reader(History::KeepAll, ResourceLimits::default());
    let mut out = Vec::new();
    put(&mut r, 1, 1, 1);
    r.read(&Query::ANY, &mut out).expect("any");
    r.dispose(at(1), writer(1), key(1), ts(1)).expect("known");
    put(&mut r, 1, 1, 2); // reborn: disposed generation 1, NEW again
    assert_eq!(
        r.instance_state(&key(1)),
        Some((InstanceState::Alive, ViewState::New, 1, 0))
    );
    r.unregister(at(2), writer(1), key(1), ts(2));
    assert_eq!(
        r.instance_state(&key(1)).map(|s| s.0),
        Some(InstanceState::NotAliveNoWriters),
        "sample 2 unread: no invalid sample needed"
    );
    put(&mut r, 2, 1, 3); // reborn again: no-writers generation 1
    put(&mut r, 2, 1, 4);
    r.read(&Query::ANY, &mut out).expect("any");
    assert_eq!(
        ids(&out),
        [(1, Some(1)), (1, Some(2)), (1, Some(3)), (1, Some(4))]
    );
    let ranks: Vec<_> = out
        .iter()
        .map(|s| {
            let i = s.info;
            (
                i.disposed_generation_count,
                i.no_writers_generation_count,
                i.sample_rank,
                i.generation_rank,
                i.absolute_generation_rank,
            )
        })
        .collect();
    assert_eq!(
        ranks,
        [
            (0, 0, 3, 2, 2),
            (1, 0, 2, 1, 1),
            (1, 1, 1, 0, 0),
            (1, 1, 0, 0, 0)
        ]
    );
    assert!(out.iter().all(|s| s.info.view_state == ViewState::New));
    // Ranks are relative to the returned collection: without the last sample the
    // newest returned one is sample 3.
    put(&mut r, 2, 1, 5);
    r.read(&Query::ANY.max_samples(2), &mut out).expect("any");
    assert_eq!(
        out.iter()
            .map(|s| (s.info.sample_rank, s.info.generation_rank))
            .collect::<Vec<_>>(),
        [(1, 1), (0, 0)]
    );
}

#[test]
fn next_instance_iterates_in_handle_order() {
    let mut r = reader(History::KeepAll, ResourceLimits::default());
    for k in [3, 1, 2] {
        put(&mut r, 1, k, k);
        put(&mut r, 1, k, 10 + k);
    }
    let mut out = Vec::new();
    let mut seen = Vec::new();
    let mut after = None;
    while r
        .take_next_instance(after, &Query::ANY, &mut out)
        .expect("never unknown")
        > 0
    {
        seen.push(ids(&out));
        after = Some(out[0].info.instance_handle);
    }
    assert_eq!(
        seen,
        [
            vec![(1, Some(1)), (1, Some(11))],
            vec![(2, Some(2)), (2, Some(12))],
            vec![(3, Some(3)), (3, Some(13))],
        ]
    );
    // Instances without matching samples are skipped.
    put(&mut r, 1, 1, 1);
    put(&mut r, 1, 3, 3);
    r.read_instance(key(1), &Query::ANY, &mut out)
        .expect("known");
    let not_read = Query::ANY.states(
        SampleStateMask::NOT_READ,
        ViewStateMask::ANY,
        InstanceStateMask::ANY,
    );
    r.read_next_instance(None, &not_read, &mut out)
        .expect("never unknown");
    assert_eq!(ids(&out), [(3, Some(3))]);
}

#[test]
fn read_instance_of_unknown_handle_is_an_error() {
    let mut r = reader(History::KeepAll, ResourceLimits::default());
    let mut out = Vec::new();
    assert_eq!(
        r.read_instance(key(1), &Query::ANY, &mut out),
        Err(ReadError::UnknownInstance)
    );
    put(&mut r, 1, 1, 1);
    put(&mut r, 1, 2, 2);
    r.take_instance(key(2), &Query::ANY, &mut out)
        .expect("known");
    assert_eq!(ids(&out), [(2, Some(2))]);
}

#[test]
fn writer_loss_makes_its_instances_no_writers() {
    let mut r = reader(History::KeepAll, ResourceLimits::default());
    put(&mut r, 1, 1, 1);
    put(&mut r, 1, 2, 2);
    put(&mut r, 2, 2, 3);
    let mut out = Vec::new();
    r.read(&Query::ANY, &mut out).expect("any");
    r.writer_lost(at(5), writer(1));
    let state = |r: &ReaderHistory, k| r.instance_state(&key(k)).map(|s| s.0);
    assert_eq!(state(&r, 1), Some(InstanceState::NotAliveNoWriters));
    assert_eq!(
        state(&r, 2),
        Some(InstanceState::Alive),
        "writer 2 still writes it"
    );
    r.take(&Query::ANY, &mut out).expect("any");
    assert_eq!(
        ids(&out),
        [(1, Some(1)), (1, None), (2, Some(2)), (2, Some(3))]
    );
    assert_eq!(out[1].info.source_timestamp, Time::INVALID);
    assert_eq!(
        r.instance_count(),
        1,
        "the empty no-writers instance is forgotten on take"
    );
}

#[test]
fn autopurge_delays_apply() {
    let mut r = ReaderHistory::new(ReaderHistoryConfig {
        history: History::KeepLast(4),
        limits: ResourceLimits::default(),
        lifecycle: ReaderDataLifecycle {
            autopurge_nowriter_samples_delay: Some(Duration::from_nanos(100)),
            autopurge_disposed_samples_delay: Some(Duration::from_nanos(50)),
        },
    })
    .expect("consistent");
    put(&mut r, 1, 1, 1);
    put(&mut r, 1, 2, 2);
    assert_eq!(r.next_purge(), None);
    r.unregister(at(10), writer(1), key(1), ts(1));
    r.dispose(at(20), writer(1), key(2), ts(2)).expect("known");
    assert_eq!(r.next_purge(), Some(at(70)));
    r.purge(at(69));
    assert_eq!(r.len(), 2);
    r.purge(at(70));
    assert_eq!(r.len(), 1, "disposed samples purged");
    assert_eq!(
        r.instance_count(),
        2,
        "disposed instance kept: its writer is registered"
    );
    assert_eq!(r.next_purge(), Some(at(110)));
    r.purge(at(110));
    assert_eq!((r.len(), r.instance_count()), (0, 1));
    assert_eq!(r.next_purge(), None);
}

#[test]
fn keep_last_with_bounded_instances_bounds_memory() {
    let limits = ResourceLimits {
        max_instances: Some(4),
        ..ResourceLimits::default()
    };
    let mut r = reader(History::KeepLast(3), limits);
    for i in 0..10_000u32 {
        let k = (i % 7) as u8;
        let _ = r.insert_sample(at(i.into()), writer(1), key(k), ts(0), vec![0].into());
        if i % 13 == 0 {
            r.dispose(at(i.into()), writer(1), key(k), ts(0)).ok();
        }
        assert!(r.len() <= 12 && r.instance_count() <= 4);
    }
}

#[test]
fn has_matching_follows_masks_and_instance_selection() {
    let mut r = reader(History::KeepAll, ResourceLimits::default());
    let not_read = Query::ANY.sample_states(SampleStateMask::NOT_READ);
    let read = Query::ANY.sample_states(SampleStateMask::READ);
    assert!(!r.has_matching(&Query::ANY));
    put(&mut r, 1, 2, 2);
    assert!(r.has_matching(&not_read));
    assert!(!r.has_matching(&read));
    assert!(r.has_matching(&Query::ANY.view_states(ViewStateMask::NEW)));
    let mut out = Vec::new();
    r.read(&Query::ANY, &mut out).expect("read");
    assert!(!r.has_matching(&not_read));
    assert!(r.has_matching(&read));
    assert!(!r.has_matching(&Query::ANY.view_states(ViewStateMask::NEW)));
    // Instance selection: exact, next after, unknown.
    use tachyon_proto::history::InstanceSelector;
    assert!(r.has_matching(&read.instances(InstanceSelector::Instance(key(2)))));
    assert!(!r.has_matching(&read.instances(InstanceSelector::Instance(key(1)))));
    assert!(r.has_matching(&read.instances(InstanceSelector::NextAfter(Some(key(1))))));
    assert!(!r.has_matching(&read.instances(InstanceSelector::NextAfter(Some(key(2))))));
    // An invalid-data sample counts, with the instance's state.
    r.dispose(at(1), writer(1), key(2), ts(3)).expect("known");
    let disposed = Query::ANY.instance_states(InstanceStateMask::NOT_ALIVE_DISPOSED);
    assert!(r.has_matching(&disposed.sample_states(SampleStateMask::READ)));
    assert!(!r.has_matching(&Query::ANY.instance_states(InstanceStateMask::ALIVE)));
    // Nothing was marked or removed by asking.
    assert_eq!(r.len(), 1);
}

#[test]
fn newest_payload_is_the_last_valid_sample() {
    let mut r = reader(History::KeepAll, ResourceLimits::default());
    assert!(r.newest_payload(&key(1)).is_none());
    put(&mut r, 1, 1, 5);
    put(&mut r, 1, 1, 6);
    assert_eq!(r.newest_payload(&key(1)).map(|p| p[0]), Some(6));
    let mut out = Vec::new();
    r.take(&Query::ANY, &mut out).expect("take");
    assert!(r.newest_payload(&key(1)).is_none());
}

#[test]
fn ordered_access_returns_reception_order_across_instances() {
    let mut r = reader(History::KeepAll, ResourceLimits::default());
    r.set_ordered(true);
    for v in 0..3 {
        put(&mut r, 1, 2, v * 10);
        put(&mut r, 1, 1, v * 10 + 1);
    }
    r.dispose(at(1), writer(1), key(3), ts(9)).expect("dispose");
    let mut out = Vec::new();
    // The two oldest, whatever their instance; ranks stay per instance.
    r.read(&Query::ANY.max_samples(2), &mut out).expect("read");
    assert_eq!(ids(&out), vec![(2, Some(0)), (1, Some(1))]);
    assert!(out.iter().all(|s| s.info.sample_rank == 0));
    r.take(&Query::ANY, &mut out).expect("take");
    assert_eq!(
        ids(&out),
        vec![
            (2, Some(0)),
            (1, Some(1)),
            (2, Some(10)),
            (1, Some(11)),
            (2, Some(20)),
            (1, Some(21)),
            (3, None),
        ]
    );
    assert_eq!(
        out[0].info.sample_rank, 2,
        "two later samples of instance 2 follow"
    );
    assert!(r.is_empty());
    // Without ordered access: instance by instance, in handle order.
    r.set_ordered(false);
    put(&mut r, 1, 2, 1);
    put(&mut r, 1, 1, 2);
    r.take(&Query::ANY, &mut out).expect("take");
    assert_eq!(ids(&out), vec![(1, Some(2)), (2, Some(1))]);
}

/// A take of one sample (`take_next_sample`'s) has a path of its own: it gives what a take of
/// everything gives, one sample at a time, oldest first per instance, each alone in its
/// collection (ranks 0) — across a read that marked the oldest READ, a dispose and a new
/// generation, and two instances. (The view state is the instance's at each take: NOT_NEW
/// from an instance's second take on, so it is not compared.)
#[test]
fn taking_one_at_a_time_gives_what_taking_all_gives() {
    let fill = |r: &mut ReaderHistory| {
        put(r, 1, 1, 1);
        put(r, 1, 2, 2);
        put(r, 1, 1, 3);
        r.dispose(at(0), writer(1), key(1), ts(4)).expect("known");
        put(r, 1, 1, 5);
        put(r, 1, 2, 6);
    };
    let mut one = reader(History::KeepAll, ResourceLimits::default());
    let mut all = reader(History::KeepAll, ResourceLimits::default());
    fill(&mut one);
    fill(&mut all);
    // The oldest sample of instance 1 read first: READ, in both.
    let mut out = Vec::new();
    for r in [&mut one, &mut all] {
        r.read(&Query::ANY.max_samples(1), &mut out).expect("read");
        assert_eq!(ids(&out), vec![(1, Some(1))]);
    }
    // Not read only: the READ sample is passed over (the general path), then taken too.
    let not_read = Query::ANY
        .sample_states(SampleStateMask::NOT_READ)
        .max_samples(1);
    let mut taken = Vec::new();
    for r in [&mut all, &mut one] {
        r.take(&not_read, &mut taken).expect("take");
        assert_eq!(ids(&taken), vec![(1, Some(3))]);
        assert_eq!(taken[0].info.sample_state, SampleState::NotRead);
    }
    loop {
        one.take(&Query::ANY.max_samples(1), &mut out)
            .expect("take");
        match out.pop() {
            Some(s) => {
                assert!(out.is_empty());
                assert_eq!((s.info.sample_rank, s.info.generation_rank), (0, 0));
                taken.push(s);
            }
            None => break,
        }
    }
    let mut rest = Vec::new();
    all.take(&Query::ANY, &mut rest).expect("take");
    let key_of = |s: &Sample| {
        (
            s.info.instance_handle.0[15],
            s.data.as_ref().map(|d| d[0]),
            s.info.sample_state,
            s.info.instance_state,
            s.info.disposed_generation_count,
            s.info.absolute_generation_rank,
            s.info.valid_data,
        )
    };
    let got: Vec<_> = taken[1..].iter().map(key_of).collect();
    let want: Vec<_> = rest.iter().map(key_of).collect();
    assert_eq!(got, want);
    assert!(
        want.iter().any(|k| k.5 > 0),
        "a sample of an older generation"
    );
    assert!(
        want.iter().any(|k| k.2 == SampleState::Read),
        "the sample read first"
    );
}

#[test]
fn taking_all_of_one_sample_instances_gives_what_the_general_path_gives() {
    // KEEP_LAST(1): instances 1 and 3 hold one sample each (a take moves it out directly),
    // instance 2 one sample already READ, instance 4 disposed while it holds its sample.
    let fill = |r: &mut ReaderHistory| {
        put(r, 1, 1, 1);
        put(r, 1, 1, 2);
        put(r, 1, 2, 3);
        put(r, 2, 3, 4);
        put(r, 1, 4, 5);
        r.dispose(at(0), writer(1), key(4), ts(6)).expect("known");
    };
    let mut direct = reader(History::KeepLast(1), ResourceLimits::default());
    // Ordered access collects through the general path, instance by instance all the same.
    let mut general = reader(History::KeepLast(1), ResourceLimits::default());
    general.set_ordered(true);
    fill(&mut direct);
    fill(&mut general);
    let mut out = Vec::new();
    for r in [&mut direct, &mut general] {
        let of_2 = Query {
            instance: InstanceSelector::Instance(key(2)),
            ..Query::ANY
        };
        r.read(&of_2, &mut out).expect("read");
        assert_eq!(ids(&out), vec![(2, Some(3))]);
    }
    let info = |s: &Sample| {
        let i = &s.info;
        (
            i.instance_handle.0[15],
            s.data.as_ref().map(|d| d[0]),
            i.sample_state,
            i.view_state,
            i.instance_state,
            (i.sample_rank, i.generation_rank, i.absolute_generation_rank),
            i.valid_data,
        )
    };
    let mut got = Vec::new();
    let mut want = Vec::new();
    for (r, into) in [(&mut direct, &mut got), (&mut general, &mut want)] {
        r.take(&Query::ANY, &mut out).expect("take");
        let mut v: Vec<_> = out.iter().map(info).collect();
        v.sort_by_key(|k| (k.0, k.1.is_some()));
        *into = v;
    }
    assert_eq!(got, want);
    assert_eq!(got.len(), 4, "{got:?}");
    // Taken: nothing is left in either.
    for r in [&mut direct, &mut general] {
        r.take(&Query::ANY, &mut out).expect("take");
        assert!(out.is_empty());
    }
}
