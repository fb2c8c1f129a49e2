//! The 20-byte RTPS message header: `RTPS`, protocol version, vendor id, GUID prefix.

use crate::bytes::{Endian, Writer};
use crate::error::{EmitError, WireError};
use crate::types::{GuidPrefix, ProtocolVersion, VendorId};

/// The four magic bytes every RTPS message starts with.
pub const MAGIC: [u8; 4] = *b"RTPS";
/// Length of the message header in bytes.
pub const HEADER_LEN: usize = 20;

/// A checked, zero-copy view of a message header.
#[derive(Clone, Copy, Debug)]
pub struct HeaderView<'a> {
    buf: &'a [u8],
}

impl<'a> HeaderView<'a> {
    /// Checks that `buf` holds at least a full header starting with `RTPS`.
    #[inline]
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, WireError> {
        let head = buf.get(..HEADER_LEN).ok_or(WireError::Truncated {
            what: "RTPS header",
            offset: 0,
            needed: HEADER_LEN,
            available: buf.len(),
        })?;
        let magic = head.first_chunk::<4>().copied().unwrap_or_default();
        if magic != MAGIC {
            return Err(WireError::BadMagic { found: magic });
        }
        Ok(HeaderView { buf: head })
    }

    /// The protocol version.
    #[inline]
    pub fn protocol_version(&self) -> ProtocolVersion {
        crate::bytes::field(self.buf, 4, Endian::Big)
    }

    /// The sender's vendor id.
    #[inline]
    pub fn vendor_id(&self) -> VendorId {
        crate::bytes::field(self.buf, 6, Endian::Big)
    }

    /// The sender's GUID prefix.
    #[inline]
    pub fn guid_prefix(&self) -> GuidPrefix {
        crate::bytes::field(self.buf, 8, Endian::Big)
    }
}

/// The parsed message header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Header {
    /// Protocol version of the sender.
    pub protocol_version: ProtocolVersion,
    /// Vendor of the sender.
    pub vendor_id: VendorId,
    /// GUID prefix of the sending participant.
    pub guid_prefix: GuidPrefix,
}

impl Header {
    /// Parses a checked view.
    pub fn parse(view: &HeaderView<'_>) -> Self {
        Header {
            protocol_version: view.protocol_version(),
            vendor_id: view.vendor_id(),
            guid_prefix: view.guid_prefix(),
        }
    }

    /// Bytes `emit` writes.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header into the first [`HEADER_LEN`] bytes of `buf`.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, EmitError> {
        let mut w = Writer::new(buf, Endian::Big);
        w.put(&MAGIC)?;
        w.encode(&self.protocol_version)?;
        w.encode(&self.vendor_id)?;
        w.encode(&self.guid_prefix)?;
        Ok(w.pos())
    }
}
