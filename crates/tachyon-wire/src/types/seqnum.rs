//! Sequence numbers, fragment numbers and their bitmap sets (numBits ≤ 256).

use crate::bytes::{Codec, Reader, Writer};
use crate::error::{EmitError, WireError};
use std::fmt;

/// The largest numBits a SequenceNumberSet / FragmentNumberSet may carry.
pub const MAX_SET_BITS: u32 = 256;

/// A 64-bit sequence number, sent as high `i32` then low `u32`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SequenceNumber(pub i64);

impl SequenceNumber {
    /// SEQUENCENUMBER_UNKNOWN: high = -1, low = 0.
    pub const UNKNOWN: SequenceNumber = SequenceNumber(-1 << 32);
    /// Sequence number 0 (used as "none yet").
    pub const ZERO: SequenceNumber = SequenceNumber(0);

    /// A sequence number from its wire halves.
    #[inline]
    pub const fn from_parts(high: i32, low: u32) -> Self {
        SequenceNumber(((high as i64) << 32) | low as i64)
    }

    /// The high 32 bits as sent on the wire.
    #[inline]
    pub const fn high(self) -> i32 {
        (self.0 >> 32) as i32
    }

    /// The low 32 bits as sent on the wire.
    #[inline]
    pub const fn low(self) -> u32 {
        self.0 as u32
    }
}

impl Codec for SequenceNumber {
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let high = r.i32()?;
        let low = r.u32()?;
        Ok(SequenceNumber::from_parts(high, low))
    }
    #[inline]
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.i32(self.high())?;
        w.u32(self.low())
    }
}

/// A fragment number (1-based) within a fragmented sample.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FragmentNumber(pub u32);

impl Codec for FragmentNumber {
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(FragmentNumber(r.u32()?))
    }
    #[inline]
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.u32(self.0)
    }
}

/// Bit `i` of a set bitmap: word `i / 32`, most significant bit first.
fn bit(bitmap: &[u32; 8], num_bits: u32, i: u32) -> bool {
    i < num_bits
        && bitmap
            .get((i / 32) as usize)
            .is_some_and(|w| w & (0x8000_0000 >> (i % 32)) != 0)
}

/// Number of 32-bit words on the wire for `num_bits` bits.
const fn words(num_bits: u32) -> usize {
    num_bits.div_ceil(32) as usize
}

fn decode_bitmap(
    r: &mut Reader<'_>,
    what: &'static str,
    start: usize,
) -> Result<(u32, [u32; 8]), WireError> {
    let num_bits = r.u32()?;
    if num_bits > MAX_SET_BITS {
        return Err(WireError::NumBitsTooLarge {
            what,
            offset: start,
            num_bits,
        });
    }
    let mut bitmap = [0u32; 8];
    for slot in bitmap.iter_mut().take(words(num_bits)) {
        *slot = r.u32()?;
    }
    Ok((num_bits, bitmap))
}

fn encode_bitmap(
    w: &mut Writer<'_>,
    what: &'static str,
    num_bits: u32,
    bitmap: &[u32; 8],
) -> Result<(), EmitError> {
    if num_bits > MAX_SET_BITS {
        return Err(EmitError::NumBitsTooLarge { what, num_bits });
    }
    w.u32(num_bits)?;
    for word in bitmap.iter().take(words(num_bits)) {
        w.u32(*word)?;
    }
    Ok(())
}

/// A set of sequence numbers `base .. base + num_bits` as a bitmap (ACKNACK, GAP).
///
/// `bitmap` words beyond `ceil(num_bits / 32)` are not sent and must be zero for equality after
/// a round trip; bits beyond `num_bits` in the last word are kept as sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SequenceNumberSet {
    /// The first sequence number the bitmap describes.
    pub base: SequenceNumber,
    /// Number of meaningful bits (0..=256).
    pub num_bits: u32,
    /// The bitmap words, most significant bit = `base`.
    pub bitmap: [u32; 8],
}

impl SequenceNumberSet {
    /// An empty set starting at `base`.
    #[inline]
    pub const fn empty(base: SequenceNumber) -> Self {
        SequenceNumberSet {
            base,
            num_bits: 0,
            bitmap: [0; 8],
        }
    }

    /// Bytes this set takes on the wire.
    #[inline]
    pub const fn wire_len(&self) -> usize {
        12 + 4 * words(if self.num_bits > MAX_SET_BITS {
            0
        } else {
            self.num_bits
        })
    }

    /// Whether `sn` is in the set.
    #[inline]
    pub fn contains(&self, sn: SequenceNumber) -> bool {
        match sn.0.checked_sub(self.base.0) {
            Some(d) if (0..i64::from(self.num_bits)).contains(&d) => {
                bit(&self.bitmap, self.num_bits, d as u32)
            }
            _ => false,
        }
    }

    /// Adds `sn`, growing `num_bits` as needed; false if `sn` is outside `base .. base + 256`.
    #[inline]
    pub fn insert(&mut self, sn: SequenceNumber) -> bool {
        match sn.0.checked_sub(self.base.0) {
            Some(d) if (0..i64::from(MAX_SET_BITS)).contains(&d) => {
                let i = d as u32;
                if let Some(w) = self.bitmap.get_mut((i / 32) as usize) {
                    *w |= 0x8000_0000 >> (i % 32);
                }
                self.num_bits = self.num_bits.max(i + 1);
                true
            }
            _ => false,
        }
    }

    /// The sequence numbers in the set, ascending.
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = SequenceNumber> + '_ {
        (0..self.num_bits.min(MAX_SET_BITS))
            .filter(|&i| bit(&self.bitmap, self.num_bits, i))
            .map(|i| SequenceNumber(self.base.0.saturating_add(i64::from(i))))
    }
}

impl Codec for SequenceNumberSet {
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let start = r.offset();
        let base = r.decode()?;
        let (num_bits, bitmap) = decode_bitmap(r, "SequenceNumberSet", start)?;
        Ok(SequenceNumberSet {
            base,
            num_bits,
            bitmap,
        })
    }
    #[inline]
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.encode(&self.base)?;
        encode_bitmap(w, "SequenceNumberSet", self.num_bits, &self.bitmap)
    }
}

/// A set of fragment numbers `base .. base + num_bits` as a bitmap (NACK_FRAG).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FragmentNumberSet {
    /// The first fragment number the bitmap describes.
    pub base: FragmentNumber,
    /// Number of meaningful bits (0..=256).
    pub num_bits: u32,
    /// The bitmap words, most significant bit = `base`.
    pub bitmap: [u32; 8],
}

impl FragmentNumberSet {
    /// An empty set starting at `base`.
    #[inline]
    pub const fn empty(base: FragmentNumber) -> Self {
        FragmentNumberSet {
            base,
            num_bits: 0,
            bitmap: [0; 8],
        }
    }

    /// Adds `n`, growing `num_bits` as needed; false if `n` is outside `base .. base + 256`.
    #[inline]
    pub fn insert(&mut self, n: FragmentNumber) -> bool {
        match n.0.checked_sub(self.base.0) {
            Some(i) if i < MAX_SET_BITS => {
                if let Some(w) = self.bitmap.get_mut((i / 32) as usize) {
                    *w |= 0x8000_0000 >> (i % 32);
                }
                self.num_bits = self.num_bits.max(i + 1);
                true
            }
            _ => false,
        }
    }

    /// Bytes this set takes on the wire.
    #[inline]
    pub const fn wire_len(&self) -> usize {
        8 + 4 * words(if self.num_bits > MAX_SET_BITS {
            0
        } else {
            self.num_bits
        })
    }

    /// Whether fragment `n` is in the set.
    #[inline]
    pub fn contains(&self, n: FragmentNumber) -> bool {
        n.0.checked_sub(self.base.0)
            .is_some_and(|d| bit(&self.bitmap, self.num_bits, d))
    }

    /// The fragment numbers in the set, ascending.
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = FragmentNumber> + '_ {
        (0..self.num_bits.min(MAX_SET_BITS))
            .filter(|&i| bit(&self.bitmap, self.num_bits, i))
            .map(|i| FragmentNumber(self.base.0.saturating_add(i)))
    }
}

impl Codec for FragmentNumberSet {
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let start = r.offset();
        let base = r.decode()?;
        let (num_bits, bitmap) = decode_bitmap(r, "FragmentNumberSet", start)?;
        Ok(FragmentNumberSet {
            base,
            num_bits,
            bitmap,
        })
    }
    #[inline]
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.encode(&self.base)?;
        encode_bitmap(w, "FragmentNumberSet", self.num_bits, &self.bitmap)
    }
}

impl fmt::Display for SequenceNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Self::UNKNOWN {
            f.write_str("unknown")
        } else {
            write!(f, "{}", self.0)
        }
    }
}

impl fmt::Display for SequenceNumberSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}:[", self.base, self.num_bits)?;
        for (i, sn) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{sn}")?;
        }
        f.write_str("]")
    }
}

impl fmt::Display for FragmentNumberSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}:[", self.base.0, self.num_bits)?;
        for (i, n) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{}", n.0)?;
        }
        f.write_str("]")
    }
}
