//! INFO_REPLY (0x0f): where to send replies to the submessages that follow.

use super::data::U32;
use super::{BodyRepr, RawSubmessage};
use crate::bytes::{field, Endian, Reader, Writer};
use crate::error::{EmitError, WireError};
use crate::types::Locator;

/// M flag: a multicast locator list follows the unicast one.
pub const FLAG_MULTICAST: u8 = 0x02;

/// A checked, zero-copy view of an INFO_REPLY submessage.
#[derive(Clone, Copy, Debug)]
pub struct InfoReplyView<'a> {
    raw: RawSubmessage<'a>,
    /// Offset of the multicast list (end of the unicast list).
    multicast_off: usize,
    end: usize,
}

/// Checks a locator list at the reader's position; returns its end.
fn check_list(r: &mut Reader<'_>) -> Result<usize, WireError> {
    let n = r.u32()? as usize;
    let bytes = n.saturating_mul(Locator::WIRE_LEN);
    if bytes > r.remaining() {
        return Err(r.truncated(bytes));
    }
    r.skip(bytes)?;
    Ok(r.pos())
}

impl<'a> InfoReplyView<'a> {
    /// Checks both locator lists against the body length.
    #[inline]
    pub fn new_checked(raw: RawSubmessage<'a>) -> Result<Self, WireError> {
        let mut r = Reader::new(raw.body, raw.body_offset(), "INFO_REPLY", raw.endian());
        let multicast_off = check_list(&mut r)?;
        let end = if raw.flags & FLAG_MULTICAST != 0 {
            check_list(&mut r)?
        } else {
            multicast_off
        };
        Ok(InfoReplyView {
            raw,
            multicast_off,
            end,
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

    #[inline]
    fn list(&self, off: usize) -> impl Iterator<Item = Locator> + 'a {
        let e = self.e();
        let n = field::<U32>(self.raw.body, off, e).0 as usize;
        let start = off.saturating_add(4);
        let end = start.saturating_add(n.saturating_mul(Locator::WIRE_LEN));
        self.raw
            .body
            .get(start..end)
            .unwrap_or_default()
            .chunks_exact(Locator::WIRE_LEN)
            .map(move |c| field(c, 0, e))
    }

    /// The unicast reply locators.
    #[inline]
    pub fn unicast_locators(&self) -> impl Iterator<Item = Locator> + 'a {
        self.list(0)
    }

    /// The multicast reply locators, if the M flag is set.
    #[inline]
    pub fn multicast_locators(&self) -> Option<impl Iterator<Item = Locator> + 'a> {
        (self.raw.flags & FLAG_MULTICAST != 0).then(|| self.list(self.multicast_off))
    }

    /// Body bytes after the parsed fields.
    #[inline]
    pub fn trailing(&self) -> &'a [u8] {
        self.raw.body.get(self.end..).unwrap_or_default()
    }
}

/// A parsed INFO_REPLY submessage.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct InfoReply {
    /// Unicast reply locators.
    pub unicast_locators: Vec<Locator>,
    /// Multicast reply locators (M flag).
    pub multicast_locators: Option<Vec<Locator>>,
}

impl InfoReply {
    /// Parses a checked view.
    #[inline]
    pub fn parse(v: &InfoReplyView<'_>) -> Self {
        InfoReply {
            unicast_locators: v.unicast_locators().collect(),
            multicast_locators: v.multicast_locators().map(Iterator::collect),
        }
    }
}

fn emit_list(w: &mut Writer<'_>, list: &[Locator]) -> Result<(), EmitError> {
    w.u32(u32::try_from(list.len()).unwrap_or(u32::MAX))?;
    list.iter().try_for_each(|l| w.encode(l))
}

impl BodyRepr for InfoReply {
    fn flag_bits(&self) -> u8 {
        if self.multicast_locators.is_some() {
            FLAG_MULTICAST
        } else {
            0
        }
    }

    fn body_len(&self) -> usize {
        let list = |l: &[Locator]| 4usize.saturating_add(l.len().saturating_mul(Locator::WIRE_LEN));
        list(&self.unicast_locators)
            .saturating_add(self.multicast_locators.as_deref().map_or(0, list))
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        emit_list(w, &self.unicast_locators)?;
        match &self.multicast_locators {
            Some(m) => emit_list(w, m),
            None => Ok(()),
        }
    }
}
