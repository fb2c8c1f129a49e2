//! Time-driven behaviour through `handle_timeout`/`poll_timeout`: offered and requested
//! deadlines, manual liveliness and writer leases, lifespan, time-based filter, autopurge.

mod dds;

use dds::*;
use tachyon_proto::history::{
    Durability, History, InstanceState, ReaderDataLifecycle, ReaderHistoryConfig,
    WriterHistoryConfig,
};
use tachyon_proto::{
    Duration, Event, Instant, Liveliness, LivelinessKind, ReaderConfig, ReaderUpdate, WriterConfig,
};
use tachyon_sim::{Host, LinkConfig, NodeId, RunOutcome, Sim};
use tachyon_wire::EntityId;

struct Pair {
    sim: Sim,
    wn: NodeId,
    rn: NodeId,
    w: EntityId,
    r: EntityId,
}

/// A writer writing `total` samples one per `interval`, and a reader taking everything.
fn pair(wcfg: WriterConfig, rcfg: ReaderConfig, total: u64, interval: Duration) -> Pair {
    let mut sim = Sim::new(4);
    sim.set_default_link(LinkConfig::ideal(ms(1)));
    let Linked { wp, w, rp, r } = linked(&wcfg, &rcfg);
    let mut src = Source::new(w, total, |_| 32);
    src.instance_of = |i| (i % 2) as u32;
    src.interval = Some(interval);
    let wn = add_host(&mut sim, 1, wp, src);
    let rn = add_host(&mut sim, 2, rp, Sink::new(r).recording());
    Pair { sim, wn, rn, w, r }
}

fn keyed_writer() -> WriterConfig {
    WriterConfig {
        keyed: true,
        ..reliable_keep_all_writer(1000)
    }
}

fn keyed_reader() -> ReaderConfig {
    ReaderConfig {
        keyed: true,
        ..reliable_keep_all_reader()
    }
}

#[test]
fn deadlines_are_missed_once_per_period_and_per_instance_after_writing_stops() {
    let wcfg = WriterConfig {
        deadline: Some(ms(20)),
        ..keyed_writer()
    };
    let rcfg = ReaderConfig {
        deadline: Some(ms(20)),
        ..keyed_reader()
    };
    // Two instances written every 5 ms for 100 ms: no deadline is missed while writing.
    let mut p = pair(wcfg, rcfg, 20, ms(5));
    let _ = p.sim.run_until(Instant::ZERO + ms(100));
    let missed = |s: &Sim| {
        let w = host::<Source>(s, p.wn)
            .app
            .events
            .iter()
            .filter(|e| matches!(e, Event::OfferedDeadlineMissed { .. }));
        let r = host::<Sink>(s, p.rn)
            .app
            .events
            .iter()
            .filter(|e| matches!(e, Event::RequestedDeadlineMissed { .. }));
        (w.count(), r.count())
    };
    assert_eq!(missed(&p.sim), (0, 0));
    // Then silence for 100 ms: each side misses each instance's deadline about 5 times.
    let _ = p.sim.run_until(Instant::ZERO + ms(200));
    let (w, r) = missed(&p.sim);
    assert!((8..=10).contains(&w), "offered deadline missed {w} times");
    assert!((8..=10).contains(&r), "requested deadline missed {r} times");
    let insts: Vec<_> = host::<Source>(&p.sim, p.wn)
        .app
        .events
        .iter()
        .filter_map(|e| match e {
            Event::OfferedDeadlineMissed { instance, .. } => Some(*instance),
            _ => None,
        })
        .collect();
    assert!(insts.contains(&instance(0)) && insts.contains(&instance(1)));
}

#[test]
fn manual_by_topic_liveliness_is_lost_and_regained() {
    let liveliness = Liveliness {
        kind: LivelinessKind::ManualByTopic,
        lease_duration: Some(ms(50)),
    };
    let wcfg = WriterConfig {
        liveliness,
        ..keyed_writer()
    };
    let mut p = pair(wcfg, keyed_reader(), 10, ms(10));
    // Writes for 100 ms keep it alive; then nothing for 200 ms.
    let _ = p.sim.run_until(Instant::ZERO + ms(300));
    let writer_lost = |s: &Sim| {
        host::<Source>(s, p.wn)
            .app
            .events
            .iter()
            .filter(|e| matches!(e, Event::LivelinessLost { .. }))
            .count()
    };
    assert_eq!(writer_lost(&p.sim), 1, "LIVELINESS_LOST once");
    let changes: Vec<bool> = host::<Sink>(&p.sim, p.rn)
        .app
        .events
        .iter()
        .filter_map(|e| match e {
            Event::LivelinessChanged { alive, .. } => Some(*alive),
            _ => None,
        })
        .collect();
    assert_eq!(
        changes,
        vec![true, false],
        "the reader saw the writer alive on match, then die"
    );
    // Its instances lost their only writer.
    let mut states = host::<Sink>(&p.sim, p.rn).app.state_changes.clone();
    states.sort_by_key(|(i, _)| *i);
    assert_eq!(
        states,
        vec![
            (instance(0), InstanceState::NotAliveNoWriters),
            (instance(1), InstanceState::NotAliveNoWriters)
        ]
    );
    // Asserting liveliness brings it back for the reader.
    let now = p.sim.now();
    host_mut::<Source>(&mut p.sim, p.wn)
        .participant
        .assert_writer_liveliness(now, p.w)
        .expect("writer");
    let _ = p.sim.run_for(ms(10));
    let last = host::<Sink>(&p.sim, p.rn)
        .app
        .events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::LivelinessChanged {
                alive, alive_count, ..
            } => Some((*alive, *alive_count)),
            _ => None,
        });
    assert_eq!(last, Some((true, 1)));
}

#[test]
fn lifespan_expires_samples_a_late_joiner_would_get() {
    let wcfg = WriterConfig {
        lifespan: Some(ms(50)),
        history: WriterHistoryConfig {
            history: History::KeepLast(100),
            durability: Durability::TransientLocal,
            ..WriterHistoryConfig::default()
        },
        ..WriterConfig::default()
    };
    let mut sim = Sim::new(8);
    sim.set_default_link(LinkConfig::ideal(ms(1)));
    let mut wp = participant(1);
    let w = wp.create_writer(wcfg).expect("writer");
    let mut src = Source::new(w, 40, |_| 32);
    src.interval = Some(ms(5));
    let wn = add_host(&mut sim, 1, wp, src);
    let _ = sim.run_until(Instant::ZERO + ms(200));
    // Written over 0..195 ms with a 50 ms lifespan: at 200 ms only the last ten are alive.
    let held = host::<Source>(&sim, wn)
        .participant
        .writer_history(w)
        .map_or(0, |h| h.len());
    assert!((9..=11).contains(&held), "{held} samples held");
    let rcfg = ReaderConfig {
        durability: Durability::TransientLocal,
        ..reliable_keep_all_reader()
    };
    let mut rp = participant(2);
    let r = rp.create_reader(rcfg.clone()).expect("reader");
    let now = sim.now();
    let wg = host::<Source>(&sim, wn).participant.guid(w);
    rp.match_writer(now, r, remote_writer(wg, 1, &wcfg))
        .expect("match");
    let rg = rp.guid(r);
    let rn = add_host(&mut sim, 2, rp, Sink::new(r).recording());
    host_mut::<Source>(&mut sim, wn)
        .participant
        .match_reader(now, w, remote_reader(rg, 2, &rcfg, false))
        .expect("match");
    assert_eq!(sim.run_until_idle(secs(10)), RunOutcome::Idle);
    let got = host::<Sink>(&sim, rn)
        .app
        .record
        .clone()
        .expect("recording");
    assert_eq!(
        got.len(),
        held,
        "the late joiner gets only unexpired samples"
    );
    assert_eq!(got.last(), Some(&39));
}

#[test]
fn time_based_filter_passes_one_sample_per_separation() {
    let rcfg = ReaderConfig {
        time_based_filter: Some(ms(10)),
        ..keyed_reader()
    };
    // 200 samples, one per ms, alternating two instances: each instance every 2 ms.
    let mut p = pair(keyed_writer(), rcfg, 200, ms(1));
    assert_eq!(p.sim.run_until_idle(secs(10)), RunOutcome::Idle);
    let sink = host::<Sink>(&p.sim, p.rn);
    let got = sink.app.received;
    // 200 ms of data, at most one sample per instance per 10 ms: about 2 x 20.
    assert!((38..=42).contains(&got), "{got} samples passed the filter");
    let stats = sink.participant.reader_stats(p.r).expect("reader");
    assert_eq!(stats.filtered + got, 200);
    // The filter still acknowledges: the writer's cache drained.
    let src: &Host<Source> = host(&p.sim, p.wn);
    assert_eq!(
        src.participant.writer_history(p.w).map(|h| h.len()),
        Some(0)
    );
}

#[test]
fn a_time_based_filter_set_while_running_applies_from_then_on() {
    // 200 samples, one per ms, alternating two instances; no filter at first.
    let mut p = pair(keyed_writer(), keyed_reader(), 200, ms(1));
    let _ = p.sim.run_for(ms(100));
    let before = host::<Sink>(&p.sim, p.rn).app.received;
    assert!(before >= 80, "{before} samples before the change");
    let now = p.sim.now();
    let update = ReaderUpdate {
        deadline: None,
        time_based_filter: Some(ms(10)),
        lifecycle: ReaderDataLifecycle::default(),
    };
    host_mut::<Sink>(&mut p.sim, p.rn)
        .participant
        .update_reader(now, p.r, update)
        .expect("update");
    assert_eq!(p.sim.run_until_idle(secs(10)), RunOutcome::Idle);
    let sink = host::<Sink>(&p.sim, p.rn);
    let after = sink.app.received - before;
    let stats = sink.participant.reader_stats(p.r).expect("reader");
    assert_eq!(stats.filtered + sink.app.received, 200);
    // What remains is under 120 ms of data: at most one sample per instance per 10 ms.
    let most = 2 * (200 - before).div_ceil(10) + 2;
    assert!(
        (1..=most).contains(&after),
        "{after} of {} samples passed the filter",
        200 - before
    );
}

#[test]
fn autopurge_forgets_instances_whose_writer_left() {
    let rcfg = ReaderConfig {
        history: ReaderHistoryConfig {
            history: History::KeepLast(5),
            lifecycle: ReaderDataLifecycle {
                autopurge_nowriter_samples_delay: Some(ms(30)),
                autopurge_disposed_samples_delay: None,
            },
            ..ReaderHistoryConfig::default()
        },
        ..keyed_reader()
    };
    let mut sim = Sim::new(2);
    sim.set_default_link(LinkConfig::ideal(ms(1)));
    let wcfg = keyed_writer();
    let Linked { wp, w, rp, r } = linked(&wcfg, &rcfg);
    let wg = wp.guid(w);
    let mut src = Source::new(w, 4, |_| 32);
    src.instance_of = |i| (i % 2) as u32;
    let wn = add_host(&mut sim, 1, wp, src);
    // A reader that never takes: the samples stay in its cache.
    let rn = add_host(
        &mut sim,
        2,
        rp,
        Sink::new(r).slow(secs(1000) - Instant::ZERO, 0),
    );
    host_mut::<Source>(&mut sim, wn).drive(Instant::ZERO);
    assert_eq!(sim.run_until_idle(secs(1)), RunOutcome::Idle);
    let count = |s: &Sim| {
        host::<Sink>(s, rn)
            .participant
            .reader_history(r)
            .map(|h| (h.len(), h.instance_count()))
    };
    assert_eq!(count(&sim), Some((4, 2)));
    let now = sim.now();
    host_mut::<Sink>(&mut sim, rn)
        .participant
        .unmatch_writer(now, r, &wg)
        .expect("reader");
    let _ = sim.run_for(ms(10));
    assert_eq!(count(&sim), Some((4, 2)), "kept during the delay");
    let _ = sim.run_for(ms(40));
    assert_eq!(count(&sim), Some((0, 0)), "purged after it");
}

#[test]
fn participant_liveliness_is_renewed_by_any_traffic_of_the_participant() {
    // Writer A (AUTOMATIC) and writer B (MANUAL_BY_PARTICIPANT) never write; writer C on the
    // same participant writes every 10 ms for 200 ms. The reader of A and B keeps them alive
    // while C's traffic flows, loses both 50 ms after it stops, and an assertion of the
    // participant brings both back (it is participant traffic, which AUTOMATIC rides on).
    let lease = |kind| Liveliness {
        kind,
        lease_duration: Some(ms(50)),
    };
    let acfg = WriterConfig {
        liveliness: lease(LivelinessKind::Automatic),
        ..keyed_writer()
    };
    let bcfg = WriterConfig {
        liveliness: lease(LivelinessKind::ManualByParticipant),
        ..keyed_writer()
    };
    let ccfg = keyed_writer();
    let rcfg = keyed_reader();
    let mut sim = Sim::new(6);
    sim.set_default_link(LinkConfig::ideal(ms(1)));
    let (mut wp, mut rp) = (participant(1), participant(2));
    let a = wp.create_writer(acfg).expect("writer");
    let b = wp.create_writer(bcfg).expect("writer");
    let c = wp.create_writer(ccfg).expect("writer");
    let ra = rp.create_reader(rcfg.clone()).expect("reader");
    let rc = rp.create_reader(rcfg.clone()).expect("reader");
    connect(
        Instant::ZERO,
        &mut wp,
        a,
        1,
        &acfg,
        &mut rp,
        ra,
        2,
        &rcfg,
        false,
    );
    let bg = wp.guid(b);
    rp.match_writer(Instant::ZERO, ra, remote_writer(bg, 1, &bcfg))
        .expect("match");
    wp.match_reader(
        Instant::ZERO,
        b,
        remote_reader(rp.guid(ra), 2, &rcfg, false),
    )
    .expect("match");
    connect(
        Instant::ZERO,
        &mut wp,
        c,
        1,
        &ccfg,
        &mut rp,
        rc,
        2,
        &rcfg,
        false,
    );
    let mut src = Source::new(c, 20, |_| 32);
    src.interval = Some(ms(10));
    let wn = add_host(&mut sim, 1, wp, src);
    let rn = add_host(&mut sim, 2, rp, Sink::new(ra));
    let liveliness = |s: &Sim| -> Vec<(bool, usize)> {
        host::<Sink>(s, rn)
            .app
            .events
            .iter()
            .filter_map(|e| match e {
                Event::LivelinessChanged {
                    alive, alive_count, ..
                } => Some((*alive, *alive_count)),
                _ => None,
            })
            .collect()
    };
    let _ = sim.run_until(Instant::ZERO + ms(190));
    // Every writer counts as alive from its match on (a and b at `ra`, c at `rc`), and stays
    // so while the participant talks.
    assert_eq!(
        liveliness(&sim),
        vec![(true, 1), (true, 2), (true, 1)],
        "alive while the participant talks"
    );
    let _ = sim.run_until(Instant::ZERO + ms(300));
    let lost = liveliness(&sim);
    assert_eq!(lost.len(), 5, "both writers lost: {lost:?}");
    assert!(lost[3..].iter().all(|&(alive, _)| !alive));
    let now = sim.now();
    host_mut::<Source>(&mut sim, wn)
        .participant
        .assert_liveliness(now);
    let _ = sim.run_for(ms(5));
    let back = liveliness(&sim);
    assert_eq!(&back[5..], &[(true, 1), (true, 2)], "both back: {back:?}");
}
