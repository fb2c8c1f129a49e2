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
    echo: Option<Child>,
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

const THERE: Ipv4Addr = Ipv4Addr::new(10, 231, 0, 2);
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

fn setup() -> Link {
    tachyon_transport::testing::require_isolated_network();
    let pid = std::process::id();
    let link = Link {
        netns: format!("tachyon-x-{pid}"),
        here: format!("tx{}a", pid % 100_000),
        echo: None,
    };
    let there = format!("tx{}b", pid % 100_000);
    let ns = link.netns.clone();
    for cmd in [
        vec!["ip", "netns", "add", &ns],
        vec![
            "ip", "link", "add", &link.here, "type", "veth", "peer", "name", &there,
        ],
        vec!["ip", "link", "set", &there, "netns", &ns],
        vec!["ip", "addr", "add", "10.231.0.1/24", "dev", &link.here],
        vec!["ip", "link", "set", &link.here, "up"],
        vec![
            "ip",
            "-n",
            &ns,
            "addr",
            "add",
            "10.231.0.2/24",
            "dev",
            &there,
        ],
        vec!["ip", "-n", &ns, "link", "set", &there, "up"],
        vec!["ip", "-n", &ns, "link", "set", "lo", "up"],
    ] {
        assert!(sh(&cmd), "setup failed: {cmd:?}");
    }
    link
}

/// Echoes every datagram back to its sender, from port ECHO_PORT in the peer namespace.
fn start_echo(link: &mut Link) {
    let code = format!(
        "import socket\n\
         s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
         s.bind(('{THERE}', {ECHO_PORT}))\n\
         print('ready', flush=True)\n\
         while True:\n    d, a = s.recvfrom(65535)\n    s.sendto(d, a)\n"
    );
    let mut child = Command::new("ip")
        .args(["netns", "exec", &link.netns, "python3", "-c", &code])
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
    let mut link = setup();
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
    let echo = Locator::udp(SocketAddr::V4(SocketAddrV4::new(THERE, ECHO_PORT)));
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

    // Not RTPS: the program passes it to the kernel, whose socket on the port receives it.
    let plain = vec![b'x'; 64];
    udp.send_to(&echo, &plain, 0).expect("send plain");
    let got = wait_for(|b| {
        udp.recv_batch(SocketId::UserUnicast, b)
            .expect("udp receive")
    })
    .expect("plain echo through the kernel");
    assert_eq!(got, plain);

    // RTPS larger than the MTU: IP fragments, reassembled by the kernel for the socket.
    let big = rtps(4000, 3);
    udp.send_to(&echo, &big, 0).expect("send big");
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
