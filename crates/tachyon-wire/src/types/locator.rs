//! Locators: transport kind, port and 16-byte address, with `SocketAddr` conversions.

use crate::bytes::{Codec, Reader, Writer};
use crate::error::{EmitError, WireError};
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Which locators a transport can send to: those of `kind` whose address starts with
/// `address_prefix` (the network, host or process id the transport is confined to; empty
/// for any address). A participant keeps, of a remote endpoint's locators, those of the most
/// preferred transport that covers any of them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Reach {
    /// Locator kind.
    pub kind: i32,
    /// Leading address bytes that must match.
    pub address_prefix: Vec<u8>,
    /// Also every IPv4 multicast group (UDPv4, 224.0.0.0/4), whatever `address_prefix` says:
    /// a transport confined to one link that can send to its groups (AF_XDP).
    pub multicast: bool,
}

impl Reach {
    /// Any locator of `kind`.
    pub fn kind(kind: i32) -> Reach {
        Reach {
            kind,
            address_prefix: Vec::new(),
            multicast: false,
        }
    }

    /// Whether `locator` is reachable by this rule.
    pub fn covers(&self, locator: &Locator) -> bool {
        locator.kind == self.kind
            && (has_prefix(&locator.address, &self.address_prefix)
                || (self.multicast && locator.is_ipv4_multicast()))
    }
}

/// Whether `address` starts with `prefix`, compared byte by byte. Not `starts_with`: that
/// calls `memcmp`, whose AVX-512 form loads the prefix with a masked load even when it is
/// empty, and an empty `Vec`'s dangling pointer makes that load a microcode assist: about
/// 1 % of a 32 B round trip's time in each process, measured with `perf record` (every UDP
/// datagram sent asks which transport reaches its destination).
fn has_prefix(address: &[u8; 16], prefix: &[u8]) -> bool {
    prefix.len() <= address.len() && address.iter().zip(prefix).all(|(a, p)| a == p)
}

/// Where an endpoint can be reached: kind, port and a 16-byte address.
///
/// Kinds other than UDPv4/UDPv6 (TCP, shared memory, vendor kinds) are kept as sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Locator {
    /// Transport kind (`KIND_*`).
    pub kind: i32,
    /// Port (u32 on the wire; UDP uses the low 16 bits).
    pub port: u32,
    /// Address; IPv4 lives in the last four bytes.
    pub address: [u8; 16],
}

impl Locator {
    /// LOCATOR_KIND_INVALID.
    pub const KIND_INVALID: i32 = -1;
    /// LOCATOR_KIND_RESERVED.
    pub const KIND_RESERVED: i32 = 0;
    /// LOCATOR_KIND_UDPv4.
    pub const KIND_UDPV4: i32 = 1;
    /// LOCATOR_KIND_UDPv6.
    pub const KIND_UDPV6: i32 = 2;
    /// TCPv4 (Fast DDS / RTPS-over-TCP PSM).
    pub const KIND_TCPV4: i32 = 4;
    /// TCPv6 (Fast DDS / RTPS-over-TCP PSM).
    pub const KIND_TCPV6: i32 = 8;
    /// Fast DDS shared-memory locator kind.
    pub const KIND_FASTDDS_SHM: i32 = 16;
    /// Tachyon's in-memory test network (`tachyon_transport::mem`): address bytes 0..8 name
    /// the network, 8..16 the node on it.
    ///
    /// Tachyon's own kinds are `0x0054_4300 + n` ("\0TC" and a number): positive like every
    /// vendor kind in use (RTI and Cyclone DDS use `0x0100_0000` for their shared memory, Fast
    /// DDS 16), and far from all of them. Other vendors ignore kinds they do not know, so
    /// they keep using the UDPv4 locators announced beside these.
    pub const KIND_TACHYON_MEM: i32 = 0x0054_43ff;
    /// Tachyon's in-process transport (`tachyon_transport::intra`): address bytes 0..8 name
    /// the process (a random number), 8..12 the domain, 12..16 the participant.
    pub const KIND_TACHYON_INTRA: i32 = 0x0054_4300;
    /// Tachyon's shared-memory transport (`tachyon_transport::shm`): address bytes 0..8 name
    /// the host's shared memory as this user sees it (a hash of the boot id, `/dev/shm` and
    /// the user or group), 8..16 the participant's segment.
    pub const KIND_TACHYON_SHM: i32 = 0x0054_4301;
    /// Bytes a locator takes on the wire.
    pub const WIRE_LEN: usize = 24;
    /// LOCATOR_INVALID.
    pub const INVALID: Locator = Locator {
        kind: Self::KIND_INVALID,
        port: 0,
        address: [0; 16],
    };

    /// The socket address for UDP/TCP v4/v6 locators whose port fits in 16 bits.
    #[inline]
    pub fn to_socket_addr(&self) -> Option<SocketAddr> {
        let port = u16::try_from(self.port).ok()?;
        match self.kind {
            Self::KIND_UDPV4 | Self::KIND_TCPV4 => {
                let [.., a, b, c, d] = self.address;
                Some(SocketAddr::new(Ipv4Addr::new(a, b, c, d).into(), port))
            }
            Self::KIND_UDPV6 | Self::KIND_TCPV6 => {
                Some(SocketAddr::new(Ipv6Addr::from(self.address).into(), port))
            }
            _ => None,
        }
    }

    /// Whether this is a UDPv4 locator of an IPv4 multicast group (224.0.0.0/4).
    #[inline]
    pub fn is_ipv4_multicast(&self) -> bool {
        self.kind == Self::KIND_UDPV4 && (224..=239).contains(&self.address[12])
    }

    /// A UDP locator for `addr` (UDPv4 or UDPv6 by address family).
    #[inline]
    pub fn udp(addr: SocketAddr) -> Self {
        match addr.ip() {
            IpAddr::V4(v4) => {
                let mut address = [0u8; 16];
                address[12..].copy_from_slice(&v4.octets());
                Locator {
                    kind: Self::KIND_UDPV4,
                    port: u32::from(addr.port()),
                    address,
                }
            }
            IpAddr::V6(v6) => Locator {
                kind: Self::KIND_UDPV6,
                port: u32::from(addr.port()),
                address: v6.octets(),
            },
        }
    }
}

impl From<SocketAddr> for Locator {
    fn from(addr: SocketAddr) -> Self {
        Locator::udp(addr)
    }
}

/// The compact IPv4 locator of INFO_REPLY_IP4: address and port as u32.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LocatorUdpV4 {
    /// IPv4 address as a u32 (host order after decoding).
    pub address: u32,
    /// UDP port.
    pub port: u32,
}

impl LocatorUdpV4 {
    /// The socket address, if the port fits in 16 bits.
    #[inline]
    pub fn to_socket_addr(&self) -> Option<SocketAddr> {
        let port = u16::try_from(self.port).ok()?;
        Some(SocketAddr::new(Ipv4Addr::from(self.address).into(), port))
    }
}

impl Codec for Locator {
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Locator {
            kind: r.i32()?,
            port: r.u32()?,
            address: r.array()?,
        })
    }
    #[inline]
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.i32(self.kind)?;
        w.u32(self.port)?;
        w.put(&self.address)
    }
}

impl Codec for LocatorUdpV4 {
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(LocatorUdpV4 {
            address: r.u32()?,
            port: r.u32()?,
        })
    }
    #[inline]
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.u32(self.address)?;
        w.u32(self.port)
    }
}

impl fmt::Display for Locator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let proto = match self.kind {
            Self::KIND_UDPV4 | Self::KIND_UDPV6 => "udp",
            Self::KIND_TCPV4 | Self::KIND_TCPV6 => "tcp",
            Self::KIND_INVALID => return f.write_str("invalid"),
            _ => "",
        };
        match self.to_socket_addr() {
            Some(sa) => write!(f, "{proto}/{sa}"),
            None => {
                write!(f, "kind{}/", self.kind)?;
                for b in self.address {
                    write!(f, "{b:02x}")?;
                }
                write!(f, ":{}", self.port)
            }
        }
    }
}

impl fmt::Display for LocatorUdpV4 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "udp/{}:{}", Ipv4Addr::from(self.address), self.port)
    }
}
