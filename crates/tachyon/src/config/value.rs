//! The values a configuration file holds that TOML has no type for: durations ("250ms",
//! "infinite"), byte sizes ("4MiB"), peers ("10.0.0.2:3"), multicast modes, participant
//! indices ("auto") and SCHED_FIFO priorities. Each parses from its TOML form with an error
//! that says what was expected; the key path and file are added by the caller.

use std::fmt;
use std::net::Ipv4Addr;
use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use tachyon_transport::{MulticastMode, Peer};

/// A duration written with a unit: `"10s"`, `"250ms"`, `"1.5s"`, `"100us"`, `"2min"`.
/// `"infinite"` is `None`.
pub(crate) fn parse_duration(text: &str) -> Result<Option<Duration>, String> {
    let t = text.trim();
    if t == "infinite" || t == "infinity" {
        return Ok(None);
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| {
            format!("expected a duration with a unit, like \"10s\" or \"250ms\", found \"{text}\"")
        })?;
    let (number, unit) = (&t[..split], t[split..].trim_start());
    let unit_nanos: u128 = match unit {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => {
            return Err(format!(
                "unknown unit \"{unit}\" in \"{text}\" (expected ns, us, ms, s, min or h, or \"infinite\")"
            ))
        }
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let bad_number = || format!("expected a number before the unit, found \"{text}\"");
    if whole.is_empty() || fraction.contains('.') || fraction.len() > 18 {
        return Err(bad_number());
    }
    if number.ends_with('.') {
        return Err(bad_number());
    }
    let whole: u128 = whole.parse().map_err(|_| bad_number())?;
    let scale = 10u128.pow(fraction.len() as u32);
    let fraction: u128 = if fraction.is_empty() {
        0
    } else {
        fraction.parse().map_err(|_| bad_number())?
    };
    let nanos = whole
        .checked_mul(scale)
        .and_then(|n| n.checked_add(fraction))
        .and_then(|n| n.checked_mul(unit_nanos))
        .map(|n| n / scale)
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| format!("duration \"{text}\" is too long (write \"infinite\")"))?;
    Ok(Some(Duration::from_nanos(nanos)))
}

/// A byte count: an integer, or a string with a unit (`"4MiB"`, `"512KiB"`, `"8MB"`, `"1000B"`).
pub(crate) fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = (&t[..split], t[split..].trim_start());
    let factor: u64 = match unit {
        "" | "B" => 1,
        "kB" | "KB" => 1_000,
        "KiB" => 1 << 10,
        "MB" => 1_000_000,
        "MiB" => 1 << 20,
        "GB" => 1_000_000_000,
        "GiB" => 1 << 30,
        _ => {
            return Err(format!(
                "expected a size in bytes like 4194304, \"4MiB\" or \"512KiB\", found \"{text}\""
            ))
        }
    };
    let n: u64 = number.parse().map_err(|_| {
        format!("expected a size in bytes like 4194304 or \"4MiB\", found \"{text}\"")
    })?;
    n.checked_mul(factor)
        .ok_or_else(|| format!("size \"{text}\" is too large"))
}

/// A peer: an IPv4 address or a host name, optionally with the participant index or the
/// range of indices to probe on it (`"10.0.0.2"`, `"10.0.0.2:3"`, `"robot-1.local:0-4"`). A
/// host name is resolved now, to its first IPv4 address.
pub(crate) fn parse_peer(text: &str) -> Result<Peer, String> {
    let text = text.trim();
    let expected = || {
        format!(
            "expected an IPv4 address or host name with an optional participant index or \
             index range, like \"10.0.0.2\", \"10.0.0.2:3\" or \"robot-1.local:0-4\", found \
             \"{text}\""
        )
    };
    let (host, indices) = match text.split_once(':') {
        Some((h, i)) => (h, Some(parse_index_range(i).ok_or_else(expected)?)),
        None => (text, None),
    };
    if host.is_empty() {
        return Err(expected());
    }
    let address = match host.parse::<Ipv4Addr>() {
        Ok(a) => a,
        Err(_) if looks_like_host_name(host) => resolve_ipv4(host)?,
        Err(_) => return Err(expected()),
    };
    let peer = match indices {
        None => Peer::any_index(address),
        Some((first, last)) => {
            if last < first {
                return Err(format!(
                    "peer \"{text}\": the index range {first}-{last} is empty (write the lower \
                     index first)"
                ));
            }
            if last - first >= Peer::MAX_INDICES {
                return Err(format!(
                    "peer \"{text}\": {} participant indices; at most {} per peer (each is a \
                     datagram every SPDP period)",
                    u64::from(last - first) + 1,
                    Peer::MAX_INDICES
                ));
            }
            Peer::with_indices(address, first, last)
        }
    };
    Ok(peer)
}

/// `"3"` or `"0-9"`.
fn parse_index_range(text: &str) -> Option<(u32, u32)> {
    let number = |t: &str| {
        let t = t.trim();
        (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
            .then(|| t.parse::<u32>().ok())
            .flatten()
    };
    match text.split_once('-') {
        Some((a, b)) => Some((number(a)?, number(b)?)),
        None => number(text).map(|i| (i, i)),
    }
}

/// Letters, digits, hyphens and dots, not all digits and dots (that is a bad address).
fn looks_like_host_name(host: &str) -> bool {
    host.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
        && host.bytes().any(|b| b.is_ascii_alphabetic() || b == b'-')
}

/// The first IPv4 address of `host` (the system resolver: /etc/hosts, DNS).
fn resolve_ipv4(host: &str) -> Result<Ipv4Addr, String> {
    use std::net::ToSocketAddrs;
    let addrs = (host, 0)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve host name \"{host}\": {e}"))?;
    addrs
        .filter_map(|a| match a.ip() {
            std::net::IpAddr::V4(v4) => Some(v4),
            std::net::IpAddr::V6(_) => None,
        })
        .next()
        .ok_or_else(|| format!("host name \"{host}\" has no IPv4 address"))
}

/// A list of peers in an environment variable: entries separated by commas, semicolons or
/// white space, each as [`parse_peer`] reads it.
pub(crate) fn parse_peer_list(text: &str) -> Result<Vec<Peer>, String> {
    text.split(|c: char| c == ',' || c == ';' || c.is_whitespace())
        .filter(|e| !e.is_empty())
        .map(parse_peer)
        .collect()
}

/// `"auto"`, `"on"` or `"off"` (or `true`/`false`).
pub(crate) fn parse_multicast(text: &str) -> Result<MulticastMode, String> {
    match text {
        "auto" => Ok(MulticastMode::Auto),
        "on" => Ok(MulticastMode::Enabled),
        "off" => Ok(MulticastMode::Disabled),
        _ => Err(format!(
            "expected \"auto\", \"on\" or \"off\", found \"{text}\""
        )),
    }
}

/// The lowest and highest SCHED_FIFO priority Linux accepts.
pub(crate) const PRIORITY_RANGE: std::ops::RangeInclusive<i64> = 1..=99;

/// The largest CPU number accepted (CPU_SETSIZE - 1 on Linux).
pub(crate) const MAX_CPU: i64 = 1023;

// ---------------------------------------------------------------------------------------------
// Deserialize wrappers: each one a value in the file.

/// A duration that may be `"infinite"` (lease durations).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LeaseValue(pub(crate) Duration);

impl<'de> Deserialize<'de> for LeaseValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = d.deserialize_any(StrVisitor("a duration like \"10s\" or \"infinite\""))?;
        // An infinite lease is announced as DURATION_INFINITE (see `duration_to_wire`).
        parse_duration(&s)
            .map(|d| LeaseValue(d.unwrap_or(Duration::MAX)))
            .map_err(de::Error::custom)
    }
}

/// A finite, non-zero duration (periods).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PeriodValue(pub(crate) Duration);

impl<'de> Deserialize<'de> for PeriodValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = d.deserialize_any(StrVisitor("a duration like \"3s\" or \"250ms\""))?;
        match parse_duration(&s).map_err(de::Error::custom)? {
            None => Err(de::Error::custom(
                "a period cannot be \"infinite\": write a duration like \"3s\"",
            )),
            Some(d) if d.is_zero() => Err(de::Error::custom("a period must be longer than zero")),
            Some(d) => Ok(PeriodValue(d)),
        }
    }
}

/// How long a thread spins before it sleeps: zero (never) to [`MAX_SPIN`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SpinValue(pub(crate) Duration);

/// The longest spin accepted: beyond, a thread that spins should poll instead.
pub(crate) const MAX_SPIN: Duration = Duration::from_millis(10);

impl<'de> Deserialize<'de> for SpinValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = d.deserialize_any(StrVisitor("a duration like \"20us\" or \"0us\""))?;
        match parse_duration(&s).map_err(de::Error::custom)? {
            Some(d) if d <= MAX_SPIN => Ok(SpinValue(d)),
            _ => Err(de::Error::custom(format!(
                "spin {s:?} is out of range (\"0us\", never, to \"10ms\")"
            ))),
        }
    }
}

/// A socket buffer size in bytes, from 1 to `i32::MAX` (the kernel's `int`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SizeValue(pub(crate) usize);

impl<'de> Deserialize<'de> for SizeValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = d.deserialize_any(StrVisitor("a size like 4194304 or \"4MiB\""))?;
        let n = parse_size(&s).map_err(de::Error::custom)?;
        match usize::try_from(n) {
            Ok(n) if n > 0 && n <= i32::MAX as usize => Ok(SizeValue(n)),
            _ => Err(de::Error::custom(format!(
                "size {n} is out of range (1 byte to 2147483647 bytes)"
            ))),
        }
    }
}

/// A Unix group, by name (looked up in `/etc/group`) or number: who else may open shared
/// memory segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct UnixGroupValue(pub(crate) u32);

impl<'de> Deserialize<'de> for UnixGroupValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = d.deserialize_any(StrVisitor(
            "a group name like \"robot\" or a number like 1001",
        ))?;
        parse_unix_group(
            &s,
            &std::fs::read_to_string("/etc/group").unwrap_or_default(),
        )
        .map(UnixGroupValue)
        .map_err(de::Error::custom)
    }
}

/// A group name or number, looked up in `group_file` (the text of `/etc/group`).
pub(crate) fn parse_unix_group(text: &str, group_file: &str) -> Result<u32, String> {
    let text = text.trim();
    if let Ok(gid) = text.parse::<u32>() {
        return Ok(gid);
    }
    group_file
        .lines()
        .filter_map(|l| {
            let mut f = l.split(':');
            Some((f.next()?, f.nth(1)?))
        })
        .find(|(name, _)| *name == text)
        .and_then(|(_, gid)| gid.parse().ok())
        .ok_or_else(|| format!("group {text:?} not found in /etc/group: give its number instead"))
}

/// A peer (see [`parse_peer`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PeerValue(pub(crate) Peer);

impl<'de> Deserialize<'de> for PeerValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = d.deserialize_any(StrVisitor(
            "a peer like \"10.0.0.2\", \"10.0.0.2:3\" or \"host:0-4\"",
        ))?;
        parse_peer(&s).map(PeerValue).map_err(de::Error::custom)
    }
}

/// `discovery.servers`: a list of `host[:port]`, each entry's position its server id (an
/// empty entry skips an id), as `ROS_DISCOVERY_SERVER` lists them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ServersValue(pub(crate) Vec<crate::DiscoveryServerAddress>);

impl<'de> Deserialize<'de> for ServersValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let entries = Vec::<String>::deserialize(d)?;
        crate::discovery_server::parse_server_list(entries.iter().map(String::as_str))
            .map(ServersValue)
            .map_err(de::Error::custom)
    }
}

/// A multicast group address (224.0.0.0/4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GroupValue(pub(crate) Ipv4Addr);

impl<'de> Deserialize<'de> for GroupValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = d.deserialize_any(StrVisitor("a multicast address like \"239.255.0.1\""))?;
        match s.trim().parse::<Ipv4Addr>() {
            Ok(a) if a.is_multicast() => Ok(GroupValue(a)),
            _ => Err(de::Error::custom(format!(
                "expected an IPv4 multicast address (224.0.0.0 to 239.255.255.255) like \
                 \"239.255.0.1\", found \"{s}\""
            ))),
        }
    }
}

/// `"auto"`, `"on"`, `"off"`, `true` (on) or `false` (off).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MulticastValue(pub(crate) MulticastMode);

impl<'de> Deserialize<'de> for MulticastValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = d.deserialize_any(StrVisitor("\"auto\", \"on\" or \"off\""))?;
        match s.as_str() {
            "true" => Ok(MulticastValue(MulticastMode::Enabled)),
            "false" => Ok(MulticastValue(MulticastMode::Disabled)),
            other => parse_multicast(other)
                .map(MulticastValue)
                .map_err(de::Error::custom),
        }
    }
}

/// A participant index, or `"auto"` (`None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IndexValue(pub(crate) Option<u32>);

impl<'de> Deserialize<'de> for IndexValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = d.deserialize_any(StrVisitor("a participant index (0, 1, ...) or \"auto\""))?;
        if s == "auto" {
            return Ok(IndexValue(None));
        }
        s.parse::<u32>().map(|i| IndexValue(Some(i))).map_err(|_| {
            de::Error::custom(format!(
                "expected a participant index (0 to 4294967295) or \"auto\", found {s}"
            ))
        })
    }
}

/// A SCHED_FIFO priority, 1 to 99.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PriorityValue(pub(crate) u8);

impl<'de> Deserialize<'de> for PriorityValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = i64::deserialize(d)?;
        match u8::try_from(n) {
            Ok(p) if PRIORITY_RANGE.contains(&n) => Ok(PriorityValue(p)),
            _ => Err(de::Error::custom(format!(
                "SCHED_FIFO priority {n} is out of range (1 to 99)"
            ))),
        }
    }
}

/// A CPU number, 0 to 1023.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CpuValue(pub(crate) u16);

impl<'de> Deserialize<'de> for CpuValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = i64::deserialize(d)?;
        match u16::try_from(n) {
            Ok(c) if (0..=MAX_CPU).contains(&n) => Ok(CpuValue(c)),
            _ => Err(de::Error::custom(format!(
                "CPU {n} is out of range (0 to {MAX_CPU})"
            ))),
        }
    }
}

/// Takes a string, an integer or a boolean as its text, so every value parser sees one form
/// and reports what it found.
struct StrVisitor(&'static str);

impl Visitor<'_> for StrVisitor {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        Ok(v.to_owned())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<String, E> {
        Ok(v.to_string())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<String, E> {
        Ok(v.to_string())
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<String, E> {
        Ok(v.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_groups_by_name_or_number() {
        let file = "root:x:0:\nrobot:x:1042:alice,bob\n";
        assert_eq!(parse_unix_group("robot", file), Ok(1042));
        assert_eq!(parse_unix_group(" 7 ", file), Ok(7));
        let e = parse_unix_group("nobody-here", file).expect_err("unknown");
        assert!(e.contains("nobody-here") && e.contains("number"), "{e}");
    }

    #[test]
    fn durations() {
        let ok = |s: &str| parse_duration(s).unwrap();
        assert_eq!(ok("10s"), Some(Duration::from_secs(10)));
        assert_eq!(ok("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(ok("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(ok("0.25 s"), Some(Duration::from_millis(250)));
        assert_eq!(ok("100us"), Some(Duration::from_micros(100)));
        assert_eq!(ok("2min"), Some(Duration::from_secs(120)));
        assert_eq!(ok("1h"), Some(Duration::from_secs(3600)));
        assert_eq!(ok("7ns"), Some(Duration::from_nanos(7)));
        assert_eq!(ok("infinite"), None);
        for bad in [
            "10",
            "s",
            "10 sec",
            "1.2.3s",
            "1.s",
            ".5s",
            "-1s",
            "",
            "99999999999h",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad:?} parsed");
        }
        assert!(parse_duration("10").unwrap_err().contains("unit"));
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4194304"), Ok(4_194_304));
        assert_eq!(parse_size("4MiB"), Ok(4 << 20));
        assert_eq!(parse_size("512 KiB"), Ok(512 << 10));
        assert_eq!(parse_size("8MB"), Ok(8_000_000));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert!(parse_size("4 megs").is_err());
        assert!(parse_size("1.5MiB").is_err());
    }

    #[test]
    fn peers() {
        let a = Ipv4Addr::new(10, 0, 0, 2);
        assert_eq!(parse_peer("10.0.0.2"), Ok(Peer::any_index(a)));
        assert_eq!(parse_peer(" 10.0.0.2:3 "), Ok(Peer::with_index(a, 3)));
        assert_eq!(parse_peer("10.0.0.2:0-9"), Ok(Peer::with_indices(a, 0, 9)));
        assert_eq!(parse_peer("10.0.0.2:4-4"), Ok(Peer::with_index(a, 4)));
        assert_eq!(
            parse_peer("localhost:2"),
            Ok(Peer::with_index(Ipv4Addr::LOCALHOST, 2))
        );
        for bad in [
            "10.0.0",
            "10.0.0.2:",
            "10.0.0.2:x",
            "10.0.0.2:-1",
            "10.0.0.2:1-",
            "10.0.0.2:+1",
            ":3",
            "10.0.0.2:1:2",
            "ho st",
        ] {
            assert!(parse_peer(bad).is_err(), "{bad:?} parsed");
        }
        let e = parse_peer("10.0.0.2:9-3").unwrap_err();
        assert!(e.contains("is empty"), "{e}");
        let e = parse_peer("10.0.0.2:0-300").unwrap_err();
        assert!(e.contains("301 participant indices; at most 256"), "{e}");
        let e = parse_peer("no-such-host.invalid").unwrap_err();
        assert!(
            e.contains("cannot resolve host name \"no-such-host.invalid\""),
            "{e}"
        );
    }

    #[test]
    fn peer_lists() {
        let a = Ipv4Addr::new(10, 0, 0, 2);
        assert_eq!(
            parse_peer_list("10.0.0.2:1, 10.0.0.2;\t127.0.0.1:0-2 "),
            Ok(vec![
                Peer::with_index(a, 1),
                Peer::any_index(a),
                Peer::with_indices(Ipv4Addr::LOCALHOST, 0, 2)
            ])
        );
        assert_eq!(parse_peer_list(" ; "), Ok(vec![]));
        assert!(parse_peer_list("10.0.0.2,10.0.0").is_err());
    }
}
