//! The in-process transport (`tachyon_transport::intra`): participants of one process reach
//! each other without a socket, a reader's protocol run on the writing thread; discovery and
//! what is sent during a delivery go through queues the participant's own threads serve.
//! (Every other test file of this crate runs over it too, with participants of one process;
//! `scripts/test.sh` runs them again over UDP with `[transports] intra = false`.)

mod common;

use std::sync::{Arc, Mutex};

use common::{take_at_least, wait_matched, wait_until, PATIENCE};
use tachyon::config::{ThreadMode, ThreadRoles};
use tachyon::prelude::*;
use tachyon::{DataReaderListener, ParticipantSettings, TransportSettings};

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Seq")]
struct Seq {
    n: u64,
}

/// The name of the calling thread (tests run on threads named after the test).
fn thread_name() -> String {
    std::thread::current().name().unwrap_or("").to_owned()
}

/// A write hands the sample to a reader of another participant (a DATA through the
/// in-process transport), and to one of its own participant (directly), before it returns: `take` right after `write` finds it, with no wait. (Unless
/// another thread of the writer's participant was sending at that moment, an announcement:
/// it then delivers the sample, a moment later. So most, not all, are checked; best effort,
/// so no heartbeat or acknowledgement keeps the participants' own threads sending. A datagram
/// left in a queue is handed over by the next write, so a receive thread that is not
/// scheduled holds up nothing; one preempted while it handles a batch still can: a round of
/// 200 samples is tried up to three times, each once the last one's all arrived, and one of
/// them must have 90 % at once.)
#[test]
fn a_written_sample_is_in_the_readers_caches_when_write_returns() {
    let (a, b) = pair(1);
    let wqos = DataWriterQos::default().best_effort().keep_all();
    let rqos = || DataReaderQos::default().best_effort().keep_all();
    let w = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter(&a.create_topic::<Seq>("seq").expect("topic"), wqos)
        .expect("writer");
    let r = b
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&b.create_topic::<Seq>("seq").expect("topic"), rqos())
        .expect("reader");
    let local = a
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&a.create_topic::<Seq>("seq").expect("topic"), rqos())
        .expect("local reader");
    wait_matched(&w, &r);
    wait_matched(&w, &local);
    let before = a.statistics().intra.datagrams_sent;
    let round = 200u64;
    let (mut n, mut best, mut got, mut got_local) = (0, 0, Vec::new(), Vec::new());
    for _ in 0..3 {
        let mut at_once = 0;
        for _ in 0..round {
            w.write(&Seq { n }).expect("write");
            n += 1;
            let (now, now_local) = (common::take_data(&r), common::take_data(&local));
            at_once += u64::from(now.len() == 1 && now_local.len() == 1);
            got.extend(now);
            got_local.extend(now_local);
        }
        best = best.max(at_once);
        if best >= round * 9 / 10 {
            break;
        }
        // The next round starts once this one's samples all arrived: a thread of the
        // writer's participant preempted while it sends (a busy CI machine) delays one
        // round, not every round behind it.
        wait_until("the round's samples", || {
            got.extend(common::take_data(&r));
            got_local.extend(common::take_data(&local));
            got.len() as u64 >= n && got_local.len() as u64 >= n
        });
    }
    assert!(
        best >= round * 9 / 10,
        "at best {best} of {round} samples were in both caches when write returned"
    );
    let all: Vec<Seq> = (0..n).map(|i| Seq { n: i }).collect();
    wait_until("the rest", || {
        got.extend(common::take_data(&r));
        got_local.extend(common::take_data(&local));
        got.len() >= all.len() && got_local.len() >= all.len()
    });
    assert_eq!(got, all, "every sample, in order, once");
    assert_eq!(got_local, all);
    // One DATA per sample to the other participant; the writer's own participant's reader
    // is handed every sample directly (no DATA).
    let sent = a.statistics().intra.datagrams_sent - before;
    assert!(
        sent >= n,
        "{sent} in-process datagrams for {n} samples to the other participant's reader"
    );
    assert_eq!(
        w.direct_deliveries(),
        n,
        "handed directly to the local reader"
    );
}

/// Answers each ping with a pong of the same number.
struct Ponger {
    pong: DataWriter<Seq>,
    threads: Mutex<Vec<String>>,
}

impl DataReaderListener<Seq> for Ponger {
    fn on_data_available(&self, reader: &DataReader<Seq>) {
        self.threads.lock().expect("threads").push(thread_name());
        for s in reader.take(usize::MAX).expect("take") {
            if let Some(ping) = s.data {
                self.pong.write(&ping).expect("pong");
            }
        }
    }
}

/// Sends the next ping on each pong until `last`.
struct Pinger {
    ping: DataWriter<Seq>,
    last: u64,
    done: Mutex<u64>,
}

impl DataReaderListener<Seq> for Pinger {
    fn on_data_available(&self, reader: &DataReader<Seq>) {
        for s in reader.take(usize::MAX).expect("take") {
            if let Some(pong) = s.data {
                *self.done.lock().expect("done") = pong.n + 1;
                if pong.n < self.last {
                    self.ping.write(&Seq { n: pong.n + 1 }).expect("ping");
                }
            }
        }
    }
}

/// A reader's listener runs on the writing thread; a listener that writes back does not
/// deliver on that thread again (its answer is queued for the other participant's thread),
/// so a ping-pong of listeners neither recurses nor keeps the first `write` from returning.
#[test]
fn listeners_run_on_the_writing_thread_and_a_listener_ping_pong_does_not_recurse() {
    let (a, b) = pair(2);
    // Best effort: no heartbeat or acknowledgement has the participants' own threads call
    // listeners meanwhile.
    let qos = || DataWriterQos::default().best_effort().keep_all();
    let rqos = || DataReaderQos::default().best_effort().keep_all();
    let (ping_a, pong_a) = (
        a.create_topic::<Seq>("ping").expect("topic"),
        a.create_topic::<Seq>("pong").expect("topic"),
    );
    let (ping_b, pong_b) = (
        b.create_topic::<Seq>("ping").expect("topic"),
        b.create_topic::<Seq>("pong").expect("topic"),
    );
    let (pa, sa) = (
        a.create_publisher().expect("publisher"),
        a.create_subscriber().expect("subscriber"),
    );
    let (pb, sb) = (
        b.create_publisher().expect("publisher"),
        b.create_subscriber().expect("subscriber"),
    );
    let ping_w = pa.create_datawriter(&ping_a, qos()).expect("writer");
    let pong_r = sa.create_datareader(&pong_a, rqos()).expect("reader");
    let ping_r = sb.create_datareader(&ping_b, rqos()).expect("reader");
    let pong_w = pb.create_datawriter(&pong_b, qos()).expect("writer");
    wait_matched(&ping_w, &ping_r);
    wait_matched(&pong_w, &pong_r);
    let ponger = Arc::new(Ponger {
        pong: pong_w,
        threads: Mutex::new(Vec::new()),
    });
    ping_r.set_listener(
        Some(Arc::clone(&ponger) as Arc<dyn DataReaderListener<Seq>>),
        StatusMask::DATA_AVAILABLE,
    );
    // Pings written by this thread: their listener runs here, unless a thread of the
    // reader's participant was calling its listeners at that moment (then it calls this one
    // too), so most calls, not all, are checked.
    // One at a time: a listener call running on another thread when the next ping arrives
    // takes that one's call over too.
    let first = 100;
    for n in 0..first {
        ping_w.write(&Seq { n }).expect("ping");
        assert_eq!(take_at_least(&pong_r, 1), vec![Seq { n }]);
    }
    let calls = ponger.threads.lock().expect("threads").clone();
    let here = calls.iter().filter(|t| **t == thread_name()).count();
    assert!(
        here * 2 >= calls.len(),
        "of {} listener calls for {first} pings, {here} ran on the writing thread: {calls:?}",
        calls.len()
    );
    let before = calls.len();

    // Now the pongs' listener pings again: each write's delivery calls the other side's
    // listener, whose write is queued for the other participant's thread.
    let last = first + 500;
    let pinger = Arc::new(Pinger {
        ping: ping_w,
        last,
        done: Mutex::new(0),
    });
    pong_r.set_listener(
        Some(Arc::clone(&pinger) as Arc<dyn DataReaderListener<Seq>>),
        StatusMask::DATA_AVAILABLE,
    );
    pinger.ping.write(&Seq { n: first }).expect("ping");
    wait_until("every round trip", || {
        *pinger.done.lock().expect("done") == last + 1
    });
    let threads = ponger.threads.lock().expect("threads").clone();
    let on_receive = threads[before..]
        .iter()
        .filter(|t| *t == "tachyon-receive")
        .count();
    assert!(
        on_receive * 2 >= threads.len() - before,
        "of {} listener calls for 500 pings, {on_receive} ran on a receive thread (the \
         pinger's, which takes its pongs from its queue): {:?}",
        threads.len() - before,
        &threads[before..]
    );
}

fn settings(mode: ThreadMode, no_udp: bool, no_intra: bool) -> ParticipantSettings {
    ParticipantSettings {
        threads: ThreadRoles {
            mode,
            ..ThreadRoles::default()
        },
        transports: TransportSettings {
            no_udp,
            no_intra,
            ..TransportSettings::default()
        },
        ..ParticipantSettings::default()
    }
}

/// Two participants of `domain` in threads mode with the in-process transport, whatever
/// `TACHYON_CONFIG` says.
fn pair(domain: u32) -> (DomainParticipant, DomainParticipant) {
    tachyon_transport::testing::require_isolated_network();
    let s = settings(ThreadMode::Threads, false, false);
    let a = DomainParticipant::with_settings(domain, &s).expect("a");
    let b = DomainParticipant::with_settings(domain, &s).expect("b");
    (a, b)
}

/// In single-thread mode everything of a participant runs on the application's thread: a
/// writer of another participant queues its data, which `run_once` then handles.
#[test]
fn a_single_thread_participant_gets_its_data_through_its_queue() {
    tachyon_transport::testing::require_isolated_network();
    let a = DomainParticipant::with_settings(3, &settings(ThreadMode::Threads, false, false))
        .expect("a");
    let b = DomainParticipant::with_settings(3, &settings(ThreadMode::Single, false, false))
        .expect("b");
    let (w, r) = common::reliable_pair::<Seq>(&a, &b, "seq");
    let matched = common::poll_until(PATIENCE, || {
        b.run_once(std::time::Duration::from_millis(5))
            .expect("run");
        w.matched_subscriptions().contains(&r.guid())
            && r.matched_publications().contains(&w.guid())
    });
    assert!(matched, "matched");
    for i in 0..10 {
        w.write(&Seq { n: i }).expect("write");
    }
    assert!(
        common::take_data(&r).is_empty(),
        "nothing is handled before the application runs the participant"
    );
    let mut got = Vec::new();
    let all = common::poll_until(PATIENCE, || {
        b.run_once(std::time::Duration::from_millis(5))
            .expect("run");
        got.extend(common::take_data(&r));
        got.len() == 10
    });
    assert!(all, "{} of 10 arrived", got.len());
    assert!(b.statistics().intra.datagrams_received >= 10);
}

/// One writer, a reader in another participant of this process (in-process transport) and
/// one in a participant that left that transport out (UDP): each pair uses its own, both
/// readers get everything in order.
#[test]
fn a_writer_serves_in_process_and_udp_readers_at_once() {
    tachyon_transport::testing::require_isolated_network();
    let a = DomainParticipant::with_settings(4, &settings(ThreadMode::Threads, false, false))
        .expect("a");
    let b = DomainParticipant::with_settings(4, &settings(ThreadMode::Threads, false, false))
        .expect("b");
    let c = DomainParticipant::with_settings(4, &settings(ThreadMode::Threads, false, true))
        .expect("c");
    let (w, r_intra) = common::reliable_pair::<Seq>(&a, &b, "seq");
    let r_udp = c
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(
            &c.create_topic::<Seq>("seq").expect("topic"),
            DataReaderQos::default().reliable().keep_all(),
        )
        .expect("reader");
    wait_matched(&w, &r_intra);
    wait_matched(&w, &r_udp);
    let udp_before = c.statistics().transport.datagrams_received;
    for i in 0..50 {
        w.write(&Seq { n: i }).expect("write");
    }
    let all: Vec<Seq> = (0..50).map(|n| Seq { n }).collect();
    assert_eq!(common::take_all_written(&w, &r_intra, 50), all);
    assert_eq!(common::take_all_written(&w, &r_udp, 50), all);
    assert!(a.statistics().intra.datagrams_sent >= 50);
    assert_eq!(c.statistics().intra, Default::default(), "c has none");
    assert!(c.statistics().transport.datagrams_received >= udp_before + 50);
}

/// Without UDP, participants of one process still discover each other (SPDP goes to every
/// participant of the domain in the process) and exchange data.
#[test]
fn participants_without_udp_find_each_other_in_the_process() {
    let a = DomainParticipant::with_settings(5, &settings(ThreadMode::Threads, true, false))
        .expect("a");
    let b =
        DomainParticipant::with_settings(5, &settings(ThreadMode::Driver, true, false)).expect("b");
    let (w, r) = common::reliable_pair::<Seq>(&a, &b, "seq");
    wait_matched(&w, &r);
    for i in 0..20 {
        w.write(&Seq { n: i }).expect("write");
    }
    let got = take_at_least(&r, 20);
    assert_eq!(got, (0..20).map(|n| Seq { n }).collect::<Vec<_>>());
    assert!(a.statistics().transport.datagrams_sent == a.statistics().intra.datagrams_sent);
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Blob")]
struct Blob {
    n: u64,
    data: Vec<u8>,
}

fn blob(n: u64, size: usize) -> Blob {
    Blob {
        n,
        data: vec![n as u8; size],
    }
}

/// Large samples between participants of one process go by reference
/// (`tachyon_proto::local`): the datagrams carry no payload (a small fraction of the bytes
/// written goes through the transport) and not a fragment; every sample arrives intact, in
/// order.
#[test]
fn large_samples_go_by_reference_intact_and_in_order() {
    let (a, b) = pair(6);
    let (w, r) = common::reliable_pair::<Blob>(&a, &b, "blobs");
    wait_matched(&w, &r);
    let before = a.statistics().intra.bytes_sent;
    let (n, size) = (20u64, 1 << 20);
    for i in 0..n {
        w.write(&blob(i, size)).expect("write");
    }
    let want: Vec<Blob> = (0..n).map(|i| blob(i, size)).collect();
    assert_eq!(common::take_all_written(&w, &r, n as usize), want);
    let sent = a.statistics().intra.bytes_sent - before;
    assert!(
        sent < n * 1024,
        "{sent} bytes through the in-process transport for {n} samples of {size} B"
    );
}

/// A reader whose participant handles its data late (single-thread mode: the writer's
/// datagrams wait in its queue) while the writer writes more samples than it keeps for
/// readers to look up: the samples whose references expired are asked for again and
/// repaired, and every sample arrives, in order.
#[test]
fn samples_by_reference_a_reader_handles_late_are_repaired() {
    tachyon_transport::testing::require_isolated_network();
    let a = DomainParticipant::with_settings(7, &settings(ThreadMode::Threads, false, false))
        .expect("a");
    let b = DomainParticipant::with_settings(7, &settings(ThreadMode::Single, false, false))
        .expect("b");
    // KEEP_LAST deep enough to repair everything (a KEEP_ALL writer would wait for the
    // reader's acknowledgements: flow control).
    let n = tachyon_proto::local::MAX_SAMPLES as u64 + 44;
    let w = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter(
            &a.create_topic::<Blob>("blobs").expect("topic"),
            DataWriterQos::default()
                .reliable()
                .keep_last(n as usize + 10),
        )
        .expect("writer");
    let r = b
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(
            &b.create_topic::<Blob>("blobs").expect("topic"),
            DataReaderQos::default().reliable().keep_all(),
        )
        .expect("reader");
    let matched = common::poll_until(PATIENCE, || {
        b.run_once(std::time::Duration::from_millis(5))
            .expect("run");
        w.matched_subscriptions().contains(&r.guid())
            && r.matched_publications().contains(&w.guid())
    });
    assert!(matched, "matched");
    for i in 0..n {
        w.write(&blob(i, 8 * 1024)).expect("write");
    }
    let mut got = Vec::new();
    let all = common::poll_until(PATIENCE, || {
        b.run_once(std::time::Duration::from_millis(5))
            .expect("run");
        got.extend(common::take_data(&r));
        got.len() as u64 >= n
    });
    assert!(all, "{} of {n} arrived", got.len());
    let want: Vec<Blob> = (0..n).map(|i| blob(i, 8 * 1024)).collect();
    assert_eq!(got, want);
    let missed = b.statistics().readers.stats.by_reference_missed;
    assert!(
        missed >= 40,
        "{missed} references expired (and were repaired)"
    );
}

/// Counts what a listener took, by sample.
struct Collector {
    taken: Mutex<std::collections::HashSet<u64>>,
}

impl DataReaderListener<Seq> for Collector {
    fn on_data_available(&self, reader: &DataReader<Seq>) {
        let samples = reader.take(usize::MAX).expect("take");
        let mut taken = self.taken.lock().expect("taken");
        taken.extend(samples.into_iter().filter_map(|s| s.data).map(|d| d.n));
    }
}

/// Writers on four threads deliver to one reader at once: each writing thread calls the
/// reader's listener itself, or leaves its news to the thread calling it, which looks again
/// before it stops (`ListenerCaller`, whose interleavings its unit test walks through). The
/// listener takes every sample.
#[test]
fn news_from_many_writing_threads_reaches_the_listener() {
    let (a, b) = pair(9);
    let topic = b.create_topic::<Seq>("many").expect("topic");
    let r = b
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&topic, DataReaderQos::default().reliable().keep_all())
        .expect("reader");
    let collector = Arc::new(Collector {
        taken: Mutex::new(std::collections::HashSet::new()),
    });
    r.set_listener(
        Some(Arc::clone(&collector) as Arc<dyn DataReaderListener<Seq>>),
        StatusMask::DATA_AVAILABLE,
    );
    let (threads, each) = (4u64, 500u64);
    let publisher = a.create_publisher().expect("publisher");
    let topic = a.create_topic::<Seq>("many").expect("topic");
    let writers: Vec<DataWriter<Seq>> = (0..threads)
        .map(|_| {
            publisher
                .create_datawriter(&topic, DataWriterQos::default().reliable().keep_all())
                .expect("writer")
        })
        .collect();
    for w in &writers {
        wait_matched(w, &r);
    }
    std::thread::scope(|s| {
        for (t, w) in writers.iter().enumerate() {
            s.spawn(move || {
                for i in 0..each {
                    w.write(&Seq {
                        n: t as u64 * 1_000_000 + i,
                    })
                    .expect("write");
                }
            });
        }
    });
    let taken = || collector.taken.lock().expect("taken").len() as u64;
    wait_until("the listener took every sample", || {
        taken() == threads * each
    });
    assert_eq!(taken(), threads * each);
}

/// What a listener saw of its reader's statuses when it was called.
struct StatusSeen {
    /// DATA_AVAILABLE was still set in the call (it must have been reset: DCPS 2.2.4.1).
    set_in_call: Mutex<Vec<bool>>,
    /// Samples the listener took.
    taken: std::sync::atomic::AtomicUsize,
}

impl DataReaderListener<Seq> for StatusSeen {
    fn on_data_available(&self, reader: &DataReader<Seq>) {
        let set = reader
            .get_status_changes()
            .contains(StatusMask::DATA_AVAILABLE);
        self.set_in_call.lock().expect("seen").push(set);
        let n = reader.take(usize::MAX).map_or(0, |s| s.len());
        self.taken.fetch_add(n, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Calling on_data_available resets the reader's DATA_AVAILABLE (taken with the call, under
/// the lock the call is taken under): the listener never finds it set, and a reader whose
/// listener took everything shows no DATA_AVAILABLE afterwards.
#[test]
fn on_data_available_finds_data_available_reset() {
    let (a, b) = pair(8);
    let r = b
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(
            &b.create_topic::<Seq>("reset").expect("topic"),
            DataReaderQos::default().reliable().keep_all(),
        )
        .expect("reader");
    let seen = Arc::new(StatusSeen {
        set_in_call: Mutex::new(Vec::new()),
        taken: Default::default(),
    });
    r.set_listener(
        Some(Arc::clone(&seen) as Arc<dyn DataReaderListener<Seq>>),
        StatusMask::DATA_AVAILABLE,
    );
    let w = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter(
            &a.create_topic::<Seq>("reset").expect("topic"),
            DataWriterQos::default().reliable().keep_all(),
        )
        .expect("writer");
    wait_matched(&w, &r);
    let taken = || seen.taken.load(std::sync::atomic::Ordering::SeqCst);
    // One sample at a time, the next once the listener took it: a sample arriving during a
    // call would set DATA_AVAILABLE again, rightly (over UDP, where these tests run again,
    // delivery is not on the writing thread).
    for n in 0..20 {
        w.write(&Seq { n }).expect("write");
        wait_until("the listener took the sample", || taken() == n as usize + 1);
    }
    let set_in_call = seen.set_in_call.lock().expect("seen").clone();
    assert!(
        set_in_call.iter().all(|set| !set),
        "DATA_AVAILABLE set during on_data_available: {set_in_call:?}"
    );
    assert!(!r.get_status_changes().contains(StatusMask::DATA_AVAILABLE));
}
