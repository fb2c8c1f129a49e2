//! Discovery servers: where a participant that is a client of discovery servers finds them
//! (the configuration file's `discovery.servers`, or `ROS_DISCOVERY_SERVER` as ROS 2 and Fast
//! DDS read it), and the server role. The protocol is Fast DDS's (`fastdds discovery`), in
//! `tachyon_proto`'s `discovery/client.rs`; `docs/discovery-server.md` says how to use it.

use std::net::{Ipv4Addr, SocketAddrV4, ToSocketAddrs};

/// The environment variable ROS 2 and Fast DDS read the discovery servers from, which
/// [`Config::from_env`](crate::Config::from_env) reads too: `;`-separated `host[:port]`
/// entries, the position of each its server id (an empty entry skips an id).
pub const ROS_DISCOVERY_SERVER_ENV: &str = "ROS_DISCOVERY_SERVER";

/// The port a discovery server listens on unless told otherwise (Fast DDS's).
pub const DEFAULT_SERVER_PORT: u16 = 11811;

/// A discovery server a participant is a client of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DiscoveryServerAddress {
    /// The server's id (its position in `ROS_DISCOVERY_SERVER`): a Fast DDS server's GUID
    /// prefix is derived from it (`fastdds discovery -i <id>`).
    pub id: u8,
    /// Where it listens.
    pub address: SocketAddrV4,
}

impl DiscoveryServerAddress {
    /// Server `id` at `address`.
    pub fn new(id: u8, address: SocketAddrV4) -> DiscoveryServerAddress {
        DiscoveryServerAddress { id, address }
    }
}

/// This participant as a discovery server (the configuration file's `[discovery.server]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ServerRole {
    /// The server's id: its GUID prefix is Fast DDS's for this id, which is how its clients
    /// recognize it (their `ROS_DISCOVERY_SERVER` lists it at this position).
    pub id: u8,
    /// The UDP port it listens on (its metatraffic unicast port).
    pub port: u16,
}

impl Default for ServerRole {
    /// Server 0 on port 11811, as `fastdds discovery -i 0`.
    fn default() -> ServerRole {
        ServerRole {
            id: 0,
            port: DEFAULT_SERVER_PORT,
        }
    }
}

/// The servers of a list whose positions are the server ids: `host[:port]` entries, an empty
/// one skipping its id. Host names are resolved now (first IPv4 address); `0.0.0.0` means
/// this host (127.0.0.1), as Fast DDS reads it.
pub(crate) fn parse_server_list<'a>(
    entries: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<DiscoveryServerAddress>, String> {
    let mut out = Vec::new();
    for (i, entry) in entries.into_iter().enumerate() {
        let entry = entry.trim();
        if entry.is_empty() {
            continue;
        }
        let id = u8::try_from(i).map_err(|_| {
            format!("at most 256 discovery servers (ids 0 to 255), \"{entry}\" is number {i}")
        })?;
        out.push(DiscoveryServerAddress::new(id, parse_server(entry)?));
    }
    Ok(out)
}

/// `ROS_DISCOVERY_SERVER`'s value: [`parse_server_list`] of its `;`-separated entries.
pub(crate) fn parse_ros_discovery_server(
    text: &str,
) -> Result<Vec<DiscoveryServerAddress>, String> {
    parse_server_list(text.split(';'))
}

/// `host[:port]`.
fn parse_server(entry: &str) -> Result<SocketAddrV4, String> {
    let expected = || {
        format!(
            "expected a discovery server like \"10.0.0.2\", \"10.0.0.2:11811\" or \
             \"server.local:11888\", found \"{entry}\""
        )
    };
    let (host, port) = match entry.rsplit_once(':') {
        Some((h, p)) => (h, p.parse::<u16>().map_err(|_| expected())?),
        None => (entry, DEFAULT_SERVER_PORT),
    };
    if host.is_empty() || port == 0 {
        return Err(expected());
    }
    let ip = match host.parse::<Ipv4Addr>() {
        Ok(a) => a,
        Err(_) if host.bytes().any(|b| b.is_ascii_alphabetic()) => resolve(host)?,
        Err(_) => return Err(expected()),
    };
    let ip = if ip.is_unspecified() {
        Ipv4Addr::LOCALHOST
    } else {
        ip
    };
    Ok(SocketAddrV4::new(ip, port))
}

fn resolve(host: &str) -> Result<Ipv4Addr, String> {
    (host, 0)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve discovery server host name \"{host}\": {e}"))?
        .find_map(|a| match a.ip() {
            std::net::IpAddr::V4(v4) => Some(v4),
            std::net::IpAddr::V6(_) => None,
        })
        .ok_or_else(|| format!("discovery server host name \"{host}\" has no IPv4 address"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ros_discovery_server_lists() {
        let s = |a: [u8; 4], p| SocketAddrV4::new(a.into(), p);
        assert_eq!(
            parse_ros_discovery_server("127.0.0.1:11811"),
            Ok(vec![DiscoveryServerAddress::new(
                0,
                s([127, 0, 0, 1], 11811)
            )])
        );
        assert_eq!(
            parse_ros_discovery_server(";10.0.0.2;0.0.0.0:11888 ;localhost:5"),
            Ok(vec![
                DiscoveryServerAddress::new(1, s([10, 0, 0, 2], 11811)),
                DiscoveryServerAddress::new(2, s([127, 0, 0, 1], 11888)),
                DiscoveryServerAddress::new(3, s([127, 0, 0, 1], 5)),
            ])
        );
        assert_eq!(parse_ros_discovery_server(""), Ok(vec![]));
        for bad in [
            "10.0.0.2:x",
            "10.0.0.2:0",
            ":11811",
            "10.0.0:1",
            "10.0.0.2:70000",
        ] {
            let e = parse_ros_discovery_server(bad).unwrap_err();
            assert!(e.contains(&format!("found \"{bad}\"")), "{bad}: {e}");
        }
        let many = vec!["10.0.0.1"; 257].join(";");
        assert!(parse_ros_discovery_server(&many)
            .unwrap_err()
            .contains("at most 256"));
    }
}
