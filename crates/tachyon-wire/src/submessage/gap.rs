//! GAP (0x08): a writer tells readers that some sequence numbers will never be sent.

use super::{BodyRepr, RawSubmessage};
use crate::bytes::{field, Endian, Reader, Writer};
use crate::error::{EmitError, WireError};
use crate::types::{EntityId, SequenceNumber, SequenceNumberSet};

/// G flag: group information follows (RTPS 2.4+).
pub const FLAG_GROUP_INFO: u8 = 0x02;

const GROUP_LEN: usize = 16;

/// A checked, zero-copy view of a GAP submessage.
#[derive(Clone, Copy, Debug)]
pub struct GapView<'a> {
    raw: RawSubmessage<'a>,
    end: usize,
    has_group: bool,
}

impl<'a> GapView<'a> {
    /// Checks the body length and the set's numBits. Group info is read only if the G flag is
    /// set and it fits; otherwise G is kept as an uninterpreted bit.
    #[inline]
    pub fn new_checked(raw: RawSubmessage<'a>) -> Result<Self, WireError> {
        let mut r = Reader::new(raw.body, raw.body_offset(), "GAP", raw.endian());
        r.skip(16)?;
        r.decode::<SequenceNumberSet>()?;
        let end = r.pos();
        let has_group = raw.flags & FLAG_GROUP_INFO != 0 && r.remaining() >= GROUP_LEN;
        Ok(GapView {
            raw,
            end,
            has_group,
        })
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

    /// First irrelevant sequence number.
    #[inline]
    pub fn gap_start(&self) -> SequenceNumber {
        field(self.raw.body, 8, self.e())
    }

    /// The end of the contiguous range (its base) and further irrelevant numbers.
    #[inline]
    pub fn gap_list(&self) -> SequenceNumberSet {
        field(self.raw.body, 16, self.e())
    }

    /// Group information (G flag).
    #[inline]
    pub fn group_info(&self) -> Option<GapGroupInfo> {
        self.has_group.then(|| GapGroupInfo {
            gap_start_gsn: field(self.raw.body, self.end, self.e()),
            gap_end_gsn: field(self.raw.body, self.end.saturating_add(8), self.e()),
        })
    }

    /// Body bytes after the parsed fields.
    #[inline]
    pub fn trailing(&self) -> &'a [u8] {
        let n = self.end + if self.has_group { GROUP_LEN } else { 0 };
        self.raw.body.get(n..).unwrap_or_default()
    }
}

/// The group information of a GAP with the G flag.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct GapGroupInfo {
    /// First irrelevant group sequence number.
    pub gap_start_gsn: SequenceNumber,
    /// Last irrelevant group sequence number.
    pub gap_end_gsn: SequenceNumber,
}

/// A parsed GAP submessage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Gap {
    /// The reader.
    pub reader_id: EntityId,
    /// The writer.
    pub writer_id: EntityId,
    /// First irrelevant sequence number.
    pub gap_start: SequenceNumber,
    /// End of the range and further irrelevant numbers.
    pub gap_list: SequenceNumberSet,
    /// Group information (G flag).
    pub group_info: Option<GapGroupInfo>,
}

impl Gap {
    /// Parses a checked view.
    #[inline]
    pub fn parse(v: &GapView<'_>) -> Self {
        Gap {
            reader_id: v.reader_id(),
            writer_id: v.writer_id(),
            gap_start: v.gap_start(),
            gap_list: v.gap_list(),
            group_info: v.group_info(),
        }
    }
}

impl BodyRepr for Gap {
    fn flag_bits(&self) -> u8 {
        if self.group_info.is_some() {
            FLAG_GROUP_INFO
        } else {
            0
        }
    }

    fn body_len(&self) -> usize {
        16 + self.gap_list.wire_len()
            + if self.group_info.is_some() {
                GROUP_LEN
            } else {
                0
            }
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.encode(&self.reader_id)?;
        w.encode(&self.writer_id)?;
        w.encode(&self.gap_start)?;
        w.encode(&self.gap_list)?;
        if let Some(g) = &self.group_info {
            w.encode(&g.gap_start_gsn)?;
            w.encode(&g.gap_end_gsn)?;
        }
        Ok(())
    }
}
