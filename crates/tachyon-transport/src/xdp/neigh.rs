//! What the XDP transport needs to know of its interface and its neighbours, read from the
//! kernel: index, MAC, MTU and on-link subnet of the interface (ioctls,
//! `/proc/net/route`), and the MAC of each IPv4 neighbour (`/proc/net/arp`), re-read when a
//! destination is missing and every few seconds, outside any lock that senders take.

use std::cell::Cell;
use std::collections::HashMap;
use std::io;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::RwLock;

use crate::clock;

/// The interface, as the kernel describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkInfo {
    /// Its name.
    pub name: String,
    /// Its index.
    pub ifindex: u32,
    /// Its MAC address.
    pub mac: [u8; 6],
    /// Its MTU (the largest IP packet).
    pub mtu: usize,
    /// The on-link subnet (address and prefix length) its routes name, if any.
    pub subnet: Option<(Ipv4Addr, u8)>,
}

/// Parses `aa:bb:cc:dd:ee:ff`.
pub fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let mut mac = [0u8; 6];
    let mut parts = s.trim().split(':');
    for b in &mut mac {
        *b = u8::from_str_radix(parts.next()?, 16).ok()?;
    }
    parts.next().is_none().then_some(mac)
}

/// Reads the interface `name` (in the calling thread's network namespace).
pub fn link_info(name: &str) -> io::Result<LinkInfo> {
    let (ifindex, mac, mtu) = super::xsk::interface_facts(name)?;
    let routes = std::fs::read_to_string("/proc/thread-self/net/route").unwrap_or_default();
    Ok(LinkInfo {
        name: name.to_owned(),
        ifindex,
        mac,
        mtu,
        subnet: on_link_subnet(&routes, name),
    })
}

/// The first on-link (gateway 0) route of `iface` in the text of `/proc/net/route`
/// (addresses in hex, in the host's byte order).
pub fn on_link_subnet(routes: &str, iface: &str) -> Option<(Ipv4Addr, u8)> {
    routes.lines().skip(1).find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 8 || f[0] != iface {
            return None;
        }
        let hex = |s: &str| u32::from_str_radix(s, 16).ok();
        let (dest, gw, mask) = (hex(f[1])?, hex(f[2])?, hex(f[7])?);
        if gw != 0 || mask == 0 {
            return None;
        }
        Some((
            Ipv4Addr::from(in_memory_order(dest)),
            mask.count_ones() as u8,
        ))
    })
}

/// `/proc/net/route` prints each address as the `u32` in memory, in hex: on a
/// little-endian host the first octet is the lowest byte.
fn in_memory_order(v: u32) -> [u8; 4] {
    if cfg!(target_endian = "little") {
        v.to_le_bytes()
    } else {
        v.to_be_bytes()
    }
}

/// The complete entries of `iface` in the text of `/proc/net/arp`.
pub fn parse_arp(text: &str, iface: &str) -> Table {
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 6 || f[5] != iface {
                return None;
            }
            let flags = u32::from_str_radix(f[2].trim_start_matches("0x"), 16).ok()?;
            // ATF_COM: the entry is complete.
            if flags & 0x2 == 0 {
                return None;
            }
            Some((f[0].parse().ok()?, parse_mac(f[3])?))
        })
        .collect()
}

/// A neighbour table: IPv4 address to MAC (foldhash: a look-up per datagram sent).
pub type Table = HashMap<Ipv4Addr, [u8; 6], foldhash::fast::RandomState>;

/// Re-read the table at most this often when a destination is missing …
const MISS_REREAD_NS: u64 = 20_000_000;
/// … and at least this often anyway (a neighbour that changed its MAC).
const REFRESH_NS: u64 = 2_000_000_000;

/// The neighbours of one interface.
#[derive(Debug)]
pub struct Neighbours {
    iface: String,
    table: RwLock<Table>,
    /// When the table was last read (the coarse monotonic clock, ns: a few milliseconds'
    /// resolution is plenty for these intervals, and it is read per datagram sent).
    read_at: AtomicU64,
    /// Which table this is: this instance (unique in the process) and how many times it
    /// was read. A thread's last answer ([`LAST`]) holds while both are the same.
    id: u64,
    version: AtomicU64,
}

/// Numbers the [`Neighbours`] of the process.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A thread's last answer: (table id, table version, address, MAC). Sending to the same
/// neighbour again needs no look-up under the table's lock (two atomic read-modify-writes
/// per datagram sent).
type Answer = (u64, u64, Ipv4Addr, [u8; 6]);

thread_local! {
    static LAST: Cell<Option<Answer>> = const { Cell::new(None) };
}

impl Neighbours {
    /// The neighbours of `iface`, read now.
    pub fn new(iface: &str) -> Neighbours {
        let n = Neighbours {
            iface: iface.to_owned(),
            table: RwLock::new(Table::default()),
            read_at: AtomicU64::new(0),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            version: AtomicU64::new(0),
        };
        n.reread();
        n
    }

    fn now(&self) -> u64 {
        clock::coarse_nanos()
    }

    /// Reads the kernel's table (outside the lock) and swaps it in.
    fn reread(&self) {
        let text = std::fs::read_to_string("/proc/thread-self/net/arp").unwrap_or_default();
        let fresh = parse_arp(&text, &self.iface);
        self.read_at.store(self.now().max(1), Ordering::Relaxed);
        self.replace(fresh);
    }

    /// Puts `table` in place of the one read before.
    fn replace(&self, table: Table) {
        let mut t = self.table.write().unwrap_or_else(|p| p.into_inner());
        *t = table;
        // Under the write lock: a thread's answer from the table before is not used again.
        self.version.fetch_add(1, Ordering::Release);
    }

    /// The MAC of `ip`, if the kernel knows it; a miss re-reads the table (rate-limited),
    /// and so does an old table.
    pub fn lookup(&self, ip: Ipv4Addr) -> Option<[u8; 6]> {
        let age = self
            .now()
            .saturating_sub(self.read_at.load(Ordering::Relaxed));
        if age >= REFRESH_NS {
            self.reread();
        }
        let version = self.version.load(Ordering::Acquire);
        let last = LAST.try_with(Cell::get).ok().flatten();
        if let Some((id, v, a, mac)) = last {
            if (id, v, a) == (self.id, version, ip) {
                return Some(mac);
            }
        }
        let hit = self
            .table
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&ip)
            .copied();
        if let Some(mac) = hit {
            let _ = LAST.try_with(|l| l.set(Some((self.id, version, ip, mac))));
        }
        if hit.is_none() && (MISS_REREAD_NS..REFRESH_NS).contains(&age) {
            self.reread();
            return self
                .table
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .get(&ip)
                .copied();
        }
        hit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_tables_are_read() {
        let arp =
            "IP address       HW type     Flags       HW address            Mask     Device\n\
                   10.0.0.2         0x1         0x2         02:00:00:00:00:02     *        veth0\n\
                   10.0.0.3         0x1         0x0         00:00:00:00:00:00     *        veth0\n\
                   10.0.1.2         0x1         0x2         02:00:00:00:01:02     *        eth1\n";
        let t = parse_arp(arp, "veth0");
        assert_eq!(
            t.len(),
            1,
            "incomplete and other interfaces' entries left out"
        );
        assert_eq!(
            t.get(&Ipv4Addr::new(10, 0, 0, 2)),
            Some(&[2, 0, 0, 0, 0, 2])
        );
        let routes =
            "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n\
                      eth0\t00000000\t0101A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n\
                      veth0\t0000000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n";
        if cfg!(target_endian = "little") {
            assert_eq!(
                on_link_subnet(routes, "veth0"),
                Some((Ipv4Addr::new(10, 0, 0, 0), 24))
            );
        }
        assert_eq!(on_link_subnet(routes, "eth0"), None, "a gateway route");
        assert_eq!(parse_mac("02:00:00:00:00:0g"), None);
        assert_eq!(parse_mac("02:00:00:00:00:01:02"), None);
    }

    /// A thread's remembered answer is used only for the same table, read the same time.
    #[test]
    fn a_remembered_answer_follows_the_table() {
        let ip = Ipv4Addr::new(10, 9, 8, 7);
        let table = |last: u8| Table::from_iter([(ip, [2, 0, 0, 0, 0, last])]);
        let (a, b) = (
            Neighbours::new("tachyon-none0"),
            Neighbours::new("tachyon-none1"),
        );
        a.replace(table(1));
        b.replace(table(2));
        for _ in 0..2 {
            assert_eq!(a.lookup(ip), Some([2, 0, 0, 0, 0, 1]));
            assert_eq!(
                b.lookup(ip),
                Some([2, 0, 0, 0, 0, 2]),
                "another interface's table"
            );
        }
        a.replace(table(3));
        assert_eq!(
            a.lookup(ip),
            Some([2, 0, 0, 0, 0, 3]),
            "the table read again"
        );
        a.replace(Table::default());
        assert_eq!(a.lookup(ip), None, "a neighbour gone");
    }
}
