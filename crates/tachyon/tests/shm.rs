//! The shared-memory transport (`tachyon_transport::shm`) between real processes: this test
//! binary runs itself again as a writer or a reader (the `child` test, selected by an
//! environment variable), and kills those processes with SIGKILL while they write or take.
//! The survivors must go on, and delete what the dead left in `/dev/shm`.
//!
//! (`scripts/test.sh` also runs every test of this crate with the in-process transport off,
//! so that pairs of one process go through shared memory.)

mod common;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::ChildStdout;
use std::time::{Duration, Instant};

use common::{wait_matched, wait_until, wait_until_within, Kid, PATIENCE};
use tachyon::prelude::*;
use tachyon::{ParticipantSettings, TransportSettings};

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Stamp")]
struct Stamp {
    /// The writing process.
    pid: u32,
    n: u64,
}

const CHILD: &str = "TACHYON_SHM_TEST_CHILD";

/// Shared memory on, whatever `TACHYON_CONFIG` says; the in-process transport off when
/// `intra` is false (so that participants of this process use shared memory too).
fn settings(intra: bool) -> ParticipantSettings {
    ParticipantSettings {
        transports: TransportSettings {
            no_intra: !intra,
            ..TransportSettings::default()
        },
        ..ParticipantSettings::default()
    }
}

fn participant(domain: u32, intra: bool) -> DomainParticipant {
    tachyon_transport::testing::require_isolated_network();
    DomainParticipant::with_settings(domain, &settings(intra)).expect("participant")
}

fn writer_qos() -> DataWriterQos {
    DataWriterQos::default().reliable().keep_all()
}

fn reader_qos() -> DataReaderQos {
    DataReaderQos::default().reliable().keep_all()
}

/// Not a test of its own: the body of the processes the tests start (it does nothing when
/// run by the test harness).
#[test]
fn child() {
    let Ok(role) = std::env::var(CHILD) else {
        return;
    };
    let (role, domain) = role.split_once(':').expect("role:domain");
    let domain: u32 = domain.parse().expect("domain");
    let p = DomainParticipant::with_settings(domain, &settings(true)).expect("participant");
    let topic = p.create_topic::<Stamp>("stamps").expect("topic");
    let pid = std::process::id();
    match role {
        "writer" => {
            let w = p
                .create_publisher()
                .expect("publisher")
                .create_datawriter(&topic, writer_qos())
                .expect("writer");
            common::wait_writer_matches(&w, 1);
            println!("matched");
            // As fast as it can, until it is killed: the kill lands mid-write.
            for n in 0.. {
                w.write(&Stamp { pid, n }).expect("write");
                if n % 64 == 0 {
                    std::thread::sleep(Duration::from_micros(200));
                }
            }
        }
        "reader" => {
            let r = p
                .create_subscriber()
                .expect("subscriber")
                .create_datareader(&topic, reader_qos())
                .expect("reader");
            common::wait_reader_matches(&r, 1);
            println!("matched");
            let mut told = false;
            // Taking, until it is killed: the kill lands mid-take.
            loop {
                let got = common::take_data(&r).len();
                if got > 0 && !told {
                    println!("got {got}");
                    told = true;
                }
                std::thread::sleep(Duration::from_micros(100));
            }
        }
        other => panic!("unknown role {other}"),
    }
}

/// A child process of `role` in `domain`, once it printed that it matched.
fn spawn(role: &str, domain: u32) -> (Kid, BufReader<ChildStdout>) {
    common::spawn_child(CHILD, role, domain)
}

/// The segments in `/dev/shm` whose header names process `pid` as their owner.
fn segments_of(pid: u32) -> Vec<PathBuf> {
    let Ok(dir) = std::fs::read_dir("/dev/shm") else {
        return Vec::new();
    };
    dir.flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("tachyon-"))
        .filter(|e| {
            std::fs::read(e.path()).is_ok_and(|b| {
                b.len() >= 68 && u32::from_ne_bytes([b[64], b[65], b[66], b[67]]) == pid
            })
        })
        .map(|e| e.path())
        .collect()
}

/// Kills `child` with SIGKILL, and waits until a survivor deleted its segment.
fn kill_and_expect_cleanup(mut child: Kid) {
    let pid = child.0.id();
    assert_eq!(segments_of(pid).len(), 1, "the child's segment exists");
    child.0.kill().expect("SIGKILL");
    child.0.wait().expect("reaped");
    wait_until_within(
        "a survivor deleting the killed process's segment",
        Duration::from_secs(15),
        || segments_of(pid).is_empty(),
    );
}

/// The samples of one writing process arrive in order, without a gap.
fn check_in_order(got: &[Stamp], pid: u32) -> usize {
    let ns: Vec<u64> = got.iter().filter(|s| s.pid == pid).map(|s| s.n).collect();
    for (i, n) in ns.iter().enumerate() {
        assert_eq!(
            *n, i as u64,
            "samples of writer {pid} out of order or missing"
        );
    }
    ns.len()
}

/// Writers in other processes, killed one after another at different points of their
/// stream: the reader keeps receiving from the next one, in order, and deletes each dead
/// writer's segment.
#[test]
fn writers_killed_mid_write_never_block_their_reader() {
    let p = participant(81, true);
    let topic = p.create_topic::<Stamp>("stamps").expect("topic");
    let r = p
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&topic, reader_qos())
        .expect("reader");
    for (round, at) in [20usize, 300, 1500].into_iter().enumerate() {
        let (child, _out) = spawn("writer", 81);
        let pid = child.0.id();
        let mut got = Vec::new();
        wait_until(&format!("{at} samples of writer {round}"), || {
            got.extend(common::take_data(&r));
            got.iter().filter(|s| s.pid == pid).count() >= at
        });
        kill_and_expect_cleanup(child);
        got.extend(common::take_data(&r));
        assert!(check_in_order(&got, pid) >= at);
    }
    let s = p.statistics().shm;
    assert!(s.datagrams_received > 1000, "through shared memory: {s:?}");
    assert_eq!(s.malformed, 0);
}

/// A reader in another process killed while it takes: the writer's writes never wait for
/// it, a reader of another participant keeps receiving everything in order (through shared
/// memory too), and the writer deletes the dead reader's segment.
#[test]
fn a_reader_killed_mid_take_never_blocks_the_writer() {
    let p = participant(82, false);
    let other = participant(82, false);
    let w = p
        .create_publisher()
        .expect("publisher")
        .create_datawriter(
            &p.create_topic::<Stamp>("stamps").expect("topic"),
            writer_qos(),
        )
        .expect("writer");
    let r = other
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(
            &other.create_topic::<Stamp>("stamps").expect("topic"),
            reader_qos(),
        )
        .expect("reader");
    wait_matched(&w, &r);
    let (child, mut out) = spawn("reader", 82);
    common::wait_writer_matches(&w, 2);
    let pid = std::process::id();
    let mut n = 0u64;
    let mut slowest = Duration::ZERO;
    let mut write = |n: &mut u64| {
        let t = Instant::now();
        w.write(&Stamp { pid, n: *n }).expect("write");
        slowest = slowest.max(t.elapsed());
        *n += 1;
    };
    // Until the child has taken some, then kill it while it takes.
    let mut line = String::new();
    while !line.contains("got") {
        for _ in 0..20 {
            write(&mut n);
        }
        line.clear();
        out.read_line(&mut line).expect("child output");
    }
    kill_and_expect_cleanup(child);
    for _ in 0..500 {
        write(&mut n);
    }
    let mut got = Vec::new();
    wait_until("every sample at the surviving reader", || {
        got.extend(common::take_data(&r));
        got.len() as u64 == n
    });
    check_in_order(&got, pid);
    assert!(
        slowest < PATIENCE / 10,
        "a write waited {slowest:?} for a dead reader"
    );
    let s = p.statistics().shm;
    assert!(s.datagrams_sent > 500, "through shared memory: {s:?}");
}

/// Eight readers in eight participants of this process (the in-process transport off), one
/// writer: every reader gets every sample, in order, through shared memory.
#[test]
fn eight_readers_on_one_writer() {
    let p = participant(83, false);
    let w = p
        .create_publisher()
        .expect("publisher")
        .create_datawriter(
            &p.create_topic::<Stamp>("stamps").expect("topic"),
            writer_qos(),
        )
        .expect("writer");
    let readers: Vec<(DomainParticipant, DataReader<Stamp>)> = (0..8)
        .map(|_| {
            let q = participant(83, false);
            let r = q
                .create_subscriber()
                .expect("subscriber")
                .create_datareader(
                    &q.create_topic::<Stamp>("stamps").expect("topic"),
                    reader_qos(),
                )
                .expect("reader");
            (q, r)
        })
        .collect();
    common::wait_writer_matches(&w, 8);
    for (_, r) in &readers {
        common::wait_reader_matches(r, 1);
    }
    let n = 300u64;
    for i in 0..n {
        w.write(&Stamp { pid: 1, n: i }).expect("write");
    }
    for (q, r) in &readers {
        let got = common::take_at_least(r, n as usize);
        assert_eq!(check_in_order(&got, 1), n as usize);
        // Through shared memory (a datagram may carry several samples: repairs after a full
        // ring are packed).
        assert!(q.statistics().shm.datagrams_received > 0);
    }
    assert_eq!(p.statistics().intra.datagrams_sent, 0);
}

/// A writer whose segment has a channel for one reader participant only: the second
/// reader participant of the host is reached over UDP instead (the way it announced next),
/// and both get every sample, in order, best effort as reliable.
#[test]
fn a_reader_shared_memory_cannot_reach_gets_its_samples_over_udp() {
    let mut s = settings(false);
    s.shm.channels = 1;
    tachyon_transport::testing::require_isolated_network();
    let p = DomainParticipant::with_settings(84, &s).expect("participant");
    let publisher = p.create_publisher().expect("publisher");
    let topic = p.create_topic::<Stamp>("stamps").expect("topic");
    let reliable = publisher
        .create_datawriter(&topic, writer_qos())
        .expect("writer");
    let best_effort_topic = p.create_topic::<Stamp>("stamps-be").expect("topic");
    let best_effort = publisher
        .create_datawriter(
            &best_effort_topic,
            DataWriterQos::default().best_effort().keep_all(),
        )
        .expect("writer");
    let readers: Vec<(DomainParticipant, DataReader<Stamp>, DataReader<Stamp>)> = (0..2)
        .map(|_| {
            let q = participant(84, false);
            let sub = q.create_subscriber().expect("subscriber");
            let r = sub
                .create_datareader(
                    &q.create_topic::<Stamp>("stamps").expect("topic"),
                    reader_qos(),
                )
                .expect("reader");
            let b = sub
                .create_datareader(
                    &q.create_topic::<Stamp>("stamps-be").expect("topic"),
                    DataReaderQos::default().best_effort().keep_all(),
                )
                .expect("reader");
            (q, r, b)
        })
        .collect();
    common::wait_writer_matches(&reliable, 2);
    common::wait_writer_matches(&best_effort, 2);
    for (_, r, b) in &readers {
        common::wait_reader_matches(r, 1);
        common::wait_reader_matches(b, 1);
    }
    let n = 200u64;
    for i in 0..n {
        reliable.write(&Stamp { pid: 1, n: i }).expect("write");
        best_effort.write(&Stamp { pid: 2, n: i }).expect("write");
        if i % 20 == 19 {
            // Best effort: no faster than the readers take.
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
    for (_, r, b) in &readers {
        let got = common::take_at_least(r, n as usize);
        assert_eq!(check_in_order(&got, 1), n as usize);
        let got = common::take_at_least(b, n as usize);
        assert_eq!(
            check_in_order(&got, 2),
            n as usize,
            "best effort lost nothing"
        );
    }
    let via_shm: Vec<u64> = readers
        .iter()
        .map(|(q, _, _)| q.statistics().shm.datagrams_received)
        .collect();
    assert_eq!(
        via_shm.iter().filter(|&&d| d > 0).count(),
        1,
        "one reader participant through shared memory, the other not: {via_shm:?}"
    );
    let (udp, shm) = (p.statistics().transport, p.statistics().shm);
    assert!(
        udp.datagrams_sent - shm.datagrams_sent >= n,
        "the other over UDP: {udp:?}"
    );
    assert_eq!(shm.send_drops, 0, "nothing dropped: {shm:?}");
    assert!(shm.refused >= n, "refused, and sent over UDP: {shm:?}");
}

/// `[shm]` numbers that give no usable segment refuse the participant, naming the key; a
/// directory that cannot hold a segment only leaves shared memory out (UDP still works).
#[test]
fn bad_shared_memory_settings() {
    tachyon_transport::testing::require_isolated_network();
    let mut s = settings(true);
    s.shm.ring = 12;
    let e = DomainParticipant::with_settings(84, &s).expect_err("refused");
    assert!(e.to_string().contains("ring length 12"), "{e}");
    let mut s = settings(true);
    s.shm.dir = "/nonexistent/shm".into();
    let p = DomainParticipant::with_settings(84, &s).expect("a participant without shared memory");
    assert_eq!(
        p.statistics().shm,
        tachyon::statistics::TransportStats::default()
    );
}

/// Takes everything it is told of, and while `stall` is set keeps the thread that called it
/// (the reader participant's receive thread) until it is cleared: a reader as slow as can
/// be.
struct Stalling {
    stall: std::sync::Arc<std::sync::atomic::AtomicBool>,
    got: std::sync::Mutex<Vec<Stamp>>,
}

impl DataReaderListener<Stamp> for Stalling {
    fn on_data_available(&self, reader: &DataReader<Stamp>) {
        if let Ok(samples) = reader.take(usize::MAX) {
            if let Ok(mut got) = self.got.lock() {
                got.extend(samples.into_iter().filter_map(|s| s.data));
            }
        }
        let deadline = Instant::now() + PATIENCE;
        while self.stall.load(std::sync::atomic::Ordering::Relaxed) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

/// A reader of another participant that stops taking altogether (its receive thread held in
/// a listener) holds a writer back only as far as the writer's QoS says: a KEEP_LAST writer
/// never waits for it; a KEEP_ALL writer with its history full waits `max_blocking_time`,
/// then reports `Timeout`. Once the reader goes on, it has every sample the KEEP_ALL writer
/// wrote, in order, and the KEEP_LAST writer's newest.
#[test]
fn a_slow_reader_holds_a_writer_back_only_as_its_qos_says() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    let p = participant(84, false);
    let q = participant(84, false);
    let blocking = Duration::from_millis(300);
    let mut all_qos = DataWriterQos::default().reliable().keep_all();
    all_qos.reliability.max_blocking_time = blocking;
    all_qos.resource_limits = tachyon::qos::ResourceLimits {
        max_samples: Some(16),
        ..Default::default()
    };
    let publisher = p.create_publisher().expect("publisher");
    let w_all = publisher
        .create_datawriter(&p.create_topic::<Stamp>("all").expect("topic"), all_qos)
        .expect("writer");
    let w_last = publisher
        .create_datawriter(
            &p.create_topic::<Stamp>("last").expect("topic"),
            DataWriterQos::default().reliable().keep_last(1),
        )
        .expect("writer");
    let stall = Arc::new(AtomicBool::new(true));
    let listener = Arc::new(Stalling {
        stall: Arc::clone(&stall),
        got: Mutex::new(Vec::new()),
    });
    let subscriber = q.create_subscriber().expect("subscriber");
    let r_all = subscriber
        .create_datareader_with_listener(
            &q.create_topic::<Stamp>("all").expect("topic"),
            reader_qos(),
            Arc::clone(&listener) as Arc<dyn DataReaderListener<Stamp>>,
            StatusMask::DATA_AVAILABLE,
        )
        .expect("reader");
    let r_last = subscriber
        .create_datareader(
            &q.create_topic::<Stamp>("last").expect("topic"),
            reader_qos(),
        )
        .expect("reader");
    wait_matched(&w_all, &r_all);
    wait_matched(&w_last, &r_last);
    // The first sample stalls the reader's participant.
    w_all.write(&Stamp { pid: 0, n: 0 }).expect("write");
    wait_until("the reader to stall", || {
        listener.got.lock().map(|g| !g.is_empty()).unwrap_or(false)
    });
    let mut slowest = Duration::ZERO;
    for n in 0..2_000 {
        let t = Instant::now();
        w_last.write(&Stamp { pid: 0, n }).expect("KEEP_LAST write");
        slowest = slowest.max(t.elapsed());
    }
    assert!(
        slowest < blocking / 3,
        "a KEEP_LAST write waited {slowest:?} for a stalled reader"
    );
    let mut written = 1;
    let waited = loop {
        let t = Instant::now();
        match w_all.write(&Stamp { pid: 0, n: written }) {
            Ok(()) => written += 1,
            Err(Error::Timeout) => break t.elapsed(),
            Err(e) => panic!("KEEP_ALL write: {e}"),
        }
        assert!(written < 10_000, "the KEEP_ALL writer never waited");
    };
    assert!(
        written >= 16,
        "{written} written before the history was full"
    );
    assert!(
        waited >= blocking.mul_f64(0.9) && waited < blocking + PATIENCE / 5,
        "the full KEEP_ALL writer waited {waited:?} (max_blocking_time {blocking:?})"
    );
    stall.store(false, Ordering::Relaxed);
    wait_until("the KEEP_ALL samples", || {
        listener
            .got
            .lock()
            .map(|g| g.len() as u64 >= written)
            .unwrap_or(false)
    });
    let got: Vec<u64> = listener
        .got
        .lock()
        .expect("got")
        .iter()
        .map(|s| s.n)
        .collect();
    assert_eq!(
        got,
        (0..written).collect::<Vec<_>>(),
        "every sample, in order"
    );
    let mut last = Vec::new();
    wait_until("the KEEP_LAST writer's newest", || {
        last.extend(common::take_data(&r_last).into_iter().map(|s| s.n));
        last.last() == Some(&1_999)
    });
}
