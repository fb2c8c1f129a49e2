//! HEARTBEAT_FRAG (0x13): a writer announces which fragments of a sample it has.

use super::data::U32;
use super::{BodyRepr, RawSubmessage};
use crate::bytes::{field, Endian, Reader, Writer};
use crate::error::{EmitError, WireError};
use crate::types::{Count, EntityId, FragmentNumber, SequenceNumber};

const FIXED_LEN: usize = 24;

/// A checked, zero-copy view of a HEARTBEAT_FRAG submessage.
#[derive(Clone, Copy, Debug)]
pub struct HeartbeatFragView<'a> {
    raw: RawSubmessage<'a>,
}

impl<'a> HeartbeatFragView<'a> {
    /// Checks the body length.
    #[inline]
    pub fn new_checked(raw: RawSubmessage<'a>) -> Result<Self, WireError> {
        Reader::new(raw.body, raw.body_offset(), "HEARTBEAT_FRAG", raw.endian()).skip(FIXED_LEN)?;
        Ok(HeartbeatFragView { raw })
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

    /// Last fragment available.
    #[inline]
    pub fn last_fragment_num(&self) -> FragmentNumber {
        FragmentNumber(field::<U32>(self.raw.body, 16, self.e()).0)
    }

    /// Count.
    #[inline]
    pub fn count(&self) -> Count {
        field(self.raw.body, 20, self.e())
    }

    /// Body bytes after the parsed fields.
    #[inline]
    pub fn trailing(&self) -> &'a [u8] {
        self.raw.body.get(FIXED_LEN..).unwrap_or_default()
    }
}

/// A parsed HEARTBEAT_FRAG submessage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct HeartbeatFrag {
    /// The reader.
    pub reader_id: EntityId,
    /// The writer.
    pub writer_id: EntityId,
    /// The fragmented sample.
    pub writer_sn: SequenceNumber,
    /// Last fragment available.
    pub last_fragment_num: FragmentNumber,
    /// Count.
    pub count: Count,
}

impl HeartbeatFrag {
    /// Parses a checked view.
    #[inline]
    pub fn parse(v: &HeartbeatFragView<'_>) -> Self {
        HeartbeatFrag {
            reader_id: v.reader_id(),
            writer_id: v.writer_id(),
            writer_sn: v.writer_sn(),
            last_fragment_num: v.last_fragment_num(),
            count: v.count(),
        }
    }
}

impl BodyRepr for HeartbeatFrag {
    fn flag_bits(&self) -> u8 {
        0
    }

    fn body_len(&self) -> usize {
        FIXED_LEN
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.encode(&self.reader_id)?;
        w.encode(&self.writer_id)?;
        w.encode(&self.writer_sn)?;
        w.encode(&self.last_fragment_num)?;
        w.encode(&self.count)
    }
}
