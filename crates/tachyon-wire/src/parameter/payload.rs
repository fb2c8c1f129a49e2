//! Serialized payloads that carry a ParameterList (SPDP/SEDP): encapsulation header + list.

use super::{ParameterList, ParameterListView};
use crate::bytes::{Endian, Writer};
use crate::error::{EmitError, ParameterError};

/// Encapsulation identifiers of a serialized payload (first two bytes, big-endian).
pub mod encapsulation {
    /// Plain CDR, big endian.
    pub const CDR_BE: u16 = 0x0000;
    /// Plain CDR, little endian.
    pub const CDR_LE: u16 = 0x0001;
    /// Parameter list CDR, big endian (SPDP/SEDP).
    pub const PL_CDR_BE: u16 = 0x0002;
    /// Parameter list CDR, little endian (SPDP/SEDP).
    pub const PL_CDR_LE: u16 = 0x0003;
    /// XML.
    pub const XML: u16 = 0x0004;
    /// XCDR2 plain, big endian.
    pub const CDR2_BE: u16 = 0x0006;
    /// XCDR2 plain, little endian.
    pub const CDR2_LE: u16 = 0x0007;
    /// XCDR2 delimited, big endian.
    pub const D_CDR2_BE: u16 = 0x0008;
    /// XCDR2 delimited, little endian.
    pub const D_CDR2_LE: u16 = 0x0009;
    /// XCDR2 parameter list, big endian.
    pub const PL_CDR2_BE: u16 = 0x000a;
    /// XCDR2 parameter list, little endian.
    pub const PL_CDR2_LE: u16 = 0x000b;

    /// The identifier's spec name, `None` if unknown.
    pub fn name(id: u16) -> Option<&'static str> {
        Some(match id {
            CDR_BE => "CDR_BE",
            CDR_LE => "CDR_LE",
            PL_CDR_BE => "PL_CDR_BE",
            PL_CDR_LE => "PL_CDR_LE",
            XML => "XML",
            CDR2_BE => "CDR2_BE",
            CDR2_LE => "CDR2_LE",
            D_CDR2_BE => "D_CDR2_BE",
            D_CDR2_LE => "D_CDR2_LE",
            PL_CDR2_BE => "PL_CDR2_BE",
            PL_CDR2_LE => "PL_CDR2_LE",
            _ => return None,
        })
    }
}

/// The 4-byte encapsulation header that starts every serialized payload.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Encapsulation {
    /// Representation identifier (see [`encapsulation`]).
    pub kind: u16,
    /// Options; the low two bits count padding bytes at the end of the payload.
    pub options: [u8; 2],
}

impl Encapsulation {
    /// Reads the header at the start of a serialized payload.
    #[inline]
    pub fn parse(payload: &[u8]) -> Option<Self> {
        match payload {
            [a, b, c, d, ..] => Some(Encapsulation {
                kind: u16::from_be_bytes([*a, *b]),
                options: [*c, *d],
            }),
            _ => None,
        }
    }

    /// The parameter list byte order, if this is PL_CDR_BE / PL_CDR_LE.
    #[inline]
    pub fn parameter_list_endian(&self) -> Option<Endian> {
        match self.kind {
            encapsulation::PL_CDR_LE => Some(Endian::Little),
            encapsulation::PL_CDR_BE => Some(Endian::Big),
            _ => None,
        }
    }
}

/// A checked, zero-copy view of a PL_CDR serialized payload.
#[derive(Clone, Copy, Debug)]
pub struct ParameterListPayloadView<'a> {
    encapsulation: Encapsulation,
    list: ParameterListView<'a>,
    trailing: &'a [u8],
}

impl<'a> ParameterListPayloadView<'a> {
    /// Checks the encapsulation header and the parameter list.
    #[inline]
    pub fn parse(payload: &'a [u8]) -> Result<Self, ParameterError> {
        let encapsulation =
            Encapsulation::parse(payload).ok_or(ParameterError::NoEncapsulation {
                available: payload.len(),
            })?;
        let endian =
            encapsulation
                .parameter_list_endian()
                .ok_or(ParameterError::NotParameterList {
                    encapsulation: encapsulation.kind,
                })?;
        let body = payload.get(4..).unwrap_or_default();
        let list = ParameterListView::parse(body, endian).map_err(|e| shift(e, 4))?;
        Ok(ParameterListPayloadView {
            encapsulation,
            list,
            trailing: body.get(list.len()..).unwrap_or_default(),
        })
    }

    /// The encapsulation header.
    #[inline]
    pub fn encapsulation(&self) -> Encapsulation {
        self.encapsulation
    }

    /// The parameter list.
    #[inline]
    pub fn list(&self) -> ParameterListView<'a> {
        self.list
    }

    /// Bytes after the sentinel (padding announced by the options, or anything else).
    #[inline]
    pub fn trailing(&self) -> &'a [u8] {
        self.trailing
    }
}

/// Moves the offsets of a list error by `by` bytes (to make them payload-relative).
fn shift(e: ParameterError, by: usize) -> ParameterError {
    match e {
        ParameterError::Truncated {
            offset,
            needed,
            available,
        } => ParameterError::Truncated {
            offset: offset.saturating_add(by),
            needed,
            available,
        },
        ParameterError::MissingSentinel { offset } => ParameterError::MissingSentinel {
            offset: offset.saturating_add(by),
        },
        ParameterError::UnalignedLength {
            pid,
            length,
            offset,
        } => ParameterError::UnalignedLength {
            pid,
            length,
            offset: offset.saturating_add(by),
        },
        other => other,
    }
}

/// A parsed PL_CDR serialized payload (SPDP participant data, SEDP endpoint data).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ParameterListPayload {
    /// The encapsulation header; its kind selects the list's byte order.
    pub encapsulation: Encapsulation,
    /// The parameters.
    pub list: ParameterList,
    /// Bytes after the sentinel, kept for re-emission.
    pub trailing: Vec<u8>,
}

impl ParameterListPayload {
    /// Parses a serialized payload in one step.
    pub fn parse_bytes(payload: &[u8]) -> Result<Self, ParameterError> {
        Ok(Self::parse(&ParameterListPayloadView::parse(payload)?))
    }

    /// Parses a checked view.
    pub fn parse(view: &ParameterListPayloadView<'_>) -> Self {
        ParameterListPayload {
            encapsulation: view.encapsulation(),
            list: ParameterList::parse(&view.list()),
            trailing: crate::bytes::to_vec(view.trailing()),
        }
    }

    /// Byte order of the list (little endian unless the encapsulation says PL_CDR_BE).
    pub fn endian(&self) -> Endian {
        self.encapsulation
            .parameter_list_endian()
            .unwrap_or(Endian::Little)
    }

    /// Bytes `emit` writes.
    pub fn buffer_len(&self) -> usize {
        self.list
            .buffer_len()
            .saturating_add(4)
            .saturating_add(self.trailing.len())
    }

    /// Writes the payload; returns the bytes written.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, EmitError> {
        let needed = self.buffer_len();
        let available = buf.len();
        let buf = buf
            .get_mut(..needed)
            .ok_or(EmitError::BufferTooSmall { needed, available })?;
        let (head, rest) = buf
            .split_at_mut_checked(4)
            .ok_or(EmitError::BufferTooSmall { needed, available })?;
        let mut w = Writer::new(head, Endian::Big);
        w.u16(self.encapsulation.kind)?;
        w.put(&self.encapsulation.options)?;
        let n = self.list.emit(rest, self.endian())?;
        let mut w = Writer::new(rest.get_mut(n..).unwrap_or_default(), Endian::Big);
        w.put(&self.trailing)?;
        Ok(needed)
    }
}
