//! PAD (0x01): padding with no fields; its bytes are kept as trailing bytes.

use super::{BodyRepr, RawSubmessage};
use crate::bytes::Writer;
use crate::error::{EmitError, WireError};

/// A checked view of a PAD submessage (any body length is valid).
#[derive(Clone, Copy, Debug)]
pub struct PadView<'a> {
    raw: RawSubmessage<'a>,
}

impl<'a> PadView<'a> {
    /// Accepts any body.
    #[inline]
    pub fn new_checked(raw: RawSubmessage<'a>) -> Result<Self, WireError> {
        Ok(PadView { raw })
    }

    /// The framing.
    #[inline]
    pub fn raw(&self) -> RawSubmessage<'a> {
        self.raw
    }

    /// The padding bytes.
    #[inline]
    pub fn trailing(&self) -> &'a [u8] {
        self.raw.body
    }
}

/// A parsed PAD submessage; the padding bytes live in `Submessage::trailing`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Pad;

impl BodyRepr for Pad {
    fn flag_bits(&self) -> u8 {
        0
    }

    fn body_len(&self) -> usize {
        0
    }

    fn emit_body(&self, _: &mut Writer<'_>) -> Result<(), EmitError> {
        Ok(())
    }
}
