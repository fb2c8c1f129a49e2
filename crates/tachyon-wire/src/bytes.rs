//! Byte-order aware cursors shared by every parser (`Reader`) and emitter (`Writer`).
//!
//! All bounds are checked; nothing here can panic or overflow on any input.

use crate::error::{EmitError, WireError};

/// Byte order of a submessage (its E flag) or of a parameter list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Endian {
    /// Little endian (E flag set); what every common host sends.
    #[default]
    Little,
    /// Big endian (E flag clear).
    Big,
}

impl Endian {
    /// The byte order selected by the E flag (bit 0) of a submessage's flags.
    #[inline]
    pub const fn from_flags(flags: u8) -> Self {
        if flags & 0x01 != 0 {
            Endian::Little
        } else {
            Endian::Big
        }
    }

    /// The E flag bit for this byte order.
    #[inline]
    pub const fn flag(self) -> u8 {
        match self {
            Endian::Little => 0x01,
            Endian::Big => 0x00,
        }
    }
}

/// A fixed-size element that can be decoded from and encoded to the wire.
pub(crate) trait Codec: Sized {
    /// Reads the element at the reader's position.
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError>;
    /// Writes the element at the writer's position.
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EmitError>;
}

/// Decodes a `T` at `off` in an already validated buffer; a view accessor helper.
///
/// Views check their length once in `new_checked`, so the fallback to `T::default()` is never
/// taken for a view that was constructed; it exists so accessors cannot panic.
#[inline]
pub(crate) fn field<T: Codec + Default>(buf: &[u8], off: usize, endian: Endian) -> T {
    let Some(rest) = buf.get(off..) else {
        return T::default();
    };
    T::decode(&mut Reader::new(rest, off, "field", endian)).unwrap_or_default()
}

/// Copies `b` into a new vector; skips the allocator and `memcpy` calls for the empty slices
/// (trailing bytes, padding, gaps) that are the common case.
#[inline]
pub(crate) fn to_vec(b: &[u8]) -> Vec<u8> {
    if b.is_empty() {
        Vec::new()
    } else {
        b.to_vec()
    }
}

/// A [`WireError::Truncated`], out of line (the error path of every read).
#[cold]
#[inline(never)]
fn truncated(what: &'static str, offset: usize, needed: usize, available: usize) -> WireError {
    WireError::Truncated {
        what,
        offset,
        needed,
        available,
    }
}

/// A bounds-checked read cursor producing [`WireError::Truncated`] on short input.
#[derive(Clone, Debug)]
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    base: usize,
    what: &'static str,
    pub endian: Endian,
}

impl<'a> Reader<'a> {
    /// A reader over `buf`, whose first byte is at `base` in the enclosing message.
    #[inline]
    pub fn new(buf: &'a [u8], base: usize, what: &'static str, endian: Endian) -> Self {
        Reader {
            buf,
            pos: 0,
            base,
            what,
            endian,
        }
    }

    /// Bytes consumed so far.
    #[inline]
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Absolute offset of the cursor (for error messages).
    #[inline]
    pub fn offset(&self) -> usize {
        self.base.saturating_add(self.pos)
    }

    /// Bytes not yet consumed.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// The truncation error for needing `needed` bytes here.
    ///
    /// The cold part takes the fields by value: a reader whose address never escapes stays
    /// in registers (a `&self` to an out-of-line function made every view accessor store
    /// its reader to the stack: ~450 instructions per round trip, callgrind).
    #[inline]
    pub fn truncated(&self, needed: usize) -> WireError {
        truncated(self.what, self.offset(), needed, self.remaining())
    }

    /// Consumes `n` bytes.
    #[inline]
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        match self.buf.get(self.pos..).and_then(|rest| rest.get(..n)) {
            Some(s) => {
                self.pos = self.pos.saturating_add(n);
                Ok(s)
            }
            None => Err(self.truncated(n)),
        }
    }

    /// Skips `n` bytes.
    #[inline]
    pub fn skip(&mut self, n: usize) -> Result<(), WireError> {
        self.take(n).map(|_| ())
    }

    /// Consumes exactly `N` bytes as an array.
    #[inline]
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], WireError> {
        match self.buf.get(self.pos..).and_then(<[u8]>::first_chunk::<N>) {
            Some(a) => {
                self.pos = self.pos.saturating_add(N);
                Ok(*a)
            }
            None => Err(self.truncated(N)),
        }
    }

    /// Reads one byte.
    #[inline]
    pub fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.array::<1>()?[0])
    }

    /// Reads a u16 in the reader's byte order.
    #[inline]
    pub fn u16(&mut self) -> Result<u16, WireError> {
        let a = self.array::<2>()?;
        Ok(match self.endian {
            Endian::Little => u16::from_le_bytes(a),
            Endian::Big => u16::from_be_bytes(a),
        })
    }

    /// Reads an i16 in the reader's byte order.
    #[inline]
    pub fn i16(&mut self) -> Result<i16, WireError> {
        Ok(self.u16()? as i16)
    }

    /// Reads a u32 in the reader's byte order.
    #[inline]
    pub fn u32(&mut self) -> Result<u32, WireError> {
        let a = self.array::<4>()?;
        Ok(match self.endian {
            Endian::Little => u32::from_le_bytes(a),
            Endian::Big => u32::from_be_bytes(a),
        })
    }

    /// Reads an i32 in the reader's byte order.
    #[inline]
    pub fn i32(&mut self) -> Result<i32, WireError> {
        Ok(self.u32()? as i32)
    }

    /// Decodes a [`Codec`] element.
    #[inline]
    pub fn decode<T: Codec>(&mut self) -> Result<T, WireError> {
        T::decode(self)
    }
}

/// A bounds-checked write cursor producing [`EmitError::BufferTooSmall`] on a short buffer.
#[derive(Debug)]
pub(crate) struct Writer<'b> {
    buf: &'b mut [u8],
    pos: usize,
    pub endian: Endian,
}

impl<'b> Writer<'b> {
    /// A writer at the start of `buf`.
    #[inline]
    pub fn new(buf: &'b mut [u8], endian: Endian) -> Self {
        Writer {
            buf,
            pos: 0,
            endian,
        }
    }

    /// Bytes written so far.
    #[inline]
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Bytes left in the buffer.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// Lets `f` write into the unwritten rest of the buffer; `f` returns how much it wrote.
    #[inline]
    pub fn with_rest(
        &mut self,
        f: impl FnOnce(&mut [u8]) -> Result<usize, EmitError>,
    ) -> Result<(), EmitError> {
        let rest = self.buf.get_mut(self.pos..).unwrap_or_default();
        let n = f(rest)?;
        self.pos = self.pos.saturating_add(n);
        Ok(())
    }

    /// Writes raw bytes.
    #[inline]
    pub fn put(&mut self, bytes: &[u8]) -> Result<(), EmitError> {
        let (pos, available) = (self.pos, self.buf.len());
        let too_small = || EmitError::BufferTooSmall {
            needed: pos.saturating_add(bytes.len()),
            available,
        };
        let end = pos.checked_add(bytes.len()).ok_or_else(too_small)?;
        let dst = self.buf.get_mut(pos..end).ok_or_else(too_small)?;
        dst.copy_from_slice(bytes);
        self.pos = end;
        Ok(())
    }

    /// Writes one byte.
    #[inline]
    pub fn u8(&mut self, v: u8) -> Result<(), EmitError> {
        self.put(&[v])
    }

    /// Writes a u16 in the writer's byte order.
    #[inline]
    pub fn u16(&mut self, v: u16) -> Result<(), EmitError> {
        match self.endian {
            Endian::Little => self.put(&v.to_le_bytes()),
            Endian::Big => self.put(&v.to_be_bytes()),
        }
    }

    /// Writes a u32 in the writer's byte order.
    #[inline]
    pub fn u32(&mut self, v: u32) -> Result<(), EmitError> {
        match self.endian {
            Endian::Little => self.put(&v.to_le_bytes()),
            Endian::Big => self.put(&v.to_be_bytes()),
        }
    }

    /// Writes an i32 in the writer's byte order.
    #[inline]
    pub fn i32(&mut self, v: i32) -> Result<(), EmitError> {
        self.u32(v as u32)
    }

    /// Encodes a [`Codec`] element.
    #[inline]
    pub fn encode<T: Codec>(&mut self, v: &T) -> Result<(), EmitError> {
        v.encode(self)
    }
}
