//! Whole RTPS messages: a header followed by submessages, as a view and as a parsed form.

use crate::error::{EmitError, WireError};
use crate::header::{Header, HeaderView, HEADER_LEN};
use crate::submessage::{frame_error, RawSubmessage, Submessage, SubmessageView};

/// A checked, zero-copy view of an RTPS message.
///
/// `new_checked` validates the header and the framing of every submessage (their
/// octetsToNextHeader), not their bodies: [`MessageView::submessages`] yields each body's
/// typed view or the error that made it invalid, which per the spec ends processing of the
/// message at that point.
#[derive(Clone, Copy, Debug)]
pub struct MessageView<'a> {
    buf: &'a [u8],
    header: HeaderView<'a>,
}

impl<'a> MessageView<'a> {
    /// Checks the header and the framing of every submessage.
    #[inline]
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, WireError> {
        let header = HeaderView::new_checked(buf)?;
        let mut off = HEADER_LEN;
        while off < buf.len() {
            match RawSubmessage::frame_at(buf, off) {
                Some((_, next)) => off = next,
                None => return Err(frame_error(buf, off)),
            }
        }
        Ok(MessageView { buf, header })
    }

    /// The header.
    #[inline]
    pub fn header(&self) -> HeaderView<'a> {
        self.header
    }

    /// The submessages' framing, in order, bodies not interpreted.
    #[inline]
    pub fn raw_submessages(&self) -> RawSubmessages<'a> {
        RawSubmessages {
            buf: self.buf,
            off: HEADER_LEN,
        }
    }

    /// The submessages as typed views, in order; an item is `Err` if its body is malformed.
    #[inline]
    pub fn submessages(&self) -> impl Iterator<Item = Result<SubmessageView<'a>, WireError>> + 'a {
        Submessages {
            buf: self.buf,
            off: HEADER_LEN,
        }
    }

    /// The message bytes.
    #[inline]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.buf
    }
}

/// Iterator over the framing of the submessages of a checked message.
#[derive(Clone, Debug)]
pub struct RawSubmessages<'a> {
    buf: &'a [u8],
    off: usize,
}

impl<'a> Iterator for RawSubmessages<'a> {
    type Item = RawSubmessage<'a>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.off >= self.buf.len() {
            return None;
        }
        match RawSubmessage::frame_at(self.buf, self.off) {
            Some((raw, next)) => {
                self.off = next;
                Some(raw)
            }
            None => {
                self.off = self.buf.len();
                None
            }
        }
    }
}

/// Iterator over the typed submessage views of a checked message.
///
/// Frames and checks each submessage in one step (rather than mapping [`RawSubmessages`]), so
/// the framing stays in registers instead of round-tripping through an `Option` on the stack.
#[derive(Clone, Debug)]
struct Submessages<'a> {
    buf: &'a [u8],
    off: usize,
}

impl<'a> Iterator for Submessages<'a> {
    type Item = Result<SubmessageView<'a>, WireError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.off >= self.buf.len() {
            return None;
        }
        match RawSubmessage::frame_at(self.buf, self.off) {
            Some((raw, next)) => {
                self.off = next;
                Some(SubmessageView::new_checked(raw))
            }
            None => {
                self.off = self.buf.len();
                None
            }
        }
    }
}

/// A parsed RTPS message that re-emits byte for byte.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Message {
    /// The header.
    pub header: Header,
    /// The submessages in order.
    pub submessages: Vec<Submessage>,
}

impl Message {
    /// Parses and validates a whole message, every submessage body included.
    pub fn parse(buf: &[u8]) -> Result<Self, WireError> {
        Self::from_view(&MessageView::new_checked(buf)?)
    }

    /// Parses every submessage of a checked view.
    pub fn from_view(view: &MessageView<'_>) -> Result<Self, WireError> {
        // One cheap framing pass sizes the vector exactly: no regrowth, no moves.
        let mut submessages = Vec::with_capacity(view.raw_submessages().count());
        for sub in view.submessages() {
            submessages.push(Submessage::parse(&sub?));
        }
        Ok(Message {
            header: Header::parse(&view.header()),
            submessages,
        })
    }

    /// Bytes `emit` writes.
    pub fn buffer_len(&self) -> usize {
        self.submessages
            .iter()
            .fold(HEADER_LEN, |n, s| n.saturating_add(s.buffer_len()))
    }

    /// Writes the message; returns the bytes written ([`Self::buffer_len`]).
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, EmitError> {
        let needed = self.buffer_len();
        let available = buf.len();
        let too_small = EmitError::BufferTooSmall { needed, available };
        let buf = buf.get_mut(..needed).ok_or(too_small.clone())?;
        let last = self.submessages.len().saturating_sub(1);
        let mut off = self.header.emit(buf)?;
        for (index, s) in self.submessages.iter().enumerate() {
            if index != last && s.writes_zero_length() {
                return Err(EmitError::ExtendsToEndNotLast { index });
            }
            let dst = buf.get_mut(off..).ok_or(too_small.clone())?;
            off = off.saturating_add(s.emit(dst)?);
        }
        Ok(off)
    }

    /// Emits into a new vector of exactly [`Self::buffer_len`] bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>, EmitError> {
        let mut v = vec![0u8; self.buffer_len()];
        let n = self.emit(&mut v)?;
        v.truncate(n);
        Ok(v)
    }
}
