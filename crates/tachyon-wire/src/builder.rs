//! Writing RTPS messages straight into a transmit buffer, without building parsed forms first.
//!
//! [`MessageBuilder`] is the send path's encoder: a protocol state machine appends submessages
//! to the datagram it is filling, and each call either writes the whole submessage or, when it
//! does not fit, writes nothing and reports [`EmitError::BufferTooSmall`] so the caller can send
//! what it has and start a new message. Nothing is allocated. Submessages are written
//! little-endian (the E flag set), the byte order of every machine this project targets; each
//! submessage is padded to a multiple of 4 bytes as RTPS requires.

use crate::bytes::{Endian, Writer};
use crate::error::EmitError;
use crate::header::{Header, HEADER_LEN};
use crate::types::{
    Count, EntityId, FragmentNumber, FragmentNumberSet, GuidPrefix, SequenceNumber,
    SequenceNumberSet, Time,
};

/// Submessage ids written by the builder.
mod id {
    pub const ACKNACK: u8 = 0x06;
    pub const HEARTBEAT: u8 = 0x07;
    pub const GAP: u8 = 0x08;
    pub const INFO_TS: u8 = 0x09;
    pub const INFO_DST: u8 = 0x0e;
    pub const NACK_FRAG: u8 = 0x12;
    pub const HEARTBEAT_FRAG: u8 = 0x13;
    pub const DATA: u8 = 0x15;
    pub const DATA_FRAG: u8 = 0x16;
}

/// E flag: little-endian submessage.
const FLAG_LITTLE: u8 = 0x01;

/// What a DATA or DATA_FRAG carries after its inline QoS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PayloadKind {
    /// No payload (D = K = 0): a dispose/unregister told by inline QoS only.
    None,
    /// Serialized data (D = 1 in DATA).
    Data,
    /// Serialized key (K = 1).
    Key,
}

/// The fields of a DATA submessage to write.
#[derive(Clone, Copy, Debug)]
pub struct DataSpec<'a> {
    /// Destination reader (ENTITYID_UNKNOWN for all readers).
    pub reader_id: EntityId,
    /// Source writer.
    pub writer_id: EntityId,
    /// Sequence number of the change.
    pub writer_sn: SequenceNumber,
    /// An encoded little-endian parameter list ending with PID_SENTINEL (see
    /// [`InlineQos`]), or `None`.
    pub inline_qos: Option<&'a [u8]>,
    /// What `payload` is.
    pub kind: PayloadKind,
    /// The serialized payload, encapsulation header included (empty for [`PayloadKind::None`]).
    pub payload: &'a [u8],
}

/// INFO_TS and a DATA of serialized data whose inline QoS is at most the key hash
/// ([`MessageBuilder::info_ts_and_data`]).
#[derive(Clone, Copy, Debug)]
pub struct PlainData<'a> {
    /// INFO_TS's timestamp.
    pub time: Time,
    /// Destination reader (ENTITYID_UNKNOWN for all readers).
    pub reader_id: EntityId,
    /// Source writer.
    pub writer_id: EntityId,
    /// Sequence number of the change.
    pub writer_sn: SequenceNumber,
    /// PID_KEY_HASH's value, the only inline QoS parameter; `None`: no inline QoS.
    pub key_hash: Option<&'a [u8; 16]>,
    /// The serialized data, encapsulation header included.
    pub payload: &'a [u8],
}

/// The fields of a DATA_FRAG submessage to write.
#[derive(Clone, Copy, Debug)]
pub struct DataFragSpec<'a> {
    /// Destination reader.
    pub reader_id: EntityId,
    /// Source writer.
    pub writer_id: EntityId,
    /// Sequence number of the change.
    pub writer_sn: SequenceNumber,
    /// Number of the first fragment carried (1-based).
    pub fragment_starting_num: u32,
    /// Fragment size in bytes (all fragments but the last are this long).
    pub fragment_size: u16,
    /// Size of the whole serialized payload.
    pub sample_size: u32,
    /// Inline QoS as in [`DataSpec::inline_qos`].
    pub inline_qos: Option<&'a [u8]>,
    /// True when the payload is a serialized key.
    pub key: bool,
    /// The bytes of the fragments carried, back to back (whole fragments; the last fragment of
    /// the sample may be short).
    pub fragments: &'a [u8],
}

/// Appends submessages to one RTPS message in a caller-provided buffer.
#[derive(Debug)]
pub struct MessageBuilder<'b> {
    w: Writer<'b>,
}

impl<'b> MessageBuilder<'b> {
    /// Starts a message in `buf` with `header`.
    pub fn new(buf: &'b mut [u8], header: &Header) -> Result<Self, EmitError> {
        let mut w = Writer::new(buf, Endian::Little);
        w.with_rest(|rest| header.emit(rest))?;
        Ok(MessageBuilder { w })
    }

    /// Bytes written so far (the message length if sent now).
    pub fn len(&self) -> usize {
        self.w.pos()
    }

    /// True when nothing but the header has been written.
    pub fn is_empty(&self) -> bool {
        self.w.pos() <= HEADER_LEN
    }

    /// Bytes still free in the buffer.
    pub fn remaining(&self) -> usize {
        self.w.remaining()
    }

    /// Ends the message; returns its length.
    pub fn finish(self) -> usize {
        self.w.pos()
    }

    /// Appends INFO_TS with a timestamp, or with the I flag (no timestamp) for `None`.
    pub fn info_ts(&mut self, time: Option<Time>) -> Result<(), EmitError> {
        match time {
            Some(t) => {
                let mut f = [0u8; 8];
                put_le(&mut f, 0, &t.seconds.to_le_bytes());
                put_le(&mut f, 4, &t.fraction.to_le_bytes());
                self.fixed(id::INFO_TS, 0, f, &[], &[])
            }
            None => self.fixed(id::INFO_TS, 0x02, [], &[], &[]),
        }
    }

    /// Appends INFO_DST.
    pub fn info_dst(&mut self, prefix: GuidPrefix) -> Result<(), EmitError> {
        self.submessage(id::INFO_DST, 0, 12, |w| w.encode(&prefix))
    }

    /// Appends a DATA submessage.
    pub fn data(&mut self, d: &DataSpec<'_>) -> Result<(), EmitError> {
        let qos = d.inline_qos.unwrap_or(&[]);
        let mut flags = 0;
        if d.inline_qos.is_some() {
            flags |= 0x02;
        }
        flags |= match d.kind {
            PayloadKind::None => 0,
            PayloadKind::Data => 0x04,
            PayloadKind::Key => 0x08,
        };
        let payload = if d.kind == PayloadKind::None {
            &[][..]
        } else {
            d.payload
        };
        // extraFlags 0, octetsToInlineQos 16, readerId, writerId, writerSN.
        let mut f = [0u8; 20];
        put_le(&mut f, 2, &16u16.to_le_bytes());
        put_le(&mut f, 4, &d.reader_id.0);
        put_le(&mut f, 8, &d.writer_id.0);
        put_sn(&mut f, 12, d.writer_sn);
        self.fixed(id::DATA, flags, f, qos, payload)
    }

    /// Appends INFO_TS with `time` and a DATA of serialized data whose inline QoS is the key
    /// hash alone (`Some`) or absent (`None`): byte for byte what [`info_ts`](Self::info_ts)
    /// then [`data`](Self::data) with `InlineQos::new(key_hash, None)` and
    /// [`PayloadKind::Data`] write (`tests/builder.rs` checks it), in one step and without
    /// building a parameter list: the DATA of a steady stream. Writes both or, when they do
    /// not fit, nothing.
    pub fn info_ts_and_data(&mut self, plain: &PlainData<'_>) -> Result<(), EmitError> {
        /// PID_KEY_HASH with its 16 octets, then PID_SENTINEL.
        const KEY_QOS: usize = 4 + 16 + 4;
        /// INFO_TS (header and time), DATA's header and fixed fields, the inline QoS.
        const HEAD: usize = 12 + 4 + 20 + KEY_QOS;
        let qos = if plain.key_hash.is_some() { KEY_QOS } else { 0 };
        let body = 20 + qos + plain.payload.len();
        let padded = body.div_ceil(4) * 4;
        let octets = u16::try_from(padded).map_err(|_| EmitError::BufferTooSmall {
            needed: padded,
            available: usize::from(u16::MAX),
        })?;
        let needed = 12 + 4 + padded;
        if needed > self.w.remaining() {
            return Err(EmitError::BufferTooSmall {
                needed: self.w.pos() + needed,
                available: self.w.pos() + self.w.remaining(),
            });
        }
        let mut h = [0u8; HEAD];
        h[..4].copy_from_slice(&[id::INFO_TS, FLAG_LITTLE, 8, 0]);
        h[4..8].copy_from_slice(&plain.time.seconds.to_le_bytes());
        h[8..12].copy_from_slice(&plain.time.fraction.to_le_bytes());
        let flags = FLAG_LITTLE | 0x04 | if qos > 0 { 0x02 } else { 0 };
        let [lo, hi] = octets.to_le_bytes();
        h[12..16].copy_from_slice(&[id::DATA, flags, lo, hi]);
        // extraFlags 0, octetsToInlineQos 16, readerId, writerId, writerSN.
        h[18] = 16;
        h[20..24].copy_from_slice(&plain.reader_id.0);
        h[24..28].copy_from_slice(&plain.writer_id.0);
        h[28..32].copy_from_slice(&plain.writer_sn.high().to_le_bytes());
        h[32..36].copy_from_slice(&plain.writer_sn.low().to_le_bytes());
        if let Some(kh) = plain.key_hash {
            h[36..40].copy_from_slice(&[0x70, 0, 16, 0]);
            h[40..56].copy_from_slice(kh);
            h[56] = 1; // PID_SENTINEL, length 0
        }
        self.w.put(&h[..36 + qos])?;
        self.w.put(plain.payload)?;
        self.w.put(&[0u8; 3][..padded - body])
    }

    /// Appends a DATA_FRAG submessage.
    pub fn data_frag(&mut self, d: &DataFragSpec<'_>) -> Result<(), EmitError> {
        let qos = d.inline_qos.unwrap_or(&[]);
        let mut flags = 0;
        if d.inline_qos.is_some() {
            flags |= 0x02;
        }
        if d.key {
            flags |= 0x04;
        }
        let size = usize::from(d.fragment_size.max(1));
        let count = d.fragments.len().div_ceil(size);
        let count = u16::try_from(count).map_err(|_| EmitError::BufferTooSmall {
            needed: d.fragments.len(),
            available: usize::from(u16::MAX) * size,
        })?;
        let body = 32 + qos.len() + d.fragments.len();
        self.submessage(id::DATA_FRAG, flags, body, |w| {
            w.u16(0)?;
            w.u16(28)?;
            w.encode(&d.reader_id)?;
            w.encode(&d.writer_id)?;
            w.encode(&d.writer_sn)?;
            w.u32(d.fragment_starting_num)?;
            w.u16(count)?;
            w.u16(d.fragment_size)?;
            w.u32(d.sample_size)?;
            w.put(qos)?;
            w.put(d.fragments)
        })
    }

    /// Appends a HEARTBEAT announcing `first..=last`; `final_flag` says no reply is required,
    /// `liveliness` that it only asserts the writer's liveliness.
    #[allow(clippy::too_many_arguments)]
    pub fn heartbeat(
        &mut self,
        reader_id: EntityId,
        writer_id: EntityId,
        first: SequenceNumber,
        last: SequenceNumber,
        count: Count,
        final_flag: bool,
        liveliness: bool,
    ) -> Result<(), EmitError> {
        let flags = if final_flag { 0x02 } else { 0 } | if liveliness { 0x04 } else { 0 };
        let mut f = [0u8; 28];
        put_le(&mut f, 0, &reader_id.0);
        put_le(&mut f, 4, &writer_id.0);
        put_sn(&mut f, 8, first);
        put_sn(&mut f, 16, last);
        put_le(&mut f, 24, &count.0.to_le_bytes());
        self.fixed(id::HEARTBEAT, flags, f, &[], &[])
    }

    /// Appends an ACKNACK: everything below `state.base` is acknowledged, set bits are missing.
    pub fn acknack(
        &mut self,
        reader_id: EntityId,
        writer_id: EntityId,
        state: &SequenceNumberSet,
        count: Count,
        final_flag: bool,
    ) -> Result<(), EmitError> {
        let flags = if final_flag { 0x02 } else { 0 };
        let body = 8 + state.wire_len() + 4;
        self.submessage(id::ACKNACK, flags, body, |w| {
            w.encode(&reader_id)?;
            w.encode(&writer_id)?;
            w.encode(state)?;
            w.encode(&count)
        })
    }

    /// Appends a GAP: `gap_start..gap_list.base` and the set bits of `gap_list` are irrelevant.
    pub fn gap(
        &mut self,
        reader_id: EntityId,
        writer_id: EntityId,
        gap_start: SequenceNumber,
        gap_list: &SequenceNumberSet,
    ) -> Result<(), EmitError> {
        let body = 8 + 8 + gap_list.wire_len();
        self.submessage(id::GAP, 0, body, |w| {
            w.encode(&reader_id)?;
            w.encode(&writer_id)?;
            w.encode(&gap_start)?;
            w.encode(gap_list)
        })
    }

    /// Appends a NACK_FRAG asking for the set fragments of `writer_sn`.
    pub fn nack_frag(
        &mut self,
        reader_id: EntityId,
        writer_id: EntityId,
        writer_sn: SequenceNumber,
        missing: &FragmentNumberSet,
        count: Count,
    ) -> Result<(), EmitError> {
        let body = 16 + missing.wire_len() + 4;
        self.submessage(id::NACK_FRAG, 0, body, |w| {
            w.encode(&reader_id)?;
            w.encode(&writer_id)?;
            w.encode(&writer_sn)?;
            w.encode(missing)?;
            w.encode(&count)
        })
    }

    /// Appends a HEARTBEAT_FRAG: fragments `1..=last_fragment` of `writer_sn` are available.
    pub fn heartbeat_frag(
        &mut self,
        reader_id: EntityId,
        writer_id: EntityId,
        writer_sn: SequenceNumber,
        last_fragment: FragmentNumber,
        count: Count,
    ) -> Result<(), EmitError> {
        self.submessage(id::HEARTBEAT_FRAG, 0, 24, |w| {
            w.encode(&reader_id)?;
            w.encode(&writer_id)?;
            w.encode(&writer_sn)?;
            w.encode(&last_fragment)?;
            w.encode(&count)
        })
    }

    /// Writes one submessage whose body is the fixed fields `fields` (little endian, laid
    /// out by the caller) followed by `a` and `b`, padded to 4, or nothing at all: what
    /// [`submessage`](Self::submessage) writes, in four copies instead of a bounds-checked
    /// write per field (the submessages of every sample: INFO_TS, DATA, HEARTBEAT).
    fn fixed<const N: usize>(
        &mut self,
        id: u8,
        flags: u8,
        fields: [u8; N],
        a: &[u8],
        b: &[u8],
    ) -> Result<(), EmitError> {
        let body_len = N + a.len() + b.len();
        let (padded, octets) = self.room(body_len)?;
        let [lo, hi] = octets.to_le_bytes();
        self.w.put(&[id, flags | FLAG_LITTLE, lo, hi])?;
        self.w.put(&fields)?;
        self.w.put(a)?;
        self.w.put(b)?;
        self.w.put(&[0u8; 3][..(padded - body_len).min(3)])
    }

    /// A body of `body_len` bytes padded to 4, and its octetsToNextHeader, when the
    /// submessage fits (its header included); otherwise why not, with nothing written.
    fn room(&self, body_len: usize) -> Result<(usize, u16), EmitError> {
        let padded = body_len.div_ceil(4) * 4;
        let octets = u16::try_from(padded).map_err(|_| EmitError::BufferTooSmall {
            needed: padded,
            available: usize::from(u16::MAX),
        })?;
        let needed = 4 + padded;
        if needed > self.w.remaining() {
            return Err(EmitError::BufferTooSmall {
                needed: self.w.pos() + needed,
                available: self.w.pos() + self.w.remaining(),
            });
        }
        Ok((padded, octets))
    }

    /// Writes one submessage of `body_len` bytes (padded to 4) or nothing at all.
    fn submessage(
        &mut self,
        id: u8,
        flags: u8,
        body_len: usize,
        body: impl FnOnce(&mut Writer<'_>) -> Result<(), EmitError>,
    ) -> Result<(), EmitError> {
        let (padded, octets) = self.room(body_len)?;
        let start = self.w.pos();
        self.w.u8(id)?;
        self.w.u8(flags | FLAG_LITTLE)?;
        self.w.u16(octets)?;
        body(&mut self.w)?;
        let written = self.w.pos() - start - 4;
        self.w
            .put(&[0u8; 3][..padded.saturating_sub(written).min(3)])
    }
}

/// Copies `bytes` into `f` at `at` (fixed offsets within a fixed-size array: the bounds are
/// known when it is inlined).
#[inline(always)]
fn put_le(f: &mut [u8], at: usize, bytes: &[u8]) {
    if let Some(dst) = f.get_mut(at..at + bytes.len()) {
        dst.copy_from_slice(bytes);
    }
}

/// A sequence number as RTPS lays it out (high, then low), little endian, at `at`.
#[inline(always)]
fn put_sn(f: &mut [u8], at: usize, sn: SequenceNumber) {
    put_le(f, at, &sn.high().to_le_bytes());
    put_le(f, at + 4, &sn.low().to_le_bytes());
}

/// Builds the inline QoS of a DATA (key hash, status info, coherent-set parameters) on the
/// stack.
#[derive(Clone, Copy, Debug)]
pub struct InlineQos {
    buf: [u8; InlineQos::CAPACITY],
    len: usize,
}

impl InlineQos {
    /// The most bytes an inline QoS list holds (sentinel included): key hash, status info,
    /// PID_COHERENT_SET, PID_GROUP_COHERENT_SET, PID_GROUP_SEQ_NUM and a 40-byte
    /// vendor-specific parameter fit.
    pub const CAPACITY: usize = 128;
    /// PID_KEY_HASH.
    const PID_KEY_HASH: u16 = 0x0070;
    /// PID_STATUS_INFO.
    const PID_STATUS_INFO: u16 = 0x0071;
    /// Status info flag: the instance was disposed.
    pub const DISPOSED: u32 = 0x1;
    /// Status info flag: the instance was unregistered.
    pub const UNREGISTERED: u32 = 0x2;

    /// A little-endian parameter list with the key hash and/or status info present, then the
    /// sentinel. (PID_STATUS_INFO's value is big-endian bytes, as the spec defines it.)
    pub fn new(key_hash: Option<[u8; 16]>, status_info: Option<u32>) -> InlineQos {
        let mut q = InlineQos::open(key_hash, status_info);
        q.close();
        q
    }

    /// As [`new`](Self::new) without the sentinel: add parameters with
    /// [`sequence_number`](Self::sequence_number) and [`raw`](Self::raw), then
    /// [`close`](Self::close) the list.
    pub fn open(key_hash: Option<[u8; 16]>, status_info: Option<u32>) -> InlineQos {
        let mut q = InlineQos {
            buf: [0; InlineQos::CAPACITY],
            len: 0,
        };
        if let Some(kh) = key_hash {
            q.param(Self::PID_KEY_HASH, &kh);
        }
        if let Some(s) = status_info {
            q.param(Self::PID_STATUS_INFO, &s.to_be_bytes());
        }
        q
    }

    /// Appends a SequenceNumber_t parameter (high, then low, little-endian), such as
    /// PID_COHERENT_SET.
    pub fn sequence_number(&mut self, pid: u16, sn: crate::SequenceNumber) {
        let mut v = [0u8; 8];
        v[..4].copy_from_slice(&((sn.0 >> 32) as i32).to_le_bytes());
        v[4..].copy_from_slice(&(sn.0 as u32).to_le_bytes());
        self.param(pid, &v);
    }

    /// Appends a parameter whose value is already encoded (little-endian, length a multiple
    /// of 4). Dropped if the list has no room left for it and the sentinel.
    pub fn raw(&mut self, pid: u16, value: &[u8]) {
        if self.len + 4 + value.len() + 4 <= InlineQos::CAPACITY {
            self.param(pid, value);
        }
    }

    /// Ends the list with the sentinel.
    pub fn close(&mut self) {
        self.param(0x0001, &[]);
    }

    fn param(&mut self, pid: u16, value: &[u8]) {
        let at = self.len;
        let end = at + 4 + value.len();
        if let Some(dst) = self.buf.get_mut(at..end) {
            dst[..2].copy_from_slice(&pid.to_le_bytes());
            dst[2..4].copy_from_slice(&(value.len() as u16).to_le_bytes());
            dst[4..].copy_from_slice(value);
            self.len = end;
        }
    }

    /// The encoded parameter list.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}
