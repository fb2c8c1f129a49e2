//! Networked tests of the UDP transport. They open real sockets, so each one first checks that
//! it runs in a network namespace whose only interface is `lo` (scripts/test.sh sets one up with
//! `ip link set lo multicast on` and a 224.0.0.0/4 route on lo). By hand:
//!
//! ```sh
//! unshare -n bash -c 'ip link set lo up && ip link set lo multicast on && \
//!   ip route add 224.0.0.0/4 dev lo && cargo test -p tachyon-transport --offline'
//! ```
//!
//! Every test uses its own domain id, so tests running in parallel never share a port.
//! `lo_without_multicast_flag_falls_back_to_unicast` re-runs this binary in a nested namespace
//! whose `lo` lacks the MULTICAST flag (via `unshare -n`, which needs the root of the outer
//! namespace), so both multicast behaviours are tested in one run.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::process::Command;
use std::time::{Duration, Instant};
use tachyon_transport::testing::require_isolated_network;
use tachyon_transport::{
    list_interfaces, MulticastMode, RecvBatch, SocketId, TransportError, UdpConfig, UdpTransport,
};
use tachyon_wire::Locator;

fn open(domain: u32, config: &UdpConfig) -> UdpTransport {
    UdpTransport::open(domain, config)
        .unwrap_or_else(|e| panic!("open domain {domain} failed: {e}"))
}

fn unicast_only() -> UdpConfig {
    UdpConfig {
        multicast: MulticastMode::Disabled,
        ..UdpConfig::default()
    }
}

fn lo_has_multicast_flag() -> bool {
    list_interfaces()
        .unwrap()
        .iter()
        .any(|i| i.name == "lo" && i.flags.multicast)
}

fn require_lo_multicast() {
    assert!(
        lo_has_multicast_flag(),
        "this test needs `ip link set lo multicast on` and `ip route add 224.0.0.0/4 dev lo` \
         in its namespace: use scripts/test.sh"
    );
}

fn udp(addr: Ipv4Addr, port: u16) -> Locator {
    Locator::udp(SocketAddr::V4(SocketAddrV4::new(addr, port)))
}

fn lo(port: u16) -> Locator {
    udp(Ipv4Addr::LOCALHOST, port)
}

/// Receive until `want` datagrams are in `out` or two seconds pass.
fn recv_n(
    t: &UdpTransport,
    id: SocketId,
    batch: &mut RecvBatch,
    want: usize,
) -> Vec<(Locator, Vec<u8>)> {
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut out = Vec::new();
    while out.len() < want && Instant::now() < deadline {
        if t.recv_batch(id, batch).unwrap() == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        out.extend(batch.iter().map(|(l, b)| (*l, b.to_vec())));
    }
    out
}

#[test]
fn two_transports_get_different_indices_and_consistent_ports() {
    require_isolated_network();
    let a = open(10, &UdpConfig::default());
    let b = open(10, &UdpConfig::default());
    assert_eq!(
        (a.participant_index(), b.participant_index()),
        (Some(0), Some(1))
    );
    // domain 10: PB + DG·10 = 9900.
    for (t, meta, user) in [(&a, 9910, 9911), (&b, 9912, 9913)] {
        assert_eq!(t.domain_id(), 10);
        assert_eq!(t.interface().name, "lo");
        assert_eq!(t.interface().address, Ipv4Addr::LOCALHOST);
        assert!(t.interface().loopback);
        assert_eq!(t.port(SocketId::MetaUnicast), Some(meta));
        assert_eq!(t.port(SocketId::UserUnicast), Some(user));
        assert_eq!(t.metatraffic_unicast_locators(), [lo(meta)]);
        assert_eq!(t.default_unicast_locators(), [lo(user)]);
        assert_eq!(t.uses_multicast(), lo_has_multicast_flag());
        if t.uses_multicast() {
            let group = Ipv4Addr::new(239, 255, 0, 1);
            assert_eq!(t.metatraffic_multicast_locators(), [udp(group, 9900)]);
            assert_eq!(t.default_multicast_locators(), [udp(group, 9901)]);
            assert_eq!(t.spdp_destinations(), [udp(group, 9900)]);
            assert_eq!(t.port(SocketId::MetaMulticast), Some(9900));
            assert_eq!(t.port(SocketId::UserMulticast), Some(9901));
            let ids: Vec<SocketId> = t.sockets().iter().map(|s| s.0).collect();
            assert_eq!(
                ids,
                SocketId::ALL[..4],
                "no critical socket unless configured"
            );
        }
    }
    let fds: Vec<_> = a
        .sockets()
        .iter()
        .chain(&b.sockets())
        .map(|s| s.1)
        .collect();
    let mut unique = fds.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), fds.len(), "every socket has its own fd");
}

#[test]
fn unicast_datagram_arrives_with_source_and_bytes() {
    require_isolated_network();
    let a = open(11, &unicast_only());
    let b = open(11, &unicast_only());
    let mut batch = RecvBatch::new(8, 1500);

    a.send_to(&b.default_unicast_locators()[0], b"user data", 3)
        .unwrap();
    let got = recv_n(&b, SocketId::UserUnicast, &mut batch, 1);
    // From a's address, through the socket connected to b (an ephemeral port).
    let from_a = a.default_unicast_locators()[0];
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].1, b"user data");
    assert_eq!(got[0].0.address, from_a.address);
    assert_ne!(got[0].0.port, from_a.port);

    a.send_meta_to(&b.metatraffic_unicast_locators()[0], b"discovery", 0)
        .unwrap();
    let got = recv_n(&b, SocketId::MetaUnicast, &mut batch, 1);
    assert_eq!(
        got,
        vec![(a.metatraffic_unicast_locators()[0], b"discovery".to_vec())]
    );

    let (sa, sb) = (a.stats(), b.stats());
    assert_eq!((sa.datagrams_sent, sa.bytes_sent), (2, 18));
    assert_eq!((sb.datagrams_received, sb.bytes_received), (2, 18));
    assert_eq!(b.recv_batch(SocketId::UserUnicast, &mut batch).unwrap(), 0);
    assert!(batch.is_empty(), "WouldBlock leaves an empty batch");
}

#[test]
fn user_data_leaves_from_one_connected_socket_per_destination_unless_turned_off() {
    require_isolated_network();
    let a = open(40, &unicast_only());
    let b = open(40, &unicast_only());
    let to_b = b.default_unicast_locators()[0];
    let mut batch = RecvBatch::new(8, 1500);
    for _ in 0..3 {
        a.send_to(&to_b, b"x", 0).unwrap();
    }
    let got = recv_n(&b, SocketId::UserUnicast, &mut batch, 3);
    assert_eq!(got.len(), 3);
    assert!(
        got.iter().all(|(from, _)| *from == got[0].0),
        "one socket: {got:?}"
    );
    assert_ne!(got[0].0, a.default_unicast_locators()[0]);

    // Turned off: from the user-data socket, as discovery always is.
    let off = open(
        40,
        &UdpConfig {
            connected_destinations: 0,
            ..unicast_only()
        },
    );
    off.send_to(&to_b, b"y", 0).unwrap();
    let got = recv_n(&b, SocketId::UserUnicast, &mut batch, 1);
    assert_eq!(
        got,
        vec![(off.default_unicast_locators()[0], b"y".to_vec())]
    );
}

#[test]
fn a_blocked_receive_gets_a_datagram_then_returns_when_interrupted() {
    require_isolated_network();
    let a = std::sync::Arc::new(open(43, &unicast_only()));
    let b = open(43, &unicast_only());
    let rx = std::sync::Arc::clone(&a);
    // A fresh batch asks for one datagram at a time when it blocks: one `recvfrom`.
    let t = std::thread::spawn(move || {
        let mut batch = RecvBatch::new(4, 64);
        let first = rx.recv_batch_wait(SocketId::UserUnicast, &mut batch);
        let got: Vec<_> = batch.iter().map(|(l, d)| (*l, d.to_vec())).collect();
        let after = rx.recv_batch_wait(SocketId::UserUnicast, &mut batch);
        (first.unwrap(), got, after.unwrap())
    });
    std::thread::sleep(Duration::from_millis(50));
    b.send_to(&a.default_unicast_locators()[0], b"wake", 0)
        .unwrap();
    std::thread::sleep(Duration::from_millis(50));
    a.interrupt_receivers();
    let (first, got, after) = t.join().unwrap();
    assert_eq!(first, 1);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].1, b"wake");
    assert_eq!(got[0].0.address, b.default_unicast_locators()[0].address);
    assert_eq!(after, 0, "interrupted");
}

#[test]
fn a_destination_gone_away_is_sent_to_without_errors() {
    require_isolated_network();
    let a = open(41, &unicast_only());
    // A port nobody listens on any more: the kernel answers ICMP port unreachable, which a
    // connected socket reports at its next send; that datagram goes unconnected.
    let gone = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = gone.local_addr().unwrap().port();
    drop(gone);
    for _ in 0..5 {
        a.send_to(&lo(port), b"anyone?", 0).unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
    let s = a.stats();
    assert_eq!((s.datagrams_sent, s.send_errors), (5, 0));
}

#[test]
fn multicast_on_lo_reaches_every_transports_multicast_sockets() {
    require_isolated_network();
    require_lo_multicast();
    let a = open(12, &UdpConfig::default());
    let b = open(12, &UdpConfig::default());
    assert!(a.uses_multicast() && b.uses_multicast());
    let mut batch = RecvBatch::new(8, 1500);

    a.send_meta_to_many(a.spdp_destinations(), b"spdp", 0)
        .unwrap();
    for t in [&a, &b] {
        let got = recv_n(t, SocketId::MetaMulticast, &mut batch, 1);
        assert_eq!(
            got,
            vec![(a.metatraffic_unicast_locators()[0], b"spdp".to_vec())]
        );
    }
    b.send_to(&b.default_multicast_locators()[0], b"user mc", 0)
        .unwrap();
    for t in [&a, &b] {
        let got = recv_n(t, SocketId::UserMulticast, &mut batch, 1);
        assert_eq!(
            got,
            vec![(b.default_unicast_locators()[0], b"user mc".to_vec())]
        );
    }
    // Nothing leaked onto the other port.
    for t in [&a, &b] {
        assert_eq!(
            t.recv_batch(SocketId::MetaMulticast, &mut batch).unwrap(),
            0
        );
    }
}

#[test]
fn send_to_many_reaches_three_receivers_in_one_call() {
    require_isolated_network();
    let sender = open(13, &unicast_only());
    let receivers: Vec<_> = (0..3).map(|_| open(13, &unicast_only())).collect();
    let mut dests: Vec<Locator> = receivers
        .iter()
        .map(|r| r.default_unicast_locators()[0])
        .collect();
    dests.insert(
        1,
        Locator {
            kind: Locator::KIND_FASTDDS_SHM,
            ..dests[0]
        },
    );
    dests.push(Locator::udp("[::1]:7411".parse().unwrap()));

    sender.send_to_many(&dests, b"one datagram", 2).unwrap();
    let mut batch = RecvBatch::new(4, 1500);
    for r in &receivers {
        let got = recv_n(r, SocketId::UserUnicast, &mut batch, 1);
        assert_eq!(
            got,
            vec![(
                sender.default_unicast_locators()[0],
                b"one datagram".to_vec()
            )]
        );
    }
    let s = sender.stats();
    assert_eq!((s.datagrams_sent, s.bytes_sent), (3, 36));
    assert_eq!((s.skipped_locators, s.send_drops, s.send_errors), (2, 0, 0));
}

#[test]
fn send_to_many_handles_more_destinations_than_one_sendmmsg_chunk() {
    require_isolated_network();
    let sender = open(18, &unicast_only());
    let receiver = open(18, &unicast_only());
    let dest = receiver.default_unicast_locators()[0];
    // 150 copies to one socket: three sendmmsg chunks of at most 64.
    let dests = vec![dest; 150];
    sender.send_to_many(&dests, b"x", 0).unwrap();
    let mut batch = RecvBatch::new(200, 64);
    let got = recv_n(&receiver, SocketId::UserUnicast, &mut batch, 150);
    assert_eq!(got.len(), 150);
    assert_eq!(sender.stats().datagrams_sent, 150);
}

#[test]
fn recv_batch_takes_more_datagrams_than_one_recvmmsg_chunk_in_order() {
    require_isolated_network();
    let a = open(19, &unicast_only());
    let b = open(19, &unicast_only());
    let dest = b.default_unicast_locators()[0];
    for i in 0..40u8 {
        a.send_to(&dest, &[i; 3], 0).unwrap();
    }
    let mut batch = RecvBatch::new(64, 16);
    assert_eq!(b.recv_batch(SocketId::UserUnicast, &mut batch).unwrap(), 40);
    for i in 0..40u8 {
        assert_eq!(batch.datagram(usize::from(i)).1, [i; 3]);
    }
    // A batch smaller than the queue takes what fits; the rest waits for the next call.
    for i in 0..5u8 {
        a.send_to(&dest, &[i], 0).unwrap();
    }
    let mut small = RecvBatch::new(2, 16);
    assert_eq!(b.recv_batch(SocketId::UserUnicast, &mut small).unwrap(), 2);
    assert_eq!(b.recv_batch(SocketId::UserUnicast, &mut small).unwrap(), 2);
    assert_eq!(b.recv_batch(SocketId::UserUnicast, &mut small).unwrap(), 1);
    assert_eq!(small.datagram(0).1, [4]);
}

#[test]
fn without_multicast_and_peers_spdp_goes_to_the_local_host_on_indices_0_to_9() {
    require_isolated_network();
    let a = open(14, &unicast_only());
    let b = open(14, &unicast_only());
    // domain 14: 7400 + 3500 = 10900; metatraffic unicast 10910 + 2·index.
    let want: Vec<Locator> = (0..=9).map(|i| lo(10910 + 2 * i)).collect();
    assert_eq!(b.spdp_destinations(), want);
    assert!(!b.uses_multicast());
    assert!(b.metatraffic_multicast_locators().is_empty());
    assert!(b.default_multicast_locators().is_empty());
    let ids: Vec<SocketId> = b.sockets().iter().map(|s| s.0).collect();
    assert_eq!(ids, [SocketId::MetaUnicast, SocketId::UserUnicast]);
    let mut batch = RecvBatch::new(4, 1500);
    let err = b
        .recv_batch(SocketId::MetaMulticast, &mut batch)
        .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::NotFound);

    // Announcing to every destination reaches `a` (nobody listens on the other ports: the
    // kernel drops those, which is not an error on an unconnected socket).
    b.send_meta_to_many(b.spdp_destinations(), b"spdp", 0)
        .unwrap();
    let got = recv_n(&a, SocketId::MetaUnicast, &mut batch, 1);
    assert_eq!(
        got,
        vec![(b.metatraffic_unicast_locators()[0], b"spdp".to_vec())]
    );
    assert_eq!(b.stats().datagrams_sent, 10);
}

#[test]
fn datagram_larger_than_the_slot_is_counted_as_truncated_not_handed_out() {
    require_isolated_network();
    let a = open(15, &unicast_only());
    let b = open(15, &unicast_only());
    let dest = b.default_unicast_locators()[0];
    a.send_to(&dest, &[7; 200], 0).unwrap();
    a.send_to(&dest, &[8; 100], 0).unwrap();
    a.send_to(&dest, &[9; 50], 0).unwrap();
    let mut batch = RecvBatch::new(4, 100);
    let got = recv_n(&b, SocketId::UserUnicast, &mut batch, 2);
    let lens: Vec<usize> = got.iter().map(|(_, d)| d.len()).collect();
    assert_eq!(
        lens,
        [100, 50],
        "exactly slot-sized fits, larger is dropped"
    );
    assert_eq!(got[0].1, [8; 100]);
    let s = b.stats();
    assert_eq!(
        (s.truncated, s.datagrams_received, s.bytes_received),
        (1, 2, 150)
    );
}

#[test]
fn explicit_participant_index_already_taken_is_an_error_naming_the_port() {
    require_isolated_network();
    let cfg = UdpConfig {
        participant_index: Some(3),
        ..unicast_only()
    };
    let a = open(16, &cfg);
    assert_eq!(a.participant_index(), Some(3));
    // domain 16: 7400 + 4000 = 11400; index 3 metatraffic unicast = 11416.
    assert_eq!(a.port(SocketId::MetaUnicast), Some(11416));
    let err = UdpTransport::open(16, &cfg).unwrap_err();
    assert!(
        matches!(
            err,
            TransportError::ParticipantIndexTaken {
                index: 3,
                domain_id: 16,
                port: 11416
            }
        ),
        "{err}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("11416") && msg.contains("participant index 3"),
        "{msg}"
    );
}

#[test]
fn with_every_automatic_index_taken_the_ports_are_the_kernels() {
    require_isolated_network();
    let cfg = UdpConfig {
        max_auto_participant_index: 1,
        ..unicast_only()
    };
    let a = open(17, &cfg);
    let b = open(17, &cfg);
    // A third participant on the host: no index, ports of the kernel's choosing (not the
    // spec's for any index), announced in its locators; it still sends SPDP to the indexed
    // ports of its peers.
    let c = UdpTransport::open(17, &cfg).expect("a third participant opens");
    assert_eq!(
        (
            a.participant_index(),
            b.participant_index(),
            c.participant_index()
        ),
        (Some(0), Some(1), None)
    );
    let meta = c.port(SocketId::MetaUnicast).expect("metatraffic port");
    let user = c.port(SocketId::UserUnicast).expect("user-data port");
    assert!(![11660, 11661, 11662, 11663].contains(&meta), "{meta}");
    assert_ne!(meta, user);
    assert!(c
        .metatraffic_unicast_locators()
        .iter()
        .any(|l| l.port == u32::from(meta)));
    assert!(!c.spdp_destinations().is_empty());
    // The index is free again once its holder is gone.
    drop(b);
    assert_eq!(open(17, &cfg).participant_index(), Some(1));
}

#[test]
fn user_port_taken_by_another_program_skips_the_index() {
    require_isolated_network();
    // A foreign socket on index 0's user-data port (domain 20: 12400 + 11).
    let _squatter = std::net::UdpSocket::bind("127.0.0.1:12411").unwrap();
    let t = open(20, &unicast_only());
    assert_eq!(t.participant_index(), Some(1));
    assert_eq!(t.port(SocketId::MetaUnicast), Some(12412));
}

#[test]
fn configured_interface_that_does_not_exist_lists_the_existing_ones() {
    require_isolated_network();
    let cfg = UdpConfig {
        interface: Some("eth7".into()),
        ..UdpConfig::default()
    };
    let err = UdpTransport::open(21, &cfg).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(err, TransportError::InterfaceNotFound { .. }),
        "{msg}"
    );
    assert!(
        msg.contains("\"eth7\"") && msg.contains("lo (127.0.0.1, up, loopback"),
        "{msg}"
    );
    let by_addr = UdpConfig {
        interface: Some("127.0.0.1".into()),
        ..unicast_only()
    };
    assert_eq!(open(21, &by_addr).interface().name, "lo");
}

#[test]
fn priority_is_set_on_the_sending_socket() {
    require_isolated_network();
    // Unconnected: every datagram from the user-data socket.
    let unconnected = UdpConfig {
        connected_destinations: 0,
        ..unicast_only()
    };
    let a = open(22, &unconnected);
    let b = open(22, &unicast_only());
    a.send_to(&b.default_unicast_locators()[0], b"p", 5)
        .unwrap();
    let tos = |id| {
        let fd = a.socket_as_fd(id).unwrap();
        socket2::SockRef::from(&fd).tos().unwrap()
    };
    assert_eq!(tos(SocketId::UserUnicast), 0xa0, "DSCP CS5");
    assert_eq!(
        tos(SocketId::MetaUnicast),
        0,
        "the other socket is untouched"
    );
    a.send_meta_to(&b.metatraffic_unicast_locators()[0], b"p", 9)
        .unwrap();
    assert_eq!(tos(SocketId::MetaUnicast), 0xe0, "DSCP CS7");
    assert_eq!(b.stats().datagrams_received, 0, "nothing read yet");
}

/// The TOS byte a datagram arrived with, read with `IP_RECVTOS`.
fn received_tos(socket: &std::net::UdpSocket) -> u8 {
    use std::os::fd::AsRawFd;
    let fd = socket.as_raw_fd();
    let on: libc::c_int = 1;
    // SAFETY: a valid fd and an int option of the size given.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_IP,
            libc::IP_RECVTOS,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    assert_eq!(r, 0, "IP_RECVTOS");
    socket
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let mut data = [0u8; 64];
    let mut control = [0u64; 16];
    let mut iov = libc::iovec {
        iov_base: data.as_mut_ptr().cast(),
        iov_len: data.len(),
    };
    // SAFETY: zeroed msghdr is valid; its pointers are set to live buffers below.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: msg points at buffers that outlive the call.
    let n = unsafe { libc::recvmsg(fd, &mut msg, 0) };
    assert!(n > 0, "no datagram: {}", io::Error::last_os_error());
    // SAFETY: walking the control messages the kernel wrote into `control`.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::IPPROTO_IP && (*c).cmsg_type == libc::IP_TOS {
                return *libc::CMSG_DATA(c);
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    panic!("no IP_TOS control message");
}

#[test]
fn priority_is_set_on_the_connected_socket_too() {
    require_isolated_network();
    let a = open(42, &unicast_only());
    let rx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = lo(rx.local_addr().unwrap().port());
    a.send_to(&to, b"p", 5).unwrap();
    assert_eq!(received_tos(&rx), 0xa0, "DSCP CS5");
    a.send_to(&to, b"p", 0).unwrap();
    assert_eq!(received_tos(&rx), 0, "back to best effort");
}

#[test]
fn auto_mode_uses_multicast_exactly_when_lo_has_the_flag() {
    require_isolated_network();
    let t = open(23, &UdpConfig::default());
    assert_eq!(t.uses_multicast(), lo_has_multicast_flag());
    assert_eq!(t.interface().multicast, lo_has_multicast_flag());
}

/// Runs `nested_lo_without_multicast` in a nested namespace whose `lo` is up without the
/// MULTICAST flag, so Auto mode's unicast fallback is tested whatever the outer `lo` has.
#[test]
fn lo_without_multicast_flag_falls_back_to_unicast() {
    require_isolated_network();
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("unshare")
        .args(["-n", "sh", "-c"])
        .arg("ip link set lo up && exec \"$0\" --exact nested_lo_without_multicast --nocapture --test-threads=1")
        .arg(&exe)
        .env("TACHYON_NESTED_NETNS", "1")
        .output()
        .expect("run `unshare -n` (util-linux) for the nested namespace");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "nested namespace run failed ({}); needs root in the outer namespace\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
}

/// The body of `lo_without_multicast_flag_falls_back_to_unicast`; does nothing unless run
/// by it (TACHYON_NESTED_NETNS=1).
#[test]
fn nested_lo_without_multicast() {
    if std::env::var_os("TACHYON_NESTED_NETNS").is_none() {
        return;
    }
    require_isolated_network();
    assert!(
        !lo_has_multicast_flag(),
        "nested namespace: lo must lack MULTICAST"
    );
    let a = open(0, &UdpConfig::default());
    let b = open(0, &UdpConfig::default());
    for t in [&a, &b] {
        assert!(!t.uses_multicast());
        assert!(!t.interface().multicast);
        assert!(t.metatraffic_multicast_locators().is_empty());
        assert_eq!(t.sockets().len(), 2);
        let want: Vec<Locator> = (0..=9).map(|i| lo(7410 + 2 * i)).collect();
        assert_eq!(t.spdp_destinations(), want);
    }
    assert_eq!(
        (a.participant_index(), b.participant_index()),
        (Some(0), Some(1))
    );
    // Zero-configuration unicast discovery both ways.
    let mut batch = RecvBatch::new(4, 1500);
    a.send_meta_to_many(a.spdp_destinations(), b"from a", 0)
        .unwrap();
    b.send_meta_to_many(b.spdp_destinations(), b"from b", 0)
        .unwrap();
    let got = recv_n(&b, SocketId::MetaUnicast, &mut batch, 2);
    assert!(got.contains(&(lo(7410), b"from a".to_vec())), "{got:?}");
    let got = recv_n(&a, SocketId::MetaUnicast, &mut batch, 2);
    assert!(got.contains(&(lo(7412), b"from b".to_vec())), "{got:?}");
    // Enabled forces multicast sockets even without the flag; a route is still missing, so
    // only the join is exercised (it succeeds on Linux for lo).
    let forced = UdpConfig {
        multicast: MulticastMode::Enabled,
        ..UdpConfig::default()
    };
    match UdpTransport::open(0, &forced) {
        Ok(t) => assert!(t.uses_multicast()),
        Err(e) => assert!(matches!(e, TransportError::MulticastJoin { .. }), "{e}"),
    }
}

#[test]
fn the_critical_lane_has_a_socket_of_its_own_for_both_directions() {
    require_isolated_network();
    use tachyon_transport::{Traffic, Transport};
    // Unconnected first: each class leaves from its own bound socket.
    let config = UdpConfig {
        critical_priority: Some(5),
        connected_destinations: 0,
        ..unicast_only()
    };
    let a = open(12, &config);
    let b = open(12, &unicast_only());
    let port = a
        .port(SocketId::CriticalUnicast)
        .expect("a critical socket");
    assert_ne!(Some(port), a.port(SocketId::UserUnicast));
    assert_eq!(a.locators().critical_unicast, [lo(port)]);
    assert!(b.locators().critical_unicast.is_empty());
    let critical: Vec<_> = a
        .sources()
        .into_iter()
        .filter(|s| s.traffic == Traffic::Critical)
        .collect();
    assert_eq!(critical.len(), 1);
    // Above the priority it leaves from the critical socket, at or below from the user one.
    let to = b.default_unicast_locators()[0];
    a.send_to(&to, b"critical", 6).expect("send");
    a.send_to(&to, b"bulk", 5).expect("send");
    let mut batch = RecvBatch::new(4, 2048);
    let got = recv_n(&b, SocketId::UserUnicast, &mut batch, 2);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0], (lo(port), b"critical".to_vec()));
    let user = a.port(SocketId::UserUnicast).expect("user");
    assert_eq!(got[1], (lo(user), b"bulk".to_vec()));
    // What is sent to the critical locator arrives on the critical socket.
    b.send_to(&lo(port), b"to critical", 0).expect("send");
    let got = recv_n(&a, SocketId::CriticalUnicast, &mut batch, 1);
    assert_eq!(got.len(), 1);
    // Connected, the two classes to one destination still go through sockets of their own.
    let connected = open(
        12,
        &UdpConfig {
            critical_priority: Some(5),
            ..unicast_only()
        },
    );
    connected.send_to(&to, b"critical", 6).expect("send");
    connected.send_to(&to, b"bulk", 5).expect("send");
    connected.send_to(&to, b"critical", 6).expect("send");
    let got = recv_n(&b, SocketId::UserUnicast, &mut batch, 3);
    assert_eq!(got.len(), 3);
    assert_ne!(got[0].0, got[1].0);
    assert_eq!(got[0].0, got[2].0);
}
