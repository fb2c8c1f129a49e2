//! The runtime over the `Transport` trait: participants on the in-memory, fault-injecting
//! network (no sockets at all), and the per-pair choice of transport among several.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tachyon::config::{ThreadMode, ThreadRoles};
use tachyon::prelude::*;
use tachyon::{DataReaderListener, ParticipantSettings, TransportSettings};
use tachyon_transport::mem::{Faults, MemNetwork, MemTransport};
use tachyon_transport::Transport;

mod common;
use common::{wait_matched, wait_until_within, wait_writer_matches};

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Blob")]
struct Blob {
    #[key]
    id: u32,
    seq: u64,
    payload: Vec<u8>,
}

/// A participant on `net` only (`udp`: with UDP too), and its node of the network.
fn participant(domain: u32, net: &MemNetwork, udp: bool) -> (DomainParticipant, Arc<MemTransport>) {
    participant_in(domain, net, udp, ThreadMode::Driver)
}

fn participant_in(
    domain: u32,
    net: &MemNetwork,
    udp: bool,
    mode: ThreadMode,
) -> (DomainParticipant, Arc<MemTransport>) {
    let node = Arc::new(net.transport().expect("mem node"));
    let settings = ParticipantSettings {
        transports: TransportSettings {
            no_udp: !udp,
            // The in-process transport would carry every pair of this test (it is preferred
            // over the in-memory network), and the network's faults would not apply.
            no_intra: true,
            no_shm: true,
            extra: vec![Arc::clone(&node) as Arc<dyn Transport>],
        },
        threads: ThreadRoles {
            mode,
            ..ThreadRoles::default()
        },
        ..ParticipantSettings::default()
    };
    let p = DomainParticipant::with_settings(domain, &settings).expect("participant");
    (p, node)
}

fn blob(i: u64) -> Blob {
    Blob {
        id: (i % 3) as u32,
        seq: i,
        // Every fourth sample is larger than the network's datagrams: fragments.
        payload: vec![i as u8; if i % 4 == 0 { 5000 } else { 64 }],
    }
}

fn endpoints(a: &DomainParticipant, b: &DomainParticipant) -> (DataWriter<Blob>, DataReader<Blob>) {
    common::reliable_pair(a, b, "blob")
}

/// Takes from `r` until `n` samples arrived; returns them by instance, in order.
fn take_all(r: &DataReader<Blob>, n: usize) -> Vec<Blob> {
    let mut got = Vec::new();
    wait_until_within("every sample", Duration::from_secs(30), || {
        got.extend(
            r.take(usize::MAX)
                .expect("take")
                .into_iter()
                .filter_map(|s| s.data),
        );
        got.len() >= n
    });
    got
}

#[test]
fn reliable_data_crosses_a_lossy_duplicating_reordering_network_without_sockets() {
    lossy_network_run(ThreadMode::Driver);
}

#[test]
fn the_same_with_receive_threads() {
    lossy_network_run(ThreadMode::Threads);
}

fn lossy_network_run(mode: ThreadMode) {
    let net = MemNetwork::new(7);
    net.set_faults(Faults {
        loss: 0.15,
        duplicate: 0.05,
        reorder: 0.1,
    });
    let (a, a_mem) = participant_in(0, &net, false, mode);
    let (b, _) = participant_in(0, &net, false, mode);
    assert_eq!(a.participant_index(), None, "no UDP transport, no index");
    let (w, r) = endpoints(&a, &b);
    wait_matched(&w, &r);
    let n = 120u64;
    for i in 0..n {
        w.write(&blob(i)).expect("write");
    }
    w.wait_for_acknowledgments(Duration::from_secs(30))
        .expect("every sample acknowledged through the losses");
    let got = take_all(&r, n as usize);
    assert_eq!(got.len(), n as usize, "no duplicates delivered");
    for id in 0..3u32 {
        let seqs: Vec<u64> = got.iter().filter(|b| b.id == id).map(|b| b.seq).collect();
        let want: Vec<u64> = (0..n).filter(|i| i % 3 == u64::from(id)).collect();
        assert_eq!(seqs, want, "instance {id}: every sample once, in order");
    }
    assert!(got.iter().all(|b| *b == blob(b.seq)), "intact");
    let s = net.stats();
    assert!(s.lost > 0 && s.duplicated > 0 && s.reordered > 0, "{s:?}");
    // Nothing went through a socket: the in-memory node is the participant's only transport.
    let sent = a.statistics().transport.datagrams_sent;
    assert!(sent > 0);
    assert_eq!(sent, a_mem.stats().datagrams_sent);
}

#[test]
fn each_pair_uses_the_best_transport_both_sides_have() {
    tachyon_transport::testing::require_isolated_network();
    let net = MemNetwork::with_max_datagram(3, 65_000);
    // `a` and `b` share the in-memory network and UDP; `c` has UDP only.
    let (a, a_mem) = participant(61, &net, true);
    let (b, b_mem) = participant(61, &net, true);
    let c = DomainParticipant::new(61).expect("participant c");
    let (w, rb) = endpoints(&a, &b);
    let tc = c.create_topic::<Blob>("blob").expect("topic");
    let rc = c
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&tc, DataReaderQos::default().reliable().keep_all())
        .expect("reader");
    wait_writer_matches(&w, 2);
    wait_matched(&w, &rb);
    wait_matched(&w, &rc);
    // Cut the in-memory network: what `a` sends `b` waits, what it sends `c` (over UDP)
    // arrives.
    net.set_faults(Faults {
        loss: 1.0,
        ..Faults::default()
    });
    let b_before = b_mem.stats().datagrams_received;
    let n = 20u64;
    for i in 0..n {
        w.write(&blob(i)).expect("write");
    }
    assert_eq!(
        take_all(&rc, n as usize).len(),
        n as usize,
        "c got all over UDP"
    );
    assert!(
        rb.take(usize::MAX).expect("take").is_empty(),
        "b is served over the in-memory network only, which is cut"
    );
    assert!(
        net.stats().lost > 0,
        "the writer did send to b over the in-memory network"
    );
    // Heal it: the writer's repairs reach `b` through it.
    net.set_faults(Faults::default());
    assert_eq!(
        take_all(&rb, n as usize).len(),
        n as usize,
        "b got all once healed"
    );
    assert!(b_mem.stats().datagrams_received > b_before);
    assert!(a_mem.stats().datagrams_sent > 0);
    w.wait_for_acknowledgments(Duration::from_secs(20))
        .expect("both readers acknowledged");
}

#[test]
fn a_participant_needs_some_transport() {
    let settings = ParticipantSettings {
        transports: TransportSettings {
            no_udp: true,
            no_intra: true,
            no_shm: true,
            extra: Vec::new(),
        },
        ..ParticipantSettings::default()
    };
    let e = DomainParticipant::with_settings(0, &settings).expect_err("no transport");
    assert!(matches!(e, tachyon::Error::NoTransport), "{e}");
    assert!(e.to_string().contains("no_udp"), "{e}");
}

/// Records the name of the thread each DATA_AVAILABLE is called on.
struct ThreadNames(Mutex<Vec<String>>);

impl DataReaderListener<Blob> for ThreadNames {
    fn on_data_available(&self, reader: &DataReader<Blob>) {
        let _ = reader.take(usize::MAX);
        let name = std::thread::current().name().unwrap_or("").to_owned();
        self.0.lock().expect("names").push(name);
    }
}

#[test]
fn in_threads_mode_user_data_is_received_and_its_listeners_called_on_a_receive_thread() {
    tachyon_transport::testing::require_isolated_network();
    let settings = ParticipantSettings {
        threads: ThreadRoles {
            mode: ThreadMode::Threads,
            ..ThreadRoles::default()
        },
        // Over UDP (in process, a writer's thread hands the data over: `tests/intra.rs`).
        transports: TransportSettings {
            no_intra: true,
            no_shm: true,
            ..TransportSettings::default()
        },
        ..ParticipantSettings::default()
    };
    let a = DomainParticipant::with_settings(62, &settings).expect("a");
    let b = DomainParticipant::with_settings(62, &settings).expect("b");
    let (w, r) = endpoints(&a, &b);
    let names = Arc::new(ThreadNames(Mutex::new(Vec::new())));
    r.set_listener(
        Some(Arc::clone(&names) as Arc<dyn DataReaderListener<Blob>>),
        StatusMask::DATA_AVAILABLE,
    );
    wait_matched(&w, &r);
    for i in 0..10 {
        w.write(&blob(i)).expect("write");
    }
    w.wait_for_acknowledgments(Duration::from_secs(10))
        .expect("acknowledged");
    common::wait_until("a listener call", || {
        !names.0.lock().expect("names").is_empty()
    });
    let names = names.0.lock().expect("names").clone();
    // The receive thread that handled the data calls its listener, unless the timers thread
    // (which calls those of its own work and of user threads) took the news first.
    assert!(
        names.iter().any(|n| n == "tachyon-receive")
            && names
                .iter()
                .all(|n| n == "tachyon-receive" || n == "tachyon-timers"),
        "listeners ran on {names:?}"
    );
    // Closing interrupts the blocked receive threads: no datagram to self, no hang.
    let closed = Instant::now();
    drop((w, r));
    a.close();
    b.close();
    assert!(
        closed.elapsed() < Duration::from_secs(2),
        "{:?}",
        closed.elapsed()
    );
}
