//! WaitSets, conditions, listeners, per-instance reads and the DDS status getters, between
//! participants of one process over real UDP sockets on loopback (inside the isolated
//! network namespace `scripts/test.sh` provides). Guard-condition tests need no network.

mod common;

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use common::{participants, PATIENCE};
use tachyon::prelude::*;
use tachyon::status::SubscriptionMatchedStatus;
use tachyon::KeyHash;

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Reading")]
struct Reading {
    #[key]
    sensor: u32,
    value: u64,
}

/// A writer on participant `a` and a reader on participant `b`, reliable KEEP_ALL, topic
/// "readings" of `domain`.
struct Pair {
    writer: DataWriter<Reading>,
    reader: DataReader<Reading>,
    // Dropped last: endpoints go before their participants.
    _a: DomainParticipant,
    _b: DomainParticipant,
}

fn pair(domain: u32) -> Pair {
    let (a, b) = participants(domain);
    let writer = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter(
            &a.create_topic::<Reading>("readings").expect("topic"),
            DataWriterQos::default().reliable().keep_all(),
        )
        .expect("writer");
    let reader = b
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(
            &b.create_topic::<Reading>("readings").expect("topic"),
            DataReaderQos::default().reliable().keep_all(),
        )
        .expect("reader");
    Pair {
        writer,
        reader,
        _a: a,
        _b: b,
    }
}

/// Waits (with a WaitSet on the writer's StatusCondition) until the writer matched a reader,
/// then until `r` matched the writer too.
fn wait_matched(w: &DataWriter<Reading>, r: &DataReader<Reading>) {
    let c = w.get_statuscondition();
    c.set_enabled_statuses(StatusMask::PUBLICATION_MATCHED);
    let mut ws = WaitSet::new();
    ws.attach_condition(&c).expect("attach");
    let end = Instant::now() + PATIENCE;
    while w.matched_subscriptions().is_empty() {
        let left = end.saturating_duration_since(Instant::now());
        ws.wait(left).expect("the writer matches in time");
        w.get_publication_matched_status();
    }
    common::wait_matched(w, r);
}

#[test]
fn guard_condition_set_from_another_thread_wakes_the_wait_at_once() {
    let guard = GuardCondition::new();
    let other = GuardCondition::new();
    let mut ws = WaitSet::new();
    ws.attach_condition(&guard).expect("attach");
    ws.attach_condition(&other).expect("attach");
    let setter = guard.clone();
    let started = Instant::now();
    let t = std::thread::spawn(move || {
        // Long enough that the main thread is blocked in wait() when it happens.
        std::thread::sleep(Duration::from_millis(100));
        setter.set_trigger_value(true);
    });
    let triggered = ws.wait(PATIENCE).expect("woken by the guard");
    let took = started.elapsed();
    t.join().expect("setter thread");
    assert_eq!(triggered, vec![Condition::from(&guard)]);
    assert!(triggered[0] == guard && triggered[0] != other);
    assert!(took < Duration::from_secs(2), "woke after {took:?}");
    // It stays triggered until reset; then the wait times out again.
    assert_eq!(ws.wait(Duration::ZERO).expect("still triggered").len(), 1);
    guard.set_trigger_value(false);
    assert!(!guard.get_trigger_value());
    assert!(matches!(
        ws.wait(Duration::from_millis(20)),
        Err(Error::Timeout)
    ));
}

#[test]
fn wait_times_out_and_detach_is_checked() {
    let guard = GuardCondition::new();
    let mut ws = WaitSet::new();
    ws.attach_condition(&guard).expect("attach");
    ws.attach_condition(&guard)
        .expect("attaching twice is harmless");
    assert_eq!(ws.get_conditions().len(), 1);
    let started = Instant::now();
    let r = ws.wait(Duration::from_millis(150));
    assert!(matches!(r, Err(Error::Timeout)), "got {r:?}");
    assert!(started.elapsed() >= Duration::from_millis(150));
    ws.detach_condition(&guard).expect("detach");
    assert!(matches!(
        ws.detach_condition(&guard),
        Err(Error::PreconditionNotMet(_))
    ));
    // A detached guard no longer wakes the set.
    guard.set_trigger_value(true);
    assert!(matches!(
        ws.wait(Duration::from_millis(20)),
        Err(Error::Timeout)
    ));
}

#[test]
fn read_condition_wakes_on_data_from_another_participant() {
    let p = pair(21);
    // Conditions of both participants in one WaitSet.
    let matched = p.writer.get_statuscondition();
    matched.set_enabled_statuses(StatusMask::PUBLICATION_MATCHED);
    let data = p.reader.create_readcondition(
        SampleStateMask::NOT_READ,
        ViewStateMask::ANY,
        InstanceStateMask::ALIVE,
    );
    assert_eq!(data.get_sample_state_mask(), SampleStateMask::NOT_READ);
    assert!(!data.trigger_value());
    let mut ws = WaitSet::new();
    ws.attach_condition(&matched).expect("attach");
    ws.attach_condition(&data).expect("attach");
    let triggered = ws.wait(PATIENCE).expect("matched in time");
    assert_eq!(triggered, vec![Condition::from(&matched)]);
    assert_eq!(p.writer.get_publication_matched_status().current_count, 1);

    let written = Reading {
        sensor: 3,
        value: 42,
    };
    let w = &p.writer;
    let started = Instant::now();
    std::thread::scope(|s| {
        s.spawn(|| {
            // Later, so that the main thread is blocked in wait() when the data comes.
            std::thread::sleep(Duration::from_millis(50));
            w.write(&written).expect("write");
        });
        let triggered = ws.wait(PATIENCE).expect("data in time");
        assert_eq!(triggered, vec![Condition::from(&data)]);
    });
    assert!(started.elapsed() < Duration::from_secs(5));
    let got = p.reader.read_w_condition(&data, 10).expect("read");
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].data.as_ref(), Some(&written));
    // Read samples no longer match NOT_READ: the condition is off, the wait times out.
    assert!(!data.trigger_value());
    assert!(matches!(
        ws.wait(Duration::from_millis(50)),
        Err(Error::Timeout)
    ));
    // A ReadCondition on READ samples triggers now; taking empties the reader.
    let read = p.reader.create_readcondition(
        SampleStateMask::READ,
        ViewStateMask::NOT_NEW,
        InstanceStateMask::ANY,
    );
    assert!(read.trigger_value());
    assert!(matches!(
        p.reader.take_w_condition(&read, 0),
        Ok(v) if v.is_empty()
    ));
    assert_eq!(p.reader.take_w_condition(&read, 10).expect("take").len(), 1);
    assert!(!read.trigger_value());
}

#[test]
fn read_condition_of_another_reader_is_a_bad_parameter() {
    let p = pair(22);
    let other =
        p._b.create_subscriber()
            .expect("subscriber")
            .create_datareader(
                &p._b.create_topic::<Reading>("other").expect("topic"),
                DataReaderQos::default(),
            )
            .expect("reader");
    let rc = other.create_readcondition(
        SampleStateMask::ANY,
        ViewStateMask::ANY,
        InstanceStateMask::ANY,
    );
    assert!(matches!(
        p.reader.take_w_condition(&rc, 1),
        Err(Error::BadParameter(_))
    ));
    // Once its reader is gone a ReadCondition never triggers.
    drop(other);
    assert!(!rc.trigger_value());
}

#[test]
fn status_condition_triggers_on_match_until_the_status_is_read() {
    let p = pair(23);
    let cond = p.reader.get_statuscondition();
    assert_eq!(cond.get_enabled_statuses(), StatusMask::ALL);
    cond.set_enabled_statuses(StatusMask::SUBSCRIPTION_MATCHED);
    assert_eq!(
        cond.get_enabled_statuses(),
        StatusMask::SUBSCRIPTION_MATCHED
    );
    let mut ws = WaitSet::new();
    ws.attach_condition(&cond).expect("attach");
    let triggered = ws.wait(PATIENCE).expect("matched in time");
    assert_eq!(triggered, vec![Condition::from(&cond)]);
    assert!(p
        .reader
        .get_status_changes()
        .contains(StatusMask::SUBSCRIPTION_MATCHED));

    let s = p.reader.get_subscription_matched_status();
    assert_eq!(
        (s.total_count, s.total_count_change),
        (1, 1),
        "first read: {s:?}"
    );
    assert_eq!((s.current_count, s.current_count_change), (1, 1));
    assert_eq!(s.last_publication_handle, Some(p.writer.guid()));
    // Reading the status reset its changed flag and change counts.
    assert!(!cond.trigger_value());
    assert!(matches!(
        ws.wait(Duration::from_millis(100)),
        Err(Error::Timeout)
    ));
    let again = p.reader.get_subscription_matched_status();
    assert_eq!(
        again,
        SubscriptionMatchedStatus {
            total_count_change: 0,
            current_count_change: 0,
            ..s
        }
    );
    // Unmatching changes the status again: current_count_change is -1, total unchanged.
    let writer_guid = p.writer.guid();
    drop(p.writer);
    let triggered = ws.wait(PATIENCE).expect("unmatched in time");
    assert_eq!(triggered.len(), 1);
    let gone = p.reader.get_subscription_matched_status();
    assert_eq!((gone.current_count, gone.current_count_change), (0, -1));
    assert_eq!((gone.total_count, gone.total_count_change), (1, 0));
    assert_eq!(gone.last_publication_handle, Some(writer_guid));
}

/// Records what it is called with; takes in `on_data_available`.
struct Recorder {
    matched: Mutex<Vec<SubscriptionMatchedStatus>>,
    taken: Mutex<mpsc::Sender<Vec<Reading>>>,
}

impl DataReaderListener<Reading> for Recorder {
    fn on_data_available(&self, reader: &DataReader<Reading>) {
        // take() from inside the listener: the runtime's lock is not held here.
        let got: Vec<Reading> = reader
            .take(usize::MAX)
            .expect("take in listener")
            .into_iter()
            .filter_map(|s| s.data)
            .collect();
        if let Ok(tx) = self.taken.lock() {
            let _ = tx.send(got);
        }
    }

    fn on_subscription_matched(
        &self,
        _reader: &DataReader<Reading>,
        status: SubscriptionMatchedStatus,
    ) {
        if let Ok(mut m) = self.matched.lock() {
            m.push(status);
        }
    }
}

#[test]
fn listener_takes_in_on_data_available_without_deadlock() {
    let (a, b) = participants(24);
    let (tx, rx) = mpsc::channel();
    let recorder = Arc::new(Recorder {
        matched: Mutex::new(Vec::new()),
        taken: Mutex::new(tx),
    });
    let reader = b
        .create_subscriber()
        .expect("subscriber")
        .create_datareader_with_listener(
            &b.create_topic::<Reading>("readings").expect("topic"),
            DataReaderQos::default().reliable().keep_all(),
            recorder.clone(),
            StatusMask::DATA_AVAILABLE | StatusMask::SUBSCRIPTION_MATCHED,
        )
        .expect("reader");
    let writer = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter(
            &a.create_topic::<Reading>("readings").expect("topic"),
            DataWriterQos::default().reliable().keep_all(),
        )
        .expect("writer");
    wait_matched(&writer, &reader);
    let n = 20u64;
    for i in 0..n {
        writer
            .write(&Reading {
                sensor: 1,
                value: i,
            })
            .expect("write");
    }
    let mut got = Vec::new();
    let end = Instant::now() + PATIENCE;
    while got.len() < n as usize {
        let left = end.saturating_duration_since(Instant::now());
        got.extend(rx.recv_timeout(left).expect("the listener takes in time"));
    }
    assert_eq!(
        got.iter().map(|r| r.value).collect::<Vec<_>>(),
        (0..n).collect::<Vec<_>>()
    );
    // The listener consumed DATA_AVAILABLE and SUBSCRIPTION_MATCHED: they are not pending.
    let m = recorder.matched.lock().expect("lock").clone();
    assert_eq!(
        m.first().map(|s| (s.current_count, s.total_count_change)),
        Some((1, 1))
    );
    assert!(!reader
        .get_status_changes()
        .intersects(StatusMask::DATA_AVAILABLE | StatusMask::SUBSCRIPTION_MATCHED));
    // Without a listener, DATA_AVAILABLE stays for the StatusCondition.
    reader.set_listener(None, StatusMask::NONE);
    let cond = reader.get_statuscondition();
    cond.set_enabled_statuses(StatusMask::DATA_AVAILABLE);
    let mut ws = WaitSet::new();
    ws.attach_condition(&cond).expect("attach");
    writer
        .write(&Reading {
            sensor: 1,
            value: n,
        })
        .expect("write");
    ws.wait(PATIENCE).expect("DATA_AVAILABLE in time");
    assert_eq!(reader.take(10).expect("take").len(), 1);
    assert!(!cond.trigger_value(), "take resets DATA_AVAILABLE");
    assert!(
        rx.try_recv().is_err(),
        "the removed listener was not called"
    );
}

#[test]
fn instances_are_read_and_taken_one_by_one() {
    let p = pair(25);
    wait_matched(&p.writer, &p.reader);
    for sensor in [7u32, 1, 4] {
        for value in 0..2u64 {
            p.writer.write(&Reading { sensor, value }).expect("write");
        }
    }
    let all = p.reader.create_readcondition(
        SampleStateMask::ANY,
        ViewStateMask::ANY,
        InstanceStateMask::ANY,
    );
    let mut ws = WaitSet::new();
    ws.attach_condition(&all).expect("attach");
    ws.wait(PATIENCE).expect("data in time");
    p.writer
        .wait_for_acknowledgments(PATIENCE)
        .expect("acknowledged, so all six are in the reader");

    let handle = |sensor| {
        p.reader
            .lookup_instance(&Reading { sensor, value: 0 })
            .expect("key hash")
            .expect("known instance")
    };
    assert_eq!(
        p.reader
            .lookup_instance(&Reading {
                sensor: 99,
                value: 0
            })
            .expect("key hash"),
        None
    );
    let h4 = handle(4);
    assert_eq!(p.reader.get_key_value(h4).expect("key").sensor, 4);
    assert!(matches!(
        p.reader.get_key_value(KeyHash([0xee; 16])),
        Err(Error::BadInstance)
    ));
    let one = p.reader.read_instance(h4, 1).expect("read");
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].info.instance_handle, h4);
    assert!(matches!(
        p.reader.take_instance(KeyHash([0xee; 16]), 10),
        Err(Error::BadInstance)
    ));

    // take_next_instance walks the instances in handle order, one instance per call.
    let mut order: Vec<KeyHash> = [1, 4, 7].iter().map(|s| handle(*s)).collect();
    order.sort();
    let mut seen = Vec::new();
    let mut previous = None;
    loop {
        let batch = p.reader.take_next_instance(previous, 10).expect("take");
        let Some(first) = batch.first() else { break };
        let h = first.info.instance_handle;
        assert!(batch.iter().all(|s| s.info.instance_handle == h));
        let values: Vec<u64> = batch
            .iter()
            .filter_map(|s| s.data.as_ref())
            .map(|r| r.value)
            .collect();
        assert_eq!(values, [0, 1], "both samples of the instance, in order");
        assert_eq!(
            batch.iter().map(|s| s.info.sample_rank).collect::<Vec<_>>(),
            [1, 0]
        );
        assert!(batch
            .iter()
            .all(|s| s.info.publication_handle == p.writer.guid()));
        seen.push(h);
        previous = Some(h);
    }
    assert_eq!(seen, order);
    assert!(p.reader.take(10).expect("take").is_empty());
    assert!(!all.trigger_value());
}

/// Forwards PUBLICATION_MATCHED to a channel.
struct MatchForwarder(Mutex<mpsc::Sender<tachyon::status::PublicationMatchedStatus>>);

impl DataWriterListener<Reading> for MatchForwarder {
    fn on_publication_matched(
        &self,
        writer: &DataWriter<Reading>,
        status: tachyon::status::PublicationMatchedStatus,
    ) {
        // The writer may be used from its own listener.
        assert_eq!(
            writer.matched_subscriptions().len(),
            status.current_count as usize
        );
        if let Ok(tx) = self.0.lock() {
            let _ = tx.send(status);
        }
    }
}

#[test]
fn writer_listener_reports_matches_and_consumes_the_status() {
    let (a, b) = participants(26);
    let (tx, rx) = mpsc::channel();
    let writer = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter_with_listener(
            &a.create_topic::<Reading>("readings").expect("topic"),
            DataWriterQos::default().reliable(),
            Arc::new(MatchForwarder(Mutex::new(tx))),
            StatusMask::PUBLICATION_MATCHED,
        )
        .expect("writer");
    let reader = b
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(
            &b.create_topic::<Reading>("readings").expect("topic"),
            DataReaderQos::default().reliable(),
        )
        .expect("reader");
    let s = rx.recv_timeout(PATIENCE).expect("matched in time");
    assert_eq!((s.current_count, s.current_count_change), (1, 1));
    assert_eq!((s.total_count, s.total_count_change), (1, 1));
    assert_eq!(s.last_subscription_handle, Some(reader.guid()));
    assert!(!writer
        .get_status_changes()
        .contains(StatusMask::PUBLICATION_MATCHED));
    assert_eq!(
        writer.get_publication_matched_status().total_count_change,
        0
    );
    drop(reader);
    let s = rx.recv_timeout(PATIENCE).expect("unmatched in time");
    assert_eq!((s.current_count, s.current_count_change), (0, -1));
}

/// Waits on `ws` until `done` says the statuses it gathers are complete.
fn wait_for(ws: &WaitSet, what: &str, mut done: impl FnMut(&[Condition]) -> bool) {
    let end = Instant::now() + PATIENCE;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        let triggered = ws.wait(left).unwrap_or_else(|e| panic!("{what}: {e}"));
        if done(&triggered) {
            return;
        }
    }
}

#[test]
fn deadline_missed_statuses_name_the_late_instance() {
    let (a, b) = participants(27);
    let period = Duration::from_millis(100);
    let writer = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter(
            &a.create_topic::<Reading>("readings").expect("topic"),
            DataWriterQos::default().reliable().deadline(period),
        )
        .expect("writer");
    let reader = b
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(
            &b.create_topic::<Reading>("readings").expect("topic"),
            DataReaderQos::default().reliable().deadline(period),
        )
        .expect("reader");
    wait_matched(&writer, &reader);
    let sample = Reading {
        sensor: 5,
        value: 0,
    };
    writer.write(&sample).expect("write");
    let offered = writer.get_statuscondition();
    offered.set_enabled_statuses(StatusMask::OFFERED_DEADLINE_MISSED);
    let requested = reader.get_statuscondition();
    requested.set_enabled_statuses(StatusMask::REQUESTED_DEADLINE_MISSED);
    let mut ws = WaitSet::new();
    ws.attach_condition(&offered).expect("attach");
    ws.attach_condition(&requested).expect("attach");
    let (mut w, mut r) = (None, None);
    wait_for(&ws, "deadline missed on both sides", |triggered| {
        for c in triggered {
            if *c == offered {
                w = Some(writer.get_offered_deadline_missed_status());
            } else if *c == requested {
                r = Some(reader.get_requested_deadline_missed_status());
            }
        }
        w.is_some() && r.is_some()
    });
    let (w, r) = (w.expect("set"), r.expect("set"));
    let handle = writer.lookup_instance(&sample).expect("key");
    assert_eq!(w.last_instance_handle, Some(handle));
    assert_eq!(r.last_instance_handle, Some(handle));
    assert_eq!(reader.lookup_instance(&sample).expect("key"), Some(handle));
    assert!(w.total_count >= 1 && w.total_count_change >= 1);
    assert!(r.total_count >= 1 && r.total_count_change >= 1);
}

#[test]
fn liveliness_lost_and_changed_are_reported() {
    use tachyon::qos::LivelinessKind;
    let (a, b) = participants(28);
    let lease = Some(Duration::from_millis(200));
    let writer = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter(
            &a.create_topic::<Reading>("readings").expect("topic"),
            DataWriterQos::default()
                .reliable()
                .liveliness(LivelinessKind::ManualByTopic, lease),
        )
        .expect("writer");
    let reader = b
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(
            &b.create_topic::<Reading>("readings").expect("topic"),
            DataReaderQos::default()
                .reliable()
                .liveliness(LivelinessKind::ManualByTopic, lease),
        )
        .expect("reader");
    wait_matched(&writer, &reader);
    // Writing asserts the writer; then it falls silent and its lease runs out.
    writer
        .write(&Reading {
            sensor: 1,
            value: 0,
        })
        .expect("write");
    let lost = writer.get_statuscondition();
    lost.set_enabled_statuses(StatusMask::LIVELINESS_LOST);
    let changed = reader.get_statuscondition();
    changed.set_enabled_statuses(StatusMask::LIVELINESS_CHANGED);
    let mut ws = WaitSet::new();
    ws.attach_condition(&lost).expect("attach");
    ws.attach_condition(&changed).expect("attach");
    let mut lost_count = 0;
    let mut not_alive = None;
    wait_for(&ws, "liveliness lost", |triggered| {
        for c in triggered {
            if *c == lost {
                lost_count += writer.get_liveliness_lost_status().total_count_change;
            } else if *c == changed {
                let s = reader.get_liveliness_changed_status();
                if s.not_alive_count == 1 {
                    not_alive = Some(s);
                }
            }
        }
        lost_count > 0 && not_alive.is_some()
    });
    let s = not_alive.expect("set");
    assert_eq!(s.alive_count, 0);
    assert_eq!(s.last_publication_handle, Some(writer.guid()));
    assert_eq!(writer.get_liveliness_lost_status().total_count_change, 0);
}

/// Panics on its first call (after saying so), forwards what it takes afterwards.
struct PanicsOnce {
    calls: std::sync::atomic::AtomicU32,
    taken: Mutex<mpsc::Sender<Option<usize>>>,
}

impl DataReaderListener<Reading> for PanicsOnce {
    fn on_data_available(&self, reader: &DataReader<Reading>) {
        if self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            if let Ok(tx) = self.taken.lock() {
                let _ = tx.send(None);
            }
            panic!("a listener bug (expected by the test)");
        }
        let n = reader.take(usize::MAX).expect("take").len();
        if let Ok(tx) = self.taken.lock() {
            let _ = tx.send(Some(n));
        }
    }
}

#[test]
fn a_panicking_listener_does_not_stop_the_runtime() {
    let p = pair(29);
    let (tx, rx) = mpsc::channel();
    p.reader.set_listener(
        Some(Arc::new(PanicsOnce {
            calls: Default::default(),
            taken: Mutex::new(tx),
        })),
        StatusMask::DATA_AVAILABLE,
    );
    wait_matched(&p.writer, &p.reader);
    p.writer
        .write(&Reading {
            sensor: 1,
            value: 0,
        })
        .expect("write");
    // The second sample is written only after the first call, so it causes a second one.
    assert_eq!(rx.recv_timeout(PATIENCE).expect("first call"), None);
    p.writer
        .write(&Reading {
            sensor: 1,
            value: 1,
        })
        .expect("write");
    let mut total = 0;
    while total < 2 {
        total += rx
            .recv_timeout(PATIENCE)
            .expect("the listener runs again")
            .expect("no second panic");
    }
    assert_eq!(total, 2, "both samples taken after the panic");
}

/// The voluntary context switches of the thread whose `/proc/thread-self` is `task` so far.
fn voluntary_switches(task: &std::path::Path) -> u64 {
    let status = std::fs::read_to_string(task.join("status")).expect("the thread's status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("voluntary_ctxt_switches")
}

/// Whether the thread of `task` is asleep (blocked).
fn asleep(task: &std::path::Path) -> bool {
    let stat = std::fs::read_to_string(task.join("stat")).unwrap_or_default();
    // The state follows the command name's closing parenthesis.
    stat.rsplit_once(") ")
        .is_some_and(|(_, rest)| rest.starts_with('S'))
}

#[test]
fn a_wait_on_a_quiet_reader_is_not_woken_by_the_samples_of_another() {
    let (a, b) = participants(30);
    let qos = || DataWriterQos::default().reliable().keep_all();
    let rqos = || DataReaderQos::default().reliable().keep_all();
    let (publisher, subscriber) = (
        a.create_publisher().unwrap(),
        b.create_subscriber().unwrap(),
    );
    let busy_w = publisher
        .create_datawriter(&a.create_topic::<Reading>("busy").unwrap(), qos())
        .unwrap();
    let quiet_w = publisher
        .create_datawriter(&a.create_topic::<Reading>("quiet").unwrap(), qos())
        .unwrap();
    let busy_r = subscriber
        .create_datareader(&b.create_topic::<Reading>("busy").unwrap(), rqos())
        .unwrap();
    let quiet_r = subscriber
        .create_datareader(&b.create_topic::<Reading>("quiet").unwrap(), rqos())
        .unwrap();
    common::wait_matched(&busy_w, &busy_r);
    common::wait_matched(&quiet_w, &quiet_r);

    // Two threads wait for the quiet reader's data: one in `wait_for_data`, one in a WaitSet
    // on a ReadCondition of it. Each says where its /proc entry is, then blocks.
    let (tx, rx) = mpsc::channel();
    let waiters: Vec<_> = [false, true]
        .into_iter()
        .map(|waitset| {
            let (r, tx) = (quiet_r.clone(), tx.clone());
            std::thread::spawn(move || {
                let me = std::path::Path::new("/proc")
                    .join(std::fs::read_link("/proc/thread-self").expect("/proc/thread-self"));
                tx.send(me).unwrap();
                match waitset {
                    false => r.wait_for_data(PATIENCE),
                    true => {
                        let cond = r.create_readcondition(
                            SampleStateMask::NOT_READ,
                            ViewStateMask::ANY,
                            InstanceStateMask::ANY,
                        );
                        let mut ws = WaitSet::new();
                        ws.attach_condition(&cond).unwrap();
                        ws.wait(PATIENCE).is_ok()
                    }
                }
            })
        })
        .collect();
    let tasks: Vec<_> = (0..2).map(|_| rx.recv().unwrap()).collect();
    common::wait_until("both waiters asleep", || tasks.iter().all(|t| asleep(t)));
    let before: Vec<u64> = tasks.iter().map(|t| voluntary_switches(t)).collect();

    // A thousand samples of the busy reader, in many datagrams and flushes.
    for i in 0..1000u64 {
        busy_w
            .write(&Reading {
                sensor: 1,
                value: i,
            })
            .unwrap();
        if i % 10 == 0 {
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }
    let got = common::take_at_least(&busy_r, 1000);
    assert_eq!(got.len(), 1000);
    let woken: Vec<u64> = tasks
        .iter()
        .zip(&before)
        .map(|(t, b)| voluntary_switches(t) - b)
        .collect();

    quiet_w
        .write(&Reading {
            sensor: 2,
            value: 7,
        })
        .unwrap();
    for w in waiters {
        assert!(
            w.join().unwrap(),
            "the quiet reader's sample woke its waiter"
        );
    }
    // Before, every flush of the busy reader's datagrams woke both (hundreds of times).
    assert!(
        woken.iter().all(|&n| n <= 5),
        "waiters on the quiet reader woke {woken:?} times (wait_for_data, WaitSet) while \
         another reader received 1000 samples"
    );
}

#[test]
fn samples_are_read_and_taken_one_at_a_time() {
    let p = pair(31);
    wait_matched(&p.writer, &p.reader);
    let written = [(7u32, 0u64), (1, 1), (7, 2), (1, 3)];
    for (sensor, value) in written {
        p.writer.write(&Reading { sensor, value }).expect("write");
    }
    p.writer
        .wait_for_acknowledgments(PATIENCE)
        .expect("acknowledged, so all four are in the reader");
    // In the order `take` returns them: by instance, then oldest first.
    let handle = |sensor| {
        p.reader
            .lookup_instance(&Reading { sensor, value: 0 })
            .expect("key hash")
            .expect("known instance")
    };
    let mut expected: Vec<Reading> = written
        .iter()
        .map(|&(sensor, value)| Reading { sensor, value })
        .collect();
    expected.sort_by_key(|r| (handle(r.sensor), r.value));

    // read_next_sample: one at a time, each marked READ so the next call returns the next.
    let mut value = Reading {
        sensor: 0,
        value: 99,
    };
    let mut read = Vec::new();
    while let Some(info) = p.reader.read_next_sample(&mut value).expect("read") {
        assert!(info.valid_data);
        assert_eq!(info.sample_state, SampleState::NotRead);
        assert_eq!(info.instance_handle, handle(value.sensor));
        assert_eq!(info.publication_handle, p.writer.guid());
        read.push(value.clone());
    }
    assert_eq!(read, expected);
    // Still held, all READ: take_next_sample (NOT_READ only) finds none of them.
    let held = p.reader.read(10).expect("read");
    assert_eq!(held.len(), 4);
    assert!(held
        .iter()
        .all(|s| s.info.sample_state == SampleState::Read));
    assert!(p
        .reader
        .take_next_sample(&mut value)
        .expect("take")
        .is_none());
    assert_eq!(p.reader.take(10).expect("take").len(), 4);

    // take_next_sample: a sample, and the dispose that followed it in its info.
    p.writer
        .write(&Reading {
            sensor: 4,
            value: 5,
        })
        .expect("write");
    p.writer
        .dispose(&Reading {
            sensor: 4,
            value: 0,
        })
        .expect("dispose");
    p.writer
        .wait_for_acknowledgments(PATIENCE)
        .expect("acknowledged");
    let h4 = handle(4);
    let info = p
        .reader
        .take_next_sample(&mut value)
        .expect("take")
        .expect("the sample");
    assert!(info.valid_data);
    assert_eq!(info.instance_handle, h4);
    assert_eq!(info.instance_state, InstanceState::NotAliveDisposed);
    assert_eq!(
        value,
        Reading {
            sensor: 4,
            value: 5
        }
    );
    assert!(p
        .reader
        .take_next_sample(&mut value)
        .expect("take")
        .is_none());

    // A dispose with no sample left to carry it: a sample without value, which leaves the
    // caller's value as it was.
    p.writer
        .write(&Reading {
            sensor: 6,
            value: 8,
        })
        .expect("write");
    p.writer
        .wait_for_acknowledgments(PATIENCE)
        .expect("acknowledged");
    let h6 = handle(6);
    assert!(p
        .reader
        .take_next_sample(&mut value)
        .expect("take")
        .is_some_and(|i| i.valid_data && i.instance_state == InstanceState::Alive));
    p.writer
        .dispose(&Reading {
            sensor: 6,
            value: 0,
        })
        .expect("dispose");
    p.writer
        .wait_for_acknowledgments(PATIENCE)
        .expect("acknowledged");
    let info = p
        .reader
        .take_next_sample(&mut value)
        .expect("take")
        .expect("the dispose");
    assert!(!info.valid_data);
    assert_eq!(info.instance_state, InstanceState::NotAliveDisposed);
    assert_eq!(info.instance_handle, h6);
    assert_eq!(value.value, 8, "no value: the caller's left as it was");
    assert!(p
        .reader
        .take_next_sample(&mut value)
        .expect("take")
        .is_none());
    assert!(p.reader.take(10).expect("take").is_empty());
    assert_eq!(p.reader.decode_errors(), 0);
}
