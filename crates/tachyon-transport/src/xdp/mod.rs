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
//!
//! # Multicast
//!
//! With [`XdpConfig::multicast`] (and `traffic = "user"`), user data to multicast groups
//! goes through the ring as well:
//! - **Receive.** The program also takes datagrams to the user-data multicast port (the one
//!   the UDP transport's group socket is bound to; it stays joined, so the NIC keeps
//!   accepting the group and the kernel keeps answering IGMP). An XDP program redirects, it
//!   cannot copy: other processes of this host listening on that port no longer get what
//!   remote writers send to the group. What this host's own processes send to the group
//!   reaches them as before (the kernel loops it back, the program never sees it).
//! - **Transmit.** The transport's reach includes IPv4 groups, so a pair on the link keeps its
//!   readers' group locators and a writer's datagrams to a group leave through the ring
//!   (multicast MAC, TTL 1). Frames sent through the ring are not looped back to this host;
//!   with `[udp] multicast_loopback` (the default) each one is sent again through a kernel
//!   socket with TTL 0, which the kernel delivers to this host's members only, never to the
//!   wire. Groups on other ports (SPDP's) stay on the UDP transport.

#[allow(unsafe_code)]
mod bpf;
pub mod frame;
pub mod neigh;
mod port;
pub mod program;
#[allow(unsafe_code)]
mod xsk;

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tachyon_wire::{Locator, Reach};

use crate::batch::RecvBatch;
use crate::error::TransportError;
use crate::stats::{Counters, TransportStats};
use crate::transport::{RxSource, Traffic, Transport, TransportLocators, TxBuffer, TxPool};
use crate::udp::{SocketId, UdpTransport};

use port::xdp_error;
pub use port::{PortConfig, PortDatagram, PortSend, XdpPort};
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
    /// The interface (the UDP transport's must be the same); empty: the UDP transport's
    /// (the one it chose, or `[udp] interface`).
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
    /// User data to and from multicast groups through the ring too (`traffic = "user"`
    /// only): the program also takes datagrams to the user-data multicast port, and
    /// datagrams to groups on that port are transmitted through the ring. See
    /// [the module documentation](self), "Multicast".
    pub multicast: bool,
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
            multicast: false,
        }
    }
}

/// The AF_XDP transport: see the [module documentation](self).
pub struct XdpTransport {
    port: XdpPort,
    /// The UDP port whose datagrams the program takes, and the source of what is sent.
    port_no: u16,
    /// With [`XdpConfig::multicast`], the user-data multicast port: datagrams to groups on it
    /// go through the ring both ways.
    group_port: Option<u16>,
    /// With [`XdpConfig::multicast`] and `[udp] multicast_loopback`: a kernel socket that
    /// sends each group datagram again with TTL 0, which the kernel delivers to this host's
    /// members of the group only (frames sent through the ring are not looped back).
    local_copy: Option<std::net::UdpSocket>,
    udp: Arc<UdpTransport>,
    config: XdpConfig,
    critical_priority: Option<i32>,
    traffic: Traffic,
    reach: Reach,
    locators: TransportLocators,
    pool: TxPool,
    counters: Counters,
    /// Datagrams sent through the UDP transport instead (no MAC yet, off-link, another
    /// class).
    via_kernel: AtomicU64,
    /// Datagrams to groups transmitted through the ring, and received through it.
    multicast_sent: AtomicU64,
    multicast_received: AtomicU64,
}

impl std::fmt::Debug for XdpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("XdpTransport")
            .field("port", &self.port)
            .field("udp_port", &self.port_no)
            .field("traffic", &self.config.traffic)
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
    /// Of `sent`, datagrams to multicast groups ([`XdpConfig::multicast`]).
    pub multicast_sent: u64,
    /// Of `received`, datagrams to the user-data multicast port.
    pub multicast_received: u64,
    /// Frames the kernel dropped or refused on the socket (`XDP_STATISTICS`).
    pub kernel_drops: u64,
    /// Whether the program runs in the driver (native) rather than generic mode.
    pub native: bool,
    /// Whether the socket is bound in zero-copy mode.
    pub zero_copy: bool,
}

impl XdpTransport {
    /// Opens the transport on `config.interface` (empty: `udp`'s), beside `udp` (whose
    /// interface it must be, and whose ports it takes over): loads and attaches the program,
    /// binds the socket and registers it. `critical_priority` is the threshold of the
    /// critical class.
    pub fn open(
        config: &XdpConfig,
        udp: Arc<UdpTransport>,
        critical_priority: Option<i32>,
    ) -> Result<XdpTransport, TransportError> {
        let name = if config.interface.is_empty() {
            udp.interface().name.as_str()
        } else {
            config.interface.as_str()
        };
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
        if udp.interface().loopback {
            return Err(xdp_error(
                "interface",
                format!(
                    "{name} is a loopback interface: AF_XDP needs a network device (a NIC, or \
                     a veth), name it with `interface`"
                ),
            ));
        }
        let (port_no, traffic) = match config.traffic {
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
        let group_port = if config.multicast {
            Some(group_port(config, &udp)?)
        } else {
            None
        };
        let local_copy = match group_port {
            Some(_) if udp.multicast_loopback() => Some(local_copy_socket(&udp)?),
            _ => None,
        };
        let ports: Vec<u16> = std::iter::once(port_no).chain(group_port).collect();
        let port = XdpPort::open(&PortConfig {
            interface: name,
            address: udp.interface().address,
            queue: config.queue,
            ports: &ports,
            magic: Some(*b"RTPS"),
            attach: config.attach,
            bind: config.bind,
            frames: config.frames,
            busy_poll: config.busy_poll,
            vlan: config.vlan,
        })?;
        let reach = Reach {
            kind: Locator::KIND_UDPV4,
            address_prefix: subnet_prefix(port.link().subnet, udp.interface().address),
            multicast: group_port.is_some(),
        };
        tracing::info!(interface = name, queue = config.queue, port = port_no,
            native = port.native(), zero_copy = port.zero_copy(), traffic = ?config.traffic,
            busy_poll = config.busy_poll, multicast_port = ?group_port,
            "AF_XDP transport ready");
        Ok(XdpTransport {
            pool: TxPool::new(port.max_payload(), 64),
            port,
            port_no,
            group_port,
            local_copy,
            critical_priority,
            traffic,
            reach,
            locators: TransportLocators::default(),
            counters: Counters::default(),
            via_kernel: AtomicU64::new(0),
            multicast_sent: AtomicU64::new(0),
            multicast_received: AtomicU64::new(0),
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
            multicast_sent: self.multicast_sent.load(Ordering::Relaxed),
            multicast_received: self.multicast_received.load(Ordering::Relaxed),
            kernel_drops: self.port.kernel_drops(),
            native: self.port.native(),
            zero_copy: self.port.zero_copy(),
        }
    }

    /// The port whose datagrams the program takes.
    pub fn port(&self) -> u16 {
        self.port_no
    }

    /// Whether a datagram of TRANSPORT_PRIORITY `priority` goes through the ring.
    fn carries(&self, priority: i32) -> bool {
        match self.config.traffic {
            XdpTraffic::UserData => true,
            XdpTraffic::Critical => self.critical_priority.is_some_and(|t| priority > t),
        }
    }
}

/// The user-data multicast port whose groups [`XdpConfig::multicast`] takes through the
/// ring, or the error that names what is missing.
fn group_port(config: &XdpConfig, udp: &UdpTransport) -> Result<u16, TransportError> {
    if config.traffic != XdpTraffic::UserData {
        return Err(xdp_error(
            "multicast",
            "multicast = true needs traffic = \"user\" (critical endpoints announce unicast \
             locators of their own, no group): set traffic = \"user\", or multicast = false"
                .into(),
        ));
    }
    if udp.multicast_ttl() > 1 {
        return Err(xdp_error(
            "multicast",
            format!(
                "the ring sends to groups on its link only (TTL 1), and [udp] multicast_ttl = \
                 {} asks for multicast beyond it: set multicast_ttl = 1, or multicast = false",
                udp.multicast_ttl()
            ),
        ));
    }
    udp.port(SocketId::UserMulticast).ok_or_else(|| {
        xdp_error(
            "multicast",
            "multicast = true needs the UDP transport's multicast ([udp] multicast = \"off\", \
             or an interface without multicast): turn it on, or set multicast = false"
                .into(),
        )
    })
}

/// A kernel UDP socket that sends to groups on `udp`'s interface with TTL 0: the kernel
/// loops such a datagram back to this host's members and never puts it on the wire.
fn local_copy_socket(udp: &UdpTransport) -> Result<std::net::UdpSocket, TransportError> {
    let fail = |e: io::Error| {
        xdp_error(
            "multicast",
            format!("cannot open the socket that loops group datagrams back to this host: {e}"),
        )
    };
    let s =
        socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::DGRAM, None).map_err(fail)?;
    s.set_multicast_if_v4(&udp.interface().address)
        .map_err(fail)?;
    s.set_multicast_ttl_v4(0).map_err(fail)?;
    s.set_multicast_loop_v4(true).map_err(fail)?;
    s.set_nonblocking(true).map_err(fail)?;
    Ok(s.into())
}

/// The locator address prefix of the subnet (whole octets of its prefix length; the
/// interface's own address alone when no on-link route is known).
fn subnet_prefix(subnet: Option<(Ipv4Addr, u8)>, own: Ipv4Addr) -> Vec<u8> {
    let (addr, bits) = subnet.unwrap_or((own, 32));
    let mut p = vec![0u8; 12];
    p.extend_from_slice(&addr.octets()[..usize::from(bits / 8)]);
    p
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
            fd: Some(self.port.fd()),
            traffic: self.traffic,
        }]
    }

    fn receive(&self, _source: usize, batch: &mut RecvBatch) -> io::Result<usize> {
        batch.begin();
        let room = (batch.slots() - batch.len()) as u32;
        let counters = &self.counters;
        let mut groups = 0u64;
        let (taken, malformed) = self.port.receive(room, |d| {
            groups += u64::from(Some(d.dst_port) == self.group_port);
            // Under the RX ring's lock, which every receiver from the ring takes.
            batch.push_locked(Locator::udp(SocketAddr::V4(d.from)), d.payload, counters);
        });
        if groups > 0 {
            Counters::add(&self.multicast_received, groups);
        }
        Counters::add(&self.counters.malformed, malformed);
        if taken < room {
            batch.set_drained();
        }
        Ok(batch.len())
    }

    fn receive_wait(&self, source: usize, batch: &mut RecvBatch) -> io::Result<usize> {
        loop {
            let n = self.receive(source, batch)?;
            if n > 0 {
                return Ok(n);
            }
            if !self.port.wait()? {
                batch.begin();
                return Ok(0);
            }
        }
    }

    fn interrupt(&self) {
        self.port.interrupt();
    }

    fn tx_buffer(&self) -> TxBuffer {
        // A UMEM frame, written in place and sent without a copy; heap memory when every
        // frame is in flight.
        self.port
            .lend(self.pool.buffer_size())
            .unwrap_or_else(|| self.pool.take())
    }

    fn send(&self, buf: TxBuffer, len: usize, dests: &[Locator], priority: i32) -> io::Result<()> {
        let len = len.min(buf.len());
        if !self.carries(priority) {
            Counters::add(&self.via_kernel, dests.len() as u64);
            return self.udp.send_to_many(dests, &buf[..len], priority);
        }
        let mut first_err = None;
        // The last destination gets the buffer itself (sent in place when it is a frame); the
        // others a copy each.
        let mut buf = Some(buf);
        for (i, d) in dests.iter().enumerate() {
            let Some(b) = buf.take() else { break };
            let to = match d.to_socket_addr() {
                Some(SocketAddr::V4(a)) => a,
                _ => {
                    Counters::add(&self.counters.skipped_locators, 1);
                    buf = Some(b);
                    continue;
                }
            };
            let group = to.ip().is_multicast();
            if group && Some(to.port()) != self.group_port {
                // Another port's group (SPDP's): the kernel's, looped back to this host.
                Counters::add(&self.via_kernel, 1);
                if let Err(e) = self.udp.send_unconnected_to(d, &b[..len], priority) {
                    first_err.get_or_insert(e);
                }
                buf = Some(b);
                continue;
            }
            // A group datagram looped back to this host's members is copied into its frame:
            // the buffer is sent again.
            // Counted under the transmit lock, which every sender through the ring takes:
            // no atomic read-modify-write per datagram (`Counters::add_locked`).
            let counted = || {
                Counters::add_locked(&self.counters.datagrams_sent, 1);
                Counters::add_locked(&self.counters.bytes_sent, len as u64);
            };
            let (r, back) = if i + 1 == dests.len() && !(group && self.local_copy.is_some()) {
                self.port
                    .send_buffer(b, len, self.port_no, to, priority, counted)
            } else {
                let r = self
                    .port
                    .send_then(&b[..len], self.port_no, to, priority, counted);
                (r, Some(b))
            };
            match r {
                PortSend::Queued => {
                    if group {
                        Counters::add(&self.multicast_sent, 1);
                        if let (Some(s), Some(b)) = (&self.local_copy, &back) {
                            // Lost only for this host's members, as a datagram can be.
                            if let Err(e) = s.send_to(&b[..len], to) {
                                tracing::trace!(error = %e, "group datagram not looped back");
                            }
                        }
                    }
                }
                PortSend::Full => Counters::add(&self.counters.send_drops, 1),
                PortSend::NoMac | PortSend::TooLong => {
                    Counters::add(&self.via_kernel, 1);
                    if let Some(b) = &back {
                        if let Err(e) = self.udp.send_unconnected_to(d, &b[..len], priority) {
                            first_err.get_or_insert(e);
                        }
                    }
                }
            }
            buf = back;
        }
        first_err.map_or(Ok(()), Err)
    }

    fn stats(&self) -> TransportStats {
        self.counters.snapshot()
    }
}
