//! Ethernet, 802.1Q, IPv4 and UDP headers: written in front of a datagram on transmit, and
//! checked and stripped on receive. The AF_XDP socket moves whole frames, so the transport
//! does what the kernel's stack does for a UDP socket, and nothing more: no IP options are
//! written, and received frames with IP options or fragments never reach the socket (the XDP
//! program passes them to the kernel, whose socket on the same port receives them).

use std::net::{Ipv4Addr, SocketAddrV4};

/// Ethernet header without a VLAN tag.
pub const ETH_LEN: usize = 14;
/// An 802.1Q tag.
pub const VLAN_LEN: usize = 4;
/// IPv4 header without options.
pub const IPV4_LEN: usize = 20;
/// UDP header.
pub const UDP_LEN: usize = 8;

const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_VLAN: u16 = 0x8100;
const PROTO_UDP: u8 = 17;

/// The link-layer addresses and tag of one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    /// Destination MAC.
    pub dst: [u8; 6],
    /// Source MAC (the interface's).
    pub src: [u8; 6],
    /// 802.1Q tag: VLAN id (12 bits) and priority code point (3 bits), when the interface
    /// is configured with one.
    pub vlan: Option<(u16, u8)>,
}

impl Link {
    /// The length of the headers in front of the UDP payload.
    pub fn header_len(&self) -> usize {
        ETH_LEN + if self.vlan.is_some() { VLAN_LEN } else { 0 } + IPV4_LEN + UDP_LEN
    }
}

/// The multicast MAC of an IPv4 group (RFC 1112: 01:00:5e and the low 23 bits).
pub fn multicast_mac(group: Ipv4Addr) -> [u8; 6] {
    let o = group.octets();
    [0x01, 0x00, 0x5e, o[1] & 0x7f, o[2], o[3]]
}

/// Writes the headers for a UDP datagram of `payload_len` bytes from `from` to `to` into
/// `frame[..link.header_len()]`; the payload must already sit right after them. `ip_id` is
/// the IPv4 identification (a counter of the sender). Returns the frame's length, or `None`
/// when `frame` is too short or the datagram too long for one IPv4 packet.
pub fn write_headers(
    frame: &mut [u8],
    link: &Link,
    from: SocketAddrV4,
    to: SocketAddrV4,
    ip_id: u16,
    dscp: u8,
    payload_len: usize,
) -> Option<usize> {
    let hdr = link.header_len();
    let total = hdr.checked_add(payload_len)?;
    let ip_total = u16::try_from(IPV4_LEN + UDP_LEN + payload_len).ok()?;
    if frame.len() < total {
        return None;
    }
    frame[0..6].copy_from_slice(&link.dst);
    frame[6..12].copy_from_slice(&link.src);
    let mut at = 12;
    if let Some((vid, pcp)) = link.vlan {
        frame[12..14].copy_from_slice(&ETHERTYPE_VLAN.to_be_bytes());
        let tci = (u16::from(pcp & 7) << 13) | (vid & 0x0fff);
        frame[14..16].copy_from_slice(&tci.to_be_bytes());
        at += VLAN_LEN;
    }
    frame[at..at + 2].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
    let ip = at + 2;
    let udp = ip + IPV4_LEN;
    {
        let h = &mut frame[ip..udp];
        h[0] = 0x45;
        h[1] = dscp << 2;
        h[2..4].copy_from_slice(&ip_total.to_be_bytes());
        h[4..6].copy_from_slice(&ip_id.to_be_bytes());
        // Don't fragment: a datagram that does not fit the link is the sender's error
        // (the transport's largest datagram is the MTU's).
        h[6..8].copy_from_slice(&0x4000u16.to_be_bytes());
        h[8] = if to.ip().is_multicast() { 1 } else { 64 };
        h[9] = PROTO_UDP;
        h[10..12].copy_from_slice(&[0, 0]);
        h[12..16].copy_from_slice(&from.ip().octets());
        h[16..20].copy_from_slice(&to.ip().octets());
        let sum = fold(sum_words(h, 0));
        h[10..12].copy_from_slice(&(!sum).to_be_bytes());
    }
    let udp_len = (UDP_LEN + payload_len) as u16;
    frame[udp..udp + 2].copy_from_slice(&from.port().to_be_bytes());
    frame[udp + 2..udp + 4].copy_from_slice(&to.port().to_be_bytes());
    frame[udp + 4..udp + 6].copy_from_slice(&udp_len.to_be_bytes());
    frame[udp + 6..udp + 8].copy_from_slice(&[0, 0]);
    let mut pseudo = [0u8; 12];
    pseudo[0..4].copy_from_slice(&from.ip().octets());
    pseudo[4..8].copy_from_slice(&to.ip().octets());
    pseudo[9] = PROTO_UDP;
    pseudo[10..12].copy_from_slice(&udp_len.to_be_bytes());
    let sum = sum_words(&frame[udp..total], sum_words(&pseudo, 0));
    let mut csum = !fold(sum);
    if csum == 0 {
        // 0 means "no checksum" in UDP over IPv4; an all-ones sum is sent as 0xffff.
        csum = 0xffff;
    }
    frame[udp + 6..udp + 8].copy_from_slice(&csum.to_be_bytes());
    Some(total)
}

/// What [`parse`] found in a received frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parsed {
    /// The sender's address and port.
    pub from: SocketAddrV4,
    /// The destination port.
    pub dst_port: u16,
    /// Where the UDP payload starts in the frame.
    pub payload_start: usize,
    /// Its length (from the UDP header, checked against the frame).
    pub payload_len: usize,
}

/// Why a received frame was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// Shorter than its headers say.
    Short,
    /// Not IPv4 (or not over Ethernet / one 802.1Q tag).
    NotIpv4,
    /// IPv4 with options, or a fragment.
    Unsupported,
    /// Not UDP.
    NotUdp,
    /// A length field out of range.
    BadLength,
}

/// Checks the headers of a received frame and finds its UDP payload. Checksums are not
/// verified: a frame from a sender on the same host reaches the socket before its UDP
/// checksum is finished (`../shared/FACTS.md`), and Ethernet's CRC has been checked by the
/// NIC.
pub fn parse(frame: &[u8]) -> Result<Parsed, Refused> {
    if frame.len() < ETH_LEN + IPV4_LEN + UDP_LEN {
        return Err(Refused::Short);
    }
    let mut at = 12;
    let mut ethertype = u16::from_be_bytes([frame[at], frame[at + 1]]);
    if ethertype == ETHERTYPE_VLAN {
        at += VLAN_LEN;
        if frame.len() < at + 2 + IPV4_LEN + UDP_LEN {
            return Err(Refused::Short);
        }
        ethertype = u16::from_be_bytes([frame[at], frame[at + 1]]);
    }
    if ethertype != ETHERTYPE_IPV4 {
        return Err(Refused::NotIpv4);
    }
    let ip = at + 2;
    let h = &frame[ip..ip + IPV4_LEN];
    if h[0] >> 4 != 4 {
        return Err(Refused::NotIpv4);
    }
    if h[0] & 0x0f != 5 || u16::from_be_bytes([h[6], h[7]]) & 0x3fff != 0 {
        return Err(Refused::Unsupported);
    }
    if h[9] != PROTO_UDP {
        return Err(Refused::NotUdp);
    }
    let ip_total = usize::from(u16::from_be_bytes([h[2], h[3]]));
    if ip_total < IPV4_LEN + UDP_LEN || ip + ip_total > frame.len() {
        return Err(Refused::BadLength);
    }
    let src = Ipv4Addr::new(h[12], h[13], h[14], h[15]);
    let udp = ip + IPV4_LEN;
    let u = &frame[udp..udp + UDP_LEN];
    let sport = u16::from_be_bytes([u[0], u[1]]);
    let dport = u16::from_be_bytes([u[2], u[3]]);
    let ulen = usize::from(u16::from_be_bytes([u[4], u[5]]));
    if ulen < UDP_LEN || ulen > ip_total - IPV4_LEN {
        return Err(Refused::BadLength);
    }
    Ok(Parsed {
        from: SocketAddrV4::new(src, sport),
        dst_port: dport,
        payload_start: udp + UDP_LEN,
        payload_len: ulen - UDP_LEN,
    })
}

/// The one's-complement sum of `bytes` as big-endian 16-bit words (an odd last byte padded
/// with zero), added to `sum`, kept unfolded in 64 bits: eight bytes per addition, the
/// carry out of bit 63 added back in (2^64, 2^32 and 2^16 are all 1 modulo 0xffff, so
/// summing 64-bit big-endian words and folding at the end gives the 16-bit words' sum;
/// RFC 1071). `bytes` must start at an even offset of what is summed.
fn sum_words(bytes: &[u8], mut sum: u64) -> u64 {
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(c);
        let (s, carry) = sum.overflowing_add(u64::from_be_bytes(word));
        sum = s + u64::from(carry);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        let (s, carry) = sum.overflowing_add(u64::from_be_bytes(word));
        sum = s + u64::from(carry);
    }
    sum
}

/// Folds an unfolded sum of [`sum_words`] to 16 bits (zero only when every word was).
fn fold(sum: u64) -> u16 {
    let mut s = (sum & 0xffff_ffff) + (sum >> 32);
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    s as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(vlan: Option<(u16, u8)>) -> Link {
        Link {
            dst: [2, 0, 0, 0, 0, 2],
            src: [2, 0, 0, 0, 0, 1],
            vlan,
        }
    }

    fn addr(s: &str) -> SocketAddrV4 {
        s.parse().expect("address")
    }

    /// The IPv4 header checksum verifies to zero, and the UDP checksum over the pseudo
    /// header too: what a receiving kernel checks.
    fn checksums_verify(frame: &[u8], ip: usize) {
        assert_eq!(reference_sum(&[&frame[ip..ip + IPV4_LEN]]), 0xffff);
        let udp = ip + IPV4_LEN;
        let ulen = u16::from_be_bytes([frame[udp + 4], frame[udp + 5]]);
        let proto_len = [0, PROTO_UDP, frame[udp + 4], frame[udp + 5]];
        let sum = reference_sum(&[
            &frame[ip + 12..ip + 20],
            &proto_len,
            &frame[udp..udp + usize::from(ulen)],
        ]);
        assert_eq!(sum, 0xffff, "UDP checksum");
    }

    /// The one's-complement sum by its definition: 16-bit big-endian words, one at a time,
    /// each part padded to an even length (as every part but the last is in a real header).
    fn reference_sum(parts: &[&[u8]]) -> u16 {
        let mut sum = 0u64;
        for part in parts {
            for pair in part.chunks(2) {
                let hi = u64::from(pair[0]) << 8;
                sum += hi | pair.get(1).map_or(0, |&lo| u64::from(lo));
            }
        }
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        sum as u16
    }

    #[test]
    fn the_wide_sum_is_the_sum_of_16_bit_words() {
        // Every length from 0 to 300 (the tail's every shape), of pseudo-random bytes and of
        // all-ones bytes (the carries out of the top), also continued from a previous sum.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for len in 0..300 {
            let random: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            for bytes in [random, vec![0xff; len]] {
                assert_eq!(
                    fold(sum_words(&bytes, 0)),
                    reference_sum(&[&bytes]),
                    "{len}"
                );
                let head = [0xffu8, 0xfe, 0x12, 0x34];
                let chained = fold(sum_words(&bytes, sum_words(&head, 0)));
                assert_eq!(chained, reference_sum(&[&head, &bytes]), "{len} chained");
            }
        }
    }

    #[test]
    fn headers_round_trip_with_and_without_a_vlan_tag() {
        for (vlan, odd) in [(None, false), (Some((42, 6)), true)] {
            let l = link(vlan);
            let payload: Vec<u8> = (0..if odd { 101 } else { 100 }).map(|i| i as u8).collect();
            let mut frame = vec![0u8; 2048];
            let h = l.header_len();
            frame[h..h + payload.len()].copy_from_slice(&payload);
            let from = addr("10.0.0.1:7411");
            let to = addr("10.0.0.2:7413");
            let n = write_headers(&mut frame, &l, from, to, 7, 46, payload.len()).expect("fits");
            assert_eq!(n, h + payload.len());
            let p = parse(&frame[..n]).expect("parses");
            assert_eq!(p.from, from);
            assert_eq!(p.dst_port, 7413);
            assert_eq!(
                &frame[p.payload_start..p.payload_start + p.payload_len],
                &payload
            );
            let ip = if vlan.is_some() { 18 } else { 14 };
            checksums_verify(&frame[..n], ip);
            assert_eq!(frame[ip + 1] >> 2, 46, "DSCP");
            if vlan.is_some() {
                assert_eq!(&frame[12..16], &[0x81, 0x00, 0xc0, 42], "PCP 6, VID 42");
            }
        }
    }

    #[test]
    fn a_checksum_known_from_the_kernel_is_reproduced() {
        // A datagram "RTPS" from 10.0.0.1:1000 to 10.0.0.2:2000 (header summed by hand).
        let l = link(None);
        let mut frame = vec![0u8; 64];
        frame[42..46].copy_from_slice(b"RTPS");
        let n = write_headers(
            &mut frame,
            &l,
            addr("10.0.0.1:1000"),
            addr("10.0.0.2:2000"),
            0x1c46,
            0,
            4,
        )
        .expect("fits");
        checksums_verify(&frame[..n], 14);
        // The header checksum of 45 00 00 20 1c 46 40 00 40 11 .... 0a000001 0a000002.
        assert_eq!(&frame[24..26], &[0x0a, 0x85]);
    }

    #[test]
    fn hostile_frames_are_refused_never_read_out_of_bounds() {
        let l = link(None);
        let mut frame = vec![0u8; 128];
        let n = write_headers(
            &mut frame,
            &l,
            addr("10.0.0.1:1"),
            addr("10.0.0.2:2"),
            0,
            0,
            20,
        )
        .expect("fits");
        for cut in 0..n {
            let _ = parse(&frame[..cut]);
        }
        let mut bad = frame.clone();
        bad[16..18].copy_from_slice(&0xffffu16.to_be_bytes());
        assert_eq!(
            parse(&bad[..n]),
            Err(Refused::BadLength),
            "IP length past the end"
        );
        let mut bad = frame.clone();
        bad[38..40].copy_from_slice(&0xffffu16.to_be_bytes());
        assert_eq!(
            parse(&bad[..n]),
            Err(Refused::BadLength),
            "UDP length past IP's"
        );
        let mut bad = frame.clone();
        bad[20..22].copy_from_slice(&0x2000u16.to_be_bytes());
        assert_eq!(
            parse(&bad[..n]),
            Err(Refused::Unsupported),
            "a first fragment"
        );
        let mut bad = frame.clone();
        bad[14] = 0x46;
        assert_eq!(parse(&bad[..n]), Err(Refused::Unsupported), "IP options");
        let mut bad = frame.clone();
        bad[23] = 6;
        assert_eq!(parse(&bad[..n]), Err(Refused::NotUdp));
        let mut bad = frame;
        bad[12] = 0x86;
        assert_eq!(parse(&bad[..n]), Err(Refused::NotIpv4));
        // Random bytes: no panic.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..2000 {
            let mut f = [0u8; 80];
            for b in &mut f {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = x as u8;
            }
            f[12] = 0x08;
            f[13] = 0;
            f[14] = 0x45;
            let _ = parse(&f[..(x as usize % 81)]);
        }
    }

    #[test]
    fn multicast_groups_map_to_their_mac_and_ttl_one() {
        assert_eq!(
            multicast_mac(Ipv4Addr::new(239, 255, 0, 1)),
            [0x01, 0x00, 0x5e, 0x7f, 0x00, 0x01]
        );
        let mut frame = vec![0u8; 64];
        let n = write_headers(
            &mut frame,
            &link(None),
            addr("10.0.0.1:1"),
            addr("239.255.0.1:7401"),
            0,
            0,
            4,
        )
        .expect("fits");
        assert_eq!(frame[22], 1, "TTL");
        assert!(n > 0);
    }
}
