//! Which network interface the UDP transport uses, chosen predictably and said in the log.
//!
//! The choice is a pure function ([`choose_interface`]) over the interface list, so it is tested
//! without a network; [`select_interface`] feeds it the kernel's list and logs the outcome.

use crate::error::TransportError;
use crate::sys;
use std::fmt;
use std::net::Ipv4Addr;

/// The interface flags that matter for selection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct InterfaceFlags {
    /// IFF_UP: administratively up.
    pub up: bool,
    /// IFF_LOOPBACK.
    pub loopback: bool,
    /// IFF_MULTICAST: the kernel will send and receive multicast on it.
    pub multicast: bool,
}

impl InterfaceFlags {
    /// Decode the `IFF_*` bits of `getifaddrs`/`SIOCGIFFLAGS`.
    pub fn from_raw(flags: u32) -> Self {
        let has = |bit: libc::c_int| flags & (bit as u32) != 0;
        InterfaceFlags {
            up: has(libc::IFF_UP),
            loopback: has(libc::IFF_LOOPBACK),
            multicast: has(libc::IFF_MULTICAST),
        }
    }
}

/// One interface as the OS lists it (one entry per IPv4 address; `address: None` for an
/// interface without any).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct InterfaceInfo {
    /// Name, e.g. "eth0".
    pub name: String,
    /// An IPv4 address of the interface, if it has one.
    pub address: Option<Ipv4Addr>,
    /// Its flags.
    pub flags: InterfaceFlags,
}

/// The interface the transport uses.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SelectedInterface {
    /// Name, e.g. "eth0" or "lo".
    pub name: String,
    /// The IPv4 address advertised in locators and used for IP_MULTICAST_IF.
    pub address: Ipv4Addr,
    /// The interface has the MULTICAST flag.
    pub multicast: bool,
    /// The interface is a loopback interface.
    pub loopback: bool,
}

/// Why [`choose_interface`] picked what it picked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SelectionReason {
    /// The configuration named it.
    ConfiguredName,
    /// The configuration gave its address.
    ConfiguredAddress,
    /// First up, non-loopback interface with an IPv4 address and the MULTICAST flag.
    FirstMulticast,
    /// No such interface; first up, non-loopback interface with an IPv4 address (unicast only).
    FirstWithoutMulticast,
    /// Nothing else is up: loopback.
    LoopbackFallback,
}

impl fmt::Display for SelectionReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SelectionReason::ConfiguredName => "configured by name",
            SelectionReason::ConfiguredAddress => "configured by address",
            SelectionReason::FirstMulticast => {
                "first up non-loopback interface with IPv4 and the MULTICAST flag"
            }
            SelectionReason::FirstWithoutMulticast => {
                "no multicast-capable interface; first up non-loopback interface with IPv4"
            }
            SelectionReason::LoopbackFallback => {
                "no other interface is up with an IPv4 address; falling back to loopback"
            }
        })
    }
}

/// The kernel's interfaces, in `getifaddrs` order.
pub fn list_interfaces() -> Result<Vec<InterfaceInfo>, TransportError> {
    let entries = sys::getifaddrs().map_err(TransportError::ListInterfaces)?;
    Ok(interfaces_from_entries(&entries))
}

/// Select the interface for `requested` (a name, an IPv4 address, or `None` for automatic) and
/// log which one was chosen and why.
pub fn select_interface(requested: Option<&str>) -> Result<SelectedInterface, TransportError> {
    let list = list_interfaces()?;
    let (chosen, reason) = choose_interface(&list, requested)?;
    tracing::info!(
        interface = %chosen.name,
        address = %chosen.address,
        multicast = chosen.multicast,
        loopback = chosen.loopback,
        reason = %reason,
        "udp: selected network interface {} ({}, {}multicast): {}",
        chosen.name,
        chosen.address,
        if chosen.multicast { "" } else { "no " },
        reason,
    );
    Ok(chosen)
}

/// Choose an interface from `interfaces` (in OS order): the one `requested` names or whose
/// address it gives; otherwise the first up non-loopback IPv4 interface with MULTICAST; else the
/// first up non-loopback IPv4 interface; else loopback (127.0.0.1 preferred).
///
/// The middle step matches Cyclone DDS's preference (a non-multicast LAN interface beats
/// loopback), so both pick the same interface on hosts with only e.g. a tunnel.
pub fn choose_interface(
    interfaces: &[InterfaceInfo],
    requested: Option<&str>,
) -> Result<(SelectedInterface, SelectionReason), TransportError> {
    match requested.map(str::trim).filter(|r| !r.is_empty()) {
        Some(req) => choose_configured(interfaces, req),
        None => choose_automatic(interfaces),
    }
}

fn choose_configured(
    interfaces: &[InterfaceInfo],
    req: &str,
) -> Result<(SelectedInterface, SelectionReason), TransportError> {
    let not_found = || TransportError::InterfaceNotFound {
        requested: req.to_owned(),
        available: describe(interfaces),
    };
    let (candidates, reason): (Vec<&InterfaceInfo>, _) = match req.parse::<Ipv4Addr>() {
        Ok(addr) => (
            interfaces
                .iter()
                .filter(|i| i.address == Some(addr))
                .collect(),
            SelectionReason::ConfiguredAddress,
        ),
        Err(_) => (
            interfaces.iter().filter(|i| i.name == req).collect(),
            SelectionReason::ConfiguredName,
        ),
    };
    let first = candidates.first().ok_or_else(not_found)?;
    let Some(chosen) = candidates.iter().find(|i| i.address.is_some()) else {
        return Err(TransportError::InterfaceUnusable {
            name: first.name.clone(),
            reason: "it has no IPv4 address".into(),
        });
    };
    if !chosen.flags.up {
        return Err(TransportError::InterfaceUnusable {
            name: chosen.name.clone(),
            reason: format!("it is down (bring it up: `ip link set {} up`)", chosen.name),
        });
    }
    Ok((selected(chosen), reason))
}

fn choose_automatic(
    interfaces: &[InterfaceInfo],
) -> Result<(SelectedInterface, SelectionReason), TransportError> {
    let usable = || {
        interfaces
            .iter()
            .filter(|i| i.flags.up && i.address.is_some())
    };
    if let Some(i) = usable().find(|i| !i.flags.loopback && i.flags.multicast) {
        return Ok((selected(i), SelectionReason::FirstMulticast));
    }
    if let Some(i) = usable().find(|i| !i.flags.loopback) {
        return Ok((selected(i), SelectionReason::FirstWithoutMulticast));
    }
    let lo = usable()
        .find(|i| i.flags.loopback && i.address == Some(Ipv4Addr::LOCALHOST))
        .or_else(|| usable().find(|i| i.flags.loopback));
    match lo {
        Some(i) => Ok((selected(i), SelectionReason::LoopbackFallback)),
        None => Err(TransportError::NoInterface {
            available: describe(interfaces),
        }),
    }
}

fn selected(i: &InterfaceInfo) -> SelectedInterface {
    SelectedInterface {
        name: i.name.clone(),
        address: i.address.unwrap_or(Ipv4Addr::UNSPECIFIED),
        multicast: i.flags.multicast,
        loopback: i.flags.loopback,
    }
}

/// "lo (127.0.0.1, up, loopback), eth0 (no IPv4, down)" for error messages.
fn describe(interfaces: &[InterfaceInfo]) -> String {
    if interfaces.is_empty() {
        return "none".into();
    }
    let parts: Vec<String> = interfaces
        .iter()
        .map(|i| {
            let mut s = format!("{} (", i.name);
            match i.address {
                Some(a) => s.push_str(&a.to_string()),
                None => s.push_str("no IPv4"),
            }
            s.push_str(if i.flags.up { ", up" } else { ", down" });
            if i.flags.loopback {
                s.push_str(", loopback");
            }
            if i.flags.multicast {
                s.push_str(", multicast");
            }
            s.push(')');
            s
        })
        .collect();
    parts.join(", ")
}

/// One entry per (interface, IPv4 address) in OS order, then one `address: None` entry for each
/// interface that has no IPv4 address at all.
fn interfaces_from_entries(entries: &[sys::IfAddr]) -> Vec<InterfaceInfo> {
    let mut out: Vec<InterfaceInfo> = entries
        .iter()
        .filter_map(|e| {
            e.ipv4.map(|a| InterfaceInfo {
                name: e.name.clone(),
                address: Some(a),
                flags: InterfaceFlags::from_raw(e.flags),
            })
        })
        .collect();
    for e in entries {
        if !out.iter().any(|i| i.name == e.name) {
            out.push(InterfaceInfo {
                name: e.name.clone(),
                address: None,
                flags: InterfaceFlags::from_raw(e.flags),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iface(name: &str, addr: Option<[u8; 4]>, up: bool, lo: bool, mc: bool) -> InterfaceInfo {
        InterfaceInfo {
            name: name.into(),
            address: addr.map(Ipv4Addr::from),
            flags: InterfaceFlags {
                up,
                loopback: lo,
                multicast: mc,
            },
        }
    }

    fn host() -> Vec<InterfaceInfo> {
        vec![
            iface("lo", Some([127, 0, 0, 1]), true, true, false),
            iface("docker0", Some([172, 17, 0, 1]), false, false, true),
            iface("wg0", Some([10, 9, 0, 2]), true, false, false),
            iface("eth0", Some([192, 168, 1, 2]), true, false, true),
            iface("eth1", Some([192, 168, 2, 2]), true, false, true),
            iface("sit0", None, false, false, false),
        ]
    }

    #[test]
    fn automatic_picks_first_up_non_loopback_multicast_interface() {
        let (s, why) = choose_interface(&host(), None).unwrap();
        assert_eq!(s.name, "eth0");
        assert_eq!(s.address, Ipv4Addr::new(192, 168, 1, 2));
        assert!(s.multicast && !s.loopback);
        assert_eq!(why, SelectionReason::FirstMulticast);
    }

    #[test]
    fn automatic_prefers_unicast_lan_over_loopback() {
        let list: Vec<_> = host()
            .into_iter()
            .filter(|i| !i.name.starts_with("eth"))
            .collect();
        let (s, why) = choose_interface(&list, None).unwrap();
        assert_eq!(s.name, "wg0");
        assert!(!s.multicast);
        assert_eq!(why, SelectionReason::FirstWithoutMulticast);
    }

    #[test]
    fn automatic_falls_back_to_loopback_with_its_multicast_flag() {
        let only_lo = vec![iface("lo", Some([127, 0, 0, 1]), true, true, false)];
        let (s, why) = choose_interface(&only_lo, None).unwrap();
        assert_eq!((s.name.as_str(), s.address), ("lo", Ipv4Addr::LOCALHOST));
        assert!(s.loopback && !s.multicast);
        assert_eq!(why, SelectionReason::LoopbackFallback);

        // `ip link set lo multicast on`: multicast must then be used on lo.
        let lo_mc = vec![
            iface("lo", Some([127, 0, 0, 7]), true, true, true),
            iface("lo", Some([127, 0, 0, 1]), true, true, true),
        ];
        let (s, _) = choose_interface(&lo_mc, None).unwrap();
        assert_eq!(s.address, Ipv4Addr::LOCALHOST, "127.0.0.1 preferred");
        assert!(s.multicast);
    }

    #[test]
    fn configured_by_name_or_address() {
        let (s, why) = choose_interface(&host(), Some("eth1")).unwrap();
        assert_eq!(
            (s.name.as_str(), why),
            ("eth1", SelectionReason::ConfiguredName)
        );
        let (s, why) = choose_interface(&host(), Some(" 10.9.0.2 ")).unwrap();
        assert_eq!(
            (s.name.as_str(), why),
            ("wg0", SelectionReason::ConfiguredAddress)
        );
        let (s, _) = choose_interface(&host(), Some("lo")).unwrap();
        assert!(s.loopback);
        let (s, _) = choose_interface(&host(), Some("")).unwrap();
        assert_eq!(s.name, "eth0", "empty string means automatic");
    }

    #[test]
    fn configured_missing_interface_names_request_and_lists_existing() {
        let err = choose_interface(&host(), Some("eth9")).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, TransportError::InterfaceNotFound { .. }));
        assert!(msg.contains("\"eth9\""), "{msg}");
        assert!(msg.contains("eth0 (192.168.1.2, up, multicast)"), "{msg}");
        assert!(msg.contains("lo (127.0.0.1, up, loopback)"), "{msg}");
        let err = choose_interface(&host(), Some("10.0.0.1")).unwrap_err();
        assert!(err.to_string().contains("10.0.0.1"), "{err}");
    }

    #[test]
    fn configured_unusable_interface_says_why() {
        let err = choose_interface(&host(), Some("docker0")).unwrap_err();
        assert!(err.to_string().contains("down"), "{err}");
        let err = choose_interface(&host(), Some("sit0")).unwrap_err();
        assert!(err.to_string().contains("no IPv4"), "{err}");
    }

    #[test]
    fn nothing_up_is_an_error() {
        let list = vec![iface("lo", Some([127, 0, 0, 1]), false, true, false)];
        let err = choose_interface(&list, None).unwrap_err();
        assert!(matches!(err, TransportError::NoInterface { .. }), "{err}");
        assert!(err.to_string().contains("ip link set lo up"), "{err}");
    }

    #[test]
    fn entries_are_grouped_in_os_order() {
        let e = |name: &str, ipv4: Option<[u8; 4]>| sys::IfAddr {
            name: name.into(),
            ipv4: ipv4.map(Ipv4Addr::from),
            flags: (libc::IFF_UP | libc::IFF_MULTICAST) as u32,
        };
        let list = interfaces_from_entries(&[
            e("lo", None),
            e("eth0", None),
            e("tun0", None),
            e("lo", Some([127, 0, 0, 1])),
            e("eth0", Some([10, 0, 0, 2])),
            e("eth0", None),
        ]);
        let names: Vec<_> = list.iter().map(|i| (i.name.as_str(), i.address)).collect();
        assert_eq!(
            names,
            vec![
                ("lo", Some(Ipv4Addr::LOCALHOST)),
                ("eth0", Some(Ipv4Addr::new(10, 0, 0, 2))),
                ("tun0", None)
            ]
        );
        assert!(list[1].flags.up && list[1].flags.multicast && !list[1].flags.loopback);
    }
}
