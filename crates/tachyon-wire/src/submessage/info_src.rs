//! INFO_SRC (0x0c): the source participant of the submessages that follow.

use super::data::U32;
use super::{BodyRepr, RawSubmessage};
use crate::bytes::{field, Endian, Reader, Writer};
use crate::error::{EmitError, WireError};
use crate::types::{GuidPrefix, ProtocolVersion, VendorId};

const FIXED_LEN: usize = 20;

/// A checked, zero-copy view of an INFO_SRC submessage.
#[derive(Clone, Copy, Debug)]
pub struct InfoSrcView<'a> {
    raw: RawSubmessage<'a>,
}

impl<'a> InfoSrcView<'a> {
    /// Checks the body length.
    #[inline]
    pub fn new_checked(raw: RawSubmessage<'a>) -> Result<Self, WireError> {
        Reader::new(raw.body, raw.body_offset(), "INFO_SRC", raw.endian()).skip(FIXED_LEN)?;
        Ok(InfoSrcView { raw })
    }

    /// The framing.
    #[inline]
    pub fn raw(&self) -> RawSubmessage<'a> {
        self.raw
    }

    #[inline]
    fn e(&self) -> Endian {
        self.raw.endian()
    }

    /// The unused leading 4 bytes, as a u32 in the submessage's byte order.
    #[inline]
    pub fn unused(&self) -> u32 {
        field::<U32>(self.raw.body, 0, self.e()).0
    }

    /// Protocol version of the source.
    #[inline]
    pub fn protocol_version(&self) -> ProtocolVersion {
        field(self.raw.body, 4, self.e())
    }

    /// Vendor of the source.
    #[inline]
    pub fn vendor_id(&self) -> VendorId {
        field(self.raw.body, 6, self.e())
    }

    /// GUID prefix of the source.
    #[inline]
    pub fn guid_prefix(&self) -> GuidPrefix {
        field(self.raw.body, 8, self.e())
    }

    /// Body bytes after the parsed fields.
    #[inline]
    pub fn trailing(&self) -> &'a [u8] {
        self.raw.body.get(FIXED_LEN..).unwrap_or_default()
    }
}

/// A parsed INFO_SRC submessage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct InfoSrc {
    /// The unused leading field, kept as sent.
    pub unused: u32,
    /// Protocol version of the source.
    pub protocol_version: ProtocolVersion,
    /// Vendor of the source.
    pub vendor_id: VendorId,
    /// GUID prefix of the source.
    pub guid_prefix: GuidPrefix,
}

impl InfoSrc {
    /// Parses a checked view.
    #[inline]
    pub fn parse(v: &InfoSrcView<'_>) -> Self {
        InfoSrc {
            unused: v.unused(),
            protocol_version: v.protocol_version(),
            vendor_id: v.vendor_id(),
            guid_prefix: v.guid_prefix(),
        }
    }
}

impl BodyRepr for InfoSrc {
    fn flag_bits(&self) -> u8 {
        0
    }

    fn body_len(&self) -> usize {
        FIXED_LEN
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.u32(self.unused)?;
        w.encode(&self.protocol_version)?;
        w.encode(&self.vendor_id)?;
        w.encode(&self.guid_prefix)
    }
}
