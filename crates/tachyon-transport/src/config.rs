//! Configuration of the UDPv4 transport.

use crate::ports::PortMapping;
use std::net::Ipv4Addr;

/// Whether the transport uses multicast.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MulticastMode {
    /// Use multicast iff the selected interface has the MULTICAST flag (as Cyclone DDS does).
    #[default]
    Auto,
    /// Use multicast even if the interface lacks the MULTICAST flag (joining may then fail).
    Enabled,
    /// Never use multicast: SPDP goes to the unicast peer list.
    Disabled,
}

/// A host to send SPDP announcements to by unicast.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Peer {
    /// The peer's address. A multicast address is used as is, on the SPDP multicast port.
    pub address: Ipv4Addr,
    /// The participant indices probed on it, `first..=last`; `None` probes every index in
    /// `0..=max_auto_participant_index`.
    pub indices: Option<PeerIndices>,
}

/// The participant indices probed on a [`Peer`]: `first..=last`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PeerIndices {
    /// The lowest index.
    pub first: u32,
    /// The highest index (at least `first`).
    pub last: u32,
}

impl Peer {
    /// Most participant indices one peer entry may name (each is a datagram per SPDP period).
    pub const MAX_INDICES: u32 = 256;

    /// A peer probed on every participant index in `0..=max_auto_participant_index`.
    pub fn any_index(address: Ipv4Addr) -> Self {
        Peer {
            address,
            indices: None,
        }
    }

    /// A peer probed on participant index `index` only.
    pub fn with_index(address: Ipv4Addr, index: u32) -> Self {
        Peer::with_indices(address, index, index)
    }

    /// A peer probed on participant indices `first..=last`.
    pub fn with_indices(address: Ipv4Addr, first: u32, last: u32) -> Self {
        Peer {
            address,
            indices: Some(PeerIndices { first, last }),
        }
    }
}

/// Settings of [`UdpTransport::open`](crate::UdpTransport::open). Every field has a default
/// that works with zero configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UdpConfig {
    /// Interface name ("eth0") or IPv4 address ("192.168.1.2"); `None` chooses automatically
    /// (see [`choose_interface`](crate::choose_interface)).
    pub interface: Option<String>,
    /// Whether to use multicast. Default [`MulticastMode::Auto`].
    pub multicast: MulticastMode,
    /// The SPDP (and default user-data) multicast group. Default 239.255.0.1.
    pub spdp_multicast_group: Ipv4Addr,
    /// Hosts to announce SPDP to by unicast. When empty and multicast is not used, the local
    /// host (the interface's address and 127.0.0.1) on every auto index is used, so processes
    /// on one machine find each other without configuration.
    pub peers: Vec<Peer>,
    /// This participant's index; `None` takes the lowest index whose two unicast ports are
    /// free. Default `None`.
    pub participant_index: Option<u32>,
    /// The highest index tried by automatic allocation and probed for peers without an index.
    /// Default 9 (Cyclone DDS's `MaxAutoParticipantIndex`).
    pub max_auto_participant_index: u32,
    /// The port mapping. Default: the spec's (7400, 250, 2, 0, 10, 1, 11).
    pub ports: PortMapping,
    /// SO_RCVBUF for every receive socket; `None` asks for 4 MiB and takes what the kernel
    /// grants silently. A configured size is capped at `net.core.rmem_max` too, with a
    /// warning when it is.
    pub receive_buffer_size: Option<usize>,
    /// SO_SNDBUF for the sending (unicast) sockets; `None` keeps the kernel default.
    pub send_buffer_size: Option<usize>,
    /// IP_MULTICAST_TTL. Default 1: multicast stays on the local link.
    pub multicast_ttl: u32,
    /// IP_MULTICAST_LOOP: deliver our multicast to sockets on this host too. Default true (so
    /// participants on one host see each other).
    pub multicast_loopback: bool,
    /// Datagrams of TRANSPORT_PRIORITY above this travel in a lane of their own: a third
    /// unicast socket (an ephemeral port, announced as the unicast locator of critical writers
    /// and readers) receives and sends them, so they never wait in a socket buffer behind bulk
    /// data. `None` (the default): no such socket. The runtime sets it from
    /// `threads.critical_priority`.
    pub critical_priority: Option<i32>,
    /// The metatraffic unicast port, fixed (a discovery server's well-known port, which its
    /// clients are told): the participant then takes no index, and its user-data port is one
    /// the kernel picks. `None` (the default): the ports of the participant index.
    pub metatraffic_port: Option<u16>,
    /// How many unicast destinations of user data get a socket connected to them, which
    /// spares the kernel a route look-up per datagram (`udp/connected.rs`); their datagrams
    /// leave from an ephemeral port. 0 sends everything from the user-data socket with
    /// `sendto`. Default 32.
    pub connected_destinations: usize,
}

impl Default for UdpConfig {
    fn default() -> Self {
        UdpConfig {
            interface: None,
            multicast: MulticastMode::Auto,
            spdp_multicast_group: Ipv4Addr::new(239, 255, 0, 1),
            peers: Vec::new(),
            participant_index: None,
            max_auto_participant_index: 9,
            ports: PortMapping::default(),
            receive_buffer_size: None,
            send_buffer_size: None,
            multicast_ttl: 1,
            multicast_loopback: true,
            critical_priority: None,
            metatraffic_port: None,
            connected_destinations: 32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_work_without_configuration() {
        let c = UdpConfig::default();
        assert_eq!(c.interface, None);
        assert_eq!(c.multicast, MulticastMode::Auto);
        assert_eq!(c.spdp_multicast_group, Ipv4Addr::new(239, 255, 0, 1));
        assert!(c.peers.is_empty());
        assert_eq!(c.participant_index, None);
        assert_eq!(c.max_auto_participant_index, 9);
        assert_eq!(c.ports, PortMapping::default());
        assert_eq!((c.receive_buffer_size, c.send_buffer_size), (None, None));
        assert_eq!(c.multicast_ttl, 1);
        assert!(c.multicast_loopback);
        assert_eq!(c.connected_destinations, 32);
        assert_eq!(Peer::any_index(Ipv4Addr::LOCALHOST).indices, None);
    }
}
