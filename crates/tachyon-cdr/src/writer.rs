//! The encoder's cursor over a caller-provided buffer.
//!
//! A [`Writer`] never allocates. It either writes into the buffer it was given or, made with
//! [`Writer::counter`], only counts the bytes an encoding would take; both run the very same
//! encoding code, so a size can never disagree with what is written. Lengths that come before
//! the data they measure (DHEADER, EMHEADER's NEXTINT, XCDR1 parameter lengths) are written as
//! placeholders and patched once the data is out, so encoding is a single pass.
//!
//! Alignment counts from an *origin*: the start of the stream, except inside an XCDR1 parameter
//! (a mutable member or an optional member), whose value aligns as if it started the stream
//! (XTypes 1.3 7.4.1.2; Cyclone DDS, Fast-CDR and OpenDDS all do this).

use crate::encoding::{Endianness, XcdrVersion};
use crate::error::EncodeError;
use crate::small::has_nul;

/// XCDR1 parameter id that introduces an extended (32-bit id and length) parameter header.
pub(crate) const PID_EXTENDED: u16 = 0x3f01;
/// XCDR1 parameter id that ends a parameter list.
pub(crate) const PID_LIST_END: u16 = 0x3f02;
/// XCDR1 parameter id a reader skips (filler).
pub(crate) const PID_IGNORE: u16 = 0x3f03;
/// Must-understand flag of an XCDR1 short parameter id.
pub(crate) const PID_FLAG_MUST_UNDERSTAND: u16 = 0x4000;
/// Must-understand flag of an XCDR2 EMHEADER.
pub(crate) const EMHEADER_MUST_UNDERSTAND: u32 = 0x8000_0000;
/// Mask of the member id in an EMHEADER or an extended parameter header.
pub(crate) const MEMBER_ID_MASK: u32 = 0x0fff_ffff;

/// Cursor that encodes CDR into a borrowed buffer (or only counts, see [`Writer::counter`]).
#[derive(Debug)]
pub struct Writer<'a> {
    buf: &'a mut [u8],
    pos: usize,
    origin: usize,
    counting: bool,
    version: XcdrVersion,
    endian: Endianness,
}

/// Where an open length placeholder sits; pass it back to close it.
#[derive(Clone, Copy, Debug)]
#[must_use = "an opened header must be closed"]
pub struct LengthMark {
    at: usize,
    kind: MarkKind,
}

#[derive(Clone, Copy, Debug)]
enum MarkKind {
    /// A 32-bit length of the bytes that follow it (DHEADER, NEXTINT).
    U32,
    /// An XCDR1 parameter header (short, widened to extended when needed); the value's
    /// alignment origin replaced `saved_origin` until the parameter closes.
    Param1 {
        id: u32,
        must_understand: bool,
        saved_origin: usize,
    },
    /// Nothing to patch (XCDR1 has no DHEADER).
    None,
}

impl<'a> Writer<'a> {
    /// A writer that encodes into `buf`, with alignment counted from `buf[0]`.
    pub fn new(buf: &'a mut [u8], version: XcdrVersion, endian: Endianness) -> Writer<'a> {
        Writer {
            buf,
            pos: 0,
            origin: 0,
            counting: false,
            version,
            endian,
        }
    }

    /// A writer that writes nothing and only counts the bytes an encoding takes.
    pub fn counter(version: XcdrVersion, endian: Endianness) -> Writer<'static> {
        Writer {
            buf: &mut [],
            pos: 0,
            origin: 0,
            counting: true,
            version,
            endian,
        }
    }

    /// Bytes written (or counted) so far.
    #[inline]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The XCDR version being written.
    #[inline]
    pub fn version(&self) -> XcdrVersion {
        self.version
    }

    /// True when writing XCDR2.
    #[inline]
    pub fn is_xcdr2(&self) -> bool {
        self.version == XcdrVersion::Xcdr2
    }

    /// The byte order being written.
    #[inline]
    pub fn endianness(&self) -> Endianness {
        self.endian
    }

    /// Reserves `n` bytes at the cursor and returns them (None when only counting).
    #[inline(always)]
    fn reserve(&mut self, n: usize) -> Result<Option<&mut [u8]>, EncodeError> {
        let start = self.pos;
        let end = start
            .checked_add(n)
            .ok_or(EncodeError::LengthOverflow { len: n })?;
        self.pos = end;
        if self.counting {
            return Ok(None);
        }
        let capacity = self.buf.len();
        if end > capacity {
            self.pos = start;
            return Err(EncodeError::BufferTooSmall {
                needed: end,
                capacity,
            });
        }
        Ok(Some(&mut self.buf[start..end]))
    }

    #[inline(always)]
    fn put<const N: usize>(&mut self, bytes: [u8; N]) -> Result<(), EncodeError> {
        if let Some(dst) = self.reserve(N)? {
            dst.copy_from_slice(&bytes);
        }
        Ok(())
    }

    /// Pads with zeros up to a multiple of `align` (clipped to the version's maximum alignment).
    #[inline(always)]
    pub fn align(&mut self, align: usize) -> Result<(), EncodeError> {
        let a = if align > self.version.max_align() {
            self.version.max_align()
        } else {
            align
        };
        // Alignments are powers of two, so a mask replaces a (slow) division.
        let pad = a.wrapping_sub(self.pos - self.origin) & (a - 1);
        if pad != 0 {
            self.pad_zeros(pad)?;
        }
        Ok(())
    }

    /// Writes `pad` (< 8) zero bytes. When the buffer has room, one constant-size 8-byte store
    /// does it (the bytes past `pad` are overwritten by whatever comes next), which avoids a
    /// call to `memset` for a handful of bytes.
    #[inline(always)]
    fn pad_zeros(&mut self, pad: usize) -> Result<(), EncodeError> {
        let start = self.pos;
        if let Some(dst) = self.buf.get_mut(start..start + 8) {
            dst.copy_from_slice(&[0u8; 8]);
            self.pos = start + pad;
            return Ok(());
        }
        if let Some(dst) = self.reserve(pad)? {
            for b in dst {
                *b = 0;
            }
        }
        Ok(())
    }

    /// Writes raw bytes with no alignment and no length.
    #[inline]
    pub fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), EncodeError> {
        if let Some(dst) = self.reserve(bytes.len())? {
            dst.copy_from_slice(bytes);
        }
        Ok(())
    }

    /// Writes an octet.
    #[inline]
    pub fn write_u8(&mut self, v: u8) -> Result<(), EncodeError> {
        self.put([v])
    }

    /// Writes a signed octet (IDL `int8`).
    #[inline]
    pub fn write_i8(&mut self, v: i8) -> Result<(), EncodeError> {
        self.put(v.to_ne_bytes())
    }

    /// Writes a boolean as one octet, 0 or 1.
    #[inline]
    pub fn write_bool(&mut self, v: bool) -> Result<(), EncodeError> {
        self.put([v as u8])
    }

    /// Writes an IDL `char` (one octet, Latin-1).
    #[inline]
    pub fn write_char(&mut self, c: char) -> Result<(), EncodeError> {
        let v = u8::try_from(c as u32).map_err(|_| EncodeError::CharOutOfRange(c))?;
        self.put([v])
    }

    /// Writes a 32-bit length or count, aligned to 4.
    #[inline]
    pub fn write_len(&mut self, len: usize) -> Result<(), EncodeError> {
        let v = u32::try_from(len).map_err(|_| EncodeError::LengthOverflow { len })?;
        self.write_u32(v)
    }

    /// Writes a string: length including the NUL, the bytes, the NUL.
    #[inline]
    pub fn write_string(&mut self, s: &str, bound: Option<u32>) -> Result<(), EncodeError> {
        let bytes = s.as_bytes();
        if let Some(bound) = bound {
            if bytes.len() > bound as usize {
                return Err(EncodeError::BoundExceeded {
                    what: "string",
                    len: bytes.len(),
                    bound,
                });
            }
        }
        if has_nul(bytes) {
            return Err(EncodeError::NulInString {
                at: memchr_nul(bytes).unwrap_or(0),
            });
        }
        let n = bytes.len() + 1;
        let len = u32::try_from(n).map_err(|_| EncodeError::LengthOverflow { len: n })?;
        self.align(4)?;
        let len = self.u32_bytes(len);
        // One reservation for the length, the characters and the NUL.
        if let Some(dst) = self.reserve(4 + n)? {
            let (head, rest) = dst.split_at_mut(4);
            head.copy_from_slice(&len);
            let (body, nul) = rest.split_at_mut(bytes.len());
            copy_small(body, bytes);
            if let Some(z) = nul.first_mut() {
                *z = 0;
            }
        }
        Ok(())
    }

    /// Opens a DHEADER (XCDR2 only; in XCDR1 nothing is written). Close with [`Self::end_dheader`].
    #[inline]
    pub fn begin_dheader(&mut self) -> Result<LengthMark, EncodeError> {
        if !self.is_xcdr2() {
            return Ok(LengthMark {
                at: self.pos,
                kind: MarkKind::None,
            });
        }
        self.begin_u32_length()
    }

    /// Closes a DHEADER opened by [`Self::begin_dheader`], writing the length of what followed it.
    #[inline]
    pub fn end_dheader(&mut self, mark: LengthMark) -> Result<(), EncodeError> {
        self.end_length(mark)
    }

    #[inline]
    fn begin_u32_length(&mut self) -> Result<LengthMark, EncodeError> {
        self.align(4)?;
        let at = self.pos;
        self.put([0; 4])?;
        Ok(LengthMark {
            at,
            kind: MarkKind::U32,
        })
    }

    /// Opens a member of a mutable type: an XCDR2 EMHEADER, or an XCDR1 parameter header.
    ///
    /// `length_code` is the member type's [`crate::Encode::LENGTH_CODE`] (XTypes 1.3,
    /// 7.4.3.4.2): 0–3 state a 1/2/4/8-byte length outright, 4 adds a NEXTINT with the byte
    /// length, and 5–7 let the value's own leading 32-bit length stand in for the NEXTINT.
    #[inline]
    pub fn begin_member(
        &mut self,
        member_id: u32,
        must_understand: bool,
        length_code: u8,
    ) -> Result<LengthMark, EncodeError> {
        let member_id = member_id & MEMBER_ID_MASK;
        if !self.is_xcdr2() {
            return self.begin_param1(member_id, must_understand);
        }
        self.align(4)?;
        let mu = if must_understand {
            EMHEADER_MUST_UNDERSTAND
        } else {
            0
        };
        let lc = u32::from(length_code.min(7));
        self.write_u32(mu | (lc << 28) | member_id)?;
        if lc == 4 {
            self.begin_u32_length()
        } else {
            Ok(LengthMark {
                at: self.pos,
                kind: MarkKind::None,
            })
        }
    }

    /// Closes a member opened by [`Self::begin_member`].
    #[inline]
    pub fn end_member(&mut self, mark: LengthMark) -> Result<(), EncodeError> {
        self.end_length(mark)
    }

    /// Opens an XCDR1 parameter (short header; widened to an extended one when needed).
    fn begin_param1(
        &mut self,
        member_id: u32,
        must_understand: bool,
    ) -> Result<LengthMark, EncodeError> {
        self.align(4)?;
        let at = self.pos;
        if member_id < u32::from(PID_EXTENDED) {
            self.put([0; 4])?;
        } else {
            self.put([0; 12])?;
        }
        let saved_origin = self.origin;
        self.origin = self.pos;
        Ok(LengthMark {
            at,
            kind: MarkKind::Param1 {
                id: member_id,
                must_understand,
                saved_origin,
            },
        })
    }

    /// Ends an XCDR1 parameter list (writes the PID_LIST_END sentinel); nothing in XCDR2.
    #[inline]
    pub fn end_parameter_list(&mut self) -> Result<(), EncodeError> {
        if self.is_xcdr2() {
            return Ok(());
        }
        self.align(4)?;
        // XTypes 1.3 table 34 sets must-understand on the list end, as Cyclone DDS does.
        self.write_u16(PID_LIST_END | PID_FLAG_MUST_UNDERSTAND)?;
        self.write_u16(0)
    }

    #[inline]
    fn end_length(&mut self, mark: LengthMark) -> Result<(), EncodeError> {
        match mark.kind {
            MarkKind::None => Ok(()),
            MarkKind::U32 => {
                let len = self.pos - mark.at - 4;
                let v = u32::try_from(len).map_err(|_| EncodeError::LengthOverflow { len })?;
                self.patch(mark.at, &self.u32_bytes(v));
                Ok(())
            }
            MarkKind::Param1 {
                id,
                must_understand,
                saved_origin,
            } => {
                self.origin = saved_origin;
                self.end_param1(mark.at, id, must_understand)
            }
        }
    }

    fn end_param1(&mut self, at: usize, id: u32, must_understand: bool) -> Result<(), EncodeError> {
        // The length is the value's exact size (XTypes 1.3); the next header's own alignment
        // supplies any gap, which Fast-CDR's reader requires.
        let extended_now = id >= u32::from(PID_EXTENDED);
        let header = if extended_now { 12 } else { 4 };
        let len = self.pos - at - header;
        if !extended_now && len > usize::from(u16::MAX) {
            // Widen the short header to an extended one: move the value 8 bytes up.
            self.reserve(8)?;
            if !self.counting {
                self.buf.copy_within(at + 4..self.pos - 8, at + 12);
            }
            return self.write_param1_extended(at, id, must_understand, len);
        }
        if extended_now {
            return self.write_param1_extended(at, id, must_understand, len);
        }
        let pid = (id as u16)
            | if must_understand {
                PID_FLAG_MUST_UNDERSTAND
            } else {
                0
            };
        let mut h = [0u8; 4];
        h[..2].copy_from_slice(&self.u16_bytes(pid));
        h[2..].copy_from_slice(&self.u16_bytes(len as u16));
        self.patch(at, &h);
        Ok(())
    }

    fn write_param1_extended(
        &mut self,
        at: usize,
        id: u32,
        must_understand: bool,
        len: usize,
    ) -> Result<(), EncodeError> {
        let len32 = u32::try_from(len).map_err(|_| EncodeError::LengthOverflow { len })?;
        let pid = PID_EXTENDED | PID_FLAG_MUST_UNDERSTAND;
        let flags = if must_understand { 0x4000_0000 } else { 0 };
        let mut h = [0u8; 12];
        h[0..2].copy_from_slice(&self.u16_bytes(pid));
        h[2..4].copy_from_slice(&self.u16_bytes(8));
        h[4..8].copy_from_slice(&self.u32_bytes(flags | id));
        h[8..12].copy_from_slice(&self.u32_bytes(len32));
        self.patch(at, &h);
        Ok(())
    }

    fn patch(&mut self, at: usize, bytes: &[u8]) {
        if self.counting {
            return;
        }
        // The placeholder was reserved earlier, so the range is inside the buffer.
        if let Some(dst) = self.buf.get_mut(at..at + bytes.len()) {
            dst.copy_from_slice(bytes);
        }
    }

    #[inline(always)]
    fn u16_bytes(&self, v: u16) -> [u8; 2] {
        match self.endian {
            Endianness::Big => v.to_be_bytes(),
            Endianness::Little => v.to_le_bytes(),
        }
    }

    #[inline(always)]
    fn u32_bytes(&self, v: u32) -> [u8; 4] {
        match self.endian {
            Endianness::Big => v.to_be_bytes(),
            Endianness::Little => v.to_le_bytes(),
        }
    }
}

macro_rules! write_num {
    ($($name:ident $slice:ident $t:ty;)*) => {$(
        impl Writer<'_> {
            #[doc = concat!("Writes a `", stringify!($t), "`, aligned to its size.")]
            #[inline(always)]
            pub fn $name(&mut self, v: $t) -> Result<(), EncodeError> {
                const N: usize = core::mem::size_of::<$t>();
                self.align(N)?;
                let b = match self.endian {
                    Endianness::Big => v.to_be_bytes(),
                    Endianness::Little => v.to_le_bytes(),
                };
                self.put::<N>(b)
            }

            #[doc = concat!("Writes consecutive `", stringify!($t), "` values (aligned once).")]
            #[inline]
            pub fn $slice(&mut self, vs: &[$t]) -> Result<(), EncodeError> {
                const N: usize = core::mem::size_of::<$t>();
                if vs.is_empty() {
                    return Ok(());
                }
                self.align(N)?;
                let big = self.endian == Endianness::Big;
                if let Some(dst) = self.reserve(vs.len() * N)? {
                    for (d, v) in dst.chunks_exact_mut(N).zip(vs) {
                        d.copy_from_slice(&if big { v.to_be_bytes() } else { v.to_le_bytes() });
                    }
                }
                Ok(())
            }
        }
    )*};
}

write_num! {
    write_u16 write_u16_slice u16;
    write_i16 write_i16_slice i16;
    write_u32 write_u32_slice u32;
    write_i32 write_i32_slice i32;
    write_u64 write_u64_slice u64;
    write_i64 write_i64_slice i64;
    write_f32 write_f32_slice f32;
    write_f64 write_f64_slice f64;
}

/// Copies `src` into `dst` (same length). Up to 16 bytes are copied with two overlapping
/// fixed-size moves instead of a call to `memcpy`.
#[inline(always)]
fn copy_small(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    if dst.len() != n {
        return;
    }
    if (8..=16).contains(&n) {
        let a: [u8; 8] = src[..8].try_into().unwrap_or([0; 8]);
        let b: [u8; 8] = src[n - 8..].try_into().unwrap_or([0; 8]);
        dst[..8].copy_from_slice(&a);
        dst[n - 8..].copy_from_slice(&b);
    } else if (4..8).contains(&n) {
        let a: [u8; 4] = src[..4].try_into().unwrap_or([0; 4]);
        let b: [u8; 4] = src[n - 4..].try_into().unwrap_or([0; 4]);
        dst[..4].copy_from_slice(&a);
        dst[n - 4..].copy_from_slice(&b);
    } else if n < 4 {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = *s;
        }
    } else {
        dst.copy_from_slice(src);
    }
}

#[cold]
fn memchr_nul(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == 0)
}

#[cfg(test)]
mod tests {
    use super::copy_small;
    use crate::small::has_nul;

    #[test]
    fn has_nul_finds_a_nul_at_every_position_of_every_length() {
        for n in 0..40usize {
            let clean: Vec<u8> = (0..n).map(|i| (i as u8 % 250) + 1).collect();
            assert!(!has_nul(&clean), "false positive at length {n}");
            let high: Vec<u8> = (0..n).map(|i| 0x80 | i as u8).collect();
            assert!(!has_nul(&high), "false positive (high bytes) at length {n}");
            for at in 0..n {
                let mut v = clean.clone();
                v[at] = 0;
                assert!(has_nul(&v), "missed NUL at {at} of {n}");
            }
        }
    }

    #[test]
    fn copy_small_copies_every_length() {
        for n in 0..40usize {
            let src: Vec<u8> = (0..n).map(|i| i as u8 ^ 0x5a).collect();
            let mut dst = vec![0u8; n];
            copy_small(&mut dst, &src);
            assert_eq!(dst, src);
        }
    }
}
