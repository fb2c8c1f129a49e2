//! The AF_XDP transport: RTPS over UDP/IPv4 past the kernel's network stack, on one queue of
//! one interface, beside the UDP transport it leans on.
//!
//! # How it fits
//!
//! - **It is UDP on the wire.** Peers on kernel sockets (Cyclone DDS, Fast DDS, Tachyon
//!   without XDP) send to the same `address:port` locators the UDP transport announces; the
//!   XDP program ([`program`]) takes the datagrams to the transport's ports off the
//!   interface before the kernel's stack sees them and puts them in the AF_XDP socket's
//!   RX ring. Everything else (ssh, iperf3, other processes, IP fragments, discovery) goes
//!   to the kernel as before.
//! - **Which traffic**: [`XdpTraffic::Critical`] takes the critical lane's port (its
//!   endpoints' data and acknowledgements) and transmits only datagrams above the critical
//!   threshold through the ring; [`XdpTraffic::UserData`] takes the user-data unicast port
//!   and transmits every datagram to an on-link neighbour through the ring. Discovery stays
//!   on kernel UDP either way.
//! - **Transmit**: the transport writes Ethernet (and 802.1Q with the priority's PCP), IPv4
//!   (DSCP from TRANSPORT_PRIORITY) and UDP headers with checksums in front of the datagram in
//!   a UMEM frame ([`frame`]); the neighbour's MAC comes from the kernel's table
//!   ([`neigh`]). A destination without a known MAC (the first datagram to it, which makes the
//!   kernel resolve it), off the link, or of a class the transport does not carry, goes
//!   through the UDP transport's socket instead.
//! - **Chosen per matched pair** like every transport: it reaches the UDPv4 locators of its
//!   interface's subnet and is preferred to UDP, so the pairs whose locators are on that link
//!   use it.
//! - **Wake-up**: `poll()` on the socket (as a UDP socket wakes its reader), or busy polling
//!   of the RX ring ([`XdpConfig::busy_poll`], a vCPU of its own: the latency gain of AF_XDP
//!   needs it).
//! - **Crash safety**: the program is attached through a BPF link owned by this process, so
//!   it is gone when the process is, and it passes every packet to the kernel while no
//!   socket is bound.

#[allow(unsafe_code)]
mod bpf;
pub mod frame;
pub mod neigh;
pub mod program;
#[allow(unsafe_code)]
mod xsk;

use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, Ordering};
use std::sync::Arc;

use tachyon_wire::{Locator, Reach};

use crate::batch::RecvBatch;
use crate::error::TransportError;
use crate::priority;
use crate::stats::{Counters, TransportStats};
use crate::transport::{RxSource, Traffic, Transport, TransportLocators, TxBuffer, TxPool};
use crate::udp::{SocketId, UdpTransport};

pub use xsk::Copy as BindMode;

/// Which traffic goes through the AF_XDP socket.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum XdpTraffic {
    /// Critical endpoints only (`threads.critical_priority`): the timing-isolation setup.
    #[default]
    Critical,
    /// Every user-data datagram to an on-link neighbour.
    UserData,
}

/// How the XDP program is attached.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum AttachMode {
    /// Native where the driver has it, else generic.
    #[default]
    Auto,
    /// In the driver (`XDP_FLAGS_DRV_MODE`).
    Native,
    /// In the kernel's stack, any driver (`XDP_FLAGS_SKB_MODE`).
    Generic,
}

/// The `[xdp]` settings.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct XdpConfig {
    /// The interface (the UDP transport's must be the same).
    pub interface: String,
    /// The queue the socket binds to (receive traffic must be steered there: one queue, or
    /// `tachyon xdp setup`'s flow steering).
    pub queue: u32,
    /// Which traffic it carries.
    pub traffic: XdpTraffic,
    /// How the program is attached.
    pub attach: AttachMode,
    /// Copy or zero-copy binding.
    pub bind: BindMode,
    /// Spin on the RX ring instead of waiting in `poll()`.
    pub busy_poll: bool,
    /// 802.1Q VLAN id to tag transmitted frames with (PCP from TRANSPORT_PRIORITY).
    pub vlan: Option<u16>,
    /// Frames of the UMEM (a power of two: half receive, half transmit).
    pub frames: u32,
    /// When the socket cannot be set up, run on kernel UDP (logged) instead of failing.
    pub fallback: bool,
}

impl Default for XdpConfig {
    fn default() -> Self {
        XdpConfig {
            interface: String::new(),
            queue: 0,
            traffic: XdpTraffic::default(),
            attach: AttachMode::default(),
            bind: BindMode::Auto,
            busy_poll: false,
            vlan: None,
            frames: 4096,
            fallback: false,
        }
    }
}

/// The AF_XDP transport: see the [module documentation](self).
pub struct XdpTransport {
    xsk: xsk::Xsk,
    interrupt: xsk::Interrupt,
    stopped: AtomicBool,
    // Dropped after the socket: the link detaches the program.
    _link: OwnedFd,
    _prog: OwnedFd,
    map: OwnedFd,
    queue: u32,
    link: neigh::LinkInfo,
    address: Ipv4Addr,
    port: u16,
    neighbours: neigh::Neighbours,
    udp: Arc<UdpTransport>,
    config: XdpConfig,
    critical_priority: Option<i32>,
    traffic: Traffic,
    reach: Reach,
    locators: TransportLocators,
    pool: TxPool,
    ip_id: AtomicU16,
    counters: Counters,
    /// Datagrams sent through the UDP transport instead (no MAC yet, off-link, another
    /// class).
    via_kernel: AtomicU64,
    native: bool,
}

impl std::fmt::Debug for XdpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("XdpTransport")
            .field("interface", &self.link.name)
            .field("queue", &self.queue)
            .field("port", &self.port)
            .field("native", &self.native)
            .field("xsk", &self.xsk)
            .finish()
    }
}

/// What the XDP transport did, beside the common counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct XdpStats {
    /// Datagrams received through the AF_XDP socket.
    pub received: u64,
    /// Datagrams transmitted through it.
    pub sent: u64,
    /// Datagrams it handed to the kernel's UDP socket instead.
    pub via_kernel: u64,
    /// Frames the kernel dropped or refused on the socket (`XDP_STATISTICS`).
    pub kernel_drops: u64,
    /// Whether the program runs in the driver (native) rather than generic mode.
    pub native: bool,
    /// Whether the socket is bound in zero-copy mode.
    pub zero_copy: bool,
}

fn xdp_error(key: &'static str, message: String) -> TransportError {
    TransportError::Xdp { key, message }
}

const PRIVILEGE_FIX: &str = "run as root, or grant CAP_NET_ADMIN, CAP_NET_RAW, CAP_BPF, \
    CAP_PERFMON and CAP_IPC_LOCK (e.g. `setcap cap_net_admin,cap_net_raw,cap_bpf,cap_perfmon,\
    cap_ipc_lock+ep <program>`), or set `xdp.fallback = true` to run on kernel UDP";

fn is_privilege(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EPERM) | Some(libc::EACCES))
}

impl XdpTransport {
    /// Opens the transport on `config.interface`, beside `udp` (whose interface it must be,
    /// and whose ports it takes over): loads and attaches the program, binds the socket and
    /// registers it. `critical_priority` is the threshold of the critical class.
    pub fn open(
        config: &XdpConfig,
        udp: Arc<UdpTransport>,
        critical_priority: Option<i32>,
    ) -> Result<XdpTransport, TransportError> {
        let name = config.interface.as_str();
        if name.is_empty() {
            return Err(xdp_error("interface", "no interface given".into()));
        }
        if udp.interface().name != name {
            return Err(xdp_error(
                "interface",
                format!(
                    "{name:?} is not the interface the UDP transport announces ({:?}): set \
                     [udp] interface = {name:?} too, or leave it unset",
                    udp.interface().name
                ),
            ));
        }
        let link = neigh::link_info(name)
            .map_err(|e| xdp_error("interface", format!("cannot read interface {name:?}: {e}")))?;
        if !config.frames.is_power_of_two() || !(64..=65536).contains(&config.frames) {
            return Err(xdp_error(
                "frames",
                format!("{} is not a power of two in 64..=65536", config.frames),
            ));
        }
        let frame_size: u32 = if link.mtu + 18 <= 2048 { 2048 } else { 4096 };
        if link.mtu + 18 > frame_size as usize {
            return Err(xdp_error(
                "interface",
                format!(
                    "{name}'s MTU {} is larger than one 4 KiB frame (multi-buffer XDP is not \
                     supported): lower it to 4078 at most",
                    link.mtu
                ),
            ));
        }
        let (port, traffic) = match config.traffic {
            XdpTraffic::Critical => match udp.port(SocketId::CriticalUnicast) {
                Some(p) => (p, Traffic::Critical),
                None => {
                    return Err(xdp_error(
                        "traffic",
                        "\"critical\" needs [threads] critical_priority (there is no critical \
                         class without it): set it, or traffic = \"user\""
                            .into(),
                    ))
                }
            },
            XdpTraffic::UserData => match udp.port(SocketId::UserUnicast) {
                Some(p) => (p, Traffic::UserData),
                None => {
                    return Err(xdp_error(
                        "traffic",
                        "the UDP transport has no user-data unicast socket".into(),
                    ))
                }
            },
        };
        let map = bpf::create_xskmap((config.queue + 1).max(64))
            .map_err(|e| bpf_error("cannot create the XSKMAP", &e))?;
        let insns = program::build(std::os::fd::AsRawFd::as_raw_fd(&map), &[port]);
        let prog = bpf::load_xdp(&insns, "Dual MIT/GPL").map_err(|e| {
            if is_privilege(&e.error) {
                bpf_error("cannot load the XDP program", &e.error)
            } else {
                xdp_error(
                    "interface",
                    format!(
                        "the kernel refused the XDP program: {}; verifier: {}",
                        e.error, e.log
                    ),
                )
            }
        })?;
        let (link_fd, native) = attach(&prog, &link, config.attach)?;
        let geometry = xsk::Geometry {
            frames: config.frames,
            frame_size,
        };
        let sock = xsk::Xsk::open(link.ifindex, config.queue, geometry, config.bind).map_err(
            |e| {
                let fix = match (e.step, e.error.raw_os_error()) {
                    (_, Some(libc::EPERM)) | (_, Some(libc::EACCES)) => PRIVILEGE_FIX.to_owned(),
                    ("socket", Some(libc::EAFNOSUPPORT)) => {
                        "the kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS)".to_owned()
                    }
                    ("UMEM registration", Some(libc::ENOMEM)) => format!(
                        "the locked-memory limit is below the UMEM's {} KiB: raise it \
                         (`ulimit -l`), grant CAP_IPC_LOCK, or lower xdp.frames",
                        config.frames * frame_size / 1024
                    ),
                    ("bind", Some(libc::EOPNOTSUPP)) | ("bind", Some(libc::EINVAL))
                        if config.bind == BindMode::ZeroCopy =>
                    {
                        format!("{name}'s driver cannot bind AF_XDP in zero-copy mode: set xdp.bind = \"copy\" or \"auto\"")
                    }
                    ("bind", Some(libc::EINVAL)) => format!(
                        "does {name} have a queue {}? (`ethtool -l {name}`; add queues with \
                         `ethtool -L {name} rx {} tx {}`)",
                        config.queue,
                        config.queue + 1,
                        config.queue + 1
                    ),
                    ("bind", Some(libc::EBUSY)) => format!(
                        "queue {} of {name} already has an AF_XDP socket (another process): \
                         choose another xdp.queue",
                        config.queue
                    ),
                    _ => "see the kernel's error".to_owned(),
                };
                let key = if e.step == "bind" { "bind" } else { "interface" };
                xdp_error(
                    key,
                    format!("cannot set up the AF_XDP socket ({}): {}; {fix}", e.step, e.error),
                )
            },
        )?;
        bpf::map_update(&map, config.queue, sock.fd() as u32)
            .map_err(|e| bpf_error("cannot register the socket in the XSKMAP", &e))?;
        let interrupt = xsk::Interrupt::new()
            .map_err(|e| xdp_error("interface", format!("cannot create an eventfd: {e}")))?;
        let reach = Reach {
            kind: Locator::KIND_UDPV4,
            address_prefix: subnet_prefix(link.subnet, udp.interface().address),
        };
        let max = link.mtu - frame::IPV4_LEN - frame::UDP_LEN;
        tracing::info!(interface = name, queue = config.queue, port, native,
            zero_copy = sock.zero_copy(), traffic = ?config.traffic,
            busy_poll = config.busy_poll, "AF_XDP transport ready");
        Ok(XdpTransport {
            xsk: sock,
            interrupt,
            stopped: AtomicBool::new(false),
            _link: link_fd,
            _prog: prog,
            map,
            queue: config.queue,
            address: udp.interface().address,
            port,
            neighbours: neigh::Neighbours::new(name),
            link,
            critical_priority,
            traffic,
            reach,
            locators: TransportLocators::default(),
            pool: TxPool::new(max, 64),
            ip_id: AtomicU16::new(std::process::id() as u16),
            counters: Counters::default(),
            via_kernel: AtomicU64::new(0),
            native,
            config: config.clone(),
            udp,
        })
    }

    /// What it did.
    pub fn xdp_stats(&self) -> XdpStats {
        let c = self.counters.snapshot();
        XdpStats {
            received: c.datagrams_received,
            sent: c.datagrams_sent,
            via_kernel: self.via_kernel.load(Ordering::Relaxed),
            kernel_drops: self.xsk.kernel_drops(),
            native: self.native,
            zero_copy: self.xsk.zero_copy(),
        }
    }

    /// The port whose datagrams the program takes.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Whether a datagram of TRANSPORT_PRIORITY `priority` goes through the ring.
    fn carries(&self, priority: i32) -> bool {
        match self.config.traffic {
            XdpTraffic::UserData => true,
            XdpTraffic::Critical => self.critical_priority.is_some_and(|t| priority > t),
        }
    }

    /// One datagram to one destination through the ring; `false` when it must go through
    /// the kernel instead.
    fn send_one(&self, data: &[u8], to: SocketAddrV4, priority: i32) -> bool {
        let mac = if to.ip().is_multicast() {
            Some(frame::multicast_mac(*to.ip()))
        } else {
            self.neighbours.lookup(*to.ip())
        };
        let Some(dst) = mac else {
            return false;
        };
        let link = frame::Link {
            dst,
            src: self.link.mac,
            vlan: self
                .config
                .vlan
                .map(|vid| (vid, priority::so_priority(priority).clamp(0, 7) as u8)),
        };
        let from = SocketAddrV4::new(self.address, self.port);
        let id = self.ip_id.fetch_add(1, Ordering::Relaxed);
        let dscp = priority::dscp(priority);
        let hdr = link.header_len();
        let r = self.xsk.send(|f| {
            f.get_mut(hdr..hdr + data.len())?.copy_from_slice(data);
            frame::write_headers(f, &link, from, to, id, dscp, data.len())
        });
        match r {
            xsk::Sent::Queued => {
                Counters::add(&self.counters.datagrams_sent, 1);
                Counters::add(&self.counters.bytes_sent, data.len() as u64);
            }
            xsk::Sent::Full => Counters::add(&self.counters.send_drops, 1),
            xsk::Sent::Refused => Counters::add(&self.counters.send_errors, 1),
        }
        true
    }
}

fn bpf_error(what: &str, e: &io::Error) -> TransportError {
    let fix = if is_privilege(e) {
        PRIVILEGE_FIX
    } else {
        "see the kernel's error"
    };
    xdp_error("interface", format!("{what}: {e}; {fix}"))
}

/// Attaches the program as `mode` says: native first in `Auto`, generic when the driver
/// refuses. Returns the link and whether it is native.
fn attach(
    prog: &OwnedFd,
    link: &neigh::LinkInfo,
    mode: AttachMode,
) -> Result<(OwnedFd, bool), TransportError> {
    let name = &link.name;
    let busy = |e: &io::Error| {
        xdp_error(
            "interface",
            format!(
                "cannot attach the XDP program to {name}: {e}; another XDP program is attached \
                 (another Tachyon process with [xdp] on {name}, or `ip link show {name}` names \
                 it): one process per interface"
            ),
        )
    };
    let native = bpf::attach_xdp(prog, link.ifindex, bpf::XDP_FLAGS_DRV_MODE);
    match (mode, native) {
        (AttachMode::Native | AttachMode::Auto, Ok(l)) => return Ok((l, true)),
        (_, Err(e)) if e.raw_os_error() == Some(libc::EBUSY) => return Err(busy(&e)),
        (_, Err(e)) if is_privilege(&e) => {
            return Err(bpf_error("cannot attach the XDP program", &e))
        }
        (AttachMode::Native, Err(e)) => {
            return Err(xdp_error(
                "attach",
                format!(
                    "{name}'s driver cannot run XDP natively: {e}; set xdp.attach = \"generic\" \
                     or \"auto\""
                ),
            ))
        }
        (AttachMode::Generic, Ok(l)) => drop(l),
        (_, Err(_)) => {}
    }
    match bpf::attach_xdp(prog, link.ifindex, bpf::XDP_FLAGS_SKB_MODE) {
        Ok(l) => Ok((l, false)),
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Err(busy(&e)),
        Err(e) => Err(bpf_error(
            "cannot attach the XDP program (generic mode)",
            &e,
        )),
    }
}

/// The locator address prefix of the subnet (whole octets of its prefix length; the
/// interface's own address alone when no on-link route is known).
fn subnet_prefix(subnet: Option<(Ipv4Addr, u8)>, own: Ipv4Addr) -> Vec<u8> {
    let (addr, bits) = subnet.unwrap_or((own, 32));
    let mut p = vec![0u8; 12];
    p.extend_from_slice(&addr.octets()[..usize::from(bits / 8)]);
    p
}

impl Drop for XdpTransport {
    fn drop(&mut self) {
        let _ = bpf::map_delete(&self.map, self.queue);
    }
}

impl Transport for XdpTransport {
    fn name(&self) -> &'static str {
        "xdp"
    }

    fn locators(&self) -> &TransportLocators {
        // The UDP transport announces the ports; nothing of its own.
        &self.locators
    }

    fn reach(&self) -> Reach {
        self.reach.clone()
    }

    fn preference(&self) -> u8 {
        20
    }

    fn max_datagram(&self) -> usize {
        self.pool.buffer_size()
    }

    fn sources(&self) -> Vec<RxSource> {
        vec![RxSource {
            id: 0,
            fd: Some(self.xsk.fd()),
            traffic: self.traffic,
        }]
    }

    fn receive(&self, _source: usize, batch: &mut RecvBatch) -> io::Result<usize> {
        batch.begin();
        let room = (batch.slots() - batch.len()) as u32;
        let counters = &self.counters;
        let mut refused = 0u64;
        let (taken, bad) = self.xsk.receive(room, |f| match frame::parse(f) {
            Ok(p) => {
                let payload = &f[p.payload_start..p.payload_start + p.payload_len];
                batch.push(Locator::udp(SocketAddr::V4(p.from)), payload, counters);
            }
            Err(_) => refused += 1,
        });
        Counters::add(&self.counters.malformed, refused + u64::from(bad));
        if taken < room {
            batch.set_drained();
        }
        Ok(batch.len())
    }

    fn receive_wait(&self, source: usize, batch: &mut RecvBatch) -> io::Result<usize> {
        loop {
            if self.stopped.load(Ordering::Relaxed) {
                batch.begin();
                return Ok(0);
            }
            let n = self.receive(source, batch)?;
            if n > 0 {
                return Ok(n);
            }
            if self.config.busy_poll {
                std::hint::spin_loop();
            } else {
                self.xsk.wait_readable(self.interrupt.fd())?;
            }
        }
    }

    fn interrupt(&self) {
        self.stopped.store(true, Ordering::Relaxed);
        self.interrupt.signal();
    }

    fn tx_buffer(&self) -> TxBuffer {
        self.pool.take()
    }

    fn send(&self, buf: TxBuffer, len: usize, dests: &[Locator], priority: i32) -> io::Result<()> {
        let data = &buf[..len.min(buf.len())];
        if !self.carries(priority) {
            Counters::add(&self.via_kernel, dests.len() as u64);
            return self.udp.send_to_many(dests, data, priority);
        }
        let mut first_err = None;
        for d in dests {
            let to = match d.to_socket_addr() {
                Some(SocketAddr::V4(a)) => a,
                _ => {
                    Counters::add(&self.counters.skipped_locators, 1);
                    continue;
                }
            };
            if !self.send_one(data, to, priority) {
                Counters::add(&self.via_kernel, 1);
                if let Err(e) = self.udp.send_to(d, data, priority) {
                    first_err.get_or_insert(e);
                }
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    fn stats(&self) -> TransportStats {
        self.counters.snapshot()
    }
}
