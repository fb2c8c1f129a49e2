//! INFO_DST (0x0e): the destination participant of the submessages that follow.

use super::{BodyRepr, RawSubmessage};
use crate::bytes::{field, Reader, Writer};
use crate::error::{EmitError, WireError};
use crate::types::GuidPrefix;

const FIXED_LEN: usize = 12;

/// A checked, zero-copy view of an INFO_DST submessage.
#[derive(Clone, Copy, Debug)]
pub struct InfoDstView<'a> {
    raw: RawSubmessage<'a>,
}

impl<'a> InfoDstView<'a> {
    /// Checks the body length.
    #[inline]
    pub fn new_checked(raw: RawSubmessage<'a>) -> Result<Self, WireError> {
        Reader::new(raw.body, raw.body_offset(), "INFO_DST", raw.endian()).skip(FIXED_LEN)?;
        Ok(InfoDstView { raw })
    }

    /// The framing.
    #[inline]
    pub fn raw(&self) -> RawSubmessage<'a> {
        self.raw
    }

    /// GUID prefix of the destination (UNKNOWN: every participant).
    #[inline]
    pub fn guid_prefix(&self) -> GuidPrefix {
        field(self.raw.body, 0, self.raw.endian())
    }

    /// Body bytes after the parsed fields.
    #[inline]
    pub fn trailing(&self) -> &'a [u8] {
        self.raw.body.get(FIXED_LEN..).unwrap_or_default()
    }
}

/// A parsed INFO_DST submessage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct InfoDst {
    /// GUID prefix of the destination.
    pub guid_prefix: GuidPrefix,
}

impl InfoDst {
    /// Parses a checked view.
    #[inline]
    pub fn parse(v: &InfoDstView<'_>) -> Self {
        InfoDst {
            guid_prefix: v.guid_prefix(),
        }
    }
}

impl BodyRepr for InfoDst {
    fn flag_bits(&self) -> u8 {
        0
    }

    fn body_len(&self) -> usize {
        FIXED_LEN
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.encode(&self.guid_prefix)
    }
}
