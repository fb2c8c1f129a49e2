//! Where everything lies in a segment, computed from the few numbers its header holds, and
//! checked: a segment read from another process is untrusted, so its numbers are validated
//! once, when it is opened, against limits and against the file's size, and copied; offsets
//! are then computed from the copy, never re-read.
//!
//! ```text
//! 0      header      magic "TACHSHM1", version, state, token, sizes (below)
//! 256    doorbells   one per port, 64 bytes each: futex word `seq`, `waiters` flags
//! 512    incoming    `incoming` u64 words: tokens of segments that hold channels for us
//! ...    channels    `channels` × (reader token, port, epoch | head | ring of entries)
//! ...    slots       `small_count` × small_size, then `large_count` × large_size
//! ```
//!
//! Every region starts on a 64-byte line; a channel's `head` (written by its reader) has a
//! line of its own. A ring entry (256 bytes, four lines) is a stamp, a slot number, a length
//! and room for a datagram of up to [`entry::INLINE`] bytes: a datagram that fits is written
//! into the entry itself ([`INLINE_SLOT`]), a larger one into a slot the entry names. The
//! owner writes the datagram (or the slot number) and the length, then the stamp (the entry's
//! ring index plus one, with release ordering); a reader waiting for ring index `i` watches
//! entry `i`'s stamp. No shared `tail` and no length word in the slot: a small datagram's way
//! from writer to reader crosses the entry's lines and nothing else; its first 48 bytes come
//! with the stamp's line, and the lines after it are known before the stamp is read (not
//! named by it, as a slot is: `docs/hot-path.md`).

/// "TACHSHM1".
pub(crate) const MAGIC: u64 = u64::from_be_bytes(*b"TACHSHM1");
/// The layout's version; a segment of another version is not used.
pub(crate) const VERSION: u32 = 3;

/// Header offsets.
pub(crate) mod header {
    pub(crate) const MAGIC: usize = 0;
    pub(crate) const VERSION: usize = 8;
    /// [`super::STATE_INIT`], [`super::STATE_LIVE`] or [`super::STATE_CLOSED`].
    pub(crate) const STATE: usize = 12;
    pub(crate) const TOKEN: usize = 16;
    pub(crate) const TOTAL: usize = 24;
    pub(crate) const SMALL_COUNT: usize = 32;
    pub(crate) const SMALL_SIZE: usize = 36;
    pub(crate) const LARGE_COUNT: usize = 40;
    pub(crate) const LARGE_SIZE: usize = 44;
    pub(crate) const CHANNELS: usize = 48;
    pub(crate) const RING: usize = 52;
    pub(crate) const INCOMING: usize = 56;
    /// Bumped by a writer that added or changed a channel for the owner.
    pub(crate) const INCOMING_GEN: usize = 60;
    /// The owner's process id (informative: liveness is the `flock`).
    pub(crate) const PID: usize = 64;
}

/// Being set up: not yet used by anyone.
pub(crate) const STATE_INIT: u32 = 0;
/// In use.
pub(crate) const STATE_LIVE: u32 = 1;
/// Its owner closed it: detach.
pub(crate) const STATE_CLOSED: u32 = 2;

const LINE: usize = 64;
const DOORBELLS: usize = 256;
/// Doorbells: one per port (0 unused, 1 user data, 2 critical, 3 spare).
pub(crate) const PORTS: usize = 4;
const INCOMING: usize = DOORBELLS + PORTS * LINE;

/// A doorbell's waiters flag: a thread sleeps on the futex.
pub(crate) const WAITER_FUTEX: u32 = 1;

/// Channel offsets, from the channel's start.
pub(crate) mod channel {
    /// The reader's token; 0: the channel is free.
    pub(crate) const READER: usize = 0;
    pub(crate) const PORT: usize = 8;
    /// Bumped each time the owner sets the channel up anew (the reader re-reads `head`).
    pub(crate) const EPOCH: usize = 12;
    pub(crate) const HEAD: usize = 64;
    pub(crate) const RING: usize = 128;
}

/// Ring entry offsets, from the entry's start.
pub(crate) mod entry {
    /// Ring index + 1 (wrapping) once the entry holds that index's datagram; 0 when the
    /// channel was set up and the entry not written since.
    pub(crate) const STAMP: usize = 0;
    /// The slot holding the datagram, or [`super::INLINE_SLOT`]: the entry holds it.
    pub(crate) const SLOT: usize = 4;
    /// The datagram's length.
    pub(crate) const LEN: usize = 8;
    /// Where the entry holds its datagram itself.
    pub(crate) const DATA: usize = 16;
    /// An entry's size: four lines.
    pub(crate) const SIZE: usize = 256;
    /// The largest datagram an entry holds itself: a small sample's DATA with its inline QoS
    /// and a HEARTBEAT (a 32-byte sample's takes 156 bytes).
    pub(crate) const INLINE: usize = SIZE - DATA;
}

/// The slot number of an entry that holds its datagram itself (no slot has it: there are at
/// most [`limits::MAX_SLOTS`]).
pub(crate) const INLINE_SLOT: u32 = u32::MAX;

/// The stamp of ring index `i`'s entry once written.
pub(crate) fn stamp(i: u32) -> u32 {
    i.wrapping_add(1)
}

/// Limits a segment's numbers must respect.
pub(crate) mod limits {
    pub(crate) const MAX_SLOTS: u32 = 1 << 16;
    pub(crate) const MAX_SLOT_SIZE: u32 = 64 << 20;
    pub(crate) const MAX_CHANNELS: u32 = 4096;
    pub(crate) const MAX_RING: u32 = 1 << 16;
    pub(crate) const MAX_INCOMING: u32 = 4096;
    pub(crate) const MAX_TOTAL: u64 = 16 << 30;
}

/// The numbers a segment is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Params {
    pub small_count: u32,
    pub small_size: u32,
    pub large_count: u32,
    pub large_size: u32,
    pub channels: u32,
    pub ring: u32,
    pub incoming: u32,
}

/// A validated layout: [`Params`] and the offsets they give.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    pub p: Params,
    channels_at: usize,
    channel_stride: usize,
    small_at: usize,
    small_stride: usize,
    large_at: usize,
    large_stride: usize,
    pub total: usize,
}

fn up(n: usize) -> Option<usize> {
    n.checked_add(LINE - 1).map(|n| n / LINE * LINE)
}

impl Layout {
    /// The layout of `p`, or why it is not acceptable.
    pub(crate) fn new(p: Params) -> Result<Layout, String> {
        use limits::*;
        let bad = |what: &str, v: u32, max: u32| format!("{what} {v} outside 1..={max}");
        if p.small_count > MAX_SLOTS || p.large_count > MAX_SLOTS {
            return Err(format!(
                "slot counts {}/{} above {MAX_SLOTS}",
                p.small_count, p.large_count
            ));
        }
        if p.small_count == 0 && p.large_count == 0 {
            return Err("no slots".into());
        }
        for (what, v) in [
            ("small slot size", p.small_size),
            ("large slot size", p.large_size),
        ] {
            if v == 0 || v > MAX_SLOT_SIZE {
                return Err(bad(what, v, MAX_SLOT_SIZE));
            }
        }
        if p.small_size > p.large_size {
            return Err("small slots larger than large ones".into());
        }
        if p.channels == 0 || p.channels > MAX_CHANNELS {
            return Err(bad("channel count", p.channels, MAX_CHANNELS));
        }
        if p.ring == 0 || p.ring > MAX_RING || !p.ring.is_power_of_two() {
            return Err(format!(
                "ring length {} not a power of two in 1..={MAX_RING}",
                p.ring
            ));
        }
        if p.incoming == 0 || p.incoming > MAX_INCOMING {
            return Err(bad("incoming table length", p.incoming, MAX_INCOMING));
        }
        let n = |v: u32| v as usize;
        let overflow = || "segment size overflows".to_string();
        let channels_at = up(INCOMING + n(p.incoming) * 8).ok_or_else(overflow)?;
        let channel_stride = up(channel::RING + n(p.ring) * entry::SIZE).ok_or_else(overflow)?;
        let small_at = n(p.channels)
            .checked_mul(channel_stride)
            .and_then(|c| c.checked_add(channels_at))
            .ok_or_else(overflow)?;
        let small_stride = up(n(p.small_size)).ok_or_else(overflow)?;
        let large_at = n(p.small_count)
            .checked_mul(small_stride)
            .and_then(|c| c.checked_add(small_at))
            .ok_or_else(overflow)?;
        let large_stride = up(n(p.large_size)).ok_or_else(overflow)?;
        let total = n(p.large_count)
            .checked_mul(large_stride)
            .and_then(|c| c.checked_add(large_at))
            .ok_or_else(overflow)?;
        if total as u64 > MAX_TOTAL {
            return Err(format!("segment of {total} bytes above {MAX_TOTAL}"));
        }
        Ok(Layout {
            p,
            channels_at,
            channel_stride,
            small_at,
            small_stride,
            large_at,
            large_stride,
            total,
        })
    }

    /// Offset of port `port`'s doorbell word (`seq`); its `waiters` word follows.
    pub(crate) fn doorbell(port: u32) -> Option<usize> {
        let port = port as usize;
        (port < PORTS).then_some(DOORBELLS + port * LINE)
    }

    /// Offset of incoming entry `i`.
    pub(crate) fn incoming(&self, i: u32) -> Option<usize> {
        (i < self.p.incoming).then_some(INCOMING + i as usize * 8)
    }

    /// Offset of channel `c`.
    pub(crate) fn channel(&self, c: u32) -> Option<usize> {
        (c < self.p.channels).then_some(self.channels_at + c as usize * self.channel_stride)
    }

    /// Offset of entry `i` (any number: taken modulo the ring) of the ring of the channel at
    /// `channel`.
    pub(crate) fn ring_entry(&self, channel: usize, i: u32) -> usize {
        channel + channel::RING + (i & (self.p.ring - 1)) as usize * entry::SIZE
    }

    /// How many slots there are.
    pub(crate) fn slots(&self) -> u32 {
        self.p.small_count + self.p.large_count
    }

    /// Offset and capacity of slot `s`, if it exists.
    pub(crate) fn slot(&self, s: u32) -> Option<(usize, usize)> {
        if s < self.p.small_count {
            Some((
                self.small_at + s as usize * self.small_stride,
                self.p.small_size as usize,
            ))
        } else if s - self.p.small_count < self.p.large_count {
            let i = (s - self.p.small_count) as usize;
            Some((
                self.large_at + i * self.large_stride,
                self.p.large_size as usize,
            ))
        } else {
            None
        }
    }

    /// Whether slot `s` is a small one.
    pub(crate) fn is_small(&self, s: u32) -> bool {
        s < self.p.small_count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> Params {
        Params {
            small_count: 8,
            small_size: 2048,
            large_count: 2,
            large_size: 65_536,
            channels: 4,
            ring: 16,
            incoming: 8,
        }
    }

    #[test]
    fn regions_do_not_overlap_and_fill_the_segment() {
        let l = Layout::new(params()).expect("layout");
        let last_channel = l.channel(3).expect("channel 3");
        assert!(l.ring_entry(last_channel, 15) + entry::SIZE <= l.slot(0).expect("slot").0);
        assert!(l.incoming(7).expect("entry") + 8 <= l.channel(0).expect("channel"));
        let (last, cap) = l.slot(9).expect("last slot");
        assert_eq!(cap, 65_536);
        assert_eq!(last + cap, l.total);
        assert!(l.slot(10).is_none());
        assert!(l.channel(4).is_none());
        assert!(l.incoming(8).is_none());
        assert_eq!(
            l.ring_entry(last_channel, 16),
            l.ring_entry(last_channel, 0)
        );
        for c in 0..4 {
            let at = l.channel(c).expect("channel");
            assert_eq!(at % LINE, 0);
            // Every entry starts a line.
            for i in 0..16 {
                assert_eq!(l.ring_entry(at, i) % LINE, 0);
            }
        }
    }

    #[test]
    fn hostile_numbers_are_refused() {
        let mut p = params();
        p.ring = 12;
        assert!(Layout::new(p).is_err(), "not a power of two");
        let mut p = params();
        p.small_count = u32::MAX;
        assert!(Layout::new(p).is_err());
        let mut p = params();
        p.large_size = u32::MAX;
        assert!(Layout::new(p).is_err());
        let mut p = params();
        p.channels = 0;
        assert!(Layout::new(p).is_err());
        let p = Params {
            small_count: limits::MAX_SLOTS,
            small_size: limits::MAX_SLOT_SIZE,
            large_count: limits::MAX_SLOTS,
            large_size: limits::MAX_SLOT_SIZE,
            channels: 1,
            ring: 1,
            incoming: 1,
        };
        assert!(Layout::new(p).is_err(), "larger than the limit");
    }
}
