//! DATA_FRAG (0x16): a run of fragments of one large sample.

use super::data::{check_inline_qos, U16, U32};
use super::{BodyRepr, RawSubmessage};
use crate::bytes::{field, Endian, Reader, Writer};
use crate::error::{EmitError, WireError};
use crate::parameter::{ParameterList, ParameterListView};
use crate::types::{EntityId, FragmentNumber, SequenceNumber};

/// Q flag: inline QoS present.
pub const FLAG_INLINE_QOS: u8 = 0x02;
/// K flag: the fragments are of a serialized key.
pub const FLAG_KEY: u8 = 0x04;
/// N flag: non-standard payload.
pub const FLAG_NON_STANDARD: u8 = 0x08;

/// Bytes from the end of octetsToInlineQos to the end of sampleSize.
const MIN_OCTETS_TO_INLINE_QOS: u16 = 28;
/// Offset of the first byte after sampleSize in the body.
const FIXED_LEN: usize = 32;

/// A checked, zero-copy view of a DATA_FRAG submessage.
#[derive(Clone, Copy, Debug)]
pub struct DataFragView<'a> {
    raw: RawSubmessage<'a>,
    inline_qos: Option<ParameterListView<'a>>,
    qos_start: usize,
    after_qos: usize,
}

impl<'a> DataFragView<'a> {
    /// Checks the fixed fields, octetsToInlineQos and the inline QoS list.
    #[inline]
    pub fn new_checked(raw: RawSubmessage<'a>) -> Result<Self, WireError> {
        let mut r = Reader::new(raw.body, raw.body_offset(), "DATA_FRAG", raw.endian());
        r.skip(2)?;
        let otiq = r.u16()?;
        r.skip(28)?;
        if otiq < MIN_OCTETS_TO_INLINE_QOS {
            return Err(WireError::BadOctetsToInlineQos {
                what: "DATA_FRAG",
                offset: raw.body_offset(),
                value: otiq,
                minimum: MIN_OCTETS_TO_INLINE_QOS,
            });
        }
        r.skip(usize::from(otiq - MIN_OCTETS_TO_INLINE_QOS))?;
        let qos_start = r.pos();
        let (inline_qos, after_qos) = check_inline_qos(
            &raw,
            "DATA_FRAG",
            qos_start,
            raw.flags & FLAG_INLINE_QOS != 0,
        )?;
        Ok(DataFragView {
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

    #[inline]
    fn e(&self) -> Endian {
        self.raw.endian()
    }

    /// The extraFlags field (reserved).
    #[inline]
    pub fn extra_flags(&self) -> u16 {
        field::<U16>(self.raw.body, 0, self.e()).0
    }

    /// The destination reader.
    #[inline]
    pub fn reader_id(&self) -> EntityId {
        field(self.raw.body, 4, self.e())
    }

    /// The writer.
    #[inline]
    pub fn writer_id(&self) -> EntityId {
        field(self.raw.body, 8, self.e())
    }

    /// The sample's sequence number.
    #[inline]
    pub fn writer_sn(&self) -> SequenceNumber {
        field(self.raw.body, 12, self.e())
    }

    /// Number of the first fragment in this submessage (1-based).
    #[inline]
    pub fn fragment_starting_num(&self) -> FragmentNumber {
        field(self.raw.body, 20, self.e())
    }

    /// Number of fragments in this submessage.
    #[inline]
    pub fn fragments_in_submessage(&self) -> u16 {
        field::<U16>(self.raw.body, 24, self.e()).0
    }

    /// Size of every fragment but the last.
    #[inline]
    pub fn fragment_size(&self) -> u16 {
        field::<U16>(self.raw.body, 26, self.e()).0
    }

    /// Size of the whole serialized sample.
    #[inline]
    pub fn sample_size(&self) -> u32 {
        field::<U32>(self.raw.body, 28, self.e()).0
    }

    /// Bytes between sampleSize and the inline QoS/payload.
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

    /// Whether the fragments are of a key (K flag).
    #[inline]
    pub fn is_key(&self) -> bool {
        self.raw.flags & FLAG_KEY != 0
    }

    /// The fragment bytes.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        self.raw.body.get(self.after_qos..).unwrap_or_default()
    }

    /// Always empty: the payload runs to the end of the submessage.
    #[inline]
    pub fn trailing(&self) -> &'a [u8] {
        &[]
    }
}

/// A parsed DATA_FRAG submessage.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DataFrag {
    /// extraFlags (reserved), kept as sent.
    pub extra_flags: u16,
    /// Destination reader.
    pub reader_id: EntityId,
    /// Source writer.
    pub writer_id: EntityId,
    /// Sequence number of the sample.
    pub writer_sn: SequenceNumber,
    /// First fragment number in this submessage.
    pub fragment_starting_num: FragmentNumber,
    /// Fragments in this submessage.
    pub fragments_in_submessage: u16,
    /// Fragment size.
    pub fragment_size: u16,
    /// Total sample size.
    pub sample_size: u32,
    /// Bytes between sampleSize and the inline QoS/payload (usually empty).
    pub gap: Vec<u8>,
    /// Inline QoS (Q flag).
    pub inline_qos: Option<ParameterList>,
    /// K flag.
    pub key: bool,
    /// N flag.
    pub non_standard_payload: bool,
    /// The fragment bytes.
    pub payload: Vec<u8>,
}

impl DataFrag {
    /// Parses a checked view.
    #[inline]
    pub fn parse(v: &DataFragView<'_>) -> Self {
        DataFrag {
            extra_flags: v.extra_flags(),
            reader_id: v.reader_id(),
            writer_id: v.writer_id(),
            writer_sn: v.writer_sn(),
            fragment_starting_num: v.fragment_starting_num(),
            fragments_in_submessage: v.fragments_in_submessage(),
            fragment_size: v.fragment_size(),
            sample_size: v.sample_size(),
            gap: crate::bytes::to_vec(v.gap()),
            inline_qos: v.inline_qos().map(|q| ParameterList::parse(&q)),
            key: v.is_key(),
            non_standard_payload: v.raw.flags & FLAG_NON_STANDARD != 0,
            payload: v.payload().to_vec(),
        }
    }
}

impl BodyRepr for DataFrag {
    fn flag_bits(&self) -> u8 {
        let mut f = 0;
        if self.inline_qos.is_some() {
            f |= FLAG_INLINE_QOS;
        }
        if self.key {
            f |= FLAG_KEY;
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
            .saturating_add(self.payload.len())
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        let otiq = u16::try_from(self.gap.len().saturating_add(28)).map_err(|_| {
            EmitError::SubmessageTooLong {
                id: super::id::DATA_FRAG,
                length: self.gap.len(),
            }
        })?;
        w.u16(self.extra_flags)?;
        w.u16(otiq)?;
        w.encode(&self.reader_id)?;
        w.encode(&self.writer_id)?;
        w.encode(&self.writer_sn)?;
        w.encode(&self.fragment_starting_num)?;
        w.u16(self.fragments_in_submessage)?;
        w.u16(self.fragment_size)?;
        w.u32(self.sample_size)?;
        w.put(&self.gap)?;
        if let Some(q) = &self.inline_qos {
            let e = w.endian;
            w.with_rest(|buf| q.emit(buf, e))?;
        }
        w.put(&self.payload)
    }
}
