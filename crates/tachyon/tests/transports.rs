//! The runtime over the `Transport` trait: participants on the in-memory, fault-injecting
//! network (no sockets at all), and the per-pair choice of transport among several.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tachyon::prelude::*;
use tachyon::{ParticipantSettings, TransportSettings};
use tachyon_transport::mem::{Faults, MemNetwork, MemTransport};
use tachyon_transport::Transport;

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Blob")]
struct Blob {
    #[key]
    id: u32,
    seq: u64,
    payload: Vec<u8>,
}

fn wait_until(what: &str, timeout: Duration, mut f: impl FnMut() -> bool) {
    let end = Instant::now() + timeout;
    while !f() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// A participant on `net` only (`udp`: with UDP too), and its node of the network.
fn participant(domain: u32, net: &MemNetwork, udp: bool) -> (DomainParticipant, Arc<MemTransport>) {
    let node = Arc::new(net.transport().expect("mem node"));
    let settings = ParticipantSettings {
        transports: TransportSettings {
            no_udp: !udp,
            extra: vec![Arc::clone(&node) as Arc<dyn Transport>],
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
    let ta = a.create_topic::<Blob>("blob").expect("topic");
    let tb = b.create_topic::<Blob>("blob").expect("topic");
    let w = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter(&ta, DataWriterQos::default().reliable().keep_all())
        .expect("writer");
    let r = b
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&tb, DataReaderQos::default().reliable().keep_all())
        .expect("reader");
    (w, r)
}

/// Takes from `r` until `n` samples arrived; returns them by instance, in order.
fn take_all(r: &DataReader<Blob>, n: usize) -> Vec<Blob> {
    let mut got = Vec::new();
    wait_until("every sample", Duration::from_secs(30), || {
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
    let net = MemNetwork::new(7);
    net.set_faults(Faults {
        loss: 0.15,
        duplicate: 0.05,
        reorder: 0.1,
    });
    let (a, a_mem) = participant(0, &net, false);
    let (b, _) = participant(0, &net, false);
    assert_eq!(a.participant_index(), 0, "no UDP transport, no index");
    let (w, r) = endpoints(&a, &b);
    wait_until("matching", Duration::from_secs(20), || {
        !w.matched_subscriptions().is_empty() && !r.matched_publications().is_empty()
    });
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
    wait_until("matching", Duration::from_secs(20), || {
        w.matched_subscriptions().len() == 2
            && !rb.matched_publications().is_empty()
            && !rc.matched_publications().is_empty()
    });
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
    assert_eq!(b_mem.stats().datagrams_received, b_before);
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
            extra: Vec::new(),
        },
        ..ParticipantSettings::default()
    };
    let e = DomainParticipant::with_settings(0, &settings).expect_err("no transport");
    assert!(matches!(e, tachyon::Error::NoTransport), "{e}");
    assert!(e.to_string().contains("no_udp"), "{e}");
}
