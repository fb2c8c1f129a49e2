//! DATA (0x15): one sample (or key) from a writer, with optional inline QoS.

use super::{BodyRepr, RawSubmessage};
use crate::bytes::{field, Endian, Reader, Writer};
use crate::error::{EmitError, WireError};
use crate::parameter::{ParameterList, ParameterListView};
use crate::types::{EntityId, SequenceNumber};

/// Q flag: inline QoS present.
pub const FLAG_INLINE_QOS: u8 = 0x02;
/// D flag: the payload is serialized data.
pub const FLAG_DATA: u8 = 0x04;
/// K flag: the payload is a serialized key.
pub const FLAG_KEY: u8 = 0x08;
/// N flag: the payload is not formatted as the spec's SerializedPayload.
pub const FLAG_NON_STANDARD: u8 = 0x10;

/// Bytes from the end of octetsToInlineQos to the end of writerSN.
const MIN_OCTETS_TO_INLINE_QOS: u16 = 16;
/// Offset of the first byte after writerSN in the body.
const FIXED_LEN: usize = 20;

/// A checked, zero-copy view of a DATA submessage.
#[derive(Clone, Copy, Debug)]
pub struct DataView<'a> {
    raw: RawSubmessage<'a>,
    inline_qos: Option<ParameterListView<'a>>,
    /// Where inline QoS (or whatever follows writerSN) starts: 4 + octetsToInlineQos.
    qos_start: usize,
    /// Where the payload (or trailing bytes) start.
    after_qos: usize,
}

impl<'a> DataView<'a> {
    /// Checks the fixed fields, octetsToInlineQos, the flags and the inline QoS list.
    #[inline]
    pub fn new_checked(raw: RawSubmessage<'a>) -> Result<Self, WireError> {
        let e = raw.endian();
        let mut r = Reader::new(raw.body, raw.body_offset(), "DATA", e);
        r.skip(2)?;
        let otiq = r.u16()?;
        r.skip(16)?;
        if raw.flags & (FLAG_DATA | FLAG_KEY) == FLAG_DATA | FLAG_KEY {
            return Err(WireError::DataAndKeyFlags {
                offset: raw.body_offset(),
            });
        }
        if otiq < MIN_OCTETS_TO_INLINE_QOS {
            return Err(WireError::BadOctetsToInlineQos {
                what: "DATA",
                offset: raw.body_offset(),
                value: otiq,
                minimum: MIN_OCTETS_TO_INLINE_QOS,
            });
        }
        r.skip(usize::from(otiq - MIN_OCTETS_TO_INLINE_QOS))?;
        let qos_start = r.pos();
        let (inline_qos, after_qos) =
            check_inline_qos(&raw, "DATA", qos_start, raw.flags & FLAG_INLINE_QOS != 0)?;
        Ok(DataView {
            raw,
            inline_qos,
            qos_start,
            after_qos,
        })
    }

    /// The framing.
    #[inline]
    pub fn raw(&self) -> RawSubmessage<'a> {
        self.raw
    }

    /// The byte order.
    #[inline]
    pub fn endian(&self) -> Endian {
        self.raw.endian()
    }

    /// The extraFlags field (reserved, kept as sent).
    #[inline]
    pub fn extra_flags(&self) -> u16 {
        field::<U16>(self.raw.body, 0, self.endian()).0
    }

    /// The octetsToInlineQos field.
    #[inline]
    pub fn octets_to_inline_qos(&self) -> u16 {
        field::<U16>(self.raw.body, 2, self.endian()).0
    }

    /// The destination reader (UNKNOWN for all readers).
    #[inline]
    pub fn reader_id(&self) -> EntityId {
        field(self.raw.body, 4, self.endian())
    }

    /// The writer.
    #[inline]
    pub fn writer_id(&self) -> EntityId {
        field(self.raw.body, 8, self.endian())
    }

    /// The sample's sequence number.
    #[inline]
    pub fn writer_sn(&self) -> SequenceNumber {
        field(self.raw.body, 12, self.endian())
    }

    /// Bytes between writerSN and the inline QoS/payload (octetsToInlineQos beyond 16).
    #[inline]
    pub fn gap(&self) -> &'a [u8] {
        self.raw
            .body
            .get(FIXED_LEN..self.qos_start)
            .unwrap_or_default()
    }

    /// The inline QoS, if the Q flag is set.
    #[inline]
    pub fn inline_qos(&self) -> Option<ParameterListView<'a>> {
        self.inline_qos
    }

    /// Whether the payload is a serialized key (K flag) rather than data.
    #[inline]
    pub fn is_key(&self) -> bool {
        self.raw.flags & FLAG_KEY != 0
    }

    /// Whether the N (non-standard payload) flag is set.
    #[inline]
    pub fn non_standard_payload(&self) -> bool {
        self.raw.flags & FLAG_NON_STANDARD != 0
    }

    /// The serialized payload (data or key), if the D or K flag is set.
    #[inline]
    pub fn serialized_payload(&self) -> Option<&'a [u8]> {
        if self.raw.flags & (FLAG_DATA | FLAG_KEY) != 0 {
            Some(self.raw.body.get(self.after_qos..).unwrap_or_default())
        } else {
            None
        }
    }

    /// Bytes after the inline QoS when there is no payload.
    #[inline]
    pub fn trailing(&self) -> &'a [u8] {
        match self.serialized_payload() {
            Some(_) => &[],
            None => self.raw.body.get(self.after_qos..).unwrap_or_default(),
        }
    }
}

/// Checks the inline QoS list at `qos_start` when `present`; returns it and where it ends.
#[inline]
pub(super) fn check_inline_qos<'a>(
    raw: &RawSubmessage<'a>,
    what: &'static str,
    qos_start: usize,
    present: bool,
) -> Result<(Option<ParameterListView<'a>>, usize), WireError> {
    if !present {
        return Ok((None, qos_start));
    }
    // Out of line and by value: the list walk is a loop, and keeping `raw` in registers
    // spares the caller a round trip through memory.
    parse_inline_qos(raw.body, raw.endian(), raw.body_offset(), what, qos_start)
}

fn parse_inline_qos<'a>(
    body: &'a [u8],
    endian: Endian,
    body_offset: usize,
    what: &'static str,
    qos_start: usize,
) -> Result<(Option<ParameterListView<'a>>, usize), WireError> {
    let rest = body.get(qos_start..).unwrap_or_default();
    let list = ParameterListView::parse(rest, endian).map_err(|source| WireError::InlineQos {
        what,
        offset: body_offset.saturating_add(qos_start),
        source,
    })?;
    Ok((Some(list), qos_start.saturating_add(list.len())))
}

/// A u16 in the submessage's byte order, for view accessors.
#[derive(Default)]
pub(super) struct U16(pub u16);

impl crate::bytes::Codec for U16 {
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(U16(r.u16()?))
    }
    #[inline]
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.u16(self.0)
    }
}

/// A u32 in the submessage's byte order, for view accessors.
#[derive(Default)]
pub(super) struct U32(pub u32);

impl crate::bytes::Codec for U32 {
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(U32(r.u32()?))
    }
    #[inline]
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.u32(self.0)
    }
}

/// The payload of a DATA submessage.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DataPayload {
    /// No payload (D = K = 0), e.g. a dispose carried by inline QoS only.
    None,
    /// Serialized data (D = 1), encapsulation header included.
    Data(Vec<u8>),
    /// Serialized key (K = 1), encapsulation header included.
    Key(Vec<u8>),
}

/// A parsed DATA submessage.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Data {
    /// extraFlags (reserved), kept as sent.
    pub extra_flags: u16,
    /// Destination reader.
    pub reader_id: EntityId,
    /// Source writer.
    pub writer_id: EntityId,
    /// Sequence number of the sample.
    pub writer_sn: SequenceNumber,
    /// Bytes between writerSN and the inline QoS/payload (usually empty).
    pub gap: Vec<u8>,
    /// Inline QoS (Q flag), in the submessage's byte order.
    pub inline_qos: Option<ParameterList>,
    /// The payload (D / K flags).
    pub payload: DataPayload,
    /// The N flag.
    pub non_standard_payload: bool,
}

impl Data {
    /// Parses a checked view.
    #[inline]
    pub fn parse(v: &DataView<'_>) -> Self {
        let payload = match v.serialized_payload() {
            None => DataPayload::None,
            Some(p) if v.is_key() => DataPayload::Key(p.to_vec()),
            Some(p) => DataPayload::Data(p.to_vec()),
        };
        Data {
            extra_flags: v.extra_flags(),
            reader_id: v.reader_id(),
            writer_id: v.writer_id(),
            writer_sn: v.writer_sn(),
            gap: crate::bytes::to_vec(v.gap()),
            inline_qos: v.inline_qos().map(|q| ParameterList::parse(&q)),
            payload,
            non_standard_payload: v.non_standard_payload(),
        }
    }

    /// The payload bytes, data or key.
    pub fn payload_bytes(&self) -> Option<&[u8]> {
        match &self.payload {
            DataPayload::None => None,
            DataPayload::Data(p) | DataPayload::Key(p) => Some(p),
        }
    }
}

impl BodyRepr for Data {
    fn flag_bits(&self) -> u8 {
        let mut f = 0;
        if self.inline_qos.is_some() {
            f |= FLAG_INLINE_QOS;
        }
        match self.payload {
            DataPayload::None => {}
            DataPayload::Data(_) => f |= FLAG_DATA,
            DataPayload::Key(_) => f |= FLAG_KEY,
        }
        if self.non_standard_payload {
            f |= FLAG_NON_STANDARD;
        }
        f
    }

    fn body_len(&self) -> usize {
        FIXED_LEN
            .saturating_add(self.gap.len())
            .saturating_add(
                self.inline_qos
                    .as_ref()
                    .map_or(0, ParameterList::buffer_len),
            )
            .saturating_add(self.payload_bytes().map_or(0, <[u8]>::len))
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        let otiq = u16::try_from(self.gap.len().saturating_add(16)).map_err(|_| {
            EmitError::SubmessageTooLong {
                id: super::id::DATA,
                length: self.gap.len(),
            }
        })?;
        w.u16(self.extra_flags)?;
        w.u16(otiq)?;
        w.encode(&self.reader_id)?;
        w.encode(&self.writer_id)?;
        w.encode(&self.writer_sn)?;
        w.put(&self.gap)?;
        if let Some(q) = &self.inline_qos {
            let e = w.endian;
            w.with_rest(|buf| q.emit(buf, e))?;
        }
        w.put(self.payload_bytes().unwrap_or_default())
    }
}
