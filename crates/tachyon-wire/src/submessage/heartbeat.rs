//! HEARTBEAT (0x07): a writer announces the range of sequence numbers it has available.

use super::{BodyRepr, RawSubmessage};
use crate::bytes::{field, Endian, Reader, Writer};
use crate::error::{EmitError, WireError};
use crate::types::{Count, EntityId, SequenceNumber};

/// F flag: the reader need not answer.
pub const FLAG_FINAL: u8 = 0x02;
/// L flag: the heartbeat also asserts liveliness.
pub const FLAG_LIVELINESS: u8 = 0x04;
/// G flag: group information follows (RTPS 2.4+).
pub const FLAG_GROUP_INFO: u8 = 0x08;

const FIXED_LEN: usize = 28;
const GROUP_LEN: usize = 32;

/// A checked, zero-copy view of a HEARTBEAT submessage.
#[derive(Clone, Copy, Debug)]
pub struct HeartbeatView<'a> {
    raw: RawSubmessage<'a>,
    has_group: bool,
}

impl<'a> HeartbeatView<'a> {
    /// Checks the body length. Group info is read only if the G flag is set and it fits;
    /// otherwise the G flag is treated as an uninterpreted bit and its bytes as trailing.
    #[inline]
    pub fn new_checked(raw: RawSubmessage<'a>) -> Result<Self, WireError> {
        let mut r = Reader::new(raw.body, raw.body_offset(), "HEARTBEAT", raw.endian());
        r.skip(FIXED_LEN)?;
        let has_group = raw.flags & FLAG_GROUP_INFO != 0 && r.remaining() >= GROUP_LEN;
        Ok(HeartbeatView { raw, has_group })
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

    /// The reader (UNKNOWN for all readers of the writer).
    #[inline]
    pub fn reader_id(&self) -> EntityId {
        field(self.raw.body, 0, self.e())
    }

    /// The writer.
    #[inline]
    pub fn writer_id(&self) -> EntityId {
        field(self.raw.body, 4, self.e())
    }

    /// First available sequence number.
    #[inline]
    pub fn first_sn(&self) -> SequenceNumber {
        field(self.raw.body, 8, self.e())
    }

    /// Last available sequence number.
    #[inline]
    pub fn last_sn(&self) -> SequenceNumber {
        field(self.raw.body, 16, self.e())
    }

    /// Heartbeat count.
    #[inline]
    pub fn count(&self) -> Count {
        field(self.raw.body, 24, self.e())
    }

    /// F flag.
    #[inline]
    pub fn is_final(&self) -> bool {
        self.raw.flags & FLAG_FINAL != 0
    }

    /// L flag.
    #[inline]
    pub fn liveliness(&self) -> bool {
        self.raw.flags & FLAG_LIVELINESS != 0
    }

    /// Group information (G flag).
    #[inline]
    pub fn group_info(&self) -> Option<HeartbeatGroupInfo> {
        self.has_group.then(|| {
            let b = self.raw.body;
            HeartbeatGroupInfo {
                current_gsn: field(b, 28, self.e()),
                first_gsn: field(b, 36, self.e()),
                last_gsn: field(b, 44, self.e()),
                writer_set: field::<GroupDigest>(b, 52, self.e()).0,
                secure_writer_set: field::<GroupDigest>(b, 56, self.e()).0,
            }
        })
    }

    #[inline]
    fn parsed_len(&self) -> usize {
        FIXED_LEN + if self.has_group { GROUP_LEN } else { 0 }
    }

    /// Body bytes after the parsed fields.
    #[inline]
    pub fn trailing(&self) -> &'a [u8] {
        self.raw.body.get(self.parsed_len()..).unwrap_or_default()
    }
}

/// A 4-byte group digest.
#[derive(Default)]
struct GroupDigest([u8; 4]);

impl crate::bytes::Codec for GroupDigest {
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(GroupDigest(r.array()?))
    }
    #[inline]
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.put(&self.0)
    }
}

/// The group information of a HEARTBEAT with the G flag.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct HeartbeatGroupInfo {
    /// Current group sequence number.
    pub current_gsn: SequenceNumber,
    /// First available group sequence number.
    pub first_gsn: SequenceNumber,
    /// Last available group sequence number.
    pub last_gsn: SequenceNumber,
    /// Digest of the writers in the group.
    pub writer_set: [u8; 4],
    /// Digest of the secure writers in the group.
    pub secure_writer_set: [u8; 4],
}

/// A parsed HEARTBEAT submessage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Heartbeat {
    /// The reader.
    pub reader_id: EntityId,
    /// The writer.
    pub writer_id: EntityId,
    /// First available sequence number.
    pub first_sn: SequenceNumber,
    /// Last available sequence number.
    pub last_sn: SequenceNumber,
    /// Heartbeat count.
    pub count: Count,
    /// F flag.
    pub is_final: bool,
    /// L flag.
    pub liveliness: bool,
    /// Group information (G flag).
    pub group_info: Option<HeartbeatGroupInfo>,
}

impl Heartbeat {
    /// Parses a checked view.
    #[inline]
    pub fn parse(v: &HeartbeatView<'_>) -> Self {
        Heartbeat {
            reader_id: v.reader_id(),
            writer_id: v.writer_id(),
            first_sn: v.first_sn(),
            last_sn: v.last_sn(),
            count: v.count(),
            is_final: v.is_final(),
            liveliness: v.liveliness(),
            group_info: v.group_info(),
        }
    }
}

impl BodyRepr for Heartbeat {
    fn flag_bits(&self) -> u8 {
        (if self.is_final { FLAG_FINAL } else { 0 })
            | (if self.liveliness { FLAG_LIVELINESS } else { 0 })
            | (if self.group_info.is_some() {
                FLAG_GROUP_INFO
            } else {
                0
            })
    }

    fn body_len(&self) -> usize {
        FIXED_LEN
            + if self.group_info.is_some() {
                GROUP_LEN
            } else {
                0
            }
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.encode(&self.reader_id)?;
        w.encode(&self.writer_id)?;
        w.encode(&self.first_sn)?;
        w.encode(&self.last_sn)?;
        w.encode(&self.count)?;
        if let Some(g) = &self.group_info {
            w.encode(&g.current_gsn)?;
            w.encode(&g.first_gsn)?;
            w.encode(&g.last_gsn)?;
            w.put(&g.writer_set)?;
            w.put(&g.secure_writer_set)?;
        }
        Ok(())
    }
}
