//! Connected sockets for the unicast destinations user data goes to.
//!
//! A `sendto` on an unconnected UDP socket makes the kernel look the route up and check the
//! address for every datagram; a socket `connect`ed to the destination keeps the route and
//! sends with a plain `send`. Measured on the project's machine (loopback, 100 B, a `send`
//! and a `recv` per datagram, alternating): 3.1–3.4 µs against 3.5–4.3 µs, about 0.4 µs less
//! per datagram, and a ping-pong sends two per round trip. So user data to a unicast
//! destination leaves from a socket connected to it, opened at the first datagram: up to
//! `UdpConfig::connected_destinations` of them (32 by default), then the others go as before,
//! through `sendto` on the user-data socket. Multicast and several destinations at once
//! (`sendmmsg`) keep the unconnected path, and so does discovery.
//!
//! What changes on the wire is the source port: a connected socket has an ephemeral one,
//! as Cyclone DDS's and Fast DDS's transmit sockets do. RTPS answers go to the locators a
//! participant announces, never to a datagram's source, and nothing is read from these
//! sockets (their receive buffer is the smallest the kernel allows).
//!
//! A connected socket learns that its destination is gone: after the kernel received an ICMP
//! "port unreachable" for an earlier datagram, the next `send` fails with `ECONNREFUSED`
//! (and sends nothing). That datagram goes unconnected instead, as it would have without
//! this module, and the destination is not connected again until its entry is reclaimed.
//! When the table is full, a new destination reclaims the entries not used since the last
//! time that happened (a second-chance sweep, at most once a second: meanwhile a destination
//! without room goes unconnected at the cost of a look under the read lock), so the
//! destinations of departed readers do not hold their sockets for ever.

use std::net::SocketAddrV4;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use super::setup::new_udp_socket;
use super::socket::{Sock, SocketId};

/// How long a full table stays as it is before a new destination may reclaim entries: a
/// destination that finds no room goes unconnected without the table's write lock meanwhile.
const SWEEP_INTERVAL_NANOS: u64 = 1_000_000_000;

/// The connected sockets of one transport, at most `limit`.
#[derive(Debug)]
pub(super) struct Connected {
    limit: usize,
    send_buffer_size: Option<usize>,
    entries: RwLock<Vec<Entry>>,
    /// When the last sweep ran (coarse monotonic nanoseconds; 0: never).
    swept_at: AtomicU64,
}

#[derive(Debug)]
struct Entry {
    /// The transport's socket the datagrams would otherwise leave from (its TRANSPORT_PRIORITY
    /// class: user data or critical).
    from: SocketId,
    to: SocketAddrV4,
    /// `None`: the destination refused a datagram; sent unconnected until reclaimed.
    sock: Option<Arc<Sock>>,
    /// Used since the last sweep.
    used: AtomicBool,
}

/// What to send a datagram through.
pub(super) enum Route {
    /// The socket connected to the destination.
    Connected(Arc<Sock>),
    /// `sendto` on the transport's own socket.
    Unconnected,
}

impl Connected {
    pub(super) fn new(limit: usize, send_buffer_size: Option<usize>) -> Self {
        Connected {
            limit,
            send_buffer_size,
            entries: RwLock::new(Vec::new()),
            swept_at: AtomicU64::new(0),
        }
    }

    /// How many destinations have a connected socket now.
    #[cfg(test)]
    fn open_count(&self) -> usize {
        self.entries
            .read()
            .map_or(0, |e| e.iter().filter(|e| e.sock.is_some()).count())
    }

    /// Runs `send` on the socket connected to `to` for datagrams from `from` (opened now if
    /// it has none and there is room), under the table's read lock
    /// rather than with a reference of its own: no reference count taken
    /// and dropped per datagram (two atomic read-modify-writes). The send does not block
    /// (`MSG_DONTWAIT`), and other senders share the read lock: only opening, refusing or
    /// sweeping an entry (each rare) waits for it. `None`: the datagram goes unconnected.
    pub(super) fn send_with<R>(
        &self,
        from: SocketId,
        to: SocketAddrV4,
        send: impl FnOnce(&Sock) -> R,
    ) -> Option<R> {
        if self.limit == 0 || to.ip().is_multicast() || to.ip().is_broadcast() {
            return None;
        }
        if let Ok(entries) = self.entries.read() {
            if let Some(e) = entries.iter().find(|e| e.to == to && e.from == from) {
                let sock = e.sock.as_deref()?;
                if !e.used.load(Ordering::Relaxed) {
                    e.used.store(true, Ordering::Relaxed);
                }
                return Some(send(sock));
            }
            if entries.len() >= self.limit && !self.may_sweep() {
                return None;
            }
        }
        match self.open(from, to) {
            Route::Connected(sock) => Some(send(&sock)),
            Route::Unconnected => None,
        }
    }

    /// Whether a full table may be swept now (none was in the last second).
    fn may_sweep(&self) -> bool {
        let swept = self.swept_at.load(Ordering::Relaxed);
        swept == 0 || crate::clock::coarse_nanos().saturating_sub(swept) >= SWEEP_INTERVAL_NANOS
    }

    /// `to` refused a datagram sent connected: it is sent unconnected from now on (until its
    /// entry is reclaimed), and its socket is closed once the last sender lets go of it.
    pub(super) fn refused(&self, from: SocketId, to: SocketAddrV4) {
        let Ok(mut entries) = self.entries.write() else {
            return;
        };
        if let Some(e) = entries.iter_mut().find(|e| e.to == to && e.from == from) {
            e.sock = None;
            e.used.store(false, Ordering::Relaxed);
        }
        tracing::debug!(destination = %to, "udp: destination refused a datagram (ICMP port \
            unreachable): sent unconnected from now on");
    }

    fn open(&self, from: SocketId, to: SocketAddrV4) -> Route {
        let Ok(mut entries) = self.entries.write() else {
            return Route::Unconnected;
        };
        // Another thread may have opened it meanwhile.
        if let Some(e) = entries.iter().find(|e| e.to == to && e.from == from) {
            return match &e.sock {
                Some(s) => Route::Connected(Arc::clone(s)),
                None => Route::Unconnected,
            };
        }
        if entries.len() >= self.limit {
            if !self.may_sweep() {
                return Route::Unconnected;
            }
            let now = crate::clock::coarse_nanos().max(1);
            self.swept_at.store(now, Ordering::Relaxed);
            // Second chance: what was not used since the last sweep goes.
            entries.retain(|e| e.used.swap(false, Ordering::Relaxed));
            if entries.len() >= self.limit {
                return Route::Unconnected;
            }
        }
        let sock = match self.connect(to) {
            Ok(s) => Some(Arc::new(s)),
            Err(e) => {
                // Not connected, and not tried again until reclaimed: sent as before.
                tracing::debug!(destination = %to, error = %e,
                    "udp: no connected socket for this destination: sent unconnected");
                None
            }
        };
        let route = match &sock {
            Some(s) => Route::Connected(Arc::clone(s)),
            None => Route::Unconnected,
        };
        entries.push(Entry {
            from,
            to,
            sock,
            used: AtomicBool::new(true),
        });
        route
    }

    fn connect(&self, to: SocketAddrV4) -> std::io::Result<Sock> {
        let socket = new_udp_socket().map_err(std::io::Error::other)?;
        // Nothing is read from it: the smallest receive buffer the kernel gives.
        let _ = socket.set_recv_buffer_size(0);
        if let Some(size) = self.send_buffer_size {
            let _ = socket.set_send_buffer_size(size);
        }
        socket.connect(&to.into())?;
        let port = socket
            .local_addr()
            .ok()
            .and_then(|a| a.as_socket())
            .map_or(0, |a| a.port());
        Ok(Sock::new(socket, port))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, SocketAddr, UdpSocket};

    /// The socket a datagram from `from` to `to` would leave through (its address, to tell
    /// sockets apart, and its port), when connected.
    fn via(c: &Connected, from: SocketId, to: SocketAddrV4) -> Option<(usize, u16)> {
        c.send_with(from, to, |s| (s as *const Sock as usize, s.port))
    }

    fn connected(c: &Connected, to: SocketAddrV4) -> bool {
        via(c, SocketId::UserUnicast, to).is_some()
    }

    fn local() -> (UdpSocket, SocketAddrV4) {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        let SocketAddr::V4(a) = s.local_addr().unwrap() else {
            unreachable!()
        };
        (s, a)
    }

    #[test]
    fn a_destination_gets_one_socket_and_multicast_none() {
        let c = Connected::new(4, None);
        let (_r, to) = local();
        let a = via(&c, SocketId::UserUnicast, to).expect("connected");
        let b = via(&c, SocketId::UserUnicast, to).expect("connected");
        assert_eq!(a, b);
        assert_ne!(a.1, 0);
        // Another class of traffic to the same destination has its own.
        let crit = via(&c, SocketId::CriticalUnicast, to).expect("connected");
        assert_ne!(a.0, crit.0);
        let group = SocketAddrV4::new(Ipv4Addr::new(239, 255, 0, 1), 7401);
        assert!(!connected(&c, group));
        assert_eq!(c.open_count(), 2);
    }

    #[test]
    fn none_when_disabled_and_the_unused_ones_make_room_when_full() {
        let off = Connected::new(0, None);
        let (_r, to) = local();
        assert!(!connected(&off, to));

        let c = Connected::new(2, None);
        let (_r1, a) = local();
        let (_r2, b) = local();
        let (_r3, d) = local();
        assert!(connected(&c, a));
        assert!(connected(&c, b));
        // Full, and both used since the last sweep: the first sweep spares them.
        assert!(!connected(&c, d));
        // `a` used again, `b` not; within the second no sweep runs again.
        assert!(connected(&c, a));
        assert!(!connected(&c, d));
        // A second later, the next sweep reclaims `b` for `d`.
        let earlier = crate::clock::coarse_nanos().saturating_sub(SWEEP_INTERVAL_NANOS);
        c.swept_at.store(earlier.max(1), Ordering::Relaxed);
        assert!(connected(&c, d));
        assert_eq!(c.open_count(), 2);
    }

    #[test]
    fn a_refused_destination_is_sent_unconnected() {
        let c = Connected::new(4, None);
        let (_r, to) = local();
        assert!(connected(&c, to));
        c.refused(SocketId::UserUnicast, to);
        assert!(!connected(&c, to));
        assert_eq!(c.open_count(), 0);
    }

    #[test]
    fn a_send_reaches_the_destination_through_its_socket() {
        let c = Connected::new(4, None);
        let (r, to) = local();
        let sent = c.send_with(SocketId::UserUnicast, to, |s| s.socket.send(b"ping"));
        assert_eq!(sent.expect("connected").expect("sent"), 4);
        let mut buf = [0u8; 8];
        assert_eq!(r.recv(&mut buf).expect("received"), 4);
        assert_eq!(&buf[..4], b"ping");
    }
}
