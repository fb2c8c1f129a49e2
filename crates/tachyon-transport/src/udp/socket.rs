//! The transport's sockets: their ids and the per-socket TRANSPORT_PRIORITY cache.

use crate::priority;
use crate::sys;
use socket2::Socket;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicI32, Ordering};

/// One of the transport's sockets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SocketId {
    /// Metatraffic (discovery) unicast: receives directed SPDP, SEDP; sends discovery.
    MetaUnicast,
    /// SPDP multicast group on the metatraffic multicast port (only when multicast is used).
    MetaMulticast,
    /// User-data unicast: receives and sends user data and its reliability traffic.
    UserUnicast,
    /// SPDP group on the user-data multicast port (only when multicast is used).
    UserMulticast,
    /// Critical user data: receives what is sent to critical writers and readers, sends the
    /// datagrams of TRANSPORT_PRIORITY above `UdpConfig::critical_priority` (only when that
    /// is set).
    CriticalUnicast,
}

impl SocketId {
    /// Every socket id, in `index()` order.
    pub const ALL: [SocketId; 5] = [
        SocketId::MetaUnicast,
        SocketId::MetaMulticast,
        SocketId::UserUnicast,
        SocketId::UserMulticast,
        SocketId::CriticalUnicast,
    ];

    /// A small dense index (0..5), e.g. for a mio `Token`.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The id with this `index()`.
    pub fn from_index(index: usize) -> Option<Self> {
        Self::ALL.get(index).copied()
    }

    /// True for the two multicast sockets.
    pub fn is_multicast(self) -> bool {
        matches!(self, SocketId::MetaMulticast | SocketId::UserMulticast)
    }

    pub(super) fn describe(self) -> &'static str {
        match self {
            SocketId::MetaUnicast => "metatraffic unicast",
            SocketId::MetaMulticast => "metatraffic multicast",
            SocketId::UserUnicast => "user-data unicast",
            SocketId::UserMulticast => "user-data multicast",
            SocketId::CriticalUnicast => "critical user-data unicast",
        }
    }
}

/// A bound socket with the TRANSPORT_PRIORITY key it was last set to.
#[derive(Debug)]
pub(super) struct Sock {
    /// The socket.
    pub(super) socket: Socket,
    /// Its local port.
    pub(super) port: u16,
    /// The `priority_key` its options were last set for.
    priority: AtomicI32,
}

impl Sock {
    pub(super) fn new(socket: Socket, port: u16) -> Self {
        Sock {
            socket,
            port,
            // A fresh socket has TOS 0 and SO_PRIORITY 0, i.e. key 0.
            priority: AtomicI32::new(0),
        }
    }
}

/// Set DSCP then SO_PRIORITY for `priority` unless the socket already has them.
pub(super) fn apply_priority(sock: &Sock, priority: i32) {
    let key = priority::priority_key(priority);
    // Read before swapped: a socket whose priority stays the same (every send of a writer)
    // costs no atomic read-modify-write.
    if sock.priority.load(Ordering::Relaxed) == key
        || sock.priority.swap(key, Ordering::Relaxed) == key
    {
        return;
    }
    let fd = sock.socket.as_raw_fd();
    // IP_TOS first: Linux derives sk_priority from the TOS byte, SO_PRIORITY then overrides it.
    let tos = priority::tos(priority);
    if let Err(e) = sys::set_int_option(fd, libc::IPPROTO_IP, libc::IP_TOS, tos.into()) {
        tracing::warn!(priority, tos, error = %e, "udp: cannot set IP_TOS");
    }
    let so = priority::so_priority(priority);
    if let Err(e) = sys::set_int_option(fd, libc::SOL_SOCKET, libc::SO_PRIORITY, so) {
        tracing::warn!(priority, so_priority = so, error = %e, "udp: cannot set SO_PRIORITY");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::udp::setup::new_udp_socket;

    #[test]
    fn socket_ids_are_dense() {
        for (i, id) in SocketId::ALL.iter().enumerate() {
            assert_eq!(id.index(), i);
            assert_eq!(SocketId::from_index(i), Some(*id));
        }
        assert_eq!(SocketId::from_index(5), None);
        assert!(SocketId::UserMulticast.is_multicast() && !SocketId::UserUnicast.is_multicast());
    }

    /// Sets options on an unbound socket: nothing is sent, so no network namespace is needed.
    #[test]
    fn priority_sets_tos_and_so_priority_only_on_change() {
        let s = Sock::new(new_udp_socket().unwrap(), 0);
        apply_priority(&s, 5);
        assert_eq!(s.socket.tos().unwrap(), 0xa0);
        assert_eq!(so_priority_of(&s), 5);
        // Same key: the cache skips the syscalls, so a value changed behind its back stays.
        s.socket.set_tos(0).unwrap();
        apply_priority(&s, 5);
        assert_eq!(s.socket.tos().unwrap(), 0);
        apply_priority(&s, 100);
        assert_eq!((s.socket.tos().unwrap(), so_priority_of(&s)), (0xe0, 6));
        apply_priority(&s, -4);
        assert_eq!((s.socket.tos().unwrap(), so_priority_of(&s)), (0, 0));
    }

    fn so_priority_of(s: &Sock) -> i32 {
        sys::get_int_option(s.socket.as_raw_fd(), libc::SOL_SOCKET, libc::SO_PRIORITY).unwrap()
    }
}
