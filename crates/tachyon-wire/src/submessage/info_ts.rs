//! INFO_TS (0x09): the source timestamp for the submessages that follow.

use super::{BodyRepr, RawSubmessage};
use crate::bytes::{field, Reader, Writer};
use crate::error::{EmitError, WireError};
use crate::types::Time;

/// I flag: no timestamp; following submessages have none.
pub const FLAG_INVALIDATE: u8 = 0x02;

/// A checked, zero-copy view of an INFO_TS submessage.
#[derive(Clone, Copy, Debug)]
pub struct InfoTsView<'a> {
    raw: RawSubmessage<'a>,
}

impl<'a> InfoTsView<'a> {
    /// Checks that the timestamp is present unless the I flag is set.
    #[inline]
    pub fn new_checked(raw: RawSubmessage<'a>) -> Result<Self, WireError> {
        if raw.flags & FLAG_INVALIDATE == 0 {
            Reader::new(raw.body, raw.body_offset(), "INFO_TS", raw.endian()).skip(8)?;
        }
        Ok(InfoTsView { raw })
    }

    /// The framing.
    #[inline]
    pub fn raw(&self) -> RawSubmessage<'a> {
        self.raw
    }

    /// The timestamp; `None` when the I flag invalidates it.
    #[inline]
    pub fn timestamp(&self) -> Option<Time> {
        (self.raw.flags & FLAG_INVALIDATE == 0).then(|| field(self.raw.body, 0, self.raw.endian()))
    }

    /// Body bytes after the parsed fields.
    #[inline]
    pub fn trailing(&self) -> &'a [u8] {
        let n = if self.timestamp().is_some() { 8 } else { 0 };
        self.raw.body.get(n..).unwrap_or_default()
    }
}

/// A parsed INFO_TS submessage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct InfoTs {
    /// The timestamp; `None` means the I (invalidate) flag.
    pub timestamp: Option<Time>,
}

impl InfoTs {
    /// Parses a checked view.
    #[inline]
    pub fn parse(v: &InfoTsView<'_>) -> Self {
        InfoTs {
            timestamp: v.timestamp(),
        }
    }
}

impl BodyRepr for InfoTs {
    fn flag_bits(&self) -> u8 {
        if self.timestamp.is_none() {
            FLAG_INVALIDATE
        } else {
            0
        }
    }

    fn body_len(&self) -> usize {
        if self.timestamp.is_some() {
            8
        } else {
            0
        }
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        match &self.timestamp {
            Some(t) => w.encode(t),
            None => Ok(()),
        }
    }
}
