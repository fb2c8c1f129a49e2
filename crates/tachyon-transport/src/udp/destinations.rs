//! Where SPDP announcements go, and which locators are UDPv4 destinations.

use crate::config::{Peer, UdpConfig};
use crate::error::TransportError;
use crate::interface::SelectedInterface;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use tachyon_wire::Locator;

/// The SPDP destinations for `config`: the group when `multicast`, then the peers (or, without
/// multicast and peers, the local host) on each of their participant indices; no duplicates.
pub(super) fn spdp_destinations(
    domain_id: u32,
    config: &UdpConfig,
    interface: &SelectedInterface,
    multicast: bool,
) -> Result<Vec<Locator>, TransportError> {
    let ports = &config.ports;
    let mut out = Vec::new();
    if multicast {
        out.push(locator(
            config.spdp_multicast_group,
            ports.spdp_multicast(domain_id)?,
        ));
    }
    let local: Vec<Peer>;
    let peers = if config.peers.is_empty() && !multicast {
        local = local_peers(interface.address);
        &local
    } else {
        &config.peers
    };
    for peer in peers {
        if peer.address.is_multicast() {
            out.push(locator(peer.address, ports.spdp_multicast(domain_id)?));
            continue;
        }
        let indices = match peer.indices {
            Some(r) => r.first..=r.last,
            None => 0..=config.max_auto_participant_index,
        };
        for i in indices {
            out.push(locator(peer.address, ports.spdp_unicast(domain_id, i)?));
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|l| seen.insert(*l));
    Ok(out)
}

/// The default unicast peers: this host, by the interface's address and by 127.0.0.1.
fn local_peers(address: Ipv4Addr) -> Vec<Peer> {
    let mut peers = vec![Peer::any_index(address)];
    if address != Ipv4Addr::LOCALHOST {
        peers.push(Peer::any_index(Ipv4Addr::LOCALHOST));
    }
    peers
}

pub(super) fn locator(address: Ipv4Addr, port: u16) -> Locator {
    Locator::udp(SocketAddr::V4(SocketAddrV4::new(address, port)))
}

/// The destination of a UDPv4 locator with a port in 1..=65535.
pub(super) fn udpv4_destination(l: &Locator) -> Option<SocketAddrV4> {
    if l.kind != Locator::KIND_UDPV4 {
        return None;
    }
    match l.to_socket_addr()? {
        SocketAddr::V4(a) if a.port() != 0 => Some(a),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iface(address: [u8; 4], multicast: bool) -> SelectedInterface {
        SelectedInterface {
            name: "test0".into(),
            address: address.into(),
            multicast,
            loopback: address[0] == 127,
        }
    }

    fn ports(locs: &[Locator]) -> Vec<String> {
        locs.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn without_multicast_or_peers_spdp_goes_to_the_local_host_on_every_index() {
        let cfg = UdpConfig::default();
        let d = spdp_destinations(0, &cfg, &iface([127, 0, 0, 1], false), false).unwrap();
        let want: Vec<String> = (0..=9)
            .map(|i| format!("udp/127.0.0.1:{}", 7410 + 2 * i))
            .collect();
        assert_eq!(ports(&d), want);

        let d = spdp_destinations(1, &cfg, &iface([10, 0, 0, 2], false), false).unwrap();
        assert_eq!(d.len(), 20);
        assert_eq!(d[0].to_string(), "udp/10.0.0.2:7660");
        assert_eq!(d[10].to_string(), "udp/127.0.0.1:7660");
    }

    #[test]
    fn with_multicast_spdp_goes_to_the_group_and_configured_peers() {
        let mut cfg = UdpConfig::default();
        let i = iface([10, 0, 0, 2], true);
        assert_eq!(
            ports(&spdp_destinations(0, &cfg, &i, true).unwrap()),
            vec!["udp/239.255.0.1:7400"]
        );
        cfg.peers = vec![
            Peer::with_index(Ipv4Addr::new(10, 0, 0, 7), 3),
            Peer::any_index(Ipv4Addr::new(239, 255, 0, 1)),
            Peer::any_index(Ipv4Addr::new(10, 0, 0, 8)),
            Peer::with_indices(Ipv4Addr::new(10, 0, 0, 9), 4, 5),
        ];
        cfg.max_auto_participant_index = 1;
        assert_eq!(
            ports(&spdp_destinations(0, &cfg, &i, true).unwrap()),
            vec![
                "udp/239.255.0.1:7400",
                "udp/10.0.0.7:7416",
                "udp/10.0.0.8:7410",
                "udp/10.0.0.8:7412",
                "udp/10.0.0.9:7418",
                "udp/10.0.0.9:7420"
            ]
        );
    }

    #[test]
    fn peer_ports_out_of_range_are_an_error() {
        let cfg = UdpConfig {
            peers: vec![Peer::with_index(Ipv4Addr::LOCALHOST, 40_000)],
            ..UdpConfig::default()
        };
        let err = spdp_destinations(0, &cfg, &iface([127, 0, 0, 1], false), false).unwrap_err();
        assert!(
            matches!(err, TransportError::PortOutOfRange { .. }),
            "{err}"
        );
    }

    #[test]
    fn only_udpv4_locators_with_a_port_are_destinations() {
        let ok = locator(Ipv4Addr::LOCALHOST, 7410);
        assert_eq!(
            udpv4_destination(&ok),
            Some(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 7410))
        );
        let v6 = Locator::udp("[::1]:7410".parse().unwrap());
        let shm = Locator {
            kind: Locator::KIND_FASTDDS_SHM,
            ..ok
        };
        let big = Locator { port: 70_000, ..ok };
        let zero = Locator { port: 0, ..ok };
        for l in [v6, shm, big, zero, Locator::INVALID] {
            assert_eq!(udpv4_destination(&l), None, "{l}");
        }
    }
}
