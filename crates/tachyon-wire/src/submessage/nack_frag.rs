//! NACK_FRAG (0x12): a reader asks for missing fragments of one sample.

use super::{BodyRepr, RawSubmessage};
use crate::bytes::{field, Endian, Reader, Writer};
use crate::error::{EmitError, WireError};
use crate::types::{Count, EntityId, FragmentNumberSet, SequenceNumber};

/// A checked, zero-copy view of a NACK_FRAG submessage.
#[derive(Clone, Copy, Debug)]
pub struct NackFragView<'a> {
    raw: RawSubmessage<'a>,
    count_off: usize,
}

impl<'a> NackFragView<'a> {
    /// Checks the body length and the set's numBits.
    #[inline]
    pub fn new_checked(raw: RawSubmessage<'a>) -> Result<Self, WireError> {
        let mut r = Reader::new(raw.body, raw.body_offset(), "NACK_FRAG", raw.endian());
        r.skip(16)?;
        r.decode::<FragmentNumberSet>()?;
        let count_off = r.pos();
        r.skip(4)?;
        Ok(NackFragView { raw, count_off })
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

    /// The fragmented sample.
    #[inline]
    pub fn writer_sn(&self) -> SequenceNumber {
        field(self.raw.body, 8, self.e())
    }

    /// The missing fragments.
    #[inline]
    pub fn fragment_number_state(&self) -> FragmentNumberSet {
        field(self.raw.body, 16, self.e())
    }

    /// Count.
    #[inline]
    pub fn count(&self) -> Count {
        field(self.raw.body, self.count_off, self.e())
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

/// A parsed NACK_FRAG submessage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct NackFrag {
    /// The reader.
    pub reader_id: EntityId,
    /// The writer.
    pub writer_id: EntityId,
    /// The fragmented sample.
    pub writer_sn: SequenceNumber,
    /// The missing fragments.
    pub fragment_number_state: FragmentNumberSet,
    /// Count.
    pub count: Count,
}

impl NackFrag {
    /// Parses a checked view.
    #[inline]
    pub fn parse(v: &NackFragView<'_>) -> Self {
        NackFrag {
            reader_id: v.reader_id(),
            writer_id: v.writer_id(),
            writer_sn: v.writer_sn(),
            fragment_number_state: v.fragment_number_state(),
            count: v.count(),
        }
    }
}

impl BodyRepr for NackFrag {
    fn flag_bits(&self) -> u8 {
        0
    }

    fn body_len(&self) -> usize {
        20 + self.fragment_number_state.wire_len()
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.encode(&self.reader_id)?;
        w.encode(&self.writer_id)?;
        w.encode(&self.writer_sn)?;
        w.encode(&self.fragment_number_state)?;
        w.encode(&self.count)
    }
}
