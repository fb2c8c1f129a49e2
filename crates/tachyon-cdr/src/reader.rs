//! The decoder's cursor over borrowed input.
//!
//! Every read is checked against the current *limit*: the end of the input, or the end of the
//! enclosing DHEADER or mutable member. Nothing is allocated from a length read off the input
//! before that length was checked against the bytes that remain.

use crate::encoding::{Endianness, XcdrVersion};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::writer::{
    EMHEADER_MUST_UNDERSTAND, MEMBER_ID_MASK, PID_EXTENDED, PID_FLAG_MUST_UNDERSTAND, PID_IGNORE,
    PID_LIST_END,
};

/// How deep structures may nest before decoding gives up (protects the stack).
pub const MAX_DEPTH: u16 = 128;

/// Cursor that decodes CDR from borrowed bytes.
#[derive(Clone, Debug)]
pub struct Reader<'de> {
    buf: &'de [u8],
    pos: usize,
    /// Where alignment counts from (the start, or an XCDR1 parameter value's start).
    origin: usize,
    limit: usize,
    base: usize,
    depth: u16,
    version: XcdrVersion,
    endian: Endianness,
}

/// A region opened by [`Reader::begin_delimited`] or a mutable member; pass it back to close it.
#[derive(Clone, Copy, Debug)]
#[must_use = "an opened region must be closed"]
pub struct Region {
    /// Where the region ends; `None` for XCDR1 "regions", which have no delimiter.
    end: Option<usize>,
    saved_limit: usize,
    saved_origin: usize,
}

/// One member header of a mutable type, as read by [`Reader::next_member`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemberHeader {
    /// The member id.
    pub id: u32,
    /// The must-understand flag.
    pub must_understand: bool,
    value_start: usize,
    value_end: usize,
}

impl<'de> Reader<'de> {
    /// A reader over `buf`, with alignment counted from `buf[0]`; `base` is added to offsets in
    /// errors (use 4 when `buf` follows an encapsulation header).
    pub fn new(buf: &'de [u8], version: XcdrVersion, endian: Endianness, base: usize) -> Self {
        Reader {
            buf,
            pos: 0,
            origin: 0,
            limit: buf.len(),
            base,
            depth: 0,
            version,
            endian,
        }
    }

    /// Bytes consumed so far.
    #[inline]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes left before the current limit.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.limit - self.pos
    }

    /// The XCDR version being read.
    #[inline]
    pub fn version(&self) -> XcdrVersion {
        self.version
    }

    /// True when reading XCDR2.
    #[inline]
    pub fn is_xcdr2(&self) -> bool {
        self.version == XcdrVersion::Xcdr2
    }

    /// The byte order being read.
    #[inline]
    pub fn endianness(&self) -> Endianness {
        self.endian
    }

    /// An error of `kind` at the current position. The out-of-line part takes the offset by
    /// value, so a reader whose address never escapes stays in registers.
    #[inline]
    pub fn error(&self, kind: DecodeErrorKind) -> DecodeError {
        decode_error(self.base + self.pos, kind)
    }

    /// Enters one level of nesting; fails past [`MAX_DEPTH`]. Pair with [`Self::leave`].
    #[inline]
    pub fn enter(&mut self) -> Result<(), DecodeError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error(DecodeErrorKind::DepthLimitExceeded { limit: MAX_DEPTH }));
        }
        self.depth += 1;
        Ok(())
    }

    /// Leaves a level entered with [`Self::enter`].
    #[inline]
    pub fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    #[inline(always)]
    fn take(&mut self, n: usize) -> Result<&'de [u8], DecodeError> {
        let start = self.pos;
        // `limit <= buf.len()` always holds, so `get` only fails when the limit does.
        match self.buf.get(start..start.saturating_add(n)) {
            Some(s) if n <= self.limit - start => {
                self.pos = start + n;
                Ok(s)
            }
            _ => Err(self.error(DecodeErrorKind::Truncated {
                needed: n,
                remaining: self.limit - start,
            })),
        }
    }

    #[inline(always)]
    fn take_array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    /// Skips padding up to a multiple of `align` (clipped to the version's maximum alignment).
    #[inline(always)]
    pub fn align(&mut self, align: usize) -> Result<(), DecodeError> {
        let a = if align > self.version.max_align() {
            self.version.max_align()
        } else {
            align
        };
        // Alignments are powers of two, so a mask replaces a (slow) division.
        let pad = a.wrapping_sub(self.pos - self.origin) & (a - 1);
        if pad != 0 {
            self.take(pad)?;
        }
        Ok(())
    }

    /// Reads `n` raw bytes, borrowed from the input.
    #[inline]
    pub fn read_bytes(&mut self, n: usize) -> Result<&'de [u8], DecodeError> {
        self.take(n)
    }

    /// Reads an octet.
    #[inline]
    pub fn read_u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take_array::<1>()?[0])
    }

    /// Reads a signed octet.
    #[inline]
    pub fn read_i8(&mut self) -> Result<i8, DecodeError> {
        Ok(self.take_array::<1>()?[0] as i8)
    }

    /// Reads a boolean; octets other than 0 and 1 are an error.
    #[inline]
    pub fn read_bool(&mut self) -> Result<bool, DecodeError> {
        match self.read_u8()? {
            0 => Ok(false),
            1 => Ok(true),
            b => {
                self.pos -= 1;
                Err(self.error(DecodeErrorKind::InvalidBool(b)))
            }
        }
    }

    /// Reads an IDL `char` (one octet, Latin-1).
    #[inline]
    pub fn read_char(&mut self) -> Result<char, DecodeError> {
        Ok(char::from(self.read_u8()?))
    }

    /// Reads a 32-bit count of items each at least `min_size` bytes long, checking it against
    /// the bytes that remain and against `bound`.
    #[inline]
    pub fn read_count(
        &mut self,
        what: &'static str,
        min_size: usize,
        bound: Option<u32>,
    ) -> Result<usize, DecodeError> {
        let n = self.read_u32()?;
        if let Some(bound) = bound {
            if n > bound {
                self.pos -= 4;
                return Err(self.error(DecodeErrorKind::BoundExceeded {
                    what,
                    len: n,
                    bound,
                }));
            }
        }
        let need = (n as u64).saturating_mul(min_size.max(1) as u64);
        if need > self.remaining() as u64 {
            let remaining = self.remaining();
            self.pos -= 4;
            return Err(self.error(DecodeErrorKind::LengthExceedsInput {
                what,
                len: n.into(),
                remaining,
            }));
        }
        Ok(n as usize)
    }

    /// Reads a string borrowed from the input (length with NUL, bytes, NUL).
    #[inline]
    pub fn read_str(&mut self, bound: Option<u32>) -> Result<&'de str, DecodeError> {
        let at = self.pos;
        let n = self.read_count("string", 1, bound.map(|b| b.saturating_add(1)))?;
        let bytes = self.take(n)?;
        // Some implementations send an empty string as length 0 with no NUL.
        let body = match bytes.split_last() {
            None => bytes,
            Some((0, body)) => body,
            Some(_) => {
                self.pos = at + 4;
                return Err(self.error(DecodeErrorKind::StringNotTerminated));
            }
        };
        if crate::small::has_nul(body) {
            self.pos = at + 4;
            return Err(self.error(DecodeErrorKind::StringNotTerminated));
        }
        core::str::from_utf8(body).map_err(|_| {
            self.pos = at + 4;
            self.error(DecodeErrorKind::InvalidUtf8)
        })
    }

    /// Opens a DHEADER-delimited region (XCDR2; in XCDR1 the region is the rest of the input).
    #[inline]
    pub fn begin_delimited(&mut self) -> Result<Region, DecodeError> {
        if !self.is_xcdr2() {
            return Ok(Region {
                end: None,
                saved_limit: self.limit,
                saved_origin: self.origin,
            });
        }
        let len = self.read_u32()? as usize;
        if len > self.remaining() {
            let remaining = self.remaining();
            self.pos -= 4;
            return Err(self.error(DecodeErrorKind::LengthExceedsInput {
                what: "DHEADER",
                len: len as u64,
                remaining,
            }));
        }
        Ok(self.open_region(self.pos + len))
    }

    #[inline]
    fn open_region(&mut self, end: usize) -> Region {
        let r = Region {
            end: Some(end),
            saved_limit: self.limit,
            saved_origin: self.origin,
        };
        self.limit = end;
        r
    }

    /// True when the current region has no more bytes (appendable types: later members are
    /// absent): a DHEADER's region in XCDR2; in XCDR1, which has none, the enclosing region
    /// or the body of the sample (without its padding, [`crate::deserialize`]).
    #[inline]
    pub fn at_end(&self) -> bool {
        self.pos >= self.limit
    }

    /// Closes a region: skips what was not read (members a newer type version appended).
    #[inline]
    pub fn end_region(&mut self, region: Region) {
        if let Some(end) = region.end {
            self.pos = end.max(self.pos).min(region.saved_limit);
        }
        self.limit = region.saved_limit;
        self.origin = region.saved_origin;
    }

    /// Reads the next member header of a mutable type, or `None` at the end of the members
    /// (end of the DHEADER region in XCDR2, the PID_LIST_END sentinel in XCDR1).
    #[inline]
    pub fn next_member(&mut self) -> Result<Option<MemberHeader>, DecodeError> {
        if self.is_xcdr2() {
            self.next_member2()
        } else {
            self.next_member1()
        }
    }

    #[inline]
    fn next_member2(&mut self) -> Result<Option<MemberHeader>, DecodeError> {
        if self.at_end() {
            return Ok(None);
        }
        self.align(4)?;
        let at = self.pos;
        let em = self.read_u32()?;
        let must_understand = em & EMHEADER_MUST_UNDERSTAND != 0;
        let id = em & MEMBER_ID_MASK;
        let lc = (em >> 28) & 0x7;
        let (value_start, len) = match lc {
            0..=3 => (self.pos, 1usize << lc),
            4 => {
                let n = self.read_u32()? as usize;
                (self.pos, n)
            }
            _ => {
                // LC 5..7: NEXTINT is also the first word of the value (its length prefix).
                let start = self.pos;
                let n = self.read_u32()? as u64;
                let unit = match lc {
                    5 => 1,
                    6 => 4,
                    _ => 8,
                };
                let len = n.saturating_mul(unit).saturating_add(4);
                (start, usize::try_from(len).unwrap_or(usize::MAX))
            }
        };
        if len > self.limit - value_start {
            self.pos = at;
            return Err(self.error(DecodeErrorKind::LengthExceedsInput {
                what: "member",
                len: len as u64,
                remaining: self.limit - value_start,
            }));
        }
        self.pos = value_start;
        Ok(Some(MemberHeader {
            id,
            must_understand,
            value_start,
            value_end: value_start + len,
        }))
    }

    #[inline]
    fn next_member1(&mut self) -> Result<Option<MemberHeader>, DecodeError> {
        loop {
            self.align(4)?;
            let at = self.pos;
            let pid = self.read_u16()?;
            let len = self.read_u16()? as usize;
            let must_understand = pid & PID_FLAG_MUST_UNDERSTAND != 0;
            let bare = pid & 0x3fff;
            if bare == PID_LIST_END {
                return Ok(None);
            }
            let (id, must_understand, len) = if bare == PID_EXTENDED {
                if len < 8 {
                    self.pos = at;
                    return Err(self.error(DecodeErrorKind::InvalidMemberHeader {
                        reason: "extended parameter header shorter than 8 bytes",
                    }));
                }
                let idf = self.read_u32()?;
                let l = self.read_u32()? as usize;
                self.take(len - 8)?;
                (idf & MEMBER_ID_MASK, idf & 0x4000_0000 != 0, l)
            } else if bare == PID_IGNORE {
                self.take(len)?;
                continue;
            } else {
                (u32::from(bare), must_understand, len)
            };
            if len > self.remaining() {
                self.pos = at;
                return Err(self.error(DecodeErrorKind::LengthExceedsInput {
                    what: "member",
                    len: len as u64,
                    remaining: self.remaining(),
                }));
            }
            return Ok(Some(MemberHeader {
                id,
                must_understand,
                value_start: self.pos,
                value_end: self.pos + len,
            }));
        }
    }

    /// Decodes the value of `member` with `f`, confined to the member's bytes, then moves past it.
    pub fn member_value<T>(
        &mut self,
        member: &MemberHeader,
        f: impl FnOnce(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<T, DecodeError> {
        self.pos = member.value_start;
        let region = self.open_region(member.value_end);
        if !self.is_xcdr2() {
            // An XCDR1 parameter value aligns from its own start.
            self.origin = member.value_start;
        }
        let v = f(self);
        self.end_region(region);
        v
    }

    /// Skips a member this type does not know; an error if it is flagged must-understand.
    #[inline]
    pub fn skip_member(&mut self, member: &MemberHeader) -> Result<(), DecodeError> {
        if member.must_understand {
            return Err(self.error(DecodeErrorKind::MustUnderstand {
                member_id: member.id,
            }));
        }
        self.pos = member.value_end;
        Ok(())
    }

    /// Opens an XCDR1 optional member of a non-mutable type (a parameter header carrying
    /// `member_id`): returns the region of its value, or `None` when it is absent (length 0).
    #[inline]
    pub fn begin_optional1(&mut self, member_id: u32) -> Result<Option<Region>, DecodeError> {
        self.align(4)?;
        let at = self.pos;
        let pid = self.read_u16()?;
        let len = self.read_u16()? as usize;
        let (id, len) = if pid & 0x3fff == PID_EXTENDED {
            let id = self.read_u32()? & MEMBER_ID_MASK;
            let l = self.read_u32()? as usize;
            if len > 8 {
                self.take(len - 8)?;
            }
            (id, l)
        } else {
            (u32::from(pid & 0x3fff), len)
        };
        if id != member_id {
            self.pos = at;
            return Err(self.error(DecodeErrorKind::InvalidMemberHeader {
                reason: "optional member header carries another member's id",
            }));
        }
        if len == 0 {
            return Ok(None);
        }
        if len > self.remaining() {
            self.pos = at;
            return Err(self.error(DecodeErrorKind::LengthExceedsInput {
                what: "member",
                len: len as u64,
                remaining: self.remaining(),
            }));
        }
        let region = self.open_region(self.pos + len);
        self.origin = self.pos;
        Ok(Some(region))
    }
}

macro_rules! read_num {
    ($($name:ident $vec:ident $t:ty;)*) => {$(
        impl<'de> Reader<'de> {
            #[doc = concat!("Reads a `", stringify!($t), "`, aligned to its size.")]
            #[inline(always)]
            pub fn $name(&mut self) -> Result<$t, DecodeError> {
                const N: usize = core::mem::size_of::<$t>();
                self.align(N)?;
                let b = self.take_array::<N>()?;
                Ok(match self.endian {
                    Endianness::Big => <$t>::from_be_bytes(b),
                    Endianness::Little => <$t>::from_le_bytes(b),
                })
            }

            #[doc = concat!("Reads `n` consecutive `", stringify!($t), "` values (aligned once).")]
            pub fn $vec(&mut self, n: usize) -> Result<Vec<$t>, DecodeError> {
                const N: usize = core::mem::size_of::<$t>();
                if n == 0 {
                    return Ok(Vec::new());
                }
                self.align(N)?;
                let bytes = self.take(n.checked_mul(N).unwrap_or(usize::MAX))?;
                let big = self.endian == Endianness::Big;
                Ok(bytes
                    .chunks_exact(N)
                    .map(|c| {
                        let mut a = [0u8; N];
                        a.copy_from_slice(c);
                        if big { <$t>::from_be_bytes(a) } else { <$t>::from_le_bytes(a) }
                    })
                    .collect())
            }
        }
    )*};
}

read_num! {
    read_u16 read_u16_vec u16;
    read_i16 read_i16_vec i16;
    read_u32 read_u32_vec u32;
    read_i32 read_i32_vec i32;
    read_u64 read_u64_vec u64;
    read_i64 read_i64_vec i64;
    read_f32 read_f32_vec f32;
    read_f64 read_f64_vec f64;
}

/// A [`DecodeError`] of `kind` at `offset` (the error path of every read, out of line).
#[cold]
#[inline(never)]
fn decode_error(offset: usize, kind: DecodeErrorKind) -> DecodeError {
    DecodeError::new(offset, kind)
}
