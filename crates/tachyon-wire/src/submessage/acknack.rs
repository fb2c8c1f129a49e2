//! ACKNACK (0x06): a reader acknowledges and negatively acknowledges sequence numbers.

use super::{BodyRepr, RawSubmessage};
use crate::bytes::{field, Endian, Reader, Writer};
use crate::error::{EmitError, WireError};
use crate::types::{Count, EntityId, SequenceNumberSet};

/// F flag: the writer need not answer with a heartbeat.
pub const FLAG_FINAL: u8 = 0x02;

/// A checked, zero-copy view of an ACKNACK submessage.
#[derive(Clone, Copy, Debug)]
pub struct AckNackView<'a> {
    raw: RawSubmessage<'a>,
    count_off: usize,
}

impl<'a> AckNackView<'a> {
    /// Checks the body length and the set's numBits.
    #[inline]
    pub fn new_checked(raw: RawSubmessage<'a>) -> Result<Self, WireError> {
        let mut r = Reader::new(raw.body, raw.body_offset(), "ACKNACK", raw.endian());
        r.skip(8)?;
        r.decode::<SequenceNumberSet>()?;
        let count_off = r.pos();
        r.skip(4)?;
        Ok(AckNackView { raw, count_off })
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

    /// The reader.
    #[inline]
    pub fn reader_id(&self) -> EntityId {
        field(self.raw.body, 0, self.e())
    }

    /// The writer.
    #[inline]
    pub fn writer_id(&self) -> EntityId {
        field(self.raw.body, 4, self.e())
    }

    /// Everything below `base` is acknowledged; set bits are missing.
    #[inline]
    pub fn reader_sn_state(&self) -> SequenceNumberSet {
        field(self.raw.body, 8, self.e())
    }

    /// Count.
    #[inline]
    pub fn count(&self) -> Count {
        field(self.raw.body, self.count_off, self.e())
    }

    /// F flag.
    #[inline]
    pub fn is_final(&self) -> bool {
        self.raw.flags & FLAG_FINAL != 0
    }

    /// Body bytes after the parsed fields.
    #[inline]
    pub fn trailing(&self) -> &'a [u8] {
        self.raw
            .body
            .get(self.count_off.saturating_add(4)..)
            .unwrap_or_default()
    }
}

/// A parsed ACKNACK submessage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct AckNack {
    /// The reader.
    pub reader_id: EntityId,
    /// The writer.
    pub writer_id: EntityId,
    /// Acknowledged base and missing sequence numbers.
    pub reader_sn_state: SequenceNumberSet,
    /// Count.
    pub count: Count,
    /// F flag.
    pub is_final: bool,
}

impl AckNack {
    /// Parses a checked view.
    #[inline]
    pub fn parse(v: &AckNackView<'_>) -> Self {
        AckNack {
            reader_id: v.reader_id(),
            writer_id: v.writer_id(),
            reader_sn_state: v.reader_sn_state(),
            count: v.count(),
            is_final: v.is_final(),
        }
    }
}

impl BodyRepr for AckNack {
    fn flag_bits(&self) -> u8 {
        if self.is_final {
            FLAG_FINAL
        } else {
            0
        }
    }

    fn body_len(&self) -> usize {
        12 + self.reader_sn_state.wire_len()
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.encode(&self.reader_id)?;
        w.encode(&self.writer_id)?;
        w.encode(&self.reader_sn_state)?;
        w.encode(&self.count)
    }
}
