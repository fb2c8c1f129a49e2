//! The protocol-core scenarios of the simulation harness, one test each: best effort with
//! KEEP_LAST(1), 1 writer to 8 readers over multicast with a slow reader (KEEP_LAST and
//! KEEP_ALL), a TRANSIENT_LOCAL late joiner, a reader that disappears, keyed instances going
//! through dispose and unregister, and same-seed determinism.

mod dds;

use dds::*;
use tachyon_proto::history::{
    ChangeKind, Durability, History, InstanceState, ReaderHistoryConfig, ResourceLimits,
    WriterHistoryConfig,
};
use tachyon_proto::{
    Destination, Event, Instant, Participant, ReaderConfig, Reliability, WriterConfig,
};
use tachyon_sim::{trace_digest, Host, Idle, LinkConfig, NodeId, RunOutcome, Sim, SimConfig};
use tachyon_wire::EntityId;

fn best_effort_keep_last_1() -> (WriterConfig, ReaderConfig) {
    let w = WriterConfig {
        reliability: Reliability::BestEffort,
        ..WriterConfig::default()
    };
    let r = ReaderConfig {
        reliability: Reliability::BestEffort,
        ..ReaderConfig::default()
    };
    (w, r)
}

#[test]
fn best_effort_keep_last_1_sees_the_latest_and_reports_loss() {
    let mut sim = Sim::new(11);
    sim.set_default_link(LinkConfig::ideal(ms(1)).loss(0.2).duplicate(0.05));
    let (wcfg, rcfg) = best_effort_keep_last_1();
    let Linked { wp, w, rp, r } = linked(&wcfg, &rcfg);
    let total = 5000;
    let mut src = Source::new(w, total, |i| 64 + (i as usize % 3000));
    src.interval = Some(ms(1));
    let wn = add_host(&mut sim, 1, wp, src);
    // Takes one sample every 7 ms: KEEP_LAST(1) must hand over the latest, never a backlog.
    let rn = add_host(&mut sim, 2, rp, Sink::new(r).slow(ms(7), usize::MAX));
    let mut peak_cache = 0;
    let mut peak_writer = 0;
    while sim.now() < secs(6) {
        let _ = sim.run_for(ms(1));
        let h: &Host<Sink> = host(&sim, rn);
        peak_cache = peak_cache.max(h.participant.reader_history(r).map_or(0, |c| c.len()));
        let src: &Host<Source> = host(&sim, wn);
        peak_writer = peak_writer.max(src.participant.writer_history(w).map_or(0, |c| c.len()));
    }
    // One more sample over a clean link: the reader's latest must be it.
    sim.set_default_link(LinkConfig::ideal(ms(1)));
    host_mut::<Source>(&mut sim, wn).app.total += 1;
    assert_eq!(sim.run_until_idle(secs(60)), RunOutcome::Idle);
    let _ = sim.run_for(ms(20));

    let sink: &Host<Sink> = host(&sim, rn);
    let stats = sink.participant.reader_stats(r).expect("reader");
    assert_eq!(
        sink.app.last,
        Some(total),
        "the reader ends with the latest sample"
    );
    assert_eq!(sink.app.disorder, 0);
    assert_eq!(sink.app.corrupt, 0);
    assert!(
        sink.app.max_batch <= 1,
        "KEEP_LAST(1) never returns more than one sample"
    );
    assert_eq!(peak_cache, 1, "memory stays bounded by the depth");
    assert!(
        peak_writer <= 1,
        "a best-effort writer keeps nothing after sending"
    );
    assert!(
        sink.app.lost > 500,
        "20% loss is reported: {}",
        sink.app.lost
    );
    // Best effort without reordering: every sample is either delivered or reported lost.
    assert_eq!(stats.delivered + sink.app.lost, total + 1);
    assert_eq!(sink.participant.reader_pending(r), Some(0));
}

/// One writer, eight readers sharing a multicast group; reader 8 sits behind a slow link.
struct FanOut {
    sim: Sim,
    writer: NodeId,
    readers: Vec<NodeId>,
    w: EntityId,
    r: Vec<EntityId>,
}

fn fan_out(wcfg: WriterConfig, rcfg: ReaderConfig, total: u64, slow_sink: Option<Sink>) -> FanOut {
    let mut sim = Sim::new(5);
    sim.set_default_link(LinkConfig::ideal(ms(1)));
    let mut wp = participant(1);
    let w = wp.create_writer(wcfg).expect("writer");
    let mut parts = Vec::new();
    let mut rs = Vec::new();
    for n in 2..=9u8 {
        let mut rp = participant(n);
        let r = rp.create_reader(rcfg.clone()).expect("reader");
        connect(
            Instant::ZERO,
            &mut wp,
            w,
            1,
            &wcfg,
            &mut rp,
            r,
            n,
            &rcfg,
            true,
        );
        parts.push(rp);
        rs.push(r);
    }
    let mut src = Source::new(w, total, |i| 200 + (i as usize % 700));
    src.interval = Some(Duration::from_micros(200));
    let writer = add_host(&mut sim, 1, wp, src);
    let mut slow_sink = slow_sink;
    let mut readers = Vec::new();
    for (k, rp) in parts.into_iter().enumerate() {
        let n = 2 + k as u8;
        let sink = if n == 9 {
            slow_sink.take().unwrap_or_else(|| Sink::new(rs[k]))
        } else {
            Sink::new(rs[k])
        };
        let id = add_host(&mut sim, n, rp, sink.recording());
        sim.join(id, group()).expect("join");
        readers.push(id);
    }
    // The slow reader: 40 ms away over a 100 kB/s link.
    let slow = *readers.last().expect("eight readers");
    let link = LinkConfig::ideal(ms(40))
        .bandwidth(100_000)
        .queue_limit(16 * 1024);
    sim.set_link_symmetric(writer, slow, link).expect("nodes");
    FanOut {
        sim,
        writer,
        readers,
        w,
        r: rs,
    }
}

use tachyon_proto::Duration;

#[test]
fn multicast_fan_out_with_keep_last_does_not_hold_fast_readers_back() {
    let wcfg = WriterConfig {
        history: WriterHistoryConfig {
            history: History::KeepLast(20),
            ..WriterHistoryConfig::default()
        },
        ..WriterConfig::default()
    };
    let rcfg = ReaderConfig {
        history: ReaderHistoryConfig {
            history: History::KeepAll,
            ..ReaderHistoryConfig::default()
        },
        ..reliable_keep_all_reader()
    };
    let total = 3000;
    let mut f = fan_out(wcfg, rcfg, total, None);
    // Writing takes 0.6 s; the fast readers keep up with the writer all along.
    let mut lag_max = 0;
    while f.sim.now() < Instant::ZERO + ms(700) {
        let _ = f.sim.run_for(ms(5));
        let written = host::<Source>(&f.sim, f.writer).app.written;
        for &id in &f.readers[..7] {
            let got = host::<Sink>(&f.sim, id).app.received;
            lag_max = lag_max.max(written - got);
        }
    }
    assert!(
        lag_max <= 40,
        "fast readers lagged {lag_max} samples behind the writer"
    );
    assert_eq!(f.sim.run_until_idle(secs(600)), RunOutcome::Idle);
    for &id in &f.readers[..7] {
        let s = &host::<Sink>(&f.sim, id).app;
        assert_eq!((s.received, s.disorder, s.corrupt), (total, 0, 0));
    }
    // The slow reader gets a subsequence, in order, ending with the last sample.
    let slow = &host::<Sink>(&f.sim, f.readers[7]).app;
    assert_eq!((slow.disorder, slow.corrupt), (0, 0));
    assert_eq!(slow.last, Some(total - 1));
    assert!(
        slow.received < total,
        "the slow reader missed replaced samples"
    );
    let wp = &host::<Source>(&f.sim, f.writer).participant;
    let ws = wp.writer_stats(f.w).expect("writer");
    assert_eq!(ws.data_sent, total, "new data went out once, to the group");
    assert!(
        ws.gaps_sent > 0,
        "the slow reader was told what it cannot have"
    );
    assert_eq!(wp.writer_history(f.w).map(|h| h.len()), Some(0));
}

#[test]
fn multicast_fan_out_with_keep_all_blocks_on_the_slow_reader_and_resumes() {
    let wcfg = reliable_keep_all_writer(50);
    let rcfg = ReaderConfig {
        history: ReaderHistoryConfig {
            history: History::KeepAll,
            limits: ResourceLimits {
                max_samples: Some(20),
                ..ResourceLimits::default()
            },
            ..ReaderHistoryConfig::default()
        },
        ..reliable_keep_all_reader()
    };
    let total = 600;
    // The slow reader takes 5 samples every 50 ms: 100 samples/s.
    let slow = Sink::new(EntityId::UNKNOWN).slow(ms(50), 5);
    let mut f = fan_out(wcfg, rcfg, total, Some(slow));
    host_mut::<Sink>(&mut f.sim, f.readers[7]).app.reader = f.r[7];
    let _ = f.sim.run_until(secs(2));
    let src = &host::<Source>(&f.sim, f.writer).app;
    assert!(
        src.blocked > 0,
        "the writer's KEEP_ALL history filled up and blocked"
    );
    assert!(src.written < total, "blocked by the slow reader");
    // Fast readers are held back no further than the writer's history allows.
    let slow_got = host::<Sink>(&f.sim, f.readers[7]).app.received;
    for &id in &f.readers[..7] {
        let got = host::<Sink>(&f.sim, id).app.received;
        assert!(
            got <= slow_got + 20 + 50 + 5,
            "fast {got} vs slow {slow_got}"
        );
    }
    assert_eq!(f.sim.run_until_idle(secs(600)), RunOutcome::Idle);
    assert!(
        host::<Source>(&f.sim, f.writer).app.done(),
        "the writer resumed"
    );
    for &id in &f.readers {
        let s = &host::<Sink>(&f.sim, id).app;
        assert_eq!((s.received, s.disorder, s.corrupt), (total, 0, 0));
    }
}

#[test]
fn transient_local_late_joiner_gets_exactly_the_last_n_per_instance() {
    let mut sim = Sim::new(3);
    sim.set_default_link(LinkConfig::ideal(ms(2)).loss(0.1));
    let wcfg = WriterConfig {
        keyed: true,
        history: WriterHistoryConfig {
            history: History::KeepLast(3),
            durability: Durability::TransientLocal,
            ..WriterHistoryConfig::default()
        },
        ..WriterConfig::default()
    };
    let rcfg = ReaderConfig {
        keyed: true,
        durability: Durability::TransientLocal,
        history: ReaderHistoryConfig {
            history: History::KeepAll,
            ..ReaderHistoryConfig::default()
        },
        ..reliable_keep_all_reader()
    };
    let volatile_cfg = ReaderConfig {
        durability: Durability::Volatile,
        ..rcfg.clone()
    };
    let mut wp = participant(1);
    let w = wp.create_writer(wcfg).expect("writer");
    let mut src = Source::new(w, 100, |_| 40);
    src.instance_of = |i| (i % 5) as u32;
    let wn = add_host(&mut sim, 1, wp, src);
    host_mut::<Source>(&mut sim, wn).drive(Instant::ZERO);
    assert_eq!(sim.run_until_idle(secs(10)), RunOutcome::Idle);
    assert_eq!(host::<Source>(&sim, wn).app.written, 100);

    // Two readers join after everything was written: one transient-local, one volatile.
    let now = sim.now();
    let mut late = participant(2);
    let r = late.create_reader(rcfg.clone()).expect("reader");
    let mut vol = participant(3);
    let v = vol.create_reader(volatile_cfg.clone()).expect("reader");
    let wg = host::<Source>(&sim, wn).participant.guid(w);
    late.match_writer(now, r, remote_writer(wg, 1, &wcfg))
        .expect("match");
    vol.match_writer(now, v, remote_writer(wg, 1, &wcfg))
        .expect("match");
    let rg = late.guid(r);
    let vg = vol.guid(v);
    let rn = add_host(&mut sim, 2, late, Sink::new(r).recording());
    let vn = add_host(&mut sim, 3, vol, Sink::new(v).recording());
    {
        let p = &mut host_mut::<Source>(&mut sim, wn).participant;
        p.match_reader(now, w, remote_reader(rg, 2, &rcfg, false))
            .expect("match");
        p.match_reader(now, w, remote_reader(vg, 3, &volatile_cfg, false))
            .expect("match");
    }
    assert_eq!(sim.run_until_idle(secs(60)), RunOutcome::Idle);
    let got = host::<Sink>(&sim, rn)
        .app
        .record
        .clone()
        .expect("recording");
    let mut sorted = got.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        (85..100).collect::<Vec<u64>>(),
        "the last 3 of each of 5 instances"
    );
    // Samples come instance by instance (handle order), each instance's in write order.
    assert_eq!(
        got,
        [85, 90, 95, 86, 91, 96, 87, 92, 97, 88, 93, 98, 89, 94, 99]
    );
    assert_eq!(
        host::<Sink>(&sim, vn).app.received,
        0,
        "a volatile reader gets no history"
    );

    // New samples reach both.
    host_mut::<Source>(&mut sim, wn).app.total = 110;
    let now = sim.now();
    host_mut::<Source>(&mut sim, wn).drive(now);
    assert_eq!(sim.run_until_idle(secs(120)), RunOutcome::Idle);
    assert_eq!(host::<Sink>(&sim, rn).app.received, 25);
    let mut fresh = host::<Sink>(&sim, vn)
        .app
        .record
        .clone()
        .expect("recording");
    fresh.sort_unstable();
    assert_eq!(fresh, (100..110).collect::<Vec<u64>>());
}

#[test]
fn a_reader_that_disappears_is_unmatched_and_released() {
    let mut sim = Sim::new(9);
    sim.set_default_link(LinkConfig::ideal(ms(1)));
    let wcfg = reliable_keep_all_writer(100);
    let rcfg = reliable_keep_all_reader();
    let mut wp = participant(1);
    let w = wp.create_writer(wcfg).expect("writer");
    let (mut a, mut b) = (participant(2), participant(3));
    let ra = a.create_reader(rcfg.clone()).expect("reader");
    let rb = b.create_reader(rcfg.clone()).expect("reader");
    connect(
        Instant::ZERO,
        &mut wp,
        w,
        1,
        &wcfg,
        &mut a,
        ra,
        2,
        &rcfg,
        false,
    );
    connect(
        Instant::ZERO,
        &mut wp,
        w,
        1,
        &wcfg,
        &mut b,
        rb,
        3,
        &rcfg,
        false,
    );
    let gone = b.guid(rb);
    let mut src = Source::new(w, 2000, |_| 100);
    src.interval = Some(Duration::from_micros(500));
    let wn = add_host(&mut sim, 1, wp, src);
    let an = add_host(&mut sim, 2, a, Sink::new(ra));
    let bn = add_host(&mut sim, 3, b, Sink::new(rb));
    let _ = sim.run_until(Instant::ZERO + ms(300));
    // Reader b's host dies: nothing gets through any more.
    sim.set_link_symmetric(wn, bn, LinkConfig::ideal(ms(1)).loss(1.0))
        .expect("nodes");
    let _ = sim.run_until(Instant::ZERO + ms(800));
    let held = host::<Source>(&sim, wn)
        .participant
        .writer_history(w)
        .map_or(0, |h| h.len());
    assert_eq!(
        held, 100,
        "the writer keeps what the silent reader has not acknowledged"
    );
    assert!(host::<Source>(&sim, wn).app.blocked > 0);
    // Discovery notices (lease expiry) and unmatches it.
    {
        let p = &mut host_mut::<Source>(&mut sim, wn).participant;
        assert_eq!(p.unmatch_reader(w, &gone), Ok(true));
    }
    assert_eq!(sim.run_until_idle(secs(60)), RunOutcome::Idle);
    let src = host::<Source>(&sim, wn);
    assert!(src.app.done());
    assert_eq!(src.participant.writer_history(w).map(|h| h.len()), Some(0));
    assert_eq!(src.participant.matched_readers(w).len(), 1);
    assert!(src.app.events.iter().any(|e| matches!(
        e,
        Event::PublicationMatched {
            matched: false,
            current_count: 1,
            ..
        }
    )));
    let a = &host::<Sink>(&sim, an).app;
    assert_eq!((a.received, a.disorder), (2000, 0));
}

#[test]
fn dispose_and_unregister_reach_readers_as_instance_states() {
    let mut sim = Sim::new(21);
    sim.set_default_link(LinkConfig::ideal(ms(1)).loss(0.15).reorder(0.1, ms(2)));
    let wcfg = WriterConfig {
        keyed: true,
        ..reliable_keep_all_writer(100)
    };
    let rcfg = ReaderConfig {
        keyed: true,
        ..reliable_keep_all_reader()
    };
    let mut wp = participant(1);
    let w = wp.create_writer(wcfg).expect("writer");
    let mut rp = participant(2);
    let r = rp.create_reader(rcfg.clone()).expect("reader");
    connect(
        Instant::ZERO,
        &mut wp,
        w,
        1,
        &wcfg,
        &mut rp,
        r,
        2,
        &rcfg,
        false,
    );
    let mut src = Source::new(w, 30, |_| 32);
    src.instance_of = |i| (i % 3) as u32;
    let wn = add_host(&mut sim, 1, wp, src);
    let rn = add_host(&mut sim, 2, rp, Sink::new(r));
    host_mut::<Source>(&mut sim, wn).drive(Instant::ZERO);
    assert_eq!(sim.run_until_idle(secs(30)), RunOutcome::Idle);
    let now = sim.now();
    {
        let p = &mut host_mut::<Source>(&mut sim, wn).participant;
        p.write(
            now,
            w,
            instance_change(ChangeKind::NotAliveDisposed, 1, now),
        )
        .expect("dispose");
        p.write(
            now,
            w,
            instance_change(ChangeKind::NotAliveUnregistered, 2, now),
        )
        .expect("unregister");
    }
    assert_eq!(sim.run_until_idle(secs(60)), RunOutcome::Idle);
    let sink = host::<Sink>(&sim, rn);
    assert_eq!(sink.app.received, 30);
    assert_eq!(
        sink.app.state_changes,
        vec![
            (instance(1), InstanceState::NotAliveDisposed),
            (instance(2), InstanceState::NotAliveNoWriters),
        ]
    );
    let cache = sink.participant.reader_history(r).expect("reader");
    assert_eq!(
        cache.instance_state(&instance(0)).map(|s| s.0),
        Some(InstanceState::Alive)
    );
    // A disposed-then-written instance comes back alive as a new generation.
    let now = sim.now();
    {
        let p = &mut host_mut::<Source>(&mut sim, wn).participant;
        p.write(
            now,
            w,
            tachyon_proto::WriteRequest::data(instance(1), timestamp(now), payload(30, 32)),
        )
        .expect("write");
    }
    assert_eq!(sim.run_until_idle(secs(90)), RunOutcome::Idle);
    let cache = host::<Sink>(&sim, rn)
        .participant
        .reader_history(r)
        .expect("reader");
    let (state, _, disposed_gen, _) = cache.instance_state(&instance(1)).expect("known");
    assert_eq!((state, disposed_gen), (InstanceState::Alive, 1));
}

/// The reliable scenario with tracing on; returns the trace digest and what was delivered.
fn traced_run(seed: u64) -> (u64, u64) {
    let mut sim = Sim::with_config(SimConfig {
        seed,
        trace: true,
        ..SimConfig::default()
    });
    sim.set_default_link(
        LinkConfig::ideal(ms(1))
            .jitter(Duration::from_micros(300))
            .loss(0.1)
            .duplicate(0.02)
            .reorder(0.05, ms(2)),
    );
    let wcfg = reliable_keep_all_writer(64);
    let rcfg = reliable_keep_all_reader();
    let Linked { wp, w, rp, r } = linked(&wcfg, &rcfg);
    let wn = add_host(
        &mut sim,
        1,
        wp,
        Source::new(w, 1000, |i| 16 + (i as usize * 97) % 5000),
    );
    let rn = add_host(&mut sim, 2, rp, Sink::new(r));
    host_mut::<Source>(&mut sim, wn).drive(Instant::ZERO);
    assert_eq!(sim.run_until_idle(secs(600)), RunOutcome::Idle);
    (
        trace_digest(sim.trace()),
        host::<Sink>(&sim, rn).app.received,
    )
}

#[test]
fn same_seed_same_trace() {
    let (a, na) = traced_run(77);
    let (b, nb) = traced_run(77);
    assert_eq!((na, nb), (1000, 1000));
    assert_eq!(
        a, b,
        "two runs with one seed must be identical, event for event"
    );
    let (c, _) = traced_run(78);
    assert_ne!(a, c, "another seed gives another run");
}

#[test]
fn unicast_fan_out_without_a_shared_group_sends_to_each_reader() {
    // Readers without a common multicast group get new data by unicast, once each.
    let wcfg = reliable_keep_all_writer(64);
    let rcfg = reliable_keep_all_reader();
    let mut wp = participant(1);
    let w = wp.create_writer(wcfg).expect("writer");
    let mut sim = Sim::new(1);
    let mut hosts = Vec::new();
    for n in 2..=4u8 {
        let mut rp = participant(n);
        let r = rp.create_reader(rcfg.clone()).expect("reader");
        connect(
            Instant::ZERO,
            &mut wp,
            w,
            1,
            &wcfg,
            &mut rp,
            r,
            n,
            &rcfg,
            false,
        );
        hosts.push((n, rp, r));
    }
    let wn = add_host(&mut sim, 1, wp, Source::new(w, 100, |_| 64));
    let ids: Vec<NodeId> = hosts
        .into_iter()
        .map(|(n, rp, r)| add_host(&mut sim, n, rp, Sink::new(r)))
        .collect();
    host_mut::<Source>(&mut sim, wn).drive(Instant::ZERO);
    assert_eq!(sim.run_until_idle(secs(10)), RunOutcome::Idle);
    for id in ids {
        assert_eq!(host::<Sink>(&sim, id).app.received, 100);
    }
    let _: Option<Destination> = None;
    let _: Option<&Host<Idle>> = None;
    let _: Option<Participant> = None;
}
