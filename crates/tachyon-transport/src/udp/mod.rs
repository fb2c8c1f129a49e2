//! The UDPv4 transport: sockets bound by the RTPS port mapping, batched receive and send.
//!
//! # Zero-configuration discovery, and what Cyclone DDS 0.10 does
//!
//! Read from Cyclone DDS 0.10.2 (`src/core/ddsi/...` at tag 0.10.2) and checked with
//! `ddsperf` 0.10.2 in a network namespace whose `lo` has no MULTICAST flag:
//!
//! - The default `ParticipantIndex` is "none" (`defconfig.c:33`, `-2`): with multicast, unicast
//!   ports are ephemeral. When the selected interface is not multicast-capable, Cyclone logs
//!   "not multicast-capable: disabling multicast" and forces the index to "auto"
//!   (`q_init.c:1388-1399`).
//! - "auto" binds the first index `0..=MaxAutoParticipantIndex` (default 9, `defconfig.c:34`)
//!   whose metatraffic (d1) and user (d3) unicast ports both bind (`q_init.c:1601-1631`,
//!   `make_uc_sockets` at `q_init.c:98`). Receive sockets bind `INADDR_ANY:port` without
//!   SO_REUSEADDR (`ddsi_udp.c:453-458`), so an index is taken whatever address another
//!   process bound. Tachyon binds the same way, so both allocate indices from one pool.
//! - Without configured peers, the interface's own address is added as an SPDP peer
//!   (`q_init.c:1836-1848`) and expanded to ports of indices `0..maxidx` — note `<`, i.e.
//!   indices 0..=8 for the default 9 (`q_addrset.c:73-86`; master fixed it to `<=`).
//!   Measured: `ddsperf sub` (domain 0) bound 0.0.0.0:7410/7411 and sent SPDP to 127.0.0.1
//!   ports 7410, 7412, …, 7426 (index 8), never 7428. With a Tachyon transport already on
//!   index 0 of domain 3, ddsperf took index 1 (8162/8163) and its SPDP arrived on Tachyon's
//!   metatraffic socket (8160); started the other way round, Tachyon took index 1.
//! - On receiving a non-directed SPDP message from a participant without multicast locators,
//!   Cyclone adds its metatraffic unicast locator to its discovery set and answers
//!   (`q_ddsi_discovery.c:312-322, 944-960`). So a Tachyon participant that took index 9 is
//!   still found: its SPDP (sent to indices 0..=9) reaches Cyclone, which then answers it.
//! - Multicast sockets bind `INADDR_ANY:7400+250d` (and `+1`) with SO_REUSEADDR and
//!   SO_REUSEPORT (`ddsrt/src/sockets.c:431-448`) and both join the SPDP group
//!   (`q_init.c:659-672`).
//!
//! Tachyon therefore: allocates the index the same way, binds `0.0.0.0:port`, and without
//! multicast and peers sends SPDP to the interface's address and 127.0.0.1 on indices
//! `0..=max_auto_participant_index` (which covers every index Cyclone can take).

mod connected;
mod destinations;
mod setup;
mod socket;
mod transport;

pub use socket::SocketId;
pub use transport::{ETHERNET_MAX_DATAGRAM, LOOPBACK_MAX_DATAGRAM};

use crate::batch::RecvBatch;
use crate::config::UdpConfig;
use crate::error::TransportError;
use crate::interface::{select_interface, SelectedInterface};
use crate::stats::{Counters, TransportStats};
use crate::sys;
use destinations::{locator, spdp_destinations, udpv4_destination};
use setup::{
    allocate_index, bound_port, configure_unicast, open_critical, open_multicast, use_multicast,
};
use socket::{apply_priority, Sock};
use std::io;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use tachyon_wire::Locator;

/// The UDPv4 transport of one participant: its sockets, locators and SPDP destinations.
///
/// Sans-async: every socket is non-blocking and exposed by [`sockets`](Self::sockets) for the
/// runtime to register with epoll/mio; call [`recv_batch`](Self::recv_batch) when one is
/// readable. All methods take `&self`, so one thread may receive while another sends.
#[derive(Debug)]
pub struct UdpTransport {
    domain_id: u32,
    participant_index: Option<u32>,
    interface: SelectedInterface,
    multicast: bool,
    /// `IP_MULTICAST_LOOP` of its sockets (`UdpConfig::multicast_loopback`).
    multicast_loopback: bool,
    /// `IP_MULTICAST_TTL` of its sockets (`UdpConfig::multicast_ttl`).
    multicast_ttl: u32,
    sockets: [Option<Sock>; 5],
    /// Datagrams of priority above this leave from the critical socket (when it is open).
    critical_priority: Option<i32>,
    metatraffic_unicast: Vec<Locator>,
    metatraffic_multicast: Vec<Locator>,
    default_unicast: Vec<Locator>,
    default_multicast: Vec<Locator>,
    spdp_destinations: Vec<Locator>,
    counters: Counters,
    /// What [`Transport::locators`](crate::Transport::locators) returns.
    announced: crate::TransportLocators,
    /// The buffers it lends.
    pool: crate::TxPool,
    /// Sockets connected to the unicast destinations of user data (`connected.rs`).
    connected: connected::Connected,
}

impl UdpTransport {
    /// Select the interface, allocate the participant index and bind the sockets of
    /// `domain_id` as `config` says.
    pub fn open(domain_id: u32, config: &UdpConfig) -> Result<UdpTransport, TransportError> {
        let ports = &config.ports;
        let meta_mc_port = ports.spdp_multicast(domain_id)?;
        let user_mc_port = ports.user_multicast(domain_id)?;
        let interface = select_interface(config.interface.as_deref())?;
        let multicast = use_multicast(config.multicast, &interface);
        let group = config.spdp_multicast_group;
        if multicast && !group.is_multicast() {
            return Err(TransportError::NotMulticast(group));
        }

        let (participant_index, meta_uc, user_uc) = allocate_index(domain_id, config, &interface)?;
        for s in [&meta_uc, &user_uc] {
            configure_unicast(s, config, &interface)?;
        }
        let mut sockets: [Option<Sock>; 5] = Default::default();
        if multicast {
            for (id, port) in [
                (SocketId::MetaMulticast, meta_mc_port),
                (SocketId::UserMulticast, user_mc_port),
            ] {
                let s = open_multicast(id, port, group, config, &interface)?;
                sockets[id.index()] = Some(Sock::new(s, port));
            }
        }
        let meta_uc_port = bound_port(&meta_uc);
        let user_uc_port = bound_port(&user_uc);
        sockets[SocketId::MetaUnicast.index()] = Some(Sock::new(meta_uc, meta_uc_port));
        sockets[SocketId::UserUnicast.index()] = Some(Sock::new(user_uc, user_uc_port));
        let mut critical_unicast = Vec::new();
        if config.critical_priority.is_some() {
            let (s, port) = open_critical(config, &interface)?;
            sockets[SocketId::CriticalUnicast.index()] = Some(Sock::new(s, port));
            critical_unicast.push(locator(interface.address, port));
        }

        let spdp_destinations = spdp_destinations(domain_id, config, &interface, multicast)?;
        let addr = interface.address;
        let mc = |port| {
            if multicast {
                vec![locator(group, port)]
            } else {
                Vec::new()
            }
        };
        let announced = crate::TransportLocators {
            metatraffic_unicast: vec![locator(addr, meta_uc_port)],
            metatraffic_multicast: mc(meta_mc_port),
            default_unicast: vec![locator(addr, user_uc_port)],
            default_multicast: mc(user_mc_port),
            spdp_destinations: spdp_destinations.clone(),
            critical_unicast,
        };
        let pool = crate::TxPool::new(transport::max_datagram(&interface), transport::POOL_KEEP);
        let transport = UdpTransport {
            announced,
            pool,
            connected: connected::Connected::new(
                config.connected_destinations,
                config.send_buffer_size,
            ),
            critical_priority: config.critical_priority,
            domain_id,
            participant_index,
            multicast,
            multicast_loopback: config.multicast_loopback,
            multicast_ttl: config.multicast_ttl,
            sockets,
            metatraffic_unicast: vec![locator(addr, meta_uc_port)],
            metatraffic_multicast: mc(meta_mc_port),
            default_unicast: vec![locator(addr, user_uc_port)],
            default_multicast: mc(user_mc_port),
            spdp_destinations,
            counters: Counters::default(),
            interface,
        };
        let index = participant_index.map_or_else(|| "none".to_owned(), |i| i.to_string());
        tracing::info!(
            domain_id,
            participant_index = %index,
            interface = %transport.interface.name,
            multicast,
            "udp: domain {domain_id} participant index {index}: unicast ports \
             {meta_uc_port} (metatraffic) and {user_uc_port} (user data){}; SPDP to {} \
             destination(s)",
            if multicast {
                format!(", multicast {group} ports {meta_mc_port} and {user_mc_port}")
            } else {
                String::new()
            },
            transport.spdp_destinations.len(),
        );
        Ok(transport)
    }

    // ---- inputs ----------------------------------------------------------------------------

    /// Receive as many datagrams as `batch` has slots (or the socket has queued) with
    /// `recvmmsg`, without blocking. Returns how many are in the batch; 0 when none is queued.
    /// Datagrams larger than a slot are counted in [`TransportStats::truncated`] and skipped.
    pub fn recv_batch(&self, socket: SocketId, batch: &mut RecvBatch) -> io::Result<usize> {
        let sock = self.sock(socket)?;
        batch.fill(sock.socket.as_raw_fd(), &self.counters, false)
    }

    /// Like [`recv_batch`](Self::recv_batch), but blocks in `recvmmsg` until the first datagram
    /// arrives: one system call per wake-up, for a thread that serves this socket alone. Returns
    /// 0 once [`interrupt_receivers`](Self::interrupt_receivers) was called.
    pub fn recv_batch_wait(&self, socket: SocketId, batch: &mut RecvBatch) -> io::Result<usize> {
        let sock = self.sock(socket)?;
        batch.fill(sock.socket.as_raw_fd(), &self.counters, true)
    }

    /// Wakes every thread blocked in [`recv_batch_wait`](Self::recv_batch_wait), for good: the
    /// sockets are shut down for reading (sending still works, for the last announcements).
    pub fn interrupt_receivers(&self) {
        for s in self.sockets.iter().flatten() {
            sys::shutdown_read(s.socket.as_raw_fd());
        }
    }

    // ---- outputs ---------------------------------------------------------------------------

    /// Send `data` to `dest` from the user-data unicast socket, tagged with `priority`
    /// (TRANSPORT_PRIORITY, see [`priority`](crate::priority)).
    ///
    /// A destination that is not a UDPv4 locator is skipped and counted; a full socket or
    /// device queue (EAGAIN/ENOBUFS) is a counted drop. Both return `Ok`: UDP is lossy and
    /// reliability repairs. Any other error is returned.
    pub fn send_to(&self, dest: &Locator, data: &[u8], priority: i32) -> io::Result<()> {
        self.send_one(self.user_socket(priority), dest, data, priority, true)
    }

    /// Like [`send_to`](Self::send_to), always from the user-data (or critical) socket
    /// itself, never a connected one: for datagrams whose source port must be that socket's
    /// (the AF_XDP transport's kernel fallback, whose ring sends with that port).
    pub fn send_unconnected_to(
        &self,
        dest: &Locator,
        data: &[u8],
        priority: i32,
    ) -> io::Result<()> {
        self.send_one(self.user_socket(priority), dest, data, priority, false)
    }

    /// Send the same `data` to every destination from the user-data unicast socket with one
    /// `sendmmsg` per 64 destinations (the datagram is not copied per destination).
    ///
    /// Skips and drops are counted as for [`send_to`](Self::send_to); after any other error
    /// the remaining destinations are still tried and the first error is returned.
    pub fn send_to_many(&self, dests: &[Locator], data: &[u8], priority: i32) -> io::Result<()> {
        self.send_many(self.user_socket(priority), dests, data, priority)
    }

    /// The socket user data of `priority` leaves from: the critical one above the critical
    /// priority (when open), else the user-data unicast socket.
    fn user_socket(&self, priority: i32) -> SocketId {
        let critical = self.critical_priority.is_some_and(|c| priority > c)
            && self.sockets[SocketId::CriticalUnicast.index()].is_some();
        if critical {
            SocketId::CriticalUnicast
        } else {
            SocketId::UserUnicast
        }
    }

    /// Like [`send_to`](Self::send_to), from the metatraffic unicast socket (discovery).
    pub fn send_meta_to(&self, dest: &Locator, data: &[u8], priority: i32) -> io::Result<()> {
        self.send_one(SocketId::MetaUnicast, dest, data, priority, false)
    }

    /// Like [`send_to_many`](Self::send_to_many), from the metatraffic unicast socket.
    pub fn send_meta_to_many(
        &self,
        dests: &[Locator],
        data: &[u8],
        priority: i32,
    ) -> io::Result<()> {
        self.send_many(SocketId::MetaUnicast, dests, data, priority)
    }

    // ---- getters ---------------------------------------------------------------------------

    /// The domain id the transport was opened for.
    pub fn domain_id(&self) -> u32 {
        self.domain_id
    }

    /// The participant index whose unicast ports this transport bound; `None` when every
    /// automatic index was taken and the ports are not tied to one.
    pub fn participant_index(&self) -> Option<u32> {
        self.participant_index
    }

    /// The selected network interface.
    pub fn interface(&self) -> &SelectedInterface {
        &self.interface
    }

    /// True when the multicast sockets exist and SPDP goes to the multicast group.
    pub fn uses_multicast(&self) -> bool {
        self.multicast
    }

    /// Whether this host's members of a group receive what the transport sends to it
    /// (`IP_MULTICAST_LOOP`).
    pub fn multicast_loopback(&self) -> bool {
        self.multicast_loopback
    }

    /// How many routers its multicast may cross (`IP_MULTICAST_TTL`; 1: the link only).
    pub fn multicast_ttl(&self) -> u32 {
        self.multicast_ttl
    }

    /// Metatraffic unicast locators to advertise in SPDP.
    pub fn metatraffic_unicast_locators(&self) -> &[Locator] {
        &self.metatraffic_unicast
    }

    /// Metatraffic multicast locators to advertise in SPDP (empty without multicast).
    pub fn metatraffic_multicast_locators(&self) -> &[Locator] {
        &self.metatraffic_multicast
    }

    /// Default (user-data) unicast locators to advertise in SPDP.
    pub fn default_unicast_locators(&self) -> &[Locator] {
        &self.default_unicast
    }

    /// Default (user-data) multicast locators to advertise in SPDP (empty without multicast).
    pub fn default_multicast_locators(&self) -> &[Locator] {
        &self.default_multicast
    }

    /// Where SPDP announcements go: the multicast group (if used), then every peer's
    /// metatraffic unicast port for each of its participant indices, without duplicates.
    pub fn spdp_destinations(&self) -> &[Locator] {
        &self.spdp_destinations
    }

    /// Every open socket with its file descriptor, to register with epoll/mio (readable).
    pub fn sockets(&self) -> Vec<(SocketId, RawFd)> {
        SocketId::ALL
            .iter()
            .filter_map(|&id| self.socket_fd(id).map(|fd| (id, fd)))
            .collect()
    }

    /// The file descriptor of one socket, if it is open.
    pub fn socket_fd(&self, socket: SocketId) -> Option<RawFd> {
        self.sockets[socket.index()]
            .as_ref()
            .map(|s| s.socket.as_raw_fd())
    }

    /// One socket, borrowed, if it is open (for safe option reads, e.g. with `socket2::SockRef`).
    pub fn socket_as_fd(&self, socket: SocketId) -> Option<BorrowedFd<'_>> {
        self.sockets[socket.index()]
            .as_ref()
            .map(|s| s.socket.as_fd())
    }

    /// The local port of one socket, if it is open.
    pub fn port(&self, socket: SocketId) -> Option<u16> {
        self.sockets[socket.index()].as_ref().map(|s| s.port)
    }

    /// The counters since the transport was opened.
    pub fn stats(&self) -> TransportStats {
        self.counters.snapshot()
    }

    // ---- helpers ---------------------------------------------------------------------------

    fn sock(&self, socket: SocketId) -> io::Result<&Sock> {
        self.sockets[socket.index()].as_ref().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("no {} socket: multicast is not used", socket.describe()),
            )
        })
    }

    /// Sends `data` to `dest` from socket `from`, or from the socket connected to `dest`
    /// (`connect`: user data, `connected.rs`).
    fn send_one(
        &self,
        from: SocketId,
        dest: &Locator,
        data: &[u8],
        prio: i32,
        connect: bool,
    ) -> io::Result<()> {
        let Some(addr) = udpv4_destination(dest) else {
            self.skip(dest);
            return Ok(());
        };
        if connect {
            let sent = self.connected.send_with(from, addr, |sock| {
                apply_priority(sock, prio);
                retrying(|| sys::send(sock.socket.as_raw_fd(), data, libc::MSG_DONTWAIT))
            });
            match sent {
                None => {}
                Some(Err(e)) if e.kind() == io::ErrorKind::ConnectionRefused => {
                    // Nothing was sent: it goes unconnected, as it would have without.
                    self.connected.refused(from, addr);
                }
                Some(sent) => return self.count_sent(data, sent),
            }
        }
        let sock = self.sock(from)?;
        apply_priority(sock, prio);
        let fd = sock.socket.as_raw_fd();
        let sent = retrying(|| sys::send_to(fd, data, libc::MSG_DONTWAIT, addr));
        self.count_sent(data, sent)
    }

    /// Counts what a send of `data` did: a full buffer is a drop, not an error.
    fn count_sent(&self, data: &[u8], sent: io::Result<usize>) -> io::Result<()> {
        match sent {
            Ok(_) => {
                Counters::add(&self.counters.datagrams_sent, 1);
                Counters::add(&self.counters.bytes_sent, data.len() as u64);
                Ok(())
            }
            Err(e) if is_drop(&e) => {
                Counters::add(&self.counters.send_drops, 1);
                Ok(())
            }
            Err(e) => {
                Counters::add(&self.counters.send_errors, 1);
                Err(e)
            }
        }
    }

    fn send_many(
        &self,
        from: SocketId,
        dests: &[Locator],
        data: &[u8],
        prio: i32,
    ) -> io::Result<()> {
        let sock = self.sock(from)?;
        apply_priority(sock, prio);
        let fd = sock.socket.as_raw_fd();
        let mut chunk = [SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0); sys::SEND_CHUNK];
        let mut n = 0;
        let mut first_error = None;
        for dest in dests {
            match udpv4_destination(dest) {
                Some(addr) => {
                    chunk[n] = addr;
                    n += 1;
                    if n == chunk.len() {
                        self.flush(fd, data, &chunk[..n], &mut first_error);
                        n = 0;
                    }
                }
                None => self.skip(dest),
            }
        }
        self.flush(fd, data, &chunk[..n], &mut first_error);
        first_error.map_or(Ok(()), Err)
    }

    /// `sendmmsg` until every destination of `dests` was sent, dropped or failed.
    fn flush(
        &self,
        fd: RawFd,
        data: &[u8],
        dests: &[SocketAddrV4],
        first_error: &mut Option<io::Error>,
    ) {
        let c = &self.counters;
        let mut done = 0;
        while done < dests.len() {
            match sys::sendmmsg(fd, data, &dests[done..]) {
                Ok(sent) => {
                    // sendmmsg reports a failure of the first message as an error, so
                    // `sent` is at least 1; `max(1)` guarantees progress regardless.
                    let sent = sent.max(1);
                    Counters::add(&c.datagrams_sent, sent as u64);
                    Counters::add(&c.bytes_sent, (sent * data.len()) as u64);
                    done += sent;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if is_drop(&e) => {
                    Counters::add(&c.send_drops, 1);
                    done += 1;
                }
                Err(e) => {
                    tracing::debug!(dest = %dests[done], error = %e, "udp: send failed");
                    Counters::add(&c.send_errors, 1);
                    first_error.get_or_insert(e);
                    done += 1;
                }
            }
        }
    }

    fn skip(&self, dest: &Locator) {
        Counters::add(&self.counters.skipped_locators, 1);
        tracing::trace!(%dest, "udp: skipped a destination that is not a UDPv4 locator");
    }
}

/// EAGAIN (socket buffer full) and ENOBUFS (device queue full): drops, not errors.
/// Runs `send` again while a signal interrupts it.
fn retrying(send: impl Fn() -> io::Result<usize>) -> io::Result<usize> {
    loop {
        match send() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            sent => return sent,
        }
    }
}

fn is_drop(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::WouldBlock || e.raw_os_error() == Some(libc::ENOBUFS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transport_can_be_shared_between_a_receiving_and_a_sending_thread() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<UdpTransport>();
        send_sync::<RecvBatch>();
    }
}
