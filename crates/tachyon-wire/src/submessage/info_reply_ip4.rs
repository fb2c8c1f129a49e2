//! INFO_REPLY_IP4 (0x0d): the compact IPv4 form of INFO_REPLY.

use super::{BodyRepr, RawSubmessage};
use crate::bytes::{field, Reader, Writer};
use crate::error::{EmitError, WireError};
use crate::types::LocatorUdpV4;

/// M flag: a multicast locator follows the unicast one.
pub const FLAG_MULTICAST: u8 = 0x02;

/// A checked, zero-copy view of an INFO_REPLY_IP4 submessage.
#[derive(Clone, Copy, Debug)]
pub struct InfoReplyIp4View<'a> {
    raw: RawSubmessage<'a>,
}

impl<'a> InfoReplyIp4View<'a> {
    /// Checks the body length.
    #[inline]
    pub fn new_checked(raw: RawSubmessage<'a>) -> Result<Self, WireError> {
        let v = InfoReplyIp4View { raw };
        Reader::new(raw.body, raw.body_offset(), "INFO_REPLY_IP4", raw.endian())
            .skip(v.parsed_len())?;
        Ok(v)
    }

    /// The framing.
    #[inline]
    pub fn raw(&self) -> RawSubmessage<'a> {
        self.raw
    }

    #[inline]
    fn parsed_len(&self) -> usize {
        if self.raw.flags & FLAG_MULTICAST != 0 {
            16
        } else {
            8
        }
    }

    /// The unicast reply locator.
    #[inline]
    pub fn unicast_locator(&self) -> LocatorUdpV4 {
        field(self.raw.body, 0, self.raw.endian())
    }

    /// The multicast reply locator (M flag).
    #[inline]
    pub fn multicast_locator(&self) -> Option<LocatorUdpV4> {
        (self.raw.flags & FLAG_MULTICAST != 0).then(|| field(self.raw.body, 8, self.raw.endian()))
    }

    /// Body bytes after the parsed fields.
    #[inline]
    pub fn trailing(&self) -> &'a [u8] {
        self.raw.body.get(self.parsed_len()..).unwrap_or_default()
    }
}

/// A parsed INFO_REPLY_IP4 submessage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct InfoReplyIp4 {
    /// Unicast reply locator.
    pub unicast_locator: LocatorUdpV4,
    /// Multicast reply locator (M flag).
    pub multicast_locator: Option<LocatorUdpV4>,
}

impl InfoReplyIp4 {
    /// Parses a checked view.
    #[inline]
    pub fn parse(v: &InfoReplyIp4View<'_>) -> Self {
        InfoReplyIp4 {
            unicast_locator: v.unicast_locator(),
            multicast_locator: v.multicast_locator(),
        }
    }
}

impl BodyRepr for InfoReplyIp4 {
    fn flag_bits(&self) -> u8 {
        if self.multicast_locator.is_some() {
            FLAG_MULTICAST
        } else {
            0
        }
    }

    fn body_len(&self) -> usize {
        if self.multicast_locator.is_some() {
            16
        } else {
            8
        }
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.encode(&self.unicast_locator)?;
        match &self.multicast_locator {
            Some(m) => w.encode(m),
            None => Ok(()),
        }
    }
}
