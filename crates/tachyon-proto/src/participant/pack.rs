//! Packing discovery traffic: the submessages the builtin endpoints have ready for one
//! destination go out in one datagram, as Cyclone DDS and Fast DDS do.
//!
//! When a participant learns another, each of its five reliable builtin writers heartbeats
//! the newcomer and each of its five builtin readers acknowledges the newcomer's writers:
//! ten datagrams of 40–60 bytes to one locator, and as many again for each round of the
//! handshake (measured in the simulator: ≈ 40 datagrams per remote participant during a
//! join, `docs/scale.md`). The participant gathers what its builtin endpoints have ready,
//! message by message, and appends each message's submessages to the datagram open for its
//! destination.
//!
//! Appending keeps each message's meaning: the receiver's state (RTPS 2.5 §8.3.4) carries
//! over from one message's submessages to the next, so only a message that starts with
//! INFO_DST (it names its participant, whatever came before) is appended, and one whose
//! INFO_DST is not followed by INFO_TS gets an INFO_TS without a timestamp (I flag) so it
//! does not inherit the previous message's. A message that does not start with INFO_DST, or
//! goes to several locators or a multicast group, is sent as it was written.
//!
//! A packed datagram stays within [`PACK_LIMIT`] bytes (one Ethernet MTU of UDP payload: a
//! lost IP fragment would lose every message in it).

use std::collections::VecDeque;

use crate::transmit::{Destination, Transmit};

/// Largest packed datagram: 1500-byte MTU minus IPv4 and UDP headers.
pub(crate) const PACK_LIMIT: usize = 1472;

/// Messages gathered in one pass at most (bounds the work of one `poll_transmit`).
pub(crate) const PACK_PASS: usize = 512;

/// Buffers of handed-out datagrams kept for reuse at most (a join's pass can fill hundreds).
const SPARE: usize = 16;

const HEADER: usize = 20;
const SUBMESSAGE_HEADER: usize = 4;
const INFO_DST: u8 = 0x0e;
const INFO_TS: u8 = 0x09;
const INFO_DST_LEN: usize = SUBMESSAGE_HEADER + 12;
/// INFO_TS with the I flag (no timestamp follows) and the E flag.
const INFO_TS_NONE: [u8; 4] = [INFO_TS, 0x03, 0, 0];

/// A datagram being filled or ready to hand out.
#[derive(Debug)]
struct Datagram {
    destination: Destination,
    priority: i32,
    bytes: Vec<u8>,
    /// Whether further messages may be appended.
    open: bool,
}

/// Gathers messages into datagrams per destination; see the module documentation.
#[derive(Debug, Default)]
pub(crate) struct Packer {
    /// Datagrams of the current pass, in the order their first message came.
    pending: VecDeque<Datagram>,
    /// Datagrams handed out by earlier passes, to hand out first.
    ready: VecDeque<Datagram>,
    /// Buffers of handed-out datagrams, reused.
    spare: Vec<Vec<u8>>,
    /// A buffer to write the next message of a pass into.
    pub(crate) scratch: Vec<u8>,
    /// Messages appended to another's datagram (they cost no datagram of their own).
    pub(crate) packed: u64,
}

impl Packer {
    /// Adds one whole RTPS message (header included) that goes to `t.destination`.
    pub(crate) fn add(&mut self, t: &Transmit, message: &[u8]) {
        let message = &message[..t.len.min(message.len())];
        if let Some(body) = appendable(&t.destination, message) {
            let extra = if needs_timestamp_reset(body) {
                INFO_TS_NONE.len()
            } else {
                0
            };
            if let Some(d) = self.pending.iter_mut().rev().find(|d| {
                d.open
                    && d.priority == t.priority
                    && d.destination == t.destination
                    && d.bytes.len() + body.len() + extra <= PACK_LIMIT
            }) {
                let (dst, rest) = body.split_at(INFO_DST_LEN);
                d.bytes.extend_from_slice(dst);
                if extra > 0 {
                    d.bytes.extend_from_slice(&INFO_TS_NONE);
                }
                d.bytes.extend_from_slice(rest);
                self.packed += 1;
                return;
            }
        }
        let mut bytes = self.spare.pop().unwrap_or_default();
        bytes.clear();
        bytes.extend_from_slice(message);
        self.pending.push_back(Datagram {
            destination: t.destination.clone(),
            priority: t.priority,
            open: matches!(t.destination, Destination::Unicast(_)),
            bytes,
        });
    }

    /// Ends the pass: its datagrams are ready, after those of earlier passes.
    pub(crate) fn finish(&mut self) {
        self.ready.extend(self.pending.drain(..));
    }

    /// Writes the next ready datagram into `buf`; `None` when none is ready (or, which a
    /// participant's buffers exclude, it does not fit: it is dropped then).
    /// Whether a packed datagram waits for [`pop_into`](Self::pop_into).
    pub(crate) fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    pub(crate) fn pop_into(&mut self, buf: &mut [u8]) -> Option<Transmit> {
        while let Some(d) = self.ready.pop_front() {
            let len = d.bytes.len();
            let fits = len <= buf.len();
            if fits {
                buf[..len].copy_from_slice(&d.bytes);
            }
            if self.spare.len() < SPARE {
                self.spare.push(d.bytes);
            }
            if fits {
                return Some(Transmit {
                    destination: d.destination,
                    len,
                    priority: d.priority,
                });
            }
        }
        None
    }
}

/// The submessages of `message` that may be appended to another message to the same
/// destination: a unicast message whose first submessage is INFO_DST.
fn appendable<'a>(destination: &Destination, message: &'a [u8]) -> Option<&'a [u8]> {
    if !matches!(destination, Destination::Unicast(_)) {
        return None;
    }
    let body = message.get(HEADER..)?;
    (body.len() >= INFO_DST_LEN && body[0] == INFO_DST).then_some(body)
}

/// Whether the submessage after the leading INFO_DST is something other than INFO_TS (the
/// message would otherwise inherit the timestamp of what precedes it).
fn needs_timestamp_reset(body: &[u8]) -> bool {
    body.get(INFO_DST_LEN).is_some_and(|&id| id != INFO_TS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tachyon_wire::submessage::SubmessageView;
    use tachyon_wire::{GuidPrefix, Header, Locator, MessageBuilder, MessageView, Time};

    fn header() -> Header {
        Header {
            guid_prefix: GuidPrefix([7; 12]),
            ..Header::default()
        }
    }

    fn to(port: u16) -> Destination {
        Destination::Unicast(Locator::udp(([10, 0, 0, 1], port).into()))
    }

    /// A message: INFO_DST naming `dst` when given, INFO_TS (at `marker` seconds) when `ts`,
    /// and a last INFO_DST (standing for an endpoint's submessage) to tell it apart.
    fn message(dst: Option<GuidPrefix>, ts: bool, marker: i32) -> Vec<u8> {
        let mut buf = vec![0u8; 256];
        let mut mb = MessageBuilder::new(&mut buf, &header()).unwrap();
        if let Some(p) = dst {
            mb.info_dst(p).unwrap();
        }
        if ts {
            mb.info_ts(Some(Time {
                seconds: marker,
                fraction: 0,
            }))
            .unwrap();
        }
        mb.info_dst(GuidPrefix([marker as u8; 12])).unwrap();
        let len = mb.finish();
        buf.truncate(len);
        buf
    }

    fn transmit(d: Destination, m: &[u8]) -> Transmit {
        Transmit {
            destination: d,
            len: m.len(),
            priority: 0,
        }
    }

    fn drain(p: &mut Packer) -> Vec<(Transmit, Vec<u8>)> {
        let mut out = Vec::new();
        let mut buf = vec![0u8; 65_536];
        while let Some(t) = p.pop_into(&mut buf) {
            out.push((t.clone(), buf[..t.len].to_vec()));
        }
        out
    }

    fn ids(datagram: &[u8]) -> Vec<u8> {
        MessageView::new_checked(datagram)
            .unwrap()
            .submessages()
            .map(|s| match s.unwrap() {
                SubmessageView::InfoDst(_) => INFO_DST,
                SubmessageView::InfoTs(v) if v.timestamp().is_none() => 0xff,
                SubmessageView::InfoTs(_) => INFO_TS,
                _ => 0,
            })
            .collect()
    }

    #[test]
    fn messages_to_one_destination_share_a_datagram() {
        let mut p = Packer::default();
        let a = message(Some(GuidPrefix([1; 12])), true, 1);
        let b = message(Some(GuidPrefix([1; 12])), false, 2);
        let c = message(Some(GuidPrefix([2; 12])), true, 3);
        p.add(&transmit(to(1), &a), &a);
        p.add(&transmit(to(2), &c), &c);
        p.add(&transmit(to(1), &b), &b);
        p.finish();
        let out = drain(&mut p);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].0.destination, to(1));
        assert_eq!(
            out[0].1.len(),
            a.len() + b.len() - HEADER + INFO_TS_NONE.len()
        );
        // b's INFO_DST, then an INFO_TS without timestamp: b does not inherit a's time.
        assert_eq!(
            ids(&out[0].1),
            [INFO_DST, INFO_TS, INFO_DST, INFO_DST, 0xff, INFO_DST]
        );
        assert_eq!(out[1].1, c);
        assert_eq!(p.packed, 1);
    }

    #[test]
    fn a_message_without_info_dst_starts_a_datagram_of_its_own() {
        let mut p = Packer::default();
        let a = message(Some(GuidPrefix([1; 12])), true, 1);
        let b = message(None, true, 2);
        let c = message(Some(GuidPrefix([1; 12])), true, 3);
        for m in [&a, &b, &c] {
            p.add(&transmit(to(1), m), m);
        }
        p.finish();
        let out = drain(&mut p);
        // b would take a's INFO_DST: it goes alone; c joins the newest open datagram (b's).
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].1, a);
        assert_eq!(out[1].1.len(), b.len() + c.len() - HEADER);
    }

    #[test]
    fn multicast_and_oversized_datagrams_are_not_appended_to() {
        let mut p = Packer::default();
        let group = Destination::Multicast(Locator::udp(([239, 255, 0, 1], 7400).into()));
        let a = message(Some(GuidPrefix([1; 12])), true, 1);
        p.add(&transmit(group.clone(), &a), &a);
        p.add(&transmit(group, &a), &a);
        assert_eq!(p.pending.len(), 2);
        let mut q = Packer::default();
        for _ in 0..200 {
            q.add(&transmit(to(1), &a), &a);
        }
        q.finish();
        let out = drain(&mut q);
        assert!(out.len() > 1);
        assert!(out.iter().all(|(t, _)| t.len <= PACK_LIMIT));
        let total: usize = out.iter().map(|(t, _)| t.len - HEADER).sum();
        assert_eq!(total, 200 * (a.len() - HEADER));
    }

    #[test]
    fn earlier_passes_go_first_and_buffers_are_reused() {
        let mut p = Packer::default();
        let a = message(Some(GuidPrefix([1; 12])), true, 1);
        p.add(&transmit(to(1), &a), &a);
        p.finish();
        p.add(&transmit(to(2), &a), &a);
        p.finish();
        assert_eq!(p.ready.len(), 2);
        let out = drain(&mut p);
        assert_eq!(out[0].0.destination, to(1));
        assert_eq!(out[1].0.destination, to(2));
        assert_eq!(p.spare.len(), 2);
        let mut small = [0u8; 8];
        p.add(&transmit(to(1), &a), &a);
        p.finish();
        assert_eq!(
            p.pop_into(&mut small),
            None,
            "too large for the buffer: dropped"
        );
    }
}
