//! Submessages this crate does not interpret (unknown ids, vendor-specific 0x80..=0xff).

use super::BodyRepr;
use crate::bytes::Writer;
use crate::error::EmitError;

/// An uninterpreted submessage: only its id; the body lives in `Submessage::trailing`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Unknown {
    /// The submessage id.
    pub id: u8,
}

impl BodyRepr for Unknown {
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
