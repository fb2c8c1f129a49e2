//! The one error type of this crate: what failed, and what to do about it.

use crate::ports::PortKind;
use std::io;
use std::net::Ipv4Addr;

/// Why a transport could not be set up.
///
/// Sending and receiving return `std::io::Error` instead: at that point the transport exists and
/// the only failures left are the kernel's.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The domain id is beyond what the RTPS port mapping allows.
    #[error(
        "domain id {domain_id} is out of range: its {kind} port would be {port}; \
         the RTPS port mapping allows domain ids 0..=232"
    )]
    DomainIdOutOfRange {
        /// The domain id asked for.
        domain_id: u32,
        /// The port being computed.
        kind: PortKind,
        /// The port the formula gives.
        port: u64,
    },
    /// The port formula gives a port outside 1..=65535.
    #[error(
        "domain {domain_id}{}: {kind} port {port} is outside 1..=65535: \
         use a smaller domain id or participant index, or change the port mapping",
        participant_index.map(|i| format!(" participant index {i}")).unwrap_or_default()
    )]
    PortOutOfRange {
        /// The domain id.
        domain_id: u32,
        /// The participant index, for unicast ports.
        participant_index: Option<u32>,
        /// The port being computed.
        kind: PortKind,
        /// The port the formula gives.
        port: u64,
    },
    /// The network interfaces could not be listed.
    #[error("cannot list the network interfaces (getifaddrs): {0}")]
    ListInterfaces(#[source] io::Error),
    /// The configured interface does not exist.
    #[error("network interface {requested:?} not found: set `interface` to one of: {available}")]
    InterfaceNotFound {
        /// What the configuration asked for (a name or an IPv4 address).
        requested: String,
        /// The interfaces that exist, with their IPv4 addresses.
        available: String,
    },
    /// The configured interface exists but cannot be used.
    #[error("network interface {name:?} cannot be used: {reason}")]
    InterfaceUnusable {
        /// The interface's name.
        name: String,
        /// Why (down, no IPv4 address).
        reason: String,
    },
    /// No interface at all is up with an IPv4 address, not even loopback.
    #[error(
        "no network interface is up with an IPv4 address (not even loopback; interfaces: \
         {available}): bring one up, e.g. `ip link set lo up`"
    )]
    NoInterface {
        /// The interfaces that exist.
        available: String,
    },
    /// The configured multicast group is not an IPv4 multicast address.
    #[error("spdp_multicast_group {0} is not an IPv4 multicast address (224.0.0.0/4)")]
    NotMulticast(Ipv4Addr),
    /// The fixed metatraffic port (a discovery server's) is taken by another socket.
    #[error(
        "port {port} (the discovery server's) is in use: another server runs on this host, or \
         choose another port"
    )]
    MetatrafficPortTaken {
        /// The port.
        port: u16,
    },
    /// The explicitly configured participant index has a port taken by another socket.
    #[error(
        "participant index {index} in domain {domain_id} is taken: port {port} is in use; \
         choose another participant_index or leave it unset for automatic allocation"
    )]
    ParticipantIndexTaken {
        /// The configured index.
        index: u32,
        /// The domain id.
        domain_id: u32,
        /// The port found in use.
        port: u16,
    },
    /// A socket operation failed while setting up the transport.
    #[error("cannot {what}: {source}")]
    Socket {
        /// What was being done, e.g. "bind the metatraffic unicast socket to 0.0.0.0:7410".
        what: String,
        /// The kernel's error.
        #[source]
        source: io::Error,
    },
    /// Joining the multicast group failed.
    #[error(
        "cannot join multicast group {group} on {interface} ({address}) for port {port}: {source}; \
         set `multicast: Disabled` or give the interface a multicast route \
         (e.g. `ip link set {interface} multicast on`)"
    )]
    MulticastJoin {
        /// The group.
        group: Ipv4Addr,
        /// The interface's name.
        interface: String,
        /// The interface's address.
        address: Ipv4Addr,
        /// The port of the socket joining.
        port: u16,
        /// The kernel's error.
        #[source]
        source: io::Error,
    },
    /// The shared-memory settings give no usable segment (a configuration error, refused
    /// before anything is created).
    #[error(
        "[shm] settings (small_slots, small_slot_size, large_slots, channels, ring, incoming) give \
         no usable segment: {0}"
    )]
    ShmConfig(String),
    /// The AF_XDP transport cannot be set up as configured: the message names what failed
    /// and the fix.
    #[error("[xdp] {key}: {message}")]
    Xdp {
        /// The key of `[xdp]` concerned.
        key: &'static str,
        /// What failed, and what to do.
        message: String,
    },
}

impl TransportError {
    /// A [`TransportError::Socket`] saying what was being done.
    pub(crate) fn socket(what: impl Into<String>, source: io::Error) -> Self {
        TransportError::Socket {
            what: what.into(),
            source,
        }
    }
}
