//! Opening the sockets: multicast decision, participant index allocation, binding, options.

use super::socket::SocketId;
use crate::config::{MulticastMode, UdpConfig};
use crate::error::TransportError;
use crate::interface::SelectedInterface;
use crate::ports::PortMapping;
use socket2::{Domain, Protocol, Socket, Type};
use std::io;
use std::net::{Ipv4Addr, SocketAddrV4};

/// Whether to use multicast on `interface` in `mode`, logged when the answer is not obvious.
pub(super) fn use_multicast(mode: MulticastMode, interface: &SelectedInterface) -> bool {
    match mode {
        MulticastMode::Auto if !interface.multicast => {
            tracing::warn!(
                interface = %interface.name,
                "udp: interface {} is not multicast-capable: disabling multicast, SPDP goes \
                 to the unicast peer list",
                interface.name
            );
            false
        }
        MulticastMode::Auto => true,
        MulticastMode::Enabled => {
            if !interface.multicast {
                tracing::warn!(
                    interface = %interface.name,
                    "udp: multicast enabled by configuration on {}, which lacks the \
                     MULTICAST flag",
                    interface.name
                );
            }
            true
        }
        MulticastMode::Disabled => false,
    }
}

/// Binds both unicast sockets: on the configured participant index's ports, else on the
/// lowest free index's, else — every index in `0..=max_auto_participant_index` taken — on
/// ports the kernel picks, not tied to an index (`None`), as Cyclone DDS does with
/// `ParticipantIndex` `none`: a host runs any number of participants. Peers find an
/// unindexed participant by multicast SPDP, or by its own SPDP to their well-known ports
/// (which they answer); only a peer probing the well-known ports by unicast without
/// announcing itself would miss it.
pub(super) fn allocate_index(
    domain_id: u32,
    config: &UdpConfig,
    interface: &SelectedInterface,
) -> Result<(Option<u32>, Socket, Socket), TransportError> {
    let ports = &config.ports;
    let taken = |e: io::Error| TransportError::socket("bind a unicast socket to a free port", e);
    if let Some(port) = config.metatraffic_port {
        let meta = bind_unicast(port, "metatraffic")?
            .ok_or(TransportError::MetatrafficPortTaken { port })?;
        let user =
            bind_unicast(0, "user-data")?.ok_or_else(|| taken(io::ErrorKind::AddrInUse.into()))?;
        return Ok((None, meta, user));
    }
    if let Some(index) = config.participant_index {
        return match try_index(ports, domain_id, index)? {
            Attempt::Bound(meta, user) => Ok((Some(index), meta, user)),
            Attempt::InUse(port) => Err(TransportError::ParticipantIndexTaken {
                index,
                domain_id,
                port,
            }),
        };
    }
    let max = config.max_auto_participant_index;
    for index in 0..=max {
        match try_index(ports, domain_id, index)? {
            Attempt::Bound(meta, user) => return Ok((Some(index), meta, user)),
            Attempt::InUse(port) => {
                tracing::debug!(index, port, "udp: participant index taken, trying the next");
            }
        }
    }
    let meta =
        bind_unicast(0, "metatraffic")?.ok_or_else(|| taken(io::ErrorKind::AddrInUse.into()))?;
    let user =
        bind_unicast(0, "user-data")?.ok_or_else(|| taken(io::ErrorKind::AddrInUse.into()))?;
    tracing::info!(
        domain_id,
        max,
        "udp: participant indices 0..={max} of domain {domain_id} are taken on {}: unicast \
         ports not tied to an index (peers find this participant by multicast SPDP, or by its \
         SPDP to their ports)",
        interface.address
    );
    Ok((None, meta, user))
}

/// The port a socket is bound to.
pub(super) fn bound_port(socket: &Socket) -> u16 {
    socket
        .local_addr()
        .ok()
        .and_then(|a| a.as_socket())
        .map_or(0, |a| a.port())
}

enum Attempt {
    Bound(Socket, Socket),
    InUse(u16),
}

fn try_index(ports: &PortMapping, domain_id: u32, index: u32) -> Result<Attempt, TransportError> {
    let meta_port = ports.spdp_unicast(domain_id, index)?;
    let user_port = ports.user_unicast(domain_id, index)?;
    let Some(meta) = bind_unicast(meta_port, "metatraffic")? else {
        return Ok(Attempt::InUse(meta_port));
    };
    let Some(user) = bind_unicast(user_port, "user-data")? else {
        return Ok(Attempt::InUse(user_port));
    };
    Ok(Attempt::Bound(meta, user))
}

/// The critical lane's socket: bound to `0.0.0.0` on a port the kernel picks (it is
/// announced per endpoint, so no port mapping is needed), configured as the unicast ones.
pub(super) fn open_critical(
    config: &UdpConfig,
    interface: &SelectedInterface,
) -> Result<(Socket, u16), TransportError> {
    let socket = new_udp_socket()?;
    let any = SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0);
    socket
        .bind(&any.into())
        .map_err(|e| TransportError::socket("bind the critical unicast socket", e))?;
    configure_unicast(&socket, config, interface)?;
    let port = bound_port(&socket);
    Ok((socket, port))
}

/// A UDP socket bound to `0.0.0.0:port` without SO_REUSEADDR, as Cyclone binds its unicast
/// sockets, so the two never share an index; `None` when the port is taken.
fn bind_unicast(port: u16, what: &str) -> Result<Option<Socket>, TransportError> {
    let socket = new_udp_socket()?;
    let addr = SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, port);
    match socket.bind(&addr.into()) {
        Ok(()) => Ok(Some(socket)),
        Err(e) if e.kind() == io::ErrorKind::AddrInUse => Ok(None),
        Err(e) => Err(TransportError::socket(
            format!("bind the {what} unicast socket to {addr}"),
            e,
        )),
    }
}

pub(super) fn new_udp_socket() -> Result<Socket, TransportError> {
    let socket = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))
        .map_err(|e| TransportError::socket("create a UDP socket", e))?;
    // Blocking mode, so a receive thread can block in `recvmmsg` (one system call per wake-up,
    // no epoll); every other call passes MSG_DONTWAIT and never blocks.
    socket
        .set_nonblocking(false)
        .map_err(|e| TransportError::socket("make a UDP socket blocking", e))?;
    Ok(socket)
}

/// Buffer sizes and multicast transmit options of a sending socket.
pub(super) fn configure_unicast(
    socket: &Socket,
    config: &UdpConfig,
    interface: &SelectedInterface,
) -> Result<(), TransportError> {
    set_buffer_sizes(socket, config)?;
    let err = |what: &str| {
        let what = what.to_owned();
        move |e| TransportError::socket(what, e)
    };
    socket
        .set_multicast_if_v4(&interface.address)
        .map_err(err("set IP_MULTICAST_IF"))?;
    socket
        .set_multicast_ttl_v4(config.multicast_ttl)
        .map_err(err("set IP_MULTICAST_TTL"))?;
    socket
        .set_multicast_loop_v4(config.multicast_loopback)
        .map_err(err("set IP_MULTICAST_LOOP"))
}

/// A socket bound to `0.0.0.0:port`, shareable with other participants (SO_REUSEADDR and
/// SO_REUSEPORT) and joined to `group` on the interface.
pub(super) fn open_multicast(
    id: SocketId,
    port: u16,
    group: Ipv4Addr,
    config: &UdpConfig,
    interface: &SelectedInterface,
) -> Result<Socket, TransportError> {
    let what = id.describe();
    let socket = new_udp_socket()?;
    let err = |op: &str| {
        let msg = format!("{op} on the {what} socket (port {port})");
        move |e| TransportError::socket(msg, e)
    };
    socket
        .set_reuse_address(true)
        .map_err(err("set SO_REUSEADDR"))?;
    socket
        .set_reuse_port(true)
        .map_err(err("set SO_REUSEPORT"))?;
    // Receive only the groups this socket joined, not every group joined on the host.
    socket
        .set_multicast_all_v4(false)
        .map_err(err("clear IP_MULTICAST_ALL"))?;
    set_buffer_sizes(&socket, config)?;
    let addr = SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, port);
    socket
        .bind(&addr.into())
        .map_err(err(&format!("bind to {addr}")))?;
    socket
        .join_multicast_v4(&group, &interface.address)
        .map_err(|source| TransportError::MulticastJoin {
            group,
            interface: interface.name.clone(),
            address: interface.address,
            port,
            source,
        })?;
    Ok(socket)
}

/// What a receive socket asks for when the configuration says nothing: room for a burst of
/// large datagrams (64 KiB ones on loopback; Cyclone DDS asks for at least 1 MiB). The kernel
/// caps it at `net.core.rmem_max` without complaint, and so do we (debug log only).
pub const DEFAULT_RECEIVE_BUFFER: usize = 4 << 20;

/// SO_RCVBUF / SO_SNDBUF as configured (a warning when the kernel grants less), or the
/// default receive buffer.
fn set_buffer_sizes(socket: &Socket, config: &UdpConfig) -> Result<(), TransportError> {
    if config.receive_buffer_size.is_none() {
        let _ = socket.set_recv_buffer_size(DEFAULT_RECEIVE_BUFFER);
        let got = socket.recv_buffer_size().unwrap_or(0) / 2;
        tracing::debug!(
            asked = DEFAULT_RECEIVE_BUFFER,
            got,
            "udp: default receive buffer"
        );
    }
    if let Some(size) = config.receive_buffer_size {
        socket
            .set_recv_buffer_size(size)
            .map_err(|e| TransportError::socket(format!("set SO_RCVBUF to {size}"), e))?;
        // Linux reports twice the usable size it granted (bookkeeping overhead).
        let got = socket.recv_buffer_size().unwrap_or(0) / 2;
        if got < size {
            tracing::warn!(
                asked = size,
                got,
                "udp: receive buffer is {got} bytes, not {size}: raise net.core.rmem_max"
            );
        }
    }
    if let Some(size) = config.send_buffer_size {
        socket
            .set_send_buffer_size(size)
            .map_err(|e| TransportError::socket(format!("set SO_SNDBUF to {size}"), e))?;
        let got = socket.send_buffer_size().unwrap_or(0) / 2;
        if got < size {
            tracing::warn!(
                asked = size,
                got,
                "udp: send buffer is {got} bytes, not {size}: raise net.core.wmem_max"
            );
        }
    }
    Ok(())
}
