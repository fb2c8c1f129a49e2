//! Submessages: the generic header/framing ([`RawSubmessage`]), the typed zero-copy views
//! ([`SubmessageView`]) and the parsed form ([`Submessage`]) that re-emits byte for byte.
//!
//! Every submessage carries its own byte order in its E flag. Bytes after the fields a kind
//! defines (up to octetsToNextHeader) are kept as `trailing`, flag bits this crate does not
//! interpret as `unknown_flags`, and octetsToNextHeader == 0 as `extends_to_end`.

mod acknack;
mod data;
mod data_frag;
mod gap;
mod heartbeat;
mod heartbeat_frag;
mod info_dst;
mod info_reply;
mod info_reply_ip4;
mod info_src;
mod info_ts;
mod nack_frag;
mod pad;
mod unknown;

pub use acknack::{AckNack, AckNackView};
pub use data::{Data, DataPayload, DataView};
pub use data_frag::{DataFrag, DataFragView};
pub use gap::{Gap, GapGroupInfo, GapView};
pub use heartbeat::{Heartbeat, HeartbeatGroupInfo, HeartbeatView};
pub use heartbeat_frag::{HeartbeatFrag, HeartbeatFragView};
pub use info_dst::{InfoDst, InfoDstView};
pub use info_reply::{InfoReply, InfoReplyView};
pub use info_reply_ip4::{InfoReplyIp4, InfoReplyIp4View};
pub use info_src::{InfoSrc, InfoSrcView};
pub use info_ts::{InfoTs, InfoTsView};
pub use nack_frag::{NackFrag, NackFragView};
pub use pad::{Pad, PadView};
pub use unknown::Unknown;

use crate::bytes::{Endian, Writer};
use crate::error::{EmitError, WireError};

/// Submessage ids (RTPS 2.5 table 9.5) and their names.
pub mod id {
    /// PAD.
    pub const PAD: u8 = 0x01;
    /// ACKNACK.
    pub const ACKNACK: u8 = 0x06;
    /// HEARTBEAT.
    pub const HEARTBEAT: u8 = 0x07;
    /// GAP.
    pub const GAP: u8 = 0x08;
    /// INFO_TS.
    pub const INFO_TS: u8 = 0x09;
    /// INFO_SRC.
    pub const INFO_SRC: u8 = 0x0c;
    /// INFO_REPLY_IP4.
    pub const INFO_REPLY_IP4: u8 = 0x0d;
    /// INFO_DST.
    pub const INFO_DST: u8 = 0x0e;
    /// INFO_REPLY.
    pub const INFO_REPLY: u8 = 0x0f;
    /// NACK_FRAG.
    pub const NACK_FRAG: u8 = 0x12;
    /// HEARTBEAT_FRAG.
    pub const HEARTBEAT_FRAG: u8 = 0x13;
    /// DATA.
    pub const DATA: u8 = 0x15;
    /// DATA_FRAG.
    pub const DATA_FRAG: u8 = 0x16;

    /// The submessage's spec name; `VENDOR` for 0x80..=0xff, `UNKNOWN` otherwise.
    pub fn name(id: u8) -> &'static str {
        match id {
            PAD => "PAD",
            ACKNACK => "ACKNACK",
            HEARTBEAT => "HEARTBEAT",
            GAP => "GAP",
            INFO_TS => "INFO_TS",
            INFO_SRC => "INFO_SRC",
            INFO_REPLY_IP4 => "INFO_REPLY_IP4",
            INFO_DST => "INFO_DST",
            INFO_REPLY => "INFO_REPLY",
            NACK_FRAG => "NACK_FRAG",
            HEARTBEAT_FRAG => "HEARTBEAT_FRAG",
            DATA => "DATA",
            DATA_FRAG => "DATA_FRAG",
            0x80..=0xff => "VENDOR",
            _ => "UNKNOWN",
        }
    }
}

/// Length of a submessage header (id, flags, octetsToNextHeader).
pub const SUBMESSAGE_HEADER_LEN: usize = 4;

/// One submessage as framed by its header, body borrowed and not yet interpreted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawSubmessage<'a> {
    /// Submessage id.
    pub id: u8,
    /// All flag bits, E flag included.
    pub flags: u8,
    /// The octetsToNextHeader field as sent.
    pub octets_to_next_header: u16,
    /// The body: octetsToNextHeader bytes, or the rest of the message when it is 0.
    pub body: &'a [u8],
    /// Offset of the submessage header in the message (for error messages).
    pub offset: usize,
}

impl<'a> RawSubmessage<'a> {
    /// Frames the submessage whose header starts at `offset` in `msg`; returns it and the
    /// offset of the next one.
    ///
    /// octetsToNextHeader == 0 means "up to the end of the message", except for PAD and
    /// INFO_TS where it is a real length of zero (RTPS 2.5, 9.4.5.1.3).
    #[inline]
    pub fn parse_at(msg: &'a [u8], offset: usize) -> Result<(Self, usize), WireError> {
        Self::frame_at(msg, offset).ok_or_else(|| frame_error(msg, offset))
    }

    /// [`Self::parse_at`] without the error: the hot path of iteration.
    ///
    /// An `Option` of plain fields stays in registers where a `Result` carrying a
    /// [`WireError`] is spilled to the stack and reloaded.
    #[inline]
    pub(crate) fn frame_at(msg: &'a [u8], offset: usize) -> Option<(Self, usize)> {
        let (&[sid, flags, a, b], body_all) = msg.get(offset..)?.split_first_chunk::<4>()?;
        let octets = match Endian::from_flags(flags) {
            Endian::Little => u16::from_le_bytes([a, b]),
            Endian::Big => u16::from_be_bytes([a, b]),
        };
        let body = if octets == 0 && !zero_is_length(sid) {
            body_all
        } else {
            body_all.get(..usize::from(octets))?
        };
        let raw = RawSubmessage {
            id: sid,
            flags,
            octets_to_next_header: octets,
            body,
            offset,
        };
        let next = offset
            .saturating_add(SUBMESSAGE_HEADER_LEN)
            .saturating_add(body.len());
        Some((raw, next))
    }

    /// The byte order selected by the E flag.
    #[inline]
    pub fn endian(&self) -> Endian {
        Endian::from_flags(self.flags)
    }

    /// Offset of the body in the message.
    #[inline]
    pub fn body_offset(&self) -> usize {
        self.offset.saturating_add(SUBMESSAGE_HEADER_LEN)
    }

    /// Whether octetsToNextHeader was 0 with the meaning "extends to the end of the message".
    #[inline]
    pub fn extends_to_end(&self) -> bool {
        self.octets_to_next_header == 0 && !zero_is_length(self.id)
    }
}

/// Why [`RawSubmessage::frame_at`] rejected the submessage at `offset` (the cold path).
#[cold]
#[inline(never)]
pub(crate) fn frame_error(msg: &[u8], offset: usize) -> WireError {
    let rest = msg.get(offset..).unwrap_or_default();
    match rest.split_first_chunk::<4>() {
        Some((&[sid, flags, a, b], body_all)) => {
            let octets = match Endian::from_flags(flags) {
                Endian::Little => u16::from_le_bytes([a, b]),
                Endian::Big => u16::from_be_bytes([a, b]),
            };
            WireError::BadSubmessageLength {
                id: sid,
                offset,
                octets,
                available: body_all.len(),
            }
        }
        None => WireError::Truncated {
            what: "submessage header",
            offset,
            needed: SUBMESSAGE_HEADER_LEN,
            available: rest.len(),
        },
    }
}

/// PAD and INFO_TS treat octetsToNextHeader == 0 as an empty body.
#[inline]
fn zero_is_length(sid: u8) -> bool {
    sid == id::PAD || sid == id::INFO_TS
}

/// A typed, checked, zero-copy view of one submessage.
#[derive(Clone, Copy, Debug)]
pub enum SubmessageView<'a> {
    /// DATA.
    Data(DataView<'a>),
    /// DATA_FRAG.
    DataFrag(DataFragView<'a>),
    /// HEARTBEAT.
    Heartbeat(HeartbeatView<'a>),
    /// HEARTBEAT_FRAG.
    HeartbeatFrag(HeartbeatFragView<'a>),
    /// ACKNACK.
    AckNack(AckNackView<'a>),
    /// NACK_FRAG.
    NackFrag(NackFragView<'a>),
    /// GAP.
    Gap(GapView<'a>),
    /// INFO_TS.
    InfoTs(InfoTsView<'a>),
    /// INFO_SRC.
    InfoSrc(InfoSrcView<'a>),
    /// INFO_DST.
    InfoDst(InfoDstView<'a>),
    /// INFO_REPLY.
    InfoReply(InfoReplyView<'a>),
    /// INFO_REPLY_IP4.
    InfoReplyIp4(InfoReplyIp4View<'a>),
    /// PAD.
    Pad(PadView<'a>),
    /// Any other id (including vendor-specific 0x80..=0xff): skipped, kept as bytes.
    Unknown(RawSubmessage<'a>),
}

impl<'a> SubmessageView<'a> {
    /// Checks the body of a framed submessage according to its id.
    #[inline]
    pub fn new_checked(raw: RawSubmessage<'a>) -> Result<Self, WireError> {
        Ok(match raw.id {
            id::DATA => Self::Data(DataView::new_checked(raw)?),
            id::DATA_FRAG => Self::DataFrag(DataFragView::new_checked(raw)?),
            id::HEARTBEAT => Self::Heartbeat(HeartbeatView::new_checked(raw)?),
            id::HEARTBEAT_FRAG => Self::HeartbeatFrag(HeartbeatFragView::new_checked(raw)?),
            id::ACKNACK => Self::AckNack(AckNackView::new_checked(raw)?),
            id::NACK_FRAG => Self::NackFrag(NackFragView::new_checked(raw)?),
            id::GAP => Self::Gap(GapView::new_checked(raw)?),
            id::INFO_TS => Self::InfoTs(InfoTsView::new_checked(raw)?),
            id::INFO_SRC => Self::InfoSrc(InfoSrcView::new_checked(raw)?),
            id::INFO_DST => Self::InfoDst(InfoDstView::new_checked(raw)?),
            id::INFO_REPLY => Self::InfoReply(InfoReplyView::new_checked(raw)?),
            id::INFO_REPLY_IP4 => Self::InfoReplyIp4(InfoReplyIp4View::new_checked(raw)?),
            id::PAD => Self::Pad(PadView::new_checked(raw)?),
            _ => Self::Unknown(raw),
        })
    }

    /// The framing of this submessage.
    #[inline]
    pub fn raw(&self) -> RawSubmessage<'a> {
        match self {
            Self::Data(v) => v.raw(),
            Self::DataFrag(v) => v.raw(),
            Self::Heartbeat(v) => v.raw(),
            Self::HeartbeatFrag(v) => v.raw(),
            Self::AckNack(v) => v.raw(),
            Self::NackFrag(v) => v.raw(),
            Self::Gap(v) => v.raw(),
            Self::InfoTs(v) => v.raw(),
            Self::InfoSrc(v) => v.raw(),
            Self::InfoDst(v) => v.raw(),
            Self::InfoReply(v) => v.raw(),
            Self::InfoReplyIp4(v) => v.raw(),
            Self::Pad(v) => v.raw(),
            Self::Unknown(raw) => *raw,
        }
    }

    /// Body bytes after the fields this kind defines (kept for re-emission).
    #[inline]
    pub fn trailing(&self) -> &'a [u8] {
        match self {
            Self::Data(v) => v.trailing(),
            Self::DataFrag(v) => v.trailing(),
            Self::Heartbeat(v) => v.trailing(),
            Self::HeartbeatFrag(v) => v.trailing(),
            Self::AckNack(v) => v.trailing(),
            Self::NackFrag(v) => v.trailing(),
            Self::Gap(v) => v.trailing(),
            Self::InfoTs(v) => v.trailing(),
            Self::InfoSrc(v) => v.trailing(),
            Self::InfoDst(v) => v.trailing(),
            Self::InfoReply(v) => v.trailing(),
            Self::InfoReplyIp4(v) => v.trailing(),
            Self::Pad(v) => v.trailing(),
            Self::Unknown(raw) => raw.body,
        }
    }
}

/// What every parsed submessage kind provides to the generic emitter.
pub(crate) trait BodyRepr {
    /// Flag bits (E excluded) implied by the fields, e.g. Q when inline QoS is present.
    fn flag_bits(&self) -> u8;
    /// Bytes of the fields, without trailing bytes.
    fn body_len(&self) -> usize;
    /// Writes the fields in the writer's byte order.
    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), EmitError>;
}

/// Evaluates `$e` with `$b` bound to the [`BodyRepr`] of `$body`, statically dispatched
/// (a `&dyn BodyRepr` would force the body through memory and an indirect call).
macro_rules! with_repr {
    ($body:expr, $b:ident => $e:expr) => {
        match $body {
            SubmessageBody::Data($b) => $e,
            SubmessageBody::DataFrag($b) => $e,
            SubmessageBody::Heartbeat($b) => $e,
            SubmessageBody::HeartbeatFrag($b) => $e,
            SubmessageBody::AckNack($b) => $e,
            SubmessageBody::NackFrag($b) => $e,
            SubmessageBody::Gap($b) => $e,
            SubmessageBody::InfoTs($b) => $e,
            SubmessageBody::InfoSrc($b) => $e,
            SubmessageBody::InfoDst($b) => $e,
            SubmessageBody::InfoReply($b) => $e,
            SubmessageBody::InfoReplyIp4($b) => $e,
            SubmessageBody::Pad($b) => $e,
            SubmessageBody::Unknown($b) => $e,
        }
    };
}

/// The fields of a parsed submessage, by kind.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SubmessageBody {
    /// DATA.
    Data(Data),
    /// DATA_FRAG.
    DataFrag(DataFrag),
    /// HEARTBEAT.
    Heartbeat(Heartbeat),
    /// HEARTBEAT_FRAG.
    HeartbeatFrag(HeartbeatFrag),
    /// ACKNACK.
    AckNack(AckNack),
    /// NACK_FRAG.
    NackFrag(NackFrag),
    /// GAP.
    Gap(Gap),
    /// INFO_TS.
    InfoTs(InfoTs),
    /// INFO_SRC.
    InfoSrc(InfoSrc),
    /// INFO_DST.
    InfoDst(InfoDst),
    /// INFO_REPLY.
    InfoReply(InfoReply),
    /// INFO_REPLY_IP4.
    InfoReplyIp4(InfoReplyIp4),
    /// PAD.
    Pad(Pad),
    /// Unknown or vendor-specific: its body is entirely in [`Submessage::trailing`].
    Unknown(Unknown),
}

impl SubmessageBody {
    /// The submessage id.
    pub fn id(&self) -> u8 {
        match self {
            Self::Data(_) => id::DATA,
            Self::DataFrag(_) => id::DATA_FRAG,
            Self::Heartbeat(_) => id::HEARTBEAT,
            Self::HeartbeatFrag(_) => id::HEARTBEAT_FRAG,
            Self::AckNack(_) => id::ACKNACK,
            Self::NackFrag(_) => id::NACK_FRAG,
            Self::Gap(_) => id::GAP,
            Self::InfoTs(_) => id::INFO_TS,
            Self::InfoSrc(_) => id::INFO_SRC,
            Self::InfoDst(_) => id::INFO_DST,
            Self::InfoReply(_) => id::INFO_REPLY,
            Self::InfoReplyIp4(_) => id::INFO_REPLY_IP4,
            Self::Pad(_) => id::PAD,
            Self::Unknown(u) => u.id,
        }
    }

    /// Flag bits (E excluded) this crate derives from the fields for this kind.
    pub fn flag_bits(&self) -> u8 {
        with_repr!(self, b => b.flag_bits())
    }

    /// Every flag bit (E excluded) this crate interprets for submessage `sid`.
    pub fn known_flags(sid: u8) -> u8 {
        match sid {
            id::DATA => 0x1e,
            id::DATA_FRAG => 0x0e,
            id::HEARTBEAT => 0x0e,
            id::ACKNACK | id::GAP | id::INFO_TS | id::INFO_REPLY | id::INFO_REPLY_IP4 => 0x02,
            _ => 0x00,
        }
    }
}

/// A parsed submessage that re-emits exactly as received.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Submessage {
    /// Byte order (E flag).
    pub endian: Endian,
    /// Flag bits not implied by `body`, re-emitted unchanged (never includes E).
    pub unknown_flags: u8,
    /// The parsed fields.
    pub body: SubmessageBody,
    /// Body bytes after the parsed fields (all of the body for unknown kinds).
    ///
    /// Must be empty for DATA with a payload and for DATA_FRAG: their payload runs to the end.
    pub trailing: Vec<u8>,
    /// octetsToNextHeader is written as 0: the submessage runs to the end of the message.
    /// Only valid on the last submessage, and ignored for PAD and INFO_TS. An empty body of
    /// any other kind is always written this way (0 is the only length that expresses it).
    pub extends_to_end: bool,
}

impl Submessage {
    /// A little-endian submessage with no extra flags or bytes.
    pub fn new(body: SubmessageBody) -> Self {
        Submessage {
            endian: Endian::Little,
            unknown_flags: 0,
            body,
            trailing: Vec::new(),
            extends_to_end: false,
        }
    }

    /// Parses a checked view.
    #[inline]
    pub fn parse(view: &SubmessageView<'_>) -> Self {
        use SubmessageBody as B;
        use SubmessageView as V;
        let raw = view.raw();
        match view {
            V::Data(v) => Self::assemble(raw, Data::parse(v), B::Data, v.trailing()),
            V::DataFrag(v) => Self::assemble(raw, DataFrag::parse(v), B::DataFrag, v.trailing()),
            V::Heartbeat(v) => Self::assemble(raw, Heartbeat::parse(v), B::Heartbeat, v.trailing()),
            V::HeartbeatFrag(v) => {
                Self::assemble(raw, HeartbeatFrag::parse(v), B::HeartbeatFrag, v.trailing())
            }
            V::AckNack(v) => Self::assemble(raw, AckNack::parse(v), B::AckNack, v.trailing()),
            V::NackFrag(v) => Self::assemble(raw, NackFrag::parse(v), B::NackFrag, v.trailing()),
            V::Gap(v) => Self::assemble(raw, Gap::parse(v), B::Gap, v.trailing()),
            V::InfoTs(v) => Self::assemble(raw, InfoTs::parse(v), B::InfoTs, v.trailing()),
            V::InfoSrc(v) => Self::assemble(raw, InfoSrc::parse(v), B::InfoSrc, v.trailing()),
            V::InfoDst(v) => Self::assemble(raw, InfoDst::parse(v), B::InfoDst, v.trailing()),
            V::InfoReply(v) => Self::assemble(raw, InfoReply::parse(v), B::InfoReply, v.trailing()),
            V::InfoReplyIp4(v) => {
                Self::assemble(raw, InfoReplyIp4::parse(v), B::InfoReplyIp4, v.trailing())
            }
            V::Pad(v) => Self::assemble(raw, Pad, B::Pad, v.trailing()),
            V::Unknown(raw) => Self::assemble(*raw, Unknown { id: raw.id }, B::Unknown, raw.body),
        }
    }

    /// Wraps a parsed body; its flag bits are taken while it is still a concrete type, so the
    /// body is built once, in place, rather than in a temporary that is matched and copied.
    #[inline(always)]
    fn assemble<T: BodyRepr>(
        raw: RawSubmessage<'_>,
        body: T,
        wrap: fn(T) -> SubmessageBody,
        trailing: &[u8],
    ) -> Self {
        let implied = 0x01 | body.flag_bits();
        Submessage {
            endian: raw.endian(),
            unknown_flags: raw.flags & !implied,
            body: wrap(body),
            trailing: crate::bytes::to_vec(trailing),
            extends_to_end: raw.extends_to_end(),
        }
    }

    /// The submessage id.
    pub fn id(&self) -> u8 {
        self.body.id()
    }

    /// The flags byte as emitted.
    pub fn flags(&self) -> u8 {
        self.endian.flag() | self.body.flag_bits() | (self.unknown_flags & !0x01)
    }

    /// Body length as emitted (fields plus trailing bytes).
    pub fn body_len(&self) -> usize {
        with_repr!(&self.body, b => b.body_len()).saturating_add(self.trailing.len())
    }

    /// Bytes `emit` writes.
    pub fn buffer_len(&self) -> usize {
        self.body_len().saturating_add(SUBMESSAGE_HEADER_LEN)
    }

    /// Whether octetsToNextHeader is written as 0 with the meaning "to the end of the
    /// message": `extends_to_end` is set, or the body is empty (which a receiver cannot tell
    /// apart) — except for PAD and INFO_TS, where 0 is a real length.
    pub(crate) fn writes_zero_length(&self) -> bool {
        !zero_is_length(self.id()) && (self.extends_to_end || self.body_len() == 0)
    }

    /// Writes the submessage; returns the bytes written ([`Self::buffer_len`]).
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, EmitError> {
        let body_len = self.body_len();
        let octets = if self.writes_zero_length() {
            0
        } else {
            u16::try_from(body_len).map_err(|_| EmitError::SubmessageTooLong {
                id: self.id(),
                length: body_len,
            })?
        };
        let mut w = Writer::new(buf, self.endian);
        w.u8(self.id())?;
        w.u8(self.flags())?;
        w.u16(octets)?;
        with_repr!(&self.body, b => b.emit_body(&mut w))?;
        w.put(&self.trailing)?;
        Ok(w.pos())
    }
}
