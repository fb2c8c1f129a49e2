//! The runtime's thread model and executor over real UDP sockets on loopback (inside the
//! isolated network namespace `scripts/test.sh` provides): thread roles applied, single-thread
//! mode, and user data delivered through a flood of discovery-port garbage.

mod common;

use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{participants, poll_until, wait_matched, PATIENCE};
use tachyon::config::{ThreadMode, ThreadRoles, ThreadSettings};
use tachyon::prelude::*;
use tachyon::ParticipantSettings;
use tachyon_transport::thread::Policy;
use tachyon_transport::PortMapping;

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Counter")]
struct Counter {
    #[key]
    id: u32,
    seq: u64,
}

fn settings(threads: ThreadRoles) -> ParticipantSettings {
    ParticipantSettings {
        threads,
        ..ParticipantSettings::default()
    }
}

/// `threads`, user data over UDP only (not the in-process transport, which hands a sample
/// over on the writing thread, nor shared memory): what receive threads do with sockets.
fn over_udp(threads: ThreadRoles) -> ParticipantSettings {
    let mut s = settings(threads);
    s.transports.no_intra = true;
    s.transports.no_shm = true;
    s
}

fn single() -> ParticipantSettings {
    settings(ThreadRoles {
        mode: ThreadMode::Single,
        ..ThreadRoles::default()
    })
}

fn driver(cpus: Vec<u16>, priority: Option<u8>, strict: bool) -> ParticipantSettings {
    settings(ThreadRoles {
        mode: ThreadMode::Driver,
        strict,
        driver: ThreadSettings {
            cpus,
            priority,
            ..ThreadSettings::default()
        },
        ..ThreadRoles::default()
    })
}

/// A line of `/proc/self/task/<tid>/status`, e.g. `Cpus_allowed_list`.
fn task_status(tid: i32, key: &str) -> String {
    let status = std::fs::read_to_string(format!("/proc/self/task/{tid}/status"))
        .expect("the driver thread is a task of this process");
    status
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .map(|v| v.trim().to_owned())
        .unwrap_or_else(|| panic!("no {key} in the status of task {tid}"))
}

#[test]
fn the_driver_thread_runs_on_the_configured_cpu() {
    tachyon_transport::testing::require_isolated_network();
    let me = tachyon_transport::thread::current_id();
    let mine = task_status(me, "Cpus_allowed_list");
    let p = DomainParticipant::with_settings(40, &driver(vec![0], None, true)).expect("start");
    let tid = p.driver_thread_id().expect("a driver thread");
    assert_ne!(tid, tachyon_transport::thread::current_id());
    assert_eq!(task_status(tid, "Cpus_allowed_list"), "0");
    assert_eq!(
        tachyon_transport::thread::affinity(tid).expect("affinity"),
        vec![0]
    );
    // The application's thread is left alone.
    assert_eq!(task_status(me, "Cpus_allowed_list"), mine);
}

#[test]
fn in_threads_mode_receive_and_timers_threads_run_as_configured() {
    tachyon_transport::testing::require_isolated_network();
    let p = DomainParticipant::with_settings(
        40,
        &settings(ThreadRoles {
            mode: ThreadMode::Threads,
            strict: true,
            receive: ThreadSettings {
                cpus: vec![0],
                ..ThreadSettings::default()
            },
            timers: ThreadSettings {
                cpus: vec![1 % available_cpus()],
                ..ThreadSettings::default()
            },
            ..ThreadRoles::default()
        }),
    )
    .expect("start");
    let threads = p.thread_ids();
    let roles: Vec<&str> = threads.iter().map(|(r, _)| *r).collect();
    // One timers thread, a receive thread per user-data socket (unicast, and multicast when
    // the namespace's loopback has it).
    assert_eq!(roles[0], "timers");
    assert!(
        roles[1..].iter().all(|r| *r == "receive") && roles.len() >= 2,
        "{roles:?}"
    );
    assert_eq!(p.driver_thread_id(), Some(threads[0].1));
    for (role, tid) in threads {
        let want = if role == "receive" { "0" } else { "1" };
        let want = if available_cpus() == 1 { "0" } else { want };
        assert_eq!(task_status(tid, "Cpus_allowed_list"), want, "{role}");
        assert_eq!(task_status(tid, "Name"), format!("tachyon-{role}"));
    }
}

fn available_cpus() -> u16 {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(2) as u16)
}

#[test]
fn the_driver_thread_gets_its_sched_fifo_priority_when_permitted() {
    tachyon_transport::testing::require_isolated_network();
    // Lenient: the participant starts whether or not the priority could be applied.
    let p = DomainParticipant::with_settings(40, &driver(Vec::new(), Some(7), false))
        .expect("starts even without the permission");
    let tid = p.driver_thread_id().expect("a driver thread");
    let policy = tachyon_transport::thread::policy(tid).expect("policy");
    // Can this process use SCHED_FIFO at all (root without a real-time budget cannot)?
    let permitted = std::thread::spawn(|| tachyon_transport::thread::set_fifo_priority(1))
        .join()
        .expect("probe");
    match permitted {
        Ok(()) => assert_eq!(policy, Policy::Fifo(7)),
        Err(e) => {
            eprintln!("SCHED_FIFO not permitted here ({e}); checked the fallback only");
            assert_eq!(policy, Policy::Other);
            let strict = DomainParticipant::with_settings(40, &driver(Vec::new(), Some(7), true));
            assert!(matches!(
                strict,
                Err(Error::ThreadSettings { role: "driver", .. })
            ));
        }
    }
}

#[test]
fn a_setting_that_cannot_apply_is_a_warning_or_in_strict_mode_an_error() {
    tachyon_transport::testing::require_isolated_network();
    // CPU 1023 does not exist on this machine.
    let lenient = DomainParticipant::with_settings(40, &driver(vec![1023], None, false))
        .expect("a participant starts although its CPU does not exist");
    let tid = lenient.driver_thread_id().expect("a driver thread");
    assert_ne!(task_status(tid, "Cpus_allowed_list"), "1023");
    match DomainParticipant::with_settings(40, &driver(vec![1023], None, true)) {
        Err(Error::ThreadSettings {
            role,
            setting,
            source,
        }) => {
            assert_eq!(role, "driver");
            assert_eq!(setting, "cpus = [1023]");
            assert_eq!(source.raw_os_error(), Some(22), "EINVAL: {source}");
        }
        other => panic!("expected a ThreadSettings error, got {other:?}"),
    }
}

#[test]
fn two_single_thread_participants_exchange_reliable_data_in_one_thread() {
    tachyon_transport::testing::require_isolated_network();
    let a = DomainParticipant::with_settings(41, &single()).expect("participant a");
    let b = DomainParticipant::with_settings(41, &single()).expect("participant b");
    assert_eq!(a.driver_thread_id(), None);
    let (w, r) = common::reliable_pair::<Counter>(&a, &b, "counter");
    let spin_both = || {
        a.run_once(Duration::from_millis(1)).expect("run a");
        b.run_once(Duration::from_millis(1)).expect("run b");
    };
    let end = Instant::now() + PATIENCE;
    while w.matched_subscriptions().is_empty() || r.matched_publications().is_empty() {
        assert!(Instant::now() < end, "timed out matching");
        spin_both();
    }
    let n = 100u64;
    for seq in 0..n {
        w.write(&Counter { id: 1, seq }).expect("write");
    }
    let mut got = Vec::new();
    let end = Instant::now() + PATIENCE;
    while got.len() < n as usize || w.wait_for_acknowledgments(Duration::ZERO).is_err() {
        assert!(
            Instant::now() < end,
            "timed out: {} of {n} samples",
            got.len()
        );
        spin_both();
        got.extend(
            r.take(usize::MAX)
                .expect("take")
                .into_iter()
                .filter_map(|s| s.data.map(|c| c.seq)),
        );
    }
    assert_eq!(got, (0..n).collect::<Vec<_>>(), "every sample, in order");
    // spin returns once its deadline has passed.
    let t = Instant::now();
    a.spin(t + Duration::from_millis(20)).expect("spin");
    assert!(t.elapsed() >= Duration::from_millis(20));
    // A closed participant cannot be run.
    a.close();
    assert!(matches!(
        a.run_once(Duration::ZERO),
        Err(Error::AlreadyDeleted)
    ));
}

#[test]
fn run_once_is_refused_when_a_driver_thread_runs_the_participant() {
    tachyon_transport::testing::require_isolated_network();
    let p = DomainParticipant::with_settings(42, &ParticipantSettings::default()).expect("start");
    assert!(matches!(
        p.run_once(Duration::ZERO),
        Err(Error::PreconditionNotMet(_))
    ));
}

#[test]
fn user_data_is_delivered_through_a_flood_of_discovery_port_garbage() {
    let (a, b) = participants(43);
    let (w, r) = common::reliable_pair::<Counter>(&a, &b, "counter");
    wait_matched(&w, &r);

    // Garbage on both participants' metatraffic unicast ports, as fast as one thread can
    // send it: RTPS headers followed by junk (parsed, then dropped) and plain junk.
    let ports = PortMapping::default();
    let targets: Vec<SocketAddrV4> = [&a, &b]
        .iter()
        .map(|p| {
            let index = p.participant_index().expect("an indexed participant");
            let port = ports.spdp_unicast(43, index).expect("port");
            SocketAddrV4::new(Ipv4Addr::LOCALHOST, port)
        })
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let flood = {
        let (stop, sent) = (Arc::clone(&stop), Arc::clone(&sent));
        std::thread::spawn(move || {
            let s = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).expect("flood socket");
            let mut rtps = b"RTPS\x02\x05\x01\x0f".to_vec();
            rtps.extend((0..1200u32).map(|i| (i * 7) as u8));
            let junk = vec![0xa5u8; 600];
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let data = if i % 2 == 0 { &rtps } else { &junk };
                let _ = s.send_to(data, targets[(i / 2) as usize % targets.len()]);
                i += 1;
                sent.store(i, Ordering::Relaxed);
            }
        })
    };
    // The storm reaches both participants before anything is written. (Failures are
    // reported once the flood is stopped.)
    let stormy = poll_until(PATIENCE, || {
        [&a, &b].iter().all(|p| p.statistics().malformed() >= 100)
    });
    let n = 200u64;
    for seq in 0..n {
        w.write(&Counter { id: 2, seq }).expect("write");
    }
    let mut got = Vec::new();
    let delivered = poll_until(2 * PATIENCE, || {
        got.extend(
            r.take(usize::MAX)
                .expect("take")
                .into_iter()
                .filter_map(|s| s.data.map(|c| c.seq)),
        );
        got.len() >= n as usize
    });
    let acked = w.wait_for_acknowledgments(PATIENCE);
    stop.store(true, Ordering::Relaxed);
    flood.join().expect("flood thread");
    let sent = sent.load(Ordering::Relaxed);
    eprintln!("flood: {sent} garbage datagrams sent");
    assert!(sent > 1000, "the flood ran ({sent} datagrams)");
    assert!(stormy, "the garbage did not reach both participants");
    assert!(
        delivered,
        "only {} of {n} samples arrived during the flood",
        got.len()
    );
    assert_eq!(got, (0..n).collect::<Vec<_>>(), "every sample, in order");
    acked.expect("acknowledged during the flood");
}

/// Busy polling (`busy_poll` of a role): receive threads (threads mode) and the driver (driver
/// mode) spin on their sockets before they block. Reliable data flows both ways (samples and
/// acknowledgements), timers still run, and the participants close promptly (a spinning
/// thread notices the shutdown).
#[test]
fn busy_polling_threads_deliver_and_close() {
    tachyon_transport::testing::require_isolated_network();
    let spin = ThreadSettings {
        busy_poll: Some(Duration::from_micros(300)),
        ..ThreadSettings::default()
    };
    for (mode, domain) in [(ThreadMode::Threads, 45), (ThreadMode::Driver, 46)] {
        let roles = match mode {
            ThreadMode::Threads => ThreadRoles {
                mode,
                receive: spin.clone(),
                timers: spin.clone(),
                ..ThreadRoles::default()
            },
            _ => ThreadRoles {
                mode,
                driver: spin.clone(),
                ..ThreadRoles::default()
            },
        };
        let a = DomainParticipant::with_settings(domain, &over_udp(roles.clone())).expect("a");
        let b = DomainParticipant::with_settings(domain, &over_udp(roles)).expect("b");
        let (w, r) = common::reliable_pair::<Counter>(&a, &b, "counter");
        wait_matched(&w, &r);
        deliver_in_order(&w, &r, 200, &format!("{mode:?}"));
        drop((w, r));
        close_promptly(a, b, &format!("{mode:?}"));
    }
}

/// Writes `n` samples with `w` and checks that `r` got every one, in order.
fn deliver_in_order(w: &DataWriter<Counter>, r: &DataReader<Counter>, n: u64, what: &str) {
    for seq in 0..n {
        w.write(&Counter { id: 1, seq }).expect("write");
    }
    let got: Vec<u64> = common::take_all_written(w, r, n as usize)
        .into_iter()
        .map(|c| c.seq)
        .collect();
    assert_eq!(
        got,
        (0..n).collect::<Vec<_>>(),
        "{what}: every sample, in order"
    );
}

/// Closes both participants, which must take less than 2 s: their threads notice at once,
/// whatever they were doing (blocked, spinning, watching).
fn close_promptly(a: DomainParticipant, b: DomainParticipant, what: &str) {
    let t = Instant::now();
    a.close();
    b.close();
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "{what}: closing took {:?}",
        t.elapsed()
    );
}

/// Watching before blocking (`spin` of the receive role, on by default): with the longest
/// window a receive thread watches its socket for 10 ms after every batch. Reliable data
/// flows both ways (samples one way, acknowledgements the other), a ping-pong is answered
/// within the window, and closing interrupts a thread in the middle of its watch promptly.
#[test]
fn watching_receive_threads_deliver_and_close() {
    tachyon_transport::testing::require_isolated_network();
    let roles = ThreadRoles {
        mode: ThreadMode::Threads,
        receive: ThreadSettings {
            spin: Some(Duration::from_millis(10)),
            ..ThreadSettings::default()
        },
        ..ThreadRoles::default()
    };
    let a = DomainParticipant::with_settings(47, &over_udp(roles.clone())).expect("a");
    let b = DomainParticipant::with_settings(47, &over_udp(roles)).expect("b");
    let (w, r) = common::reliable_pair::<Counter>(&a, &b, "counter");
    let (back_w, back_r) = common::reliable_pair::<Counter>(&b, &a, "back");
    wait_matched(&w, &r);
    wait_matched(&back_w, &back_r);
    deliver_in_order(&w, &r, 200, "watching");
    // A ping-pong: each answer comes while the other side's receive thread watches.
    for seq in 0..50u64 {
        w.write(&Counter { id: 2, seq }).expect("ping");
        let ping = common::take_at_least(&r, 1);
        assert_eq!(ping.len(), 1, "one ping");
        back_w.write(&ping[0]).expect("pong");
        let pong = common::take_at_least(&back_r, 1);
        assert_eq!((pong.len(), pong[0].id, pong[0].seq), (1, 2, seq));
    }
    // It went through the sockets, not in process.
    let st = a.statistics();
    assert_eq!(st.intra.datagrams_sent, 0, "nothing in process");
    assert!(
        st.transport.datagrams_sent >= 250,
        "{} datagrams sent",
        st.transport.datagrams_sent
    );
    drop((w, r, back_w, back_r));
    close_promptly(a, b, "watching");
}

/// With no thread of the runtime to run the reader's timers (single-thread mode, `run_once`
/// never called after the match), a sample whose writer's lifespan ended is expired by the
/// take itself: a take reads the clock when the reader holds samples with a lifespan.
#[test]
fn a_take_expires_samples_whose_lifespan_ended() {
    tachyon_transport::testing::require_isolated_network();
    let p = DomainParticipant::with_settings(48, &single()).expect("participant");
    let t = p.create_topic::<Counter>("lifespan").expect("topic");
    let w = p
        .create_publisher()
        .expect("publisher")
        .create_datawriter(
            &t,
            DataWriterQos::default()
                .reliable()
                .keep_all()
                .lifespan(Duration::from_millis(50)),
        )
        .expect("writer");
    let r = p
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&t, DataReaderQos::default().reliable().keep_all())
        .expect("reader");
    let end = Instant::now() + PATIENCE;
    while w.matched_subscriptions().is_empty() || r.matched_publications().is_empty() {
        assert!(Instant::now() < end, "timed out matching");
        p.run_once(Duration::from_millis(1)).expect("run");
    }
    for seq in 0..2 {
        w.write(&Counter { id: 1, seq }).expect("write");
    }
    std::thread::sleep(Duration::from_millis(120));
    assert!(r.take(10).expect("take").is_empty(), "expired at the take");
    let mut value = Counter { id: 0, seq: 99 };
    assert!(r.take_next_sample(&mut value).expect("take").is_none());
    w.write(&Counter { id: 1, seq: 2 }).expect("write");
    let info = r
        .take_next_sample(&mut value)
        .expect("take")
        .expect("within its lifespan");
    assert!(info.valid_data);
    assert_eq!(value.seq, 2);
}
