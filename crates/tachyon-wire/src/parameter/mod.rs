//! ParameterList: the PID/length/value lists of inline QoS and SPDP/SEDP payloads.
//!
//! A list has its own byte order: the submessage's E flag for inline QoS, the encapsulation
//! header for serialized payloads (see [`payload`]). Unknown, vendor-specific and non-canonical
//! values are kept as opaque bytes so a parsed list re-emits byte for byte.

pub mod payload;
pub mod pid;
mod value;

pub use value::{
    ContentFilterProperty, DurabilityServiceQos, HistoryQos, LivelinessQos, ParameterValue,
    PresentationQos, ReliabilityQos, ResourceLimitsQos,
};

use crate::bytes::{Endian, Writer};
use crate::error::{EmitError, ParameterError};

/// A checked, zero-copy view of a parameter list, from its first parameter through PID_SENTINEL.
#[derive(Clone, Copy, Debug)]
pub struct ParameterListView<'a> {
    buf: &'a [u8],
    endian: Endian,
    sentinel_length: u16,
}

impl<'a> ParameterListView<'a> {
    /// Validates the list at the start of `buf` (which may continue past the sentinel).
    #[inline]
    pub fn parse(buf: &'a [u8], endian: Endian) -> Result<Self, ParameterError> {
        let mut off = 0usize;
        loop {
            let Some((pid, length)) = header_at(buf, off, endian) else {
                return Err(header_error(off, buf.len().saturating_sub(off)));
            };
            let value_start = off.saturating_add(4);
            if pid == pid::SENTINEL {
                return Ok(ParameterListView {
                    buf: buf.get(..value_start).unwrap_or(buf),
                    endian,
                    sentinel_length: length,
                });
            }
            let end = value_start.saturating_add(usize::from(length));
            if length % 4 != 0 || end > buf.len() {
                return Err(value_error(buf.len(), pid, length, off));
            }
            off = end;
        }
    }

    /// Bytes the list occupies, sentinel included.
    #[inline]
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether the list holds no parameter besides the sentinel.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.buf.len() <= 4
    }

    /// The list's byte order.
    #[inline]
    pub fn endian(&self) -> Endian {
        self.endian
    }

    /// The length field of the sentinel (ignored by the spec, kept for re-emission).
    #[inline]
    pub fn sentinel_length(&self) -> u16 {
        self.sentinel_length
    }

    /// The raw bytes of the list, sentinel included.
    #[inline]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.buf
    }

    /// The parameters in order, sentinel excluded.
    #[inline]
    pub fn iter(&self) -> ParameterIter<'a> {
        ParameterIter {
            buf: self.buf,
            off: 0,
            endian: self.endian,
        }
    }

    /// The value bytes of the first parameter with `pid`.
    #[inline]
    pub fn get(&self, pid: u16) -> Option<&'a [u8]> {
        self.iter().find(|p| p.pid == pid).map(|p| p.value)
    }
}

/// Reads a parameter header (pid, length) at `off`.
#[inline]
fn header_at(buf: &[u8], off: usize, endian: Endian) -> Option<(u16, u16)> {
    let &[a, b, c, d] = buf.get(off..)?.first_chunk::<4>()?;
    Some(match endian {
        Endian::Little => (u16::from_le_bytes([a, b]), u16::from_le_bytes([c, d])),
        Endian::Big => (u16::from_be_bytes([a, b]), u16::from_be_bytes([c, d])),
    })
}

/// The error for a missing or cut-short parameter header at `off` (cold path).
#[cold]
#[inline(never)]
fn header_error(off: usize, available: usize) -> ParameterError {
    if available == 0 {
        ParameterError::MissingSentinel { offset: off }
    } else {
        ParameterError::Truncated {
            offset: off,
            needed: 4,
            available,
        }
    }
}

/// The error for a parameter whose length is unaligned or runs past the list (cold path).
#[cold]
#[inline(never)]
fn value_error(buf_len: usize, pid: u16, length: u16, off: usize) -> ParameterError {
    if length % 4 != 0 {
        return ParameterError::UnalignedLength {
            pid,
            length,
            offset: off,
        };
    }
    let value_start = off.saturating_add(4);
    ParameterError::Truncated {
        offset: value_start,
        needed: usize::from(length),
        available: buf_len.saturating_sub(value_start),
    }
}

/// One parameter of a [`ParameterListView`]: its PID and borrowed value bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParameterView<'a> {
    /// Parameter id, including the must-understand and vendor-specific bits.
    pub pid: u16,
    /// The value bytes (length is the parameter's length field).
    pub value: &'a [u8],
}

/// Iterator over the parameters of a validated list.
#[derive(Clone, Debug)]
pub struct ParameterIter<'a> {
    buf: &'a [u8],
    off: usize,
    endian: Endian,
}

impl<'a> Iterator for ParameterIter<'a> {
    type Item = ParameterView<'a>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let (pid, length) = header_at(self.buf, self.off, self.endian)?;
        if pid == pid::SENTINEL {
            return None;
        }
        let start = self.off.saturating_add(4);
        let value = self.buf.get(start..)?.get(..usize::from(length))?;
        self.off = start.saturating_add(value.len());
        Some(ParameterView { pid, value })
    }
}

/// A parsed parameter list (sentinel implied).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ParameterList {
    /// The parameters in wire order.
    pub parameters: Vec<Parameter>,
    /// The sentinel's length field as received (0 when built locally).
    pub sentinel_length: u16,
}

/// One parsed parameter.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Parameter {
    /// Parameter id, including the must-understand and vendor-specific bits.
    pub pid: u16,
    /// The typed (or opaque) value.
    pub value: ParameterValue,
    /// Bytes after the value up to the parameter's length (alignment padding or extensions).
    pub padding: Vec<u8>,
}

impl Parameter {
    /// A parameter whose value is zero-padded to a multiple of 4 bytes.
    pub fn new(pid: u16, value: ParameterValue) -> Self {
        let pad = (4 - value.wire_len() % 4) % 4;
        Parameter {
            pid,
            value,
            padding: vec![0; pad],
        }
    }

    /// Parses one parameter from a view.
    pub fn parse(view: &ParameterView<'_>, endian: Endian) -> Self {
        let (value, used) = ParameterValue::decode(view.pid, view.value, endian);
        Parameter {
            pid: view.pid,
            value,
            padding: crate::bytes::to_vec(view.value.get(used..).unwrap_or_default()),
        }
    }

    /// The length field: value plus padding.
    pub fn value_len(&self) -> usize {
        self.value.wire_len().saturating_add(self.padding.len())
    }

    /// Bytes `emit` writes: the 4-byte header, value and padding.
    pub fn buffer_len(&self) -> usize {
        self.value_len().saturating_add(4)
    }

    /// Writes the parameter; returns the bytes written.
    pub fn emit(&self, buf: &mut [u8], endian: Endian) -> Result<usize, EmitError> {
        let length = u16::try_from(self.value_len()).map_err(|_| EmitError::ParameterTooLong {
            pid: self.pid,
            length: self.value_len(),
        })?;
        let available = buf.len();
        let too_small = || EmitError::BufferTooSmall {
            needed: self.buffer_len(),
            available,
        };
        let (head, rest) = buf.split_at_mut_checked(4).ok_or_else(too_small)?;
        let mut w = Writer::new(head, endian);
        w.u16(self.pid)?;
        w.u16(length)?;
        let value_buf = rest.get_mut(..usize::from(length)).ok_or_else(too_small)?;
        // A writer of its own, so CDR alignment inside the value is relative to its start.
        let mut w = Writer::new(value_buf, endian);
        self.value.encode(&mut w)?;
        w.put(&self.padding)?;
        Ok(self.buffer_len())
    }
}

impl ParameterList {
    /// Parses every parameter of a checked view.
    pub fn parse(view: &ParameterListView<'_>) -> Self {
        // One cheap pass over the headers sizes the vector exactly: no regrowth.
        // Each parameter is decoded in its slot: a 152-byte `push` per parameter would copy
        // every value once more, just after writing it.
        let mut parameters = Vec::new();
        parameters.resize_with(view.iter().count(), || Parameter {
            pid: 0,
            value: ParameterValue::Opaque(Vec::new()),
            padding: Vec::new(),
        });
        for (slot, p) in parameters.iter_mut().zip(view.iter()) {
            let used = ParameterValue::decode_into(p.pid, p.value, view.endian(), &mut slot.value);
            slot.pid = p.pid;
            slot.padding = crate::bytes::to_vec(p.value.get(used..).unwrap_or_default());
        }
        ParameterList {
            parameters,
            sentinel_length: view.sentinel_length(),
        }
    }

    /// Bytes `emit` writes, sentinel included.
    pub fn buffer_len(&self) -> usize {
        self.parameters
            .iter()
            .fold(4usize, |n, p| n.saturating_add(p.buffer_len()))
    }

    /// Writes the list and its sentinel in `endian`; returns the bytes written.
    pub fn emit(&self, buf: &mut [u8], endian: Endian) -> Result<usize, EmitError> {
        let available = buf.len();
        let mut off = 0usize;
        for p in &self.parameters {
            let dst = buf.get_mut(off..).ok_or(EmitError::BufferTooSmall {
                needed: self.buffer_len(),
                available,
            })?;
            off = off.saturating_add(p.emit(dst, endian)?);
        }
        let dst = buf.get_mut(off..).unwrap_or_default();
        let mut w = Writer::new(dst, endian);
        w.u16(pid::SENTINEL)?;
        w.u16(self.sentinel_length)?;
        Ok(off.saturating_add(4))
    }

    /// The first parameter with `pid`.
    pub fn get(&self, pid: u16) -> Option<&Parameter> {
        self.parameters.iter().find(|p| p.pid == pid)
    }
}
