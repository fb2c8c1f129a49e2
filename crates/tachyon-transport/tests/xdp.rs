//! The AF_XDP transport on a real veth pair with a real XDP program: this namespace holds one
//! end, a second namespace the other, where a kernel UDP socket (Python) echoes what it
//! receives. Needs root (it creates the namespace, the veth and attaches XDP): elsewhere it
//! says why it skips.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tachyon_transport::xdp::{XdpConfig, XdpTraffic, XdpTransport};
use tachyon_transport::{RecvBatch, SocketId, Transport, UdpConfig, UdpTransport};
use tachyon_wire::Locator;

fn sh(args: &[&str]) -> bool {
    Command::new(args[0])
        .args(&args[1..])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The peer namespace, its veth pair and the echo process; removed when dropped.
struct Link {
    netns: String,
    here: String,
    /// The peer's address (`10.231.N.2`; this end is `10.231.N.1`).
    there: Ipv4Addr,
    echo: Option<Child>,
    /// Keeps the other tests of this file out until the link is gone (fields drop after
    /// `drop`).
    _turn: std::sync::MutexGuard<'static, ()>,
}

impl Drop for Link {
    fn drop(&mut self) {
        if let Some(mut c) = self.echo.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        sh(&["ip", "link", "del", &self.here]);
        sh(&["ip", "netns", "del", &self.netns]);
    }
}

const ECHO_PORT: u16 = 9999;

/// An XDP transport for user data on `dev`, beside `udp`.
fn open_user_data(
    dev: &str,
    udp: &Arc<UdpTransport>,
) -> Result<XdpTransport, tachyon_transport::TransportError> {
    XdpTransport::open(
        &XdpConfig {
            interface: dev.to_owned(),
            traffic: XdpTraffic::UserData,
            ..XdpConfig::default()
        },
        Arc::clone(udp),
        None,
    )
}

/// Why the test cannot run here, if it cannot.
fn skip_reason() -> Option<String> {
    if std::env::var_os("TACHYON_TEST_NETNS").is_none() {
        return Some("not in the test namespace of scripts/test.sh".into());
    }
    // SAFETY-free check of the effective user: /proc/self/status's Uid line.
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let euid = status
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .and_then(|l| l.split_whitespace().nth(2))
        .unwrap_or("?");
    if euid != "0" {
        return Some(format!(
            "needs root (creates namespaces and attaches XDP); euid {euid}"
        ));
    }
    if !sh(&["ip", "-V"]) || !sh(&["python3", "-c", "pass"]) {
        return Some("needs ip (iproute2) and python3".into());
    }
    None
}

/// One test at a time: each checks that the namespace is isolated before adding its veth.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A veth pair into a namespace of its own, on subnet 10.231.`subnet`.0/24.
fn setup(subnet: u8) -> Link {
    let turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    tachyon_transport::testing::require_isolated_network();
    let pid = std::process::id();
    let link = Link {
        netns: format!("tachyon-x-{pid}-{subnet}"),
        here: format!("tx{}{subnet}a", pid % 100_000),
        there: Ipv4Addr::new(10, 231, subnet, 2),
        echo: None,
        _turn: turn,
    };
    let there = format!("tx{}{subnet}b", pid % 100_000);
    let ns = link.netns.clone();
    let here_addr = format!("10.231.{subnet}.1/24");
    let there_addr = format!("10.231.{subnet}.2/24");
    for cmd in [
        vec!["ip", "netns", "add", &ns],
        vec![
            "ip", "link", "add", &link.here, "type", "veth", "peer", "name", &there,
        ],
        vec!["ip", "link", "set", &there, "netns", &ns],
        vec!["ip", "addr", "add", &here_addr, "dev", &link.here],
        vec!["ip", "link", "set", &link.here, "up"],
        vec!["ip", "-n", &ns, "addr", "add", &there_addr, "dev", &there],
        vec!["ip", "-n", &ns, "link", "set", &there, "up"],
        vec!["ip", "-n", &ns, "link", "set", "lo", "up"],
    ] {
        assert!(sh(&cmd), "setup failed: {cmd:?}");
    }
    link
}

/// Echoes every datagram back to its sender, from port ECHO_PORT in the peer namespace.
fn start_echo(link: &mut Link) {
    let there = link.there;
    let code = format!(
        "import socket\n\
         s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
         s.bind(('{there}', {ECHO_PORT}))\n\
         print('ready', flush=True)\n\
         while True:\n    d, a = s.recvfrom(65535)\n    s.sendto(d, a)\n"
    );
    run_peer(link, &code);
}

/// Runs the Python `code` in the peer namespace and waits for it to print "ready".
fn run_peer(link: &mut Link, code: &str) {
    let mut child = Command::new("ip")
        .args(["netns", "exec", &link.netns, "python3", "-c", code])
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the echo peer");
    let mut out = child.stdout.take().expect("stdout");
    let mut buf = [0u8; 6];
    std::io::Read::read_exact(&mut out, &mut buf).expect("echo peer ready");
    link.echo = Some(child);
}

fn rtps(len: usize, tag: u8) -> Vec<u8> {
    let mut d = vec![tag; len];
    d[..4].copy_from_slice(b"RTPS");
    d
}

/// Receives from `f` until a datagram arrives or 3 s pass.
fn wait_for(f: impl FnMut(&mut RecvBatch) -> usize) -> Option<Vec<u8>> {
    wait_up_to(Duration::from_secs(3), f)
}

fn wait_up_to(limit: Duration, mut f: impl FnMut(&mut RecvBatch) -> usize) -> Option<Vec<u8>> {
    let mut batch = RecvBatch::new(8, 65_536);
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if f(&mut batch) > 0 {
            return Some(batch.datagram(0).1.to_vec());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    None
}

#[test]
fn rtps_goes_through_the_ring_and_everything_else_through_the_kernel() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIPPED (not passed): {why}");
        return;
    }
    let mut link = setup(0);
    start_echo(&mut link);
    let udp = Arc::new(
        UdpTransport::open(
            7,
            &UdpConfig {
                interface: Some(link.here.clone()),
                ..UdpConfig::default()
            },
        )
        .expect("udp"),
    );
    let xdp = open_user_data(&link.here, &udp).expect("xdp transport");
    assert_eq!(xdp.port(), udp.port(SocketId::UserUnicast).expect("port"));
    let echo = Locator::udp(SocketAddr::V4(SocketAddrV4::new(link.there, ECHO_PORT)));
    assert!(xdp.reach().covers(&echo), "the subnet is in reach");
    assert!(!xdp
        .reach()
        .covers(&Locator::udp("127.0.0.1:7400".parse().expect("addr"))));

    // The first datagram to a neighbour whose MAC is unknown goes through the kernel (which
    // resolves it); the echo comes back to the user-data port, RTPS, so through the ring.
    let send = |payload: &[u8]| {
        let mut b = xdp.tx_buffer();
        // A UMEM frame, written in place and sent without a copy.
        assert!(b.is_frame(), "{b:?}");
        b[..payload.len()].copy_from_slice(payload);
        xdp.send(b, payload.len(), &[echo], 0).expect("send");
    };
    send(&rtps(64, 1));
    let got = wait_for(|b| xdp.receive(0, b).expect("receive")).expect("echo through the ring");
    assert_eq!(got, rtps(64, 1));
    assert_eq!(xdp.xdp_stats().via_kernel, 1, "the MAC was unknown");

    // Once the kernel knows the neighbour, datagrams go through the ring both ways.
    let until = Instant::now() + Duration::from_secs(3);
    let mut rounds = 0;
    while Instant::now() < until && xdp.xdp_stats().sent < 20 {
        send(&rtps(200, 2));
        let got = wait_for(|b| xdp.receive(0, b).expect("receive")).expect("echo");
        assert_eq!(got, rtps(200, 2));
        rounds += 1;
    }
    let s = xdp.xdp_stats();
    assert!(s.sent >= 20, "{s:?} after {rounds} rounds");
    assert!(s.received >= 20, "{s:?}");

    // Frames lent and dropped unsent come back; with every one lent, the heap stands in.
    // (The kernel completes a sent frame when its copy is freed: let the last ones come back.)
    std::thread::sleep(Duration::from_millis(100));
    let mut lent = Vec::new();
    while lent.len() < 4096 {
        let b = xdp.tx_buffer();
        if !b.is_frame() {
            break;
        }
        lent.push(b);
    }
    assert_eq!(lent.len(), 2048, "every transmit frame, then heap memory");
    drop(lent);
    assert!(xdp.tx_buffer().is_frame(), "the frames came back");

    // Not RTPS: the program passes it to the kernel, whose socket on the port receives it
    // (sent from that socket, not a connected one: the echo answers the source port).
    let plain = vec![b'x'; 64];
    udp.send_unconnected_to(&echo, &plain, 0)
        .expect("send plain");
    let got = wait_for(|b| {
        udp.recv_batch(SocketId::UserUnicast, b)
            .expect("udp receive")
    })
    .expect("plain echo through the kernel");
    assert_eq!(got, plain);

    // RTPS larger than the MTU: IP fragments, reassembled by the kernel for the socket.
    let big = rtps(4000, 3);
    udp.send_unconnected_to(&echo, &big, 0).expect("send big");
    let got = wait_for(|b| {
        udp.recv_batch(SocketId::UserUnicast, b)
            .expect("udp receive")
    })
    .expect("fragmented echo through the kernel");
    assert_eq!(got, big);
    let before = xdp.xdp_stats().received;
    assert!(
        wait_up_to(Duration::from_millis(300), |b| xdp
            .receive(0, b)
            .expect("receive"))
        .is_none(),
        "nothing of it in the ring"
    );
    assert_eq!(xdp.xdp_stats().received, before);
    assert_eq!(xdp.stats().malformed, 0);
    eprintln!("{:?}", xdp.xdp_stats());

    // One program per interface: a second transport there is refused, saying why.
    let err = open_user_data(&link.here, &udp).expect_err("a second program on the interface");
    assert!(
        err.to_string().contains("one process per interface"),
        "{err}"
    );

    // The program goes with the transport (its link closes).
    assert!(xdp_attached(&link.here));
    drop(xdp);
    assert!(
        detached(&link.here),
        "the program is detached: {}",
        String::from_utf8_lossy(
            &Command::new("ip")
                .args(["-d", "link", "show", "dev", &link.here])
                .output()
                .expect("ip")
                .stdout
        )
    );

    // Configuration errors name the key and the fix.
    let cases: [(XdpConfig, Option<i32>, &str); 4] = [
        (
            XdpConfig {
                interface: link.here.clone(),
                queue: 5,
                traffic: XdpTraffic::UserData,
                ..XdpConfig::default()
            },
            None,
            "queue 5",
        ),
        (
            XdpConfig {
                interface: link.here.clone(),
                bind: tachyon_transport::xdp::BindMode::ZeroCopy,
                traffic: XdpTraffic::UserData,
                ..XdpConfig::default()
            },
            None,
            "xdp.bind",
        ),
        (
            XdpConfig {
                interface: link.here.clone(),
                ..XdpConfig::default()
            },
            None,
            "critical_priority",
        ),
        (
            XdpConfig {
                interface: "lo".into(),
                ..XdpConfig::default()
            },
            Some(5),
            "[udp] interface",
        ),
    ];
    for (config, critical, says) in cases {
        let err = XdpTransport::open(&config, Arc::clone(&udp), critical)
            .expect_err("a configuration error");
        assert!(err.to_string().contains(says), "{says:?} not in: {err}");
        assert!(detached(&link.here), "nothing left attached after: {err}");
    }
    drop(udp);
    drop(link);
}

/// Whether the program is gone within 2 s (the kernel frees a closed link on a workqueue).
fn detached(dev: &str) -> bool {
    let until = Instant::now() + Duration::from_secs(2);
    while Instant::now() < until {
        if !xdp_attached(dev) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

fn xdp_attached(dev: &str) -> bool {
    let out = Command::new("ip")
        .args(["link", "show", "dev", dev])
        .output()
        .expect("ip link show");
    String::from_utf8_lossy(&out.stdout).contains("prog/xdp")
}

/// The group of the multicast test (the UDP transport's default, on its user-data port).
const GROUP: Ipv4Addr = Ipv4Addr::new(239, 255, 0, 1);

#[test]
fn groups_go_through_the_ring_both_ways_with_multicast_on() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIPPED (not passed): {why}");
        return;
    }
    let mut link = setup(1);
    let here = link.here.clone();
    let udp_on = |config: UdpConfig| {
        Arc::new(
            UdpTransport::open(
                8,
                &UdpConfig {
                    interface: Some(here.clone()),
                    ..config
                },
            )
            .expect("udp"),
        )
    };
    let udp = udp_on(UdpConfig::default());
    let group_port = udp.port(SocketId::UserMulticast).expect("multicast in use");
    let spdp_port = udp.port(SocketId::MetaMulticast).expect("multicast in use");
    let xdp = XdpTransport::open(
        &XdpConfig {
            interface: link.here.clone(),
            traffic: XdpTraffic::UserData,
            multicast: true,
            ..XdpConfig::default()
        },
        Arc::clone(&udp),
        None,
    )
    .expect("xdp transport");
    let group = Locator::udp(SocketAddr::V4(SocketAddrV4::new(GROUP, group_port)));
    assert!(xdp.reach().covers(&group), "groups are in reach");

    // A member of the group on the other end: it answers an `q` datagram with an `r` one,
    // sent to the group (not looped back to itself).
    let there = link.there;
    let code = format!(
        "import socket\n\
         s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
         s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n\
         s.bind(('', {group_port}))\n\
         s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, \
         socket.inet_aton('{GROUP}') + socket.inet_aton('{there}'))\n\
         s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton('{there}'))\n\
         s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 0)\n\
         print('ready', flush=True)\n\
         while True:\n    d, a = s.recvfrom(65535)\n    if d[4:5] == b'q':\n        \
         s.sendto(d[:4] + b'r' + d[5:], ('{GROUP}', {group_port}))\n"
    );
    run_peer(&mut link, &code);

    // To the group through the ring (no MAC to resolve); the answer to the group comes back
    // through the ring too.
    let mut ask = rtps(100, 0);
    ask[4] = b'q';
    let mut b = xdp.tx_buffer();
    b[..ask.len()].copy_from_slice(&ask);
    xdp.send(b, ask.len(), &[group], 0).expect("send");
    let got =
        wait_for(|b| xdp.receive(0, b).expect("receive")).expect("the answer through the ring");
    assert_eq!(&got[..5], b"RTPSr", "{got:?}");
    let s = xdp.xdp_stats();
    assert_eq!((s.multicast_sent, s.multicast_received), (1, 1), "{s:?}");
    assert_eq!(s.via_kernel, 0, "{s:?}");

    // This host's members got the datagram too, from the kernel (TTL 0: looped back, never on
    // the wire), and nothing of the answer: the program took it.
    let mut seen = Vec::new();
    let until = Instant::now() + Duration::from_millis(500);
    let mut batch = RecvBatch::new(8, 65_536);
    while Instant::now() < until {
        for i in 0..udp
            .recv_batch(SocketId::UserMulticast, &mut batch)
            .expect("udp receive")
        {
            seen.push(batch.datagram(i).1[4]);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(seen, vec![b'q'], "the local copy only");
    // One answer only: the local copy did not reach the other end.
    assert!(
        wait_up_to(Duration::from_millis(200), |b| xdp
            .receive(0, b)
            .expect("receive"))
        .is_none(),
        "a second answer"
    );

    // SPDP's group (another port) stays on the kernel's socket.
    let spdp = Locator::udp(SocketAddr::V4(SocketAddrV4::new(GROUP, spdp_port)));
    let mut b = xdp.tx_buffer();
    b[..64].copy_from_slice(&rtps(64, 5));
    xdp.send(b, 64, &[spdp], 0).expect("send");
    let s = xdp.xdp_stats();
    assert_eq!((s.multicast_sent, s.via_kernel), (1, 1), "{s:?}");
    assert_eq!(xdp.stats().malformed, 0);
    drop(xdp);
    assert!(detached(&link.here));

    // What multicast needs is named when it is missing.
    let open_multicast = |udp: &Arc<UdpTransport>, traffic, critical| {
        XdpTransport::open(
            &XdpConfig {
                interface: link.here.clone(),
                traffic,
                multicast: true,
                ..XdpConfig::default()
            },
            Arc::clone(udp),
            critical,
        )
        .expect_err("a configuration error")
        .to_string()
    };
    let critical = udp_on(UdpConfig {
        critical_priority: Some(5),
        ..UdpConfig::default()
    });
    let err = open_multicast(&critical, XdpTraffic::Critical, Some(5));
    assert!(
        err.contains("[xdp] multicast") && err.contains("traffic = \"user\""),
        "{err}"
    );
    let unicast_only = udp_on(UdpConfig {
        multicast: tachyon_transport::MulticastMode::Disabled,
        ..UdpConfig::default()
    });
    let err = open_multicast(&unicast_only, XdpTraffic::UserData, None);
    assert!(
        err.contains("[xdp] multicast") && err.contains("[udp] multicast"),
        "{err}"
    );
    let routed = udp_on(UdpConfig {
        multicast_ttl: 4,
        ..UdpConfig::default()
    });
    let err = open_multicast(&routed, XdpTraffic::UserData, None);
    assert!(
        err.contains("[xdp] multicast") && err.contains("multicast_ttl = 4"),
        "{err}"
    );
    assert!(detached(&link.here), "nothing left attached");
    drop((udp, critical, unicast_only, routed));
    drop(link);
}
